//! `herd run`'s client health verdict end to end (docs/client-health.md), against the real
//! `herd serve`: a healthy run and an open loop held back by a slow server are `ok`, a closed
//! loop whose time went to waiting is not; the same healthy
//! run starved by a 5 % CPU quota (a cgroup made here, v1 or v2, the server left outside) is
//! `client-bound` and names the quota; too few file descriptors are counted by errno and named;
//! each step of a stepped run has its own verdict.
//!
//! Needs root for the cgroup (tests run as root here and in CI). A machine where neither
//! cgroup v1's cpu controller nor v2's can be used fails the quota test with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

#[path = "it/util/mod.rs"]
mod util;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use util::{herd, tempdir, Serve};

/// One test of this file at a time: each loads the CPUs, and the verdicts measure exactly
/// that. (A panicking test poisons the lock; the others go on.)
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The healthy run: an open loop well within one worker's means (5,000 req/s cost the debug
/// build 16–19 % of a CPU here) but far beyond a 5 % quota.
const HEALTHY: &[&str] = &["-c", "4", "-t", "1", "-d", "2s", "--rate", "5000"];

/// What a bounded `herd run` printed and wrote.
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    json: Value,
}

impl Ran {
    fn client(&self) -> &Value {
        &self.json["client"]
    }

    fn verdict(&self) -> &str {
        self.client()["verdict"].as_str().unwrap()
    }

    /// The summary's `client` line.
    fn client_line(&self) -> &str {
        self.stdout.lines().find(|l| l.starts_with("  client ")).unwrap_or("")
    }

    fn show(&self) -> String {
        format!("{}\n{}\n{:#}", self.stdout, self.stderr, self.client())
    }
}

/// Runs `herd run ARGS --json FILE` through `wrap` (a shell prefix: a cgroup, a ulimit), and
/// kills it (by its PID) if it has not ended within `limit`: a run that ignores its own
/// deadline fails the test instead of hanging it.
fn run_bounded(wrap: &[&str], args: &[&str], limit: Duration) -> Ran {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = tempdir(&format!("run-health-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
    let json = dir.join("out.json");
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let herd_bin = env!("CARGO_BIN_EXE_herd");
    let mut cmd = match wrap {
        [] => herd(),
        [script, rest @ ..] => {
            // sh -c 'SCRIPT' sh REST… HERD …: the script ends with `exec "$@"`.
            let mut c = Command::new("sh");
            c.arg("-c").arg(script).arg("sh").args(rest).arg(herd_bin);
            c
        }
    };
    let mut child = cmd
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "herd run {args:?} did not end within {limit:?}; stdout so far:\n{}",
                fs::read_to_string(&out).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = fs::read_to_string(&out).unwrap();
    let stderr = fs::read_to_string(&err).unwrap();
    let json = match fs::read(&json) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
        Err(e) => panic!("no --json ({e}); exit {status}\n{stdout}\n{stderr}"),
    };
    let _ = fs::remove_dir_all(&dir);
    Ran { status, stdout, stderr, json }
}

/// How the healthy runs are started: ahead of other jobs on the machine (nice -10), as a
/// benchmark client with cores of its own would be. Measured with two busy loops beside herd
/// and the server, 5,000 req/s: plain, suspect three times out of three (run-queue wait
/// 0.14–0.19, send lag p99 3–3.7 ms); niced, ok three times (wait 0.04–0.05, p99 28–67 µs).
const AHEAD: &str = "exec nice -n -10 \"$@\"";

/// Runs (niced) until the verdict is `ok`, at most eight times. Even so a shared machine can
/// keep herd's thread off the CPUs now and then, and the verdict then rightly says `suspect`
/// (other processes had the CPUs, requests were sent late, or the rate slipped while the
/// hypervisor stole: CI's guest loses 20-37 % of its CPUs' time to steal, and about half of
/// such runs are suspect). That, and only that, earns another try after a pause; any other
/// verdict fails at once, and so do eight contended runs.
fn expect_ok(args: &[&str]) -> Ran {
    let mut seen = Vec::new();
    for attempt in 0..8 {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(500));
        }
        let r = run_bounded(&[AHEAD], args, Duration::from_secs(60));
        assert!(r.status.success(), "{}", r.show());
        if r.verdict() == "ok" {
            return r;
        }
        let reason = r.client()["reason"].as_str().unwrap_or("").to_owned();
        let contended = r.verdict() == "suspect"
            && (reason.contains("other processes had the CPUs")
                || reason.contains("late while")
                || reason.contains("the hypervisor took"));
        assert!(contended, "expected ok: {}", r.show());
        eprintln!("attempt {}: suspect, trying again: {reason}", attempt + 1);
        seen.push(reason);
    }
    panic!("eight runs in a row were delayed by other processes: {seen:#?}");
}

