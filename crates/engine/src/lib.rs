//! herd's load engine: worker threads, each owning its connections on its own event loop.
//!
//! Brief overview:
//! - [`RunSpec`] says what to send, to which [`Target`], over how many connections and
//!   threads, on what [`Schedule`] and [`Wire`], and when to stop ([`StopAt`]). Its types
//!   rule out what types can (a run without a bound, no connection, think time outside a
//!   closed loop, pipelining on a connection that closes); what they cannot say,
//!   [`RunSpec::check`] refuses with a [`SpecError`] (an agent's slice with no connection or
//!   no request, pipelining or think time over HTTP/2 and HTTP/3, a receive-rate cap or a
//!   Unix socket with HTTP/3, an HTTP/2 window out of range). [`run()`] calls it, and also
//!   refuses an empty address list and a request HTTP/2 or HTTP/3 cannot carry
//!   ([`EngineError`]).
//! - [`run()`] starts the workers, and returns each worker's [`Recorder`] after they all
//!   stop; the caller merges them. Nothing is shared between workers per request: no lock,
//!   no shared atomic written per request, no heap allocation per request; the request bytes
//!   are built once by the caller.
//! - A [`Recorder`] sees every request's outcome ([`Completed`] or [`Failed`]) with its
//!   [`Timing`] from the monotonic clock, and may ask the run to stop ([`Answer`]).
//! - [`Control`] lets another thread stop a run (Ctrl-C) and read progress.
//! - [`ThreadUsage`] is what each worker thread cost: CPU time and run-queue wait.
//! - [`IoChoice`] (`--io auto|epoll|uring`) is which event-loop backend the workers turn;
//!   [`run()`] settles it once ([`io_choice::resolve`]) and [`Run::io`] says what measured.
//!
//! The engine speaks HTTP/1.x, HTTP/2 and HTTP/3 on herd-proto's codecs (QUIC through
//! quinn-proto, driven by hand in [`quic`]) and knows nothing about reports.
//!
//! Inside, in layers (ARCHITECTURE.md names the seams): `run` starts and joins the workers;
//! `worker` is the one event loop and decides who starts the next request (closed loop,
//! pacer, think time) on a connection's room (`worker::conn`), turning `worker::base`'s loop;
//! a connection's protocol is a `link::Link`: HTTP/1 (`link::h1link` over `session`, HTTP/1's
//! protocol in `session/http1`, with `pipeline`), HTTP/2 (`link::h2link` over `link::h2`) or
//! HTTP/3 (`link::h3link`). `transport` is one read/write/flush interface for plain and TLS TCP
//! sockets, which `socket` opens (HTTP/3's UDP sockets are `quic::udp`'s). `timers`,
//! `throttle` (the receive-rate cap), `pacer` (the open loop's clock) and `reach` (giving up
//! on a target nothing connects to) are each their own small piece.

mod alpn_probe;
mod control;
mod error;
pub mod io_choice;
mod link;
mod nofile;
mod pacer;
mod pipeline;
pub mod quic;
mod reach;
mod recorder;
mod rng;
mod run;
pub use run::wall_clock_at;
mod session;
mod socket;
mod spec;
mod start;
mod target;
mod thread_usage;
mod throttle;
mod timers;
mod tls;
mod tls_key;
pub mod trace_context;
mod transport;
/// io_uring (herd-uring): the probe, which the lab's doctor and disclosure read through the
/// engine, and the ring the completion backend's workers turn.
pub use herd_uring as uring;
mod warm;
mod worker;
mod workload;

