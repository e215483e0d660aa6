//! CPU lists as experiment files and `taskset` write them (`0`, `0-1`, `0,2-3`, `all`), and
//! pinning a process to one: the seeds compare a server on one CPU with the same server on
//! two, and a client pinned apart from its server cannot steal the server's CPU.

use std::fmt;

/// A set of CPU numbers, or every CPU (no pinning).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CpuSet {
    /// Not pinned: the scheduler chooses among every CPU herd may use.
    All,
    /// These CPUs, ascending, no duplicates, at least one.
    Only(Vec<usize>),
}

/// Why a CPU list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuSetError {
    #[error("`{0}` is not a CPU list: write CPU numbers and ranges, e.g. 0, 0-1, 0,2-3, or all")]
    Syntax(String),
    #[error("CPU {cpu} is not online here: this machine's online CPUs are {online}")]
    Missing { cpu: usize, online: String },
}

/// Highest CPU number a list may name; far above any machine, low enough to bound a typo.
const MAX_CPU: usize = 4095;

impl CpuSet {
    /// Parses `all` or a comma list of numbers and ranges.
    pub fn parse(text: &str) -> Result<CpuSet, CpuSetError> {
        let t = text.trim();
        if t == "all" {
            return Ok(CpuSet::All);
        }
        let bad = || CpuSetError::Syntax(text.to_string());
        let mut cpus = Vec::new();
        for part in t.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let lo: usize = lo.parse().map_err(|_| bad())?;
            let hi: usize = hi.parse().map_err(|_| bad())?;
            if lo > hi || hi > MAX_CPU {
                return Err(bad());
            }
            cpus.extend(lo..=hi);
        }
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() {
            return Err(bad());
        }
        Ok(CpuSet::Only(cpus))
    }

    /// Checks every CPU is online on this machine (`online`, from [`online`]).
    pub fn check(&self, online: &[usize]) -> Result<(), CpuSetError> {
        if let CpuSet::Only(cpus) = self {
            if let Some(&cpu) = cpus.iter().find(|c| !online.contains(c)) {
                let online = CpuSet::Only(online.to_vec()).to_string();
                return Err(CpuSetError::Missing { cpu, online });
            }
        }
        Ok(())
    }

    /// The CPUs, or None for every CPU.
    pub fn cpus(&self) -> Option<&[usize]> {
        match self {
            CpuSet::All => None,
            CpuSet::Only(c) => Some(c),
        }
    }

    /// The kernel's affinity mask for this set (None: leave the inherited mask alone).
    pub(crate) fn mask(&self) -> Option<libc::cpu_set_t> {
        let cpus = self.cpus()?;
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus {
            // SAFETY: CPU_SET only writes inside `set`; c <= MAX_CPU < CPU_SETSIZE (1024)
            // is not guaranteed, so bound it first.
            if c < libc::CPU_SETSIZE as usize {
                unsafe { libc::CPU_SET(c, &mut set) };
            }
        }
        Some(set)
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus = match self {
            CpuSet::All => return f.write_str("all"),
            CpuSet::Only(c) => c,
        };
        // Ranges as taskset prints them: 0-3,6.
        let mut i = 0;
        let mut first = true;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if i == j {
                write!(f, "{}", cpus[i])?;
            } else {
                write!(f, "{}-{}", cpus[i], cpus[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

/// The online CPUs of this machine, from /sys/devices/system/cpu/online: the CPUs that
/// exist, whatever herd's own affinity (under `taskset -c 0`, CPU 1 is still a CPU a server
/// may be pinned to). Falls back to 0..available_parallelism when the file is unreadable.
pub fn online() -> Vec<usize> {
    let sys = std::fs::read_to_string("/sys/devices/system/cpu/online").ok();
    online_from(sys.as_deref(), usable_cpus())
}

/// The CPUs the kernel's online list names; without a readable list, 0..fallback.
fn online_from(sys: Option<&str>, fallback: usize) -> Vec<usize> {
    match sys.and_then(|t| CpuSet::parse(t.trim()).ok()) {
        Some(CpuSet::Only(cpus)) => cpus,
        _ => (0..fallback.max(1)).collect(),
    }
}

/// The CPUs herd may run on (its affinity, ascending), where a placement may pin servers
/// and clients; the online CPUs when the affinity cannot be read.
pub fn usable() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bit array (all zeroes: empty); sched_getaffinity writes at
    // most size_of::<cpu_set_t>() bytes into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return online();
    }
    // SAFETY: CPU_ISSET reads inside `set` for every c < CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// How many CPUs an unpinned child of herd may use: herd's own affinity and cgroup limit
/// (`available_parallelism`), not the machine's count, which under `taskset` or a CPU-limited
/// container would overstate a client's capacity.
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_cpus_are_the_affinity() {
        let usable = usable();
        assert_eq!(usable.len(), usable_cpus(), "{usable:?}");
        assert!(usable.windows(2).all(|w| w[0] < w[1]), "{usable:?}");
    }

    #[test]
    fn parses_and_prints() {
        for (text, shown) in
            [("0", "0"), ("0-1", "0-1"), ("1,0", "0-1"), ("0,2-3", "0,2-3"), ("all", "all")]
        {
            assert_eq!(CpuSet::parse(text).unwrap().to_string(), shown, "{text}");
        }
    }

    #[test]
    fn refuses_bad_lists() {
        for bad in ["", "x", "1-0", "0,,1", "-1", "0-9999", "one"] {
            assert_eq!(CpuSet::parse(bad), Err(CpuSetError::Syntax(bad.to_string())), "{bad}");
        }
    }

    #[test]
    fn checks_against_the_machine() {
        assert!(CpuSet::parse("0-1").unwrap().check(&[0, 1]).is_ok());
        let err = CpuSet::parse("0,3").unwrap().check(&[0, 1]).unwrap_err();
        assert_eq!(err.to_string(), "CPU 3 is not online here: this machine's online CPUs are 0-1");
        // A machine with CPU 1 offline.
        assert!(CpuSet::parse("1").unwrap().check(&[0, 2, 3]).is_err());
    }

    #[test]
    fn online_cpus_come_from_the_kernels_list_not_from_herds_affinity() {
        // CPU 1 offline: the list says so, whatever herd's own affinity allows.
        assert_eq!(online_from(Some("0,2-3\n"), 1), [0, 2, 3]);
        // Unreadable or unparsable: what herd may use.
        assert_eq!(online_from(None, 2), [0, 1]);
        assert_eq!(online_from(Some("garbage"), 3), [0, 1, 2]);
        assert_eq!(online_from(None, 0), [0]);
    }
}
