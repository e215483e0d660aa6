//! What the lab writes into the store: an experiment's description, then one
//! [`RepetitionRecord`] per run of a cell. The same types come back out of
//! [`crate::Store::load_experiment`], so a round trip compares equal.
//!
//! These are plain data. Checks that need the store (does the experiment exist, do the axes
//! match it) happen in `write.rs`; derived figures are methods here, computed on read.

use std::fmt;

use herd_stats::{ClientJudgement, HealthFacts, Measurement};

use crate::{NetworkFacts, RunFailureKind};

/// The `server` axis value of the cells the lab adds to an experiment with network paths:
/// herd serve, a null server next to any real one, run through every path, so the report can
/// say what each path carries on its own and what the client can reach at all.
pub const CALIBRATION_SERVER: &str = "calibration";

/// The kind of network finding (`kind: detail`, [`RepetitionRecord::network_findings`]) that
/// says the link's rate, not the server, capped a run; the report marks such rows.
pub const FINDING_LINK_BOUND: &str = "link-bound";

/// An experiment's row id; stable for the life of the store (ids are never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExperimentId(pub i64);

/// A repetition's row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepetitionId(pub i64);

/// Where an experiment stands. Stored as text: `running`, `done`, `interrupted`, `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExperimentStatus {
    /// Begun and not finished: still running, or its process died without finishing it.
    Running,
    /// Every planned repetition ran (some may have failed; that is data).
    Done,
    /// Stopped by the user (Ctrl-C) before the plan was through.
    Interrupted,
    /// Stopped by an error of the lab itself.
    Failed,
}

/// Everything about an experiment that is known before its first cell runs.
#[derive(Debug, Clone, PartialEq)]
pub struct NewExperiment {
    pub name: String,
    pub title: String,
    /// The experiment file's path, or `bundled:<name>` for one compiled into herd.
    pub source: String,
    /// The experiment's TOML text, as run.
    pub definition: String,
    /// The dry-run listing of the plan.
    pub plan: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub herd_version: String,
    pub methodology_version: u32,
    /// Axis names in matrix order, e.g. `["server", "workload", "load"]`.
    pub axes: Vec<String>,
    /// Kernel, CPU model, number of CPUs, sysctls, rlimits, root or not …, in the order given.
    pub environment: Vec<(String, String)>,
    /// Key of the published comparison it re-runs (`seed001`), if any.
    pub reference: Option<String>,
    /// The published figures to set beside its results ([`crate::Published::to_json`]);
    /// read them with [`NewExperiment::published`].
    pub published_json: Option<String>,
    /// Each axis's values (labels, sweeps expanded) in the order the experiment declared
    /// them, one list per axis of `axes`; empty in stores older than schema 6.
    pub axis_values: Vec<Vec<String>>,
    /// How the experiment asks its tables to be shown (`[report]`).
    pub report: ReportDefaults,
}

/// An experiment's own choices for its tables; a report's options override them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportDefaults {
    /// The axis and value whose rows the others are given as a percentage of.
    pub baseline: Option<(String, String)>,
    /// The figure the tables show (one of [`crate::Measure::TABULATED`]).
    pub measure: Option<crate::Measure>,
}

/// One run of one cell: fresh servers, fresh client, one or more measured steps.
#[derive(Debug, Clone, PartialEq)]
pub struct RepetitionRecord {
    /// Stable key of the cell, e.g. `server=nginx workload=page-6397 load=c100`; the store
    /// finds the cell by it on every repetition.
    pub cell_key: String,
    /// Axis name → value label, in the experiment's axis order.
    pub axes: Vec<(String, String)>,
    /// The key of the cell this one is the A/A twin of (`[runner] controls`), with the same
    /// axis values; None for the matrix's own cells. Fixed with the cell's first record.
    pub control_of: Option<String>,
    /// Repetition index, 0-based; unique within the cell.
    pub repetition: u32,
    /// Place in that round's shuffled order.
    pub position: u32,
    pub started_at: String,
    pub finished_at: String,
    pub outcome: Outcome,
    pub client: ClientRecord,
    pub servers: Vec<ServerRecord>,
    /// CPU time of all server processes during the measured part, in seconds.
    pub server_cpu_seconds: Option<f64>,
    /// Sockets in TIME_WAIT before the repetition started.
    pub time_wait_before: Option<u64>,
    /// Time spent waiting for the previous repetition's sockets to drain.
    pub drain_seconds: f64,
    /// What a network path's hosts saw; None over loopback.
    pub network: Option<NetworkFacts>,
    /// One measurement, or one per client step, in step order.
    pub measurements: Vec<Measurement>,
}

