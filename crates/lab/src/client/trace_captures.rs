//! Loading the captured runs of the trace clients (smbtorture, tbench) under
//! crates/lab/tests/data/clients/: each directory holds `stdout`, `stderr` and `exit_status`
//! (`0`, `1` or `signal 15`). For the fixture tests of both parsers.

use std::path::{Path, PathBuf};

use super::nbench_output::NbenchExit;

pub(super) fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/clients").join(name)
}

/// A captured run: its output and how it ended.
pub(super) struct Capture {
    pub(super) stdout: String,
    pub(super) stderr: String,
    pub(super) exit: NbenchExit,
}

pub(super) fn capture(name: &str) -> Capture {
    let read = |f: &str| std::fs::read_to_string(dir(name).join(f)).unwrap();
    let status = read("exit_status");
    let status = status.trim();
    let exit = match status.strip_prefix("signal ") {
        Some(s) => NbenchExit::Signal(s.parse().unwrap()),
        None => NbenchExit::Code(status.parse().unwrap()),
    };
    Capture { stdout: read("stdout"), stderr: read("stderr"), exit }
}
