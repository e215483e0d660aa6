//! The servers' CPU time in a lab run at a pinned rate against herd serve: read from a cgroup
//! made for each server process where herd can make one (root: CI runs as root), per process
//! otherwise or when `HERD_SERVER_CPU=per-process` asks; the store and the report say which,
//! the figure is plausible either way, and no cgroup of the run is left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use herd_topo::cgroup::{self, Cgroups, CpuAccounting, Wanted};

use crate::util::{herd, lab_run, tempdir};

const PINNED: &str = r#"
name = "pinned"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["r300"]
[workloads.page]
kind = "static"
size = 1000
[loads.r300]
rate = 300
duration = "1s"
connections = 4
warmup_requests = 50
[repetitions]
min = 1
max = 1
[runner]
time_wait_below = 1000000
"#;

/// What a run left: the text report, what the store says of the method, the server CPU per
/// request (µs), and the lab's PID.
struct Ran {
    text: String,
    stored: String,
    cpu_us: f64,
    pid: u32,
}

/// Runs PINNED with `HERD_SERVER_CPU` set to `method` (None: unset). The figures are read
/// from the store, not the report: on a busy machine a 1 s pinned rate is often not held,
/// and the report leaves such a repetition out, where the store keeps its CPU time.
fn run(tag: &str, method: Option<&str>) -> Ran {
    let dir = tempdir(tag);
    let file = dir.join("pinned.toml");
    std::fs::write(&file, PINNED).unwrap();
    let mut cmd = lab_run(&dir, &file);
    cmd.env_remove(cgroup::ENV);
    if let Some(m) = method {
        cmd.env(cgroup::ENV, m);
    }
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report = herd().arg("report").arg(dir.join("r.db")).output().unwrap();
    let text = String::from_utf8(report.stdout).unwrap();
    let conn = rusqlite::Connection::open(dir.join("r.db")).unwrap();
    let stored: String = conn
        .query_row(
            "SELECT value FROM experiment_environment WHERE key = 'server_cpu_accounting'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let (total, servers, completed): (f64, f64, i64) = conn
        .query_row(
            "SELECT r.server_cpu_seconds,
                    (SELECT sum(s.cpu_seconds) FROM server s WHERE s.repetition_id = r.id),
                    (SELECT sum(m.completed) FROM measurement m WHERE m.repetition_id = r.id)
             FROM repetition r",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    // Each server process's figure is stored too, and they add up to the total.
    assert!((total - servers).abs() < 1e-9, "total {total} s, servers' sum {servers} s");
    assert!(completed >= 150, "{completed} requests of 300: {text}");
    std::fs::remove_dir_all(&dir).unwrap();
    Ran { text, stored, cpu_us: total * 1e6 / completed as f64, pid }
}

/// herd's cgroups made by the process `pid` that are still there.
fn left_by(pid: u32) -> Vec<PathBuf> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let places = cgroup::places(&cg, &mounts);
    let prefix = format!("{}{pid}-", cgroup::PREFIX);
    [places.v1, places.v2]
        .into_iter()
        .flatten()
        .filter_map(|p| std::fs::read_dir(p).ok())
        .flat_map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)))
        .collect()
}

/// The method a lab run here picks when `wanted` asks: with `Auto`, a cgroup where herd can
/// make one.
fn picked(wanted: Wanted) -> CpuAccounting {
    Cgroups::detect(wanted).unwrap().map_or(CpuAccounting::PerProcess, |c| c.accounting())
}

/// The method the other tests' lab runs pick (they pass `HERD_SERVER_CPU` on, if set).
pub(crate) fn expected() -> CpuAccounting {
    picked(Wanted::from_env().unwrap())
}

fn said(text: &str) -> &str {
    let line = text
        .lines()
        .find(|l| l.starts_with("server cpu  "))
        .unwrap_or_else(|| panic!("the report does not say how the servers' CPU was read: {text}"));
    line["server cpu  ".len()..].trim()
}

/// herd serve at 300 requests/s: some tens of µs of CPU a request, and far below a
/// millisecond (the whole second at 300 requests would be 3,333 µs each).
fn plausible(cpu_us: f64) -> bool {
    cpu_us > 1.0 && cpu_us < 2_000.0
}

#[test]
fn a_pinned_rate_reads_the_servers_cpu_from_their_cgroups() {
    let method = picked(Wanted::Auto);
    let Ran { text, stored, cpu_us, pid } = run("lab-cgroup", None);
    assert_eq!(stored, method.to_string());
    assert_eq!(said(&text), stored, "{text}");
    assert!(plausible(cpu_us), "{cpu_us} µs of server CPU a request: {text}");
    assert_eq!(left_by(pid), Vec::<PathBuf>::new(), "cgroups left after the run");
    if !method.is_cgroup() {
        herd_testutil::not_run::not_run(
            "lab_cgroup: server CPU read from the servers' cgroups",
            "herd cannot make a cgroup here (not root, or no cgroup hierarchy); checked: the \
             per-process method is used and said",
        );
    }
}

#[test]
fn per_process_is_used_and_said_when_asked_for() {
    let Ran { text, stored, cpu_us, .. } = run("lab-per-process", Some("per-process"));
    assert_eq!(stored, CpuAccounting::PerProcess.to_string());
    assert_eq!(said(&text), stored, "{text}");
    assert!(plausible(cpu_us), "{cpu_us} µs of server CPU a request: {text}");
}

/// Cgroups a lab run recorded in its registries under `tmp` (the run directories' `cgroups`).
pub(crate) fn recorded_cgroups(tmp: &Path) -> Vec<PathBuf> {
    let Ok(dirs) = std::fs::read_dir(tmp) else { return Vec::new() };
    dirs.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("herd-lab-"))
        .flat_map(|e| {
            std::fs::read_to_string(e.path().join("cgroups"))
                .unwrap_or_default()
                .lines()
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        })
        .collect()
}
