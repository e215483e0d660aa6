//! Figures an article published, stored with the experiment that re-runs it, so a report
//! can set them beside today's ("then and now"). Written by the lab from the experiment's
//! `[published]` table (docs/experiment.md), checked there against the matrix; kept as JSON
//! in the experiment's row, so a report reads them without the lab.

use serde::{Deserialize, Serialize};

/// An article's figures and what they were measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Published {
    /// Where and when they were published.
    pub source: String,
    /// Hardware and software as the article states them.
    pub setup: Option<String>,
    /// What a [`Measure::Percent`] figure is a percentage of: the cell with this axis at
    /// this value and every other axis equal (seed 001's `path = direct`).
    pub percent_of: Option<(String, String)>,
    pub figures: Vec<PublishedFigure>,
}

/// One published result and the cells it compares with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedFigure {
    /// Axis values, in the experiment's axis order; a cell matches when it has every one
    /// (a sweep's name matches each of its sizes).
    pub at: Vec<(String, String)>,
    /// What ran then, in the article's words (`Apache 2.4.9 on Linux 3.14.2`).
    pub ran: Option<String>,
    /// How the figure was obtained, where it needs saying (read off a graph, scaled).
    pub note: Option<String>,
    /// The figures, in [`Measure::ALL`] order.
    pub values: Vec<(Measure, f64)>,
}

/// What a published figure measures; the report computes the same from today's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The run's duration (ab's "Time taken for tests").
    Seconds,
    /// Requests per second as a percentage of the `percent_of` cell's.
    Percent,
    RequestsPerSecond,
    /// Requests per second of a load that opens a connection per request.
    ConnectionsPerSecond,
    /// Bytes received per second / 1024, headers included (ab's "Transfer rate").
    KbPerSecond,
    /// Megabits (10^6 bits) the client moved per second: NetBench's throughput, the bytes
    /// the server delivered to and took from its clients (for HTTP, the bytes received).
    MbitPerSecond,
    /// The best step's requests per second, of a stepped load.
    PeakRequestsPerSecond,
    /// The best step's Mbit/s, of a stepped load (NetBench's peak).
    PeakMbitPerSecond,
    /// The clients of the best step.
    ClientsAtPeak,
    /// Latency percentiles from the intended send, µs: each repetition's own, summarised
    /// over repetitions like any other figure (never pooled across them).
    #[serde(rename = "p50")]
    LatencyP50,
    #[serde(rename = "p99")]
    LatencyP99,
    #[serde(rename = "p99.9")]
    LatencyP999,
    /// The server's CPU time per completed request, µs.
    CpuPerRequest,
}

impl Measure {
    pub const ALL: [Measure; 13] = [
        Measure::Seconds,
        Measure::Percent,
        Measure::RequestsPerSecond,
        Measure::ConnectionsPerSecond,
        Measure::KbPerSecond,
        Measure::MbitPerSecond,
        Measure::PeakRequestsPerSecond,
        Measure::PeakMbitPerSecond,
        Measure::ClientsAtPeak,
        Measure::LatencyP50,
        Measure::LatencyP99,
        Measure::LatencyP999,
        Measure::CpuPerRequest,
    ];

    /// The measures a result table can show per cell (`[report] measure`, `herd report
    /// --measure`): the others are published summaries of several cells or steps.
    pub const TABULATED: [Measure; 9] = [
        Measure::RequestsPerSecond,
        Measure::Seconds,
        Measure::KbPerSecond,
        Measure::MbitPerSecond,
        Measure::ConnectionsPerSecond,
        Measure::LatencyP50,
        Measure::LatencyP99,
        Measure::LatencyP999,
        Measure::CpuPerRequest,
    ];

    /// The measure with that key if a table can show it; Err says which keys can.
    pub fn tabulated(key: &str) -> Result<Measure, String> {
        Measure::from_key(key).filter(|m| Measure::TABULATED.contains(m)).ok_or_else(|| {
            let keys: Vec<String> =
                Measure::TABULATED.iter().map(|m| format!("`{}`", m.key())).collect();
            format!("`{key}` is not a figure the tables show: use {}", keys.join(", "))
        })
    }

