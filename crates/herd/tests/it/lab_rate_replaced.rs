//! A repetition at a pinned rate that the server cannot hold is left out of the figures and
//! replaced, up to `[repetitions] max`: herd serve slowed to 2 ms of CPU a request
//! (`HERD_SERVE_SPEND_US`, on at most two threads here: 1,000 req/s at best) is offered
//! 3,000 req/s. The lab makes its three runs where `min` asked one, stores them all, and the
//! report leaves each out, saying what fell short.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util::{herd, lab_run, tempdir};

const SLOWED: &str = r#"
name = "slowed"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["r3000"]
[workloads.page]
kind = "static"
size = 100
[loads.r3000]
rate = 3000
duration = "300ms"
connections = 4
warmup_requests = 10
[repetitions]
min = 1
max = 3
[runner]
time_wait_below = 1000000
"#;

#[test]
fn a_rate_not_held_is_replaced_up_to_the_maximum() {
    let dir = tempdir("rate-replaced");
    let file = dir.join("slowed.toml");
    std::fs::write(&file, SLOWED).unwrap();
    let out = lab_run(&dir, &file).env("HERD_SERVE_SPEND_US", "2000").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let conn = rusqlite::Connection::open(dir.join("r.db")).unwrap();
    let runs: i64 = conn.query_row("SELECT count(*) FROM repetition", [], |r| r.get(0)).unwrap();
    assert_eq!(runs, 3, "{stderr}");
    let report = herd().arg("report").arg(dir.join("r.db")).output().unwrap();
    let text = String::from_utf8(report.stdout).unwrap();
    for rep in 1..=3 {
        let said = format!("server=herd workload=page load=r3000, repetition {rep}: achieved");
        assert!(text.contains(&said), "{said}: {text}");
    }
    let row = text.lines().find(|l| l.starts_with("herd ") && l.contains("r3000")).unwrap();
    assert!(row.contains(" 0/3 "), "{row}");
    std::fs::remove_dir_all(&dir).unwrap();
}
