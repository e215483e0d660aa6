//! What a helper does for each request, on the host's own state: the programs it started
//! (by herd's id for them), started, probed, accounted for and stopped through herd-topo's
//! [`Supervisor`] (process groups, cgroups, the registry), and its run directory. Every
//! request gets one [`Reply`]; whatever herd sent, a mistake in it is an error reply that
//! names the request, the id or the path, never a panic.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use herd_topo::cgroup::{Cgroups, Wanted};
use herd_topo::cpuset::{self, CpuSet};
use herd_topo::proc::describe;
use herd_topo::{Spawn, Supervisor};

use crate::facts;
use crate::protocol::{
    Answer, Ending, Hello, Probe, Readiness, Reply, Request, StartSpec, DEFAULT_GRACE_MS,
    MAX_READ_BYTES, MAX_WRITE_FILE, MAX_WRITE_PART, PROTOCOL,
};
use crate::rundir::{self, RunDir};

/// What the binary tells its helper about itself.
#[derive(Debug, Clone)]
pub struct Options {
    /// `herd --version` as the binary prints it.
    pub herd: String,
    /// The command line that prints this host's disclosure (`herd doctor --json`); None: none here.
    pub doctor: Option<Vec<OsString>>,
    /// Where the run directory is made, and where `clean` looks for others.
    pub parent: PathBuf,
    /// End (everything stopped) when no request comes within this: herd pings while it
    /// holds the link ([`Request::Ping`]), so silence means the link is lost. None: wait on.
    pub idle: Option<std::time::Duration>,
}

/// The longest a `ready` may wait, and a `stop` may grant before SIGKILL.
pub const MAX_READY_MS: u64 = 600_000;
pub const MAX_GRACE_MS: u64 = 60_000;
/// How long `doctor` may take.
const DOCTOR_LIMIT: Duration = Duration::from_secs(120);
/// How much of a log an `exited` readiness carries.
const LOG_TAIL: u64 = 4096;

/// One program started on herd's request.
#[derive(Debug)]
struct Job {
    id: String,
    pid: u32,
}

/// A helper's state: its run directory and the programs it started.
#[derive(Debug)]
pub struct Host {
    options: Options,
    run: RunDir,
    sup: Supervisor,
    jobs: Vec<Job>,
    /// Raised when the helper is to end (signal, channel closed): a wait gives up.
    stopping: Arc<AtomicBool>,
}

/// What ending did.
#[derive(Debug)]
pub struct Ended {
    /// Programs that were still running and were stopped.
    pub stopped: usize,
    pub run_dir: PathBuf,
    /// Whether the run directory went.
    pub removed: io::Result<()>,
}

impl Host {
    /// A helper with a fresh run directory under `options.parent`; its programs' CPU time
    /// read from cgroups where this host lets it make them (herd-topo's `HERD_SERVER_CPU`
    /// chooses as in the lab).
    pub fn new(options: Options, stopping: Arc<AtomicBool>) -> io::Result<Host> {
        let cgroups = Cgroups::detect(Wanted::from_env().map_err(io::Error::other)?)
            .map_err(io::Error::other)?;
        let run = RunDir::create(&options.parent)?;
        let sup = Supervisor::new(Some(run.registry())).with_cgroups(cgroups);
        Ok(Host { options, run, sup, jobs: Vec::new(), stopping })
    }

    pub fn run_dir(&self) -> &Path {
        self.run.dir()
    }

