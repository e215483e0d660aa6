//! Ctrl-C in the middle of a herd ab run: ab prints the results so far and exits 1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::process::Stdio;
use std::time::{Duration, Instant};

use util::{herd, text, Nginx};

#[test]
fn sigint_prints_partial_results_and_exits_1() {
    let nginx = Nginx::start();
    let url = nginx.url("/small.html");
    let child = herd()
        .args(["ab", "-q", "-k", "-t", "20", "-n", "100000000", "-c", "4", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: kill(2) on the PID of the child this test just spawned.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "did not stop promptly");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let done: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(done > 0, "{stdout}");
    let secs: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Time taken for tests:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!((0.5..3.0).contains(&secs), "{stdout}");
    assert!(stdout.contains("Percentage of the requests served"), "{stdout}");
}
