//! A run's live figures for the user's own monitoring (`--metrics-listen ADDR`): the seconds
//! herd already merges for the live line and `--series`, added up as they come
//! ([`LiveFigures`], fed by [`MetricsFeed`] on the writer thread), rendered in Prometheus's
//! text format ([`text::render`]) and served over HTTP at `/metrics` ([`MetricsServer`]) by a
//! thread of its own: a scrape never waits on, or slows, a measuring thread (docs/metrics.md).

mod figures;
mod server;
pub mod text;

pub use figures::{Labels, LiveFigures, MetricsFeed, SharedFigures};
pub use server::{FinalScrape, MetricsServer};

/// The CPU time herd's process has used so far, user and system, all its threads, in
/// seconds (getrusage); what the metrics and the live view show of the client's own cost.
pub fn process_cpu_seconds() -> Option<f64> {
    crate::process_cpu::ProcessCpu::now().map(|c| (c.user + c.system).as_secs_f64())
}
