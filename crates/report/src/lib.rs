//! herd's reports: what the results store holds, rendered for people. Reports never
//! measure and never look at the clock: each is a pure function of a
//! [`herd_store::StoredExperiment`], deterministic down to the byte (stable order, fixed
//! float formatting), writing to the `&mut dyn Write` it is given.
//!
//! Brief overview:
//! - [`experiment_table`]: the terminal table of an experiment, one row per cell (and step),
//!   with requests per second (median and 95 % confidence interval), spread, latency
//!   percentiles, failures, server CPU per request and the client's verdict.
//! - Where the lab calibrated network paths (herd serve as a null server), what each path
//!   carries on its own and which rows came close to it.
//! - Where the experiment re-runs a published comparison, a "then and now" section sets
//!   the article's figures (`herd_store::Published`) beside today's, cell by cell.
//! - The statistics over repetitions (median, Student t interval, spread) come from
//!   `herd_stats::repetitions`, shared with the lab runner.
//!
//! The HTML page and comparisons come later, on the same figures.

mod calibration;
mod figures;
mod layout;
mod table;
mod then_now;

pub use table::experiment_table;
