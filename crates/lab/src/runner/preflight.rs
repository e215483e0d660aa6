//! Everything checked before the first cell starts, so that a run never dies half-way on
//! something knowable up front: every server's programs are installed (all missing ones named
//! at once, with the apt package), every client tool too, every CPU list exists here, and
//! servers that drop privileges have their user, and network paths have root, their tools
//! and the kernel features they rely on (IP_VS for lvs-nat, tc netem for a link's delay or loss). The clients' versions are asked here; a
//! server program's version on its first run (`cell::version`), once per experiment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_drivers::{programs_needed, proxy_programs_needed, Programs, ProxyKind};
use herd_topo::cpuset::online;
use herd_topo::net::machine::{self, Qdisc};
use herd_topo::net::Path as NetPath;
use herd_topo::{CpuSet, Supervisor};

use crate::client::{self, Tool};
use crate::error::LabError;
use crate::experiment::{AxisName, Experiment};
use crate::matrix::Cell;

/// What preflight found.
#[derive(Debug)]
pub(super) struct Ready {
    /// Programs by server name.
    pub programs: BTreeMap<String, Programs>,
    /// Client programs by tool.
    pub clients: BTreeMap<Tool, PathBuf>,
    /// Who unprivileged server workers run as (when herd runs as root).
    pub user: Option<String>,
    /// Who herd runs as, by name: every server that does not switch users, too.
    pub runs_as: Option<String>,
    /// The router programs of the proxy paths.
    pub proxies: BTreeMap<ProxyKind, Programs>,
    /// perf, when the experiment profiles its servers (`[runner] profile`).
    pub perf: Option<PathBuf>,
}

