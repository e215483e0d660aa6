//! `herd host`, the helper the lab runs on each host over SSH, here as a local child with
//! piped stdin and stdout (what ssh gives it): a herd serve started, probed, loaded, accounted
//! for, its log read back and stopped through herd-host's `HostLink`. Then its safety: the
//! channel closing or a signal stops what it started and removes its run directory; what a
//! SIGKILLed helper leaves running, a second helper's `clean` stops; hostile lines get error
//! replies and it serves on.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the programs they check

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::time::{Duration, Instant};

use herd_host::protocol::{Hello, StartSpec};
use herd_host::{HostLink, LinkError, Probe, Readiness};

use crate::util::{free_port, herd, tempdir};

/// A `herd host` child whose run directory goes under `dir`, and the link to it.
fn helper(dir: &Path) -> (Child, HostLink<ChildStdin>) {
    helper_with(dir, &[])
}

/// [`helper`] with more arguments to `herd host`.
fn helper_with(dir: &Path, args: &[&str]) -> (Child, HostLink<ChildStdin>) {
    let mut child = spawn_helper(dir, args, &[]);
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    (child, HostLink::new("local-1", stdout, stdin, Duration::from_secs(20)))
}

/// `herd host ARGS` with its run directory under `dir`, `env` added, its three streams piped
/// (it writes one line to stderr, as it ends, which some tests read).
fn spawn_helper(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    herd()
        .arg("host")
        .args(args)
        .env("TMPDIR", dir)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// herd serve on a free loopback port, started by the helper as `serve`: its PID and port.
fn start_serve(link: &mut HostLink<ChildStdin>) -> (u32, u16) {
    let port = free_port();
    let argv = [env!("CARGO_BIN_EXE_herd"), "serve", "--listen", &format!("127.0.0.1:{port}")];
    let started = link
        .start(StartSpec {
            id: "serve".into(),
            argv: argv.iter().map(|a| a.to_string()).collect(),
            env: vec![],
            cwd: Some("/".into()),
            cpus: None,
            log: "serve.log".into(),
        })
        .unwrap();
    let probe = Probe::Tcp(format!("127.0.0.1:{port}"));
    let ready = link.ready("serve", probe, Duration::from_secs(10)).unwrap();
    assert!(matches!(ready, Readiness::Ready { .. }), "{ready:?}");
    (started.pid, port)
}

/// Whether process `pid` has ended: gone from /proc, or a zombie nobody reaped yet.
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        }
    }
}

