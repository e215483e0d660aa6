//! The one place herd starts other programs: servers, the clients of a cell, validators and
//! version probes. Each program gets its own process group (so a Ctrl-C typed at the terminal
//! reaches herd alone, and herd stops things in its own order), its CPU set, its log file, and
//! a line in the run's [`Registry`]. Stopping goes by the PID herd was given: SIGTERM to that
//! process group, a grace period, then SIGKILL. Nothing is ever found or stopped by name.
//! A start that cannot be written to the registry is stopped and refused
//! ([`ProcError::Registry`]), so that `herd lab clean` can always finish the job after a crash.
//! A supervisor given [`Cgroups`] puts each lasting program it starts into a cgroup of its
//! own between fork and exec, reads its CPU time there and removes it when the program stops
//! (`cgroup.rs` says why).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cgroup::{Cgroup, Cgroups, CpuAccounting};
use crate::cpuset::CpuSet;
use crate::registry::Registry;

mod piped;
pub use piped::{Input, Output, Piped, PipedSpawn};

/// What to start.
#[derive(Debug, Clone)]
pub struct Spawn<'a> {
    /// A short name for messages and the registry (`nginx`, `php-fpm`, `client`).
    pub name: &'a str,
    /// Program and arguments; the program is an absolute path or looked up in PATH.
    pub argv: &'a [OsString],
    pub env: &'a [(OsString, OsString)],
    /// Standard output goes here (created or truncated).
    pub stdout: &'a Path,
    /// Standard error goes here; the same path as `stdout` shares one file.
    pub stderr: &'a Path,
    pub cpus: &'a CpuSet,
    /// The network namespace to run it in (a name under /run/netns, one herd made); None:
    /// herd's own. Joined between fork and exec, so the PID herd records is the program's.
    pub netns: Option<&'a str>,
}

impl<'a> Spawn<'a> {
    /// `argv` as `name` with no extra environment, on any CPU, in herd's own network
    /// namespace, its standard output and error both to `log`: how most helpers run.
    pub fn logged(name: &'a str, argv: &'a [OsString], log: &'a Path) -> Spawn<'a> {
        Spawn { name, argv, env: &[], stdout: log, stderr: log, cpus: &CpuSet::All, netns: None }
    }
}

/// A program herd started and has not stopped yet.
#[derive(Debug)]
pub struct Running {
    pub name: String,
    pub pid: u32,
    pub argv: Vec<String>,
    pub stderr: PathBuf,
    pub cpus: CpuSet,
    child: Child,
    /// The cgroup it was started in, when its supervisor makes them.
    cgroup: Option<Cgroup>,
    /// Without a cgroup: its CPU seconds as it ended, read before it was reaped (after, its
    /// /proc entry and with it its time are gone).
    ended_cpu: Option<f64>,
}

/// How a program that herd waited for ended.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// It ran past its time limit and was killed.
    pub timed_out: bool,
    /// `cancel` was raised while it ran: it was sent SIGINT (then SIGKILL after the grace).
    pub cancelled: bool,
    pub elapsed: Duration,
    /// User + system CPU seconds of the program and the children it reaped (`wait4`'s
    /// rusage); None if the kernel gave none.
    pub cpu_seconds: Option<f64>,
}

/// What a short program printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// Its stdout and stderr together, as printed (some programs print their version and
    /// exit 1, as `wrk -v` does: the text is still what to parse).
    pub text: String,
    /// None when it exited 0 within its time; else how it ended, or why it did not start.
    pub failure: Option<String>,
}

impl Captured {
    /// Ok with the text when it succeeded; Err with how it ended and what it printed.
    pub fn into_result(self) -> Result<String, String> {
        match self.failure {
            None => Ok(self.text),
            Some(how) => Err(format!("{how}: {}", self.text.trim())),
        }
    }
}