    /// The measure with that key ([`Measure::key`]); `-` may stand for `_`
    /// (`cpu-per-request`).
    pub fn from_key(key: &str) -> Option<Measure> {
        let key = key.replace('-', "_");
        Measure::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Its key in an experiment file and in the stored JSON.
    pub fn key(self) -> &'static str {
        match self {
            Measure::Seconds => "seconds",
            Measure::Percent => "percent",
            Measure::RequestsPerSecond => "requests_per_second",
            Measure::ConnectionsPerSecond => "connections_per_second",
            Measure::KbPerSecond => "kb_per_second",
            Measure::MbitPerSecond => "mbit_per_second",
            Measure::PeakRequestsPerSecond => "peak_requests_per_second",
            Measure::PeakMbitPerSecond => "peak_mbit_per_second",
            Measure::ClientsAtPeak => "clients_at_peak",
            Measure::LatencyP50 => "p50",
            Measure::LatencyP99 => "p99",
            Measure::LatencyP999 => "p99.9",
            Measure::CpuPerRequest => "cpu_per_request",
        }
    }

    /// Whether a smaller figure is the better one (a time, a latency, a cost), so that a
    /// ratio above 1 is a slowdown.
    pub fn lower_is_better(self) -> bool {
        matches!(
            self,
            Measure::Seconds
                | Measure::LatencyP50
                | Measure::LatencyP99
                | Measure::LatencyP999
                | Measure::CpuPerRequest
        )
    }

    /// Compared with the best step of a stepped load, not with a single measurement.
    pub fn needs_steps(self) -> bool {
        matches!(
            self,
            Measure::PeakRequestsPerSecond | Measure::PeakMbitPerSecond | Measure::ClientsAtPeak
        )
    }
}

impl Published {
    /// As stored ([`crate::NewExperiment::published_json`]).
    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string(self)
            .map_err(|e| format!("the published figures cannot be written as JSON: {e}"))
    }

    /// Reads what [`Published::to_json`] wrote; Err says why it cannot be read.
    pub fn from_json(json: &str) -> Result<Published, String> {
        serde_json::from_str(json)
            .map_err(|e| format!("the stored published figures cannot be read: {e}"))
    }
}

impl PublishedFigure {
    /// Whether a cell with these axis values is one this figure compares with.
    pub fn matches(&self, axes: &[(String, String)]) -> bool {
        self.at.iter().all(|(name, value)| {
            axes.iter().any(|(n, v)| n == name && crate::axes::names_value(value, v))
        })
    }

    pub fn value(&self, measure: Measure) -> Option<f64> {
        self.values.iter().find(|(m, _)| *m == measure).map(|(_, v)| *v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn a_figure_matches_cells_with_all_its_axis_values_and_each_size_of_a_sweep() {
        let f = PublishedFigure {
            at: axes(&[("server", "nginx"), ("workload", "sizes")]),
            ran: None,
            note: None,
            values: vec![(Measure::KbPerSecond, 55_000.0)],
        };
        assert!(f.matches(&axes(&[
            ("server", "nginx"),
            ("workload", "sizes:1024"),
            ("path", "direct")
        ])));
        assert!(!f.matches(&axes(&[("server", "apache"), ("workload", "sizes:1024")])));
        assert!(!f.matches(&axes(&[("server", "nginx"), ("workload", "sizes2:1")])));
        assert!(!f.matches(&axes(&[("server", "nginx")])));
        assert_eq!(f.value(Measure::KbPerSecond), Some(55_000.0));
        assert_eq!(f.value(Measure::Seconds), None);
    }

    #[test]
    fn round_trips_through_json_and_says_when_it_cannot_be_read() {
        let p = Published {
            source: "seed 001".into(),
            setup: Some("Xen".into()),
            percent_of: Some(("path".into(), "direct".into())),
            figures: vec![PublishedFigure {
                at: axes(&[("path", "direct")]),
                ran: Some("Apache 2.4.9".into()),
                note: None,
                values: vec![(Measure::Seconds, 2.278), (Measure::Percent, 100.0)],
            }],
        };
        assert_eq!(Published::from_json(&p.to_json().unwrap()), Ok(p));
        assert!(Published::from_json("{}")
            .unwrap_err()
            .contains("published figures cannot be read"));
        for m in Measure::ALL {
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.key()));
        }
    }
}