/// Waits up to `limit` for `done`.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// The helper's exit code once it ended by itself, within 10 s.
fn exit_code(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(Instant::now() < deadline, "the helper did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run_dir(hello: &Hello) -> PathBuf {
    PathBuf::from(&hello.run_dir)
}

#[test]
fn a_server_started_probed_loaded_accounted_read_and_stopped() {
    let dir = tempdir("host-cycle");
    let (mut child, mut link) = helper(&dir);
    let hello = link.hello().unwrap();
    let version = herd().arg("--version").output().unwrap();
    assert_eq!(hello.herd, String::from_utf8(version.stdout).unwrap().trim());
    assert_eq!(hello.protocol, "herd.host.v1");
    assert!(hello.cpus >= 1 && !hello.hostname.is_empty() && !hello.kernel.is_empty());
    assert!(hello.online.starts_with('0'), "{hello:?}");
    assert!(run_dir(&hello).starts_with(&dir) && run_dir(&hello).is_dir(), "{hello:?}");

    let (pid, port) = start_serve(&mut link);
    let url = format!("http://127.0.0.1:{port}/");
    let run = herd().args(["run", "-n", "300", "-c", "2", &url]).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let (seconds, accounting) = link.cpu("serve").unwrap();
    assert!(seconds > 0.0, "{seconds} s ({accounting})");
    assert_eq!(accounting, hello.accounting);

    let log = link.read_file("serve.log", 1 << 20).unwrap();
    assert!(log.text.contains(&format!("listening on http://127.0.0.1:{port}")), "{log:?}");
    assert!(!log.truncated && log.size == log.text.len() as u64);
    let head = link.read_file("serve.log", 9).unwrap();
    assert_eq!((head.text.as_str(), head.truncated), ("listening", true));
    for outside in ["../x", "/etc/passwd"] {
        let err = link.read_file(outside, 10).unwrap_err();
        assert!(matches!(err, LinkError::Refused { .. }), "{err}");
        let text = err.to_string();
        assert!(text.starts_with("host local-1: read_file refused: "), "{text}");
        assert!(text.contains("only files inside the helper's run directory"), "{text}");
    }

    let stopped = link.stop("serve", Some(Duration::from_secs(5))).unwrap();
    assert_eq!((stopped.how.as_str(), stopped.code), ("exit status 0", Some(0)), "{stopped:?}");
    assert!(ended(pid), "herd serve (pid {pid}) still runs");
    let err = link.cpu("serve").unwrap_err().to_string();
    assert!(err.contains("no program started as \"serve\""), "{err}");

    // The host's disclosure: herd doctor --json, run by the helper there: its checks and the
    // machine's record, as the lab stores this machine's.
    let (text, _) = link.doctor().unwrap();
    let doctor: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doctor["format"], "herd.doctor.v1", "{text}");
    let checks = doctor["checks"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["what"] == "server CPU accounting"), "{text}");
    assert!(doctor["environment"]["kernel"].as_str().is_some_and(|k| !k.is_empty()), "{text}");

    // Stopped before the reply, so none now; and the run directory gone by the reply.
    assert_eq!(link.bye().unwrap(), 0);
    assert!(!run_dir(&hello).exists());
    assert_eq!(exit_code(&mut child), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where no cgroup is made (here: asked so), a program's CPU time is its process group's,
/// the shell's forked children included.
#[test]
fn cpu_time_is_read_per_process_where_no_cgroup_is_made() {
    let dir = tempdir("host-cpu");
    let mut child = spawn_helper(&dir, &[], &[("HERD_SERVER_CPU", "per-process")]);
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let mut link = HostLink::new("local-2", stdout, stdin, Duration::from_secs(20));
    assert_eq!(link.hello().unwrap().accounting, "per-process");
    // A counted busy loop in a child shell (work, not time: a busy machine only slows it).
    let script = "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 30' & wait";
    let started = link
        .start(StartSpec {
            id: "busy".into(),
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![],
            cwd: None,
            cpus: None,
            log: "busy.log".into(),
        })
        .unwrap();
    assert_eq!(started.accounting, "per-process");
    let busy = within(Duration::from_secs(20), || link_cpu(&mut link) > 0.05);
    assert!(busy, "{} s of CPU", link_cpu(&mut link));
    let stopped = link.stop("busy", None).unwrap();
    assert_eq!(stopped.signal, Some(libc::SIGTERM), "{stopped:?}");
    link.bye().unwrap();
    assert_eq!(exit_code(&mut child), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn link_cpu(link: &mut HostLink<ChildStdin>) -> f64 {
    link.cpu("busy").unwrap().0
}

/// A program that fails at once: `ready` says how it ended and what it printed.
#[test]
fn a_program_that_ends_before_it_is_ready_is_told_with_its_log() {
    let dir = tempdir("host-exits");
    let (mut child, mut link) = helper(&dir);
    let argv = ["sh", "-c", "echo no such config >&2; exit 3"];
    link.start(StartSpec {
        id: "bad".into(),
        argv: argv.iter().map(|a| a.to_string()).collect(),
        env: vec![],
        cwd: None,
        cpus: Some("0".into()),
        log: "bad.log".into(),
    })
    .unwrap();
    let probe = Probe::Tcp(format!("127.0.0.1:{}", free_port()));
    let ready = link.ready("bad", probe, Duration::from_secs(10)).unwrap();
    // A CPU this host does not have: refused before anything starts, naming the host.
    let err = link
        .start(StartSpec {
            id: "pinned".into(),
            argv: vec!["true".into()],
            env: vec![],
            cwd: None,
            cpus: Some("1000".into()),
            log: "pinned.log".into(),
        })
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("host local-1: start refused: start \"pinned\": CPU 1000"), "{err}");
    let Readiness::Exited { how, log_tail } = ready else { panic!("{ready:?}") };
    assert_eq!((how.as_str(), log_tail.as_str()), ("exit status 3", "no such config\n"));
    // bye with a program still running: replied once it is stopped.
    let started = link
        .start(StartSpec {
            id: "sleeper".into(),
            argv: vec!["sleep".into(), "30".into()],
            env: vec![],
            cwd: None,
            cpus: None,
            log: "sleeper.log".into(),
        })
        .unwrap();
    assert_eq!(link.bye().unwrap(), 1, "the sleeper, not the program that had ended");
    assert!(ended(started.pid), "the sleeper (pid {}) survived bye", started.pid);
    assert_eq!(exit_code(&mut child), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The channel closes (herd killed, the link dropped): the helper stops herd serve, removes
/// its run directory and ends.
#[test]
fn a_closed_channel_stops_everything_and_removes_the_run_dir() {
    let dir = tempdir("host-eof");
    let (mut child, mut link) = helper(&dir);
    let hello = link.hello().unwrap();
    let (pid, _) = start_serve(&mut link);
    assert!(!ended(pid));
    drop(link); // closes the helper's stdin
    assert_eq!(exit_code(&mut child), Some(0));
    assert!(within(Duration::from_secs(3), || ended(pid)), "herd serve (pid {pid}) survived");
    assert!(!run_dir(&hello).exists(), "{} is left", hello.run_dir);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("its channel closed: stopped 1 program(s)"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// SIGTERM, SIGHUP and SIGINT: the same, and exit 130.
#[test]
fn a_signal_stops_everything_and_removes_the_run_dir() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let dir = tempdir("host-signal");
        let (mut child, mut link) = helper(&dir);
        let hello = link.hello().unwrap();
        let (pid, _) = start_serve(&mut link);
        // SAFETY: kill has no memory preconditions; the PID is this test's own unreaped child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        assert_eq!(exit_code(&mut child), Some(130), "signal {signal}");
        assert!(within(Duration::from_secs(3), || ended(pid)), "signal {signal}: {pid} survived");
        assert!(!run_dir(&hello).exists(), "signal {signal}: {} is left", hello.run_dir);
        drop(link);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A helper killed with SIGKILL can stop nothing: its server runs on and its run directory
/// stays. A second helper's `clean` stops exactly that server and removes the directory.
#[test]
fn what_a_killed_helper_left_a_second_helpers_clean_stops() {
    let dir = tempdir("host-kill");
    let (mut first, mut link) = helper(&dir);
    let hello = link.hello().unwrap();
    let (pid, port) = start_serve(&mut link);
    // From the kill on, herd serve's cgroup has a dead maker: another test's sweep (`herd
    // lab clean`, a resume) would stop the server before the second helper's clean.
    let sweep = crate::util::clean_lock();
    first.kill().unwrap();
    first.wait().unwrap();
    drop(link);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!ended(pid), "nothing should have stopped herd serve yet");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    assert!(run_dir(&hello).is_dir());

    let (mut second, mut link) = helper(&dir);
    let own = run_dir(&link.hello().unwrap());
    let cleaned = link.clean().unwrap();
    drop(sweep);
    assert_eq!(cleaned.stopped, vec![format!("{pid} serve")], "{cleaned:?}");
    assert_eq!(cleaned.dirs, vec![hello.run_dir.clone()], "{cleaned:?}");
    assert!(cleaned.errors.is_empty() && cleaned.in_use.is_empty(), "{cleaned:?}");
    if hello.accounting.starts_with("cgroup") {
        // The killed helper's cgroup for herd serve, removed with it.
        assert_eq!(cleaned.cgroups.len(), 1, "{cleaned:?}");
        assert!(!Path::new(&cleaned.cgroups[0]).exists(), "{cleaned:?}");
    }
    assert!(within(Duration::from_secs(3), || ended(pid)), "herd serve (pid {pid}) survived");
    assert!(!run_dir(&hello).exists() && own.is_dir());
    // Nothing left to clean, and the second helper's own directory is never touched.
    let again = link.clean().unwrap();
    assert!(again.stopped.is_empty() && again.dirs.is_empty(), "{again:?}");
    link.bye().unwrap();
    assert_eq!(exit_code(&mut second), Some(0));
    assert!(!own.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Hostile lines, straight onto the helper's stdin: each gets an error reply, nothing but
/// replies comes out, and the helper serves on.
#[test]
fn hostile_lines_get_error_replies_and_the_helper_serves_on() {
    let dir = tempdir("host-hostile");
    let mut child = spawn_helper(&dir, &[], &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let overlong = vec![b'x'; 2 << 20];
    let lines: Vec<&[u8]> = vec![
        b"GET / HTTP/1.1",
        b"{\"kind\":\"hello\"",
        b"\xc3\x28\xff",
        &overlong,
        b"{\"kind\":\"shell\",\"cmd\":\"rm -rf /\"}",
        b"{\"kind\":\"start\",\"id\":\"x\",\"argv\":[],\"log\":\"x\"}",
        b"{\"kind\":\"ready\",\"id\":\"x\",\"probe\":{\"tcp\":\"nowhere\"},\"timeout_ms\":1}",
        b"{\"kind\":\"read_file\",\"path\":\"/proc/self/environ\",\"max_bytes\":99}",
        b"[]",
    ];
    for line in &lines {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        let v: serde_json::Value = serde_json::from_str(&reply).unwrap_or_else(|e| {
            panic!(
                "{reply:?} after {:?}: {e}",
                String::from_utf8_lossy(&line[..line.len().min(40)])
            )
        });
        assert_eq!(v["result"], "error", "{reply}");
        assert!(!v["message"].as_str().unwrap().is_empty(), "{reply}");
    }
    stdin.write_all(b"{\"kind\":\"hello\"}\n").unwrap();
    let mut reply = String::new();
    stdout.read_line(&mut reply).unwrap();
    let v: serde_json::Value = serde_json::from_str(&reply).unwrap();
    assert_eq!((v["result"].as_str(), v["kind"].as_str()), (Some("ok"), Some("hello")), "{reply}");
    let run_dir = PathBuf::from(v["run_dir"].as_str().unwrap());
    drop(stdin);
    assert_eq!(exit_code(&mut child), Some(0));
    assert!(!run_dir.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Silence ends a helper with an idle time as a closed channel does (a link lost without a
/// close: a host's network down), its server stopped and its run directory removed; and a
/// keeper's pings hold another one up past that time, until its bye.
#[test]
fn silence_ends_a_helper_and_pings_keep_one() {
    let dir = tempdir("host-idle");
    let (mut child, mut link) = helper_with(&dir, &["--idle-timeout", "1s"]);
    let hello = link.hello().unwrap();
    let (pid, _) = start_serve(&mut link);
    // Held open, silent: no request for the idle time, and the helper ends by itself.
    assert_eq!(exit_code(&mut child), Some(0));
    assert!(ended(pid), "herd serve (pid {pid}) still runs after the helper's idle time");
    assert!(!run_dir(&hello).exists(), "run directory left");
    drop(link);

    let (mut child, mut link) = helper_with(&dir, &["--idle-timeout", "1s"]);
    link.hello().unwrap();
    let (pid, _) = start_serve(&mut link);
    let keeper = herd_host::Keeper::start(link, Duration::from_millis(200));
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!ended(pid), "the kept helper stopped its server");
    let hello = keeper.with(|l| l.hello()).unwrap();
    assert!(keeper.failure().is_none());
    assert_eq!(keeper.into_link().bye().unwrap(), 1);
    assert!(ended(pid) && !run_dir(&hello).exists());
    assert_eq!(exit_code(&mut child), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `write_file` puts a server's files in the run directory: a file of three parts arrives
/// whole, its directories made and its mode set; nothing outside the run directory can be
/// written, by `..`, an absolute path, the helper's own files, or a link placed there.
#[test]
fn files_are_written_inside_the_run_dir_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempdir("host-write");
    let (mut child, mut link) = helper(&dir);
    let hello = link.hello().unwrap();
    let root = run_dir(&hello);
    let bytes: Vec<u8> = (0..1_200_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(link.write_file("www/sizes/big.bin", &bytes, 0o640).unwrap(), 1_200_000);
    let written = root.join("www/sizes/big.bin");
    assert!(std::fs::read(&written).unwrap() == bytes, "the parts arrive whole, in order");
    assert_eq!(std::fs::metadata(&written).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(link.write_file("empty.conf", b"", 0o644).unwrap(), 0);
    // Written again: replaced, not appended.
    assert_eq!(link.write_file("www/sizes/big.bin", b"x", 0o644).unwrap(), 1);

    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("away")).unwrap();
    std::os::unix::fs::symlink(outside.join("f"), root.join("away-file")).unwrap();
    for (path, why) in [
        ("../escape", "without `..`"),
        ("/etc/herd-escape", "without `..`"),
        ("owner", "the helper's own files"),
        ("away/f", "leads out of the run directory"),
        ("away-file", "write_file \"away-file\": "),
    ] {
        let err = link.write_file(path, b"no", 0o644).unwrap_err().to_string();
        assert!(err.contains(why), "{path}: {err}");
    }
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none(), "nothing written outside");
    assert_eq!(link.bye().unwrap(), 0);
    assert_eq!(exit_code(&mut child), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}
