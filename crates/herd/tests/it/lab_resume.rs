//! `herd lab run --resume` from the outside: an experiment stopped by Ctrl-C, or whose herd
//! was killed, runs to its end from the store (its stored definition, not the file; its
//! order seed), every cell with exactly its repetitions and none run twice; a done, running
//! or unknown experiment, and one whose software, machine or server program changed, are
//! refused before anything runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use herd_store::{ExperimentId, ExperimentStatus, Store, StoredExperiment};
use util::{herd, lab_run, tempdir, SLOW};

const RUNS: usize = 6;

/// A lab run of SLOW in `dir`, its stderr to `dir/stderr`, started in the background.
fn start(dir: &Path) -> (Child, PathBuf) {
    let file = dir.join("slow.toml");
    std::fs::write(&file, SLOW).unwrap();
    let log = dir.join("stderr");
    let child = lab_run(dir, &file)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    (child, log)
}

/// Waits until the run has stored (and logged) a first run.
fn wait_for_a_run(log: &Path) {
    let t = Instant::now();
    while !std::fs::read_to_string(log).unwrap_or_default().contains(" req/s, ") {
        assert!(t.elapsed() < Duration::from_secs(60), "no run finished");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `herd lab run --resume ARGS` with the store `store` and TMPDIR `dir`.
fn resume(dir: &Path, store: &Path, args: &[&str]) -> Output {
    // A resume first cleans what dead runs left, as `herd lab clean` does.
    let _sweep = crate::util::clean_lock();
    herd()
        .env("TMPDIR", dir)
        .args(["lab", "run", "--no-progress", "--store"])
        .arg(store)
        .arg("--resume")
        .args(args)
        .output()
        .unwrap()
}

fn load(store: &Path) -> StoredExperiment {
    Store::open_read_only(store).unwrap().load_experiment(ExperimentId(1)).unwrap()
}

fn env<'a>(e: &'a StoredExperiment, key: &str) -> &'a str {
    let env = &e.experiment.environment;
    env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("{key}"))
}

/// Every stored run: (cell, repetition) → (position, started_at).
fn runs(e: &StoredExperiment) -> BTreeMap<(String, u32), (u32, String)> {
    e.cells
        .iter()
        .flat_map(|c| c.repetitions.iter().map(move |r| (c, &r.record)))
        .map(|(c, r)| ((c.key.clone(), r.repetition), (r.position, r.started_at.clone())))
        .collect()
}

