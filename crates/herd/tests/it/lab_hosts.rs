//! `herd lab hosts check` and `install` against real OpenSSH: sshd in namespace hosts of
//! herd's own (`util::ssh_hosts`, root: CI runs as root), herd in another, nothing aimed
//! anywhere but those 198.18.3.0/24 addresses; and herd-lab's transport itself, whose
//! session and command to one host share one SSH connection. `herd lab run` on hosts is
//! lab_on_hosts.rs's.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::path::Path;
use std::time::{Duration, Instant};

use herd_lab::hosts::session::{HostSession, Liveness};
use herd_lab::hosts::ssh::Ssh;

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{herd, namespaces_of, require_root, run, tempdir, text};

/// herd's build id, as the hosts' caches name it (`herd --version`: `herd 0.1.0 (commit X)`).
fn build_id() -> String {
    let v = text(&run(herd().arg("--version")).stdout);
    let v = v.trim().strip_prefix("herd ").unwrap().to_owned();
    match v.split_once(" (commit ") {
        Some((ver, c)) => format!("{ver}-{}", c.trim_end_matches(')')),
        None => v,
    }
}

/// The line of `out` for `role` (`server:`, `client 1:`).
fn line<'a>(out: &'a str, role: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{role}:")))
        .unwrap_or_else(|| panic!("no {role} line in:\n{out}"))
}

