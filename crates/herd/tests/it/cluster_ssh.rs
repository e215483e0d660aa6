//! `herd cluster run --ssh` against real OpenSSH (root: CI runs as root): sshd hosts made of
//! herd's own namespaces (`util::ssh_hosts`, 198.18.3.0/24), herd serve in the server host,
//! agents on the two others, herd itself in the client host. The merged count is what herd
//! serve counted, from both agents' addresses (a host named twice runs two); through a master
//! the test holds (`HERD_SSH_CONTROL_DIR`) no new login is made; a coordinator stopped by
//! Ctrl-C or killed with SIGKILL leaves no agent and no run directory on any host; a host that
//! cannot serve fails the run before any agent starts, and the message names it. The files a
//! run reads (a CA, a body, a URL list, a SPECweb set's manifest) are copied to each host, and
//! its agent reads the copy.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use herd_topo::Supervisor;

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{herd, require_root, run, tempdir, text};

/// Where host `i` keeps this build: `~/.cache/herd/herd-<build id>` under its home.
fn cached(hosts: &SshHosts, i: usize) -> PathBuf {
    let v = text(&run(herd().arg("--version")).stdout);
    let v = v.trim().strip_prefix("herd ").unwrap().to_owned();
    let id = herd_lab::hosts::build_id(&v);
    hosts.hosts[i].home.join(herd_lab::hosts::CACHE_DIR).join(format!("herd-{id}"))
}

/// This build on host `i`, where `herd lab hosts install` would put it (the hosts share
/// this machine's file system, so a copy does what install does over ssh, faster).
fn install(hosts: &SshHosts, i: usize) {
    let to = cached(hosts, i);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_herd"), &to).unwrap();
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// herd serve on port 8080 of host 0 (198.18.3.2), logging each request; its URL and log.
fn serve(hosts: &SshHosts, sup: &mut Supervisor) -> (String, PathBuf) {
    let log = hosts.serve_herd(sup, 8080, &[]);
    (format!("http://{}:8080/9x9", hosts.hosts[0].addr), log)
}

/// herd serve's own count of /9x9 requests (`/herd/stats`), asked from the client host.
fn served(hosts: &SshHosts) -> u64 {
    hosts.served(8080, "/9x9")
}

/// Processes running a program under one of the hosts' homes (their herd: helpers and
/// agents, which only this test starts there): PID and command line.
fn on_hosts(hosts: &SshHosts) -> Vec<(u32, Vec<String>)> {
    let homes: Vec<&Path> = hosts.hosts.iter().map(|h| h.home.as_path()).collect();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(exe) = std::fs::read_link(entry.path().join("exe")) else { continue };
        if homes.iter().any(|h| exe.starts_with(h)) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let words = cmdline
                .split(|&b| b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            found.push((pid, words));
        }
    }
    found
}

