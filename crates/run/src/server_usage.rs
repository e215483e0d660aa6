//! The server's CPU time over a run, where herd can see it: a target on this machine, whose
//! listening socket (TCP, or UDP for HTTP/3) belongs to processes herd may read. Found the way
//! `ss -lp` finds them: the socket's inode in /proc/net/{tcp,tcp6,udp,udp6}, then the
//! processes holding it among /proc/*/fd. Every holder counts (nginx's master and workers,
//! Apache's children); their CPU time is read from /proc/PID/stat before and after.
//!
//! With the client's own CPU this tells whether a closed loop's time went to work or to
//! waiting (herd_stats::waiting). What it cannot see, it says nothing about: a remote target,
//! processes of another user (without root), and work the listener hands to processes that
//! do not hold it (php-fpm behind nginx) — the figure is then a lower bound, which only makes
//! a "waiting" finding more likely, so the verdict is asked only of runs where the holders'
//! CPU is all the server's (said in docs/client-health.md).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Instant;

/// The server's processes found for a run, and their CPU time when found.
#[derive(Debug)]
pub(crate) struct ServerProbe {
    pids: Vec<u32>,
    cpu_before: f64,
    at: Instant,
}

/// What the server used over a run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ServerUsage {
    /// CPU seconds of the processes holding the listening socket.
    pub(crate) cpu_seconds: f64,
    /// Wall seconds between the two readings.
    pub(crate) wall_seconds: f64,
    /// How many processes held it.
    pub(crate) processes: u32,
}

impl ServerUsage {
    /// CPUs used on average (CPU seconds per second).
    pub(crate) fn cpus(&self) -> f64 {
        if self.wall_seconds > 0.0 {
            self.cpu_seconds / self.wall_seconds
        } else {
            0.0
        }
    }
}

impl ServerProbe {
    /// The processes listening on `addrs` (all on this machine: loopback), read now; None
    /// when the target is elsewhere or no holder can be read.
    pub(crate) fn start(addrs: &[SocketAddr], udp: bool) -> Option<ServerProbe> {
        let port = addrs.first()?.port();
        if !addrs.iter().all(|a| a.ip().is_loopback() && a.port() == port) {
            return None;
        }
        let inodes = listening_inodes(port, udp);
        if inodes.is_empty() {
            return None;
        }
        let pids = holders(&inodes);
        let cpu_before = cpu_seconds(&pids)?;
        Some(ServerProbe { pids, cpu_before, at: Instant::now() })
    }

    /// The usage since [`ServerProbe::start`]. A process that exited meanwhile is left out
    /// (its last share is lost: a lower bound).
    pub(crate) fn finish(&self) -> Option<ServerUsage> {
        let now: Vec<f64> = self.pids.iter().filter_map(|&p| process_cpu(p)).collect();
        (!now.is_empty()).then(|| ServerUsage {
            cpu_seconds: (now.iter().sum::<f64>() - self.cpu_before).max(0.0),
            wall_seconds: self.at.elapsed().as_secs_f64(),
            processes: u32::try_from(now.len()).unwrap_or(u32::MAX),
        })
    }
}

/// Inodes of the sockets bound to `port` in the listening state (TCP), or bound at all (UDP),
/// from this network namespace's tables.
fn listening_inodes(port: u16, udp: bool) -> BTreeSet<u64> {
    let (tables, state) = if udp {
        (["/proc/net/udp", "/proc/net/udp6"], "07")
    } else {
        (["/proc/net/tcp", "/proc/net/tcp6"], "0A")
    };
    tables
        .iter()
        .filter_map(|t| std::fs::read_to_string(t).ok())
        .flat_map(|text| parse_table(&text, port, state))
        .collect()
}

/// The inodes of `text`'s rows (a /proc/net/tcp-style table) whose local port is `port` and
/// whose state is `state` (hex, as the kernel writes it).
///
/// A busy machine's table has tens of thousands of rows, nearly all of other ports, and this
/// crate is built unoptimised in the quick `--release` (Cargo.toml): memchr's search (built
/// optimised) finds the rows the port's text is in, and only those are split. Splitting all
/// 700 rows of this machine's table took 65 million instructions at opt-level 0.
fn parse_table(text: &str, port: u16, state: &str) -> Vec<u64> {
    let needle = format!(":{port:04X} ");
    let bytes = text.as_bytes();
    let mut inodes = Vec::new();
    // The end of the last row split: the port's text twice in one row (local and remote)
    // splits it once.
    let mut done = 0;
    for at in memchr::memmem::find_iter(bytes, needle.as_bytes()) {
        if at < done {
            continue;
        }
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        done = end;
        if let Some(inode) = text.get(start..end).and_then(|row| row_inode(row, port, state)) {
            inodes.push(inode);
        }
    }
    inodes
}

