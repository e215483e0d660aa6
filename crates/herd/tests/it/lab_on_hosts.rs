//! `herd lab run` with a `[hosts]` server: every run's server starts on that host through
//! its helper over real OpenSSH (sshd in a namespace host of herd's own, `util::ssh_hosts`,
//! root: CI runs as root), the client here sends its load over the network between them,
//! and nothing is left on the host afterwards. And what the runner refuses on hosts, said
//! before anything starts. Nothing is aimed anywhere but 198.18.3.0/24.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::path::{Path, PathBuf};

use herd_store::{ExperimentId, Outcome, Store};

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{herd, require_root, tempdir, text};

/// An experiment in `dir` with `[hosts]` as given and the fixture's ssh_config: `servers`
/// × a 6,397-byte static page × 300 requests over 2 connections, one run each.
fn experiment(dir: &Path, servers: &str, hosts: &str) -> PathBuf {
    let file = dir.join("on-hosts.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"on-hosts\"\n[matrix]\nserver = [{servers}]\nworkload = [\"page\"]\n\
             load = [\"a\"]\n[workloads.page]\nkind = \"static\"\nsize = 6397\n\
             [loads.a]\nrequests = 300\nconcurrency = 2\n\
             [repetitions]\nmin = 1\nmax = 1\n\
             [hosts]\n{hosts}ssh_config = \"lab.ssh_config\"\n"
        ),
    )
    .unwrap();
    file
}

