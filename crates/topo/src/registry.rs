//! What a lab run started, on disk: its run directory (`$TMPDIR/herd-lab-<pid>-<n>`) holds an
//! `owner` file (the lab's PID and start time), a `pids` file (one line per program: PID,
//! start time, name), a `netns` file (one network namespace per line) and a `cgroups` file (one
//! cgroup directory per line, `cgroup.rs`). After a crash or a kill -9, `herd lab clean` reads
//! them back, stops exactly those processes, checking each start time so that a PID the kernel
//! has since given to someone else is never touched, deletes those namespaces and cgroups, then
//! removes the directory. Namespaces and cgroups with herd's prefix that no live run recorded
//! and whose maker (the PID in their name) is gone are deleted too.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cgroup;
use crate::net::netns;
use crate::proc::{signal_group, start_time};

/// Run directories start with this; nothing else in the temporary directory is touched.
pub const RUN_DIR_PREFIX: &str = "herd-lab-";

/// A lab run's directory and its record of started programs.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    /// Makes a fresh run directory under `parent`, readable by all (servers that drop to an
    /// unprivileged user when herd runs as root must read the files in it).
    pub fn create(parent: &Path) -> io::Result<Registry> {
        let pid = std::process::id();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!("{RUN_DIR_PREFIX}{pid}-{nanos:08x}"));
        fs::create_dir(&dir)?;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755))?;
        fs::write(dir.join("owner"), format!("{}\n", owner()))?;
        Ok(Registry { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Notes that `pid` (named `name`) was started for this run.
    pub fn record(&self, pid: u32, name: &str) -> io::Result<()> {
        let started = start_time(pid).unwrap_or(0);
        let mut f = OpenOptions::new().create(true).append(true).open(self.dir.join("pids"))?;
        writeln!(f, "{pid} {started} {name}")
    }

    /// Notes that the network namespace `name` is about to be made for this run.
    pub fn record_netns(&self, name: &str) -> io::Result<()> {
        let mut f = OpenOptions::new().create(true).append(true).open(self.dir.join("netns"))?;
        writeln!(f, "{name}")
    }

    /// Notes that the cgroup `dir` is about to be made for this run.
    pub fn record_cgroup(&self, dir: &Path) -> io::Result<()> {
        let mut f = OpenOptions::new().create(true).append(true).open(self.dir.join("cgroups"))?;
        writeln!(f, "{}", dir.display())
    }

    /// Removes the run directory and everything in it.
    pub fn remove(self) -> io::Result<()> {
        fs::remove_dir_all(&self.dir)
    }
}

/// This process as a run directory's `owner` file names its lab run: `PID START_TIME`. The
/// lab also stores it with an experiment, so a later `herd lab run --resume` can tell a run
/// that died from one that still goes ([`owner_alive`]).
pub fn owner() -> String {
    let pid = std::process::id();
    format!("{pid} {}", start_time(pid).unwrap_or(0))
}

/// Whether the lab run an [`owner`] text names still runs: the same PID with the same start
/// time, so a PID the kernel has since given to another process does not count. None: the
/// text is not an owner's.
pub fn owner_alive(owner: &str) -> Option<bool> {
    let mut it = owner.split_whitespace();
    let pid: u32 = it.next()?.parse().ok()?;
    let started: u64 = it.next()?.parse().ok()?;
    if it.next().is_some() {
        return None;
    }
    Some(started != 0 && start_time(pid) == Some(started))
}

/// What `clean` found and did.
#[derive(Debug, Default)]
pub struct Cleaned {
    /// Run directories removed.
    pub dirs: Vec<PathBuf>,
    /// Processes stopped: PID and name.
    pub stopped: Vec<(u32, String)>,
    /// Network namespaces deleted.
    pub namespaces: Vec<String>,
    /// herd's cgroups removed.
    pub cgroups: Vec<PathBuf>,
    /// Run directories left alone because the lab run that owns them is still going.
    pub in_use: Vec<(PathBuf, u32)>,
    /// Directories that could not be removed, with the reason.
    pub errors: Vec<(PathBuf, String)>,
}

/// Stops what crashed lab runs left running, deletes their network namespaces and removes
/// their run directories; a run directory whose owner still runs is left alone.
pub fn clean(parent: &Path) -> Cleaned {
    let mut out = Cleaned::default();
    let mut kept_netns: Vec<String> = Vec::new();
    clean_dirs(parent, &mut out, &mut kept_netns);
    // Namespaces no registry names (a run dir removed by hand, another TMPDIR): deleted
    // when the herd process in their name is gone.
    for name in netns::list_herd() {
        if kept_netns.contains(&name) || maker_alive(&name) {
            continue;
        }
        remove_netns(&name, &mut out);
    }
    // Likewise cgroups beside this process's own whose maker is gone.
    for dir in cgroup::orphans() {
        remove_cgroup(&dir, &mut out);
    }
    out
}

/// As [`clean`], but only what the run directories under `parent` recorded: no sweep of
/// herd's unrecorded namespaces and cgroups. For `herd host`'s `clean`, which answers for
/// what its own earlier helpers started and nothing else on the host (a lab run's leftovers
/// there are `herd lab clean`'s).
pub fn clean_recorded(parent: &Path) -> Cleaned {
    let mut out = Cleaned::default();
    clean_dirs(parent, &mut out, &mut Vec::new());
    out
}

fn clean_dirs(parent: &Path, out: &mut Cleaned, kept_netns: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(RUN_DIR_PREFIX))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    // Every live run's namespaces first: a name a dead run recorded is that dead run's to
    // lose unless a live run (one that got its PID since) recorded it too.
    for dir in &dirs {
        if live_owner(dir).is_some() {
            kept_netns.extend(recorded_netns(dir));
        }
    }
    for dir in dirs {
        if let Some(owner) = live_owner(&dir) {
            out.in_use.push((dir, owner));
            continue;
        }
        for (pid, name) in live_processes(&dir) {
            signal_group(pid, libc::SIGTERM);
            out.stopped.push((pid, name));
        }
        // A short grace, then whatever did not stop is killed.
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < deadline && !live_processes(&dir).is_empty() {
            std::thread::sleep(Duration::from_millis(20));
        }
        for (pid, _) in live_processes(&dir) {
            signal_group(pid, libc::SIGKILL);
        }
        // The owner is gone (its PID and start time no longer match), so what it recorded
        // is its own: whether a process with the PID in a name runs says nothing, as PIDs
        // wrap (at 32,768 by default, within one test suite) and a thread may hold it.
        for name in recorded_netns(&dir).into_iter().rev() {
            if netns::exists(&name) && !kept_netns.contains(&name) && !made_here(&name) {
                remove_netns(&name, out);
            }
        }
        for cg in recorded_cgroups(&dir) {
            let name = cg.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if cg.exists() && !made_here(&name) {
                remove_cgroup(&cg, out);
            }
        }
        match fs::remove_dir_all(&dir) {
            Ok(()) => out.dirs.push(dir),
            // Gone meanwhile (another clean came first): nothing is left, as wanted.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => out.errors.push((dir, e.to_string())),
        }
    }
}

