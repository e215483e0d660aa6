//! `[runner] controls`: a small experiment on herd serve with an A/A control runs its twin
//! as often as asked, beside the other cells; the store keeps the twin as its cell's
//! control; the report states the noise floor the runs measured (checked against
//! herd-stats' noise computation on the stored figures), the twin is no row, and
//! `--compare` judges changes by that floor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use herd_store::{ExperimentId, Store};
use util::{herd, lab_run, tempdir};

const CONTROLLED: &str = r#"
name = "controlled"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["n300-c2", "n300-c4"]
[workloads.page]
kind = "static"
size = 6397
[loads.n300-c2]
requests = 300
concurrency = 2
[loads.n300-c4]
requests = 300
concurrency = 4
[repetitions]
min = 2
max = 2
[runner]
# Other tests leave TIME_WAIT sockets behind; draining is not what this test is about.
time_wait_below = 1000000
controls = 3
control = { load = "n300-c4" }
"#;

/// `+1.2 %` as the report writes a ratio.
fn percent(ratio: f64) -> String {
    format!("{:+.1} %", (ratio - 1.0) * 100.0)
}

#[test]
fn an_aa_control_runs_its_twin_and_the_report_states_the_noise_floor() {
    let dir = tempdir("lab-control");
    let file = dir.join("controlled.toml");
    std::fs::write(&file, CONTROLLED).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let of = "server=herd workload=page load=n300-c4";
    assert!(
        stderr.contains(&format!("herd lab: A/A control: {of} runs 3 more times as its own twin")),
        "{stderr}"
    );
    // 2 cells x 2 repetitions, and the twin's 3.
    assert_eq!(stderr.matches(" req/s, 0 failed").count(), 7, "{stderr}");

    let exp =
        Store::open_read_only(&dir.join("r.db")).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let twin = exp.cells.iter().find(|c| c.control_of.as_deref() == Some(of)).unwrap();
    assert_eq!(twin.key, format!("{of} control=twin"));
    assert_eq!(twin.repetitions.len(), 3);
    // Interleaved: the twin's first two runs were rounds 0 and 1, shuffled with the cells;
    // its third, in a round of its own, ran alone.
    let rounds: Vec<u32> = twin.repetitions.iter().map(|r| r.record.repetition).collect();
    assert_eq!(rounds, [0, 1, 2]);
    assert_eq!(twin.repetitions[2].record.position, 0);
    let rates = |key: &str| -> Vec<f64> {
        let cell = exp.cell(key).unwrap();
        let ok = cell.ok_repetitions();
        ok.map(|r| r.record.measurements[0].requests_per_second().unwrap()).collect()
    };
    let pair = herd_stats::noise::aa_pair(&rates(of), &rates(&twin.key)).unwrap();

    // The report, as the lab printed it and as herd report gives it.
    let report = herd().arg("report").arg(dir.join("r.db")).output().unwrap();
    assert!(report.status.success());
    let text = String::from_utf8_lossy(&report.stdout);
    assert_eq!(text, stdout);
    assert!(!text.contains("control=twin"), "{text}");
    let floor =
        &text[text.find("\nnoise floor (A/A control):\n").unwrap_or_else(|| panic!("{text}"))..];
    assert!(floor.contains(&format!("{of} was measured 3 more times as its own twin")), "{floor}");
    let said = format!(
        "The twin came out {} in requests/s (its geometric mean over the cell's; 95 % CI {} … {})",
        percent(pair.ratio),
        percent(pair.low),
        percent(pair.high)
    );
    assert!(floor.contains(&said), "{said}\n{floor}");
    assert!(floor.contains(&format!("runs vary by {:.1} %", pair.sd_log * 100.0)), "{floor}");
    let mde = pair.mde(2, 2).unwrap() * 100.0;
    let said = format!("between two cells of 2 runs: ±{mde:.1} %");
    assert!(floor.contains(&said), "{said}\n{floor}");

    // --compare between the two loads is judged by the floor, whichever way it goes.
    let out = herd()
        .arg("report")
        .arg(dir.join("r.db"))
        .args(["--compare", "1:load=n300-c2", "1:load=n300-c4"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("noise floor runs vary by {:.1} %", pair.sd_log * 100.0)));
    assert!(text.contains("within noise where under the A/A control's"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
