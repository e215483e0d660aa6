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
