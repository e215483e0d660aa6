//! `herd lab up FILE --server NAME [--protocol P]`: one server of an experiment started the
//! way a lab run starts it — the driver's rendered config, a certificate made for it over TLS,
//! its CPU set, its document root with every workload's files — then kept up, its URL and the
//! CA file to trust said, until Ctrl-C stops it by PID and removes its run directory. For
//! runs by hand against exactly what the lab measures: `herd run`, h2load, curl. With a
//! `[hosts]` server, on that host (`up_on_host.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use herd_drivers::Probe;
use herd_stats::Protocol;
use herd_topo::{Registry, Supervisor};

use super::launch::{create_dir, spawn_of, write_launch, write_tls};
use super::servers::server_spec;
use super::Checked;
use crate::error::{with_causes, LabError};
use crate::experiment::Experiment;
use crate::matrix::Cell;

/// Which server, in which protocol.
pub struct UpRequest<'a> {
    pub server: &'a str,
    /// None: the protocol of the server's first cell.
    pub protocol: Option<Protocol>,
    /// Set by Ctrl-C: the server is stopped and its directory removed.
    pub cancel: &'a AtomicBool,
}

/// The server, up: what to point a client at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Up {
    pub url: String,
    pub protocol: Protocol,
    /// The CA file a client trusts over TLS; None in the clear.
    pub ca_file: Option<PathBuf>,
    /// The processes started, `name (pid N)`, in start order.
    pub processes: Vec<String>,
    /// Where its rendered config and logs are (removed when it stops).
    pub dir: PathBuf,
}

/// Starts the server, calls `up` once it answers, and keeps it until `cancel` is set (or it
/// exits: an error with its log's end); then stops it and removes its run directory.
pub fn up(
    e: &Experiment,
    checked: Checked,
    want: &UpRequest<'_>,
    tmp: &Path,
    up: &mut dyn FnMut(&Up),
) -> Result<(), LabError> {
    let Checked { ready, cells, cgroups, server_host, .. } = checked;
    let cell = pick(&cells, want)?;
    let registry =
        Registry::create(tmp).map_err(|source| LabError::Io { path: tmp.to_owned(), source })?;
    let run_dir = registry.dir().to_path_buf();
    let mut sup = Supervisor::new(Some(registry.clone())).with_cgroups(cgroups);
    let result = match &server_host {
        Some(host) => super::up_on_host::serve(e, cell, host, &run_dir, want.cancel, up),
        None => serve(e, cell, &ready, &run_dir, &mut sup, want.cancel, up),
    };
    sup.stop_all(Duration::from_secs(5));
    drop(sup);
    if let Some(host) = server_host {
        // Stopped through its helper, which then ends and removes its run directory (it
        // does so on its own when the link is lost).
        host.stop_all(Duration::from_secs(5));
        let _ = host.close();
    }
    let removed = registry.remove();
    result?;
    removed.map_err(|source| LabError::Io { path: run_dir, source })
}