/// Why a program could not be started or waited for. The OS error is the `source()`, not
/// part of the message: printed as a chain (`{err:#}`), it comes once, after it.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot start {name} ({program})")]
    Spawn { name: String, program: String, source: io::Error },
    #[error("cannot open {path} for {name}'s output")]
    Log { name: String, path: PathBuf, source: io::Error },
    #[error("cannot enter network namespace {netns} for {name}")]
    Netns { name: String, netns: String, source: io::Error },
    #[error("{name} has no program to run (empty command line)")]
    EmptyArgv { name: String },
    #[error("waiting for {name} (pid {pid}) failed")]
    Wait { name: String, pid: u32, source: io::Error },
    #[error("cannot record {name} (pid {pid}) in the run's registry {dir}, so `herd lab clean` could not stop it after a crash (it was stopped)")]
    Registry { name: String, pid: u32, dir: PathBuf, source: io::Error },
    #[error("cannot make or record the cgroup {dir} that counts {name}'s CPU time")]
    Cgroup { name: String, dir: PathBuf, source: io::Error },
}

/// Starts programs and stops exactly those, by PID. Dropping it stops whatever still runs.
#[derive(Debug, Default)]
pub struct Supervisor {
    registry: Option<Registry>,
    running: Vec<Running>,
    cgroups: Option<Cgroups>,
}

/// How long a stopped program's cgroup may take to empty before herd gives up removing it.
const CGROUP_GRACE: Duration = Duration::from_secs(2);

impl Supervisor {
    /// A supervisor that records every start in `registry` (when given).
    pub fn new(registry: Option<Registry>) -> Supervisor {
        Supervisor { registry, running: Vec::new(), cgroups: None }
    }

    /// From now on, each program [`Supervisor::start`] starts goes into a cgroup of its own
    /// made under `cgroups` (None: none), and its CPU time is read there.
    pub fn with_cgroups(mut self, cgroups: Option<Cgroups>) -> Supervisor {
        self.cgroups = cgroups;
        self
    }

    /// How [`Supervisor::cpu_seconds`] reads a started program's CPU time.
    pub fn cpu_accounting(&self) -> CpuAccounting {
        self.cgroups.as_ref().map_or(CpuAccounting::PerProcess, Cgroups::accounting)
    }

    /// The run's registry, when starts are recorded (namespaces are recorded there too).
    pub fn registry(&self) -> Option<&Registry> {
        self.registry.as_ref()
    }

