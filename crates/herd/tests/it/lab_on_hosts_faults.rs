//! `herd lab run` on `[hosts]` when things go wrong (real OpenSSH in namespace hosts,
//! `util::ssh_hosts`, root: CI runs as root): a host that cannot be used fails the run before
//! anything starts, naming the host; herd killed with SIGKILL mid-run leaves nothing on any
//! host; a server host cut off mid-experiment fails that run naming it, stops the rest and
//! keeps every finished run, and its helper stops the server on its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use herd_store::{ExperimentId, Outcome, Store};

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{require_root, tempdir, text, wait_for};

/// An experiment of herd serve × one load, with `[hosts]` as given and the fixture's
/// ssh_config.
fn experiment(dir: &Path, load: &str, reps: u32, hosts: &str) -> std::path::PathBuf {
    let file = dir.join("faults.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"faults\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"9x9\"]\n\
             load = [\"a\"]\n[loads.a]\n{load}\n[repetitions]\nmin = {reps}\nmax = {reps}\n\
             [hosts]\n{hosts}ssh_config = \"lab.ssh_config\"\n"
        ),
    )
    .unwrap();
    file
}

#[test]
fn a_host_that_cannot_be_used_fails_the_run_before_anything_starts() {
    require_root();
    let dir = tempdir("lab-hosts-errors");
    let refused = HostSetup { key_refused: true, ..HostSetup::default() };
    let hosts = SshHosts::start("828", &dir, &[HostSetup::default(), refused]);
    let (fine, no_key) = (hosts.hosts[0].addr, hosts.hosts[1].addr);
    let load = "requests = 10\nconcurrency = 1";
    for (server, says) in [
        // Reachable, but no herd there yet.
        (fine.to_string(), format!("ssh://{fine}")),
        (no_key.to_string(), format!("ssh://{no_key}: key refused")),
        (hosts.unserved.to_string(), format!("ssh://{}: unreachable", hosts.unserved)),
    ] {
        let file = experiment(&dir, load, 1, &format!("server = \"ssh://{server}\"\n"));
        let store = dir.join("r.db");
        let out = hosts.lab_run(&file, &store).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(&says), "{says}: {stderr}");
        assert!(!store.exists(), "no store before the hosts are ready: {stderr}");
        assert_eq!(hosts.left_on(0), Vec::<String>::new());
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `file` on `hosts` (three), SIGKILLs herd once `running` (each host's process a
/// word of whose command line is given, in host order) is there, and waits until nothing
/// herd started is left on any host: each helper sees its channel close and stops what it
/// started; the lab's client, told by the kernel that the lab is gone, stops its agents.
fn killed_mid_run_leaves_nothing(hosts: &SshHosts, file: &Path, running: [&str; 3]) {
    hosts.install(file);
    let mut lab = hosts
        .lab_run(file, &hosts.dir.join("r.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let on = |i: usize, what: &str| hosts.left_on(i).iter().any(|l| l.contains(what));
    wait_for(&format!("{running:?} on the hosts"), Duration::from_secs(30), || {
        running.iter().enumerate().all(|(i, what)| on(i, what))
    });
    lab.kill().unwrap();
    lab.wait().unwrap();
    wait_for("every host cleaned", Duration::from_secs(10), || {
        (0..3).all(|i| hosts.left_on(i).is_empty())
    });
}

#[test]
fn herd_killed_mid_run_leaves_nothing_on_any_host() {
    require_root();
    let dir = tempdir("lab-hosts-kill");
    let hosts = SshHosts::start("829", &dir, &[HostSetup::default(); 3]);
    let [s, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = experiment(
        &dir,
        "duration = \"30s\"\nconcurrency = 2",
        1,
        &format!("server = \"ssh://{s}\"\nclients = [\"ssh://{c1}\", \"ssh://{c2}\"]\n"),
    );
    // Mid-run: the server up on its host and an agent on each client host.
    killed_mid_run_leaves_nothing(&hosts, &file, [" serve ", " agent ", " agent "]);
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same with a router host: the proxy there is its helper's to stop as well.
#[test]
fn herd_killed_mid_run_leaves_nothing_on_the_router_host() {
    require_root();
    let dir = tempdir("lab-hosts-kill-router");
    let hosts = SshHosts::start("834", &dir, &[HostSetup::default(); 3]);
    let [s, r, c] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = experiment(
        &dir,
        "duration = \"30s\"\nconcurrency = 2",
        1,
        &format!("server = \"ssh://{s}\"\nrouter = \"ssh://{r}\"\nclients = [\"ssh://{c}\"]\n"),
    );
    let t = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, t.replacen("[matrix]\n", "[matrix]\npath = [\"haproxy-tcp\"]\n", 1))
        .unwrap();
    killed_mid_run_leaves_nothing(&hosts, &file, [" serve ", "haproxy", " agent "]);
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_host_cut_off_fails_its_run_stops_the_rest_and_keeps_what_finished() {
    require_root();
    let dir = tempdir("lab-hosts-cut");
    let hosts = SshHosts::start("832", &dir, &[HostSetup::default()]);
    let s = hosts.hosts[0].addr;
    let file = experiment(
        &dir,
        "duration = \"1s\"\nconcurrency = 1\ntimeout = \"1s\"",
        3,
        &format!("server = \"ssh://{s}\"\nidle_timeout = \"2s\"\n"),
    );
    hosts.install(&file);
    let log = dir.join("lab.err");
    let mut lab = hosts
        .lab_run(&file, &dir.join("r.db"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    wait_for("the first run to end", Duration::from_secs(30), || {
        std::fs::read_to_string(&log).unwrap_or_default().contains(" rep 1: ")
    });
    hosts.cut_off(0);
    let status = lab.wait().unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("stopped: the server host ssh://{s} (")),
        "the host is named: {stderr}"
    );
    assert!(stderr.contains("herd lab run --resume"), "{stderr}");
    let exp =
        Store::open_read_only(&dir.join("r.db")).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let outcomes: Vec<&Outcome> =
        exp.matrix_cells().flat_map(|c| &c.repetitions).map(|r| &r.record.outcome).collect();
    assert!(matches!(outcomes.first(), Some(Outcome::Ok)), "the first run is kept: {outcomes:?}");
    assert!(outcomes.len() < 3, "no run after the loss: {outcomes:?}");
    assert!(exp.note.as_deref().unwrap_or_default().contains(&format!("ssh://{s}")));
    // The helper, cut off, takes the silence for a lost link and stops the server itself.
    wait_for("the cut-off host cleaned", Duration::from_secs(10), || hosts.left_on(0).is_empty());
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}