/// Whether a repetition produced a result. A failed one is kept with the step that failed
/// and its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A failed content check, a server that did not start, a client that crashed …
    Failed {
        kind: RunFailureKind,
        /// What failed, in one line: the process, the address, the figures, a log's end.
        reason: String,
    },
}

/// The load generator of a repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRecord {
    /// `herd`, `ab` or `wrk`.
    pub tool: String,
    pub version: String,
    pub argv: Vec<String>,
    /// CPU list the client was pinned to (`taskset` syntax).
    pub cpus: Option<String>,
    /// Whether the result may say more about the client than about the server, and why.
    /// `None` when there is no way to tell (or nothing to judge).
    pub judgement: Option<ClientJudgement>,
    /// The figures the verdict was judged on.
    pub health: Option<HealthFacts>,
    /// Which event-loop backend herd's client measured with; None for clients that do not
    /// say (ab, wrk, h2load) and in stores from before it was kept.
    pub io: Option<ClientIo>,
    /// The trace id herd's client sent in every request's `traceparent` (`[client]
    /// trace_context`); None without it, for other clients and in older stores.
    pub trace_id: Option<String>,
}

/// Which event-loop backend a client measured with (herd's `--io`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIo {
    /// `epoll` or `io_uring`.
    pub backend: String,
    /// Why `auto` did not take io_uring, in one line; None when nothing fell back.
    pub fallback: Option<String>,
}

impl std::fmt::Display for ClientIo {
    /// `epoll`, or `epoll (io_uring not yet for HTTP/1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.fallback {
            Some(why) => write!(f, "{} ({why})", self.backend),
            None => f.write_str(&self.backend),
        }
    }
}

/// One server process (or process group) of a repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRecord {
    pub name: String,
    pub program: String,
    pub version: String,
    pub argv: Vec<String>,
    pub cpus: Option<String>,
    pub cpu_seconds: Option<f64>,
    /// (path, text) of each configuration file written for it.
    pub configs: Vec<(String, String)>,
}

impl fmt::Display for ExperimentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for RepetitionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl ExperimentStatus {
    /// The text stored in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            ExperimentStatus::Running => "running",
            ExperimentStatus::Done => "done",
            ExperimentStatus::Interrupted => "interrupted",
            ExperimentStatus::Failed => "failed",
        }
    }

    /// The inverse of [`ExperimentStatus::as_str`].
    pub fn from_stored(text: &str) -> Option<ExperimentStatus> {
        [
            ExperimentStatus::Running,
            ExperimentStatus::Done,
            ExperimentStatus::Interrupted,
            ExperimentStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

impl fmt::Display for ExperimentStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Outcome {
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok)
    }

    /// The failure's reason, if the repetition failed.
    pub fn failure_reason(&self) -> Option<&str> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed { reason, .. } => Some(reason),
        }
    }

    /// The failure's kind, if the repetition failed.
    pub fn failure_kind(&self) -> Option<RunFailureKind> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed { kind, .. } => Some(*kind),
        }
    }
}

impl NewExperiment {
    /// Where `label` comes among the axis's declared values (None: not declared, or a
    /// store older than schema 6).
    pub fn value_position(&self, axis: &str, label: &str) -> Option<usize> {
        let i = self.axes.iter().position(|a| a == axis)?;
        self.axis_values.get(i)?.iter().position(|v| v == label)
    }

    /// The published figures stored with it: None when it has none; Err with the reason
    /// when the stored record cannot be read.
    pub fn published(&self) -> Result<Option<crate::Published>, String> {
        self.published_json.as_deref().map(crate::Published::from_json).transpose()
    }
}

impl RepetitionRecord {
    /// The plain findings of a run on a network path (what capped or disturbed it): empty
    /// over loopback.
    pub fn network_findings(&self) -> &[String] {
        self.network.as_ref().map_or(&[], |n| n.findings.as_slice())
    }

    /// Requests completed over all steps.
    pub fn completed(&self) -> u64 {
        self.measurements.iter().map(|m| m.completed).sum()
    }

    /// Server CPU time per completed request, in µs, over all steps; `None` without a CPU
    /// figure or without a completed request.
    pub fn server_cpu_us_per_request(&self) -> Option<f64> {
        let completed = self.completed();
        let seconds = self.server_cpu_seconds?;
        (completed > 0).then(|| seconds * 1e6 / completed as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text_round_trips() {
        for s in [
            ExperimentStatus::Running,
            ExperimentStatus::Done,
            ExperimentStatus::Interrupted,
            ExperimentStatus::Failed,
        ] {
            assert_eq!(ExperimentStatus::from_stored(s.as_str()), Some(s));
        }
        assert_eq!(ExperimentStatus::from_stored("Done"), None);
    }
}