fn share(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_healthy_run_is_ok() {
    let _serial = one_at_a_time();
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/10");
    let args: Vec<&str> = HEALTHY.iter().copied().chain([url.as_str()]).collect();
    let r = expect_ok(&args);
    let c = r.client();
    assert!(c["reason"].is_null(), "{}", r.show());
    assert_eq!(c["worker_threads"], 1);
    let busy = share(&c["cpu_busy_share"]);
    assert!(busy > 0.0 && busy < 0.85, "{}", r.show());
    assert_eq!(c["port_errors"], 0);
    assert_eq!(c["fd_errors"], 0);
    assert!(c["send_lag_us"]["p99"].as_u64().unwrap() < 1000, "{}", r.show());
    // The rate was kept, and the text says so next to the verdict.
    let achieved = share(&r.json["requests"]["attempted_per_second"]);
    assert!((achieved - 5000.0).abs() <= 50.0, "achieved {achieved}: {}", r.show());
    assert!(r.stdout.contains("  schedule    asked 5000 req/s, achieved "), "{}", r.stdout);
    assert!(r.client_line().starts_with("  client      ok (1 worker thread "), "{}", r.stdout);
    assert!(r.client_line().contains("send lag p99 "), "{}", r.stdout);
    // The server was found and measured; the machine's timers and steal were read.
    assert_eq!(c["server_processes"], 1, "{}", r.show());
    assert!(share(&c["server_cpu_s"]) > 0.0, "{}", r.show());
    let timers = &c["timer_late_us"];
    assert!(timers["p50"].as_u64().unwrap() <= timers["p99"].as_u64().unwrap(), "{}", r.show());
    assert!((0.0..=1.0).contains(&share(&c["steal_share"])), "{}", r.show());
}

/// A closed loop against a server that waits (herd serve's /sleep holds each answer 5 ms):
/// neither herd nor the server is busy, and herd, which finds the server by its listening
/// socket and reads its CPU time, does not vouch for the figures: they show the wait. (Before,
/// this said ok, as it did of nginx stalled 44 ms a request by Nagle's algorithm.)
#[test]
fn a_closed_loop_that_waits_on_an_idle_server_is_not_vouched_for() {
    let _serial = one_at_a_time();
    let serve = Serve::start(&["--threads", "1"]);
    let slow = serve.url("/sleep?ms=5");
    let r = run_bounded(&[], &["-c", "4", "-t", "2", "-d", "1s", &slow], Duration::from_secs(60));
    assert!(r.status.success(), "{}", r.show());
    let c = r.client();
    assert_eq!(r.verdict(), "suspect", "{}", r.show());
    let reason = c["reason"].as_str().unwrap();
    assert!(reason.starts_with("the time went to waiting: each request took "), "{}", r.show());
    assert!(reason.contains("neither side was busy"), "{}", r.show());
    assert_eq!(c["server_processes"], 1, "herd serve, found by its socket: {}", r.show());
    assert!(share(&c["server_cpu_s"]) < 0.5, "{}", r.show());
    assert!(share(&c["cpu_busy_share"]) < 0.2, "{}", r.show());
    assert_eq!(c["send_lag_us"]["p99"], 0, "a closed loop sends at once");
    assert!(c["timer_late_us"].is_null(), "probed for open loops only: {}", r.show());
    assert!(
        r.client_line().starts_with("  client      suspect: the time went to waiting: "),
        "{}",
        r.stdout
    );
}

#[test]
fn a_client_waiting_for_a_slow_server_is_ok() {
    let _serial = one_at_a_time();
    let serve = Serve::start(&["--threads", "1"]);
    let slow = serve.url("/sleep?ms=5");
    // Open loop at twice what 2 connections of 5 ms can carry: the rate is missed, by the
    // server's doing, and the verdict must not blame the client.
    let r = expect_ok(&["-c", "2", "-t", "1", "-d", "1s", "--rate", "800", &slow]);
    let achieved = share(&r.json["requests"]["attempted_per_second"]);
    assert!(achieved < 800.0 * 0.6, "the server should be the limit: {achieved} req/s");
}

#[test]
fn a_cpu_quota_makes_the_same_run_client_bound() {
    let _serial = one_at_a_time();
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/10");
    let cgroup = CpuLimit::create(5_000, 100_000).unwrap_or_else(|why| {
        panic!("cannot make a CPU-limited cgroup for this test (run it as root): {why}")
    });
    let procs = cgroup.procs();
    // The same start as the healthy run (niced), inside the cgroup before any load.
    let wrap = ["echo $$ > \"$1\" && shift && exec nice -n -10 \"$@\"", procs.to_str().unwrap()];
    let args: Vec<&str> = HEALTHY.iter().copied().chain([url.as_str()]).collect();
    let r = run_bounded(&wrap, &args, Duration::from_secs(60));
    assert!(r.status.success(), "{}", r.show());
    // The server stayed outside: only the client was starved.
    let server_cgroups = fs::read_to_string(format!("/proc/{}/cgroup", serve.pid())).unwrap();
    assert!(!server_cgroups.contains(cgroup.name()), "{server_cgroups}");
    let c = r.client();
    assert_eq!(r.verdict(), "client-bound", "{}", r.show());
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("a CPU quota on herd's cgroup held its worker threads back "),
        "{reason}"
    );
    assert!(share(&c["throttled_share"]) >= 0.10, "{}", r.show());
    assert!(c["throttled_periods"].as_u64().unwrap() > 0, "{}", r.show());
    // Starved, it waited on the run queue far longer than it ran.
    assert!(share(&c["run_queue_wait_share"]) > share(&c["cpu_busy_share"]), "{}", r.show());
    assert_eq!(r.client_line(), format!("  client      client-bound: {reason}"));
}

