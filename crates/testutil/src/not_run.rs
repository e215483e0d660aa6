//! What a test could not run on this machine, and why, said where the test command ends
//! instead of passing in silence. A test whose subject this kernel lacks (IP_VS for the
//! lvs-nat path, tc netem for delay and loss, an IPv6 loopback) checks what it can (the
//! refusal's words) and records here what it did not run. scripts/test.sh points
//! `HERD_NOT_RUN` at a file, empties it first and lists its lines after the last step; without
//! the variable the line goes to stderr only.

use std::io::Write;

/// Records that `what` was not run here because `why`.
pub fn not_run(what: &str, why: &str) {
    let line = format!("{what}: {why}");
    eprintln!("not run here: {line}");
    let Some(path) = std::env::var_os("HERD_NOT_RUN") else { return };
    // Appended whole by one write, so that tests running side by side do not interleave.
    let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
    if let Ok(mut f) = file {
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}
