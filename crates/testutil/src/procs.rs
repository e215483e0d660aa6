//! The processes a test started and must see gone, found by what they carry rather than by
//! name (never "every smbd on the machine"): a path of the test's own on their command line,
//! or a working directory under the test's directory; and whether one of them is idle. Read
//! from /proc.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::path::Path;

/// Every PID now in /proc.
fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .collect()
}

/// The PIDs whose command line contains `marker` (a config path of the test's own: nothing
/// else on the machine names it).
pub fn naming(marker: &OsStr) -> Vec<u32> {
    let marker = marker.as_encoded_bytes();
    pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(marker.len()).any(|w| w == marker))
        })
        .collect()
}

/// The PIDs whose working directory is `dir` or below it.
pub fn working_under(dir: &Path) -> Vec<u32> {
    pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
        })
        .collect()
}

/// Waits up to `timeout` until process `pid` sleeps (state `S`) on two reads 10 ms apart: a
/// single-threaded event-loop server waiting in its poll again, every connection it was
/// handed finished. thttpd needs it before its stop: its SIGTERM handler does the shutdown
/// itself and logs every connection not yet marked free, so a stop that lands while it
/// finishes the last one (right after closing it, which wakes the client) logs that one
/// twice. False if it never did (or is gone).
pub fn wait_sleeping(pid: u32, timeout: std::time::Duration) -> bool {
    let state = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..].split_whitespace().next().map(str::to_owned)
    };
    let deadline = std::time::Instant::now() + timeout;
    let mut asleep_before = false;
    while std::time::Instant::now() < deadline {
        let asleep = match state() {
            Some(s) => s == "S",
            None => return false,
        };
        if asleep && asleep_before {
            return true;
        }
        asleep_before = asleep;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// A process's command line, arguments joined by spaces, for messages ("" once it is gone).
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim_end().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_this_process_by_its_argv_and_its_directory() {
        let me = std::process::id();
        let exe = std::env::args_os().next().unwrap();
        assert!(naming(&exe).contains(&me));
        assert!(working_under(&std::env::current_dir().unwrap()).contains(&me));
        assert!(!cmdline(me).is_empty());
        assert!(naming(OsStr::new("/no/such/herd/marker/for/tests")).is_empty());
    }

    #[test]
    fn a_sleeping_child_is_seen_asleep_and_a_gone_one_is_not() {
        #[allow(clippy::disallowed_methods)] // a test's own child, stopped by PID below
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let timeout = std::time::Duration::from_secs(5);
        assert!(wait_sleeping(child.id(), timeout));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!wait_sleeping(child.id(), std::time::Duration::from_millis(100)));
    }
}
