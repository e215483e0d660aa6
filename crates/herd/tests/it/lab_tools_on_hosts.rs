//! `herd lab run` with `[hosts] clients` and ab, wrk and h2load as clients: each runs on
//! client 1 through its helper over real OpenSSH (sshd in namespace hosts of herd's own,
//! `util::ssh_hosts`; root: CI runs as root), against the server on the server host, its
//! files (wrk's script, the POST body, ab's `-g` file) in the helper's run directory there,
//! its output read back and parsed here; Ctrl-C stops it there; a failure there names the
//! host; nothing is left on any host. Nothing is aimed anywhere but 198.18.3.0/24.
//!
//! Not tested here: a tool missing on the client host, named with its package. The hosts
//! share this machine's file system, so a tool installed here is installed there too and
//! its absence cannot be made honestly; the naming is a unit test of `client_hosts.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_store::{ExperimentId, ExperimentStatus, Outcome, Store};

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{require_root, tempdir, text};

/// An experiment in the fixture's directory: herd serve on the server host, `clients` as
/// the client axis, a 700-byte POST each request, the loads given, one run each, and
/// `[hosts]` with the server and `clients` hosts.
fn experiment(hosts: &SshHosts, clients: &str, loads: &str, client_hosts: &[usize]) -> PathBuf {
    let server = hosts.hosts[0].addr;
    let urls: Vec<String> =
        client_hosts.iter().map(|&i| format!("\"ssh://{}\"", hosts.hosts[i].addr)).collect();
    let names: Vec<String> = loads
        .lines()
        .filter_map(|l| l.strip_prefix("[loads.")?.strip_suffix(']'))
        .map(|n| format!("\"{n}\""))
        .collect();
    let file = hosts.dir.join("tools.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"tools-on-hosts\"\n[matrix]\nserver = [\"herd\"]\nclient = [{clients}]\n\
             workload = [\"post\"]\nload = [{}]\n[workloads.post]\nkind = \"post\"\nsize = 700\n\
             {loads}[repetitions]\nmin = 1\nmax = 1\n\
             [hosts]\nserver = \"ssh://{server}\"\nclients = [{}]\n\
             ssh_config = \"lab.ssh_config\"\n",
            names.join(", "),
            urls.join(", ")
        ),
    )
    .unwrap();
    file
}

/// Nothing left on sshd hosts `0..n`: no program of theirs running, their temporary
/// directories empty.
fn nothing_left(hosts: &SshHosts, n: usize) {
    for i in 0..n {
        assert_eq!(hosts.left_on(i), Vec::<String>::new(), "host {i}");
    }
}