pub(super) fn check(e: &Experiment, cells: &[Cell], herd_exe: &Path) -> Result<Ready, LabError> {
    let mut missing: Vec<String> = Vec::new();
    let mut programs = BTreeMap::new();
    // Only the servers of cells that run: a server whose every cell is refused starts never.
    // By the cells' servers, not the file's: the calibration server is herd serve in HTTP
    // cells and tbench_srv in NetBench ones (`matrix::cells`), so one name may need both.
    let mut wanted: BTreeMap<&str, Vec<&'static herd_drivers::Program>> = BTreeMap::new();
    for c in cells {
        let needed = wanted.entry(c.server.name.as_str()).or_default();
        for p in programs_needed(c.server.kind, c.server.php) {
            if !needed.iter().any(|n| std::ptr::eq(*n, p)) {
                needed.push(p);
            }
        }
    }
    // On a `[hosts]` server host the servers' programs are located there
    // (`RoleHost::open`), its CPUs and users too.
    let remote = e.hosts.as_ref().is_some_and(|h| h.server.is_some());
    if remote {
        wanted.clear();
    }
    for (name, needed) in wanted {
        let def = cells.iter().find(|c| c.server.name == name).map(|c| &c.server);
        let name = name.to_owned();
        match def.map_or_else(
            || Programs::locate(&needed, herd_exe),
            |def| crate::matrix::server_programs(def, &needed, herd_exe),
        ) {
            Ok(p) => {
                programs.insert(name.clone(), p);
            }
            Err(err) => missing.push(format!("server {name}: {err}")),
        }
    }
    if !remote {
        missing.extend(lighttpd_tls_missing(cells, Path::new(herd_drivers::LIGHTTPD_TLS_MODULE.0)));
    }
    let mut clients = BTreeMap::new();
    // With `[hosts] clients`, ab, wrk and h2load run on client 1, and are located there
    // (`ClientHosts::open`); herd's own client runs from here.
    let on_hosts = e.hosts.as_ref().is_some_and(|h| !h.clients.is_empty());
    for cell in cells {
        if clients.contains_key(&cell.client) || (on_hosts && cell.client != Tool::Herd) {
            continue;
        }
        match client::locate(cell.client, herd_exe) {
            Some(p) => {
                clients.insert(cell.client, p);
            }
            None => missing.push(format!(
                "client {}: not installed (apt-get install {})",
                cell.client.name(),
                cell.client.package()
            )),
        }
    }
    // NBENCH's load file: dbench's NetBench trace.
    let loadfile = Path::new(client::smbtorture::DBENCH_CLIENT_TXT);
    if cells.iter().any(|c| c.workload.is_netbench()) && !loadfile.is_file() {
        missing
            .push(format!("workload netbench: no {} (apt-get install dbench)", loadfile.display()));
    }
    // With a `[hosts]` router, a proxy path is its program there, located there
    // (`RoleHost::open_router`): no namespace, no proxy and no router CPU here.
    let routed_there = e.hosts.as_ref().is_some_and(|h| h.router.is_some());
    let mut proxies = BTreeMap::new();
    for kind in cells.iter().filter_map(|c| c.proxy()) {
        if routed_there || proxies.contains_key(&kind) {
            continue;
        }
        match Programs::locate(&proxy_programs_needed(kind), herd_exe) {
            Ok(p) => {
                proxies.insert(kind, p);
            }
            Err(err) => missing.push(format!("path {kind}: {err}")),
        }
    }
    if !missing.is_empty() {
        return Err(LabError::Missing(missing));
    }
    let perf = match e.runner.profile {
        Some(crate::experiment::Profiler::Perf) => {
            Some(super::profile::check_machine().map_err(|why| LabError::Unsupported(vec![why]))?)
        }
        None => None,
    };
    if let Some(needed) = super::disk::needed(cells) {
        super::disk::check(needed, &std::env::temp_dir()).map_err(LabError::Setup)?;
    }
    let mut paths: Vec<NetPath> =
        if remote { Vec::new() } else { cells.iter().filter_map(|c| c.path).collect() };
    paths.sort();
    paths.dedup();
    if !paths.is_empty() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(LabError::Setup(
                "[matrix] path builds network namespaces, which needs root: run herd lab as root (sudo), or remove `path` to measure over loopback".into(),
            ));
        }
        let shaped = cells.iter().find_map(|c| c.link.as_ref());
        let lacking = machine::missing_for(&paths, shaped);
        if !lacking.is_empty() {
            return Err(LabError::Unsupported(lacking));
        }
        qdiscs(cells)?;
    }
    let online = online();
    let mut sets: Vec<&CpuSet> =
        if remote { Vec::new() } else { cells.iter().map(|c| &c.server_cpus).collect() };
    // With `[hosts] clients`, `[client] cpus` are each client host's (`ClientHosts::open`).
    if !on_hosts {
        sets.push(&e.client_cpus);
    }
    if !routed_there {
        sets.push(&e.router_cpus);
    }
    for s in sets {
        s.check(&online).map_err(|err| LabError::Cpus(err.to_string()))?;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let user = if root && !remote {
        if herd_topo::user::user_ids("www-data").is_none() {
            return Err(LabError::Setup(
                "herd runs as root and servers drop to user www-data, which does not exist here: \
                 create it (adduser --system www-data) or run herd lab as another user"
                    .into(),
            ));
        }
        Some("www-data".to_string())
    } else {
        None
    };
    if root && cells.iter().any(|c| c.server.kind == herd_drivers::ServerKind::Samba) {
        guests_reach(&std::env::temp_dir()).map_err(LabError::Setup)?;
    }
    let runs_as = herd_topo::user::current_user();
    let ready = Ready { programs, clients, user, runs_as, proxies, perf };
    // On a server host they are judged there (`config_on_host`), once it is reached.
    if !remote {
        user_configs_pass(cells, &ready)?;
    }
    Ok(ready)
}

