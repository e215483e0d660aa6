//! The servers' CPU time, read exactly from a cgroup of their own. A program the lab starts is
//! put, between fork and exec, into a fresh cgroup (`herd-<pid>-<n>`, under herd's own): every
//! process it forks inherits it, so the kernel's counter for the cgroup holds the CPU time of
//! all of them, the threads and processes that have ended included (php-cgi children that live
//! for one request, workers that double-fork or leave the process group). The per-process
//! method it replaces reads the live threads of the process group and the children they
//! reaped, and cannot see a process that left the group or was reaped by someone else.
//!
//! Which hierarchy: a cgroup v1 `cpuacct` hierarchy of its own (`cpuacct.usage`, ns), else the
//! v2 unified one (`cpu.stat`'s `usage_usec`, kept for every cgroup without any controller),
//! else a v1 `cpuacct` mounted with `cpu` (its new cgroup is also a scheduling group, which
//! the others are not). herd must be able to make a cgroup beside itself and move a process
//! into it (root, or a delegated v2 sub-tree); [`Cgroups::detect`] tries once, and where it
//! cannot the lab keeps the per-process method and says so ([`CpuAccounting`]).
//!
//! Each cgroup is written to the run's registry before it is made and removed when its
//! program stops (any process left in it is killed first: it can only descend from the
//! program herd started); `herd lab clean` removes those of a crashed run, and any other
//! `herd-<pid>-…` cgroup beside herd's whose maker is gone.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Names of herd's cgroups start with this (then the maker's PID): nothing else is removed.
pub const PREFIX: &str = "herd-";

/// The environment variable that picks the method: `auto` (the default), `per-process`,
/// `cgroup-v1` or `cgroup-v2` (refused where herd cannot make one).
pub const ENV: &str = "HERD_SERVER_CPU";

/// How the servers' CPU time is read; stored with every experiment and said in its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuAccounting {
    /// `cpuacct.usage` of a cgroup v1 made for each server process.
    CgroupV1,
    /// `cpu.stat` `usage_usec` of a cgroup v2 made for each server process.
    CgroupV2,
    /// The process group's live threads (schedstat) and the children they reaped.
    PerProcess,
}

impl CpuAccounting {
    pub const ALL: [CpuAccounting; 3] =
        [CpuAccounting::CgroupV1, CpuAccounting::CgroupV2, CpuAccounting::PerProcess];

    /// The short name, as [`ENV`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            CpuAccounting::CgroupV1 => "cgroup-v1",
            CpuAccounting::CgroupV2 => "cgroup-v2",
            CpuAccounting::PerProcess => "per-process",
        }
    }

    pub fn from_name(name: &str) -> Option<CpuAccounting> {
        CpuAccounting::ALL.into_iter().find(|a| a.name() == name)
    }

    pub fn is_cgroup(self) -> bool {
        self != CpuAccounting::PerProcess
    }
}

/// The method in a sentence, as the disclosure says it.
impl fmt::Display for CpuAccounting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuAccounting::CgroupV1 => {
                "cgroup v1: cpuacct.usage of a cgroup made for each server process \
                 (every process it forks, ended ones included)"
            }
            CpuAccounting::CgroupV2 => {
                "cgroup v2: cpu.stat usage_usec of a cgroup made for each server process \
                 (every process it forks, ended ones included)"
            }
            CpuAccounting::PerProcess => {
                "per process: schedstat of the process group's live threads + the children \
                 they reaped"
            }
        })
    }
}

/// What [`ENV`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// A cgroup where herd can make one, else per process.
    Auto,
    Only(CpuAccounting),
}

impl Wanted {
    /// From [`ENV`]; unset or empty is `Auto`.
    pub fn from_env() -> Result<Wanted, CgroupError> {
        match std::env::var(ENV) {
            Err(_) => Ok(Wanted::Auto),
            Ok(v) => Wanted::parse(&v),
        }
    }

    pub fn parse(value: &str) -> Result<Wanted, CgroupError> {
        match value.trim() {
            "" | "auto" => Ok(Wanted::Auto),
            v => CpuAccounting::from_name(v)
                .map(Wanted::Only)
                .ok_or_else(|| CgroupError::Unknown(v.to_owned())),
        }
    }
}

