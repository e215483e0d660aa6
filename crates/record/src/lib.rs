//! What `herd run` keeps of every request, worker by worker: [`RunRecorder`] (latency
//! histograms from the intended and the actual send, connect time, first byte, lags;
//! statuses, failures, bytes; [`ClientErrors`], the failures that were the client's own) and,
//! when an output shows the run over time, its cut into [`Seconds`].
//!
//! A crate of its own because it is the one part of `herd run` on a request's path: the quick
//! `--release` builds it fully optimised and the rest of herd-run (plans, reports, outputs,
//! the spread run) unoptimised, which is most of herd-run's build time (Cargo.toml).

mod client_errors;
mod recorder;
mod seconds;

pub use client_errors::ClientErrors;
pub use recorder::{ConnRate, GroupStats, RecorderPlan, RunRecorder};
pub use seconds::{Interval, MaybeSeconds, Report, Seconds, SecondsOut, LATE_SEND};
