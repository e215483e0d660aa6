//! A lab run whose phases fail on purpose, one way per cell, through the lab's own runner:
//! herd's executable is replaced by a script that runs the real herd except where a cell asks
//! it to fail (a server that never answers, one that exits at start, one that serves a wrong
//! byte, a client that exits with an error, a client sent where nothing listens, a warm-up
//! whose output is no herd output). Each failed
//! run must be stored with its kind and reason, and the report must count them by kind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_store::{RunFailureKind, Store};
use util::tempdir;

/// Workloads by what the stand-in does to them: `ok` (101 bytes) runs through, `wrong`
/// (102) is served with its first byte changed, `crash` (103) makes the client exit 2,
/// `silent` (104) sends the client to 127.0.0.1:1, where nothing listens, `garbled` (105,
/// with load `w50`, the one with a warm-up) makes the warm-up print what is no herd output
/// and exit 0. Servers:
/// `herd` runs, `sleepy` (`--threads 3`) never answers, `dying` (`--threads 4`) exits at
/// start; they run only the `ok` workload ([`experiment`] adds the exclusions).
const MATRIX: &str = r#"
name = "failures"
[matrix]
server = ["herd", "sleepy", "dying"]
workload = ["ok", "wrong", "crash", "silent", "garbled"]
load = ["n50", "w50"]
[servers.sleepy]
driver = "herd"
workers = 3
[servers.dying]
driver = "herd"
workers = 4
[workloads.ok]
kind = "static"
size = 101
[workloads.wrong]
kind = "static"
size = 102
[workloads.crash]
kind = "static"
size = 103
[workloads.silent]
kind = "static"
size = 104
[workloads.garbled]
kind = "static"
size = 105
[loads.n50]
requests = 50
concurrency = 2
[loads.w50]
requests = 50
concurrency = 2
warmup_requests = 10
# One repetition: each phase's failure is what is checked, not how often it repeats.
[repetitions]
min = 1
max = 1
[runner]
time_wait_below = 1000000   # other tests leave TIME_WAIT behind; not what this test is about
ready_timeout = "2s"        # `sleepy` never answers: the test waits this out
"#;

fn experiment() -> String {
    let mut text = MATRIX.to_owned();
    for server in ["sleepy", "dying"] {
        for workload in ["wrong", "crash", "silent", "garbled"] {
            text.push_str(&format!(
                "[[exclude]]\nserver = \"{server}\"\nworkload = \"{workload}\"\n"
            ));
        }
    }
    // The warm-up's load for `garbled` alone, and `garbled` with it alone.
    for workload in ["ok", "wrong", "crash", "silent"] {
        text.push_str(&format!("[[exclude]]\nworkload = \"{workload}\"\nload = \"w50\"\n"));
    }
    text.push_str("[[exclude]]\nworkload = \"garbled\"\nload = \"n50\"\n");
    text
}

/// The stand-in for herd's executable (see the file's documentation).
fn stand_in(dir: &Path) -> PathBuf {
    let script = format!(
        r#"#!/bin/sh
real='{real}'
case "$1" in
serve)
    case " $* " in
    *" --threads 3 "*) exec sleep 60 ;;
    *" --threads 4 "*) echo "stand-in: this server refuses to start" >&2; exit 3 ;;
    esac
    # serve --root DOCROOT ...: a copy of the docroot with one wrong byte in the 102-byte page
    root=$3
    shift 3
    if [ ! -d "$root-wrong" ]; then
        cp -r "$root" "$root-wrong.tmp" &&
        printf '\001' | dd of="$root-wrong.tmp/sizes/102.html" bs=1 conv=notrunc 2>/dev/null &&
        mv "$root-wrong.tmp" "$root-wrong" || exit 9
    fi
    exec "$real" serve --root "$root-wrong" "$@"
    ;;
run)
    case " $* " in
    *"/sizes/103.html"*) echo "stand-in: this client fails" >&2; exit 2 ;;
    *"/sizes/105.html"*"/client/warm-up/"*|*"/client/warm-up/"*"/sizes/105.html"*)
        echo "stand-in: no herd output"; exit 0 ;;
    esac
    for a do
        shift
        case "$a" in
        http://*/sizes/104.html) set -- "$@" "http://127.0.0.1:1/sizes/104.html" ;;
        *) set -- "$@" "$a" ;;
        esac
    done
    ;;
