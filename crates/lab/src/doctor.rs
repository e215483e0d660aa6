//! `herd doctor`: what this machine has and lacks for herd's lab, one line per check, each
//! with what to do when it is not right. Reads /proc and /sys, asks installed programs their
//! versions, and (as root) probes kernel features in a scratch network namespace that it
//! removes again.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use herd_drivers::{
    programs_needed, proxy_programs_needed, render, Programs, ProxyKind, ServerSpec,
};
use herd_topo::net::machine;
use herd_topo::{Captured, Supervisor};

use crate::client::{self, Tool};
use crate::environment::{nofile_limits, sysctl};
use crate::experiment::{builtin_servers, ServerDef};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// Works, but results may suffer; the line says why and what to change.
    Warn,
    /// Missing: some of herd cannot run here; the line says what to install or do.
    Missing,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    pub status: Status,
    pub what: String,
    pub detail: String,
}

/// Runs every check. `scratch` is a directory for probe output.
pub fn checks(herd_exe: &Path, scratch: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    let mut sup = Supervisor::new(None);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    out.push(if root {
        ok("root", "yes: network namespaces, tc and nft paths can be built")
    } else {
        warn("root", "no: the quick start and loopback experiments work; network paths (namespaces, NAT, shaping) need root")
    });
    out.push(server_cpu());
    out.push(uring());
    out.push(nofile());
    out.push(sysctl_min("net.core.somaxconn", 4096, "listen backlogs are capped by it; with fewer, connections queue or drop at high concurrency: sysctl -w net.core.somaxconn=4096"));
    out.push(port_range());
    out.push(tw_reuse());
    out.extend(servers(herd_exe, scratch, &mut sup));
    let (module, package) = herd_drivers::LIGHTTPD_TLS_MODULE;
    out.push(if Path::new(module).exists() {
        ok("lighttpd TLS module (h1-tls, h2)", module)
    } else {
        warn(
            "lighttpd TLS module (h1-tls, h2)",
            &format!(
                "not installed: lighttpd serves h1 and h2c only; for h1-tls and h2: apt-get \
                 install {package}"
            ),
        )
    });
    for tool in [Tool::Ab, Tool::Wrk, Tool::H2load, Tool::Smbtorture] {
        let name = format!("{} (client)", tool.name());
        out.push(match client::locate(tool, herd_exe) {
            Some(p) => ok(&name, &p.display().to_string()),
            None => missing(&name, &format!("not installed: apt-get install {}", tool.package())),
        });
    }
    // NBENCH's load file, which smbtorture replays for the netbench workloads.
    let loadfile = client::smbtorture::DBENCH_CLIENT_TXT;
    out.push(if Path::new(loadfile).is_file() {
        ok("NetBench trace (netbench)", loadfile)
    } else {
        missing("NetBench trace (netbench)", "not installed: apt-get install dbench")
    });
    // What the network paths run: the bundled seed001, seed002 and seed000-100mbit need them,
    // so a missing one is missing, as preflight would refuse those experiments; ipvsadm
    // serves lvs-nat only, which no bundled experiment runs.
    for (tool, package) in machine::PATH_TOOLS {
        let found = machine::find_program(tool);
        out.push(match found {
            Some(p) => ok(tool, &p.display().to_string()),
            None if tool == "ipvsadm" => warn(
                tool,
                &format!("not installed: the lvs-nat path needs it (apt-get install {package})"),
            ),
            None => missing(
                tool,
                &format!("not installed, needed by network paths: apt-get install {package}"),
            ),
        });
    }
    // One line per program, naming every path it serves (HAProxy: http and tcp).
    let mut programs: Vec<(&str, Vec<ProxyKind>)> = Vec::new();
    for kind in ProxyKind::ALL {
        let name = kind.program().name;
        match programs.iter_mut().find(|(n, _)| *n == name) {
            Some((_, kinds)) => kinds.push(kind),
            None => programs.push((name, vec![kind])),
        }
    }
    for (name, kinds) in programs {
        let paths: Vec<String> = kinds.iter().map(ToString::to_string).collect();
        let what = format!("{name} (path {})", paths.join(", "));
        // Located with what its first path needs; `get` finds what `locate` found.
        out.push(match Programs::locate(&proxy_programs_needed(kinds[0]), herd_exe) {
            Ok(found) => match found.get(name) {
                Some(path) => ok(&what, &path.display().to_string()),
                None => missing(&what, "not located"),
            },
            Err(e) => missing(&what, &e.to_string()),
        });
    }
    out.push(if Path::new("/proc/self/ns/net").exists() {
        ok("network namespaces", "supported by the kernel")
    } else {
        missing("network namespaces", "not supported by this kernel: network paths cannot be built")
    });
    out.push(ip_vs());
    if root {
        out.extend(qdiscs(scratch));
    } else {
        out.push(warn(
            "tc qdiscs (tbf, netem)",
            "not probed: needs root (run herd doctor as root)",
        ));
    }
    out
}

