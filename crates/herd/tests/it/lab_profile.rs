//! `[runner] profile = "perf"` from the outside: a tiny experiment against herd serve on
//! loopback, each cell profiled in one extra run whose flame graph shows herd serve's own
//! functions, on the page and in `herd report --diff-profile`; the profiled run is kept
//! apart from the repetitions and their figures. perf missing fails the test with what to
//! install (scripts/test.sh installs linux-perf), never skips it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use base64::Engine as _;
use herd_store::{ExperimentId, Store};
use util::{herd, lab_run, tempdir};

/// An experiment against herd serve's 100-byte page, one repetition of each cell and each
/// cell profiled; `loads` as (name, duration, connections).
fn profiled(name: &str, loads: &[(&str, &str, u32)]) -> String {
    let names: Vec<String> = loads.iter().map(|(n, _, _)| format!("\"{n}\"")).collect();
    let mut text = format!(
        "name = \"{name}\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"page\"]\nload = [{}]\n\
         [workloads.page]\nkind = \"static\"\nsize = 100\n",
        names.join(", ")
    );
    for (n, duration, connections) in loads {
        text += &format!(
            "[loads.{n}]\nduration = \"{duration}\"\nconcurrency = {connections}\nkeep_alive = true\n"
        );
    }
    text + "[repetitions]\nmin = 1\nmax = 1\n[runner]\ntime_wait_below = 1000000\nprofile = \"perf\"\n"
}

#[test]
fn a_profiled_cell_shows_herd_serves_functions_and_stays_out_of_the_figures() {
    assert!(
        herd_topo::net::machine::find_program("perf").is_some(),
        "perf is not installed: apt-get install linux-perf (scripts/test.sh does)"
    );
    let dir = tempdir("lab-profile");
    let file = dir.join("profiled.toml");
    std::fs::write(&file, profiled("profiled", &[("c2", "1s", 2), ("c4", "1s", 4)])).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("kept apart from the repetitions"), "{stderr}");

    let store = dir.join("r.db");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    assert_eq!(exp.cells.len(), 2);
    for cell in &exp.cells {
        let profile =
            cell.profile.as_ref().unwrap_or_else(|| panic!("{} has no profile", cell.key));
        assert!(profile.folded.contains("herd_serve::"), "{}:\n{}", cell.key, profile.folded);
        assert!(profile.weight > 0);
        // One repetition (min = max = 1): the profiled run is not among them.
        let reps: Vec<u32> = cell.repetitions.iter().map(|r| r.record.repetition).collect();
        assert_eq!(reps, [0], "{}", cell.key);
    }

    // The page draws each cell's flame graph, herd serve's functions in it.
    let page = dir.join("report.html");
    let out = herd().arg("report").arg(&store).arg("--html").arg(&page).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let images: Vec<&str> = html
        .split("<figure class=\"profile\"")
        .skip(1)
        .map(|f| {
            let at = f.find("base64,").unwrap() + "base64,".len();
            &f[at..at + f[at..].find('"').unwrap()]
        })
        .collect();
    assert_eq!(images.len(), 2, "one flame graph per profiled cell");
    for image in images {
        let svg = base64::engine::general_purpose::STANDARD.decode(image).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("herd_serve::"), "{svg}");
    }

    // The differential flame graph of the two cells, named by axis value.
    let diff = dir.join("diff.svg");
    let out = herd()
        .arg("report")
        .arg(&store)
        .args(["--diff-profile", "load=c2", "load=c4", "-o"])
        .arg(&diff)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&diff).unwrap();
    assert!(svg.contains("herd_serve::"), "{svg}");
    // A cell that does not exist: the error names the profiled cells.
    let out = herd()
        .arg("report")
        .arg(&store)
        .args(["--diff-profile", "load=c2", "load=c9"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no cell of experiment 1 matches") && stderr.contains(&exp.cells[0].key),
        "{stderr}"
    );
}

/// Ctrl-C while perf records the profiled run, and as soon as perf is there (while herd
/// waits for it to enable its events, before the client starts): perf goes with the server
/// (stopped by PID through the run's supervisor, as on any Ctrl-C), nothing the run started
/// is left, the measured repetition is kept without a profile, and herd exits 130.
#[test]
fn ctrl_c_while_perf_records_stops_it_and_keeps_the_measured_run() {
    assert!(
        herd_topo::net::machine::find_program("perf").is_some(),
        "perf is not installed: apt-get install linux-perf (scripts/test.sh does)"
    );
    for after_perf_ms in [0, 300] {
        interrupted_profiled_run(std::time::Duration::from_millis(after_perf_ms));
    }
}

/// A lab run of one 3-s cell, profiled, sent SIGINT `after_perf` after its perf appears.
fn interrupted_profiled_run(after_perf: std::time::Duration) {
    use herd_testutil::procs;
    use std::time::{Duration, Instant};
    let dir = tempdir("lab-profile-int");
    let file = dir.join("slow.toml");
    // One cell whose runs last 3 s: long enough to be stopped while perf records.
    std::fs::write(&file, profiled("profiled-slow", &[("d3", "3s", 2)])).unwrap();
    let log = dir.join("stderr");
    let mut child = lab_run(&dir, &file)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // perf: its command line names its file in the run directory under `dir`.
    let is_perf = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "perf")
    };
    let t = Instant::now();
    let perf = loop {
        if let Some(pid) = procs::naming(dir.as_os_str()).into_iter().find(is_perf) {
            break pid;
        }
        assert!(child.try_wait().unwrap().is_none(), "the lab ended before perf started");
        assert!(t.elapsed() < Duration::from_secs(60), "no perf after 60 s");
        std::thread::sleep(Duration::from_millis(5));
    };
    std::thread::sleep(after_perf);
    // SAFETY: kill(2) on the lab run this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let status = crate::util::exit_within(
        &mut child,
        Duration::from_secs(30),
        "the lab did not stop after Ctrl-C",
    );
    let err = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{after_perf:?}: {err}");
    assert!(err.contains("herd: interrupted after ") && err.contains("results kept in"), "{err}");
    crate::util::wait_for("nothing of the run left", Duration::from_secs(10), || {
        procs::naming(dir.as_os_str()).is_empty()
    });
    assert!(!procs::naming(dir.as_os_str()).contains(&perf));
    let exp =
        Store::open_read_only(&dir.join("r.db")).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let cell = &exp.cells[0];
    assert_eq!(cell.repetitions.len(), 1, "{after_perf:?}: the measured run is kept");
    assert!(cell.profile.is_none(), "{after_perf:?}: an interrupted profile is not stored");
    std::fs::remove_dir_all(&dir).unwrap();
}