#[test]
fn servers_run_on_the_server_host_and_nothing_is_left_there() {
    require_root();
    let dir = tempdir("lab-on-hosts");
    let hosts = SshHosts::start("820", &dir, &[HostSetup::default()]);
    let server = hosts.hosts[0].addr;
    let file = experiment(&dir, "\"herd\", \"nginx\"", &format!("server = \"ssh://{server}\"\n"));
    hosts.install(&file);

    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}\n{}", hosts.sshd_log(0));
    assert!(
        stderr.contains(&format!("herd lab: server host ssh://{server} (")),
        "the host is said before the runs: {stderr}"
    );
    assert!(stderr.contains(&format!("load to {server}")), "{stderr}");

    assert!(stderr.contains("; the path: MTU 1500, connect RTT "), "{stderr}");
    // The table says where the servers ran.
    let line = stdout.lines().find(|l| l.starts_with("server host ")).unwrap_or_else(|| {
        panic!("no server host line: {stdout}");
    });
    assert!(line.contains(&format!("ssh://{server} (")) && line.contains("MTU 1500"), "{line}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    // The disclosure records the host (its own doctor's machine record) and the path to it.
    let env = |k: &str| {
        let found = exp.experiment.environment.iter().find(|(key, _)| key == k);
        found.map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("no {k} in the disclosure"))
    };
    assert_eq!(env("host.server.url"), format!("ssh://{server}"));
    assert_eq!(env("host.server.address"), server.to_string());
    assert!(env("host.server.herd").starts_with("herd 0."), "{}", env("host.server.herd"));
    assert_ne!(env("host.server.cpu_model"), "unknown");
    assert!(env("host.server.kernel").contains('.'));
    assert_eq!(env("path.server.mtu"), "1500");
    // The cards the load went over: the one holding the server host's address there, and
    // this machine's toward it.
    let nic = env("host.server.nic");
    assert!(nic.contains(&format!(" ({server}): ")) && nic.contains(", MTU 1500, up"), "{nic}");
    let here = env("nic");
    assert!(here.contains(" (198.18.3.") && here.contains(", MTU 1500, up"), "{here}");
    let mbit: f64 = env("path.server.tcp_mbit_per_s").parse().unwrap();
    let rtt: u64 = env("path.server.connect_rtt_us").parse().unwrap();
    assert!(mbit > 100.0 && rtt < 100_000, "{mbit} Mbit/s, {rtt} µs");
    let cpu = env("server_cpu_accounting");
    assert!(cpu.starts_with(&format!("on ssh://{server}: ")), "{cpu}");
    let host_tmp = dir.join("host0/tmp");
    let cells: Vec<_> = exp.matrix_cells().collect();
    assert_eq!(cells.len(), 2, "{stdout}");
    for cell in cells {
        let [rep] = cell.repetitions.as_slice() else { panic!("one run of {}", cell.key) };
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok, "{}: {stderr}", cell.key);
        let completed: u64 = r.measurements.iter().map(|m| m.completed).sum();
        let failed: u64 = r.measurements.iter().map(|m| m.failed).sum();
        assert_eq!((completed, failed), (300, 0), "{}", cell.key);
        // The server ran on the host: its command line names the helper's run directory
        // there (the host's own TMPDIR), and its CPU time was read there.
        let front = r.servers.last().unwrap();
        assert!(
            front.argv.iter().any(|a| a.contains(&host_tmp.display().to_string())),
            "{}: {:?}",
            cell.key,
            front.argv
        );
        let cpu = r.server_cpu_seconds.unwrap_or(0.0);
        assert!(cpu > 0.0, "{}: the server's CPU time is read on its host: {cpu}", cell.key);
        assert!(!front.version.is_empty() && !front.version.starts_with("unknown"), "{front:?}");
        // The load went over the network to the host's address.
        assert!(r.client.argv.iter().any(|a| a.contains(&server.to_string())), "{r:?}");
    }
    // Nothing left there: no program, no run directory.
    assert_eq!(hosts.left_on(0), Vec::<String>::new());
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The seeds' shape: the server on one machine, the client on two others, one spread run
/// merged exactly (held against what the user's own server there counted); each host in
/// the disclosure, each agent's own figures in the store.
#[test]
fn the_client_runs_as_agents_on_two_client_hosts() {
    require_root();
    let dir = tempdir("lab-on-hosts-clients");
    let setups = [HostSetup::default(), HostSetup::default(), HostSetup::default()];
    let hosts = SshHosts::start("821", &dir, &setups);
    let [server, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    // One server of the lab's (nginx, started on the host each run) and one of the user's
    // own, already running there (herd serve, `driver = "external"`), whose own count of
    // what it served is held against the merged one.
    let www = dir.join("www-mine");
    let out = herd().args(["serve", "--generate"]).arg(&www).args(["--sizes", "6397"]).output();
    assert!(out.unwrap().status.success());
    let mut sup = herd_topo::Supervisor::new(None);
    let serve_log = hosts.serve_herd(&mut sup, 8080, &["--root".into(), www.into_os_string()]);
    let file = experiment(
        &dir,
        "\"mine\", \"nginx\"",
        &format!("server = \"ssh://{server}\"\nclients = [\"ssh://{c1}\", \"ssh://{c2}\"]\n"),
    );
    let text_of = std::fs::read_to_string(&file).unwrap();
    let (head, hosts_section) = text_of.split_once("[hosts]").unwrap();
    std::fs::write(
        &file,
        format!(
            "{head}[servers.mine]\ndriver = \"external\"\nurl = \"http://{server}:8080\"\n\
             pid = {}\n[hosts]{hosts_section}",
            sup.running()[0].pid
        ),
    )
    .unwrap();
    hosts.install(&file);
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains(&format!("client hosts, one agent each: ssh://{c1} (")), "{stderr}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    // Three hosts in the disclosure, each by its own doctor.
    for role in ["server", "client1", "client2"] {
        let kernel = format!("host.{role}.kernel");
        assert!(
            exp.experiment.environment.iter().any(|(k, v)| *k == kernel && v.contains('.')),
            "no {kernel}"
        );
    }
    for cell in exp.matrix_cells() {
        let [rep] = cell.repetitions.as_slice() else { panic!("one run of {}", cell.key) };
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok, "{}: {stderr}", cell.key);
        let [m] = r.measurements.as_slice() else { panic!("one step") };
        assert_eq!((m.completed, m.failed), (300, 0), "{}: merged exactly", cell.key);
        // The client was one run over an agent on each client host.
        let argv = r.client.argv.join(" ");
        assert!(argv.contains(&format!(" cluster run --ssh ssh://{c1},ssh://{c2} ")), "{argv}");
        for agent in 0..2 {
            for figure in ["requests_per_second", "start_late_us", "clock_offset_us"] {
                let name = format!("agent.{agent}.{figure}");
                assert!(m.reported.iter().any(|(n, _)| *n == name), "{}: no {name}", cell.key);
            }
        }
        // nginx's CPU from the helper's cgroup or process group, the user's server's from its
        // process group on the host, read there by the helper.
        assert!(r.server_cpu_seconds.unwrap_or(0.0) > 0.0, "{}", cell.key);
    }
    // The user's server counted the merged 300 and the one verification request.
    assert_eq!(hosts.served(8080, "static"), 300 + 1);
    // Its access log says so line by line: every response a 200, from the two agents' hosts
    // (and the verification's one, from here).
    let log = std::fs::read_to_string(&serve_log).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("\"GET /sizes/6397.html ")).collect();
    assert_eq!(lines.len(), 300 + 1, "{log}");
    assert!(lines.iter().all(|l| l.contains("\" 200 6397")), "{log}");
    for agent in [c1, c2] {
        let n = lines.iter().filter(|l| l.starts_with(&format!("{agent} "))).count();
        assert!(n > 0, "no request from the agent on {agent}: {log}");
    }
    assert!(stdout.contains("agent 1 "), "the agents' own figures: {stdout}");
    // Nothing left on any host but the user's own server, which the lab does not stop.
    drop(sup);
    for i in 0..3 {
        assert_eq!(hosts.left_on(i), Vec::<String>::new(), "host {i}");
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that closes first leaves its TIME_WAIT sockets on its own host: the lab reads
/// them there, through the helper, and waits for them as it does for its own.
#[test]
fn the_server_hosts_time_wait_is_drained_too() {
    require_root();
    let dir = tempdir("lab-on-hosts-tw");
    let hosts = SshHosts::start("827", &dir, &[HostSetup::default()]);
    let server = hosts.hosts[0].addr;
    let file = experiment(&dir, "\"herd\"", &format!("server = \"ssh://{server}\"\n"));
    let t = std::fs::read_to_string(&file).unwrap();
    let t = t
        .replace("concurrency = 2\n", "concurrency = 2\nkeep_alive = false\n")
        .replace("min = 1\nmax = 1", "min = 2\nmax = 2")
        .replace("[hosts]", "[runner]\ntime_wait_below = 100\ndrain_timeout = \"1s\"\n[hosts]");
    std::fs::write(&file, t).unwrap();
    hosts.install(&file);
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let waited = format!(
        "sockets in TIME_WAIT on the server host ssh://{server}: waiting until fewer than 100"
    );
    assert!(stderr.contains(&waited), "{stderr}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let drained: f64 =
        exp.matrix_cells().flat_map(|c| &c.repetitions).map(|r| r.record.drain_seconds).sum();
    assert!(drained >= 0.9, "the second run waited its drain_timeout: {drained}");
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_hosts_cannot_run_is_refused_before_anything_starts() {
    // No root needed: each refusal comes before ssh, the store or a namespace.
    let dir = tempdir("lab-on-hosts-refused");
    std::fs::write(dir.join("lab.ssh_config"), "").unwrap();
    let cases = [
        (
            "server = \"ssh://bench@198.18.10.2\"\nrouter = \"ssh://bench@198.18.10.1\"\n",
            "\"herd\"",
            "",
            "[hosts] router ssh://bench@198.18.10.1: no cell runs a proxy path",
        ),
        (
            "server = \"ssh://bench@198.18.10.2\"\nrouter = \"ssh://bench@198.18.10.1\"\n",
            "\"herd\"",
            "path = [\"nft-dnat\"]\n",
            "[matrix] path nft-dnat: between [hosts] the forwarding and any NAT are the real \
             network's; herd does not change a real router's routes or firewall",
        ),
        (
            "server = \"ssh://bench@198.18.10.2\"\n",
            "\"herd\"",
            "path = [\"haproxy-tcp\"]\n",
            "[matrix] path haproxy-tcp: its proxy runs on a router; between [hosts] name the \
             machine it runs on as `[hosts] router`",
        ),
        (
            "router = \"ssh://bench@198.18.10.1\"\n",
            "\"herd\"",
            "path = [\"haproxy-tcp\"]\n",
            "[hosts] names a router host but no server",
        ),
        (
            "clients = [\"ssh://bench@198.18.10.3\"]\n",
            "\"herd\"",
            "",
            "[hosts] names client hosts but no server",
        ),
        (
            "server = \"ssh://bench@198.18.10.2\"\n",
            "\"herd\"",
            "path = [\"direct\", \"routed\"]\n",
            "[matrix] path routed: between [hosts] the forwarding and any NAT are the real \
             network's",
        ),
    ];
    for (hosts, servers, axis, says) in cases {
        let file = experiment(&dir, servers, hosts);
        if !axis.is_empty() {
            let t = std::fs::read_to_string(&file).unwrap();
            std::fs::write(&file, t.replacen("[matrix]\n", &format!("[matrix]\n{axis}"), 1))
                .unwrap();
        }
        let out = herd()
            .env("TMPDIR", &dir)
            .args(["lab", "run", "--no-progress", "--store"])
            .arg(dir.join("r.db"))
            .arg(&file)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(says), "{says}: {stderr}");
        // Said of the hosts, not of this machine (whose `herd doctor` would not help).
        assert!(stderr.contains("cannot run on its [hosts] (nothing ran): "), "{stderr}");
        assert!(!stderr.contains("herd doctor"), "{stderr}");
        assert!(text(&out.stdout).is_empty(), "no table: {stderr}");
    }
    // No store, no run directory: only the files.
    let mut left: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, ["lab.ssh_config", "on-hosts.toml"].map(std::ffi::OsString::from));
    let _ = std::fs::remove_dir_all(&dir);
}

/// docs/hosts.md's way to try `[hosts]` on one machine: `scripts/try-hosts.sh up` makes three
/// sshd hosts that `herd lab hosts install` and `check` accept, and `down` leaves nothing.
#[test]
fn the_try_hosts_script_makes_three_hosts_and_removes_them() {
    require_root();
    let dir = tempdir("try-hosts");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/try-hosts.sh");
    let up = std::process::Command::new(script).arg("up").arg(&dir).output().unwrap();
    let said = text(&up.stdout);
    let down = || {
        let out = std::process::Command::new(script).arg("down").arg(&dir).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    if !up.status.success() {
        down();
        panic!("up: {said}{}", text(&up.stderr));
    }
    let section = said.split_once("In your experiment file:\n\n").unwrap().1;
    let section: String =
        section.lines().take_while(|l| !l.is_empty()).map(|l| format!("{}\n", l.trim())).collect();
    let file = dir.join("try.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"try\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"9x9\"]\nload = [\"a\"]\n\
             [loads.a]\nrequests = 10\nconcurrency = 1\n{section}"
        ),
    )
    .unwrap();
    let in_me = |args: &[&str]| {
        std::process::Command::new("ip")
            .args(["netns", "exec", "herdtry-me", env!("CARGO_BIN_EXE_herd")])
            .args(args)
            .arg(&file)
            .output()
            .unwrap()
    };
    let install = in_me(&["lab", "hosts", "install"]);
    let check = in_me(&["lab", "hosts", "check"]);
    let pids = std::fs::read_to_string(dir.join("sshd.pids")).unwrap_or_default();
    down();
    assert!(install.status.success(), "{}{}", text(&install.stdout), text(&install.stderr));
    let checked = text(&check.stdout);
    assert!(check.status.success(), "{checked}{}", text(&check.stderr));
    assert_eq!(checked.matches("herd: same build").count(), 3, "{checked}");
    // Nothing left: no namespace, no sshd.
    let ns = std::process::Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(!text(&ns.stdout).contains("herdtry-"), "{}", text(&ns.stdout));
    for pid in pids.lines() {
        // Gone, or a zombie not yet reaped by its new parent.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
        assert!(matches!(state, None | Some("Z")), "sshd {pid} still runs: {stat}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Seed 002's shape on real hosts: a client host, a router host and a server host. Each
/// proxy path's program (HAProxy tcp balancing, nginx as a reverse proxy) starts on the
/// router host through its helper, in front of the server on the server host; the agent on
/// the client host sends its load to the router. Counts exact, the router's program in the
/// record with its CPU time read there, the router host and the path to it disclosed, and
/// nothing left on any host.
#[test]
fn proxy_paths_run_on_the_router_host() {
    require_root();
    let dir = tempdir("lab-on-hosts-router");
    let setups = [HostSetup::default(), HostSetup::default(), HostSetup::default()];
    let hosts = SshHosts::start("833", &dir, &setups);
    let [server, router, client] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = experiment(
        &dir,
        "\"herd\"",
        &format!(
            "server = \"ssh://{server}\"\nrouter = \"ssh://{router}\"\n\
             clients = [\"ssh://{client}\"]\n"
        ),
    );
    let t = std::fs::read_to_string(&file).unwrap();
    let t = t
        .replacen(
            "[matrix]\n",
            "[matrix]\npath = [\"direct\", \"haproxy-tcp\", \"nginx-proxy\"]\n",
            1,
        )
        .replace("[hosts]", "[runner]\nserver_count = true\n[hosts]");
    std::fs::write(&file, t).unwrap();
    hosts.install(&file);
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains(&format!("herd lab: router host ssh://{router} (")), "{stderr}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let env = |k: &str| {
        let found = exp.experiment.environment.iter().find(|(key, _)| key == k);
        found.map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("no {k} in the disclosure"))
    };
    assert_eq!(env("host.router.address"), router.to_string());
    assert!(
        env("host.router.nic").contains(&format!(" ({router}): ")),
        "{}",
        env("host.router.nic")
    );
    let client_nic = env("host.client1.nic");
    assert!(client_nic.contains(&format!(" ({client}): ")), "{client_nic}");
    assert!(env("host.router.kernel").contains('.'));
    assert_eq!(env("path.router.mtu"), "1500");
    assert_eq!(env("host.server.address"), server.to_string());
    let router_tmp = dir.join("host1/tmp").display().to_string();
    let server_tmp = dir.join("host0/tmp").display().to_string();
    // herd serve, and the path's calibration (herd serve as the null server) on each path;
    // `direct` is the client straight to the server host, no router program.
    let cells: Vec<_> = exp.matrix_cells().collect();
    assert_eq!(cells.len(), 6, "{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("router host ")).unwrap_or_else(|| {
        panic!("no router host line: {stdout}");
    });
    assert!(line.contains(&format!("ssh://{router} (")) && line.contains("MTU 1500"), "{line}");
    for cell in cells {
        let [rep] = cell.repetitions.as_slice() else { panic!("one run of {}", cell.key) };
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok, "{}: {stderr}", cell.key);
        let [m] = r.measurements.as_slice() else { panic!("one step") };
        assert_eq!((m.completed, m.failed), (300, 0), "{}", cell.key);
        // What passed the proxy is what the server logged: the 300 and the verification.
        let logged = m.reported.iter().find(|(n, _)| n == "server_count.logged");
        assert_eq!(logged.map(|(_, v)| *v), Some(301.0), "{}: {:?}", cell.key, m.reported);
        // The server on the server host, the proxy on the router host, each from its
        // helper's run directory there.
        let front = &r.servers[0];
        assert!(front.argv.iter().any(|a| a.contains(&server_tmp)), "{:?}", front.argv);
        let argv = r.client.argv.join(" ");
        assert!(argv.contains(&format!("--ssh ssh://{client} ")), "{argv}");
        if cell.key.contains("path=direct") {
            assert_eq!(r.servers.len(), 1, "no router program: {:?}", r.servers);
            assert!(argv.contains(&format!("{server}:18080")), "{argv}");
            continue;
        }
        let proxy = r.servers.last().unwrap();
        assert!(proxy.name.starts_with("router:"), "{proxy:?}");
        assert!(proxy.argv.iter().any(|a| a.contains(&router_tmp)), "{:?}", proxy.argv);
        assert!(!proxy.version.is_empty() && !proxy.version.starts_with("unknown"), "{proxy:?}");
        // The load went to the router, from the agent on the client host.
        assert!(argv.contains(&format!("{router}:18080")), "{argv}");
        // What the router's program cost, read on its host.
        let router_cpu = proxy.cpu_seconds.unwrap_or(0.0);
        assert!(router_cpu > 0.0, "{}: the router's CPU time: {proxy:?}", cell.key);
    }
    for i in 0..3 {
        assert_eq!(hosts.left_on(i), Vec::<String>::new(), "host {i}");
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}
