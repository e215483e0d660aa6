//! NetBench in the lab for real (seed 004's file-serving half): samba's smbd as the server,
//! smbtorture's NBENCH replaying dbench's trace as the client, two clients for a few seconds.
//! The bundled `netbench-quick` over loopback, then the same cell over a `routed` path of
//! network namespaces, and six clients spread over the four client hosts of `four-links`
//! (root; CI runs as root). Every run must store a throughput above
//! zero with its load-file lines per client, the report must print it in Mbit/s, and
//! nothing may be left: no smbd or smbtorture of the run, no namespace, no run directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use herd_stats::{REPORTED_LINES_PER_CLIENT, REPORTED_THROUGHPUT_MBIT_S};
use herd_store::{Outcome, StoredExperiment};
use util::{herd, lab_run, namespaces_of, tempdir};

const ROUTED: &str = r#"
name = "netbench-routed-ci"
[matrix]
server = ["samba"]
workload = ["nb"]
load = ["c2"]
client = ["smbtorture"]
path = ["routed"]
[workloads.nb]
kind = "netbench"
[loads.c2]
duration = "3s"
concurrency = 2
# One repetition: smbd and smbtorture through the path are what is checked.
[repetitions]
min = 1
max = 1
[runner]
calibrate = false
[report]
measure = "mbit_per_second"
"#;

/// Six clients over four client hosts (2, 2, 1, 1), each host on its own 100 Mbit link and
/// share: run side by side in one share, the four smbtorture runs delete each other's files
/// and fail (seen before the shares were split). With its calibration cell: tbench against
/// tbench_srv over the same four links.
const FOUR_LINKS: &str = r#"
name = "netbench-four-links-ci"
[matrix]
server = ["samba"]
workload = ["nb"]
load = ["c6"]
client = ["smbtorture"]
path = ["four-links"]
link = ["100mbit"]
[workloads.nb]
kind = "netbench"
[loads.c6]
duration = "3s"
concurrency = 6
[repetitions]
min = 1
max = 1
[report]
measure = "mbit_per_second"
"#;

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test runs smbd as root and builds network namespaces: run it as root (CI does)"
    );
}

/// Runs `herd lab run WHAT` (a bundled name or a file) with its store and run directories
/// under DIR; returns the stored experiment, the report's text, and herd's PID.
fn run(dir: &std::path::Path, what: &str) -> (StoredExperiment, String, u32) {
    let child = lab_run(dir, std::path::Path::new(what))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let (report, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{report}\n{stderr}");
    assert!(!stderr.contains("FAILED"), "{stderr}");
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    (exp, report.into_owned(), pid)
}

/// Every run of `reps`: ok, smbtorture's argv, one step of 2 clients that moved bytes and
/// got into the trace.
fn check_runs(exp: &StoredExperiment, reps: usize) {
    check_runs_of(exp, reps, 2, 2);
}

/// Every run of its `reps`: ok, one step of `clients` that moved bytes and got into the
/// trace, the first smbtorture's argv with `first` of them.
fn check_runs_of(exp: &StoredExperiment, reps: usize, clients: u32, first: u32) {
    assert_eq!(exp.cells.len(), 1);
    check_cell(&exp.cells[0], reps, "smbtorture", clients, first);
}

/// [`check_runs_of`] for one cell run by `tool`.
fn check_cell(cell: &herd_store::StoredCell, reps: usize, tool: &str, clients: u32, first: u32) {
    assert_eq!(cell.repetitions.len(), reps);
    for rep in &cell.repetitions {
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.client.tool, tool);
        if tool == "smbtorture" {
            assert!(r.client.argv.iter().any(|a| a == "bench.nbench"), "{:?}", r.client.argv);
            let progs = format!("--num-progs={first}");
            assert!(r.client.argv.contains(&progs), "{:?}", r.client.argv);
        } else {
            // `tbench -t 3 -c client.txt N ADDR`: the first host's clients, then its address.
            let n = r.client.argv.len();
            assert_eq!(r.client.argv.get(n - 2).map(String::as_str), Some(&*first.to_string()));
        }
        assert_eq!(r.measurements.len(), 1);
        let m = &r.measurements[0];
        assert_eq!(m.concurrency, Some(clients));
        assert!(m.bytes_total > 0, "{m:?}");
        let mbit = m.reported(REPORTED_THROUGHPUT_MBIT_S).unwrap();
        assert!(mbit > 0.0 && (m.mbit_per_second().unwrap() - mbit).abs() < mbit * 0.01, "{m:?}");
        assert!(m.reported(REPORTED_LINES_PER_CLIENT).unwrap() > 0.0, "{m:?}");
        if tool == "smbtorture" {
            assert!(r.server_cpu_seconds.is_some_and(|s| s > 0.0), "{:?}", r.server_cpu_seconds);
            assert!(r.servers.iter().any(|s| s.program.ends_with("smbd")), "{:?}", r.servers);
        } else if crate::lab_cgroup::expected().is_cgroup() {
            // tbench_srv's per-connection processes are counted in its cgroup.
            assert!(r.server_cpu_seconds.is_some_and(|s| s > 0.0), "{:?}", r.server_cpu_seconds);
        } else {
            // Per process, they cannot be accounted: unknown, not 0.
            assert_eq!(r.server_cpu_seconds, None);
            assert!(r.servers.iter().any(|s| s.program.ends_with("tbench_srv")), "{:?}", r.servers);
        }
    }
}

