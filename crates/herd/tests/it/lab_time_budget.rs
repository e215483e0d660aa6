//! `[repetitions] time_budget` against herd serve: a cell asked for an interval no run can
//! give (±0.001 %) would run to its maximum of 40; a budget of 2 s stops the extra rounds once
//! another would end past it, says so, and the report marks the row `?`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use crate::util::{herd, lab_run, tempdir};

const BUDGETED: &str = r#"
name = "budgeted"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["short"]
[workloads.page]
kind = "static"
size = 100
[loads.short]
duration = "100ms"
concurrency = 2
[repetitions]
min = 2
max = 40
max_interval_percent = 0.001
time_budget = "2s"
[runner]
time_wait_below = 1000000
"#;

#[test]
fn the_time_budget_stops_extra_repetitions() {
    let dir = tempdir("time-budget");
    let file = dir.join("budgeted.toml");
    std::fs::write(&file, BUDGETED).unwrap();
    let started = Instant::now();
    let out = lab_run(&dir, &file).output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("time budget: 1 cell(s) unsure after"), "{stderr}");
    assert!(stderr.contains("of the 2 s allowed ([repetitions] time_budget"), "{stderr}");
    let conn = rusqlite::Connection::open(dir.join("r.db")).unwrap();
    let runs: i64 = conn.query_row("SELECT count(*) FROM repetition", [], |r| r.get(0)).unwrap();
    // At least the minimum; fewer than the maximum (40 runs of 100 ms take 5 s or more).
    assert!((2..40).contains(&runs), "{runs} runs in {took:?}: {stderr}");
    let report = herd().arg("report").arg(dir.join("r.db")).output().unwrap();
    let text = String::from_utf8(report.stdout).unwrap();
    let row = text.lines().find(|l| l.starts_with("herd ") && l.contains("short")).unwrap();
    assert!(row.contains('?'), "{row}");
    std::fs::remove_dir_all(&dir).unwrap();
}
