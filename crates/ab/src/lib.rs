//! `herd ab`: ApacheBench 2.3's command line, accounting and report on herd's engine.
//!
//! Brief overview:
//! - [`args::parse`] reads ab's flags with ab's meaning into an [`AbConfig`].
//! - [`request::build`] produces the exact request bytes ab would send.
//! - [`run_spec`] turns the configuration into the engine's run.
//! - [`account`] turns the engine's per-request outcomes into ab's counters and samples,
//!   quirks included (see docs/ab-compat.md).
//! - [`report`] renders [`AbResults`] as ab's text report, `-w` HTML, `-e` CSV and `-g` TSV.
//!
//! Nothing here prints: renderers write to the `Write` they are given.

pub mod account;
pub mod args;
pub mod config;
pub mod json;
pub mod report;
pub mod request;
pub mod results;
pub mod run_spec;

pub use config::AbConfig;
pub use results::{AbResults, Sample, TlsSummary};
pub use run_spec::run_spec;