/// Kills what runs in the herd namespace `name` and deletes it ([`netns::remove`]).
fn remove_netns(name: &str, out: &mut Cleaned) {
    match netns::remove(name, Duration::from_secs(3)) {
        Ok(killed) => {
            for pid in killed {
                out.stopped.push((pid, format!("a process in {name}")));
            }
            out.namespaces.push(name.to_string());
        }
        Err(e) => out.errors.push((netns::path(name), e.to_string())),
    }
}

/// Kills what is left in herd's cgroup `dir` and removes it ([`cgroup::remove_dir`]).
fn remove_cgroup(dir: &Path, out: &mut Cleaned) {
    match cgroup::remove_dir(dir, Duration::from_secs(3)) {
        Ok(killed) => {
            for pid in killed {
                out.stopped.push((pid, format!("a process in {}", dir.display())));
            }
            out.cgroups.push(dir.to_path_buf());
        }
        Err(e) => out.errors.push((dir.to_path_buf(), e.to_string())),
    }
}

/// The cgroups a run directory recorded: absolute paths with herd's names only.
fn recorded_cgroups(dir: &Path) -> Vec<PathBuf> {
    fs::read_to_string(dir.join("cgroups"))
        .map(|t| t.lines().map(|l| PathBuf::from(l.trim())).filter(|p| p.is_absolute()).collect())
        .unwrap_or_default()
}