    /// Starts a program in the background; returns its PID.
    pub fn start(&mut self, s: &Spawn<'_>) -> Result<u32, ProcError> {
        let cgroup = self.make_cgroup(s.name)?;
        let procs = match &cgroup {
            Some(g) => match g.procs_file() {
                Ok(f) => Some(f),
                Err(source) => {
                    let dir = g.dir().to_path_buf();
                    drop_cgroup(cgroup);
                    return Err(ProcError::Cgroup { name: s.name.to_string(), dir, source });
                }
            },
            None => None,
        };
        let spawned = spawn(s, procs.as_ref());
        drop(procs);
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                drop_cgroup(cgroup);
                return Err(e);
            }
        };
        let pid = child.id();
        if let Err(e) = self.record(pid, s.name) {
            stop_child(&mut child, Duration::from_secs(1));
            drop_cgroup(cgroup);
            return Err(e);
        }
        self.running.push(Running {
            name: s.name.to_string(),
            pid,
            argv: s.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            stderr: s.stderr.to_path_buf(),
            cpus: s.cpus.clone(),
            child,
            cgroup,
            ended_cpu: None,
        });
        Ok(pid)
    }

    /// A fresh cgroup for the program `name`, recorded in the registry before it is made.
    fn make_cgroup(&self, name: &str) -> Result<Option<Cgroup>, ProcError> {
        let Some(cgroups) = &self.cgroups else { return Ok(None) };
        let dir = cgroups.next_dir();
        let made = match &self.registry {
            Some(r) => r.record_cgroup(&dir),
            None => Ok(()),
        }
        .and_then(|()| Cgroup::create(dir.clone(), cgroups.accounting()));
        made.map(Some).map_err(|source| ProcError::Cgroup { name: name.to_string(), dir, source })
    }

    /// Runs a program to its end, at most `limit`; raising `cancel` interrupts it (SIGINT to
    /// its group, then SIGKILL after `grace`). It is recorded in the registry meanwhile.
    pub fn run(
        &mut self,
        s: &Spawn<'_>,
        limit: Duration,
        grace: Duration,
        cancel: Option<&AtomicBool>,
    ) -> Result<Finished, ProcError> {
        let mut all = self.run_all(std::slice::from_ref(s), limit, grace, cancel)?;
        all.pop().ok_or_else(|| ProcError::EmptyArgv { name: s.name.to_string() })
    }

    /// Runs several programs side by side, each to its end and at most `limit`: started
    /// together (in order, each recorded in the registry), then waited for together;
    /// raising `cancel` interrupts them all. Their ends in the order given. When one cannot
    /// start, those started before it are killed and reaped before the error returns.
    pub fn run_all(
        &mut self,
        spawns: &[Spawn<'_>],
        limit: Duration,
        grace: Duration,
        cancel: Option<&AtomicBool>,
    ) -> Result<Vec<Finished>, ProcError> {
        let started = Instant::now();
        let mut pids: Vec<u32> = Vec::with_capacity(spawns.len());
        let kill_started = |pids: &[u32]| {
            for &pid in pids {
                signal_group(pid, libc::SIGKILL);
                let _ = reap(pid, true);
            }
        };
        for s in spawns {
            let mut child = match spawn(s, None) {
                Ok(child) => child,
                Err(e) => {
                    kill_started(&pids);
                    return Err(e);
                }
            };
            let pid = child.id();
            if let Err(e) = self.record(pid, s.name) {
                stop_child(&mut child, Duration::from_secs(1));
                kill_started(&pids);
                return Err(e);
            }
            // Reaped by `reap`, not by std: the Child handle is not needed past its PID.
            drop(child);
            pids.push(pid);
        }
        let mut ends: Vec<Option<Finished>> = spawns.iter().map(|_| None).collect();
        let mut timed_out = false;
        let mut cancelled = false;
        let mut signalled_at: Option<Instant> = None;
        loop {
            for (i, &pid) in pids.iter().enumerate() {
                if ends[i].is_some() {
                    continue;
                }
                let block = signalled_at.is_some_and(|at| at.elapsed() > grace);
                if block {
                    signal_group(pid, libc::SIGKILL);
                }
                let reaped = reap(pid, block).map_err(|source| ProcError::Wait {
                    name: spawns[i].name.to_string(),
                    pid,
                    source,
                })?;
                if let Some((status, cpu_seconds)) = reaped {
                    let elapsed = started.elapsed();
                    ends[i] = Some(Finished { status, timed_out, cancelled, elapsed, cpu_seconds });
                }
            }
            if ends.iter().all(Option::is_some) {
                return Ok(ends.into_iter().flatten().collect());
            }
            if signalled_at.is_none() {
                let signal = if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    cancelled = true;
                    Some(libc::SIGINT)
                } else if started.elapsed() > limit {
                    timed_out = true;
                    Some(libc::SIGTERM)
                } else {
                    None
                };
                if let Some(sig) = signal {
                    for (i, &pid) in pids.iter().enumerate() {
                        if ends[i].is_none() {
                            signal_group(pid, sig);
                        }
                    }
                    signalled_at = Some(Instant::now());
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Every start is recorded before herd relies on it: a program `herd lab clean` could
    /// not find after a crash is not left running.
    fn record(&self, pid: u32, name: &str) -> Result<(), ProcError> {
        match &self.registry {
            Some(r) => r.record(pid, name).map_err(|source| ProcError::Registry {
                name: name.to_string(),
                pid,
                dir: r.dir().to_path_buf(),
                source,
            }),
            None => Ok(()),
        }
    }

    /// Runs a short program (a version or config check, a probe) to its end, at most
    /// `limit`, with its stdout and stderr together in `log` (removed afterwards).
    pub fn capture(
        &mut self,
        name: &str,
        argv: &[OsString],
        log: &Path,
        limit: Duration,
    ) -> Captured {
        let spawn = Spawn {
            name,
            argv,
            env: &[],
            stdout: log,
            stderr: log,
            cpus: &CpuSet::All,
            netns: None,
        };
        let finished = self.run(&spawn, limit, Duration::from_secs(1), None);
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let _ = std::fs::remove_file(log);
        let failure = match finished {
            Ok(f) if f.timed_out => Some(format!("ran past {limit:?}")),
            Ok(f) if !f.status.success() => Some(describe(&f.status)),
            Ok(_) => None,
            Err(e) => Some(herd_stats::with_causes(&e)),
        };
        Captured { text, failure }
    }

    /// The programs still running, in start order.
    pub fn running(&self) -> &[Running] {
        &self.running
    }

    /// Has `pid` ended? Returns how, reaping it (it stays in the list until stopped).
    pub fn exit_status(&mut self, pid: u32) -> Option<ExitStatus> {
        let r = self.running.iter_mut().find(|r| r.pid == pid)?;
        // Ended but not yet reaped: its time is still in /proc, read it before the reap.
        if r.cgroup.is_none() && r.ended_cpu.is_none() && ended_unreaped(pid) {
            r.ended_cpu = ended_cpu_seconds(pid);
        }
        r.child.try_wait().ok().flatten()
    }

    /// CPU seconds (user + system) of `pid`, a program this supervisor started, and every
    /// process it forked: from its cgroup when it has one ([`Supervisor::cpu_accounting`]),
    /// else its process group's live threads and the children they reaped.
    pub fn cpu_seconds(&self, pid: u32) -> Option<f64> {
        let r = self.running.iter().find(|r| r.pid == pid);
        match (r.and_then(|r| r.cgroup.as_ref()), r.and_then(|r| r.ended_cpu)) {
            (Some(g), _) => g.cpu_seconds(),
            // Ended (reaped by `exit_status`): what it had used then, itself and the
            // children it reaped; a worker left in its group after its leader ended is not
            // in it (a server's is in its cgroup, where herd can make one).
            (None, Some(ended)) => Some(ended),
            (None, None) => group_cpu_seconds(pid),
        }
    }

    /// Stops `pid` (SIGTERM to its group, SIGKILL after `grace`). Returns false when herd did
    /// not start it.
    pub fn stop(&mut self, pid: u32, grace: Duration) -> bool {
        self.stop_with_status(pid, grace).is_some()
    }

    /// As [`Supervisor::stop`], and how the program ended: None when herd did not start it,
    /// `Some(None)` when the kernel gave no status (it was reaped elsewhere).
    pub fn stop_with_status(&mut self, pid: u32, grace: Duration) -> Option<Option<ExitStatus>> {
        let i = self.running.iter().position(|r| r.pid == pid)?;
        let mut r = self.running.remove(i);
        let status = stop_child(&mut r.child, grace);
        drop_cgroup(r.cgroup);
        Some(status)
    }

    /// Stops every program still running, last started first; returns how many.
    pub fn stop_all(&mut self, grace: Duration) -> usize {
        let n = self.running.len();
        while let Some(mut r) = self.running.pop() {
            stop_child(&mut r.child, grace);
            drop_cgroup(r.cgroup);
        }
        n
    }
}

/// Removes the cgroup of a program that stopped (or never started). One that will not go
/// stays recorded in the run's registry until the lab removes it, and `herd lab clean` finds
/// it by its name after that.
fn drop_cgroup(cgroup: Option<Cgroup>) {
    if let Some(g) = cgroup {
        let _ = g.remove(CGROUP_GRACE);
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop_all(Duration::from_secs(2));
    }
}

/// Starts `s` in a process group of its own, with its CPU set and output files, and in the
/// cgroup whose `cgroup.procs` is `cgroup_procs` when given.
fn spawn(s: &Spawn<'_>, cgroup_procs: Option<&File>) -> Result<Child, ProcError> {
    let (program, args) =
        s.argv.split_first().ok_or_else(|| ProcError::EmptyArgv { name: s.name.to_string() })?;
    let open = |path: &Path| {
        OpenOptions::new().create(true).write(true).truncate(true).open(path).map_err(|source| {
            ProcError::Log { name: s.name.to_string(), path: path.to_path_buf(), source }
        })
    };
    let out: File = open(s.stdout)?;
    let err: File = if s.stderr == s.stdout {
        out.try_clone().map_err(|source| ProcError::Log {
            name: s.name.to_string(),
            path: s.stderr.to_path_buf(),
            source,
        })?
    } else {
        open(s.stderr)?
    };
    #[allow(clippy::disallowed_methods)] // this module is where programs are started
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(s.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Its own group: the terminal's Ctrl-C reaches herd only, and stopping the group
        // also stops the workers it forks (nginx, apache, php-fpm).
        .process_group(0);
    // Opened before the fork: the child only has to call setns on it.
    let netns =
        match s.netns {
            Some(name) => Some(crate::net::netns::open(name).map_err(|source| {
                ProcError::Netns { name: s.name.to_string(), netns: name.to_string(), source }
            })?),
            None => None,
        };
    let netns_fd = netns.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
    let mask = s.cpus.mask();
    let procs_fd = cgroup_procs.map(std::os::fd::AsRawFd::as_raw_fd);
    if mask.is_some() || netns_fd.is_some() || procs_fd.is_some() {
        // SAFETY: the closure runs in the child between fork and exec and only makes system
        // calls on values built before the fork (no allocation, no lock).
        unsafe {
            cmd.pre_exec(move || {
                // First: every CPU second from here on, and every process it forks, is
                // counted in the cgroup ("0" moves the writer itself).
                if let Some(fd) = procs_fd {
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(fd) = netns_fd {
                    if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(mask) = &mask {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), mask) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
    let spawned = cmd.spawn();
    drop(netns);
    spawned.map_err(|source| ProcError::Spawn {
        name: s.name.to_string(),
        program: program.to_string_lossy().into_owned(),
        source,
    })
}

/// SIGTERM to the child's group, SIGKILL after `grace`, then reap it; how it ended.
fn stop_child(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    let pid = child.id();
    if let Ok(Some(status)) = child.try_wait() {
        // The leader is gone (reaped now, or long ago by `exit_status`); workers it left in
        // its group still get the signal.
        signal_reaped_group(pid, libc::SIGKILL);
        return Some(status);
    }
    signal_group(pid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            // Workers that outlive their master (rare) go too.
            signal_reaped_group(pid, libc::SIGKILL);
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_group(pid, libc::SIGKILL);
    child.wait().ok()
}

/// Sends `sig` to what is left of the process group whose leader herd started as `pid` and
/// has reaped. The kernel keeps a PID taken while anything uses it as a process, thread,
/// group or session id: while the group has a member, no new process can be `pid`, and a
/// process or thread that is `pid` now means the group is empty and the number was handed
/// out again, maybe to the leader of another group (a server, a test's herd) that is not
/// herd's to signal. So only while nothing is `pid`. (Before this check a lab helper's
/// stop, minutes after a tool it ran ended, SIGKILLed whatever group had its PID by then.)
pub(crate) fn signal_reaped_group(pid: u32, sig: i32) {
    if Path::new(&format!("/proc/{pid}")).exists() {
        return;
    }
    signal_group(pid, sig);
}

/// Sends `sig` to the process group whose leader herd started as `pid`, while that leader
/// is not yet reaped (running, or a zombie: either way its PID, the group's id, is still
/// its); once reaped, [`signal_reaped_group`].
pub(crate) fn signal_group(pid: u32, sig: i32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else { return };
    if pgid <= 1 {
        return; // never signal init's group or "every process"
    }
    // SAFETY: kill(2) with a negative pid addresses exactly that process group.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// Reaps `pid` if it has ended (or, with `block`, once it ends), with its CPU time. `wait4`
/// instead of `Child::try_wait` because only it returns the rusage of the reaped program,
/// which is how the lab learns what an external client (ab, wrk) cost.
fn reap(pid: u32, block: bool) -> io::Result<Option<(ExitStatus, Option<f64>)>> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; all-zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: wait4 writes only to the two out-pointers, which live for the call.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, flags, &mut usage) };
        if r == 0 {
            return Ok(None);
        }
        if r < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
        return Ok(Some((ExitStatus::from_raw(status), Some(cpu))));
    }
}

/// CPU seconds of the processes whose group is `pgid`: each live thread's run time from
/// `/proc/PID/task/TID/schedstat` (nanoseconds; tick-based utime+stime would read 0 for a
/// run of a few hundred milliseconds), plus the children each process has reaped (cutime +
/// cstime, in ticks: php-cgi processes that lived for one request). Falls back to ticks where
/// schedstat is missing.
pub fn group_cpu_seconds(pgid: u32) -> Option<f64> {
    // SAFETY: sysconf has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks <= 0 {
        return None;
    }
    let ticks = ticks as f64;
    let mut total = 0.0;
    let mut found = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(fields) = stat_fields(&stat) else { continue };
        // Fields after the command: state(3) ppid(4) pgrp(5) … utime(14) stime(15)
        // cutime(16) cstime(17); index 0 here is field 3.
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) != Some(pgid) {
            continue;
        }
        found = true;
        let field =
            |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) as f64;
        total += (field(13) + field(14)) / ticks;
        total += match threads_run_time(pid) {
            Some(ns) => ns as f64 / 1e9,
            None => (field(11) + field(12)) / ticks,
        };
    }
    found.then_some(total)
}

/// The process group of `pid`, from /proc/PID/stat (its fifth field, after the command's
/// parenthesised name, which may hold spaces).
pub fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(2)?.parse().ok()
}

/// Sum of the run time of `pid`'s threads, nanoseconds, from schedstat.
fn threads_run_time(pid: u32) -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let text = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// PIDs of the live (not zombie) processes in group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|stat| {
                stat_fields(&stat).is_some_and(|f| {
                    f.first() != Some(&"Z")
                        && f.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
                })
            })
        })
        .collect()
}

