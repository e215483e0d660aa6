//! `[runner] server_count = true` through the lab: every run's server writes its access log,
//! and its count of the workload's request is held against what the client sent. Real
//! servers (herd serve and nginx) here and on a `[hosts]` server host (sshd in namespace
//! hosts of herd's own, root), a request-count load that must match exactly and a timed one
//! within its bound; and a run whose server really got more than the client counted (a
//! stand-in client that sends its run twice and reports once) fails with the new kind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_stats::{
    REPORTED_SERVER_COUNT_LEAST, REPORTED_SERVER_COUNT_LOGGED, REPORTED_SERVER_COUNT_MOST,
};
use herd_store::{ExperimentId, Outcome, RunFailureKind, Store, StoredExperiment};

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{lab_run, require_root, tempdir, text};

/// `servers` × the 6,397-byte page × `loads`, one run each, the check on.
fn experiment(servers: &str, loads: &str, more: &str) -> String {
    format!(
        "name = \"server-count\"\n[matrix]\nserver = [{servers}]\nworkload = [\"page\"]\n\
         load = [{loads}]\n[workloads.page]\nkind = \"static\"\nsize = 6397\n\
         [loads.n300]\nrequests = 300\nconcurrency = 2\n\
         [loads.t300ms]\nduration = \"300ms\"\nconcurrency = 2\nwarmup_requests = 20\n\
         [repetitions]\nmin = 1\nmax = 1\n\
         [runner]\nserver_count = true\n\
         time_wait_below = 1000000   # other tests leave TIME_WAIT behind\n{more}"
    )
}

/// Each cell's one run: its key, outcome, and the check's figures (logged, fewest, most).
fn counts(exp: &StoredExperiment) -> Vec<(String, Outcome, [u64; 3])> {
    exp.matrix_cells()
        .map(|cell| {
            let [rep] = cell.repetitions.as_slice() else { panic!("one run of {}", cell.key) };
            let r = &rep.record;
            let last = r.measurements.last().unwrap();
            let figure = |name| last.reported(name).map_or(u64::MAX, |v| v as u64);
            let figures = [
                figure(REPORTED_SERVER_COUNT_LOGGED),
                figure(REPORTED_SERVER_COUNT_LEAST),
                figure(REPORTED_SERVER_COUNT_MOST),
            ];
            (cell.key.clone(), r.outcome.clone(), figures)
        })
        .collect()
}