fn text(out: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs the rest of the interrupted or crashed experiment in `store` and checks it ran
/// exactly what was left, in its order, as one run would have.
fn resume_to_the_end(dir: &Path, store: &Path, before: &StoredExperiment) {
    let kept = runs(before);
    assert!((1..RUNS).contains(&kept.len()), "{} runs kept", kept.len());
    // The file changed meanwhile: the experiment is the one stored, not this.
    std::fs::write(dir.join("slow.toml"), SLOW.replace("min = 3\nmax = 3", "min = 5\nmax = 9"))
        .unwrap();
    let out = resume(dir, store, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let k = kept.len();
    assert!(
        said.contains(&format!(
            "resuming experiment 1: {k} of {RUNS} runs done, {} to run",
            RUNS - k
        )),
        "{said}"
    );
    assert_eq!(said.matches(" req/s, ").count(), RUNS - k, "only the runs left ran: {said}");
    assert!(said.contains(&format!("{RUNS} runs in ")), "{said}");
    assert!(said.contains(&format!("(experiment 1, resumed after {k}, order seed ")), "{said}");

    let after = load(store);
    assert_eq!(after.status, ExperimentStatus::Done);
    assert_eq!(env(&after, "order_seed"), env(before, "order_seed"));
    assert_eq!(after.experiment.definition, SLOW, "the stored definition is kept");
    let note = after.note.clone().unwrap_or_default();
    assert!(note.contains(&format!(" after {k} of {RUNS} runs")), "{note}");
    assert!(note.contains("resumed 20"), "{note}");
    let all = runs(&after);
    assert_eq!(all.len(), RUNS);
    for c in &after.cells {
        let reps: Vec<u32> = c.repetitions.iter().map(|r| r.record.repetition).collect();
        assert_eq!(reps, [0, 1, 2], "{}", c.key);
    }
    // The runs kept were not run again.
    for (run, was) in &kept {
        assert_eq!(all.get(run), Some(was), "{run:?}");
    }
    // Each round in one order: its two cells at places 0 and 1.
    for rep in 0..3 {
        let mut places: Vec<u32> =
            all.iter().filter(|((_, r), _)| *r == rep).map(|(_, (p, _))| *p).collect();
        places.sort_unstable();
        assert_eq!(places, [0, 1], "repetition {rep}");
    }
    assert!(!std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("herd-lab-")));

    let report = herd().arg("report").arg(store).output().unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{}", text(&report));
    assert!(table.contains("status      done"), "{table}");
    assert!(table.contains("note        ") && table.contains("resumed 20"), "{table}");
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("herd    page")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(rows.iter().all(|r| r.contains(" 3/3 ")), "{table}");

    // Done: nothing to resume.
    let out = resume(dir, store, &["1"]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out);
    assert!(
        said.contains("herd lab: experiment 1 (slow) is done: every run it planned is stored, so there is nothing to resume; `herd report "),
        "{said}"
    );
    assert!(said.contains("`herd lab run "), "{said}");
    let out = resume(dir, store, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains(": every experiment in it is done (`herd report "),
        "{}",
        text(&out)
    );
}

#[test]
fn an_interrupted_experiment_resumes_to_its_end() {
    let dir = tempdir("lab-resume");
    let store = dir.join("r.db");
    let (mut child, log) = start(&dir);
    wait_for_a_run(&log);
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    let hint = format!("; `herd lab run --store {} --resume 1` runs the rest\n", store.display());
    assert!(said.contains(&hint), "{said}");
    let before = load(&store);
    assert_eq!(before.status, ExperimentStatus::Interrupted);

    // A copy whose software and machine changed since: refused, and left as it was.
    let changed = dir.join("changed.db");
    {
        let conn = rusqlite::Connection::open(&store).unwrap();
        conn.execute("VACUUM INTO ?1", [changed.to_str().unwrap()]).unwrap();
    }
    {
        let conn = rusqlite::Connection::open(&changed).unwrap();
        for (key, value) in [("version.client:herd", "herd 0.0.1"), ("kernel", "2.6.32")] {
            let n = conn
                .execute(
                    "UPDATE experiment_environment SET value = ?2 WHERE key = ?1",
                    [key, value],
                )
                .unwrap();
            assert_eq!(n, 1, "{key}");
        }
    }
    let out = resume(&dir, &changed, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("herd lab: experiment 1 (slow) cannot be resumed here: what it ran on changed since it began:\n"), "{said}");
    let herd_client = env(&before, "version.client:herd");
    let kernel = env(&before, "kernel");
    assert!(said.contains(&format!("\n  kernel: 2.6.32 → {kernel}\n")), "{said}");
    assert!(
        said.contains(&format!("\n  version.client:herd: herd 0.0.1 → {herd_client}\n")),
        "{said}"
    );
    assert!(said.contains("figures measured now would not be comparable with the ones stored; run it anew: `herd lab run "), "{said}");
    assert_eq!(said.matches(" req/s, ").count(), 0, "nothing ran: {said}");
    let untouched = load(&changed);
    assert_eq!((untouched.status, &untouched.note), (before.status, &before.note));
    assert_eq!(runs(&untouched), runs(&before));

    // A copy whose server program changed since (an upgrade between sessions): refused
    // before a run is spent finding it, and left as it was.
    let upgraded = dir.join("upgraded.db");
    {
        let conn = rusqlite::Connection::open(&store).unwrap();
        conn.execute("VACUUM INTO ?1", [upgraded.to_str().unwrap()]).unwrap();
    }
    let server_was: String = {
        let conn = rusqlite::Connection::open(&upgraded).unwrap();
        let was = conn
            .query_row("SELECT version FROM server WHERE name = 'herd' LIMIT 1", [], |r| r.get(0))
            .unwrap();
        let n = conn.execute("UPDATE server SET version = 'herd 0.0.1' WHERE name = 'herd'", []);
        assert!(n.unwrap() > 0);
        was
    };
    let out = resume(&dir, &upgraded, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("herd lab: experiment 1 (slow) cannot be resumed here: what it ran on changed since it began:\n"), "{said}");
    assert!(
        said.contains(&format!("\n  server herd (herd): herd 0.0.1 → {server_was}\n")),
        "{said}"
    );
    assert_eq!(said.matches(" req/s, ").count(), 0, "nothing ran: {said}");
    let untouched = load(&upgraded);
    assert_eq!((untouched.status, &untouched.note), (before.status, &before.note));
    assert_eq!(runs(&untouched), runs(&before));

    // An unknown experiment: the error lists the one that can be resumed.
    let out = resume(&dir, &store, &["7"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains(&format!(
            "herd lab: no experiment 7 in results store {}; its unfinished ones are 1 (slow, interrupted): give one of those to --resume",
            store.display()
        )),
        "{}",
        text(&out)
    );
    // An experiment file beside --resume: one or the other.
    let out = resume(&dir, &store, &["1", "slow.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("cannot be used with"), "{}", text(&out));

    resume_to_the_end(&dir, &store, &before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_killed_run_resumes_once_its_herd_is_gone() {
    let dir = tempdir("lab-resume-kill");
    let store = dir.join("r.db");
    let (mut child, log) = start(&dir);
    wait_for_a_run(&log);
    // Held where it is (SIGSTOP: alive, its experiment unfinished), so that it is still
    // running when asked below however slowly a busy machine gets there: beside seven other
    // tests it ran to its end first, and the store said done.
    let pid = child.id();
    // SAFETY: kill(2) with a signal number, on the PID of the child this test spawned and has
    // not waited for (so the PID is still its).
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) }, 0);
    // While it runs, it is not resumed.
    let out = resume(&dir, &store, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "herd lab: no experiment to resume in results store {}: experiment 1 (slow) runs now, in herd process {pid} (`herd report ",
            store.display()
        )),
        "{said}"
    );
    let out = resume(&dir, &store, &["1"]);
    assert!(
        text(&out).contains(&format!("herd lab: experiment 1 (slow) is running now, in herd process {pid}: let it end, or stop it with Ctrl-C and resume it then")),
        "{}",
        text(&out)
    );
    child.kill().unwrap(); // SIGKILL (a stopped process too): the store still says running
    child.wait().unwrap();
    let before = load(&store);
    assert_eq!(before.status, ExperimentStatus::Running);
    // What the killed run left (its server, its run directory) the resume removes first,
    // as `herd lab clean` would.
    let left = run_dirs(&dir);
    assert_eq!(left.len(), 1, "the killed run's directory: {left:?}");
    resume_to_the_end(&dir, &store, &before);
    assert!(!left[0].exists(), "{} was left", left[0].display());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The lab run directories (`herd-lab-*`) under `dir`, the runs' TMPDIR.
fn run_dirs(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("herd-lab-")))
        .collect()
}
