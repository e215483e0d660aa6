//! The servers' CPU time from a cgroup of their own, for real (root: CI runs as root), in each
//! hierarchy this machine lets herd use: a program whose double-forked child (in a process group
//! of its own) burns 200 ms of CPU and ends is counted whole, where the per-process method
//! does not see the child; a
//! process that left the program's group is stopped with it and the cgroup removed; a crashed
//! run's cgroup is removed by `herd lab clean`'s `registry::clean`. Without root the lab keeps
//! the per-process method: checked, and the cgroup checks are reported as not run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_testutil::not_run::not_run;
use herd_topo::cgroup::{self, Cgroups, CpuAccounting, Wanted};
use herd_topo::proc::group_cpu_seconds;
use herd_topo::{Registry, Spawn, Supervisor};

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herd-topo-cg-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The cgroups of each version herd can make here; the others reported as not run.
fn usable(test: &str) -> Vec<Cgroups> {
    let mut out = Vec::new();
    for a in [CpuAccounting::CgroupV1, CpuAccounting::CgroupV2] {
        match Cgroups::detect(Wanted::Only(a)) {
            Ok(Some(c)) => out.push(c),
            Ok(None) => unreachable!("a cgroup method asked for is a cgroup or an error"),
            Err(e) => not_run(
                &format!("topo cgroup: {test} ({})", a.name()),
                &herd_stats::with_causes(&e),
            ),
        }
    }
    if out.is_empty() {
        // Where herd can make none (not root), the lab reads per process, and says so.
        let auto = Cgroups::detect(Wanted::Auto).unwrap();
        assert_eq!(auto, None, "auto found a cgroup that neither version gave");
        let sup = Supervisor::new(None).with_cgroups(auto);
        assert_eq!(sup.cpu_accounting(), CpuAccounting::PerProcess);
        if !root() {
            // Not root: no cgroup can be made here; with root it is the system's to say.
            assert!(std::fs::create_dir(cgroup_probe_dir()).is_err());
        }
    }
    out
}

/// Where a lab run would make its first v1 cgroup, for the check that one cannot be made.
fn cgroup_probe_dir() -> PathBuf {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let p = cgroup::places(&text, &mounts);
    p.v1.or(p.v2).unwrap_or_else(|| PathBuf::from("/nonexistent")).join("herd-probe-test-0")
}

fn argv(a: &[&str]) -> Vec<OsString> {
    a.iter().map(OsString::from).collect()
}

/// Starts `argv` as `name` under `sup`, its output to `log`, on any CPU: its PID.
fn start(sup: &mut Supervisor, name: &str, argv: &[OsString], log: &Path) -> u32 {
    sup.start(&Spawn::logged(name, argv, log)).unwrap()
}

fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A shell that burns CPU until its own utime + stime reach 20 ticks (200 ms at the usual
/// 100 Hz; read from /proc, so a busy machine only makes it slower), then writes `marker`.
fn burn_then(marker: &Path) -> String {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = hz / 5;
    format!(
        "while :; do read -r s < /proc/$$/stat; set -- ${{s##*) }}; \
         [ $(( ${{12}} + ${{13}} )) -ge {ticks} ] && break; \
         i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done; echo done > {}",
        marker.display()
    )
}

#[test]
fn a_double_forked_child_is_counted_in_the_cgroup_only() {
    for cgroups in usable("a double-forked child's CPU") {
        let a = cgroups.accounting();
        let dir = scratch(a.name());
        let (log, marker) = (dir.join("log"), dir.join("burnt"));
        // `( … & )`: the subshell forks the burner and exits at once, so the burner is
        // reparented to init (which may reap it or not), and `setsid` puts it in a group of
        // its own: out of the per-process method's sight, not of the cgroup's.
        let script = format!("( setsid sh -c '{}' & ); exec sleep 30", burn_then(&marker));
        let a_argv = argv(&["/bin/sh", "-c", &script]);
        let mut sup = Supervisor::new(None).with_cgroups(Some(cgroups.clone()));
        assert_eq!(sup.cpu_accounting(), a);
        let pid = start(&mut sup, "burner", &a_argv, &log);
        let made: Vec<PathBuf> = std::fs::read_dir(cgroups.parent())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| cgroup::members(p).contains(&pid))
            .collect();
        assert_eq!(made.len(), 1, "{a:?}: the program is in one cgroup of herd's: {made:?}");
        let cg = &made[0];
        wait_for("the burner", Duration::from_secs(60), || marker.exists());
        wait_for("the burner to end", Duration::from_secs(10), || cgroup::members(cg) == vec![pid]);
        let counted = sup.cpu_seconds(pid).unwrap();
        let per_process = group_cpu_seconds(pid).unwrap();
        assert!(counted >= 0.18, "{a:?}: {counted} s counted of 0.2 s burnt");
        assert!(per_process < 0.1, "per process, the ended child is out of sight: {per_process}");
        assert!(sup.stop(pid, Duration::from_secs(2)));
        assert!(!cg.exists(), "{a:?}: {} left after the program stopped", cg.display());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn stopping_removes_the_cgroup_and_what_left_the_group() {
    for cgroups in usable("a stopped program's cgroup removed") {
        let a = cgroups.accounting();
        let dir = scratch(&format!("stop-{}", a.name()));
        let (log, pidfile) = (dir.join("log"), dir.join("escaped"));
        // setsid: a process of its own group, which stopping the program's group misses.
        let script = format!(
            "setsid sh -c 'echo $$ > {}; exec sleep 30' & exec sleep 30",
            pidfile.display()
        );
        let a_argv = argv(&["/bin/sh", "-c", &script]);
        let mut sup = Supervisor::new(None).with_cgroups(Some(cgroups.clone()));
        let pid = start(&mut sup, "escaper", &a_argv, &log);
        wait_for("the escaped pid", Duration::from_secs(10), || {
            std::fs::read_to_string(&pidfile).is_ok_and(|t| t.trim().parse::<u32>().is_ok())
        });
        let escaped: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        let cg = std::fs::read_dir(cgroups.parent())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| cgroup::members(p).contains(&escaped))
            .expect("the escaped process is in the program's cgroup");
        assert!(cgroup::members(&cg).contains(&pid), "{a:?}: the program shares it");
        drop(sup); // as on an error or Ctrl-C: everything still running is stopped
        assert!(!cg.exists(), "{a:?}: {} left behind", cg.display());
        wait_for("the escaped process to end", Duration::from_secs(5), || {
            herd_topo::proc::start_time(escaped).is_none()
                || std::fs::read_to_string(format!("/proc/{escaped}/stat"))
                    .is_ok_and(|s| s.contains(") Z "))
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn clean_removes_a_crashed_runs_cgroup() {
    for cgroups in usable("a crashed run's cgroup removed by clean") {
        // From the moment the dead run's cgroup exists, any sweep would take it, whichever
        // test binary runs it: the sweep lock is held from before it is made to this clean.
        let _sweep = herd_testutil::sweep::lock();
        let a = cgroups.accounting();
        let parent = scratch(&format!("clean-{}", a.name()));
        let reg = Registry::create(&parent).unwrap();
        // A cgroup as a lab run of PID 4000000 (none: above any pid_max) made it, with a
        // process still in it, recorded in that run's registry; the run is gone.
        let dir = cgroups.parent().join(format!("herd-4000000-{}", std::process::id()));
        reg.record_cgroup(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(reg.dir().join("owner"), "4000000 1\n").unwrap();
        let log = parent.join("log");
        let sleep = argv(&["sleep", "30"]);
        let mut sup = Supervisor::new(None);
        let pid = start(&mut sup, "left", &sleep, &log);
        std::fs::write(dir.join("cgroup.procs"), pid.to_string()).unwrap();
        let c = herd_topo::registry::clean(&parent);
        assert!(c.cgroups.contains(&dir), "{a:?}: {c:?}");
        assert!(c.stopped.iter().any(|(p, _)| *p == pid), "{c:?}");
        assert!(!dir.exists());
        assert!(c.errors.is_empty(), "{c:?}");
        assert!(sup.exit_status(pid).is_some_and(|s| !s.success()), "the leftover was killed");
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
