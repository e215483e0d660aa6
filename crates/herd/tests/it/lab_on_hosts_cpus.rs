//! `[client] cpus` with `[hosts] clients`, and the helpers' idle time on client hosts, over
//! real OpenSSH (sshd in namespace hosts of herd's own, `util::ssh_hosts`; root: CI runs as
//! root; nothing aimed anywhere but 198.18.3.0/24). The CPUs name CPUs of each client host:
//! herd's agents there and wrk on client 1 run on them (read from each process's own
//! /proc/PID/status while it runs: the hosts are namespaces of this machine), the records say
//! so and where, and wrk is judged by the pinned count. A CPU a client host lacks fails the
//! lab run before its store exists, and `herd cluster run --agent-cpus` before any agent
//! starts, naming the host. `--idle-timeout` reaches each host's helper (its command line
//! there), 30 s without it as in the lab; the helper's keeping of it is `lab_hosts.rs`'s.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use herd_stats::HealthFacts;
use herd_store::{ExperimentId, Outcome, Store};
use herd_topo::Supervisor;

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{herd, require_root, run, tempdir, text};

/// An experiment in the fixture's directory: herd serve on host 0, `clients` × 9x9 × one
/// load of a second, once, host 1 and 2 the client hosts, `[client] cpus` as given.
fn experiment(hosts: &SshHosts, clients: &str, cpus: &str) -> PathBuf {
    let [s, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = hosts.dir.join("cpus.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"cpus\"\n[matrix]\nserver = [\"herd\"]\nclient = [{clients}]\n\
             workload = [\"9x9\"]\nload = [\"d\"]\n[loads.d]\nduration = \"1s\"\n\
             concurrency = 2\n[repetitions]\nmin = 1\nmax = 1\n[client]\ncpus = \"{cpus}\"\n\
             [hosts]\nserver = \"ssh://{s}\"\nclients = [\"ssh://{c1}\", \"ssh://{c2}\"]\n\
             idle_timeout = \"5s\"\nssh_config = \"lab.ssh_config\"\n"
        ),
    )
    .unwrap();
    file
}

/// A process running now: its executable, its command line and its own CPU list
/// (`Cpus_allowed_list` of /proc/PID/status).
struct Proc {
    exe: PathBuf,
    words: Vec<String>,
    cwd: PathBuf,
    cpus: String,
}

fn processes() -> Vec<Proc> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let (Ok(exe), Ok(cwd)) = (
            std::fs::read_link(entry.path().join("exe")),
            std::fs::read_link(entry.path().join("cwd")),
        ) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let words = cmdline
            .split(|&b| b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        let Some(cpus) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) else {
            continue;
        };
        found.push(Proc { exe, words, cwd, cpus: cpus.trim().to_owned() });
    }
    found
}