/// The fields of /proc/PID/stat after the command name (which may hold spaces and parens).
pub(crate) fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let close = stat.rfind(')')?;
    Some(stat[close + 1..].split_whitespace().collect())
}

/// Whether `pid`, a child of this process, has ended and is not yet reaped (`waitid` with
/// WNOWAIT looks without reaping).
fn ended_unreaped(pid: u32) -> bool {
    let id: libc::id_t = pid;
    // SAFETY: siginfo_t is plain data; all-zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: waitid writes only to `info`, which lives for the call.
    let r = unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) };
    // SAFETY: after a successful waitid the kernel filled si_pid (0: nothing has ended).
    r == 0 && unsafe { info.si_pid() } != 0
}

/// CPU seconds of an ended, unreaped `pid` from its /proc stat: its threads' user and system
/// time (all of them, the ended ones too) and its reaped children's, in clock ticks.
fn ended_cpu_seconds(pid: u32) -> Option<f64> {
    // SAFETY: sysconf has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks <= 0 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields = stat_fields(&stat)?;
    // utime(14) stime(15) cutime(16) cstime(17); index 0 here is field 3.
    let sum: u64 = (11..=14)
        .map(|i| fields.get(i).and_then(|v| v.parse::<u64>().ok()))
        .sum::<Option<u64>>()?;
    Some(sum as f64 / ticks as f64)
}

