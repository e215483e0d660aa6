//! The NBENCH client end to end: a private smbd this test starts on 127.0.0.1 (its own
//! directory, config and free port; nothing in /etc/samba or /var/log/samba), the real
//! `smbtorture … bench.nbench` with 2 clients for 3 s run from `NbenchJob::argv` in its own
//! process group, its output read by `smbtorture::parse`; then smbd stopped by its PID and
//! every process of it checked gone.
//!
//! Needs Debian's `samba` (smbd), `samba-testsuite` (smbtorture) and `dbench`
//! (/usr/share/dbench/client.txt); a missing one fails the test with the package to install,
//! never skips it. smbd runs as root here (tests run as root, in CI too), serving the share
//! as `nobody`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // the test starts smbd and smbtorture itself

use std::fs::File;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_lab::client::smbtorture::{self, NbenchExit, NbenchJob, DBENCH_CLIENT_TXT};

const SMBD: &str = "/usr/sbin/smbd";
const SMBTORTURE: &str = "/usr/bin/smbtorture";

fn require(path: &str, package: &str) -> PathBuf {
    let p = PathBuf::from(path);
    assert!(p.exists(), "{path} is missing: apt-get install {package}");
    p
}

/// A private smbd: its directory, the child (the daemon's parent process, `-F`), and its
/// config path, which every one of its processes carries on its command line.
struct Smbd {
    dir: PathBuf,
    conf: PathBuf,
    child: Option<Child>,
    addr: SocketAddr,
}

