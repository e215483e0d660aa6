//! What the runner tells the terminal as it goes. The runner calls these; the herd binary
//! draws a progress bar with an ETA on a terminal, or prints a line per run otherwise.

use herd_store::Outcome;

use crate::matrix::Cell;

/// One finished run of a cell, in a few figures.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub cell_key: String,
    pub repetition: u32,
    /// Ok, or failed with the kind of failure and its reason.
    pub outcome: Outcome,
    /// Completed requests per second (all steps).
    pub requests_per_second: f64,
    /// A NetBench run's figure, which counts no requests: megabits moved per second (all
    /// steps). None for HTTP.
    pub mbit_per_second: Option<f64>,
    /// Failed requests (all steps).
    pub failed: u64,
    pub seconds: f64,
    /// The client's verdict when not ok.
    pub client_flag: Option<herd_stats::ClientVerdict>,
}

/// Receives the runner's news.
pub trait Progress {
    /// The matrix's cells, in the order the report lists them (an A/A twin is not one):
    /// called once, before [`Progress::begin`].
    fn cells(&mut self, _keys: &[&str]) {}
    /// The run starts: `planned` runs over the matrix's `cells` cells (an A/A twin's runs
    /// among the runs, not the cells; more may be added for spread), of
    /// which `done` are stored already (a resumed experiment's; 0 for a new one).
    fn begin(&mut self, done: usize, planned: usize, cells: usize);
    /// Run number `n` (from 1) of `planned` starts.
    fn run_started(&mut self, n: usize, planned: usize, cell: &Cell, repetition: u32);
    fn run_finished(&mut self, summary: &RunSummary);
    /// The plan grew (repetitions added where the spread was over the bound).
    fn replanned(&mut self, planned: usize, why: &str);
    /// Something worth a line (waiting for TIME_WAIT, a server's version …).
    fn note(&mut self, text: &str);
    fn end(&mut self);
}

/// Says nothing (tests, `--quiet`).
#[derive(Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn begin(&mut self, _: usize, _: usize, _: usize) {}
    fn run_started(&mut self, _: usize, _: usize, _: &Cell, _: u32) {}
    fn run_finished(&mut self, _: &RunSummary) {}
    fn replanned(&mut self, _: usize, _: &str) {}
    fn note(&mut self, _: &str) {}
    fn end(&mut self) {}
}