/// The start time of `pid` in clock ticks after boot (field 22), to tell a process from a
/// later one that got the same PID.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat)?.get(19)?.parse().ok()
}

/// How an ended program ended, in words: "exit status 1", "killed by signal 9".
pub fn describe(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => "ended".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_group_is_read_from_proc() {
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() } as u32;
        assert_eq!(process_group(std::process::id()), Some(own));
        assert_eq!(process_group(u32::MAX - 1), None);
    }

    fn argv(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    /// A fresh directory for one test's logs.
    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("herd-topo-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn starts_and_stops_a_group_by_pid() {
        let dir = scratch("test");
        let log = dir.join("log");
        let mut sup = Supervisor::new(None);
        // A shell that forks a child: both must go when the group is stopped.
        let a = argv(&["/bin/sh", "-c", "sleep 30 & sleep 30"]);
        let pid = sup.start(&Spawn::logged("sleeper", &a, &log)).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(sup.cpu_seconds(pid).is_some());
        let status = sup.stop_with_status(pid, Duration::from_secs(2));
        assert_eq!(status.flatten().as_ref().map(describe).as_deref(), Some("killed by signal 15"));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(group_members(pid), Vec::<u32>::new(), "a process of the group survived");
        assert!(!sup.stop(pid, Duration::from_secs(1)), "stopping twice");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A leader reaped long ago: its group's survivors are stopped, but a process that has
    /// its PID now (the number handed out again, to the leader of a group of its own) is
    /// never signalled for it.
    #[test]
    fn a_reaped_leaders_group_is_signalled_only_while_its_pid_is_free() {
        let dir = scratch("reaped");
        let mut sup = Supervisor::new(None);
        // The leader ends at once, leaving a member of its group.
        let a = argv(&["/bin/sh", "-c", "sleep 30 & exit 0"]);
        let pid = sup.start(&Spawn::logged("leaver", &a, &dir.join("log"))).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while sup.exit_status(pid).is_none() {
            assert!(Instant::now() < deadline, "the leader did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
        let left = group_members(pid);
        assert_eq!(left.len(), 1, "the member it left: {left:?}");
        assert!(sup.stop(pid, Duration::from_secs(1)));
        let gone = Instant::now() + Duration::from_secs(5);
        while !group_members(pid).is_empty() {
            assert!(Instant::now() < gone, "the member survived the stop");
            std::thread::sleep(Duration::from_millis(10));
        }
        // A live group leader stands for the process that got a reaped leader's PID: asked
        // as a reaped group, it is left alone.
        let other = sup.start(&Spawn::logged("other", &argv(&["sleep", "30"]), &dir.join("o")));
        let other = other.unwrap();
        signal_reaped_group(other, libc::SIGKILL);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(sup.exit_status(other), None, "the other group was signalled");
        assert!(sup.stop(other, Duration::from_secs(1)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_ended_programs_cpu_time_is_kept_past_its_reap() {
        let dir = scratch("ended-cpu");
        let mut sup = Supervisor::new(None);
        // A counted loop in a child it reaps (some CPU time however busy the machine), then
        // its own end.
        let a = argv(&[
            "/bin/sh",
            "-c",
            "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; exit 0",
        ]);
        let pid = sup.start(&Spawn::logged("burner", &a, &dir.join("log"))).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = sup.exit_status(pid) {
                break status;
            }
            assert!(Instant::now() < deadline, "the burner did not end");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(status.success());
        // Reaped now: /proc has nothing of it, and the time it used is still known.
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
        let cpu = sup.cpu_seconds(pid).unwrap_or(0.0);
        assert!((0.02..30.0).contains(&cpu), "{cpu}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn run_pins_times_out_and_reports() {
        let dir = scratch("run");
        let out = dir.join("out");
        let mut sup = Supervisor::new(None);
        let a = argv(&["/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"]);
        let cpus = CpuSet::parse("0").unwrap();
        let f = sup
            .run(
                &Spawn {
                    name: "t",
                    argv: &a,
                    env: &[],
                    stdout: &out,
                    stderr: &out,
                    cpus: &cpus,
                    netns: None,
                },
                Duration::from_secs(5),
                Duration::from_secs(1),
                None,
            )
            .unwrap();
        assert!(f.status.success());
        assert!(std::fs::read_to_string(&out).unwrap().trim_end().ends_with("\t0"));
        let a = argv(&["sleep", "30"]);
        let f = sup
            .run(
                &Spawn::logged("t", &a, &out),
                Duration::from_millis(100),
                Duration::from_secs(1),
                None,
            )
            .unwrap();
        assert!(f.timed_out);
        assert_eq!(describe(&f.status), "killed by signal 15");
        let cancel = AtomicBool::new(true);
        let f = sup
            .run(
                &Spawn::logged("t", &a, &out),
                Duration::from_secs(30),
                Duration::from_secs(1),
                Some(&cancel),
            )
            .unwrap();
        assert!(f.cancelled && f.elapsed < Duration::from_secs(5));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Side by side: each program's own end, in the order given; a time limit or a cancel
    /// reaches every one still running; a program that cannot start is the error (and does
    /// not wait out the 30 s of the one started before it).
    #[test]
    fn run_all_waits_for_each_and_stops_them_together() {
        let dir = scratch("run-all");
        let (o1, o2) = (dir.join("o1"), dir.join("o2"));
        let mut sup = Supervisor::new(None);
        let spawn = |a: &'static [&'static str], out: &Path| -> (Vec<OsString>, PathBuf) {
            (argv(a), out.to_path_buf())
        };
        let run = |sup: &mut Supervisor, a: &[(Vec<OsString>, PathBuf)], limit, cancel| {
            let spawns: Vec<Spawn> = a
                .iter()
                .map(|(argv, out)| Spawn {
                    name: "t",
                    argv,
                    env: &[],
                    stdout: out,
                    stderr: out,
                    cpus: &CpuSet::All,
                    netns: None,
                })
                .collect();
            sup.run_all(&spawns, limit, Duration::from_secs(1), cancel)
        };
        let both = [spawn(&["sh", "-c", "sleep 0.2; exit 3"], &o1), spawn(&["true"], &o2)];
        let ends = run(&mut sup, &both, Duration::from_secs(10), None).unwrap();
        assert_eq!(ends.iter().map(|f| f.status.code()).collect::<Vec<_>>(), [Some(3), Some(0)]);
        assert!(ends[0].elapsed >= Duration::from_millis(200) && !ends[0].timed_out);
        let long = [spawn(&["sleep", "30"], &o1), spawn(&["sleep", "30"], &o2)];
        let ends = run(&mut sup, &long, Duration::from_millis(100), None).unwrap();
        assert!(ends.iter().all(|f| f.timed_out && describe(&f.status) == "killed by signal 15"));
        let cancel = AtomicBool::new(true);
        let ends = run(&mut sup, &long, Duration::from_secs(30), Some(&cancel)).unwrap();
        assert!(ends.iter().all(|f| f.cancelled && f.elapsed < Duration::from_secs(5)));
        let one_missing = [spawn(&["sleep", "30"], &o1), spawn(&["/nonexistent/x"], &o2)];
        let before = Instant::now();
        let err = run(&mut sup, &one_missing, Duration::from_secs(30), None).unwrap_err();
        assert!(matches!(err, ProcError::Spawn { .. }), "{err}");
        assert!(before.elapsed() < Duration::from_secs(5));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn run_reports_the_cpu_time_a_program_used() {
        let dir = scratch("cpu");
        let out = dir.join("out");
        let mut sup = Supervisor::new(None);
        let run = |sup: &mut Supervisor, script: &str| {
            let a = argv(&["/bin/sh", "-c", script]);
            let s = Spawn::logged("t", &a, &out);
            sup.run(&s, Duration::from_secs(30), Duration::from_secs(1), None).unwrap()
        };
        // A busy loop of a fixed amount of work (~0.5 s of CPU with dash here, more with
        // bash), then a sleep that uses none. Counted, not timed: on a busy machine a timed
        // loop gets less CPU than its length, and the figure would judge the machine, not
        // the accounting; the bar below leaves room for a CPU several times faster.
        let busy = run(&mut sup, "i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done");
        let idle = run(&mut sup, "sleep 0.3");
        let busy_cpu = busy.cpu_seconds.unwrap();
        let idle_cpu = idle.cpu_seconds.unwrap();
        assert!(busy_cpu > 0.1, "busy loop: {busy_cpu} s of CPU in {:?}", busy.elapsed);
        assert!(busy_cpu <= busy.elapsed.as_secs_f64() + 0.05, "more CPU than time: {busy_cpu}");
        assert!(idle_cpu < 0.05, "sleep: {idle_cpu} s of CPU");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let log = std::env::temp_dir().join(format!("herd-topo-missing-{}", std::process::id()));
        let a = argv(&["/nonexistent/nginx"]);
        let err = Supervisor::new(None).start(&Spawn::logged("nginx", &a, &log)).unwrap_err();
        let enoent = io::Error::from_raw_os_error(libc::ENOENT).to_string();
        let printed = herd_testutil::causes::assert_cause_once(&err, &enoent);
        assert_eq!(printed, format!("cannot start nginx (/nonexistent/nginx): {enoent}"));
        let _ = std::fs::remove_file(log);
    }

    /// Every variant with an OS error prints it once in the chain (before: twice, since the
    /// message held it too).
    #[test]
    fn each_cause_is_printed_once() {
        let os = || io::Error::from_raw_os_error(libc::EACCES);
        let cause = os().to_string();
        let (name, pid) = ("nginx".to_owned(), 7);
        for err in [
            ProcError::Spawn {
                name: name.clone(),
                program: "/usr/sbin/nginx".into(),
                source: os(),
            },
            ProcError::Log { name: name.clone(), path: "/run/log".into(), source: os() },
            ProcError::Netns { name: name.clone(), netns: "herd-1-0-server".into(), source: os() },
            ProcError::Wait { name: name.clone(), pid, source: os() },
            ProcError::Registry { name: name.clone(), pid, dir: "/run/herd".into(), source: os() },
            ProcError::Cgroup {
                name: name.clone(),
                dir: "/sys/fs/cgroup/herd-1-0".into(),
                source: os(),
            },
        ] {
            herd_testutil::causes::assert_cause_once(&err, &cause);
        }
    }

    #[test]
    fn a_failure_to_start_is_captured_with_its_cause() {
        let log = std::env::temp_dir().join(format!("herd-topo-capture-{}", std::process::id()));
        let captured = Supervisor::new(None).capture(
            "probe",
            &argv(&["/nonexistent/probe"]),
            &log,
            Duration::from_secs(1),
        );
        let failure = captured.failure.unwrap();
        let enoent = io::Error::from_raw_os_error(libc::ENOENT).to_string();
        assert_eq!(failure, format!("cannot start probe (/nonexistent/probe): {enoent}"));
    }
}