/// What ran on the hosts while `child` ran: each herd agent under host i's home, as (i, its
/// CPU list), and each wrk started in a run directory of host 1, as its CPU list.
fn watch(
    hosts: &SshHosts,
    child: &mut std::process::Child,
) -> (BTreeSet<(usize, String)>, BTreeSet<String>) {
    let (mut agents, mut wrk) = (BTreeSet::new(), BTreeSet::new());
    let tmp1 = hosts.dir.join("host1/tmp");
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(60), "the lab run did not end");
        for p in processes() {
            let agent = p.words.get(1).is_some_and(|w| w == "agent");
            if let Some(i) = hosts.hosts.iter().position(|h| p.exe.starts_with(&h.home)) {
                if agent {
                    agents.insert((i, p.cpus.clone()));
                }
            } else if p.exe == Path::new("/usr/bin/wrk") && p.cwd.starts_with(&tmp1) {
                wrk.insert(p.cpus);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (agents, wrk)
}

#[test]
fn client_cpus_are_cpus_of_each_client_host() {
    require_root();
    let dir = tempdir("lab-hosts-cpus");
    let hosts = SshHosts::start("851", &dir, &[HostSetup::default(); 3]);
    let [c1, c2] = [1, 2].map(|i| hosts.hosts[i].addr);
    let file = experiment(&hosts, "\"herd\", \"wrk\"", "1");
    hosts.place_herd();
    let store = dir.join("r.db");
    let log = dir.join("lab.err");
    let mut lab = hosts
        .lab_run(&file, &store)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let (agents, wrk) = watch(&hosts, &mut lab);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(lab.wait().unwrap().success(), "{stderr}");
    assert!(stderr.contains("; the client on CPUs 1 of each"), "{stderr}");
    // One agent on each client host, each on CPU 1 there; wrk on CPU 1 of client 1.
    let want: BTreeSet<(usize, String)> = [(1, "1".to_owned()), (2, "1".to_owned())].into();
    assert_eq!(agents, want, "{stderr}");
    assert_eq!(wrk, BTreeSet::from(["1".to_owned()]), "{stderr}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let cells: Vec<_> = exp.matrix_cells().collect();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        let [rep] = cell.repetitions.as_slice() else { panic!("one run of {}", cell.key) };
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok, "{}: {stderr}", cell.key);
        let cpus = r.client.cpus.as_deref().unwrap_or_default();
        if r.client.tool == "herd" {
            assert_eq!(cpus, format!("1 on each of ssh://{c1}, ssh://{c2}"));
            // The agents' CPUs and the experiment's idle time, on the cluster's command line.
            let argv = &r.client.argv;
            assert!(argv.contains(&"--agent-cpus=1".to_owned()), "{argv:?}");
            assert!(argv.contains(&"--idle-timeout=5s".to_owned()), "{argv:?}");
        } else {
            assert_eq!(cpus, format!("1 on ssh://{c1}"));
            // wrk is judged by the one CPU it had, not by client 1's count.
            match &r.client.health {
                Some(HealthFacts::ByCpu(f)) => assert_eq!(f.cpus_allowed, 1, "{f:?}"),
                other => panic!("wrk judged by its CPU time: {other:?}"),
            }
        }
    }
    for i in 0..3 {
        assert_eq!(hosts.left_on(i), Vec::<String>::new(), "host {i}");
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cpu_a_client_host_lacks_fails_before_anything_starts_naming_the_host() {
    require_root();
    let dir = tempdir("lab-hosts-cpus-lacking");
    let hosts = SshHosts::start("852", &dir, &[HostSetup::default(); 3]);
    let c1 = hosts.hosts[1].addr;
    let file = experiment(&hosts, "\"herd\"", "4095");
    hosts.place_herd();
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "[client] cpus 4095 on [hosts] client 1: ssh://{c1}: CPU 4095 is not online there: \
             its online CPUs are "
        )),
        "{stderr}"
    );
    assert!(!store.exists(), "no store for a run that cannot start");
    // The server's CPUs and the router's, on theirs.
    let [s, r] = [0, 2].map(|i| hosts.hosts[i].addr);
    for (matrix, router, says) in [
        (
            "server_cpus = [\"4095\"]\n",
            "[hosts]\n".to_owned(),
            format!("server_cpus on [hosts] server ssh://{s}"),
        ),
        (
            "path = [\"haproxy-tcp\"]\n",
            format!("[router]\ncpus = \"4095\"\n[hosts]\nrouter = \"ssh://{r}\"\n"),
            format!("[router] cpus on [hosts] router ssh://{r}"),
        ),
    ] {
        let file = hosts.dir.join("placed.toml");
        std::fs::write(
            &file,
            format!(
                "name = \"placed\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"9x9\"]\n\
                 load = [\"n\"]\n{matrix}[loads.n]\nrequests = 10\nconcurrency = 1\n{router}\
                 server = \"ssh://{s}\"\nssh_config = \"lab.ssh_config\"\n"
            ),
        )
        .unwrap();
        let out = hosts.lab_run(&file, &store).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let says = format!("{says}: CPU 4095 is not online there: its online CPUs are ");
        assert!(stderr.contains(&says), "{says}: {stderr}");
        assert!(!store.exists(), "no store for a run that cannot start");
    }

    // `herd cluster run --agent-cpus` by hand: refused before any agent starts.
    let mut sup = Supervisor::new(None);
    hosts.serve_herd(&mut sup, 8080, &[]);
    let url = format!("http://{}:8080/9x9", hosts.hosts[0].addr);
    let out = hosts
        .herd()
        .args(["cluster", "run", "--ssh", &format!("{c1}"), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--agent-cpus", "0,4095", "--", &url, "-n", "10"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "--agent-cpus 0,4095: ssh://{c1}: CPU 4095 is not online there: its online CPUs are "
        )),
        "{stderr}"
    );
    assert_eq!(hosts.served(8080, "/9x9"), 0, "no agent sent a request");
    for i in 0..3 {
        assert_eq!(hosts.left_on(i), Vec::<String>::new(), "host {i}");
    }
    sup.stop_all(Duration::from_secs(2));
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_hosts_helper_is_given_the_idle_timeout_and_30s_by_default() {
    require_root();
    let dir = tempdir("cluster-ssh-idle");
    let hosts = SshHosts::start("853", &dir, &[HostSetup::default(); 2]);
    let c1 = hosts.hosts[1].addr;
    hosts.place_herd();
    let mut sup = Supervisor::new(None);
    hosts.serve_herd(&mut sup, 8080, &[]);
    let url = format!("http://{}:8080/9x9", hosts.hosts[0].addr);
    // The helper's command line on host 1 while the run runs (`herd host --idle-timeout T`).
    let helper_idle = |flags: &[&str]| {
        let mut cluster = hosts
            .herd()
            .args(["cluster", "run", "--ssh", &c1.to_string(), "--ssh-config"])
            .arg(&hosts.ssh_config)
            .args(flags)
            .args(["--", &url, "-d", "1s", "-c", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut seen = BTreeSet::new();
        let t = Instant::now();
        while cluster.try_wait().unwrap().is_none() {
            assert!(t.elapsed() < Duration::from_secs(20), "herd cluster run did not end");
            for p in processes() {
                let helper = p.words.get(1).is_some_and(|w| w == "host");
                if helper && p.exe.starts_with(&hosts.hosts[1].home) {
                    let at = p.words.iter().position(|w| w == "--idle-timeout");
                    seen.insert(at.and_then(|i| p.words.get(i + 1)).cloned().unwrap_or_default());
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = cluster.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        seen
    };
    assert_eq!(helper_idle(&["--idle-timeout", "7s"]), BTreeSet::from(["7s".to_owned()]));
    assert_eq!(helper_idle(&[]), BTreeSet::from(["30s".to_owned()]), "the lab's default");
    assert_eq!(hosts.left_on(1), Vec::<String>::new());
    sup.stop_all(Duration::from_secs(2));
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_agents_flags_are_refused_without_ssh_and_out_of_bounds() {
    let url = "http://127.0.0.1:9/";
    let local = ["cluster", "run", "--local", "1"];
    let out = run(herd().args(local).args(["--idle-timeout", "5s", "--", url]));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--idle-timeout is for the helpers of --ssh"));
    let out = run(herd().args(local).args(["--agent-cpus", "1", "--", url]));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--agent-cpus places the agents of --ssh"));
    let ssh = ["cluster", "run", "--ssh", "198.18.3.99"];
    let out = run(herd().args(ssh).args(["--idle-timeout", "500ms", "--", url]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`500ms`: give 2s to 1h"), "{}", text(&out.stderr));
}