    /// Answers one request.
    pub fn handle(&mut self, request: Request) -> Reply {
        let answer = match request {
            Request::Hello => Ok(Answer::Hello(self.hello())),
            Request::Start(spec) => self.start(&spec),
            Request::Ready { id, probe, timeout_ms } => self.ready(&id, &probe, timeout_ms),
            Request::Cpu { id } => self.cpu(&id),
            Request::Status { id } => self.status(&id),
            Request::GroupCpu { pid } => {
                let pgid = herd_topo::proc::process_group(pid)
                    .ok_or_else(|| format!("group_cpu: no process {pid} on this host"));
                pgid.and_then(|pgid| {
                    let seconds = herd_topo::proc::group_cpu_seconds(pgid).ok_or_else(|| {
                        format!("group_cpu: the CPU time of process group {pgid} cannot be read")
                    })?;
                    Ok(Answer::GroupCpu { pid, pgid, seconds })
                })
            }
            Request::TimeWait => match herd_topo::timewait::count() {
                Some(count) => {
                    Ok(Answer::TimeWait { count, bound: herd_topo::timewait::default_bound() })
                }
                None => Err("time_wait: /proc/net/tcp cannot be read on this host".to_owned()),
            },
            Request::Nic { toward } => match toward.parse::<std::net::IpAddr>() {
                Ok(peer) => herd_topo::nic::toward(peer)
                    .map(|nic| Answer::Nic { nic: nic.to_string() })
                    .map_err(|why| format!("nic: {why}")),
                Err(_) => Err(format!("nic: {toward:?} is not an IP address")),
            },
            Request::MakeDir { path, mode, owner } => {
                self.make_dir(&path, mode.unwrap_or(0o755), owner.as_deref())
            }
            Request::Stop { id, grace_ms } => self.stop(&id, grace_ms.unwrap_or(DEFAULT_GRACE_MS)),
            Request::ReadFile { path, max_bytes } => self.read_file(&path, max_bytes),
            Request::WriteFile { path, base64, append, mode } => {
                self.write_file(&path, &base64, append, mode.unwrap_or(0o644))
            }
            Request::Doctor => self.doctor(),
            Request::Clean => {
                Ok(Answer::Cleaned(rundir::clean(&self.options.parent, self.run.dir())))
            }
            Request::Ping => Ok(Answer::Pong),
            // The loop answers it, after ending the host.
            Request::Bye => Err("bye: not this helper's to answer".to_owned()),
        };
        match answer {
            Ok(a) => Reply::Ok(a),
            Err(message) => Reply::Error { message },
        }
    }

    /// Stops every program still running (process groups, cgroups) and removes the run
    /// directory.
    pub fn end(mut self) -> Ended {
        let pids: Vec<u32> = self.sup.running().iter().map(|r| r.pid).collect();
        let stopped = pids.into_iter().filter(|&pid| self.sup.exit_status(pid).is_none()).count();
        self.sup.stop_all(Duration::from_millis(DEFAULT_GRACE_MS));
        drop(self.sup);
        let run_dir = self.run.dir().to_path_buf();
        Ended { stopped, run_dir, removed: self.run.remove() }
    }

    /// The idle time after which the loop ends it (`Options::idle`).
    pub fn idle(&self) -> Option<std::time::Duration> {
        self.options.idle
    }

    fn hello(&self) -> Hello {
        Hello {
            protocol: PROTOCOL.to_owned(),
            herd: self.options.herd.clone(),
            hostname: facts::hostname(),
            cpus: facts::cpus(),
            online: facts::online(),
            kernel: facts::kernel(),
            accounting: self.sup.cpu_accounting().name().to_owned(),
            pid: std::process::id(),
            run_dir: self.run.dir().display().to_string(),
        }
    }

    fn pid_of(&self, id: &str) -> Result<u32, String> {
        self.jobs
            .iter()
            .find(|j| j.id == id)
            .map(|j| j.pid)
            .ok_or_else(|| format!("no program started as {id:?} runs on this host"))
    }

