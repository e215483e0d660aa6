//! Errors a user can reach print each cause once. Before, an error type that wrote its
//! cause into its message and also returned it as `source()` printed it twice in herd's
//! chain (`herd run: TLS settings: cannot read /missing: No such file or directory (os
//! error 2): No such file or directory (os error 2)`). Each case here runs the real binary
//! and checks that the OS error is there, once, and that no line repeats a cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;

use std::process::Command;

use herd_testutil::causes::assert_no_repeated_cause;
use util::{herd, run, tempdir, text};

/// Runs `cmd`, which must fail with exit status 1 and print `cause` once; returns stderr.
fn fails_with_cause_once(cmd: &mut Command, errno: i32) -> String {
    let out = run(cmd);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let cause = std::io::Error::from_raw_os_error(errno).to_string();
    assert_eq!(stderr.matches(&cause).count(), 1, "{cause:?} not printed once in:\n{stderr}");
    assert_no_repeated_cause(&stderr);
    stderr
}

#[test]
fn herd_run_with_a_missing_ca_file() {
    let stderr = fails_with_cause_once(
        herd().args(["run", "https://127.0.0.1:1/", "--ca-file", "/nonexistent/ca.pem", "-n", "1"]),
        libc::ENOENT,
    );
    assert!(
        stderr.starts_with("herd run: TLS settings: cannot read /nonexistent/ca.pem: "),
        "{stderr}"
    );
}

#[test]
fn herd_lab_run_with_a_missing_experiment_file() {
    let stderr =
        fails_with_cause_once(herd().args(["lab", "run", "/nonexistent/lab.toml"]), libc::ENOENT);
    assert!(stderr.contains("cannot read experiment file /nonexistent/lab.toml: "), "{stderr}");
}

/// sysfs refuses new files even to root, so this holds for whoever runs the tests.
#[test]
fn herd_lab_run_with_a_store_in_a_directory_it_cannot_write() {
    let stderr = fails_with_cause_once(
        herd().args(["lab", "run", "--store", "/sys/herd-results.db", "quickstart"]),
        libc::EACCES,
    );
    assert!(stderr.contains("cannot write in directory /sys"), "{stderr}");
}

#[test]
fn herd_lab_run_whose_run_directory_cannot_be_made() {
    let dir = tempdir("causes-lab");
    let stderr = fails_with_cause_once(
        herd()
            .env("TMPDIR", "/sys/herd-nonexistent")
            .args(["lab", "run", "--no-progress", "--store"])
            .arg(dir.join("r.db"))
            .arg("quickstart"),
        libc::ENOENT,
    );
    assert!(stderr.contains("cannot prepare /sys/herd-nonexistent: "), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn herd_serve_with_a_root_it_cannot_open() {
    let root = format!("/tmp/{}", "x".repeat(300));
    let stderr = fails_with_cause_once(herd().args(["serve", "--root", &root]), libc::ENAMETOOLONG);
    assert!(stderr.contains("cannot open the root"), "{stderr}");
}

#[test]
fn herd_ab_with_an_unreadable_body_file() {
    let stderr = fails_with_cause_once(
        herd().args(["ab", "-p", "/nonexistent/body", "http://127.0.0.1:1/"]),
        libc::ENOENT,
    );
    assert!(stderr.starts_with("herd ab: could not read the -p data file"), "{stderr}");
}