/// The inode of one table row, when its local port is `port` and its state `state`.
fn row_inode(row: &str, port: u16, state: &str) -> Option<u64> {
    let mut f = row.split_ascii_whitespace();
    let local_port = f.nth(1)?.rsplit_once(':')?.1;
    let ok = u16::from_str_radix(local_port, 16).ok()? == port && f.nth(1)? == state;
    let inode: u64 = f.nth(5)?.parse().ok()?;
    (ok && inode != 0).then_some(inode)
}

/// The processes holding any of `inodes` among their open files (those herd may read).
fn holders(inodes: &BTreeSet<u64>) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    let own = std::process::id();
    let mut pids = Vec::new();
    for entry in procs.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .ok()
                .and_then(|l| socket_inode(&l.to_string_lossy()))
                .is_some_and(|i| inodes.contains(&i))
        });
        if holds {
            pids.push(pid);
        }
    }
    pids
}

/// `socket:[12345]` → 12345.
fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
}

/// The CPU seconds of `pids` together; None when none can be read.
fn cpu_seconds(pids: &[u32]) -> Option<f64> {
    let read: Vec<f64> = pids.iter().filter_map(|&p| process_cpu(p)).collect();
    (!read.is_empty()).then(|| read.iter().sum())
}

/// utime + stime of process `pid` (all its threads), seconds.
fn process_cpu(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu_ticks(&stat).map(|ticks| ticks as f64 / clock_ticks())
}

/// utime + stime, in clock ticks, from a /proc/PID/stat line. The command name (field 2) may
/// hold spaces and parentheses: the fields are counted after its last `)`.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, utime 14 and stime 15 (proc(5)).
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listening_row_is_found_by_port_and_state() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n   \
            1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1\n   \
            2: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(parse_table(table, 8080, "0A"), vec![4242]);
        assert_eq!(parse_table(table, 80, "0A"), vec![4444]);
        assert_eq!(parse_table(table, 8081, "0A"), Vec::<u64>::new());
        assert_eq!(parse_table("garbage\nnot a row\n", 80, "0A"), Vec::<u64>::new());
        // The port as local and remote address of one row: found once; as the remote only
        // (a connection to the port, no listener): not found.
        let twice = "0: 0100007F:1F90 0100007F:1F90 0A 0:0 0:0 0 0 0 77 1\n\
                     1: 0100007F:D2F0 0100007F:0050 0A 0:0 0:0 0 0 0 78 1";
        assert_eq!(parse_table(twice, 8080, "0A"), vec![77]);
        assert_eq!(parse_table(twice, 80, "0A"), Vec::<u64>::new());
    }

    #[test]
    fn stat_fields_are_counted_after_the_name() {
        let stat =
            "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 17 0 0 20 0 1 0 5 0 0";
        assert_eq!(stat_cpu_ticks(stat), Some(267));
        assert_eq!(stat_cpu_ticks("1 (x) S"), None);
        assert_eq!(socket_inode("socket:[99]"), Some(99));
        assert_eq!(socket_inode("pipe:[99]"), None);
    }

    /// A listener of this process's own is not "the server" (herd's own sockets are left
    /// out), but one held by a child process is found, by its PID.
    #[test]
    fn a_child_holding_a_loopback_listener_is_found() {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        assert!(ServerProbe::start(&[addr], false).is_none(), "herd's own socket is no server");
        let fd = listener.as_raw_fd();
        #[allow(clippy::disallowed_methods)] // a test's own child, stopped by PID below
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("30");
        // SAFETY: fcntl is async-signal-safe; in the child only, it clears close-on-exec on
        // the listener's descriptor, so that `sleep` holds it.
        unsafe {
            cmd.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let probe = ServerProbe::start(&[addr], false);
        let _ = child.kill();
        let _ = child.wait();
        // Another test's child forked at this moment may hold it too, until its exec.
        let pids = probe.map(|p| p.pids).unwrap_or_default();
        assert!(pids.contains(&child.id()), "{pids:?} has {}", child.id());
        assert!(ServerProbe::start(&["10.0.0.1:80".parse().unwrap()], false).is_none());
    }
}