/// Why the method asked for cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("{ENV}={0:?} is not a method: use auto, per-process, cgroup-v1 or cgroup-v2")]
    Unknown(String),
    #[error("{ENV} asks for {0}, and this system mounts no such hierarchy for herd")]
    NotMounted(&'static str),
    #[error("{ENV} asks for {what}, and herd cannot make a cgroup in {parent}")]
    NotWritable { what: &'static str, parent: PathBuf, source: io::Error },
}

/// herd's own cgroups: on a v1 `cpuacct` hierarchy (and whether `cpu` shares it), and on the
/// v2 unified one.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Places {
    pub v1: Option<PathBuf>,
    pub v1_with_cpu: bool,
    pub v2: Option<PathBuf>,
}

/// Where herd's cgroups are, from `/proc/self/cgroup` and `/proc/self/mountinfo`.
pub fn places(proc_cgroup: &str, mountinfo: &str) -> Places {
    let mut out = Places::default();
    let mounts: Vec<Mount<'_>> = mountinfo.lines().filter_map(parse_mount).collect();
    for line in proc_cgroup.lines() {
        // "hierarchy-id:controllers:path"; the path may itself hold ':'.
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            if let Some(m) = mounts.iter().find(|m| m.fstype == "cgroup2") {
                out.v2 = Some(m.dir(path));
            }
        } else if controllers.split(',').any(|c| c == "cpuacct") {
            let m = mounts
                .iter()
                .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "cpuacct"));
            if let Some(m) = m {
                out.v1 = Some(m.dir(path));
                out.v1_with_cpu = controllers.split(',').any(|c| c == "cpu");
            }
        }
    }
    out
}

/// One line of /proc/self/mountinfo, the fields needed.
struct Mount<'a> {
    /// The hierarchy's directory mounted ("/" unless a sub-tree is bind-mounted).
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    /// Super-block options: for cgroup v1 they name the controllers ("rw,cpu,cpuacct").
    options: &'a str,
}

impl Mount<'_> {
    /// The directory of the cgroup `path` (relative to the hierarchy's root) in this mount.
    fn dir(&self, path: &str) -> PathBuf {
        let rel = path.strip_prefix(self.root).unwrap_or(path).trim_start_matches('/');
        Path::new(self.point).join(rel)
    }
}

/// "id parent maj:min root mount-point options [optional…] - fstype source super-options".
fn parse_mount(line: &str) -> Option<Mount<'_>> {
    let (left, right) = line.split_once(" - ")?;
    let mut l = left.split(' ');
    let root = l.nth(3)?;
    let point = l.next()?;
    let mut r = right.split(' ');
    let fstype = r.next()?;
    let options = r.nth(1)?;
    Some(Mount { root, point, fstype, options })
}

/// Where herd makes its cgroups, one per program started, and which counter it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroups {
    accounting: CpuAccounting,
    parent: PathBuf,
}

/// Numbers the cgroups this process makes, so that two supervisors never pick one name.
static NEXT: AtomicU32 = AtomicU32::new(0);

impl Cgroups {
    /// The method `wanted` gives on this machine: Some where herd can make cgroups (tried
    /// once, with a cgroup made and removed), None for the per-process method.
    pub fn detect(wanted: Wanted) -> Result<Option<Cgroups>, CgroupError> {
        if wanted == Wanted::Only(CpuAccounting::PerProcess) {
            return Ok(None);
        }
        let cgroup = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        choose(&places(&cgroup, &mountinfo), wanted, probe)
    }

    /// Cgroups of `accounting` under `parent`, untried (tests, and [`choose`]).
    pub fn at(accounting: CpuAccounting, parent: PathBuf) -> Cgroups {
        Cgroups { accounting, parent }
    }

    pub fn accounting(&self) -> CpuAccounting {
        self.accounting
    }

    pub fn parent(&self) -> &Path {
        &self.parent
    }

    /// The directory of the next cgroup to make: record it, then [`Cgroup::create`] it.
    pub fn next_dir(&self) -> PathBuf {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.parent.join(format!("{PREFIX}{}-{n}", std::process::id()))
    }
}