/// ab and h2load for a request count, wrk for a duration (what each can run), on client 1
/// of two client hosts: each run ok, its counts exact where the load is a count,
/// the stored command line naming client 1 and files in its helper's run directory.
#[test]
fn ab_wrk_and_h2load_run_on_client_1_against_the_server_host() {
    require_root();
    let dir = tempdir("lab-tools-on-hosts");
    let setups = [HostSetup::default(); 3];
    let hosts = SshHosts::start("830", &dir, &setups);
    let [server, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let loads = "[loads.n]\nrequests = 300\nconcurrency = 2\nwarmup_requests = 20\n\
                 [loads.d]\nduration = \"1s\"\nconcurrency = 2\n\
                 [[exclude]]\nload = \"n\"\nclient = \"wrk\"\n\
                 [[exclude]]\nload = \"d\"\nclient = \"ab\"\n\
                 [[exclude]]\nload = \"d\"\nclient = \"h2load\"\n";
    let file = experiment(&hosts, "\"ab\", \"wrk\", \"h2load\"", loads, &[1, 2]);
    hosts.install(&file);
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("client hosts, one agent each: ssh://{c1} (",))
            && stderr.contains(
                "; ab, wrk and h2load run on client 1 alone (herd's client spreads over all)"
            ),
        "{stderr}"
    );
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let env = |k: &str| {
        let found = exp.experiment.environment.iter().find(|(key, _)| key == k);
        found.map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("no {k} in the disclosure"))
    };
    assert_eq!(
        env("host.client1.tools"),
        "ab /usr/bin/ab, wrk /usr/bin/wrk, h2load /usr/bin/h2load"
    );
    assert!(env("version.client:ab").starts_with("2.3"), "{}", env("version.client:ab"));
    assert!(!env("version.client:wrk").starts_with("unknown"), "{}", env("version.client:wrk"));
    // The helper's run directory on client 1 is under its own TMPDIR.
    let c1_tmp = dir.join("host1/tmp").display().to_string();
    let cells: Vec<_> = exp.matrix_cells().collect();
    // ab cannot run for a duration, nor wrk for a count; h2load runs a count (kept short).
    assert_eq!(cells.len(), 3, "{stdout}");
    for cell in cells {
        let [rep] = cell.repetitions.as_slice() else { panic!("one run of {}", cell.key) };
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok, "{}: {stderr}", cell.key);
        let tool = r.client.tool.as_str();
        let [m] = r.measurements.as_slice() else { panic!("{}: one step", cell.key) };
        assert_eq!(m.failed, 0, "{}", cell.key);
        if cell.key.contains("load=n") {
            assert_eq!(m.completed, 300, "{}: exactly the count asked", cell.key);
            assert_eq!(m.warmup_requests, 20, "{}: the warm-up ran there too", cell.key);
        } else {
            assert!(m.completed > 10, "{}: {}", cell.key, m.completed);
        }
        // The client ran on client 1: its program is named there, and the files it read
        // and wrote are in the helper's run directory there.
        let argv = &r.client.argv;
        assert_eq!(argv[0], format!("ssh://{c1}:/usr/bin/{tool}"), "{}", cell.key);
        assert!(!argv.iter().any(|a| a.contains(&c2.to_string())), "{argv:?}");
        assert!(argv.iter().any(|a| a.contains(&format!("http://{server}:"))), "{argv:?}");
        let flag = match tool {
            "ab" => "-p",
            "wrk" => "-s",
            _ => "-d",
        };
        let at = argv.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{argv:?}"));
        assert!(argv[at + 1].starts_with(&c1_tmp), "{}: {flag} {}", cell.key, argv[at + 1]);
        if tool == "ab" {
            let g = argv.iter().position(|a| a == "-g").unwrap();
            assert!(argv[g + 1].starts_with(&c1_tmp), "{}", argv[g + 1]);
        }
        assert!(!r.client.version.starts_with("unknown"), "{}: {}", cell.key, r.client.version);
    }
    nothing_left(&hosts, 3);
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C while wrk runs on client 1: the helper stops it there, the run is not stored,
/// and nothing is left on any host. Then ab failing there fails its run naming the host.
#[test]
fn ctrl_c_stops_the_tool_on_the_client_host() {
    require_root();
    let dir = tempdir("lab-tools-on-hosts-int");
    let hosts = SshHosts::start("831", &dir, &[HostSetup::default(); 2]);
    let loads = "[loads.long]\nduration = \"30s\"\nconcurrency = 2\n";
    let file = experiment(&hosts, "\"wrk\"", loads, &[1]);
    hosts.install(&file);
    let store = dir.join("r.db");
    let log = dir.join("lab.log");
    let mut child = hosts
        .lab_run(&file, &store)
        .stdout(std::fs::File::create(dir.join("lab.out")).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let wrk = loop {
        // `process PID: /usr/bin/wrk …` (its script's path names the host's TMPDIR).
        let running = hosts.left_on(1).into_iter().filter(|p| p.contains(": /usr/bin/wrk "));
        if let Some(p) = running.into_iter().next() {
            break p;
        }
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(t.elapsed() < Duration::from_secs(30), "wrk never ran on client 1: {said}");
        assert!(child.try_wait().unwrap().is_none(), "lab run ended: {said}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let pid = wrk.trim_start_matches("process ").split(':').next().unwrap().to_owned();
    // SAFETY: signalling the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status =
        crate::util::exit_within(&mut child, Duration::from_secs(15), "lab run did not stop");
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "wrk {pid} still runs: {wrk}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    assert_eq!(exp.status, ExperimentStatus::Interrupted);
    assert_eq!(exp.matrix_cells().flat_map(|c| &c.repetitions).count(), 0);
    nothing_left(&hosts, 2);

    // A tool that fails there fails the run naming the host: client 1 alone cannot reach
    // the server (a prohibit route in its namespace; herd's verification from here can),
    // so ab there fails to connect.
    let c1 = hosts.hosts[1].addr;
    let ns = hosts.host_netns(1);
    let server = format!("{}/32", hosts.hosts[0].addr);
    let route = |verb: &str| {
        let out = std::process::Command::new("ip")
            .args(["-n", &ns, "route", verb, "prohibit", &server])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    route("add");
    let file = experiment(&hosts, "\"ab\"", "[loads.n]\nrequests = 50\nconcurrency = 1\n", &[1]);
    let store = dir.join("r2.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    route("del");
    let said = text(&out.stderr);
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let runs: Vec<_> = exp.matrix_cells().flat_map(|c| &c.repetitions).collect();
    let [run] = runs.as_slice() else { panic!("one run: {said}") };
    let Outcome::Failed { kind, reason } = &run.record.outcome else {
        panic!("ab could not connect, yet: {:?}; {said}", run.record.outcome)
    };
    assert_eq!(*kind, herd_store::RunFailureKind::ClientFailed, "{reason}");
    assert!(reason.contains(&format!("(on ssh://{c1})")), "{reason}");
    assert!(reason.contains("the measured run of ab"), "{reason}");
    nothing_left(&hosts, 2);
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}
