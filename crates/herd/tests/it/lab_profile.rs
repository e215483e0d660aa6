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

const PROFILED: &str = r#"
name = "profiled"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["c2", "c4"]
[workloads.page]
kind = "static"
size = 100
[loads.c2]
duration = "1s"
concurrency = 2
keep_alive = true
[loads.c4]
duration = "1s"
concurrency = 4
keep_alive = true
[repetitions]
min = 1
max = 1
[runner]
time_wait_below = 1000000
profile = "perf"
"#;

#[test]
fn a_profiled_cell_shows_herd_serves_functions_and_stays_out_of_the_figures() {
    assert!(
        herd_topo::net::machine::find_program("perf").is_some(),
        "perf is not installed: apt-get install linux-perf (scripts/test.sh does)"
    );
    let dir = tempdir("lab-profile");
    let file = dir.join("profiled.toml");
    std::fs::write(&file, PROFILED).unwrap();
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
