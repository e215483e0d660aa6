//! The first phase for an external server (`driver = "external"`): nothing to render, start
//! or stop; the phase waits until the server accepts a connection at its URL (within the
//! experiment's `ready_timeout`), records it as external with its URL, and, where the file
//! gives its main process (`pid`), watches that process's group for the server's CPU time.
//! Every repetition meets the same running process: the report says so.

use std::net::TcpStream;
use std::time::Duration;

use herd_drivers::Protocol;
use herd_store::ServerRecord;

use super::cell::CellRun;
use super::failure::{RunFailure, Stop};
use super::readiness::{poll, NotReady};
use super::watched::{On, Watched};
use crate::experiment::External;

/// How long one connect may take while waiting.
const CONNECT: Duration = Duration::from_secs(2);

impl CellRun<'_> {
    /// [`CellRun::start_servers`] for a server herd does not start.
    pub(super) fn start_external(
        &mut self,
        ext: &External,
    ) -> Result<(Vec<Watched>, Protocol), Stop> {
        let name = self.cell.server.name.clone();
        let timeout = self.ctx.experiment.runner.ready_timeout;
        let cancel = self.ctx.cancel;
        let waited = poll(
            timeout,
            || cancel.load(std::sync::atomic::Ordering::Relaxed),
            || None::<RunFailure>,
            || {
                Ok(TcpStream::connect_timeout(&ext.addr, CONNECT)
                    .map(drop)
                    .map_err(|e| format!("cannot connect to {}: {e}", ext.addr)))
            },
        );
        match waited {
            Ok(()) => {}
            Err(NotReady::Cancelled) => return Err(Stop::Cancelled { client: false }),
            Err(NotReady::Exited(e)) => return Err(e.into()),
            Err(NotReady::Unaskable(why)) => return Err(RunFailure::Setup(why).into()),
            Err(NotReady::TimedOut { last }) => {
                return Err(RunFailure::ServerNotReady {
                    name: format!("{name} (external, {})", ext.url()),
                    timeout,
                    last,
                    log_tail: "(an external server's log is its own)".into(),
                }
                .into())
            }
        }
        self.ca_file = ext.ca_file.clone();
        self.rec.servers.push(ServerRecord {
            name: name.clone(),
            program: "external".into(),
            version: format!("external at {}: not started by herd", ext.url()),
            argv: Vec::new(),
            cpus: None,
            cpu_seconds: None,
            configs: Vec::new(),
        });
        // Its process group, whose live threads and reaped children are the server's CPU:
        // on the server host when the URL is that host's, else here.
        let on_host = self.ctx.server_host.filter(|h| h.address == ext.addr.ip());
        let watched = match (ext.pid, on_host) {
            (Some(pid), Some(host)) => {
                host.group_cpu_seconds(pid).ok_or_else(|| {
                    RunFailure::Setup(format!(
                        "server {name}: pid {pid} is not a process on {} (or its CPU time is not \
                         readable there): give the external server's main process, or leave \
                         pid out",
                        host.url
                    ))
                })?;
                vec![Watched { pid, name, log: Default::default(), on: On::HostGroup }]
            }
            (Some(pid), None) => {
                let pgid = herd_topo::proc::process_group(pid).ok_or_else(|| {
                    RunFailure::Setup(format!(
                        "server {name}: pid {pid} is not a process here (or not readable): give \
                         the external server's main process, or leave pid out"
                    ))
                })?;
                vec![Watched { pid: pgid, name, log: Default::default(), on: On::Here }]
            }
            (None, _) => Vec::new(),
        };
        let over = if ext.tls { Protocol::H1Tls } else { Protocol::H1 };
        Ok((watched, over))
    }
}