/// The first hierarchy that `wanted` allows and `probe` can make a cgroup in: v1 `cpuacct`
/// alone, v2, then v1 `cpuacct` with `cpu`. With [`Wanted::Auto`] a failed probe falls back;
/// with a method named, it is the error.
fn choose(
    places: &Places,
    wanted: Wanted,
    probe: impl Fn(&Cgroups) -> io::Result<()>,
) -> Result<Option<Cgroups>, CgroupError> {
    let v1 = places.v1.clone().map(|p| Cgroups::at(CpuAccounting::CgroupV1, p));
    let v2 = places.v2.clone().map(|p| Cgroups::at(CpuAccounting::CgroupV2, p));
    let order: Vec<Option<Cgroups>> = if places.v1_with_cpu { vec![v2, v1] } else { vec![v1, v2] };
    let mut candidates = order.into_iter().flatten();
    match wanted {
        Wanted::Only(CpuAccounting::PerProcess) => Ok(None),
        Wanted::Auto => Ok(candidates.find(|c| probe(c).is_ok())),
        Wanted::Only(a) => {
            let c =
                candidates.find(|c| c.accounting == a).ok_or(CgroupError::NotMounted(a.name()))?;
            probe(&c).map_err(|source| CgroupError::NotWritable {
                what: a.name(),
                parent: c.parent.clone(),
                source,
            })?;
            Ok(Some(c))
        }
    }
}

/// Makes a cgroup under `c`'s parent and removes it: can herd make one, read its counter and
/// move a process into it (write `cgroup.procs` there, and in v2 in the parent too, the
/// common ancestor of where a child starts and where it goes)?
fn probe(c: &Cgroups) -> io::Result<()> {
    let dir = c.next_dir();
    fs::create_dir(&dir)?;
    let tried = (|| {
        let g = Cgroup { dir: dir.clone(), accounting: c.accounting };
        g.procs_file()?;
        if c.accounting == CpuAccounting::CgroupV2 {
            OpenOptions::new().write(true).open(c.parent.join("cgroup.procs"))?;
        }
        g.read_cpu_seconds().map(|_| ())
    })();
    let removed = fs::remove_dir(&dir);
    tried.and(removed)
}

/// One cgroup herd made for one program.
#[derive(Debug)]
pub struct Cgroup {
    dir: PathBuf,
    accounting: CpuAccounting,
}

impl Cgroup {
    /// Makes the cgroup `dir` (a [`Cgroups::next_dir`], recorded first).
    pub fn create(dir: PathBuf, accounting: CpuAccounting) -> io::Result<Cgroup> {
        fs::create_dir(&dir)?;
        Ok(Cgroup { dir, accounting })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its `cgroup.procs`, opened for writing (close-on-exec): a child writes "0" to it
    /// between fork and exec to move itself in.
    pub fn procs_file(&self) -> io::Result<File> {
        OpenOptions::new().write(true).open(self.dir.join("cgroup.procs"))
    }

    /// CPU seconds (user + system) of every process that has been in it.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.read_cpu_seconds().ok()
    }

    fn read_cpu_seconds(&self) -> io::Result<f64> {
        let (file, parse): (&str, fn(&str) -> Option<f64>) = match self.accounting {
            CpuAccounting::CgroupV2 => ("cpu.stat", parse_usage_usec),
            _ => ("cpuacct.usage", parse_usage_ns),
        };
        let text = fs::read_to_string(self.dir.join(file))?;
        parse(&text).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("no CPU usage in {file}"))
        })
    }

    /// Removes it once its processes are gone ([`remove_dir`]); the PIDs it had to kill.
    pub fn remove(self, grace: Duration) -> io::Result<Vec<u32>> {
        remove_dir(&self.dir, grace)
    }
}

/// `cpuacct.usage`: nanoseconds.
fn parse_usage_ns(text: &str) -> Option<f64> {
    text.trim().parse::<u64>().ok().map(|ns| ns as f64 / 1e9)
}

/// `cpu.stat`'s `usage_usec` line: microseconds.
fn parse_usage_usec(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|us| us as f64 / 1e6)
}

