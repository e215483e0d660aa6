//! What this machine offers the paths: the programs a plan's commands name (`ip`, `tc`, `nft`,
//! `iptables`, `ipvsadm`, `ethtool`, `sysctl`) and the kernel's IP_VS. Checked before a lab
//! run starts, so that a missing piece is one clear refusal, not a cell failing half-way.

use std::path::{Path as FsPath, PathBuf};

use super::path::{Need, Path, Shaping};

/// Where Debian installs system tools, searched after PATH (`sudo` and cron may drop /sbin).
const SYSTEM_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// The executable `name` in PATH or a system directory.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SYSTEM_DIRS.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &FsPath) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether the kernel has IP_VS (built in, loaded, or as a module to load).
pub fn has_ip_vs() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let module_dir = format!("/lib/modules/{}/kernel/net/netfilter/ipvs", release.trim());
    FsPath::new("/proc/net/ip_vs").exists()
        || FsPath::new("/sys/module/ip_vs").exists()
        || FsPath::new(&module_dir).exists()
}

/// What `paths` (with `shaped` links) need that this machine lacks, each as a sentence that
/// says what to do. Programs the lab starts on the router (HAProxy, nginx, sslh) are the
/// drivers' to find; they are not checked here.
pub fn missing_for(paths: &[Path], shaped: Option<&Shaping>) -> Vec<String> {
    let mut out = Vec::new();
    for tool in ["ip", "tc", "sysctl"] {
        if find_program(tool).is_none() {
            out.push(format!(
                "network paths need `{tool}`: apt-get install {}",
                if tool == "sysctl" { "procps" } else { "iproute2" }
            ));
        }
    }
    let mut push = |text: String| {
        if !out.contains(&text) {
            out.push(text);
        }
    };
    for &p in paths {
        let lacking = match p.needs() {
            Some(Need::Nft) => find_program("nft").is_none(),
            Some(Need::Iptables) => find_program("iptables").is_none(),
            Some(Need::IpVs) => !has_ip_vs(),
            // The router programs: located by the lab with the drivers.
            Some(Need::Ethtool) | None => false,
        };
        if let (true, Some(need)) = (lacking, p.needs()) {
            push(need.missing(p));
        }
        if p == Path::LvsNat && has_ip_vs() && find_program("ipvsadm").is_none() {
            push("lvs-nat needs ipvsadm: apt-get install ipvsadm".into());
        }
        if shaped.is_some() && find_program("ethtool").is_none() {
            push(Need::Ethtool.missing(p));
        }
    }
    out
}