#[test]
fn too_few_file_descriptors_are_counted_and_named() {
    let _serial = one_at_a_time();
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/10");
    // 40 descriptors for 100 connections; herd cannot raise a hard limit. A run bounded by
    // time must still end on time (connections that fail at once used to loop forever).
    let wrap = ["ulimit -n 40 && exec \"$@\""];
    let r =
        run_bounded(&wrap, &["-c", "100", "-t", "1", "-d", "1s", &url], Duration::from_secs(30));
    assert!(r.status.success(), "{}", r.show());
    let c = r.client();
    let fd_errors = c["fd_errors"].as_u64().unwrap();
    assert!(fd_errors > 0, "{}", r.show());
    // Every connect failure here is an EMFILE, and every one is counted as such.
    assert_eq!(r.json["failures"]["connect"].as_u64().unwrap(), fd_errors, "{}", r.show());
    assert!(r.json["requests"]["completed"].as_u64().unwrap() > 0, "the connections it had worked");
    assert_eq!(r.verdict(), "client-bound", "{}", r.show());
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.ends_with(
            "connections failed with EMFILE (herd's open-file limit) — raise it (ulimit -n) or \
             use fewer connections (-c)"
        ),
        "{reason}"
    );
    assert_eq!(c["port_errors"], 0);
}

#[test]
fn each_step_has_its_own_verdict() {
    let _serial = one_at_a_time();
    let serve = Serve::start(&["--threads", "1"]);
    let slow = serve.url("/sleep?ms=5");
    let r = run_bounded(
        &[],
        &["-c", "4", "-t", "1", "--rate-steps", "100,200", "--step-time", "500ms", &slow],
        Duration::from_secs(60),
    );
    assert!(r.status.success(), "{}", r.show());
    let steps = r.json["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        let c = &s["client"];
        for key in [
            "verdict",
            "reason",
            "worker_threads",
            "cpu_busy_share",
            "run_queue_wait_share",
            "throttled_share",
            "throttled_periods",
            "quota_periods",
            "send_lag_us",
            "port_errors",
            "fd_errors",
            "process_cpu_s",
            "involuntary_switches",
        ] {
            assert!(c.get(key).is_some(), "step without client.{key}: {c}");
        }
        assert!(["ok", "suspect", "client-bound"].contains(&c["verdict"].as_str().unwrap()));
    }
    // The table has the verdict in its last column, one per step.
    let rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.len() == 10 && words[0].parse::<u32>().is_ok()
        })
        .collect();
    assert_eq!(rows.len(), 2, "{}", r.stdout);
    for (row, s) in rows.iter().zip(steps) {
        let verdict = s["client"]["verdict"].as_str().unwrap();
        assert!(row.trim_end().ends_with(verdict), "{row:?} vs {verdict}");
    }
}

