//! A cell's profile: the folded stacks of the servers' processes during one profiled run
//! (`[runner] profile = "perf"`), written once per cell and read back with the cell.
//!
//! The profiled run is not a repetition and is never stored as one: no figure, interval or
//! spread can include it. Only its requests per second are kept, to show what profiling
//! cost. Folding and drawing are the lab's and the report's (inferno); this file stores text.

use rusqlite::{params, OptionalExtension};

use crate::error::StoreError;
use crate::record::ExperimentId;
use crate::store::Store;

/// The profile of one cell, as the lab writes it and the store gives it back.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRecord {
    pub cell_key: String,
    /// The profiler (`perf`).
    pub tool: String,
    pub recorded_at: String,
    /// What the folded stacks' counts add up to: each sample weighs its event's period as
    /// `perf script` prints it (cycles, or nanoseconds of cpu-clock), as inferno folds it.
    pub weight: u64,
    /// What the client measured during the profiled run: shown beside the profile, never
    /// counted among the cell's figures.
    pub requests_per_second: Option<f64>,
    /// One `frame;frame;frame COUNT` line per distinct stack, outermost frame first.
    pub folded: String,
}

impl Store {
    /// Records the profile of a cell of `exp`; a cell has at most one.
    pub fn record_profile(
        &mut self,
        exp: ExperimentId,
        p: &ProfileRecord,
    ) -> Result<(), StoreError> {
        let what = format!("experiment {exp}: profile of cell {:?}", p.cell_key);
        let weight = i64::try_from(p.weight).map_err(|_| StoreError::InvalidRecord {
            what: what.clone(),
            detail: format!("weight {} is above {}", p.weight, i64::MAX),
        })?;
        if p.requests_per_second.is_some_and(|r| !r.is_finite()) {
            return Err(StoreError::InvalidRecord {
                what,
                detail: "requests_per_second is not a finite number".into(),
            });
        }
        self.conn
            .execute(
                "INSERT INTO profile (experiment_id, cell_key, tool, recorded_at, weight,
                    requests_per_second, folded) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    exp.0,
                    p.cell_key,
                    p.tool,
                    p.recorded_at,
                    weight,
                    p.requests_per_second,
                    p.folded
                ],
            )
            .map_err(|e| StoreError::from_sqlite(&self.path, format!("{what}: insert"), e))?;
        Ok(())
    }

    /// Whether the cell `key` of `exp` has a profile (a resumed run profiles the others).
    pub fn has_profile(&self, exp: ExperimentId, key: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT 1 FROM profile WHERE experiment_id = ?1 AND cell_key = ?2",
                params![exp.0, key],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| StoreError::from_sqlite(&self.path, "look up a profile", e))
    }
}
