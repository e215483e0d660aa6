//! `herd lab up` on a `[hosts]` server host: the one server started there as a run starts
//! it (`servers_on_host.rs`: rendered against the helper's run directory, written through
//! the helper, its processes started on the host's CPUs of the cell, each ready there, the
//! front one answering from here), its URL the host's address, its CA copied here; kept up
//! until Ctrl-C, or until it ends or the link to the host is lost (an error naming the host),
//! then stopped through the helper.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use herd_drivers::Probe;
use herd_host::protocol::{Probe as HostProbe, Readiness};

use super::readiness::{ask, poll, NotReady};
use super::role_host::{RoleHost, HOST_PORT};
use super::servers_on_host::{copy_docroot, spec_on, start_process, write_launch, DOCROOT};
use super::up::Up;
use crate::error::LabError;
use crate::experiment::Experiment;
use crate::matrix::Cell;

/// Starts `cell`'s server on `host` (its document root and CA prepared in `run_dir`, here),
/// calls `up` once it answers from here, and keeps it until `cancel` is set.
pub(super) fn serve(
    e: &Experiment,
    cell: &Cell,
    host: &RoleHost,
    run_dir: &Path,
    cancel: &AtomicBool,
    up: &mut dyn FnMut(&Up),
) -> Result<(), LabError> {
    let setup = |why: String| LabError::Setup(format!("on {}: {why}", host.url));
    let workloads: Vec<_> = e.workloads.values().collect();
    let docroot_dir = run_dir.join("www");
    let docroot = crate::docroot::prepare(&docroot_dir, workloads)
        .map_err(|source| LabError::Io { path: docroot_dir.clone(), source })?;
    copy_docroot(host, &docroot.dir)
        .map_err(|why| setup(format!("cannot copy the document root: {why}")))?;
    let name = &cell.server.name;
    let port = cell.server.kind.fixed_port().unwrap_or(HOST_PORT);
    let listen = SocketAddr::new(host.address, port);
    let server_dir = host.path("up").join(name);
    let spec = spec_on(host, cell, listen, &host.path(DOCROOT), server_dir.clone())
        .ok_or_else(|| setup(format!("no programs were located for server {name}")))?;
    let launch = crate::server_config::render_with(&spec, cell.server.config.as_ref())
        .map_err(|err| setup(format!("cannot configure {name}: {err}")))?;
    write_launch(host, &launch).map_err(setup)?;
    let ca_file = match &launch.tls {
        Some(tls) => {
            // A client here trusts the CA from a copy.
            let ca = tls.files.iter().find(|f| f.path == tls.ca).ok_or_else(|| {
                setup(format!("the driver of {name} made no CA file at {}", tls.ca.display()))
            })?;
            let local = run_dir.join(format!("{name}-ca.pem"));
            std::fs::write(&local, &ca.contents)
                .map_err(|e| LabError::Setup(format!("cannot write {}: {e}", local.display())))?;
            Some(local)
        }
        None => None,
    };
    let cpus = match &cell.server_cpus {
        herd_topo::CpuSet::All => None,
        set => Some(set.to_string()),
    };
    let timeout = e.runner.ready_timeout;
    let mut processes = Vec::new();
    for p in &launch.processes {
        let log = format!("up-{name}-{}.log", p.name);
        let pid = start_process(host, p, cpus.clone(), &log)
            .map_err(|e| setup(format!("cannot start {}: {e}", p.name)))?;
        if let Some(probe) = &p.ready {
            ready_there(host, &p.name, probe, timeout, &log).map_err(setup)?;
        }
        processes.push((p.name.clone(), pid, log));
    }
    let Some((front, _, log)) = processes.last().cloned() else {
        return Err(setup(format!("the driver of {name} started no process")));
    };
    ready_there(host, &front, &launch.ready, timeout, &log).map_err(setup)?;
    if let Probe::Http { path, protocol, .. } = &launch.ready {
        // From here, as a client will ask.
        let remote = Probe::Http { addr: listen, path: path.clone(), protocol: *protocol };
        let waited = poll(
            timeout,
            || cancel.load(Ordering::Relaxed),
            || host.ended(&front),
            || Ok(ask(&remote, ca_file.as_deref())),
        );
        let why = match waited {
            Ok(()) => None,
            Err(NotReady::Cancelled) => Some("stopped before the server was ready".to_owned()),
            Err(NotReady::Exited(end)) => Some(format!(
                "{front} exited before it was ready ({}); its log ends:\n{}",
                end.how, end.log_tail
            )),
            Err(NotReady::Unaskable(why)) => Some(why),
            Err(NotReady::TimedOut { last }) => {
                Some(format!("{front} did not answer from here within {timeout:?}: {last}"))
            }
        };
        if let Some(why) = why {
            return Err(setup(why));
        }
    }
    let scheme = if cell.protocol.is_encrypted() { "https" } else { "http" };
    up(&Up {
        url: format!("{scheme}://{listen}/"),
        protocol: cell.protocol,
        ca_file,
        processes: processes
            .iter()
            .map(|(n, pid, _)| format!("{n} (pid {pid} on {})", host.url))
            .collect(),
        dir: server_dir,
    });
    while !cancel.load(Ordering::Relaxed) {
        if let Some(why) = host.lost() {
            return Err(setup(format!("the link to the host is lost: {why}")));
        }
        for (n, pid, log) in &processes {
            if let Some(end) = host.ended(n) {
                return Err(setup(format!(
                    "{n} (pid {pid}) ended by itself ({}); its log ends:\n{}",
                    end.how,
                    host.log_tail(log)
                )));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

/// Waits until `probe` accepts a connection on the host (asked by the helper there).
fn ready_there(
    host: &RoleHost,
    id: &str,
    probe: &Probe,
    timeout: Duration,
    log: &str,
) -> Result<(), String> {
    let on_host = match probe {
        Probe::Http { addr, .. } | Probe::Tcp(addr) => HostProbe::Tcp(addr.to_string()),
        Probe::UnixSocket(path) => HostProbe::UnixSocket(path.display().to_string()),
    };
    match host.ready(id, on_host, timeout)? {
        Readiness::Ready { .. } => Ok(()),
        Readiness::Exited { .. } => {
            Err(format!("{id} exited before it was ready; its log ends:\n{}", host.log_tail(log)))
        }
        Readiness::TimedOut { .. } => Err(format!(
            "{id} accepted no connection within {timeout:?}; its log ends:\n{}",
            host.log_tail(log)
        )),
    }
}
