//! Running the outside clients the tests check herd serve against (curl, h2load, nghttp):
//! bounded in time, and failing with the Debian package to install when one is missing.
#![allow(clippy::disallowed_methods)] // the tests run the clients they check against, by PID

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long any one client run may take.
const LIMIT: Duration = Duration::from_secs(60);

/// Runs `program` (from `package`) with `args`; its output once it exits. Panics naming the
/// package if it is not installed, and kills it (by its PID) if it outlives [`LIMIT`].
pub(crate) fn run(program: &str, package: &str, args: &[&str]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program} ({e}): install the package {package}"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} took more than {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// curl, failing on HTTP errors and on its own; the body.
pub(crate) fn curl(args: &[&str]) -> Vec<u8> {
    let mut all = vec!["--silent", "--show-error", "--max-time", "20"];
    all.extend_from_slice(args);
    let out = run("curl", "curl", &all);
    assert!(out.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// h2load's report (stdout), after checking it exited 0.
pub(crate) fn h2load(args: &[&str]) -> String {
    let out = run("h2load", "nghttp2-client", args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "h2load {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// nghttp's output (the bodies, unless told otherwise), after checking it exited 0.
pub(crate) fn nghttp(args: &[&str]) -> Vec<u8> {
    let out = run("nghttp", "nghttp2-client", args);
    assert!(
        out.status.success(),
        "nghttp {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The numbers of h2load's `requests:` line: (total, succeeded, failed, errored).
pub(crate) fn h2load_requests(report: &str) -> (u64, u64, u64, u64) {
    let line = report
        .lines()
        .find(|l| l.starts_with("requests: "))
        .unwrap_or_else(|| panic!("no requests line in:\n{report}"));
    let number = |word: &str| -> u64 {
        line.split(", ")
            .find_map(|part| part.trim_start_matches("requests: ").strip_suffix(word))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `{word}` in {line:?}"))
    };
    (number(" total"), number(" succeeded"), number(" failed"), number(" errored"))
}
