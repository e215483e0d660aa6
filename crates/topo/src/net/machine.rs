//! What this machine offers the paths: the programs a plan's commands name (`ip`, `tc`, `nft`,
//! `iptables`, `ipvsadm`, `ethtool`, `sysctl`) and the kernel's IP_VS. Checked before a lab
//! run starts, so that a missing piece is one clear refusal, not a cell failing half-way.
//! And the qdiscs shaped links use ([`Qdisc`]: tbf, netem), probed on a veth link in a
//! scratch namespace (`herd-<pid>-probe`), for the lab's preflight and `herd doctor`.

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

/// The programs the plans' commands name, with the Debian package of each; `ethtool` only
/// for shaped links, `ipvsadm` only for lvs-nat.
pub const PATH_TOOLS: [(&str, &str); 7] = [
    ("ip", "iproute2"),
    ("tc", "iproute2"),
    ("sysctl", "procps"),
    ("nft", "nftables"),
    ("iptables", "iptables"),
    ("ethtool", "ethtool"),
    ("ipvsadm", "ipvsadm"),
];

/// What `paths` (with `shaped` links) need that this machine lacks, each as a sentence that
/// says what to do. Programs the lab starts on the router (HAProxy, nginx, sslh) are the
/// drivers' to find; they are not checked here.
pub fn missing_for(paths: &[Path], shaped: Option<&Shaping>) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |text: String| {
        if !out.contains(&text) {
            out.push(text);
        }
    };
    let lacks = |tool: &str| find_program(tool).is_none();
    let need_tool = |tool: &str, why: &str| {
        let package = PATH_TOOLS.iter().find(|(t, _)| *t == tool).map_or(tool, |(_, p)| p);
        format!("{why} need `{tool}`: apt-get install {package}")
    };
    for tool in ["ip", "tc", "sysctl"] {
        if lacks(tool) {
            push(need_tool(tool, "network paths"));
        }
    }
    let met = |need: Need| match need {
        Need::Nft => !lacks("nft"),
        Need::Iptables => !lacks("iptables"),
        Need::IpVs => has_ip_vs(),
    };
    for &p in paths {
        if let Some(need) = p.needs().filter(|&n| !met(n)) {
            push(need.missing(p));
        }
        if p == Path::LvsNat && has_ip_vs() && lacks("ipvsadm") {
            push(need_tool("ipvsadm", "lvs-nat"));
        }
    }
    if shaped.is_some() && lacks("ethtool") {
        push(need_tool("ethtool", "shaped links (offloads off)"));
    }
    out
}

/// A queueing discipline the lab puts on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qdisc {
    /// A link's rate.
    Tbf,
    /// A link's delay and loss.
    Netem,
}

impl Qdisc {
    pub const ALL: [Qdisc; 2] = [Qdisc::Tbf, Qdisc::Netem];

    pub fn name(self) -> &'static str {
        match self {
            Qdisc::Tbf => "tbf",
            Qdisc::Netem => "netem",
        }
    }

    /// What the lab cannot do without it.
    pub fn consequence(self) -> &'static str {
        match self {
            Qdisc::Tbf => "links with a rate are refused, never run unshaped",
            Qdisc::Netem => "links with delay or loss are refused, never run unshaped",
        }
    }

    /// Arguments that make a valid one.
    fn probe_args(self) -> &'static [&'static str] {
        match self {
            Qdisc::Tbf => &["tbf", "rate", "100mbit", "burst", "32kb", "latency", "20ms"],
            Qdisc::Netem => &["netem", "delay", "1ms"],
        }
    }
}

/// A probed qdisc, and Ok or what tc said.
pub type QdiscProbe = (Qdisc, Result<(), String>);

/// Puts each [`Qdisc`] on a veth link in a scratch namespace, `herd-<pid>-probe` (deleted
/// afterwards; `herd lab clean` removes it should herd die meanwhile), because only the
/// kernel knows what it has: a kernel without modules has no file that says. Each qdisc
/// with Ok, or Err with what tc said; Err when the probe itself could not be set up or
/// cleaned up (not root, no `ip` or `tc`). Needs root.
pub fn probe_qdiscs(scratch: &FsPath) -> Result<Vec<QdiscProbe>, String> {
    let (Some(ip), Some(tc)) = (find_program("ip"), find_program("tc")) else {
        return Err("ip or tc is missing (apt-get install iproute2)".into());
    };
    let ns = format!("herd-{}-probe", std::process::id());
    // A namespace of this name that we have not made yet is a dead herd's, of the same PID
    // (this process's own probes always delete theirs): it goes first.
    if super::netns::exists(&ns) {
        super::netns::delete(&ns).map_err(|why| {
            format!("a stale scratch namespace {ns} is in the way ({why}): run `herd lab clean`")
        })?;
    }
    let mut sup = crate::proc::Supervisor::new(None);
    let log = scratch.join(format!("{ns}.log"));
    let mut run = |program: &PathBuf, rest: &[&str]| {
        let mut args = vec![program.clone().into_os_string()];
        args.extend(rest.iter().map(Into::into));
        sup.capture("probe", &args, &log, std::time::Duration::from_secs(10)).into_result()
    };
    run(&ip, &["netns", "add", &ns])
        .map_err(|why| format!("cannot create a scratch network namespace: {}", why.trim()))?;
    // A veth pair, not a dummy link: veth is what the lab shapes, and some kernels have no
    // dummy driver.
    let veth =
        run(&ip, &["-n", &ns, "link", "add", "herd-p0", "type", "veth", "peer", "name", "herd-p1"]);
    let result = match veth {
        Err(why) => Err(format!("cannot create a veth pair: {}", why.trim())),
        Ok(_) => Ok(Qdisc::ALL
            .into_iter()
            .map(|q| {
                let mut a = vec!["-n", ns.as_str(), "qdisc", "replace", "dev", "herd-p0", "root"];
                a.extend_from_slice(q.probe_args());
                (q, run(&tc, &a).map(|_| ()).map_err(|why| why.trim().to_owned()))
            })
            .collect()),
    };
    let deleted = super::netns::delete(&ns).map_err(|why| {
        format!("could not delete the scratch namespace {ns} ({why}): run `herd lab clean`")
    });
    // The commands' words are in the results; the log is not kept.
    let _ = std::fs::remove_file(&log);
    match (result, deleted) {
        (Ok(r), Ok(())) => Ok(r),
        (Err(e), Ok(())) => Err(e),
        (Ok(_), Err(d)) => Err(d),
        (Err(e), Err(d)) => Err(format!("{e}; and {d}")),
    }
}
