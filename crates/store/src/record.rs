//! What the lab writes into the store: an experiment's description, then one
//! [`RepetitionRecord`] per run of a cell. The same types come back out of
//! [`crate::Store::load_experiment`], so a round trip compares equal.
//!
//! These are plain data. Checks that need the store (does the experiment exist, do the axes
//! match it) happen in `write.rs`; derived figures are methods here, computed on read.

use std::fmt;

use hdrhistogram::Histogram;

use crate::RunFailureKind;

/// Name of the latency histogram from the intended send time to the last byte, µs; the one
/// reports use for p50/p99. In an open loop it includes the wait behind a late schedule.
pub const HISTOGRAM_TOTAL: &str = "total";
/// Name of the latency histogram from the actual send to the last byte, µs.
pub const HISTOGRAM_TOTAL_FROM_SEND: &str = "total_from_send";
/// Name of the connect-time histogram, µs.
pub const HISTOGRAM_CONNECT: &str = "connect";
/// Name of the time-to-first-byte histogram, µs.
pub const HISTOGRAM_FIRST_BYTE: &str = "first_byte";
/// Name of the histogram of the time a request waited for a free connection, µs.
pub const HISTOGRAM_QUEUED: &str = "queued";

/// Name of a tool's own median latency in µs, for tools that give no histogram (wrk).
pub const REPORTED_LATENCY_P50_US: &str = "latency_p50_us";
/// Name of a tool's own 99th percentile latency in µs, for tools that give no histogram.
pub const REPORTED_LATENCY_P99_US: &str = "latency_p99_us";
/// Name of the resolution, in seconds, of the clock that timed the measurement, for tools
/// whose clock is coarse (ab prints its run time to the millisecond).
pub const REPORTED_TIMER_RESOLUTION_S: &str = "timer_resolution_s";

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
    /// What a network path's hosts saw (herd_lab::netstat::PathFacts as JSON); None over
    /// loopback.
    pub network_json: Option<String>,
    /// One measurement, or one per client step, in step order.
    pub measurements: Vec<MeasurementRecord>,
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
    /// `ok`, `suspect` or `client-bound`: whether the result may say more about the client
    /// than about the server. `None` when the tool gives no way to tell.
    pub verdict: Option<String>,
    pub verdict_reason: Option<String>,
    /// The client's health figures as JSON, as herd run reported them.
    pub health_json: Option<String>,
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

/// What one load level measured: the whole repetition, or one client step.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementRecord {
    /// 0-based; unique within the repetition.
    pub step: u32,
    pub label: String,
    pub concurrency: Option<u32>,
    /// Asked rate in requests per second, for open-loop loads.
    pub rate: Option<f64>,
    /// Length of the measured part, in seconds (warm-up excluded).
    pub duration_s: f64,
    pub completed: u64,
    pub failed: u64,
    /// Failure kind (`connect`, `receive`, `length`, `exceptions`, `timeout`, `closed`,
    /// `malformed` …) → count, in the order given.
    pub failures: Vec<(String, u64)>,
    /// HTTP status → count, in the order given.
    pub statuses: Vec<(u16, u64)>,
    pub non_2xx: u64,
    pub bytes_total: u64,
    pub bytes_body: u64,
    pub warmup_requests: u64,
    /// Name ([`HISTOGRAM_TOTAL`] …) → histogram in µs.
    pub histograms: Vec<(String, Histogram<u64>)>,
    /// Figures a tool reported itself when it gives no histogram (wrk's percentiles).
    pub reported: Vec<(String, f64)>,
    /// The client's verdict on this measurement (a step of a stepped run), when it was
    /// judged apart from the repetition; None: the repetition's verdict applies.
    pub client_verdict: Option<String>,
    pub client_verdict_reason: Option<String>,
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
    /// The plain findings stored with a run on a network path (`network_json`'s
    /// `findings`, written by herd_lab::netstat::PathFacts): empty over loopback; Err with
    /// the reason when the stored record cannot be read.
    pub fn network_findings(&self) -> Result<Vec<String>, String> {
        let Some(json) = self.network_json.as_deref() else { return Ok(Vec::new()) };
        #[derive(serde::Deserialize)]
        struct Facts {
            findings: Vec<String>,
        }
        serde_json::from_str::<Facts>(json)
            .map(|f| f.findings)
            .map_err(|e| format!("the stored network facts cannot be read: {e}"))
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

impl MeasurementRecord {
    /// Completed requests per second of the measured part; `None` when it lasted no time.
    pub fn requests_per_second(&self) -> Option<f64> {
        (self.duration_s > 0.0).then(|| self.completed as f64 / self.duration_s)
    }

    /// Bytes received per second / 1024, headers included (ab's "Transfer rate"); `None`
    /// when it lasted no time.
    pub fn kib_per_second(&self) -> Option<f64> {
        (self.duration_s > 0.0).then(|| self.bytes_total as f64 / self.duration_s / 1024.0)
    }

    /// The histogram of that name ([`HISTOGRAM_TOTAL`] …).
    pub fn histogram(&self, name: &str) -> Option<&Histogram<u64>> {
        self.histograms.iter().find(|(n, _)| n == name).map(|(_, h)| h)
    }

    /// The reported figure of that name ([`REPORTED_LATENCY_P50_US`] …).
    pub fn reported(&self, name: &str) -> Option<f64> {
        self.reported.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
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

    #[test]
    fn requests_per_second_needs_a_duration() {
        let mut m = MeasurementRecord {
            step: 0,
            label: "c10".into(),
            concurrency: Some(10),
            rate: None,
            duration_s: 2.0,
            completed: 1000,
            failed: 0,
            failures: vec![],
            statuses: vec![],
            non_2xx: 0,
            bytes_total: 0,
            bytes_body: 0,
            warmup_requests: 0,
            histograms: vec![],
            reported: vec![("latency_p50_us".into(), 12.5)],
            client_verdict: None,
            client_verdict_reason: None,
        };
        assert_eq!(m.requests_per_second(), Some(500.0));
        assert_eq!(m.reported(REPORTED_LATENCY_P50_US), Some(12.5));
        assert_eq!(m.histogram(HISTOGRAM_TOTAL), None);
        m.duration_s = 0.0;
        assert_eq!(m.requests_per_second(), None);
    }

    #[test]
    fn network_findings_are_read_and_an_unreadable_record_is_an_error() {
        let mut r = RepetitionRecord {
            cell_key: String::new(),
            axes: vec![],
            repetition: 0,
            position: 0,
            started_at: String::new(),
            finished_at: String::new(),
            outcome: Outcome::Ok,
            client: ClientRecord {
                tool: "ab".into(),
                version: String::new(),
                argv: vec![],
                cpus: None,
                verdict: None,
                verdict_reason: None,
                health_json: None,
            },
            servers: vec![],
            server_cpu_seconds: None,
            time_wait_before: None,
            drain_seconds: 0.0,
            network_json: None,
            measurements: vec![],
        };
        assert_eq!(r.network_findings(), Ok(vec![]));
        r.network_json = Some(r#"{"path":"direct","findings":["link-bound: 90 Mbit/s"]}"#.into());
        assert_eq!(r.network_findings(), Ok(vec!["link-bound: 90 Mbit/s".to_owned()]));
        r.network_json = Some("{}".into());
        let err = r.network_findings().unwrap_err();
        assert!(err.starts_with("the stored network facts cannot be read: missing field"), "{err}");
    }
}