/// The namespaces a run directory recorded, in the order they were made.
fn recorded_netns(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("netns"))
        .map(|t| {
            t.lines()
                .map(str::trim)
                .filter(|n| n.starts_with(netns::PREFIX) && !n.contains('/'))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a name of herd's (`herd-<pid>-…`) carries this process's own PID.
fn made_here(name: &str) -> bool {
    let pid = name.strip_prefix(netns::PREFIX).and_then(|rest| rest.split('-').next());
    pid.and_then(|p| p.parse::<u32>().ok()) == Some(std::process::id())
}

/// Whether the process whose PID a namespace's name carries (`herd-<pid>-…`) still runs.
/// A name without one counts as alive: it is left alone. PIDs wrap (at 32,768 by default),
/// so a process other than herd that started after the namespace was made cannot be its
/// maker: the PID was taken again, and the maker is gone. Within a second of the namespace
/// (a start is counted in clock ticks) it counts as alive.
fn maker_alive(name: &str) -> bool {
    let pid = name
        .strip_prefix(netns::PREFIX)
        .and_then(|rest| rest.split('-').next())
        .and_then(|p| p.parse::<u32>().ok());
    let Some(pid) = pid else { return true };
    if pid == std::process::id() {
        return true;
    }
    let Some(started) = started_at(pid) else {
        return Path::new(&format!("/proc/{pid}")).exists();
    };
    // A herd process is taken for the maker whatever the clocks say: the comparison below
    // mixes the wall clock at the namespace's making with the boot clock at the process's
    // start, and a clock stepped forward between them must not make a live run look dead.
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim_end() == "herd" {
        return true;
    }
    let made = fs::metadata(netns::path(name)).and_then(|m| m.modified()).ok();
    made.is_none_or(|made| started <= made + Duration::from_secs(1))
}

/// When `pid` started, on the wall clock: its start in clock ticks after boot, plus the
/// boot time (now, less CLOCK_BOOTTIME: /proc/stat's `btime` is whole seconds). None when no
/// such process (or thread) runs.
fn started_at(pid: u32) -> Option<SystemTime> {
    let ticks = start_time(pid)?;
    // SAFETY: sysconf has no memory effects.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    let mut up = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only to `up`, which lives for the call.
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut up) } != 0 {
        return None;
    }
    let up = Duration::new(u64::try_from(up.tv_sec).ok()?, u32::try_from(up.tv_nsec).ok()?);
    let boot = SystemTime::now().checked_sub(up)?;
    Some(boot + Duration::from_secs_f64(ticks as f64 / per_second.max(1) as f64))
}

/// The owner's PID when the lab run that made `dir` is still alive.
fn live_owner(dir: &Path) -> Option<u32> {
    let text = fs::read_to_string(dir.join("owner")).ok()?;
    let pid: u32 = text.split_whitespace().next()?.parse().ok()?;
    (pid != std::process::id() && owner_alive(&text)?).then_some(pid)
}

