//! The checks before any load: the whole network path answers (from the client's host,
//! through the router, to the server), and the workload's request gets exactly the expected
//! answer ("verify before measure": a server that answers 404 fast is not fast).

use std::time::Duration;

use herd_drivers::Probe;
use herd_topo::net::Host;

use super::cell::CellRun;
use super::failure::{RunFailure, Stage, Stop};
use super::watched::Started;
use crate::load::{Method, Request};
use crate::verify;

/// How long the verifying request may take.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(30);

impl CellRun<'_> {
    /// On a network path: waits until the readiness file answers through the path, asked
    /// from the client's host. The server answered on its own host already, so a failure
    /// here is the path's ([`RunFailure::PathUnreachable`]), or its router program's when
    /// that exits (the process watched, whose log is quoted).
    pub(super) fn check_path(&mut self, started: &Started) -> Result<(), Stop> {
        let Some(path) = self.cell.path else { return Ok(()) };
        let Some(watched) = started.front() else {
            return Err(
                RunFailure::Setup("no process was started to check the path to".into()).into()
            );
        };
        let ca = self.ca_file.clone();
        // From every client host (four on `four-links`) to the address it will load.
        for (host, target) in self.place.clients() {
            // In what the server's own readiness was asked, through whatever the router
            // speaks, trusting what the client will trust.
            let through = if self.cell.workload.is_netbench() {
                // SMB: the path carries the connection, which is all smbd's readiness asks.
                Probe::Tcp(target)
            } else {
                Probe::Http {
                    addr: target,
                    path: format!("/{}", herd_drivers::READY_FILE),
                    protocol: started.over,
                }
            };
            self.wait_ready(&through, ca.as_deref(), host, watched).map_err(|stop| match stop {
                Stop::Failed(RunFailure::ServerNotReady { name, timeout, last, log_tail }) => {
                    RunFailure::PathUnreachable { path, name, timeout, last, log_tail }.into()
                }
                // It had answered on its own host already: it died after its start.
                Stop::Failed(RunFailure::ServerExited { name, status, log_tail, .. }) => {
                    RunFailure::ServerExited { name, status, when: Stage::Running, log_tail }.into()
                }
                other => other,
            })?;
        }
        Ok(())
    }

    /// Sends the workload's request once, from the client's host, in the cell's protocol,
    /// and checks the answer against the expected one; returns the request the client runs
    /// will send.
    pub(super) fn verify(&mut self) -> Result<Request, Stop> {
        let (cell, ctx) = (self.cell, self.ctx);
        let setup = |what: String| Stop::from(RunFailure::Setup(what));
        let expected = ctx.docroot.expected.get(&cell.workload.name).ok_or_else(|| {
            setup(format!("no expected answer was prepared for workload {}", cell.workload.name))
        })?;
        let request = cell
            .request(&ctx.docroot.dir, Some(expected.body_bytes))
            .ok_or_else(|| setup(cell.workload.unsupported_reason(&cell.server)))?;
        let path = expected.path.clone().unwrap_or_else(|| request.path.clone());
        let body = match &request.method {
            Method::Post { body_file, .. } => Some(std::fs::read(body_file).map_err(|err| {
                setup(format!("cannot read the POST body {}: {err}", body_file.display()))
            })?),
            Method::Get => None,
        };
        let method = if body.is_some() { "POST" } else { "GET" };
        let target = self.place.target;
        let over = verify::Over { protocol: cell.protocol, ca_file: self.ca_file.as_deref() };
        let answer = self
            .place
            .within(Host::Client, || {
                verify::fetch_over(
                    target,
                    over,
                    method,
                    &path,
                    body.as_deref(),
                    VERIFY_TIMEOUT,
                    expected.body_bytes,
                )
            })
            .map_err(setup)?;
        let failed = |why| RunFailure::VerifyFailed {
            server: cell.server.name.clone(),
            method,
            path: path.clone(),
            why: Box::new(why),
        };
        let answer = answer.map_err(failed)?;
        verify::check(&answer, expected).map_err(failed)?;
        Ok(request)
    }
}
