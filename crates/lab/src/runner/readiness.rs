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
use super::watched::{Remotes, Watched};
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
        let cancel = self.ctx.cancel;
        let (sup, place) = (&mut *self.sup, self.place);
        let waited = poll(
            timeout,
            || cancel.load(std::sync::atomic::Ordering::Relaxed),
            || process.exited(sup, Remotes::default(), Stage::Starting),
            || place.within(host, || ask(probe, ca_file)),
        );
        match waited {
            Ok(()) => Ok(()),
            Err(NotReady::Cancelled) => Err(Stop::Cancelled { client: false }),
            Err(NotReady::Exited(exited)) => Err(exited.into()),
            // The namespace is gone or cannot be entered: waiting will not help.
            Err(NotReady::Unaskable(why)) => Err(RunFailure::Setup(why).into()),
            Err(NotReady::TimedOut { last }) => Err(RunFailure::ServerNotReady {
                name: process.name.clone(),
                timeout,
                last,
                log_tail: last_lines_of(&process.log),
            }
            .into()),
        }
    }
}

/// Why a wait for readiness ended without an answer.
pub(super) enum NotReady<E> {
    Cancelled,
    /// The process exited (what `exited` said).
    Exited(E),
    /// The probe cannot be asked at all (its namespace is gone).
    Unaskable(String),
    /// No answer within the time; the probe's last words.
    TimedOut {
        last: String,
    },
}

/// Asks `ask` (Err: it cannot be asked; Ok(Err): not yet, and why) until it answers, from
/// 1 ms apart doubling to 20 ms, checking `cancelled` and `exited` before each ask and giving
/// up after `timeout`. The lab's runs and `herd lab up` wait for their servers with it.
pub(super) fn poll<E>(
    timeout: Duration,
    cancelled: impl Fn() -> bool,
    mut exited: impl FnMut() -> Option<E>,
    mut ask: impl FnMut() -> Result<Result<(), String>, String>,
) -> Result<(), NotReady<E>> {
    let started = Instant::now();
    let mut pause = FIRST_POLL;
    loop {
        if cancelled() {
            return Err(NotReady::Cancelled);
        }
        if let Some(e) = exited() {
            return Err(NotReady::Exited(e));
        }
        let last = match ask() {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(why)) => why,
            Err(why) => return Err(NotReady::Unaskable(why)),
        };
        if started.elapsed() > timeout {
            return Err(NotReady::TimedOut { last });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(POLL);
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

#[cfg(test)]
mod poll_tests {
    use super::*;

    #[test]
    fn a_wait_ends_on_the_answer_an_exit_a_cancel_or_the_time() {
        let mut asks = 0;
        let answered = poll(
            Duration::from_secs(5),
            || false,
            || None::<()>,
            || {
                asks += 1;
                Ok(if asks < 3 { Err("refused".to_owned()) } else { Ok(()) })
            },
        );
        assert!(answered.is_ok() && asks == 3);
        let exited = poll(Duration::from_secs(5), || false, || Some(7), || Ok(Ok(())));
        assert!(matches!(exited, Err(NotReady::Exited(7))), "the exit is seen before asking");
        let cancelled = poll(Duration::from_secs(5), || true, || None::<()>, || Ok(Ok(())));
        assert!(matches!(cancelled, Err(NotReady::Cancelled)));
        let gone = poll(Duration::from_secs(5), || false, || None::<()>, || Err("no ns".into()));
        assert!(matches!(gone, Err(NotReady::Unaskable(ref w)) if w == "no ns"));
        let late =
            poll(Duration::from_millis(30), || false, || None::<()>, || Ok(Err("nope".into())));
        assert!(matches!(late, Err(NotReady::TimedOut { ref last }) if last == "nope"));
    }
}
