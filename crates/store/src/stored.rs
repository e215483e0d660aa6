//! What the store gives back: an experiment with its cells and repetitions, or a one-line
//! summary per experiment. Written records come back as the same types (a
//! [`StoredRepetition`] holds the [`RepetitionRecord`] as written), so nothing is lost
//! between the lab and a report.

use crate::profile::ProfileRecord;
use crate::record::{
    ExperimentId, ExperimentStatus, NewExperiment, RepetitionId, RepetitionRecord,
};

/// One line of the store's table of contents ([`crate::Store::experiments`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperimentSummary {
    pub id: ExperimentId,
    pub name: String,
    pub title: String,
    pub status: ExperimentStatus,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub n_cells: u64,
    pub n_repetitions_ok: u64,
    pub n_repetitions_failed: u64,
}

/// An experiment and everything recorded for it ([`crate::Store::load_experiment`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredExperiment {
    pub id: ExperimentId,
    /// As given to [`crate::Store::begin_experiment`].
    pub experiment: NewExperiment,
    pub status: ExperimentStatus,
    pub finished_at: Option<String>,
    /// Why it ended as it did, as given to [`crate::Store::finish_experiment`].
    pub note: Option<String>,
    /// Ordered axis by axis in the experiment's axis order: by where each value comes among
    /// those the experiment declared (`NewExperiment::axis_values`), then comparing the
    /// digits in a label as numbers (`c50` < `c100` < `c1000`), the only order of stores
    /// older than schema 6. It does not depend on the shuffled order the cells ran in.
    pub cells: Vec<StoredCell>,
}

/// One point of the experiment's matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCell {
    pub key: String,
    /// Axis name → value label, in the experiment's axis order.
    pub axes: Vec<(String, String)>,
    /// The key of the cell this one is the A/A twin of ([`RepetitionRecord::control_of`]);
    /// None for the matrix's own cells. A twin is never a row of a table nor a baseline.
    pub control_of: Option<String>,
    /// By repetition index.
    pub repetitions: Vec<StoredRepetition>,
    /// The cell's profiled run, kept apart from its repetitions (`[runner] profile`).
    pub profile: Option<ProfileRecord>,
}

/// One repetition as it was recorded; its measurements are in step order.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRepetition {
    pub id: RepetitionId,
    pub record: RepetitionRecord,
}

impl StoredExperiment {
    pub fn name(&self) -> &str {
        &self.experiment.name
    }

    /// The cells of the matrix itself: without the A/A twins ([`StoredCell::control_of`]).
    pub fn matrix_cells(&self) -> impl Iterator<Item = &StoredCell> {
        self.cells.iter().filter(|c| c.control_of.is_none())
    }

    /// The cell with that key.
    pub fn cell(&self, key: &str) -> Option<&StoredCell> {
        self.cells.iter().find(|c| c.key == key)
    }
}

impl StoredCell {
    /// The cell's value on that axis.
    pub fn axis(&self, name: &str) -> Option<&str> {
        self.axes.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The repetitions whose outcome is ok.
    pub fn ok_repetitions(&self) -> impl Iterator<Item = &StoredRepetition> {
        self.repetitions.iter().filter(|r| r.record.outcome.is_ok())
    }
}