    fn start(&mut self, spec: &StartSpec) -> Result<Answer, String> {
        let id = &spec.id;
        check_id(id)?;
        if self.jobs.iter().any(|j| &j.id == id) {
            return Err(format!("a program started as {id:?} still runs: stop it first"));
        }
        if spec.argv.is_empty() {
            return Err(format!("start {id:?}: an empty command line"));
        }
        check_file_name(&spec.log).map_err(|e| format!("start {id:?}: log {e}"))?;
        let cpus = match &spec.cpus {
            None => CpuSet::All,
            Some(text) => {
                let set = CpuSet::parse(text).map_err(|e| format!("start {id:?}: {e}"))?;
                set.check(&cpuset::online()).map_err(|e| format!("start {id:?}: {e}"))?;
                set
            }
        };
        let argv: Vec<OsString> = spec.argv.iter().map(OsString::from).collect();
        let env: Vec<(OsString, OsString)> =
            spec.env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect();
        let log = self.run.dir().join(&spec.log);
        let spawn = Spawn {
            name: id,
            argv: &argv,
            env: &env,
            stdout: &log,
            stderr: &log,
            cpus: &cpus,
            netns: None,
        };
        let started = match &spec.cwd {
            None => self.sup.start(&spawn),
            Some(cwd) => {
                // The child inherits the helper's working directory: herd-topo's `Spawn` has
                // none of its own. Nothing else in the helper uses a relative path, and
                // requests are handled one at a time, so the change is seen by this start
                // alone.
                let back = std::env::current_dir()
                    .map_err(|e| format!("start {id:?}: the helper's own directory: {e}"))?;
                std::env::set_current_dir(cwd)
                    .map_err(|e| format!("start {id:?}: cannot enter {cwd}: {e}"))?;
                let started = self.sup.start(&spawn);
                let _ = std::env::set_current_dir(back);
                started
            }
        };
        let pid = started.map_err(|e| herd_stats::with_causes(&e))?;
        self.jobs.push(Job { id: id.clone(), pid });
        Ok(Answer::Started {
            id: id.clone(),
            pid,
            accounting: self.sup.cpu_accounting().name().to_owned(),
            log: spec.log.clone(),
        })
    }

    fn ready(&mut self, id: &str, probe: &Probe, timeout_ms: u64) -> Result<Answer, String> {
        let pid = self.pid_of(id)?;
        if timeout_ms > MAX_READY_MS {
            return Err(format!("ready {id:?}: timeout_ms {timeout_ms} is over {MAX_READY_MS}"));
        }
        let connect: Box<dyn Fn(Duration) -> bool> = match probe {
            Probe::Tcp(addr) => {
                let addr: SocketAddr = addr.parse().map_err(|e| {
                    format!("ready {id:?}: {addr:?} is not an address and port: {e}")
                })?;
                Box::new(move |limit| TcpStream::connect_timeout(&addr, limit).is_ok())
            }
            Probe::UnixSocket(path) => {
                let path = PathBuf::from(path);
                Box::new(move |_| UnixStream::connect(&path).is_ok())
            }
        };
        let timeout = Duration::from_millis(timeout_ms);
        let started = Instant::now();
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return Err(format!("ready {id:?}: the helper is stopping"));
            }
            if let Some(status) = self.sup.exit_status(pid) {
                let log_tail = self.log_tail(pid);
                return Ok(Answer::Ready(Readiness::Exited { how: describe(&status), log_tail }));
            }
            let left = timeout.saturating_sub(started.elapsed());
            if connect(left.clamp(Duration::from_millis(1), Duration::from_millis(250))) {
                return Ok(Answer::Ready(Readiness::Ready { after_ms: ms(started.elapsed()) }));
            }
            if started.elapsed() >= timeout {
                return Ok(Answer::Ready(Readiness::TimedOut { after_ms: ms(started.elapsed()) }));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The end of a started program's log, as text.
    fn log_tail(&self, pid: u32) -> String {
        let Some(r) = self.sup.running().iter().find(|r| r.pid == pid) else {
            return String::new();
        };
        read_part(&r.stderr, LOG_TAIL, true).map(|(text, _, _)| text).unwrap_or_default()
    }

    fn cpu(&self, id: &str) -> Result<Answer, String> {
        let pid = self.pid_of(id)?;
        let accounting = self.sup.cpu_accounting();
        let seconds = self.sup.cpu_seconds(pid).ok_or_else(|| {
            format!("cpu {id:?}: no CPU time of pid {pid} ({}): it has ended", accounting.name())
        })?;
        Ok(Answer::Cpu { id: id.to_owned(), seconds, accounting: accounting.name().to_owned() })
    }

    fn status(&mut self, id: &str) -> Result<Answer, String> {
        let pid = self.pid_of(id)?;
        let ended = self.sup.exit_status(pid).map(|status| Ending {
            how: describe(&status),
            code: status.code(),
            signal: status.signal(),
            log_tail: self.log_tail(pid),
        });
        Ok(Answer::Status { id: id.to_owned(), ended })
    }

    /// Makes `path` (relative, inside the run directory, without `..`) and its parents,
    /// with `mode`, given to `owner` when named.
    fn make_dir(&self, path: &str, mode: u32, owner: Option<&str>) -> Result<Answer, String> {
        use std::os::unix::fs::PermissionsExt as _;
        let refuse = |why: &str| format!("make_dir {path:?}: {why}");
        if mode > 0o7777 {
            return Err(refuse(&format!("mode {mode:o}: permission bits only")));
        }
        let rel = Path::new(path);
        let plain = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if path.is_empty() || !plain {
            return Err(refuse("a relative path inside the run directory, without `..`"));
        }
        let root = self.run.dir().canonicalize().map_err(|e| format!("the run directory: {e}"))?;
        let real = dirs_inside(&root, rel).map_err(|e| refuse(&e))?;
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(mode))
            .map_err(|e| refuse(&e.to_string()))?;
        if let Some(user) = owner {
            let (uid, gid) = herd_topo::user::user_ids(user)
                .ok_or_else(|| refuse(&format!("no user {user} on this host")))?;
            std::os::unix::fs::chown(&real, Some(uid), Some(gid))
                .map_err(|e| refuse(&format!("cannot give it to {user}: {e}")))?;
        }
        Ok(Answer::Made { path: path.to_owned() })
    }