fn ok(what: &str, detail: &str) -> Check {
    Check { status: Status::Ok, what: what.into(), detail: detail.into() }
}
fn warn(what: &str, detail: &str) -> Check {
    Check { status: Status::Warn, what: what.into(), detail: detail.into() }
}
fn missing(what: &str, detail: &str) -> Check {
    Check { status: Status::Missing, what: what.into(), detail: detail.into() }
}

/// How the lab will read the servers' CPU time here: exactly from cgroups it makes, or per
/// process (which misses processes a server's children fork and hand to init).
fn server_cpu() -> Check {
    use herd_topo::cgroup::{Cgroups, Wanted, ENV};
    const WHAT: &str = "server CPU accounting";
    match Wanted::from_env().and_then(Cgroups::detect) {
        Ok(Some(c)) => ok(WHAT, &c.accounting().to_string()),
        Ok(None) => warn(
            WHAT,
            &format!(
                "{}: herd cannot make a cgroup here (root, or a delegated cgroup v2 \
                 sub-tree, reads every process of a server exactly; {ENV} picks one)",
                herd_topo::cgroup::CpuAccounting::PerProcess
            ),
        ),
        Err(e) => missing(WHAT, &herd_stats::with_causes(&e)),
    }
}

/// Whether the engine could drive its sockets through io_uring here (the completion
/// backend of issue 35), and what `--io auto` takes for each protocol; not having it costs
/// nothing today: the engine runs on epoll.
fn uring() -> Check {
    use herd_engine::io_choice::probed;
    use herd_engine::uring::probe::Uring;
    const WHAT: &str = "io_uring";
    let auto = auto_takes();
    match probed() {
        found @ Uring::Available { .. } => ok(WHAT, &format!("{found}; {auto}")),
        found @ Uring::Refused(_) => warn(WHAT, &format!("{found}; {auto}")),
    }
}

/// `--io auto takes epoll (io_uring not yet measured faster; --io uring runs it) for HTTP/1,
/// HTTP/2, HTTP/3`: what each protocol's run would settle on here, those alike said together
/// (a protocol without an io_uring worker would be said apart: `no io_uring worker yet`).
fn auto_takes() -> String {
    use herd_engine::io_choice::{backends_of, probed, resolve_kind, WireKind};
    use herd_engine::uring::probe::Uring;
    use herd_engine::{Backend, IoChoice};
    let mut said: Vec<(String, Vec<&str>)> = Vec::new();
    for kind in [WireKind::Http1, WireKind::Http2, WireKind::Http3] {
        let what = match resolve_kind(IoChoice::Auto, kind) {
            // Why the probe refused is the line's first part.
            Ok(r) if !backends_of(kind).contains(&Backend::Uring) => {
                format!("{} (no io_uring worker yet)", r.backend)
            }
            // Refused: why is the line's first part.
            Ok(r) if r.backend == Backend::Epoll && matches!(probed(), Uring::Refused(_)) => {
                format!("{} (io_uring refused here)", r.backend)
            }
            Ok(r) if r.backend == Backend::Epoll && r.why.is_some() => {
                format!("{} (io_uring not yet measured faster; --io uring runs it)", r.backend)
            }
            Ok(r) => r.backend.to_string(),
            Err(e) => e.to_string(),
        };
        match said.iter_mut().find(|(w, _)| *w == what) {
            Some((_, kinds)) => kinds.push(kind.name()),
            None => said.push((what, vec![kind.name()])),
        }
    }
    let parts: Vec<String> =
        said.iter().map(|(what, kinds)| format!("{what} for {}", kinds.join(", "))).collect();
    format!("--io auto takes {}", parts.join("; "))
}

