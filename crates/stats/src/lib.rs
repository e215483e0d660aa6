//! Statistics for load runs: what each worker records and how workers are merged.
//!
//! Brief overview:
//! - [`FailureKind`] names every way a request can fail; [`Failures`] counts them in a
//!   fixed array (no map, no strings on the hot path).
//! - [`LatencyHistogram`] wraps an HdrHistogram in microseconds, 3 significant digits.
//! - [`RunStats`] is one worker's complete record (histograms, bytes, statuses, failures,
//!   body lengths seen); workers merge with `+=` after the run.
//!
//! - [`repetitions`] summarises a handful of per-repetition values (median, relative
//!   standard deviation, Student t interval): the lab's runner and its reports share it.
//!
//! This crate does no I/O and never panics on values that come from a server.

mod failure;
mod latency;
mod lengths;
pub mod repetitions;
mod run_stats;
mod status;
pub mod units;

pub use failure::{FailureKind, Failures};
pub use latency::LatencyHistogram;
pub use lengths::LengthTally;
pub use run_stats::RunStats;
pub use status::StatusCounts;