/// What the hosts' temporary directories hold (the helpers' run directories).
fn host_tmp(hosts: &SshHosts) -> Vec<PathBuf> {
    (0..hosts.hosts.len())
        .flat_map(|i| std::fs::read_dir(hosts.dir.join(format!("host{i}/tmp"))).unwrap())
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn two_agents_over_ssh_send_what_herd_serve_counts() {
    require_root();
    let dir = tempdir("cluster-ssh");
    let hosts = SshHosts::start("817", &dir, &[HostSetup::default(); 3]);
    install(&hosts, 1);
    install(&hosts, 2);
    let mut sup = Supervisor::new(None);
    let (url, log) = serve(&hosts, &mut sup);
    let (a, b) = (hosts.hosts[1].addr, hosts.hosts[2].addr);
    let json = dir.join("run.json");
    let out = hosts
        .herd()
        // Both spellings of a host: with ssh:// and a user, and bare.
        .args(["cluster", "run", "--ssh", &format!("ssh://root@{a},{b}"), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--", &url, "-n", "2000", "-c", "4", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{}", hosts.sshd_log(1));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["requests"]["completed"], 2000, "{v}");
    let agents = v["agents"].as_array().expect("per-agent figures");
    assert_eq!(agents.len(), 2, "{v}");
    for (i, agent) in agents.iter().enumerate() {
        assert_eq!(agent["index"], i);
        assert_eq!(agent["steps"][0]["requests"]["completed"], 1000, "agent {i}: {agent}");
    }
    // herd serve's own count, and by client address: one agent on each host.
    assert_eq!(served(&hosts), 2000);
    let mut by_addr: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::fs::read_to_string(&log).unwrap().lines().filter(|l| l.contains("/9x9")) {
        *by_addr.entry(line.split(' ').next().unwrap().to_owned()).or_default() += 1;
    }
    let want: BTreeMap<String, usize> = [(a.to_string(), 1000), (b.to_string(), 1000)].into();
    assert_eq!(by_addr, want);
    assert!(stderr.is_empty(), "every agent exited 0 after its result: {stderr}");
    // Each helper said bye: no agent, no helper, no run directory left on a host.
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());

    // --allow-target reaches each agent, which checks it against the URL: naming another
    // host, each refuses before it looks for the coordinator, which hears nothing. Their
    // last words come from their logs on their hosts, each named by its host.
    let out = hosts
        .herd()
        .args(["cluster", "run", "--ssh", &format!("{a},{b}"), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--allow-target", "198.18.3.99", "--arm-timeout", "1s"])
        .args(["--", &url, "-n", "10"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for (i, h) in [(0, a), (1, b)] {
        let said = format!("agent {i} on ssh://{h} said: ");
        let line = stderr.lines().find(|l| l.contains(&said)).unwrap_or_else(|| panic!("{stderr}"));
        assert!(line.contains("198.18.3.99"), "{line}");
    }
    assert_eq!(served(&hosts), 2000, "nothing sent");
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());

    // A host named twice runs two agents there, each under a helper of its own, both
    // through the one connection.
    let json = dir.join("twice.json");
    let out = hosts
        .herd()
        .args(["cluster", "run", "--ssh", &format!("{b},{b}"), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--", &url, "-n", "100", "-c", "2", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["agents"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(served(&hosts), 2100);
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());

    // A parent's own master, shared through HERD_SSH_CONTROL_DIR: herd's session and forward
    // to the host go through it (sshd accepts no new login), and it outlives the run.
    let masters = dir.join("masters");
    std::fs::create_dir_all(&masters).unwrap();
    std::fs::set_permissions(&masters, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut master = std::process::Command::new("ip")
        .args(["netns", "exec", &hosts.netns, "ssh", "-F"])
        .arg(&hosts.ssh_config)
        .args(["-N", "-T", "-o", "ControlMaster=yes", "-o"])
        .arg(format!("ControlPath={}/%C", masters.display()))
        .args(["--", &a.to_string()])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::fs::read_dir(&masters).unwrap().count() == 0 {
        assert!(t.elapsed() < Duration::from_secs(10), "the test's master did not start");
        assert!(master.try_wait().unwrap().is_none(), "the test's master ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let logins = || hosts.sshd_log(1).matches("Accepted publickey").count();
    let before = logins();
    let out = hosts
        .herd()
        .env("HERD_SSH_CONTROL_DIR", &masters)
        .args(["cluster", "run", "--ssh", &a.to_string(), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--", &url, "-n", "100"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(served(&hosts), 2200);
    assert_eq!(logins(), before, "a login of its own: {}", hosts.sshd_log(1));
    assert!(master.try_wait().unwrap().is_none(), "the parent's master ended with herd");
    assert_eq!(std::fs::read_dir(&masters).unwrap().count(), 1, "its socket is in place");
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());
    // SAFETY: kill has no memory preconditions; the PID is this test's own unreaped child.
    unsafe { libc::kill(master.id() as libc::pid_t, libc::SIGTERM) };
    master.wait().unwrap();
    sup.stop_all(Duration::from_secs(2));
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_or_killed_coordinator_leaves_no_agent_on_any_host() {
    require_root();
    let dir = tempdir("cluster-ssh-kill");
    let hosts = SshHosts::start("818", &dir, &[HostSetup::default(); 3]);
    install(&hosts, 1);
    install(&hosts, 2);
    let mut sup = Supervisor::new(None);
    let (url, _) = serve(&hosts, &mut sup);
    let (a, b) = (hosts.hosts[1].addr, hosts.hosts[2].addr);
    // A long run, under way: both agents run on their hosts and herd serve has been sent
    // requests. `ip netns exec` became herd itself: the child's PID is the coordinator's.
    let under_way = || {
        let child = hosts
            .herd()
            .args(["cluster", "run", "--ssh", &format!("{a},{b}"), "--ssh-config"])
            .arg(&hosts.ssh_config)
            .args(["--", &url, "-d", "30s", "--rate", "50", "-c", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        let sent = served(&hosts);
        loop {
            let on = on_hosts(&hosts);
            let agents = on.iter().filter(|(_, w)| w.get(1).is_some_and(|w| w == "agent"));
            if agents.count() == 2 && served(&hosts) > sent {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(20), "the run did not get under way");
            std::thread::sleep(Duration::from_millis(50));
        }
        let exe = std::fs::read_link(format!("/proc/{}/exe", child.id())).unwrap();
        assert_eq!(exe, Path::new(env!("CARGO_BIN_EXE_herd")));
        child
    };
    // SAFETY (both kills): kill has no memory preconditions; the PID is this test's own
    // unreaped child.
    let signal = |child: &std::process::Child, sig| unsafe {
        assert_eq!(libc::kill(child.id() as libc::pid_t, sig), 0);
    };

    // Ctrl-C: what the agents measured is merged and said, exit 130, and by then every
    // helper has said bye.
    let child = under_way();
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("(interrupted)"), "{stdout}");
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());

    // SIGKILL: its ssh sessions see their input close; each helper stops its agent, removes
    // its run directory and ends.
    let mut child = under_way();
    signal(&child, libc::SIGKILL);
    let killed = Instant::now();
    child.wait().unwrap();
    // What only the killed herd would have removed here: its ssh's private directory (in
    // /tmp, as the test's TMPDIR is too deep for a control socket's path).
    let private = format!("herd-ssh-{}-", child.id());
    for entry in std::fs::read_dir("/tmp").unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&private) {
            std::fs::remove_dir_all(entry.path()).unwrap();
        }
    }
    while !(on_hosts(&hosts).is_empty() && host_tmp(&hosts).is_empty()) {
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "left on the hosts: {:?} {:?}",
            on_hosts(&hosts),
            host_tmp(&hosts)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = served(&hosts);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(served(&hosts), before, "requests still coming");
    sup.stop_all(Duration::from_secs(2));
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_host_that_cannot_serve_fails_the_run_before_any_agent_starts() {
    require_root();
    let dir = tempdir("cluster-ssh-fail");
    let refused = HostSetup { key_refused: true, ..HostSetup::default() };
    let hosts =
        SshHosts::start("819", &dir, &[HostSetup::default(), refused, HostSetup::default()]);
    install(&hosts, 0);
    // Host 2 has another build of herd in its cache: a helper that says so in its hello.
    let other = cached(&hosts, 2);
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(
        &other,
        "#!/bin/sh\nread line\necho '{\"result\":\"ok\",\"kind\":\"hello\",\
         \"protocol\":\"herd.host.v1\",\"herd\":\"herd 0.0.0 (commit 000000000000)\",\
         \"hostname\":\"old\",\"cpus\":1,\"online\":\"0\",\"kernel\":\"6\",\
         \"accounting\":\"per-process\",\"pid\":1,\"run_dir\":\"/nonexistent\"}'\nread line\n",
    )
    .unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let [ok, no_key, old] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let cases = [
        (no_key, format!("ssh://{no_key}: key refused (")),
        (
            old,
            format!(
                "ssh://{old}: runs herd 0.0.0 (commit 000000000000), not this herd {}",
                text(&run(herd().arg("--version")).stdout).trim().strip_prefix("herd ").unwrap()
            ),
        ),
        (hosts.unserved, format!("ssh://{}: unreachable: ", hosts.unserved)),
    ];
    for (bad, says) in cases {
        // The good host first: its session opens, and still no agent starts on it.
        let t = Instant::now();
        let out = hosts
            .herd()
            .args(["cluster", "run", "--ssh", &format!("{ok},{bad}"), "--ssh-config"])
            .arg(&hosts.ssh_config)
            .args(["--", "http://198.18.3.2:8080/9x9", "-n", "10"])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {stderr}");
        assert!(stderr.contains(&says), "{bad}: {stderr:?} does not say {says:?}");
        assert!(t.elapsed() < Duration::from_secs(10), "{bad}: {:?}", t.elapsed());
        assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new(), "{bad}");
        assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new(), "{bad}");
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value of `--flag=VALUE` in a command line.
fn value_of<'a>(words: &'a [String], flag: &str) -> Option<&'a str> {
    words.iter().find_map(|w| w.strip_prefix(flag)?.strip_prefix('='))
}

#[test]
fn the_files_a_run_reads_are_copied_to_each_host_and_read_there() {
    require_root();
    let dir = tempdir("cluster-ssh-files");
    let hosts = SshHosts::start("822", &dir, &[HostSetup::default(); 3]);
    install(&hosts, 1);
    install(&hosts, 2);
    let mut sup = Supervisor::new(None);
    // The files sit here, named relative to the directory herd runs in: on a host that path
    // names nothing (an agent runs elsewhere), so an agent can only have read its copy.
    let here = dir.join("here");
    std::fs::create_dir_all(&here).unwrap();
    let ca = here.join("ca-822.pem");
    let tls = ["--tls-self-signed".into(), "--tls-write-ca".into(), ca.clone().into_os_string()];
    hosts.serve_herd(&mut sup, 8443, &tls);
    assert!(ca.is_file(), "herd serve wrote its CA before it listened");
    let body: Vec<u8> = (0..777u32).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(here.join("body-822.bin"), &body).unwrap();
    std::fs::write(here.join("urls-822.txt"), "3 /echo\n1 POST /echo\n").unwrap();
    let url = format!("https://{}:8443/echo", hosts.hosts[0].addr);
    let (a, b) = (hosts.hosts[1].addr, hosts.hosts[2].addr);
    let json = here.join("run.json");
    let child = hosts
        .herd()
        .current_dir(&here)
        .args(["cluster", "run", "--ssh", &format!("{a},{b}"), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--", &url, "--method", "POST", "--body-file", "body-822.bin"])
        .args(["--ca-file", "ca-822.pem", "--urls", "urls-822.txt"])
        .args(["-d", "2s", "--rate", "60", "-c", "2", "--json", "run.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While they run, each agent's command line names the copies in its own helper's run
    // directory, on its own host.
    let t = Instant::now();
    let agents = loop {
        let on = on_hosts(&hosts);
        let agents: Vec<Vec<String>> = on
            .into_iter()
            .map(|(_, w)| w)
            .filter(|w| w.get(1).is_some_and(|w| w == "agent"))
            .collect();
        if agents.len() == 2 {
            break agents;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "the agents did not start: {agents:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut tmp_dirs = Vec::new();
    for words in &agents {
        let [ca, body, urls] = [
            ("--ca-file", "files/ca-file/ca-822.pem"),
            ("--body-file", "files/body-file/body-822.bin"),
            ("--urls", "files/urls/urls-822.txt"),
        ]
        .map(|(flag, copy)| {
            let path = Path::new(value_of(words, flag).unwrap_or_else(|| panic!("{words:?}")));
            assert!(path.ends_with(copy), "{flag}: {words:?}");
            path.to_owned()
        });
        // All three in one run directory, in a host's own temporary directory.
        let run_dir = ca.ancestors().nth(3).unwrap();
        assert!(body.starts_with(run_dir) && urls.starts_with(run_dir), "{words:?}");
        tmp_dirs.push(run_dir.parent().unwrap().to_owned());
    }
    tmp_dirs.sort();
    let want: Vec<PathBuf> = [1, 2].map(|i| dir.join(format!("host{i}/tmp"))).into();
    assert_eq!(tmp_dirs, want);
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The copies were read: TLS verified with the CA's copy, and every request's body, the
    // copy's bytes, echoed back whole.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let completed = v["requests"]["completed"].as_u64().unwrap();
    assert!(completed >= 40, "{v}");
    assert_eq!(v["statuses"]["200"], completed, "{v}");
    assert_eq!(v["bytes"]["body"], completed * body.len() as u64, "{v}");
    assert_eq!(v["agents"].as_array().unwrap().len(), 2, "{v}");
    // The copies went with their run directories.
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());

    // --specweb DIR: the agents get the set's manifest (the one file the client reads), and
    // every file of the mix they ask for is the server's, of the manifest's length.
    let set = here.join("set-822");
    let out = run(herd().args(["serve", "--generate"]).arg(&set).args(["--specweb-dirs", "1"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    hosts.serve_herd(&mut sup, 8080, &["--root".into(), set.into_os_string()]);
    let out = hosts
        .herd()
        .current_dir(&here)
        .args(["cluster", "run", "--ssh", &format!("{a},{b}"), "--ssh-config"])
        .arg(&hosts.ssh_config)
        .args(["--", &format!("http://{}:8080/", hosts.hosts[0].addr), "--specweb", "set-822"])
        .args(["-n", "200", "-c", "2", "--json", "specweb.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = here.join("specweb.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["requests"]["completed"], 200, "{v}");
    assert_eq!(v["statuses"]["200"], 200, "{v}");
    assert_eq!(v["wrong_length"], 0, "{v}");
    assert_eq!(on_hosts(&hosts), Vec::<(u32, Vec<String>)>::new());
    assert_eq!(host_tmp(&hosts), Vec::<PathBuf>::new());
    sup.stop_all(Duration::from_secs(2));
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_cannot_reach_another_machine_is_refused_before_any_host_is() {
    // No host is reached (none answers at this address): each is refused first.
    let ssh = ["cluster", "run", "--ssh", "198.18.3.99", "--"];
    let out = run(herd().args(ssh).args(["http://127.0.0.1:9/", "--unix-socket", "/tmp/s.sock"]));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--unix-socket /tmp/s.sock: a Unix socket is this machine's"),
        "{stderr}"
    );
    let missing = tempdir("cluster-ssh-missing").join("ca.pem");
    let out = run(herd().args(ssh).arg("https://127.0.0.1:9/").arg("--ca-file").arg(&missing));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let says = format!("--ca-file: cannot read {}", missing.display());
    assert!(stderr.contains(&says), "{stderr}");
    let _ = std::fs::remove_dir_all(missing.parent().unwrap());
}

#[test]
fn ssh_flags_are_refused_where_they_mean_nothing() {
    let url = "http://127.0.0.1:9/";
    let out = run(herd().args(["cluster", "run", "--local", "1", "--ssh-config", "c", "--", url]));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--ssh-config is for the ssh of --ssh HOST"), "{stderr}");
    let out = run(herd().args(["cluster", "run", "--local", "1", "--ssh", "h", "--", url]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot be used with"), "{}", text(&out.stderr));
    // --allow-target stays refused for agents on this machine.
    let out =
        run(herd().args(["cluster", "run", "--local", "1", "--allow-target", "h", "--", url]));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--allow-target is for agents on"), "{}", text(&out.stderr));
}