/// Every user's own config file (`[servers.NAME] config`), filled in as a run would fill it
/// and judged by the server's own config test (`nginx -t`, `apache2 -t`, `lighttpd -tt`,
/// `h2o -t`, `caddy validate`) in a scratch directory, before anything runs: a config the
/// server refuses fails here, with the server's words.
fn user_configs_pass(cells: &[Cell], ready: &Ready) -> Result<(), LabError> {
    let mut judged = std::collections::BTreeSet::new();
    for c in cells.iter().filter(|c| c.server.config.is_some()) {
        if !judged.insert((c.server.name.clone(), c.protocol)) {
            continue;
        }
        let scratch = std::env::temp_dir().join(format!(
            "herd-config-test-{}-{}",
            std::process::id(),
            judged.len()
        ));
        let result = config_test(c, ready, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        result.map_err(LabError::Setup)?;
    }
    Ok(())
}

fn config_test(c: &Cell, ready: &Ready, scratch: &Path) -> Result<(), String> {
    let name = &c.server.name;
    let config = c.server.config.as_ref();
    let path = config.map_or_else(String::new, |u| u.path.display().to_string());
    let docroot = scratch.join("www");
    super::launch::create_dir(&docroot)?;
    let server_dir = scratch.join(name);
    super::launch::create_dir(&server_dir)?;
    // A port no run uses: the tests do not bind it.
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 9));
    let spec = super::servers::server_spec(c, ready, listen, &docroot, server_dir)
        .ok_or_else(|| format!("no programs were located for server {name}"))?;
    let launch = crate::server_config::render_with(&spec, config)
        .map_err(|e| format!("server {name}: config {path}: {e}"))?;
    super::launch::write_launch(&launch, ready.user.as_deref())?;
    if let Some(tls) = &launch.tls {
        super::launch::write_tls(tls)?;
    }
    let mut sup = herd_topo::Supervisor::new(None);
    for argv in &launch.validate {
        let log = scratch.join("config-test.log");
        let out = sup.capture("config test", argv, &log, std::time::Duration::from_secs(30));
        if let Some(failure) = out.failure {
            let words: Vec<String> =
                argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            return Err(format!(
                "server {name}: its own config test refused {path} ({}: {failure}):\n{}",
                words.join(" "),
                out.text.trim_end()
            ));
        }
    }
    Ok(())
}

/// As root, smbd serves its guests as `nobody`, and its share is in the run directory under
/// `tmp` (TMPDIR): every directory above must let other users through, or NBENCH fails with
/// smbtorture's "Unknown error/failure" (`Unable to setup \clients - ERRSRV:ERRbaduid`,
/// seen with TMPDIR under /root). Err names the directory that does not.
fn guests_reach(tmp: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for dir in tmp.ancestors() {
        let Ok(meta) = std::fs::metadata(dir) else { continue };
        let mode = meta.permissions().mode();
        if mode & 0o001 == 0 {
            return Err(format!(
                "samba's share would be under {} (TMPDIR), and {} (mode {:o}) does not let \
                 other users through: smbd serves guests as nobody, who could not reach the \
                 share; set TMPDIR to a directory every user can enter (/tmp, or chmod o+x {})",
                tmp.display(),
                dir.display(),
                mode & 0o7777,
                dir.display()
            ));
        }
    }
    Ok(())
}

/// A link's rate needs tc tbf, a delay or loss tc netem: the kernel is asked (a probe on a
/// scratch link), and without the qdisc such cells are refused, never run unshaped.
fn qdiscs(cells: &[Cell]) -> Result<(), LabError> {
    // qdisc → the link values that need it
    let mut needed: Vec<(Qdisc, Vec<String>)> = Vec::new();
    for c in cells {
        let (Some(link), Some(text)) = (&c.link, c.axis(AxisName::Link)) else { continue };
        for (q, wanted) in [(Qdisc::Tbf, link.rate.is_some()), (Qdisc::Netem, link.needs_netem())] {
            if !wanted {
                continue;
            }
            match needed.iter_mut().find(|(n, _)| *n == q) {
                Some((_, links)) if links.iter().any(|l| l == text) => {}
                Some((_, links)) => links.push(text.to_owned()),
                None => needed.push((q, vec![text.to_owned()])),
            }
        }
    }
    if needed.is_empty() {
        return Ok(());
    }
    let probed = machine::probe_qdiscs(&std::env::temp_dir()).map_err(|why| {
        LabError::Unsupported(vec![format!(
            "whether this kernel can shape links could not be probed: {why}"
        )])
    })?;
    let refused: Vec<String> = needed
        .iter()
        .filter_map(|(q, links)| {
            let (_, Err(tc)) = probed.iter().find(|(p, _)| p == q)? else { return None };
            let listed = links.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ");
            Some(format!(
                "link {listed}: needs tc {}, and this kernel has no tc {} ({tc}): {}; {}",
                q.name(),
                q.name(),
                q.consequence(),
                match q {
                    Qdisc::Tbf => "leave `link` out, or run on a kernel with sch_tbf (CONFIG_NET_SCH_TBF)",
                    Qdisc::Netem => "keep only a rate (e.g. 100mbit), or run on a kernel with sch_netem (CONFIG_NET_SCH_NETEM)",
                }
            ))
        })
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(LabError::Unsupported(refused))
    }
}