/// Recorded processes that still run (same PID, same start time).
fn live_processes(dir: &Path) -> Vec<(u32, String)> {
    let Ok(text) = fs::read_to_string(dir.join("pids")) else { return Vec::new() };
    text.lines()
        .filter_map(|line| {
            let mut it = line.splitn(3, ' ');
            let pid: u32 = it.next()?.parse().ok()?;
            let started: u64 = it.next()?.parse().ok()?;
            let name = it.next().unwrap_or("").to_string();
            (started != 0 && start_time(pid) == Some(started)).then_some((pid, name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Spawn, Supervisor};
    use std::ffi::OsString;

    #[test]
    fn an_owner_is_alive_while_its_process_with_its_start_time_runs() {
        let me = owner();
        assert_eq!(owner_alive(&me), Some(true), "{me}");
        let pid = std::process::id();
        let started = start_time(pid).unwrap();
        // The same PID with another start time: a later process, not the lab run.
        assert_eq!(owner_alive(&format!("{pid} {}", started + 1)), Some(false));
        assert_eq!(owner_alive(&format!("{} 1", pid + 1_000_000)), Some(false));
        for junk in ["", "12", "x 1", "1 y", "1 2 3"] {
            assert_eq!(owner_alive(junk), None, "{junk:?}");
        }
    }

    /// A registry under `parent` (made) whose supervisor started `sleep 30`: the registry's
    /// directory, the sleeper's PID, its supervisor.
    pub(super) fn a_sleeper(parent: &Path) -> (PathBuf, u32, Supervisor) {
        fs::create_dir_all(parent).unwrap();
        let reg = Registry::create(parent).unwrap();
        let dir = reg.dir().to_path_buf();
        let argv: Vec<OsString> = ["sleep", "30"].iter().map(OsString::from).collect();
        let mut sup = Supervisor::new(Some(reg));
        let pid = sup.start(&Spawn::logged("sleeper", &argv, &dir.join("log"))).unwrap();
        (dir, pid, sup)
    }

    #[test]
    fn a_process_start_is_on_the_wall_clock() {
        let started = started_at(std::process::id()).unwrap();
        let now = SystemTime::now();
        // This test process started before now (to a clock tick), and not a day ago.
        assert!(started <= now + Duration::from_millis(20), "{started:?} after {now:?}");
        assert!(started + Duration::from_secs(86_400) > now, "{started:?}");
        assert_eq!(started_at(u32::MAX - 1), None);
    }

    #[test]
    fn clean_stops_recorded_processes_of_a_dead_owner_only() {
        let parent = std::env::temp_dir().join(format!("herd-topo-clean-{}", std::process::id()));
        let (dir, pid, mut sup) = a_sleeper(&parent);
        // This process is the owner: the directory is in use.
        fs::write(dir.join("owner"), format!("{} {}\n", 1, start_time(1).unwrap_or(1))).unwrap();
        let c = clean(&parent);
        assert_eq!(c.in_use.len(), 1, "{c:?}");
        assert!(start_time(pid).is_some());
        // The owner is gone (a PID with another start time): the sleeper is stopped.
        fs::write(dir.join("owner"), format!("{} 1\n", std::process::id() + 1_000_000)).unwrap();
        let c = clean(&parent);
        assert_eq!(c.stopped, vec![(pid, "sleeper".to_string())]);
        assert_eq!(c.dirs, vec![dir.clone()]);
        assert!(!dir.exists());
        let _ = sup.exit_status(pid); // reap
        drop(sup);
        fs::remove_dir_all(&parent).unwrap();
    }
}

#[cfg(test)]
mod recorded_only {
    use super::*;

    /// What a run directory of a gone owner recorded is stopped and removed, as by `clean`.
    #[test]
    fn clean_recorded_stops_what_a_gone_owner_recorded() {
        let parent = std::env::temp_dir().join(format!("herd-topo-rec-{}", std::process::id()));
        let (dir, pid, mut sup) = super::tests::a_sleeper(&parent);
        fs::write(dir.join("owner"), format!("{} 1\n", std::process::id() + 1_000_000)).unwrap();
        let c = clean_recorded(&parent);
        assert_eq!(c.stopped, vec![(pid, "sleeper".to_string())]);
        assert_eq!(c.dirs, vec![dir.clone()]);
        assert!(!dir.exists());
        let _ = sup.exit_status(pid); // reap
        drop(sup);
        fs::remove_dir_all(&parent).unwrap();
    }
}

#[cfg(test)]
mod unrecorded {
    use std::ffi::OsString;

    use super::*;
    use crate::proc::{group_members, ProcError, Spawn, Supervisor};

    #[test]
    fn a_start_that_cannot_be_recorded_is_stopped_and_refused() {
        let parent = std::env::temp_dir().join(format!("herd-topo-norec-{}", std::process::id()));
        fs::create_dir_all(&parent).unwrap();
        let reg = Registry::create(&parent).unwrap();
        // The registry's pids file cannot be created: a directory stands in its place.
        fs::create_dir_all(reg.dir().join("pids")).unwrap();
        let log = parent.join("log");
        let argv: Vec<OsString> = ["sleep", "30"].iter().map(OsString::from).collect();
        let spawn = Spawn::logged("sleeper", &argv, &log);
        let mut sup = Supervisor::new(Some(reg));
        let err = sup.start(&spawn).unwrap_err();
        let ProcError::Registry { pid, .. } = err else { panic!("{err}") };
        assert!(err.to_string().contains("herd lab clean"), "{err}");
        assert_eq!(group_members(pid), Vec::<u32>::new(), "the unrecorded process still runs");
        assert!(sup.running().is_empty());
        let err =
            sup.run(&spawn, Duration::from_secs(5), Duration::from_secs(1), None).unwrap_err();
        assert!(matches!(err, ProcError::Registry { .. }), "{err}");
        fs::remove_dir_all(&parent).unwrap();
    }
}