/// The first cell that runs of that server (in that protocol), on loopback.
fn pick<'c>(cells: &'c [Cell], want: &UpRequest<'_>) -> Result<&'c Cell, LabError> {
    let of_server: Vec<&Cell> =
        cells.iter().filter(|c| c.server.name == want.server && c.control_of.is_none()).collect();
    if of_server.is_empty() {
        let mut names: Vec<&str> = cells.iter().map(|c| c.server.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        return Err(LabError::Setup(format!(
            "no cell of the experiment runs server `{}`: use one of {}",
            want.server,
            names.join(", ")
        )));
    }
    let in_protocol: Vec<&Cell> = of_server
        .iter()
        .copied()
        .filter(|c| want.protocol.is_none_or(|p| c.protocol == p))
        .collect();
    let Some(&first) = in_protocol.first() else {
        let mut protocols: Vec<String> = of_server.iter().map(|c| c.protocol.to_string()).collect();
        protocols.dedup();
        return Err(LabError::Setup(format!(
            "server `{}` runs in no cell over {}: the experiment has it over {}",
            want.server,
            want.protocol.map_or_else(String::new, |p| p.to_string()),
            protocols.join(", ")
        )));
    };
    in_protocol.iter().copied().find(|c| c.path.is_none()).ok_or_else(|| {
        LabError::Setup(format!(
            "server `{}` runs only on network paths here ({}): `herd lab up` starts it on \
             loopback, from a cell without a path",
            want.server, first.key
        ))
    })
}

fn serve(
    e: &Experiment,
    cell: &Cell,
    ready: &super::preflight::Ready,
    run_dir: &Path,
    sup: &mut Supervisor,
    cancel: &AtomicBool,
    up: &mut dyn FnMut(&Up),
) -> Result<(), LabError> {
    let setup = LabError::Setup;
    let workloads: Vec<_> = e.workloads.values().collect();
    let docroot_dir = run_dir.join("www");
    let docroot = crate::docroot::prepare(&docroot_dir, workloads)
        .map_err(|source| LabError::Io { path: docroot_dir.clone(), source })?;
    let name = &cell.server.name;
    let server_dir = run_dir.join(name);
    create_dir(&server_dir).map_err(setup)?;
    let listen = super::port::pick().map_err(setup)?;
    let spec = server_spec(cell, ready, listen, &docroot.dir, server_dir.clone())
        .ok_or_else(|| setup(format!("no programs were located for server {name}")))?;
    let launch = crate::server_config::render_with(&spec, cell.server.config.as_ref())
        .map_err(|err| setup(format!("cannot configure {name}: {err}")))?;
    write_launch(&launch, ready.user.as_deref()).map_err(setup)?;
    let ca_file = match &launch.tls {
        Some(tls) => {
            write_tls(tls).map_err(setup)?;
            Some(tls.ca.clone())
        }
        None => None,
    };
    let mut processes = Vec::new();
    for p in &launch.processes {
        let spawn = spawn_of(p, &cell.server_cpus, None);
        let pid = sup
            .start(&spawn)
            .map_err(|err| setup(format!("cannot start {}: {}", p.name, with_causes(&err))))?;
        if let Some(probe) = &p.ready {
            wait_ready(e, probe, ca_file.as_deref(), sup, pid, &p.log, cancel)?;
        }
        processes.push((p.name.clone(), pid, p.log.clone()));
    }
    let Some((_, front, log)) = processes.last().cloned() else {
        return Err(setup(format!("the driver of {name} started no process")));
    };
    wait_ready(e, &launch.ready, ca_file.as_deref(), sup, front, &log, cancel)?;
    let scheme = if cell.protocol.is_encrypted() { "https" } else { "http" };
    up(&Up {
        url: format!("{scheme}://{listen}/"),
        protocol: cell.protocol,
        ca_file,
        processes: processes.iter().map(|(n, pid, _)| format!("{n} (pid {pid})")).collect(),
        dir: server_dir,
    });
    while !cancel.load(Ordering::Relaxed) {
        for (n, pid, log) in &processes {
            if let Some(status) = sup.exit_status(*pid) {
                return Err(setup(format!(
                    "{n} (pid {pid}) ended by itself ({status}); its log ends:\n{}",
                    super::log_tail::last_lines_of(log)
                )));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Waits until `probe` answers ([`super::readiness::poll`], as a run waits), the process
/// exits (an error with its log's end), Ctrl-C, or the experiment's `ready_timeout`.
fn wait_ready(
    e: &Experiment,
    probe: &Probe,
    ca_file: Option<&Path>,
    sup: &mut Supervisor,
    pid: u32,
    log: &Path,
    cancel: &AtomicBool,
) -> Result<(), LabError> {
    use super::readiness::{ask, poll, NotReady};
    let timeout = e.runner.ready_timeout;
    let waited = poll(
        timeout,
        || cancel.load(Ordering::Relaxed),
        || sup.exit_status(pid),
        || Ok(ask(probe, ca_file)),
    );
    let why = match waited {
        Ok(()) => return Ok(()),
        Err(NotReady::Cancelled) => "stopped before the server was ready".to_owned(),
        Err(NotReady::Exited(status)) => format!(
            "the server (pid {pid}) exited before it was ready ({status}); its log ends:\n{}",
            super::log_tail::last_lines_of(log)
        ),
        Err(NotReady::Unaskable(why)) => why,
        Err(NotReady::TimedOut { last }) => {
            format!("the server did not answer within {timeout:?}: {last}")
        }
    };
    Err(LabError::Setup(why))
}
