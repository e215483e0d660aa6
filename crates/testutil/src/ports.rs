//! Free loopback ports for test servers that must be told their port (nginx, caddy, …).
//!
//! The kernel hands out a port that is free at the moment it is asked, and the test gives it
//! to a server a moment later: two tests of one binary (cargo runs them in parallel) could be
//! handed the same port, and one test would then measure the other's server (it happened: an
//! nginx's h2c listener answered another test's HTTP/1 requests). So a port is handed out at
//! most once per test process, and to one test process at a time: the test command runs test
//! binaries side by side, and each holds a file lock per port it handed out (under the system
//! temp directory's `herd-test-ports/`) until it ends, which another binary's pick skips.

use std::collections::HashSet;
use std::net::{TcpListener, UdpSocket};
use std::sync::Mutex;

static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// The lock files of the ports this process handed out, held open (and so locked) until it
/// ends.
static CLAIMS: Mutex<Vec<std::fs::File>> = Mutex::new(Vec::new());

/// A TCP port on 127.0.0.1, free now and never handed out before in this process.
pub fn free_port() -> u16 {
    pick(|| {
        let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        Some(port)
    })
}

/// A port on 127.0.0.1 free for both TCP and UDP (an HTTP/3 server's QUIC and HTTPS
/// listeners), never handed out before in this process.
pub fn free_tcp_udp_port() -> u16 {
    pick(|| {
        let tcp = TcpListener::bind("127.0.0.1:0").ok()?;
        let port = tcp.local_addr().ok()?.port();
        UdpSocket::bind(("127.0.0.1", port)).ok().map(|_| port)
    })
}

/// A port on 127.0.0.1 that nothing listens on, TCP or UDP, for tests of a refused
/// connection. Below the kernel's ephemeral range (net.ipv4.ip_local_port_range), so that no
/// socket of this or another test is given it by bind(0) or connect() meanwhile: a port freed
/// from that range may come back as a client's own source port, and a client connected to its
/// own port hears itself instead of being refused (a QUIC test once waited out its handshake
/// timeout that way, on a busy machine).
pub fn closed_port() -> u16 {
    let low = ephemeral_low();
    let mut next = low.saturating_sub(4000).max(1024);
    pick(|| {
        while next < low {
            let port = next;
            next += 1;
            let free = TcpListener::bind(("127.0.0.1", port)).is_ok()
                && UdpSocket::bind(("127.0.0.1", port)).is_ok();
            if free {
                return Some(port);
            }
        }
        None
    })
}

/// The first port of the kernel's ephemeral range (32768 if it cannot be read).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768)
}

fn pick(mut candidate: impl FnMut() -> Option<u16>) -> u16 {
    for _ in 0..100 {
        let Some(port) = candidate() else { continue };
        let mut seen = HANDED_OUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.get_or_insert_with(HashSet::new).insert(port) && claim(port) {
            return port;
        }
    }
    panic!("no free loopback port after 100 tries");
}

/// Takes `port` for this process among the test processes running now: false if another
/// holds it. The lock (flock, non-blocking) lasts as long as this process: its file is kept
/// open in [`CLAIMS`]. Where the directory cannot be made, the claim is this process's alone.
fn claim(port: u16) -> bool {
    use std::os::fd::AsRawFd;
    let dir = std::env::temp_dir().join("herd-test-ports");
    if std::fs::create_dir_all(&dir).is_err() {
        return true;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(port.to_string()));
    let Ok(file) = file else { return true };
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return false;
    }
    CLAIMS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(file);
    true
}

/// Waits until a socket is bound to UDP `port` on 127.0.0.1 (a QUIC server started on it has
/// its socket: what it is sent from then on is queued for it), up to `limit`; false if none
/// was by then. A server with no TCP listener to connect to is waited for so, rather than for
/// a fixed moment that a busy machine outlasts (300 ms did not always do).
pub fn wait_udp_bound(port: u16, limit: std::time::Duration) -> bool {
    let want = format!("0100007F:{port:04X}");
    let deadline = std::time::Instant::now() + limit;
    loop {
        let table = std::fs::read_to_string("/proc/net/udp").unwrap_or_default();
        // sl local_address rem_address ...: the second field is "ADDR:PORT" in hex.
        if table.lines().skip(1).any(|l| l.split_whitespace().nth(1) == Some(want.as_str())) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_port_is_below_the_ephemeral_range_and_refuses() {
        let low = ephemeral_low();
        for _ in 0..3 {
            let port = closed_port();
            assert!(port < low, "{port} is in the ephemeral range from {low}");
            assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "{port}");
        }
    }

    #[test]
    fn a_port_another_process_holds_is_not_handed_out() {
        use std::os::fd::AsRawFd;
        // Another test process's claim, as its lock file would be held: a port this process
        // did not hand out, locked through a descriptor of its own.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join("herd-test-ports");
        std::fs::create_dir_all(&dir).unwrap();
        let other = std::fs::File::create(dir.join(port.to_string())).unwrap();
        // SAFETY: flock on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX) }, 0);
        assert!(!claim(port), "a port held elsewhere was claimed");
        drop(other);
        assert!(claim(port), "a port no one holds was refused");
    }

    #[test]
    fn no_port_is_handed_out_twice() {
        let mut all = HashSet::new();
        for _ in 0..200 {
            assert!(all.insert(free_port()));
        }
        for _ in 0..20 {
            let p = free_tcp_udp_port();
            assert!(all.insert(p));
            assert!(UdpSocket::bind(("127.0.0.1", p)).is_ok());
        }
    }

    #[test]
    fn a_bound_udp_port_is_seen_and_a_free_one_is_not() {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = socket.local_addr().unwrap().port();
        assert!(wait_udp_bound(port, std::time::Duration::from_secs(5)));
        drop(socket);
        assert!(!wait_udp_bound(port, std::time::Duration::from_millis(100)));
    }
}
