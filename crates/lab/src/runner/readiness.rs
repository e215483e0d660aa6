//! Waiting until a process herd started answers its readiness probe (a unix socket or a TCP
//! port to connect to, or `GET /READY_FILE` answering 200 in the protocol the driver says, over TLS
//! trusting the run's CA), asked from a host's namespace. A process that exits while herd
//! waits fails the run at once, with its log's end.

use std::path::Path;
use std::time::{Duration, Instant};

use herd_drivers::Probe;
use herd_topo::net::Host;

use super::cell::CellRun;
use super::failure::{RunFailure, Stage, Stop};
use super::log_tail::last_lines_of;
use super::watched::Watched;
use crate::verify;

/// Time between the first two probes, doubled after each up to [`POLL`]: most servers listen
/// within a few milliseconds, and a cell restarts its server for every repetition, so a
/// first wait of 20 ms cost a quick start of 40 runs most of a second.
const FIRST_POLL: Duration = Duration::from_millis(1);
/// The longest time between two probes.
const POLL: Duration = Duration::from_millis(20);
/// How long one HTTP probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

impl CellRun<'_> {
    /// Waits until `probe` answers, asked from `host`'s namespace, for at most the
    /// experiment's `ready_timeout`: [`RunFailure::ServerNotReady`] after that, with the
    /// probe's last answer; [`RunFailure::ServerExited`] as soon as `process` exits.
    pub(super) fn wait_ready(
        &mut self,
        probe: &Probe,
        ca_file: Option<&Path>,
        host: Host,
        process: &Watched,
    ) -> Result<(), Stop> {
        let timeout = self.ctx.experiment.runner.ready_timeout;
        let started = Instant::now();
        let mut pause = FIRST_POLL;
        loop {
            if self.cancelled() {
                return Err(Stop::Cancelled { client: false });
            }
            if let Some(exited) = process.exited(self.sup, Stage::Starting) {
                return Err(exited.into());
            }
            let last = match self.place.within(host, || ask(probe, ca_file)) {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(why)) => why,
                // The namespace is gone or cannot be entered: waiting will not help.
                Err(why) => return Err(RunFailure::Setup(why).into()),
            };
            if started.elapsed() > timeout {
                return Err(RunFailure::ServerNotReady {
                    name: process.name.clone(),
                    timeout,
                    last,
                    log_tail: last_lines_of(&process.log),
                }
                .into());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(POLL);
        }
    }
}

/// Asks `probe` once, over TLS trusting `ca_file`; the error says what it found instead.
pub(super) fn ask(probe: &Probe, ca_file: Option<&Path>) -> Result<(), String> {
    match probe {
        Probe::UnixSocket(path) => std::os::unix::net::UnixStream::connect(path)
            .map(drop)
            .map_err(|_| format!("no socket at {}", path.display())),
        Probe::Tcp(addr) => std::net::TcpStream::connect_timeout(addr, PROBE_TIMEOUT)
            .map(drop)
            .map_err(|err| format!("connecting to {addr}: {err}")),
        Probe::Http { addr, path, protocol } => {
            let over = verify::Over { protocol: *protocol, ca_file };
            match verify::fetch_over(*addr, over, "GET", path, None, PROBE_TIMEOUT, 1 << 16) {
                Ok(a) if a.status == 200 => Ok(()),
                Ok(a) => Err(format!("GET {path} on {addr} over {protocol} answered {}", a.status)),
                Err(err) => Err(err.to_string()),
            }
        }
    }
}
