//! CPU-quota throttling of the cgroup herd runs in, read before and after a run: a client held
//! back by a quota (a container's `--cpus`, a systemd `CPUQuota=`) measures its own
//! starvation, not the server.
//!
//! Finds the cgroup from /proc/self/cgroup and its mount from /proc/self/mountinfo, for cgroup
//! v1 (the `cpu` controller's hierarchy, `cpu.stat`: `nr_periods`, `nr_throttled`,
//! `throttled_time` in ns) and v2 (the unified hierarchy, `cpu.stat`: `nr_periods`,
//! `nr_throttled`, `throttled_usec`; present only where the cpu controller is enabled). A
//! quota set on an ancestor throttles the ancestor's queue, not ours, so herd's cgroup and
//! every ancestor up to the mount's root are read, and the level that was throttled most is
//! reported. Nothing here is required: without /proc, a cgroup mount or the cpu controller,
//! throttling is simply unknown (None).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Throttling counters of one cgroup, or their change over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Throttling {
    /// Enforcement periods (cfs_period_us long, 100 ms by default) with runnable tasks.
    pub(crate) periods: u64,
    /// Periods in which the quota ran out and the cgroup was stopped.
    pub(crate) throttled_periods: u64,
    /// Time the cgroup's run queues spent throttled, summed over CPUs: with two threads held
    /// back at once it grows twice as fast as the wall clock.
    pub(crate) throttled: Duration,
}

impl Throttling {
    fn since(&self, earlier: &Throttling) -> Throttling {
        Throttling {
            periods: self.periods.saturating_sub(earlier.periods),
            throttled_periods: self.throttled_periods.saturating_sub(earlier.throttled_periods),
            throttled: self.throttled.saturating_sub(earlier.throttled),
        }
    }
}

/// The throttling counters of herd's cgroup and its ancestors at the start of a run.
#[derive(Debug, Clone)]
pub(crate) struct ThrottleProbe {
    levels: Vec<(PathBuf, Throttling)>,
}

impl ThrottleProbe {
    /// Reads the counters now; None when no cgroup with throttling counters is found.
    pub(crate) fn start() -> Option<ThrottleProbe> {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let dir = cpu_cgroup_dir(&cgroups, &mountinfo)?;
        let levels: Vec<_> =
            dir.levels.into_iter().filter_map(|d| read_cpu_stat(&d).map(|t| (d, t))).collect();
        (!levels.is_empty()).then_some(ThrottleProbe { levels })
    }

    /// What changed since [`ThrottleProbe::start`]: the level that was throttled longest.
    pub(crate) fn finish(&self) -> Option<Throttling> {
        self.levels
            .iter()
            .filter_map(|(d, before)| read_cpu_stat(d).map(|now| now.since(before)))
            .max_by_key(|t| t.throttled)
    }
}

/// herd's cpu cgroup directory and its ancestors up to the mount point, innermost first.
#[derive(Debug, PartialEq, Eq)]
struct CgroupDirs {
    levels: Vec<PathBuf>,
}

/// Where herd's CPU cgroup is: the v1 `cpu` hierarchy when the cpu controller is mounted
/// there (a hybrid system keeps it on v1), else the v2 unified hierarchy.
fn cpu_cgroup_dir(proc_cgroup: &str, mountinfo: &str) -> Option<CgroupDirs> {
    let mut v2_path = None;
    let mut v1_path = None;
    for line in proc_cgroup.lines() {
        // "hierarchy-id:controllers:path"; the path may itself contain ':'.
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            v2_path = Some(path);
        } else if controllers.split(',').any(|c| c == "cpu") {
            v1_path = Some(path);
        }
    }
    let mounts: Vec<Mount<'_>> = mountinfo.lines().filter_map(parse_mount).collect();
    if let Some(path) = v1_path {
        let m = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "cpu"));
        if let Some(m) = m {
            return Some(dirs(m, path));
        }
    }
    let path = v2_path?;
    let m = mounts.iter().find(|m| m.fstype == "cgroup2")?;
    Some(dirs(m, path))
}

/// One line of /proc/self/mountinfo, the fields we need.
struct Mount<'a> {
    /// The mounted directory of the hierarchy ("/" unless a sub-tree is bind-mounted).
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    /// Super-block options: for cgroup v1 they name the controllers ("rw,cpu,cpuacct").
    options: &'a str,
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