    fn stop(&mut self, id: &str, grace_ms: u64) -> Result<Answer, String> {
        let pid = self.pid_of(id)?;
        if grace_ms > MAX_GRACE_MS {
            return Err(format!("stop {id:?}: grace_ms {grace_ms} is over {MAX_GRACE_MS}"));
        }
        self.jobs.retain(|j| j.pid != pid);
        let status = self.sup.stop_with_status(pid, Duration::from_millis(grace_ms)).flatten();
        Ok(Answer::Stopped {
            id: id.to_owned(),
            how: status.as_ref().map_or_else(|| "ended (status unknown)".to_owned(), describe),
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
        })
    }

    fn read_file(&self, path: &str, max_bytes: u64) -> Result<Answer, String> {
        let file = self.inside_run_dir(path)?;
        let (text, size, truncated) = read_part(&file, max_bytes.min(MAX_READ_BYTES), false)
            .map_err(|e| format!("read_file {path:?}: {e}"))?;
        Ok(Answer::File { path: path.to_owned(), text, size, truncated })
    }

    /// `path` (relative to the run directory, or absolute) when it names a file inside it,
    /// links resolved.
    fn inside_run_dir(&self, path: &str) -> Result<PathBuf, String> {
        let root = self.run.dir().canonicalize().map_err(|e| format!("the run directory: {e}"))?;
        let outside = || {
            format!(
                "read_file {path:?}: only files inside the helper's run directory {} are read",
                root.display()
            )
        };
        // `..` is refused as written, before the file system is asked anything about it.
        if Path::new(path).components().any(|c| c == std::path::Component::ParentDir) {
            return Err(outside());
        }
        let real =
            root.join(path).canonicalize().map_err(|e| format!("read_file {path:?}: {e}"))?;
        if !real.starts_with(&root) {
            return Err(outside());
        }
        if !real.is_file() {
            return Err(format!("read_file {path:?}: not a file"));
        }
        Ok(real)
    }

    /// Writes (or appends) one part of a file under the run directory, its directories
    /// made. The path is relative, without `..`, not one of the helper's own files, and the
    /// file is opened without following a link: nothing outside the run directory is
    /// written, whatever the path or the links already there.
    fn write_file(
        &self,
        path: &str,
        base64: &str,
        append: bool,
        mode: u32,
    ) -> Result<Answer, String> {
        use base64::Engine as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let refuse = |why: &str| format!("write_file {path:?}: {why}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(base64)
            .map_err(|e| refuse(&format!("its bytes are not base64: {e}")))?;
        if bytes.len() > MAX_WRITE_PART {
            return Err(refuse(&format!(
                "a part of {} bytes: at most {MAX_WRITE_PART}",
                bytes.len()
            )));
        }
        if mode > 0o777 {
            return Err(refuse(&format!("mode {mode:o}: permission bits only (0 to 777)")));
        }
        let rel = Path::new(path);
        let plain = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if path.is_empty() || !plain {
            return Err(refuse("a relative path inside the run directory, without `..`"));
        }
        let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
        if let Some(first) = first {
            if first == "owner" || first == "doctor.out" || first.starts_with("herd-") {
                return Err(refuse("one of the helper's own files"));
            }
        }
        let root = self.run.dir().canonicalize().map_err(|e| format!("the run directory: {e}"))?;
        let file = root.join(rel);
        if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            dirs_inside(&root, parent).map_err(|e| refuse(&format!("its directory: {e}")))?;
        }
        let mut open = std::fs::OpenOptions::new();
        open.write(true).mode(mode).custom_flags(libc::O_NOFOLLOW);
        if append {
            open.append(true).create(false);
        } else {
            open.create(true).truncate(true);
        }
        let mut f = open.open(&file).map_err(|e| refuse(&e.to_string()))?;
        let before = f.metadata().map_err(|e| refuse(&e.to_string()))?.len();
        if before + bytes.len() as u64 > MAX_WRITE_FILE {
            return Err(refuse(&format!("over {MAX_WRITE_FILE} bytes in all")));
        }
        f.write_all(&bytes).map_err(|e| refuse(&e.to_string()))?;
        Ok(Answer::Written { path: path.to_owned(), size: before + bytes.len() as u64 })
    }