/// Asks each distinct program its version once: program path → version (or `unknown: …`).
pub(super) fn versions(
    ready: &Ready,
    scratch: &Path,
    sup: &mut Supervisor,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (tool, path) in &ready.clients {
        let argv = client::version_argv(*tool, path);
        let text = run_capture(sup, scratch, "version", &argv);
        let v = client::parse_version(*tool, &text).unwrap_or_else(|| unknown(&text));
        out.insert(format!("client:{}", tool.name()), v);
    }
    out
}

/// Runs a version probe and returns what it printed, whatever its exit status (`wrk -v`
/// exits 1): the parser gets the text, and an unparsable one is recorded as `unknown (…)`.
pub(super) fn run_capture(
    sup: &mut Supervisor,
    scratch: &Path,
    name: &str,
    argv: &[OsString],
) -> String {
    let log = scratch.join(format!("{name}.out"));
    sup.capture(name, argv, &log, Duration::from_secs(10)).text
}

pub(super) fn unknown(output: &str) -> String {
    let first = output.lines().next().unwrap_or("no output").trim();
    format!("unknown ({first})")
}

/// lighttpd's TLS comes in a package of its own: where a cell runs lighttpd over TLS and
/// `module` is not there, what to install (else lighttpd's own config check would stop the
/// run, naming only the module).
fn lighttpd_tls_missing(cells: &[Cell], module: &Path) -> Option<String> {
    let over_tls = |c: &&Cell| {
        c.server.kind == herd_drivers::ServerKind::Lighttpd && c.protocol.is_encrypted()
    };
    let cell = cells.iter().find(over_tls)?;
    (!module.exists()).then(|| {
        format!(
            "server {} over {}: lighttpd's TLS module {} is not installed (apt-get install {})",
            cell.server.name,
            cell.protocol,
            module.display(),
            herd_drivers::LIGHTTPD_TLS_MODULE.1
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{guests_reach, lighttpd_tls_missing};

    #[test]
    fn lighttpd_over_tls_without_its_module_says_what_to_install() {
        let text = "name = \"l\"\n[matrix]\nserver = [\"lighttpd\"]\nprotocol = [\"h2c\", \"h2\"]\n\
                    workload = [\"w\"]\nload = [\"n\"]\n[workloads.w]\nkind = \"static\"\nsize = 10\n\
                    [loads.n]\nrequests = 10\nconcurrency = 1\n";
        let e = crate::experiment::parse(text, "l.toml").unwrap();
        let cells = crate::matrix::cells(&e);
        let gone = std::path::Path::new("/nonexistent/mod_openssl.so");
        assert_eq!(
            lighttpd_tls_missing(&cells, gone).as_deref(),
            Some(
                "server lighttpd over h2: lighttpd's TLS module /nonexistent/mod_openssl.so is \
                 not installed (apt-get install lighttpd-mod-openssl)"
            )
        );
        // In the clear it needs none; installed, nothing is missing.
        let clear: Vec<_> = cells.iter().filter(|c| !c.protocol.is_encrypted()).cloned().collect();
        assert_eq!(lighttpd_tls_missing(&clear, gone), None);
        assert_eq!(lighttpd_tls_missing(&cells, std::path::Path::new("/")), None);
    }
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_closed_directory_above_the_share_is_named() {
        assert_eq!(guests_reach(std::path::Path::new("/tmp")), Ok(()));
        let base = std::env::temp_dir().join(format!("herd-guests-{}", std::process::id()));
        let inner = base.join("tmp");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
        let e = guests_reach(&inner).unwrap_err();
        assert!(e.contains(&format!("{} (mode 700) does not let", base.display())), "{e}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(guests_reach(&inner), Ok(()));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