fn nofile() -> Check {
    let Some((soft, hard)) = nofile_limits() else {
        return warn("open files limit", "cannot read RLIMIT_NOFILE");
    };
    let text = format!("{soft} soft, {hard} hard (herd raises soft to hard)");
    if hard < 65_536 {
        warn("open files limit", &format!("{text}: at most ~{} connections per process; raise the hard limit (ulimit -Hn, LimitNOFILE=) for tens of thousands", hard))
    } else {
        ok("open files limit", &text)
    }
}

fn sysctl_min(name: &str, min: u64, why: &str) -> Check {
    match sysctl(name).and_then(|v| v.parse::<u64>().ok()) {
        Some(v) if v >= min => ok(name, &v.to_string()),
        Some(v) => warn(name, &format!("{v}: {why}")),
        None => warn(name, "cannot read it"),
    }
}

fn port_range() -> Check {
    let name = "net.ipv4.ip_local_port_range";
    let Some(v) = sysctl("net.ipv4.ip_local_port_range") else {
        return warn(name, "cannot read it");
    };
    let nums: Vec<u64> = v.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    match nums.as_slice() {
        [lo, hi] if hi - lo + 1 >= 28_000 => ok(name, &format!("{v} ({} ports)", hi - lo + 1)),
        [lo, hi] => warn(name, &format!("{v}: only {} ports for connection-per-request loads: sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"", hi - lo + 1)),
        _ => warn(name, &format!("unexpected value {v}")),
    }
}

fn tw_reuse() -> Check {
    let name = "net.ipv4.tcp_tw_reuse";
    match sysctl("net.ipv4.tcp_tw_reuse").as_deref() {
        Some("1") => ok(name, "1: clients reuse TIME_WAIT ports everywhere"),
        Some("2") => ok(name, "2: reuse on loopback only (the default); herd's namespaced paths give each run fresh addresses instead"),
        Some(v) => warn(name, &format!("{v}: clients cannot reuse TIME_WAIT ports; connection-per-request cells may run out: sysctl -w net.ipv4.tcp_tw_reuse=2")),
        None => warn(name, "cannot read it"),
    }
}

/// Each server the lab can drive: installed or not, and its version.
fn servers(herd_exe: &Path, scratch: &Path, sup: &mut Supervisor) -> Vec<Check> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for ServerDef { name, kind, php, .. } in builtin_servers() {
        for program in programs_needed(kind, php) {
            if seen.iter().any(|s| s == program.name) {
                continue;
            }
            seen.push(program.name.to_string());
            let what = format!("server program {} (for {name})", program.name);
            let programs = match Programs::locate(&[program], herd_exe) {
                Ok(p) => p,
                Err(e) => {
                    out.push(missing(&what, &e.to_string()));
                    continue;
                }
            };
            let path = programs.get(program.name).map(Path::to_path_buf).unwrap_or_default();
            let version = version_of(
                kind,
                php,
                program.name,
                programs_for(kind, php, herd_exe),
                scratch,
                sup,
            );
            out.push(ok(
                &what,
                &format!(
                    "{} {}",
                    path.display(),
                    version.unwrap_or_else(|why| format!("(version unknown: {why})"))
                ),
            ));
        }
    }
    out
}

fn programs_for(
    kind: herd_drivers::ServerKind,
    php: Option<herd_drivers::Php>,
    herd_exe: &Path,
) -> Option<Programs> {
    Programs::locate(&programs_needed(kind, php), herd_exe).ok()
}

/// The version the driver's own probe reads from `program`.
fn version_of(
    kind: herd_drivers::ServerKind,
    php: Option<herd_drivers::Php>,
    program: &str,
    programs: Option<Programs>,
    scratch: &Path,
    sup: &mut Supervisor,
) -> Result<String, String> {
    let programs = programs.ok_or("another program it needs is not installed")?;
    let spec = ServerSpec {
        kind,
        php,
        protocol: herd_drivers::Protocol::H1,
        listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
        docroot: scratch.join("www"),
        run_dir: scratch.join("run"),
        workers: None,
        user: None,
        runs_as: None,
        programs,
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    };
    let launch = render(&spec).map_err(|e| e.to_string())?;
    let probe =
        launch.versions.iter().find(|v| v.program == program).ok_or("the driver has no probe")?;
    let captured = capture(sup, scratch, &probe.argv);
    (probe.parse)(&captured.text).ok_or_else(|| {
        let first = captured.text.lines().next().unwrap_or("no output").trim().to_owned();
        match captured.failure {
            Some(how) => format!("{how}: {first}"),
            None => format!("unreadable: {first}"),
        }
    })
}

fn capture(sup: &mut Supervisor, scratch: &Path, argv: &[OsString]) -> Captured {
    sup.capture("doctor-probe", argv, &scratch.join("doctor.out"), Duration::from_secs(10))
}

fn ip_vs() -> Check {
    if herd_topo::net::machine::has_ip_vs() {
        ok("IP_VS (LVS)", "available: the lvs-nat path can run")
    } else {
        warn("IP_VS (LVS)", "not in this kernel: the lvs-nat path is refused; use nft-numgen or haproxy-tcp for L4 balancing")
    }
}

/// Probes tbf and netem on a veth link in a scratch namespace (removed afterwards), as the
/// lab's preflight does for shaped links. Without tbf the bundled seed000-100mbit cannot
/// run: missing; without netem only links with delay or loss are refused: a warning.
fn qdiscs(scratch: &Path) -> Vec<Check> {
    let probed = match herd_topo::net::machine::probe_qdiscs(scratch) {
        Ok(p) => p,
        Err(why) => return vec![warn("tc qdiscs (tbf, netem)", &format!("not probed: {why}"))],
    };
    probed
        .into_iter()
        .map(|(qdisc, result)| {
            let what = format!("tc qdisc {}", qdisc.name());
            match result {
                Err(why) => {
                    let words =
                        format!("not available in this kernel ({why}): {}", qdisc.consequence());
                    if qdisc == herd_topo::net::machine::Qdisc::Tbf {
                        missing(&what, &words)
                    } else {
                        warn(&what, &words)
                    }
                }
                Ok(()) => ok(&what, "available"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// Every protocol has herd's io_uring worker: `auto` keeps epoll for them until io_uring
    /// measures faster (unless HERD_AUTO_IO says otherwise, or this kernel refuses io_uring).
    #[test]
    fn auto_says_what_it_takes_for_each_protocol() {
        use herd_engine::io_choice::{probed, resolve_kind, WireKind};
        use herd_engine::uring::probe::Uring;
        let said = super::auto_takes();
        let h1 = resolve_kind(herd_engine::IoChoice::Auto, WireKind::Http1).unwrap();
        let want = match (h1.backend, probed()) {
            (herd_engine::Backend::Uring, _) => {
                "--io auto takes io_uring for HTTP/1, HTTP/2, HTTP/3".to_owned()
            }
            (_, Uring::Available { .. }) => "--io auto takes epoll (io_uring not yet measured \
                 faster; --io uring runs it) for HTTP/1, HTTP/2, HTTP/3"
                .to_owned(),
            (_, Uring::Refused(_)) => {
                "--io auto takes epoll (io_uring refused here) for HTTP/1, HTTP/2, HTTP/3"
                    .to_owned()
            }
        };
        assert_eq!(said, want);
    }
}