fn dirs(m: &Mount<'_>, path: &str) -> CgroupDirs {
    // A cgroup path is relative to the hierarchy's root; a mount of a sub-tree shows only
    // what lies below its own root.
    let rel = path.strip_prefix(m.root).unwrap_or(path).trim_start_matches('/');
    let top = PathBuf::from(m.point);
    let mut levels = Vec::new();
    let mut d = top.join(rel);
    loop {
        levels.push(d.clone());
        if d == top || !d.pop() || !d.starts_with(&top) {
            break;
        }
    }
    CgroupDirs { levels }
}

fn read_cpu_stat(dir: &Path) -> Option<Throttling> {
    parse_cpu_stat(&std::fs::read_to_string(dir.join("cpu.stat")).ok()?)
}

/// v1 `throttled_time` (ns) or v2 `throttled_usec`; None without `nr_throttled` (a v2 cgroup
/// whose cpu controller is off has only usage counters).
fn parse_cpu_stat(text: &str) -> Option<Throttling> {
    let mut periods = None;
    let mut throttled_periods = None;
    let mut throttled = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(' ') else { continue };
        let Ok(v) = value.trim().parse::<u64>() else { continue };
        match key {
            "nr_periods" => periods = Some(v),
            "nr_throttled" => throttled_periods = Some(v),
            "throttled_time" => throttled = Some(Duration::from_nanos(v)),
            "throttled_usec" => throttled = Some(Duration::from_micros(v)),
            _ => {}
        }
    }
    Some(Throttling {
        periods: periods.unwrap_or(0),
        throttled_periods: throttled_periods?,
        throttled: throttled?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    fn levels(v: &[&str]) -> Option<CgroupDirs> {
        Some(CgroupDirs { levels: v.iter().map(PathBuf::from).collect() })
    }

    #[test]
    fn hybrid_v1_uses_the_cpu_hierarchy_and_its_ancestors() {
        let cg = "2:cpuacct:/\n1:cpu:/herd-test-7/inner\n0::/\n";
        assert_eq!(
            cpu_cgroup_dir(cg, V1_MOUNTS),
            levels(&[
                "/sys/fs/cgroup/cpu/herd-test-7/inner",
                "/sys/fs/cgroup/cpu/herd-test-7",
                "/sys/fs/cgroup/cpu"
            ])
        );
    }

    #[test]
    fn combined_v1_controllers_and_root_cgroup() {
        let mounts = "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        assert_eq!(
            cpu_cgroup_dir("4:cpu,cpuacct:/\n", mounts),
            levels(&["/sys/fs/cgroup/cpu,cpuacct"])
        );
    }

    #[test]
    fn pure_v2() {
        let mounts = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            cpu_cgroup_dir("0::/user.slice/herd-test-9\n", mounts),
            levels(&[
                "/sys/fs/cgroup/user.slice/herd-test-9",
                "/sys/fs/cgroup/user.slice",
                "/sys/fs/cgroup"
            ])
        );
    }

    #[test]
    fn a_bind_mounted_subtree_strips_its_root() {
        let mounts = "50 40 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cpu_cgroup_dir("0::/docker/abc/x\n", mounts),
            levels(&["/sys/fs/cgroup/x", "/sys/fs/cgroup"])
        );
    }

    #[test]
    fn nothing_mounted_or_nothing_known() {
        assert_eq!(cpu_cgroup_dir("1:cpu:/a\n", ""), None);
        assert_eq!(cpu_cgroup_dir("", V1_MOUNTS), None);
        assert_eq!(cpu_cgroup_dir("garbage", "garbage"), None);
    }

    #[test]
    fn cpu_stat_of_both_versions() {
        let v1 = "nr_periods 21\nnr_throttled 20\nthrottled_time 1887277572\nnr_bursts 0\n";
        assert_eq!(
            parse_cpu_stat(v1),
            Some(Throttling {
                periods: 21,
                throttled_periods: 20,
                throttled: Duration::from_nanos(1_887_277_572)
            })
        );
        let v2 = "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 5\nnr_throttled 2\nthrottled_usec 1500\n";
        assert_eq!(
            parse_cpu_stat(v2),
            Some(Throttling {
                periods: 5,
                throttled_periods: 2,
                throttled: Duration::from_micros(1500)
            })
        );
        // v2 without the cpu controller: usage only.
        assert_eq!(parse_cpu_stat("usage_usec 100\nuser_usec 60\nsystem_usec 40\n"), None);
    }

    #[test]
    fn deltas_never_go_negative() {
        let a =
            Throttling { periods: 10, throttled_periods: 5, throttled: Duration::from_millis(9) };
        let b =
            Throttling { periods: 12, throttled_periods: 5, throttled: Duration::from_millis(4) };
        assert_eq!(
            b.since(&a),
            Throttling { periods: 2, throttled_periods: 0, throttled: Duration::ZERO }
        );
    }
}
