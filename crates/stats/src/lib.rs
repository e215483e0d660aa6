//! Statistics and the shared vocabulary of load runs: what each worker records, how workers
//! are merged, and the words every crate uses for a result.
//!
//! Brief overview:
//! - [`FailureKind`] names every way a request can fail in herd's engine; [`Failures`] counts
//!   them in a fixed array (no map, no strings on the hot path).
//! - [`LatencyHistogram`] wraps an HdrHistogram in microseconds, 3 significant digits;
//!   [`hdr`] is the one encoding of a histogram wherever herd writes one down.
//! - [`RunStats`] is the core of every recorder (herd ab's and herd run's): exact counters and
//!   histograms, merged with `+=`.
//! - The vocabulary ([`ClientVerdict`], [`Failure`], [`LatencySeries`]), the one
//!   [`Measurement`] type from a client's output to the store and the page, and the client
//!   health facts ([`HealthFacts`]).
//! - [`units`]: durations, bit rates, byte sizes and request rates as typed, written once.
//! - [`repetitions`] summarises a handful of per-repetition values (median, relative
//!   standard deviation, Student t interval): the lab's runner and its reports share it.
//! - [`noise`] is the noise floor an A/A control measures (a cell run again as its own
//!   twin) and the minimum detectable effect it gives a ratio, on the runs' logarithms.
//! - [`change_points`] finds where a history of figures (one per run, in time order)
//!   shifted: Hunter's deterministic E-Divisive (`e_divisive.rs`) with Student's t-test
//!   (`student_t.rs`), for `herd report --history`.
//! - [`waiting`] judges whether a closed loop's time went to waiting (neither client nor
//!   server busy): the lab and `herd run` ask it with what each measured.
//! - [`with_causes`]: an error and its causes as one line of text, as the binary prints them,
//!   for the crates that keep an error as text (topo, run, the lab).
//!
//! This crate does no I/O and never panics on values that come from a server.

pub mod change_points;
mod e_divisive;
mod error_chain;
mod failure;
pub mod hdr;
mod health;
mod latency;
mod lengths;
mod measurement;
pub mod noise;
pub mod rate_hold;
pub mod repetitions;
mod run_stats;
mod status;
mod student_t;
pub mod transfer;
pub mod units;
mod vocabulary;
pub mod waiting;

pub use error_chain::{causes, with_causes};
pub use failure::{FailureKind, Failures};
pub use health::{ClientHealth, CpuFacts, HealthFacts, ProcessCpu, SendLag, TimerLate};
pub use latency::LatencyHistogram;
pub use lengths::LengthTally;
pub use measurement::{
    AgentFigure, Measurement, REPORTED_CLIENT_CPU_S, REPORTED_INTERRUPTED, REPORTED_LATENCY_P50_US,
    REPORTED_LATENCY_P99_US, REPORTED_LINES_PER_CLIENT, REPORTED_SERVER_COUNT_LEAST,
    REPORTED_SERVER_COUNT_LOGGED, REPORTED_SERVER_COUNT_MOST, REPORTED_THROUGHPUT_MBIT_S,
    REPORTED_THROUGHPUT_MB_S, REPORTED_TIMER_RESOLUTION_S, REPORTED_WARMUP_S,
    REPORTED_WRITE_ONLY_OPENING,
};
pub use rate_hold::RateHold;
pub use run_stats::RunStats;
pub use status::StatusCounts;
pub use vocabulary::{
    ClientJudgement, ClientVerdict, Failure, LatencySeries, Protocol, UnknownName, BUSY_BOUND,
    BUSY_SUSPECT,
};