/// The processes of runs under `dir`: smbd names its config there on its command line, and
/// smbtorture (and its clients) run in a directory there.
fn processes_under(dir: &std::path::Path) -> Vec<String> {
    processes(dir, true)
}

/// smbtorture and its clients: the processes working in a directory under `dir`.
fn clients_under(dir: &std::path::Path) -> Vec<String> {
    processes(dir, false)
}

fn processes(dir: &std::path::Path, with_cmdline: bool) -> Vec<String> {
    use herd_testutil::procs;
    let mut pids = procs::working_under(dir);
    if with_cmdline {
        pids.extend(procs::naming(dir.as_os_str()));
    }
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter().map(|pid| format!("{pid}: {}", procs::cmdline(pid))).collect()
}

/// No process of this run is left.
fn no_process_under(dir: &std::path::Path) {
    let left = processes_under(dir);
    assert!(left.is_empty(), "left running: {left:?}");
}

/// Waits (at most `limit`) until `cond` holds.
use crate::util::wait_for;

/// A long NetBench step, for stopping herd in the middle of it.
const SLOW: &str = r#"
name = "netbench-slow"
[matrix]
server = ["samba"]
workload = ["nb"]
load = ["c2-30s"]
client = ["smbtorture"]
[workloads.nb]
kind = "netbench"
[loads.c2-30s]
duration = "30s"
concurrency = 2
[repetitions]
min = 3
max = 3
"#;