pub use alpn_probe::{negotiate_alpn, ProbeError};
pub use control::Control;
pub use error::{EngineError, SpecError};
pub use io_choice::{Backend, IoChoice, IoError, Resolved};
pub use nofile::raise_nofile_limit;
pub use reach::Reach;
use recorder::AnyRecorder;
pub use recorder::{Answer, Completed, Failed, Recorder, Timing};
pub use spec::{
    Arrivals, H2Settings, H3Wire, PerConnection, RequestRate, Reuse, RunSpec, Schedule, Slice,
    SocketOptions, StopAt, Think, Unreachable, Wire,
};
pub use start::{Start, StartGate, Warmed};
pub use target::{check_allowed, OptIn, Target, TargetError};
pub use thread_usage::ThreadUsage;
pub use tls::{TlsClient, TlsConfigError, TlsInfo, TlsSettings, TlsVersions};
pub use trace_context::TraceContext;
pub use workload::{Prepared, Workload, WorkloadError};

use std::time::{Duration, Instant, SystemTime};

/// What a finished run returns: when it ran, and each worker's recorder.
#[derive(Debug)]
pub struct Run<R> {
    /// The run's start: just before the first request (or connection) of a run that starts
    /// at once; the shared instant of one that starts later (connections may be open by
    /// then).
    pub started: Instant,
    /// The same moment on the wall clock (for reports that print dates).
    pub started_wall: SystemTime,
    /// How long after a later [`RunSpec::start`] the slowest worker began (zero at once).
    pub late: Duration,
    /// The last activity of any worker (a completed or failed request), or the deadline.
    pub ended: Instant,
    /// True when the run stopped early: [`Control::stop`], or a recorder's [`Answer::Abort`].
    /// A run that gave up on an unreachable target ([`Reach::GaveUp`]) was not interrupted.
    pub interrupted: bool,
    /// Whether any connection connected, and if none did, whether the run gave up.
    pub reach: Reach,
    pub recorders: Vec<R>,
    /// Each worker thread's CPU time and run-queue wait over its loop, in worker order (the
    /// client's own cost, for telling a slow server from a starved client).
    pub workers: Vec<ThreadUsage>,
    /// TLS parameters of the first handshake, for https targets.
    pub tls_info: Option<TlsInfo>,
    /// HTTP/3: what QUIC did, over every connection of the run.
    pub quic: Option<quic::QuicStats>,
    /// Which event-loop backend measured, as [`RunSpec::io`] came to (and why, when `auto`
    /// fell back to epoll).
    pub io: Resolved,
}

/// Runs the load described by `spec` until it is done, its deadline passes, a recorder
/// aborts, or `control` is stopped. `make_recorder(i, start)` builds worker `i`'s recorder
/// once the run's start is known (a gated start is known only when its gate opens).
pub fn run<R, F>(spec: &RunSpec, control: &Control, make_recorder: F) -> Result<Run<R>, EngineError>
where
    R: Recorder + 'static,
    F: Fn(usize, Instant) -> R + Sync,
{
    let make = |i, start| -> AnyRecorder { Box::new(make_recorder(i, start)) };
    let run = run_erased(spec, control, &make)?;
    Ok(run.map_recorders(|r| match r.into_any().downcast::<R>() {
        Ok(r) => *r,
        // Each box was made from an `R` by `make` above.
        Err(_) => unreachable!("a worker's recorder is of the type its maker returns"),
    }))
}

impl<R> Run<R> {
    /// The same run with each worker's recorder turned into another.
    fn map_recorders<S>(self, f: impl FnMut(R) -> S) -> Run<S> {
        Run {
            recorders: self.recorders.into_iter().map(f).collect(),
            started: self.started,
            started_wall: self.started_wall,
            late: self.late,
            ended: self.ended,
            interrupted: self.interrupted,
            reach: self.reach,
            workers: self.workers,
            tls_info: self.tls_info,
            quic: self.quic,
            io: self.io,
        }
    }
}

/// [`run()`]'s one instantiation of the workers (see [`AnyRecorder`]).
fn run_erased(
    spec: &RunSpec,
    control: &Control,
    make: &(dyn Fn(usize, Instant) -> AnyRecorder + Sync),
) -> Result<Run<AnyRecorder>, EngineError> {
    run::run_all(spec, control, &make)
}
