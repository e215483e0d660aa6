//! What this machine offers the paths: the programs a plan's commands name (`ip`, `tc`, `nft`,
//! `iptables`, `ipvsadm`, `ethtool`, `sysctl`) and the kernel's IP_VS. Checked before a lab
//! run starts, so that a missing piece is one clear refusal, not a cell failing half-way.

use std::path::{Path as FsPath, PathBuf};

use super::path::{Need, Path};
use super::shaping::Shaping;

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

/// A probed qdisc: its name, and Ok or what tc said.
pub type QdiscProbe = (&'static str, Result<(), String>);

/// The qdiscs the lab may put on a link, each with arguments that make a valid one.
const QDISC_PROBES: [(&str, &[&str]); 3] = [
    ("tbf", &["tbf", "rate", "100mbit", "burst", "32kb", "latency", "20ms"]),
    ("htb", &["htb", "default", "1"]),
    ("netem", &["netem", "delay", "1ms"]),
];

/// Puts each qdisc the lab uses (tbf, htb, netem) on a veth link in a scratch namespace,
/// `herd-<pid>-probe` (deleted afterwards; `herd lab clean` removes it should herd die
/// meanwhile), because only the kernel knows what it has: a kernel without modules has no
/// file that says. Each qdisc with Ok, or Err with what tc said; Err when the probe itself
/// could not be set up (not root, no `ip` or `tc`). Needs root.
pub fn probe_qdiscs(scratch: &FsPath) -> Result<Vec<QdiscProbe>, String> {
    let (Some(ip), Some(tc)) = (find_program("ip"), find_program("tc")) else {
        return Err("ip or tc is missing (apt-get install iproute2)".into());
    };
    let ns = format!("herd-{}-probe", std::process::id());
    let mut sup = crate::proc::Supervisor::new(None);
    let log = scratch.join(format!("{ns}.log"));
    let mut run = |args: Vec<std::ffi::OsString>| {
        sup.capture("probe", &args, &log, std::time::Duration::from_secs(10)).into_result()
    };
    let os = |a: &[&str]| -> Vec<std::ffi::OsString> { a.iter().map(Into::into).collect() };
    let with = |program: &PathBuf, rest: &[&str]| {
        let mut v = vec![program.clone().into_os_string()];
        v.extend(os(rest));
        v
    };
    run(with(&ip, &["netns", "add", &ns]))
        .map_err(|why| format!("cannot create a scratch network namespace: {}", why.trim()))?;
    // A veth pair, not a dummy link: veth is what the lab shapes, and some kernels have no
    // dummy driver.
    let veth = run(with(
        &ip,
        &["-n", &ns, "link", "add", "herd-p0", "type", "veth", "peer", "name", "herd-p1"],
    ));
    let result = match veth {
        Err(why) => Err(format!("cannot create a veth pair: {}", why.trim())),
        Ok(_) => Ok(QDISC_PROBES
            .iter()
            .map(|(name, args)| {
                let mut a = vec!["-n", ns.as_str(), "qdisc", "replace", "dev", "herd-p0", "root"];
                a.extend_from_slice(args);
                (*name, run(with(&tc, &a)).map(|_| ()).map_err(|why| why.trim().to_owned()))
            })
            .collect()),
    };
    let deleted = super::netns::delete(&ns);
    // Read back by `capture` on failure only; the results are in hand.
    let _ = std::fs::remove_file(&log);
    match (result, deleted) {
        (Ok(r), Ok(())) => Ok(r),
        (Err(e), _) => Err(e),
        (Ok(_), Err(why)) => Err(format!(
            "could not delete the scratch namespace {ns} ({why}): run `herd lab clean`"
        )),
    }
}
