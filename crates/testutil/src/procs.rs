//! The processes a test started and must see gone, found by what they carry rather than by
//! name (never "every smbd on the machine"): a path of the test's own on their command line,
//! or a working directory under the test's directory. Read from /proc.

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
}