/// `herd lab run` of [`SLOW`] under `dir`, once smbd and smbtorture's clients run.
fn mid_step(dir: &std::path::Path) -> std::process::Child {
    let file = dir.join("slow.toml");
    std::fs::write(&file, SLOW).unwrap();
    let child = lab_run(dir, &file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // smbtorture and its two clients, replaying the trace.
    wait_for("smbtorture's clients", std::time::Duration::from_secs(30), || {
        clients_under(dir).len() >= 3
    });
    std::thread::sleep(std::time::Duration::from_secs(1));
    child
}

#[test]
fn ctrl_c_mid_step_stops_smbd_and_smbtorture() {
    require_root();
    let dir = tempdir("nbi");
    let mut child = mid_step(&dir);
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    no_process_under(&dir);
    no_run_dir(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn after_kill_9_lab_clean_stops_smbd_and_smbtorture() {
    require_root();
    let dir = tempdir("nbk");
    // From the kill on, its namespaces are a dead lab's: another test's clean would take them.
    // Held from before the lab starts, so that the kill comes mid-step, not a wait later.
    let sweep = crate::util::clean_lock();
    let mut child = mid_step(&dir);
    child.kill().unwrap(); // SIGKILL: herd cannot clean up
    child.wait().unwrap();
    assert!(clients_under(&dir).len() >= 3, "a kill -9 should leave smbtorture's clients");
    let out = herd().args(["lab", "clean"]).env("TMPDIR", &dir).output().unwrap();
    drop(sweep);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_for("leftovers to stop", std::time::Duration::from_secs(10), || {
        processes_under(&dir).is_empty()
    });
    no_run_dir(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The run directories herd made under `dir` (its TMPDIR) are gone.
fn no_run_dir(dir: &std::path::Path) {
    let runs: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("herd-lab-"))
        .collect();
    assert!(runs.is_empty(), "{runs:?}");
}

#[test]
fn netbench_quick_over_loopback_stores_mbit_per_second() {
    require_root();
    let dir = tempdir("nb");
    let (exp, report, _) = run(&dir, "netbench-quick");
    // The bundled file, as a user runs it: three repetitions.
    check_runs(&exp, 3);
    // The rows lead with Mbit/s, and the trace's progress is shown.
    assert!(report.contains("Mbit/s"), "{report}");
    assert!(report.contains("load-file lines per client"), "{report}");
    let shown = herd().args(["report", "--csv"]).arg(dir.join("r.db")).output().unwrap();
    let csv = String::from_utf8_lossy(&shown.stdout);
    assert!(csv.lines().next().unwrap().contains("mbit_per_second"), "{csv}");
    no_process_under(&dir);
    no_run_dir(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn netbench_over_a_routed_path() {
    require_root();
    let dir = tempdir("nbr");
    let file = dir.join("e.toml");
    std::fs::write(&file, ROUTED).unwrap();
    let (exp, report, pid) = run(&dir, file.to_str().unwrap());
    check_runs(&exp, 1);
    assert!(report.contains("Mbit/s"), "{report}");
    // smbd listened in the server's namespace on the path's address.
    let conf = &exp.cells[0].repetitions[0].record.servers[0].configs;
    assert!(conf.iter().any(|(_, text)| text.contains("interfaces = 198.18.")), "{conf:?}");
    let left = namespaces_of(pid);
    assert!(left.is_empty(), "{left:?}");
    no_process_under(&dir);
    no_run_dir(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn netbench_spread_over_four_links() {
    require_root();
    let dir = tempdir("nb4");
    let file = dir.join("e.toml");
    std::fs::write(&file, FOUR_LINKS).unwrap();
    let (exp, report, pid) = run(&dir, file.to_str().unwrap());
    assert_eq!(exp.cells.len(), 2);
    let (samba, calibration) = (&exp.cells[0], &exp.cells[1]);
    assert_eq!(calibration.axis("server"), Some(herd_store::CALIBRATION_SERVER));
    // The first client host's smbtorture (or tbench) had 2 of the 6.
    check_cell(samba, 1, "smbtorture", 6, 2);
    check_cell(calibration, 1, "tbench", 6, 2);
    assert!(report.contains("Mbit/s"), "{report}");
    assert!(report.contains("what each path carries with tbench against tbench_srv"), "{report}");
    let record = &samba.repetitions[0].record;
    // smbd listened on every address of the server's host: one a link.
    let conf = &record.servers[0].configs;
    assert!(conf.iter().any(|(_, text)| text.contains("bind interfaces only = no")), "{conf:?}");
    assert_eq!(record.network.as_ref().map(|n| n.server_links), Some(4));
    let left = namespaces_of(pid);
    assert!(left.is_empty(), "{left:?}");
    no_process_under(&dir);
    no_run_dir(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A share the guests cannot reach (the run directory under a TMPDIR whose parent is 0700,
/// as under /root) is refused before anything starts, naming the directory; smbtorture
/// alone would have said "Unknown error/failure" three times.
#[test]
fn a_share_guests_cannot_reach_is_refused_up_front() {
    require_root();
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("nbclosed");
    let closed = dir.join("closed");
    let tmp = closed.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = lab_run(&tmp, std::path::Path::new("netbench-quick")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let named = format!("{} (mode 700) does not let other users through", closed.display());
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("set TMPDIR to a directory every user can enter"), "{stderr}");
    no_run_dir(&tmp);
    no_process_under(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}