/// The processes in the cgroup `dir`.
pub fn members(dir: &Path) -> Vec<u32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Removes herd's cgroup `dir`: its program was stopped, so what is still in it (a process
/// that left the process group, one that is still dying) is killed, by the PID the cgroup
/// lists, until the cgroup is empty and `rmdir` takes it, at most `grace`. Refuses a
/// directory whose name is not herd's. Returns the PIDs it killed.
pub fn remove_dir(dir: &Path, grace: Duration) -> io::Result<Vec<u32>> {
    if !is_herds(dir) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to remove {}: not a herd cgroup", dir.display()),
        ));
    }
    let deadline = Instant::now() + grace;
    let mut killed = Vec::new();
    loop {
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(killed),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(killed),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => {}
        }
        for pid in members(dir) {
            let Ok(p) = libc::pid_t::try_from(pid) else { continue };
            if p > 1 && pid != std::process::id() {
                // SAFETY: kill(2) on one PID the cgroup listed as its member.
                unsafe { libc::kill(p, libc::SIGKILL) };
                if !killed.contains(&pid) {
                    killed.push(pid);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `dir`'s name is one herd gives its cgroups: `herd-<pid>-<n>`.
fn is_herds(dir: &Path) -> bool {
    maker(dir).is_some()
}

/// The PID in the name of herd's cgroup `dir`.
fn maker(dir: &Path) -> Option<u32> {
    let name = dir.file_name()?.to_str()?;
    let mut parts = name.strip_prefix(PREFIX)?.splitn(2, '-');
    let pid = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    plain(rest).then_some(pid)
}

/// herd's cgroups beside this process's own (where a lab run here makes them) whose maker is
/// gone: what a crashed run left and no registry names.
pub fn orphans() -> Vec<PathBuf> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let p = places(&cgroup, &mountinfo);
    let mut out = Vec::new();
    for parent in [p.v1, p.v2].into_iter().flatten() {
        let Ok(entries) = fs::read_dir(&parent) else { continue };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) && maker(&path).is_some_and(gone) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Whether the herd process `pid` has ended (never this one).
pub fn gone(pid: u32) -> bool {
    pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// The maker of a recorded cgroup `dir` is gone (a later run with the same PID keeps its own).
pub fn maker_gone(dir: &Path) -> bool {
    maker(dir).is_some_and(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const V2: &str = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

    fn p(s: &str) -> Option<PathBuf> {
        Some(PathBuf::from(s))
    }

    #[test]
    fn a_hybrid_system_has_both_and_cpuacct_alone() {
        let cg = "4:memory:/x\n2:cpuacct:/lab/a\n1:cpu:/\n0::/user.slice\n";
        assert_eq!(
            places(cg, HYBRID),
            Places {
                v1: p("/sys/fs/cgroup/cpuacct/lab/a"),
                v1_with_cpu: false,
                v2: p("/sys/fs/cgroup/unified/user.slice"),
            }
        );
    }

    #[test]
    fn cpu_and_cpuacct_mounted_together() {
        let mounts = "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        assert_eq!(
            places("4:cpu,cpuacct:/a\n", mounts),
            Places { v1: p("/sys/fs/cgroup/cpu,cpuacct/a"), v1_with_cpu: true, v2: None }
        );
    }

    #[test]
    fn pure_v2_and_a_bind_mounted_subtree() {
        assert_eq!(
            places("0::/user.slice/herd\n", V2),
            Places { v2: p("/sys/fs/cgroup/user.slice/herd"), ..Places::default() }
        );
        let mounts = "50 40 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        assert_eq!(places("0::/docker/abc/x\n", mounts).v2, p("/sys/fs/cgroup/x"));
    }

    #[test]
    fn nothing_mounted_or_nothing_known() {
        // A "0::" line shows even where cgroup2 is not mounted.
        assert_eq!(places("2:cpuacct:/\n0::/\n", ""), Places::default());
        assert_eq!(places("", HYBRID), Places::default());
        assert_eq!(places("garbage", "garbage"), Places::default());
    }

    fn both(v1_with_cpu: bool) -> Places {
        Places { v1: p("/v1"), v1_with_cpu, v2: p("/v2") }
    }

    fn chosen(
        places: &Places,
        wanted: Wanted,
        writable: &[&str],
    ) -> Result<Option<CpuAccounting>, String> {
        let probe = |c: &Cgroups| {
            if writable.iter().any(|w| c.parent() == Path::new(w)) {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(libc::EACCES))
            }
        };
        choose(places, wanted, probe).map(|c| c.map(|c| c.accounting())).map_err(|e| e.to_string())
    }

    #[test]
    fn auto_prefers_a_cpuacct_of_its_own_then_v2() {
        use CpuAccounting::*;
        assert_eq!(chosen(&both(false), Wanted::Auto, &["/v1", "/v2"]), Ok(Some(CgroupV1)));
        // cpuacct with cpu: a new cgroup there would also be a scheduling group.
        assert_eq!(chosen(&both(true), Wanted::Auto, &["/v1", "/v2"]), Ok(Some(CgroupV2)));
        assert_eq!(chosen(&both(true), Wanted::Auto, &["/v1"]), Ok(Some(CgroupV1)));
        assert_eq!(chosen(&both(false), Wanted::Auto, &["/v2"]), Ok(Some(CgroupV2)));
    }

    #[test]
    fn not_writable_or_not_mounted_is_per_process_unless_a_cgroup_is_asked_for() {
        use CpuAccounting::*;
        assert_eq!(chosen(&both(false), Wanted::Auto, &[]), Ok(None));
        assert_eq!(chosen(&Places::default(), Wanted::Auto, &["/v1"]), Ok(None));
        assert_eq!(chosen(&both(false), Wanted::Only(PerProcess), &["/v1", "/v2"]), Ok(None));
        assert_eq!(
            chosen(&both(false), Wanted::Only(CgroupV2), &["/v1", "/v2"]),
            Ok(Some(CgroupV2))
        );
        let err = chosen(&both(false), Wanted::Only(CgroupV1), &["/v2"]).unwrap_err();
        assert_eq!(err, "HERD_SERVER_CPU asks for cgroup-v1, and herd cannot make a cgroup in /v1");
        let v1_only = Places { v1: p("/v1"), ..Places::default() };
        let err = chosen(&v1_only, Wanted::Only(CgroupV2), &["/v1"]).unwrap_err();
        assert_eq!(
            err,
            "HERD_SERVER_CPU asks for cgroup-v2, and this system mounts no such hierarchy for herd"
        );
    }

    #[test]
    fn the_variable_names_a_method() {
        assert_eq!(Wanted::parse("").ok(), Some(Wanted::Auto));
        assert_eq!(Wanted::parse("auto").ok(), Some(Wanted::Auto));
        for a in CpuAccounting::ALL {
            assert_eq!(Wanted::parse(a.name()).ok(), Some(Wanted::Only(a)));
        }
        let err = Wanted::parse("cgroups").unwrap_err().to_string();
        assert!(err.contains("\"cgroups\" is not a method"), "{err}");
    }

    #[test]
    fn counters_of_both_versions() {
        assert_eq!(parse_usage_ns("1500000000\n"), Some(1.5));
        assert_eq!(parse_usage_ns("x"), None);
        let stat = "usage_usec 250000\nuser_usec 200000\nsystem_usec 50000\n";
        assert_eq!(parse_usage_usec(stat), Some(0.25));
        assert_eq!(parse_usage_usec("user_usec 1\n"), None);
    }

    #[test]
    fn only_herds_names_are_removed() {
        assert_eq!(maker(Path::new("/sys/fs/cgroup/cpuacct/herd-42-0")), Some(42));
        assert_eq!(maker(Path::new("/x/herd-42-probe-3")), Some(42));
        for other in ["/x/herd-42", "/x/herd-x-1", "/x/user.slice", "/x/herd-42-", "/"] {
            assert_eq!(maker(Path::new(other)), None, "{other}");
        }
        let err = remove_dir(Path::new("/sys/fs/cgroup/cpuacct/user.slice"), Duration::ZERO);
        assert_eq!(err.unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert!(!gone(std::process::id()));
    }
}