#[test]
fn check_install_check_two_hosts() {
    require_root();
    let dir = tempdir("lab-hosts");
    let hosts = SshHosts::start("810", &dir, &[HostSetup::default(), HostSetup::default()]);
    let (s, c) = (hosts.hosts[0].addr, hosts.hosts[1].addr);
    let file =
        hosts.experiment(&format!("server = \"ssh://{s}\"\nclients = [\"ssh://root@{c}\"]\n"));
    let started = Instant::now();
    let out = hosts.herd().args(["lab", "hosts", "check"]).arg(&file).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "nothing installed yet: {stdout}{stderr}\n{}",
        hosts.sshd_log(0)
    );
    let file_s = file.display().to_string();
    for (role, url) in [("server", format!("ssh://{s}")), ("client 1", format!("ssh://root@{c}"))] {
        let l = line(&stdout, role);
        assert!(l.contains(&format!("{url}: reachable, Linux ")), "{l}");
        assert!(l.contains(" CPUs; herd: none: `herd lab hosts install "), "{l}");
        assert!(l.ends_with(&format!("{file_s}`")), "{l}");
    }
    assert!(stderr.contains("2 of 2 hosts not ready"), "{stderr}");
    // herd serve, the file's server, is this very build there: missing as well.
    assert!(stdout.contains("server herd: missing: this herd build is not at "), "{stdout}");
    let checked = started.elapsed();

    let out = hosts.herd().args(["lab", "hosts", "install"]).arg(&file).output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let id = build_id();
    for role in ["server", "client 1"] {
        assert!(
            line(&stdout, role)
                .contains(&format!("installed ~/.cache/herd/herd-{id}, and it runs")),
            "{stdout}"
        );
    }
    // Each host's own cache, and only the binary in it: this very herd, executable.
    let exe = std::fs::read(env!("CARGO_BIN_EXE_herd")).unwrap();
    for h in &hosts.hosts {
        let cache = h.home.join(".cache/herd");
        let names: Vec<String> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, [format!("herd-{id}")]);
        assert!(std::fs::read(cache.join(&names[0])).unwrap() == exe, "the copy is herd, whole");
    }

    let out = hosts.herd().args(["lab", "hosts", "check"]).arg(&file).output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    // The helper answered there too, and said the machine (from `herd doctor --json`).
    for role in ["server", "client 1"] {
        let l = line(&stdout, role);
        assert!(l.contains("herd: same build; helper: CPUs 0"), "{l}");
        assert!(l.contains(", server CPU from "), "{l}");
        assert!(l.contains(" GiB"), "the memory in GiB: {l}");
    }
    let home = hosts.hosts[0].home.display().to_string();
    assert!(stdout.contains(&format!("server herd: herd {home}/.cache/herd/herd-{id}")));
    // The installed herd runs there as the host's helper, over an ssh session: its hello
    // says this very build (the seam the lab's runner on hosts will use).
    let version = text(&run(herd().arg("--version")).stdout).trim().to_owned();
    let url: herd_lab::hosts::HostUrl = format!("ssh://{c}").parse().unwrap();
    let config = hosts.ssh_config.clone();
    let hello = herd_topo::net::netns::within(&hosts.netns, move || {
        let ssh = herd_lab::hosts::ssh::Ssh::new(
            Some(&config),
            Duration::from_secs(5),
            &std::env::temp_dir(),
        )
        .unwrap();
        let v = version.strip_prefix("herd ").unwrap();
        let argv = herd_lab::hosts::remote_herd(v, &["host"]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut session = ssh.spawn_session(&url, &argv).unwrap();
        let (input, output) =
            (session.process.take_stdin().unwrap(), session.process.take_stdout().unwrap());
        let mut link =
            herd_host::HostLink::new(url.to_string(), output, input, Duration::from_secs(10));
        let hello = link.hello().unwrap();
        link.bye().unwrap();
        assert!(session.process.wait(Duration::from_secs(10)).unwrap().unwrap().success());
        (hello, version)
    })
    .unwrap();
    assert_eq!(hello.0.herd, hello.1);
    assert_eq!(hello.0.protocol, herd_host::PROTOCOL);
    // Installing again copies nothing.
    let out = hosts.herd().args(["lab", "hosts", "install"]).arg(&file).output().unwrap();
    assert!(out.status.success());
    assert!(
        line(&text(&out.stdout), "server").contains("same build there already"),
        "{}",
        text(&out.stdout)
    );
    assert!(checked < Duration::from_secs(10), "a check of two hosts took {checked:?}");

    let (tag, pids) = (hosts.tag().to_owned(), hosts.sshd_pids());
    drop(hosts);
    assert!(
        !namespaces_of(std::process::id()).iter().any(|n| n.starts_with(&tag)),
        "namespaces left"
    );
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "sshd {pid} left running");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_failure_names_its_host() {
    require_root();
    let dir = tempdir("lab-hosts-fail");
    let refused = HostSetup { key_refused: true, ..HostSetup::default() };
    let wrong_key = HostSetup { wrong_known_key: true, ..HostSetup::default() };
    let hosts = SshHosts::start("811", &dir, &[HostSetup::default(), refused, wrong_key]);
    let [ok, no_key, changed] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let (unserved, absent) = (hosts.unserved, "198.18.3.99");
    let file = hosts.experiment(&format!(
        "server = \"ssh://{ok}\"\nclients = [\"ssh://{no_key}\", \"ssh://{changed}\", \
         \"ssh://{unserved}\", \"ssh://{absent}\"]\n"
    ));
    let started = Instant::now();
    let out = hosts
        .herd()
        .args(["lab", "hosts", "check", "--connect-timeout", "1s"])
        .arg(&file)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    // The one good host is reachable, and not ready only for want of herd.
    assert!(line(&stdout, "server").contains(&format!("ssh://{ok}: reachable")), "{stdout}");
    assert!(line(&stdout, "server").contains("herd: none"), "{stdout}");
    let l = line(&stdout, "client 1");
    assert!(
        l.contains(&format!("ssh://{no_key}: key refused ("))
            && l.contains("Permission denied (publickey)"),
        "{l}\n{}",
        hosts.sshd_log(1)
    );
    let l = line(&stdout, "client 2");
    assert!(
        l.contains(&format!("ssh://{changed}: host key verification failed"))
            && l.contains("CHANGED"),
        "{l}"
    );
    let l = line(&stdout, "client 3");
    assert!(
        l.contains(&format!("ssh://{unserved}: unreachable: ")) && l.contains("Connection refused"),
        "{l}"
    );
    let l = line(&stdout, "client 4");
    assert!(l.contains(&format!("ssh://{absent}: unreachable: ")), "{l}");
    assert!(stderr.contains("5 of 5 hosts not ready"), "{stderr}");
    // All at once, each within its connect timeout (1 s), with room for a busy machine.
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hosts_commands_need_a_hosts_section_and_say_bad_ones_at_their_line() {
    let dir = tempdir("lab-hosts-cli");
    let file = dir.join("plain.toml");
    let base =
        "name = \"plain\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"9x9\"]\nload = [\"a\"]\n\
                [loads.a]\nrequests = 10\nconcurrency = 1\n";
    std::fs::write(&file, base).unwrap();
    let out = run(herd().args(["lab", "hosts", "check"]).arg(&file));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("has no [hosts]: docs/hosts.md"), "{}", text(&out.stderr));
    std::fs::write(&file, format!("{base}[hosts]\nserver = \"ssh://h:99999\"\n")).unwrap();
    let out = run(herd().args(["lab", "hosts", "install"]).arg(&file));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("line 10: [hosts] server: `ssh://h:99999`: port 99999 is out of range"),
        "{stderr}"
    );
    for bad in ["500ms", "1500ms"] {
        let out = run(herd().args(["lab", "hosts", "check", "--connect-timeout", bad]).arg(&file));
        assert_eq!(out.status.code(), Some(2), "bad usage");
        assert!(text(&out.stderr).contains("counts whole seconds"), "{}", text(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hosts_sessions_share_one_connection_and_go_with_it() {
    use herd_lab::hosts::ssh::Ssh;
    use herd_lab::hosts::HostUrl;
    use std::io::{BufRead as _, Write as _};
    require_root();
    let dir = tempdir("lab-hosts-mux");
    let hosts = SshHosts::start("812", &dir, &[HostSetup::default()]);
    let url: HostUrl = format!("ssh://{}", hosts.hosts[0].addr).parse().unwrap();
    let config = hosts.ssh_config.clone();
    let control = herd_topo::net::netns::within(&hosts.netns, move || {
        let ssh = Ssh::new(Some(&config), Duration::from_secs(5), &std::env::temp_dir()).unwrap();
        // The session first: it is the master, and the command after it rides on it.
        let mut session = ssh.spawn_session(&url, &["sed", "-u", "s/^/host: /"]).unwrap();
        let mut input = session.process.take_stdin().unwrap();
        let mut output = std::io::BufReader::new(session.process.take_stdout().unwrap());
        writeln!(input, "hello").unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert_eq!(line, "host: hello\n");
        let out = ssh.run(&url, &["echo", "two words"], None, Duration::from_secs(10)).unwrap();
        assert_eq!((out.code, out.stdout.as_str()), (0, "two words\n"));
        // Closing its input ends the session, and the master with it.
        drop(input);
        assert!(session.process.wait(Duration::from_secs(10)).unwrap().unwrap().success());
        use std::os::unix::fs::FileTypeExt as _;
        let sockets: Vec<_> = std::fs::read_dir(ssh.control_dir())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_socket())
            .collect();
        assert!(sockets.is_empty(), "no control socket outlives its master: {sockets:?}");
        drop(session);
        let left: Vec<_> = std::fs::read_dir(ssh.control_dir()).unwrap().collect();
        assert!(left.is_empty(), "nothing of the session's is left: {left:?}");
        ssh.control_dir().to_path_buf()
    })
    .unwrap();
    assert!(!control.exists(), "the private directory goes with the transport");
    let log = hosts.sshd_log(0);
    // One for the fixture's readiness probe (no SSH), one SSH login for both sessions.
    assert_eq!(log.matches("Accepted publickey").count(), 1, "{log}");
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// herd installed on the fixture's host 0, its helper started over ssh with `live`, and
/// herd serve started by the helper on `port` and ready: the session, the server's PID and
/// the helper's run directory.
fn serving_host(
    hosts: &SshHosts,
    port: u16,
    live: Liveness,
) -> (HostSession, u32, std::path::PathBuf) {
    let addr = hosts.hosts[0].addr;
    let file = hosts.experiment(&format!("server = \"ssh://{addr}\"\n"));
    let out = hosts.herd().args(["lab", "hosts", "install"]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let remote_herd = hosts.hosts[0].home.join(format!(".cache/herd/herd-{}", build_id()));
    let version = text(&run(herd().arg("--version")).stdout).trim().to_owned();
    let url: herd_lab::hosts::HostUrl = format!("ssh://{addr}").parse().unwrap();
    let config = hosts.ssh_config.clone();
    let listen = format!("{addr}:{port}");
    let session = herd_topo::net::netns::within(&hosts.netns, move || {
        let ssh = Ssh::new(Some(&config), Duration::from_secs(5), &std::env::temp_dir()).unwrap();
        let v = version.strip_prefix("herd ").unwrap();
        HostSession::open_with(&ssh, &url, v, live).unwrap()
    })
    .unwrap();
    let started = session
        .with(|l| {
            l.start(herd_host::StartSpec {
                id: "server".into(),
                argv: vec![
                    remote_herd.display().to_string(),
                    "serve".into(),
                    "--listen".into(),
                    listen.clone(),
                ],
                env: vec![],
                cwd: Some("/".into()),
                cpus: None,
                log: "server.log".into(),
            })
        })
        .unwrap();
    let probe = herd_host::Probe::Tcp(listen);
    let ready = session.with(|l| l.ready("server", probe, Duration::from_secs(10)));
    assert!(matches!(ready, Ok(herd_host::Readiness::Ready { .. })), "{ready:?}");
    let run_dir = std::path::PathBuf::from(&session.hello.run_dir);
    assert!(Path::new(&format!("/proc/{}", started.pid)).exists(), "the server runs");
    // In the host's own temporary directory (its sshd sets TMPDIR), as on a machine of its own.
    assert!(run_dir.is_dir() && run_dir.starts_with(hosts.dir.join("host0/tmp")), "{run_dir:?}");
    (session, started.pid, run_dir)
}

/// Whether process `pid` has ended: gone from /proc, or a zombie nobody reaped yet.
fn ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_or(true, |s| s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
}

/// Waits up to 15 s until the server has ended and the run directory is gone; says which not.
fn assert_cleaned(server: u32, run_dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while (!ended(server) || run_dir.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ended(server), "herd serve {server} still runs on the host");
    assert!(!run_dir.exists(), "the helper's run directory {} is left", run_dir.display());
}

/// herd killed mid-run: its ssh to the host dies with it (SIGKILL here, as a crash or
/// `kill -9` would end it), the host's sshd closes the channel, and the helper there stops
/// the server it had started and removes its run directory: nothing herd started is left
/// on the host.
#[test]
fn a_killed_ssh_leaves_nothing_running_on_the_host() {
    require_root();
    let dir = tempdir("lab-hosts-kill");
    let hosts = SshHosts::start("814", &dir, &[HostSetup::default()]);
    let (session, server, run_dir) = serving_host(&hosts, 18_412, Liveness::LAB);
    let ssh = session.ssh_pid();
    // The session is leaked, as a crashed herd would leave it: only its ssh ends.
    std::mem::forget(session);
    // SAFETY: kill has no memory preconditions; `ssh` is the ssh this test started.
    assert_eq!(unsafe { libc::kill(ssh as i32, libc::SIGKILL) }, 0);
    assert_cleaned(server, &run_dir);
    let mut status = 0;
    // SAFETY: waitpid on this process's own child, with a valid pointer: it reaps the ssh.
    unsafe { libc::waitpid(ssh as i32, &mut status, 0) };
    drop(hosts);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A host's network gone mid-run, without a word (no FIN, no RST: its links set down): sshd
/// there notices nothing for hours, but the helper, kept alive by herd's pings until then,
/// hears silence and ends within its idle time, stopping the server it started and removing
/// its run directory; herd's side finds the link lost when a ping goes unanswered.
#[test]
fn a_host_cut_off_stops_what_its_helper_started() {
    require_root();
    let dir = tempdir("lab-hosts-cut");
    let hosts = SshHosts::start("815", &dir, &[HostSetup::default()]);
    let live = Liveness {
        idle: Duration::from_secs(2),
        ping_every: Duration::from_millis(300),
        limit: Duration::from_secs(3),
    };
    let (session, server, run_dir) = serving_host(&hosts, 18_413, live);
    // Kept alive past its idle time while the link holds.
    std::thread::sleep(Duration::from_secs(3));
    assert!(!ended(server), "the kept helper stopped its server");
    assert_eq!(session.lost(), None);
    hosts.cut_off(0);
    assert_cleaned(server, &run_dir);
    let deadline = Instant::now() + Duration::from_secs(10);
    while session.lost().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let addr = hosts.hosts[0].addr.to_string();
    assert!(session.lost().is_some_and(|f| f.contains(&addr)), "{:?}", session.lost());
    drop(session); // stops the local ssh by PID
    drop(hosts);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A helper killed on its host (SIGKILL: nothing can stop what it started) leaves its server
/// running there; `herd lab clean --hosts FILE` has each host's helper stop exactly that
/// program and remove the dead helper's run directory, and says so per host.
#[test]
fn clean_hosts_stops_what_a_killed_helper_left() {
    require_root();
    let dir = tempdir("lab-hosts-clean");
    let hosts = SshHosts::start("816", &dir, &[HostSetup::default()]);
    let (session, server, run_dir) = serving_host(&hosts, 18_416, Liveness::LAB);
    // From the kill on, the server's cgroup has a dead maker, and any other test's sweep
    // (`herd lab clean`, a resume) would stop the orphan first: held until this clean.
    let sweep = crate::util::clean_lock();
    // SAFETY: kill has no memory preconditions; the helper is this test's, on its host.
    assert_eq!(unsafe { libc::kill(session.hello.pid as i32, libc::SIGKILL) }, 0);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!ended(server), "the orphan runs on");
    drop(session);

    let addr = hosts.hosts[0].addr;
    let file = hosts.experiment(&format!("server = \"ssh://{addr}\"\n"));
    let out = hosts.herd().args(["lab", "clean", "--hosts"]).arg(&file).output().unwrap();
    drop(sweep);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let l = line(&stdout, "server");
    assert!(l.contains(&format!("stopped 1 program(s) ({server} server)")), "{l}");
    assert!(l.contains("removed 1 run directory"), "{l}");
    assert!(ended(server), "the orphan still runs");
    assert!(!run_dir.exists(), "{} left", run_dir.display());
    drop(hosts);
    std::fs::remove_dir_all(&dir).unwrap();
}