/// A cgroup limited to `quota_us` of CPU per `period_us`, under the root of cgroup v1's cpu
/// hierarchy or of cgroup v2; removed on drop (after its processes ended), even when the test
/// failed. The name has herd's prefix and this process's id.
struct CpuLimit {
    dir: PathBuf,
    name: String,
    /// cgroup v2: the subtree_control where this test enabled the cpu controller itself.
    enabled_cpu: Option<PathBuf>,
}

impl CpuLimit {
    fn create(quota_us: u32, period_us: u32) -> Result<CpuLimit, String> {
        let name = format!("herd-test-{}", std::process::id());
        let mounts = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
        let v1 = match cgroup_mount(&mounts, "cgroup", Some("cpu")) {
            Some(root) => match CpuLimit::create_v1(&root, &name, quota_us, period_us) {
                Ok(c) => return Ok(c),
                Err(e) => format!("cgroup v1 at {}: {e}", root.display()),
            },
            None => "no cgroup v1 cpu hierarchy mounted".to_owned(),
        };
        let v2 = match cgroup_mount(&mounts, "cgroup2", None) {
            Some(root) => match CpuLimit::create_v2(&root, &name, quota_us, period_us) {
                Ok(c) => return Ok(c),
                Err(e) => format!("cgroup v2 at {}: {e}", root.display()),
            },
            None => "no cgroup v2 mounted".to_owned(),
        };
        Err(format!("{v1}; {v2}"))
    }

    fn create_v1(
        root: &Path,
        name: &str,
        quota_us: u32,
        period_us: u32,
    ) -> Result<CpuLimit, String> {
        let dir = root.join(name);
        fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let c = CpuLimit { dir, name: name.to_owned(), enabled_cpu: None };
        write(&c.dir.join("cpu.cfs_period_us"), &period_us.to_string())?;
        write(&c.dir.join("cpu.cfs_quota_us"), &quota_us.to_string())?;
        Ok(c)
    }

    fn create_v2(
        root: &Path,
        name: &str,
        quota_us: u32,
        period_us: u32,
    ) -> Result<CpuLimit, String> {
        let controllers = fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
        if !controllers.split_whitespace().any(|c| c == "cpu") {
            return Err(format!(
                "the cpu controller is not available (controllers: {controllers:?})"
            ));
        }
        let subtree = root.join("cgroup.subtree_control");
        let enabled = fs::read_to_string(&subtree).unwrap_or_default();
        let mut enabled_cpu = None;
        if !enabled.split_whitespace().any(|c| c == "cpu") {
            write(&subtree, "+cpu")?;
            enabled_cpu = Some(subtree);
        }
        let dir = root.join(name);
        if let Err(e) = fs::create_dir(&dir) {
            if let Some(s) = &enabled_cpu {
                let _ = fs::write(s, "-cpu");
            }
            return Err(format!("mkdir {}: {e}", dir.display()));
        }
        let c = CpuLimit { dir, name: name.to_owned(), enabled_cpu };
        write(&c.dir.join("cpu.max"), &format!("{quota_us} {period_us}"))?;
        Ok(c)
    }

    fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for CpuLimit {
    fn drop(&mut self) {
        // The last process may still be leaving the cgroup; rmdir fails (EBUSY) until it has.
        for _ in 0..100 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if self.dir.exists() {
            eprintln!("could not remove the test cgroup {}", self.dir.display());
        }
        if let Some(s) = &self.enabled_cpu {
            let _ = fs::write(s, "-cpu");
        }
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("write {value:?} to {}: {e}", path.display()))
}

/// The mount point of a cgroup hierarchy from /proc/self/mountinfo: `fstype` cgroup with
/// `controller` among its super options (v1), or cgroup2.
fn cgroup_mount(mountinfo: &str, fstype: &str, controller: Option<&str>) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let point = left.split(' ').nth(4)?;
        let mut r = right.split(' ');
        if r.next()? != fstype {
            return None;
        }
        let options = r.nth(1)?;
        let wanted = controller.is_none_or(|c| options.split(',').any(|o| o == c));
        wanted.then(|| PathBuf::from(point))
    })
}
