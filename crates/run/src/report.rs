//! `RunReport`: the result of `herd run`, typed, and *is* `herd.run.v1` (docs/run-json.md, the
//! contract in docs/run-json.schema.json). `herd run` prints its summary, judges `--fail-if`
//! and writes `--json` from it; the lab reads its clients' `run.json` back into it with serde;
//! `herd run --html` renders it. No other crate walks herd.run.v1 as untyped JSON.
//!
//! The wire format: a run is one [`StepReport`] object; a stepped run (`--steps`,
//! `--rate-steps`) is `{"format", "url", "steps": [StepReport…]}`. Within v1 fields are only
//! added; a reader ignores fields it does not know.

mod io;
mod latency;
mod step;
mod trace;

use std::fmt;

use herd_stats::{ClientJudgement, HealthFacts, Measurement};
use serde::{Deserialize, Serialize};

pub use io::{IoAsked, IoBackend, IoReport};
pub use latency::{Latencies, LatencyFigures, LatencySummary, QUANTILES};
pub use step::{
    Bytes, Clients, Conforming, GroupRow, Groups, PerConnection, QuicReport, Requests, Schedule,
    StepReport, ThinkKind, ThinkReport,
};
pub use trace::TraceReport;

/// The format name every herd.run.v1 document carries.
pub const FORMAT: &str = "herd.run.v1";

/// A run's result: one step, or a stepped run's steps in order.
#[derive(Debug, Clone, PartialEq)]
pub enum RunReport {
    Single(Box<StepReport>),
    Stepped { url: String, steps: Vec<StepReport> },
}

impl RunReport {
    /// Every result in order: the one of a single run, or each step's.
    pub fn steps(&self) -> &[StepReport] {
        match self {
            RunReport::Single(s) => std::slice::from_ref(s),
            RunReport::Stepped { steps, .. } => steps,
        }
    }

    pub fn is_stepped(&self) -> bool {
        matches!(self, RunReport::Stepped { .. })
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        match self {
            RunReport::Single(s) => &s.url,
            RunReport::Stepped { url, .. } => url,
        }
    }

    /// The last result: the whole of a single run, or a stepped run's last step (what
    /// `--fail-if` judges).
    pub fn last(&self) -> Option<&StepReport> {
        self.steps().last()
    }

    /// Every result as the lab and the pages measure every client: one [`Measurement`] per
    /// step, each step's own verdict on it when the run is stepped.
    pub fn measurements(&self) -> Vec<Measurement> {
        let stepped = self.is_stepped();
        self.steps()
            .iter()
            .zip(1u32..)
            .map(|(s, k)| {
                let mut m = s.measurement(k, stepped);
                if stepped {
                    m.judgement = s.judgement(Some(&m.label), k);
                }
                m
            })
            .collect()
    }

    /// The run's client verdict: a single run's, or the worst step's (its reason says which
    /// step); None when no result could be judged (no request got a response).
    pub fn judgement(&self) -> Option<ClientJudgement> {
        let stepped = self.is_stepped();
        self.steps()
            .iter()
            .zip(1u32..)
            .filter_map(|(s, k)| {
                let label = s.step_label();
                s.judgement(stepped.then_some(&label), k)
            })
            .reduce(|worst, j| if j.verdict > worst.verdict { j } else { worst })
    }

    /// The client health facts of every result, as the store keeps them.
    pub fn health(&self) -> HealthFacts {
        match self {
            RunReport::Single(s) => HealthFacts::Run(s.client.clone()),
            RunReport::Stepped { steps, .. } => {
                HealthFacts::Steps(steps.iter().map(|s| s.client.clone()).collect())
            }
        }
    }

    /// As `herd run --json` writes it: pretty-printed, a newline at the end.
    pub fn to_json_pretty(&self) -> String {
        // Plain data with histograms already encoded once (`LatencySummary`): cannot fail.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// A herd.run.v1 document, or where it is not one: the field's path and what is wrong.
    pub fn from_json(text: &str) -> Result<RunReport, ReadError> {
        #[derive(Deserialize)]
        struct Probe {
            format: Option<serde_json::Value>,
            steps: Option<serde::de::IgnoredAny>,
        }
        let probe: Probe =
            serde_json::from_str(text).map_err(|e| ReadError::NotJson(e.to_string()))?;
        if probe.format.as_ref().and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(ReadError::Format(probe.format.map(|f| f.to_string())));
        }
        let de = &mut serde_json::Deserializer::from_str(text);
        let result = if probe.steps.is_some() {
            serde_path_to_error::deserialize::<_, SteppedWire>(de)
                .map(|w| RunReport::Stepped { url: w.url, steps: w.steps })
        } else {
            serde_path_to_error::deserialize::<_, StepReport>(de)
                .map(|s| RunReport::Single(Box::new(s)))
        };
        let report = result.map_err(|e| {
            // The path says where; serde_json's line and column in a one-line file do not.
            let inner = e.inner();
            let place = format!(" at line {} column {}", inner.line(), inner.column());
            let problem = inner.to_string();
            let problem = problem.strip_suffix(&place).unwrap_or(&problem).to_owned();
            ReadError::Field { path: e.path().to_string(), problem }
        })?;
        if report.steps().is_empty() {
            return Err(ReadError::Field { path: "steps".into(), problem: "is empty".into() });
        }
        Ok(report)
    }
}

/// Why a document is not a herd.run.v1 result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("is not JSON: {0}")]
    NotJson(String),
    #[error("is of format {}, not {FORMAT}", .0.as_deref().unwrap_or("(none)"))]
    Format(Option<String>),
    #[error("has a bad `{path}`: {problem}")]
    Field { path: String, problem: String },
}

/// `"herd.run.v1"` on the wire, and nothing else read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FormatV1;

impl Serialize for FormatV1 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(FORMAT)
    }
}

impl<'de> Deserialize<'de> for FormatV1 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FormatV1, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if text == FORMAT {
            Ok(FormatV1)
        } else {
            Err(serde::de::Error::custom(format!("`{text}`, expected {FORMAT}")))
        }
    }
}

impl fmt::Display for FormatV1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(FORMAT)
    }
}

/// A stepped run on the wire.
#[derive(Serialize, Deserialize)]
struct SteppedWire {
    format: FormatV1,
    url: String,
    steps: Vec<StepReport>,
}

#[derive(Serialize)]
struct SteppedRef<'a> {
    format: FormatV1,
    url: &'a str,
    steps: &'a [StepReport],
}

impl Serialize for RunReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RunReport::Single(step) => step.as_ref().serialize(s),
            RunReport::Stepped { url, steps } => {
                SteppedRef { format: FormatV1, url, steps }.serialize(s)
            }
        }
    }
}

#[cfg(test)]
mod tests;
