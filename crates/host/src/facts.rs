//! What a helper says of its host in its hello: the name, kernel and CPUs, read from /proc
//! (the files `hostname` and `uname -r` read), so that herd can tell hosts apart and record
//! each in the disclosure without running anything there.

use std::fs;

/// The host's name, or `unknown` where the kernel does not say.
pub fn hostname() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

/// The kernel's release (`uname -r`), or `unknown`.
pub fn kernel() -> String {
    read_trimmed("/proc/sys/kernel/osrelease")
}

/// CPUs this helper (and so what it starts) may use.
pub fn cpus() -> usize {
    herd_topo::cpuset::usable_cpus()
}

/// The host's online CPUs, as a CPU set is written (`0-3`, `0,2-3`).
pub fn online() -> String {
    herd_topo::CpuSet::Only(herd_topo::cpuset::online()).to_string()
}

fn read_trimmed(path: &str) -> String {
    match fs::read_to_string(path) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_owned(),
        _ => "unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_described() {
        assert!(!hostname().is_empty() && hostname() != "unknown");
        let k = kernel();
        assert!(k.chars().next().is_some_and(|c| c.is_ascii_digit()), "{k}");
        assert!(cpus() >= 1);
        let online = herd_topo::CpuSet::parse(&online()).unwrap();
        assert!(online.cpus().is_some_and(|c| c.len() >= cpus()), "{online}");
    }
}