    fn doctor(&mut self) -> Result<Answer, String> {
        let Some(argv) = self.options.doctor.clone() else {
            return Err("doctor: this helper has no doctor to run".to_owned());
        };
        let log = self.run.dir().join("doctor.out");
        let captured = self.sup.capture("doctor", &argv, &log, DOCTOR_LIMIT);
        Ok(Answer::Doctor { text: captured.text, failure: captured.failure })
    }
}

/// Makes `rel` (plain components) under `root`, one directory at a time, never through a
/// link: a link or a file in the way is refused before anything is made beyond it, so
/// nothing is ever made outside `root`.
fn dirs_inside(root: &Path, rel: &Path) -> Result<PathBuf, String> {
    let mut dir = root.to_path_buf();
    for part in rel.components() {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "it leads out of the run directory: {} is a link or a file",
                    dir.display()
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        }
    }
    Ok(dir)
}

/// herd's name for a program: short, and safe in messages and file names.
fn check_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then_some(())
        .ok_or_else(|| format!("start: id {id:?} is not 1 to 64 letters, digits, '-', '_' or '.'"))
}

/// A log's name: a plain file name in the run directory, none of the helper's own files.
fn check_file_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\0']);
    if !plain {
        return Err(format!("{name:?} is not a plain file name"));
    }
    if name == "owner" || name == "doctor.out" || name.starts_with("herd-") {
        return Err(format!("{name:?} is one of the helper's own files"));
    }
    Ok(())
}