impl Smbd {
    /// Starts smbd with netbench.md's config on 127.0.0.1:`port` and waits until it accepts
    /// connections.
    fn start(port: u16) -> Smbd {
        let dir = std::env::temp_dir().join(format!("herd-lab-nbench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["private", "lock", "state", "cache", "pid", "ncalrpc", "log", "share"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("share"), std::fs::Permissions::from_mode(0o1777))
            .unwrap();
        let conf = dir.join("smb.conf");
        std::fs::write(&conf, config(&dir, port)).unwrap();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        // A process group of its own: smbd signals its whole group when it stops, and
        // with `--no-process-group` that would be this test's group (the test got the
        // SIGTERM meant for smbd before this was added).
        let child = Command::new(require(SMBD, "samba"))
            .process_group(0)
            .args(["-F", "--no-process-group", "-l"])
            .arg(dir.join("log"))
            .arg("-s")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(File::create(dir.join("smbd.out")).unwrap())
            .stderr(File::create(dir.join("smbd.err")).unwrap())
            .spawn()
            .unwrap();
        let mut smbd = Smbd { dir, conf, child: Some(child), addr };
        smbd.wait_ready();
        smbd
    }

    fn wait_ready(&mut self) {
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("smbd exited with {status} before it listened: {}", self.logs());
            }
            assert!(
                Instant::now() < until,
                "smbd not ready on {} in 15 s: {}",
                self.addr,
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn logs(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        format!("stderr: {:?}; log: {:?}", read("smbd.err"), read("log/log.smbd"))
    }

    /// SIGTERM to the PID in smbd's pid file (checked to be the process this test started),
    /// then waits until no process with this instance's config is left.
    fn stop(mut self) {
        let child = self.child.take().unwrap();
        let pid_file = self.dir.join("pid/smbd.pid");
        let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        assert_eq!(pid, child.id(), "{} names another process", pid_file.display());
        let before = processes_with(&self.conf);
        assert!(before.contains(&pid), "smbd {pid} is not among {before:?}");
        stop_by_pid(child, libc::SIGTERM, Duration::from_secs(15));
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            let left = processes_with(&self.conf);
            if left.is_empty() {
                break;
            }
            assert!(Instant::now() < until, "smbd processes left 15 s after SIGTERM: {left:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!pid_file.exists(), "smbd left its pid file");
        assert!(
            !self.dir.join("pid/samba-dcerpcd.pid").exists(),
            "samba-dcerpcd started despite `rpc start on demand helpers = no`"
        );
    }
}

impl Drop for Smbd {
    /// After a failed assertion: stop whatever of this instance is left, by PID.
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            stop_by_pid(child, libc::SIGKILL, Duration::from_secs(5));
        }
        for pid in processes_with(&self.conf) {
            // SAFETY: kill(2) with a PID read from /proc just now, whose command line names
            // this test's config.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sends `signal` to `child` by its PID and reaps it, waiting at most `wait` before SIGKILL.
fn stop_by_pid(mut child: Child, signal: libc::c_int, wait: Duration) {
    // SAFETY: kill(2) on the PID of a child this process started and has not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    let until = Instant::now() + wait;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The PIDs whose command line contains `marker` (this smbd's config path).
fn processes_with(marker: &Path) -> Vec<u32> {
    herd_testutil::procs::naming(marker.as_os_str())
}

/// netbench.md §3's config on loopback, plus `inherit permissions = yes`: without it every
/// NBENCH client fails at load-file line 3 with NT_STATUS_ACCESS_DENIED (see
/// tests/data/clients/README.md, smbtorture-access-denied).
fn config(dir: &Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "[global]
   server role = standalone server
   workgroup = HERD
   netbios name = HERDNBENCH
   interfaces = 127.0.0.1
   bind interfaces only = yes
   smb ports = {port}
   disable netbios = yes
   private dir = {d}/private
   lock directory = {d}/lock
   state directory = {d}/state
   cache directory = {d}/cache
   pid directory = {d}/pid
   ncalrpc dir = {d}/ncalrpc
   binddns dir = {d}/private
   usershare path =
   log file = {d}/log/log.%m
   passdb backend = tdbsam:{d}/private/passdb.tdb
   map to guest = Bad User
   guest account = nobody
   load printers = no
   printing = bsd
   printcap name = /dev/null
   disable spoolss = yes
   server min protocol = NT1
   server signing = disabled
   smb encrypt = off
   kernel oplocks = no
   rpc start on demand helpers = no
[bench]
   path = {d}/share
   read only = no
   guest ok = yes
   guest only = yes
   force user = nobody
   inherit permissions = yes
"
    )
}

/// Runs `argv` in a process group of its own, stdout and stderr to files in `dir`; after
/// `timeout`, kills the whole group (smbtorture's clients outlive a signal to the parent
/// alone). Returns stdout, stderr and how it ended.
fn run_group(
    argv: &[std::ffi::OsString],
    dir: &Path,
    timeout: Duration,
) -> (String, String, NbenchExit) {
    let (out, err) = (dir.join("smbtorture.out"), dir.join("smbtorture.err"));
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let exit = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break NbenchExit::from(status);
        }
        if started.elapsed() > timeout {
            // SAFETY: kill(2) on the process group this test created for the child
            // (`process_group(0)`: its PGID is its PID).
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            break NbenchExit::TimedOut { after: timeout };
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (read(&out), read(&err), exit)
}

#[test]
fn smbtorture_nbench_against_a_private_smbd() {
    let program = require(SMBTORTURE, "samba-testsuite");
    let loadfile = require(DBENCH_CLIENT_TXT, "dbench");
    let smbd = Smbd::start(herd_testutil::ports::free_port());
    let job = NbenchJob {
        program: &program,
        server: smbd.addr,
        share: "bench",
        clients: 2,
        duration: Duration::from_secs(3),
        loadfile: &loadfile,
    };
    let argv = job.argv().unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let (stdout, stderr, exit) = run_group(&argv, &smbd.dir, job.kill_timeout());
    let wall = started.elapsed();
    let outcome = match smbtorture::parse(&job, &stdout, &stderr, exit) {
        Ok(o) => o,
        Err(e) => panic!("{e}\nstdout: {stdout}\nstderr: {stderr}\n{}", smbd.logs()),
    };
    assert_eq!((outcome.clients, outcome.duration), (2, Duration::from_secs(3)));
    assert!(outcome.throughput_mb_s > 0.0, "{outcome:?}");
    assert!(outcome.lines_per_client > 0, "{outcome:?}");
    let m = smbtorture::to_measurement(&outcome, 1);
    assert!(m.bytes_total > 0);
    eprintln!(
        "nbench: {:.2} MB/s ({:.1} Mbit/s), {} lines per client, write-only opening: {}, \
         {wall:?} wall",
        outcome.throughput_mb_s,
        outcome.throughput_mbit_s(),
        outcome.lines_per_client,
        outcome.write_only_opening()
    );
    smbd.stop();
}

/// Nothing listening: the refused connection reads as NT_STATUS_NO_MEMORY, and the error
/// says what it really is.
#[test]
fn smbtorture_with_no_server_says_so() {
    let program = require(SMBTORTURE, "samba-testsuite");
    let loadfile = require(DBENCH_CLIENT_TXT, "dbench");
    // A port the kernel just handed out and nothing listens on.
    let addr: SocketAddr = ([127, 0, 0, 1], herd_testutil::ports::free_port()).into();
    // Two clients: smbtorture then tries the connection once before it forks them and fails
    // at once; with one client, that client connects inside the run (about 12 s here).
    let job = NbenchJob {
        program: &program,
        server: addr,
        share: "bench",
        clients: 2,
        duration: Duration::from_secs(1),
        loadfile: &loadfile,
    };
    let dir = std::env::temp_dir().join(format!("herd-lab-nbench-none-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (stdout, stderr, exit) = run_group(&job.argv().unwrap(), &dir, job.kill_timeout());
    let _ = std::fs::remove_dir_all(&dir);
    let e = smbtorture::parse(&job, &stdout, &stderr, exit).unwrap_err();
    assert_eq!(e, smbtorture::NbenchError::NoServer { server: addr }, "{stdout}{stderr}");
}

#[test]
fn smbtorture_says_its_version() {
    let program = require(SMBTORTURE, "samba-testsuite");
    let argv = smbtorture::version_argv(&program);
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = smbtorture::parse_version(&text);
    assert!(v.as_deref().is_some_and(|v| v.starts_with('4')), "{text}");
}
