//! The machine a lab run ran on, as recorded with every result: its name, kernel, CPU,
//! memory, the sysctls that change web benchmarks (backlog, port range, TIME_WAIT reuse …),
//! limits, root or not, load at the start. Read from /proc and /sys; a value that cannot be read is
//! recorded as `unknown`, never guessed.

use std::fs;

/// Sysctls recorded, by name (dots), read from /proc/sys.
pub const SYSCTLS: &[&str] = &[
    "net.core.somaxconn",
    "net.core.netdev_max_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_max_tw_buckets",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_congestion_control",
    "net.netfilter.nf_conntrack_max",
    "fs.file-max",
];

/// The environment as (key, value) pairs, in a fixed order.
pub fn record(herd_version: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| out.push((k.to_string(), v));
    put("herd_version", herd_version.to_string());
    // Which machine, by name: a history's change point can then say the machine changed
    // even when two hosts have the same CPU, memory and kernel.
    put("hostname", read("/proc/sys/kernel/hostname"));
    put("kernel", read("/proc/sys/kernel/osrelease"));
    put("os", os_release());
    put("cpu_model", cpuinfo_field("model name"));
    put(
        "cpus_online",
        std::thread::available_parallelism().map_or("unknown".into(), |n| n.to_string()),
    );
    put("memory_total", meminfo_total());
    put("cpu_governor", read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
    put("mitigations.spectre_v2", read("/sys/devices/system/cpu/vulnerabilities/spectre_v2"));
    // SAFETY: geteuid has no preconditions.
    put("root", (unsafe { libc::geteuid() } == 0).to_string());
    put("rlimit_nofile", rlimit_nofile());
    put("loadavg_at_start", read("/proc/loadavg"));
    // Whether the engine's sockets could go through io_uring here (issue 35).
    put("io_uring", herd_engine::uring::probe::probe().to_string());
    for name in SYSCTLS {
        put(&format!("sysctl.{name}"), sysctl(name).unwrap_or_else(|| "unknown".into()));
    }
    out
}

fn read(path: &str) -> String {
    read_value(path).unwrap_or_else(|| "unknown".into())
}

/// A /proc or /sys value with its whitespace folded to single spaces.
pub(crate) fn read_value(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A sysctl by its dotted name (`net.core.somaxconn`).
pub(crate) fn sysctl(name: &str) -> Option<String> {
    read_value(&format!("/proc/sys/{}", name.replace('.', "/")))
}

/// RLIMIT_NOFILE: (soft, hard).
pub(crate) fn nofile_limits() -> Option<(u64, u64)> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes only into `r`.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0)
        .then_some((r.rlim_cur, r.rlim_max))
}

fn os_release() -> String {
    let text = fs::read_to_string("/etc/os-release").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into())
}

fn cpuinfo_field(field: &str) -> String {
    let text = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == field).then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn meminfo_total() -> String {
    let text = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

fn rlimit_nofile() -> String {
    nofile_limits()
        .map_or_else(|| "unknown".into(), |(soft, hard)| format!("{soft} soft, {hard} hard"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn records_the_kernel_and_every_sysctl() {
        let env = super::record("0.1.0");
        let get = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert_eq!(get("herd_version").as_deref(), Some("0.1.0"));
        assert!(get("kernel").is_some_and(|k| k != "unknown"));
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(get("hostname").as_deref(), Some(host.trim()));
        assert!(get("sysctl.net.core.somaxconn").is_some_and(|v| v.parse::<u64>().is_ok()));
        assert_eq!(
            env.iter().filter(|(k, _)| k.starts_with("sysctl.")).count(),
            super::SYSCTLS.len()
        );
    }
}