/// At most `max` bytes of `path`, from its start (or its end, with `tail`), as text; and the
/// file's size and whether more was there.
fn read_part(path: &Path, max: u64, tail: bool) -> io::Result<(String, u64, bool)> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    if tail && size > max {
        f.seek(SeekFrom::Start(size - max))?;
    }
    let mut bytes = Vec::new();
    f.take(max).read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), size, size > max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_log_names_are_checked() {
        for good in ["server", "php-fpm", "a.b_c", &"x".repeat(64)] {
            assert!(check_id(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(check_id(bad).unwrap_err().contains("is not 1 to 64"), "{bad}");
        }
        assert!(check_file_name("server.log").is_ok());
        for bad in ["", ".", "..", "a/b", "/etc/passwd", "a\0b"] {
            assert!(check_file_name(bad).unwrap_err().contains("plain"), "{bad:?}");
        }
        for own in ["owner", "doctor.out", "herd-lab-1-0"] {
            assert!(check_file_name(own).unwrap_err().contains("own files"), "{own}");
        }
    }

    /// A helper of its own under a scratch parent.
    fn helper(tag: &str) -> (Host, PathBuf) {
        let parent =
            std::env::temp_dir().join(format!("herd-hosttest-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir_all(&parent).unwrap();
        let options =
            Options { herd: "herd test".into(), doctor: None, parent: parent.clone(), idle: None };
        (Host::new(options, Arc::new(AtomicBool::new(false))).unwrap(), parent)
    }

    fn ok(reply: Reply) -> Answer {
        match reply {
            Reply::Ok(a) => a,
            Reply::Error { message } => panic!("{message}"),
        }
    }

    #[test]
    fn status_says_running_then_how_it_ended_with_its_log() {
        let (mut h, parent) = helper("status");
        let start = |h: &mut Host, id: &str, script: &str| {
            ok(h.handle(Request::Start(StartSpec {
                id: id.into(),
                argv: vec!["sh".into(), "-c".into(), script.into()],
                env: vec![],
                cwd: None,
                cpus: None,
                log: format!("{id}.log"),
            })))
        };
        start(&mut h, "sleeper", "sleep 30");
        start(&mut h, "failer", "echo bind failed; exit 3");
        let status = |h: &mut Host, id: &str| ok(h.handle(Request::Status { id: id.into() }));
        assert_eq!(status(&mut h, "sleeper"), Answer::Status { id: "sleeper".into(), ended: None });
        let deadline = Instant::now() + Duration::from_secs(10);
        let ended = loop {
            if let Answer::Status { ended: Some(e), .. } = status(&mut h, "failer") {
                break e;
            }
            assert!(Instant::now() < deadline, "sh did not end");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(
            (ended.how.as_str(), ended.code, ended.signal),
            ("exit status 3", Some(3), None)
        );
        assert!(ended.log_tail.contains("bind failed"), "{ended:?}");
        let unknown = h.handle(Request::Status { id: "nobody".into() });
        assert!(matches!(unknown, Reply::Error { ref message } if message.contains("\"nobody\"")));
        let ended = h.end();
        assert_eq!(ended.stopped, 1, "the sleeper");
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn the_nic_toward_an_address_is_said_and_a_bad_one_refused() {
        let (mut h, parent) = helper("nic");
        let nic = ok(h.handle(Request::Nic { toward: "127.0.0.1".into() }));
        let Answer::Nic { nic } = nic else { panic!("{nic:?}") };
        assert!(nic.starts_with("lo (127.0.0.1): no driver, speed unknown, MTU "), "{nic}");
        let bad = h.handle(Request::Nic { toward: "eth0".into() });
        assert!(
            matches!(bad, Reply::Error { ref message } if message == "nic: \"eth0\" is not an IP address"),
            "{bad:?}"
        );
        h.end();
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn directories_are_made_inside_the_run_directory_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let (mut h, parent) = helper("make-dir");
        let run = h.run_dir().to_path_buf();
        let made =
            h.handle(Request::MakeDir { path: "cells/1/logs".into(), mode: None, owner: None });
        assert_eq!(ok(made), Answer::Made { path: "cells/1/logs".into() });
        let mode = std::fs::metadata(run.join("cells/1/logs")).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o755);
        ok(h.handle(Request::MakeDir { path: "share".into(), mode: Some(0o1777), owner: None }));
        let mode = std::fs::metadata(run.join("share")).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o1777);
        std::os::unix::fs::symlink(&parent, run.join("out")).unwrap();
        for (path, says) in [
            ("../x", "without `..`"),
            ("/tmp/x", "without `..`"),
            ("", "without `..`"),
            ("out/x", "leads out of the run directory"),
        ] {
            match h.handle(Request::MakeDir { path: path.into(), mode: None, owner: None }) {
                Reply::Error { message } => assert!(message.contains(says), "{path}: {message}"),
                other => panic!("{path}: {other:?}"),
            }
        }
        assert!(!parent.join("x").exists());
        // Nor does a file's directory go through the link.
        let w = h.handle(Request::WriteFile {
            path: "out/y/f".into(),
            base64: String::new(),
            append: false,
            mode: None,
        });
        assert!(matches!(w, Reply::Error { ref message } if message.contains("a link or a file")));
        assert!(!parent.join("y").exists());
        let nobody = h.handle(Request::MakeDir {
            path: "w".into(),
            mode: None,
            owner: Some("herd-no-such-user-7f3a".into()),
        });
        assert!(matches!(nobody, Reply::Error { ref message } if message.contains("no user")));
        h.end();
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn parts_of_files_are_read_from_either_end() {
        let dir = std::env::temp_dir().join(format!("herd-hosttest-part-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_part(&f, 4, false).unwrap(), ("0123".into(), 10, true));
        assert_eq!(read_part(&f, 4, true).unwrap(), ("6789".into(), 10, true));
        assert_eq!(read_part(&f, 10, true).unwrap(), ("0123456789".into(), 10, false));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
