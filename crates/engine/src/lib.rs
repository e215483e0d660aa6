//! herd's load engine: worker threads, each owning its connections on its own event loop.
//!
//! Brief overview:
//! - [`RunSpec`] says what to send, to which [`Target`], over how many connections and
//!   threads, and when to stop ([`RunSpec::max_requests`], [`RunSpec::duration`]).
//! - [`run`] starts the workers, and returns each worker's [`Recorder`] after they all
//!   stop; the caller merges them. Nothing is shared between workers on the hot path: no
//!   lock, no shared atomic, no heap allocation per request; the request bytes are built
//!   once by the caller.
//! - A [`Recorder`] sees every request's outcome ([`Completed`] or [`Failed`]) with its
//!   [`Timing`] from the monotonic clock, and may ask the run to stop ([`Verdict`]).
//! - [`Control`] lets another thread stop a run (Ctrl-C) and read progress.
//! - [`ThreadUsage`] is what each worker thread cost: CPU time and run-queue wait.
//!
//! The engine knows HTTP/1.x framing through herd-proto and nothing about reports.

mod conn;
mod control;
mod error;
mod nofile;
mod pacer;
mod recorder;
mod rng;
mod spec;
mod stream;
mod target;
mod thread_usage;
mod tls;
mod tls_key;
mod worker;
mod workload;

pub use control::Control;
pub use error::EngineError;
pub use nofile::raise_nofile_limit;
pub use recorder::{Completed, Failed, Recorder, Timing, Verdict};
pub use spec::{Arrivals, RunSpec, Schedule, SocketOptions, Think};
pub use target::{check_allowed, Target, TargetError};
pub use thread_usage::ThreadUsage;
pub use tls::{TlsClient, TlsConfigError, TlsInfo, TlsSettings, TlsVersions};
pub use workload::{Prepared, Workload, WorkloadError};

use std::time::{Instant, SystemTime};

/// What a finished run returns: when it ran, and each worker's recorder.
#[derive(Debug)]
pub struct Run<R> {
    /// Just before the first connection was opened.
    pub started: Instant,
    /// The same moment on the wall clock (for reports that print dates).
    pub started_wall: SystemTime,
    /// The last activity of any worker (a completed or failed request), or the deadline.
    pub ended: Instant,
    /// True when the run stopped early: [`Control::stop`], or a recorder's [`Verdict::Abort`].
    pub interrupted: bool,
    pub recorders: Vec<R>,
    /// Each worker thread's CPU time and run-queue wait over its loop, in worker order (the
    /// client's own cost, for telling a slow server from a starved client).
    pub workers: Vec<ThreadUsage>,
    /// TLS parameters of the first handshake, for https targets.
    pub tls_info: Option<TlsInfo>,
}

/// Runs the load described by `spec` until it is done, its deadline passes, a recorder
/// aborts, or `control` is stopped. `make_recorder(i)` builds worker `i`'s recorder.
pub fn run<R, F>(spec: &RunSpec, control: &Control, make_recorder: F) -> Result<Run<R>, EngineError>
where
    R: Recorder,
    F: Fn(usize) -> R + Sync,
{
    worker::run_all(spec, control, &make_recorder)
}