#[test]
fn every_run_s_server_logged_what_the_client_sent() {
    let dir = tempdir("lab-server-count");
    let file = dir.join("x.toml");
    std::fs::write(&file, experiment("\"herd\", \"nginx\"", "\"n300\", \"t300ms\"", "")).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let exp =
        Store::open_read_only(&dir.join("r.db")).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let runs = counts(&exp);
    assert_eq!(runs.len(), 4, "{stdout}");
    for (key, outcome, [logged, least, most]) in runs {
        assert_eq!(outcome, Outcome::Ok, "{key}: {stderr}");
        if key.contains("load=n300") {
            // The verification and the 300: exactly.
            assert_eq!([logged, least, most], [301, 301, 301], "{key}");
        } else {
            // The verification, the 20 of the warm-up, and the timed run's, within what 2
            // connections could leave in flight and what the client counted as failed.
            assert!(least > 21 && least <= logged && logged <= most, "{key}: {logged}");
            let cell = exp.matrix_cells().find(|c| c.key == key).unwrap();
            let failed: u64 =
                cell.repetitions[0].record.measurements.iter().map(|m| m.failed).sum();
            assert_eq!(most - least, 2 + failed, "{key}: {least} to {most}");
        }
    }
    // The table says it under the figures; the dry run said it before.
    assert!(stdout.contains("server count ([runner] server_count)"), "{stdout}");
    assert!(stdout.contains("server=nginx workload=page load=n300: 301 of 301"), "{stdout}");
    let plan = &exp.experiment.plan;
    assert!(plan.contains("server count: on ([runner] server_count)"), "{plan}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stand-in for herd's executable whose measured client run sends its whole run twice and
/// reports the second: the server really got 300 requests more than the client counted.
fn sends_twice(dir: &Path) -> PathBuf {
    let script = format!(
        r#"#!/bin/sh
real='{real}'
if [ "$1" = run ]; then
    case " $* " in
    # Its parent is this shell, not the lab: the watch for the lab is the second's.
    *"/client/measured/"*) env -u {parent} "$real" "$@" >/dev/null 2>&1 || exit 7 ;;
    esac
fi
exec "$real" "$@"
"#,
        real = env!("CARGO_BIN_EXE_herd"),
        parent = herd_lab::client::PARENT_VAR,
    );
    let path = dir.join("herd-stand-in");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_server_that_got_more_than_the_client_counted_fails_the_run() {
    let dir = tempdir("lab-server-count-more");
    let herd_exe = sends_twice(&dir);
    let e = herd_lab::experiment::parse(&experiment("\"herd\"", "\"n300\"", ""), "x.toml").unwrap();
    let mut store = Store::open(&dir.join("r.db")).unwrap();
    let finished = crate::util::lab_in_process(&e, herd_exe, &mut store, &dir);
    assert_eq!((finished.runs_done, finished.failures.len()), (1, 1));
    let exp = store.load_experiment(finished.experiment).unwrap();
    let [(key, outcome, figures)] = counts(&exp).try_into().unwrap();
    // The client counted its 300; the server logged the verification and both sends.
    assert_eq!(figures, [601, 301, 301], "{key}");
    let Outcome::Failed { kind, reason } = outcome else { panic!("{key} did not fail") };
    assert_eq!(kind, RunFailureKind::ServerCount, "{reason}");
    assert_eq!(
        reason,
        "server count: the access log of herd has 601 lines of GET /sizes/6397.html, the \
         client's counts allow exactly 301 (1 verification, 300 measured completed): more \
         than the client sent: suspect something else sent this request to the server, or \
         the client sent more than it counted"
    );
    let mut table = Vec::new();
    herd_report::experiment_table(&exp, &mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains("1 of 1 run failed: 1 server count"), "{table}");
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On a `[hosts]` server host, with herd's client as an agent on each of two client hosts:
/// the merged counts equal the server's own log, as the lab read it there through the
/// helper (nginx's file, and herd serve's output, which the helper keeps).
#[test]
fn on_a_server_host_the_merged_counts_equal_the_server_s_log() {
    require_root();
    let dir = tempdir("lab-server-count-hosts");
    let setups = [HostSetup::default(), HostSetup::default(), HostSetup::default()];
    let hosts = SshHosts::start("840", &dir, &setups);
    let [server, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = dir.join("x.toml");
    let on_hosts = format!(
        "[hosts]\nserver = \"ssh://{server}\"\nclients = [\"ssh://{c1}\", \"ssh://{c2}\"]\n\
         ssh_config = \"lab.ssh_config\"\n"
    );
    let text_of = experiment("\"herd\", \"nginx\"", "\"n300\"", "")
        .replace("time_wait_below = 1000000   # other tests leave TIME_WAIT behind\n", "");
    std::fs::write(&file, format!("{text_of}{on_hosts}")).unwrap();
    hosts.install(&file);
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let runs = counts(&exp);
    assert_eq!(runs.len(), 2, "{stdout}");
    for (key, outcome, figures) in runs {
        assert_eq!(outcome, Outcome::Ok, "{key}: {stderr}");
        assert_eq!(figures, [301, 301, 301], "{key}");
    }
    for cell in exp.matrix_cells() {
        let argv = cell.repetitions[0].record.client.argv.join(" ");
        assert!(argv.contains(" cluster run --ssh "), "{}: merged over agents: {argv}", cell.key);
    }
    for i in 0..3 {
        assert_eq!(hosts.left_on(i), Vec::<String>::new(), "host {i}");
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}
