//! What the engine reports for every request, and how a recorder answers.
//!
//! The engine calls the recorder of the worker that ran the request, on that worker's
//! thread: recorders need no synchronisation, and are merged by their owner after the run.

use std::any::Any;
use std::time::Instant;

use herd_stats::FailureKind;

/// The moments of one request, from the monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// When the request was due: equal to `start` in a closed loop; in an open loop
    /// ([`Schedule::Rate`](crate::Schedule::Rate)) the schedule's time, at or before `start`.
    /// `end - intended` is the latency corrected for coordinated omission.
    pub intended: Instant,
    /// When the request was due and a connection was free to send it: `intended` unless
    /// every connection was busy then (the wait is the server's doing). `start - ready` is
    /// the client's own lag: time a request could have been sent but was not, because the
    /// client's thread was busy or not scheduled.
    pub ready: Instant,
    /// The request began: just before connect() for a new connection, or when the previous
    /// response on a reused connection completed (ab's `c->start`).
    pub start: Instant,
    /// The connection was ready to write: TCP connected and TLS handshake done (ab's
    /// `c->connect`); equal to `start` on a reused connection.
    pub connected: Option<Instant>,
    /// The last request byte was written (ab's `c->endwrite`).
    pub written: Option<Instant>,
    /// The first response byte arrived (ab's `c->beginread`).
    pub first_byte: Option<Instant>,
    /// The response completed, or the failure was detected.
    pub end: Instant,
}

/// A complete response.
#[derive(Debug)]
pub struct Completed<'a> {
    /// Lent, not copied: the request's own moments (`end` set).
    pub timing: &'a Timing,
    /// The response's status code.
    pub status: u16,
    /// The server lets the connection carry another request: by HTTP/1 rules (HTTP/1.1
    /// unless `Connection: close`, HTTP/1.0 only with `keep-alive`); always for a stream of
    /// HTTP/2 or HTTP/3, whose connection outlives it.
    pub reusable: bool,
    /// Decoded body bytes.
    pub body_bytes: u64,
    /// Every byte read for this response (heads, body, chunk framing).
    pub bytes_read: u64,
    /// Request bytes written (head and body).
    pub bytes_written: u64,
    /// The connection had already carried a response before this one.
    pub reused: bool,
    /// The `Server` header value when the worker asked for it (its first response).
    pub server: Option<&'a [u8]>,
    /// Which of the workload's requests this was (its index in [`crate::Workload`]).
    pub request: usize,
    /// Which of the run's connections carried it (0 to connections − 1, stable across
    /// reconnections: a simulated user).
    pub conn: u32,
}

/// A request that ended without a complete, well-formed response.
#[derive(Debug, Clone, Copy)]
pub struct Failed {
    pub kind: FailureKind,
    pub timing: Timing,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// The OS error number behind the failure, when there was one (ECONNREFUSED, ...).
    pub os_error: Option<i32>,
    pub reused: bool,
    /// As in [`Completed`].
    pub request: usize,
    pub conn: u32,
}

/// A recorder's answer to an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Continue,
    /// Stop the whole run now (ab's fatal errors).
    Abort,
}

/// Receives the outcome of every request of one worker.
pub trait Recorder: Send {
    fn completed(&mut self, c: &Completed<'_>) -> Answer;
    fn failed(&mut self, f: &Failed) -> Answer;

    /// The passing of time, with or without outcomes: the worker calls it from its event
    /// loop at least every ~100 ms while the run goes on (at the turn where it checks
    /// timeouts, so never per request), with the loop's current time. A recorder that cuts
    /// the run into intervals closes the ones that have ended here, so that a second in
    /// which no request finished (a stalled server) is still reported. It is not called
    /// after the worker's loop has ended; whatever the recorder holds then is the caller's
    /// to finish. Keep it cheap: it runs on the worker's thread, between I/O events.
    fn tick(&mut self, _now: Instant) {}

    /// How many of the worker's connections are open (connecting or connected), told at the
    /// same turn as [`Recorder::tick`], just before it: a gauge for the live outputs.
    fn open_connections(&mut self, _open: usize) {}
}

/// A recorder of any type, as the workers hold it. The workers' event loops are compiled once,
/// in this crate, for this type, instead of once per recorder type in every crate that calls
/// [`run()`](crate::run): `herd run` and `herd ab` then build their loops at the engine's
/// optimisation whatever their own (the quick `--release` builds the CLI unoptimised), and
/// the build does the work once (herd-run took 55 s at opt-level 3 with its own copy). The
/// price is an indirect call per outcome, a few nanoseconds against microseconds of work.
pub(crate) type AnyRecorder = Box<dyn Erased>;

/// A [`Recorder`] that can be given back as its own type after the run.
pub(crate) trait Erased: Recorder {
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

impl<R: Recorder + 'static> Erased for R {
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

impl Recorder for AnyRecorder {
    fn completed(&mut self, c: &Completed<'_>) -> Answer {
        (**self).completed(c)
    }

    fn failed(&mut self, f: &Failed) -> Answer {
        (**self).failed(f)
    }

    fn tick(&mut self, now: Instant) {
        (**self).tick(now)
    }

    fn open_connections(&mut self, open: usize) {
        (**self).open_connections(open)
    }
}