esac
exec "$real" "$@"
"#,
        real = env!("CARGO_BIN_EXE_herd")
    );
    let path = dir.join("herd-stand-in");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn each_phase_that_fails_is_stored_with_its_kind_and_counted_by_the_report() {
    let dir = tempdir("lab-failures");
    let herd_exe = stand_in(&dir);
    let e = herd_lab::experiment::parse(&experiment(), "failures.toml").unwrap();
    let store_path = dir.join("r.db");
    let mut store = Store::open(&store_path).unwrap();
    let finished = crate::util::lab_in_process(&e, herd_exe, &mut store, &dir);
    assert_eq!((finished.runs_done, finished.failures.len()), (7, 6));

    let stored = store.load_experiment(finished.experiment).unwrap();
    // cell → the kind of its run (None: ok)
    let kinds = |key: &str| -> Vec<Option<RunFailureKind>> {
        let cell = stored.cells.iter().find(|c| c.key.contains(key)).unwrap();
        cell.repetitions.iter().map(|r| r.record.outcome.failure_kind()).collect()
    };
    let once = |k: Option<RunFailureKind>| vec![k; 1];
    assert_eq!(kinds("server=herd workload=ok "), once(None));
    assert_eq!(kinds("server=sleepy "), once(Some(RunFailureKind::ServerNotReady)));
    assert_eq!(kinds("server=dying "), once(Some(RunFailureKind::ServerExited)));
    assert_eq!(kinds("workload=wrong "), once(Some(RunFailureKind::Verify)));
    assert_eq!(kinds("workload=crash "), once(Some(RunFailureKind::ClientFailed)));
    assert_eq!(kinds("workload=silent "), once(Some(RunFailureKind::NoResponse)));
    assert_eq!(kinds("workload=garbled "), once(Some(RunFailureKind::ClientFailed)));

    let mut table = Vec::new();
    herd_report::experiment_table(&stored, &mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    let summary = "\n6 of 7 runs failed: 2 client failed, 1 server not ready, 1 server exited, \
                   1 verify, 1 no response\n";
    assert!(table.contains(summary), "{table}");
    let run = |cell: &str, kind: &str, reason: &str| {
        let line = format!("  {cell}, repetition 1 ({kind}): {reason}");
        assert!(table.lines().any(|l| l.starts_with(&line)), "no line {line:?} in\n{table}");
    };
    run(
        "server=sleepy workload=ok load=n50",
        "server not ready",
        "herd did not become ready within 2s (cannot connect to 127.0.0.1:",
    );
    run(
        "server=dying workload=ok load=n50",
        "server exited",
        "herd exited at start (exit status 3): stand-in: this server refuses to start",
    );
    run(
        "server=herd workload=wrong load=n50",
        "verify",
        "verify: herd answered GET /sizes/102.html with the right length but other content \
         (sha256 ",
    );
    run(
        "server=herd workload=crash load=n50",
        "client failed",
        "the measured run of herd (exit status 2): herd ",
    );
    // A warm-up whose output cannot be read fails the run, named as the warm-up's; stdout and
    // an empty stderr are each said once.
    run(
        "server=herd workload=garbled load=w50",
        "client failed",
        "the warm-up run of herd (exit status 0): herd wrote no readable ",
    );
    let garbled = table.lines().find(|l| l.contains("workload=garbled")).unwrap();
    assert!(
        garbled.ends_with("its stdout: \"stand-in: no herd output\"; its stderr: \"\""),
        "{garbled}"
    );
    // The client's stderr is quoted once (by the adapter's message here).
    let crash = table.lines().find(|l| l.contains("(client failed)")).unwrap();
    assert_eq!(crash.matches("stand-in: this client fails").count(), 1, "{crash}");
    run(
        "server=herd workload=silent load=n50",
        "no response",
        "no request of the measured run got a response: the server could not be reached \
         (herd counted connect ",
    );
    // herd gives a target that refuses every first attempt up (issue 31): each of the 2
    // connections once, and one more from a worker that had not yet seen it, not all 50.
    let silent =
        table.lines().find(|l| l.contains("workload=silent load=n50, repetition 1")).unwrap();
    let counted = silent.rsplit("connect ").next().unwrap().trim_end_matches(')');
    assert!(["2", "3"].contains(&counted), "{silent}");
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}
