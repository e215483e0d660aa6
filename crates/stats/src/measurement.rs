//! One measured run or step, in the same terms for every client the lab runs (herd's own,
//! ab, wrk): what the lab's adapters read from a client, what the store keeps, what the
//! reports show, and what `herd run --html`/`herd ab --html` render. One type from the client's
//! output to the page.

use hdrhistogram::Histogram;

use crate::{ClientJudgement, Failure, LatencySeries};

/// A figure a tool does not report is 0 (and said so below); tool-specific figures go to
/// `reported`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measurement {
    /// 1, 2, … in order; 1 for a run that is not stepped.
    pub step: u32,
    /// `""` for a run that is not stepped, `"c=16"` for a step of 16 clients.
    pub label: String,
    /// Connections (the most open at once, for an open loop).
    pub concurrency: Option<u32>,
    /// The asked rate of an open loop, requests per second.
    pub rate: Option<f64>,
    /// Measured time, seconds (after any warm-up).
    pub duration_s: f64,
    /// Requests that got a complete response, whatever its status or length.
    pub completed: u64,
    /// Requests that failed, plus, as ab counts them, complete responses with a wrong body
    /// length ([`Failure::Length`]; so `completed + failed` can exceed the requests sent by
    /// that many).
    pub failed: u64,
    /// `failed` by kind; kinds with a count only, in [`Failure`]'s order.
    pub failures: Vec<(Failure, u64)>,
    /// Responses by status, ascending (herd only: ab and wrk give only a count of non-2xx).
    pub statuses: Vec<(u16, u64)>,
    /// Responses whose status is not 2xx (ab: its "Non-2xx responses"; wrk: its status
    /// errors, which are statuses above 399 only).
    pub non_2xx: u64,
    /// Every byte read, heads and bodies.
    pub bytes_total: u64,
    /// Body bytes of complete responses; 0 from wrk, which does not count them.
    pub bytes_body: u64,
    /// Requests of the warm-up, kept out of every other figure. A stepped run's warm-up comes
    /// before its first step and counts there.
    pub warmup_requests: u64,
    /// Latency histograms in microseconds. herd: every series (empty when nothing was
    /// measured); ab: `total`, `connect`, `first_byte` from its `-g` file, at ab's millisecond
    /// resolution; wrk: none.
    pub histograms: Vec<(LatencySeries, Histogram<u64>)>,
    /// Figures a tool reports without a histogram, by name ([`REPORTED_LATENCY_P50_US`] …).
    pub reported: Vec<(String, f64)>,
    /// The client's verdict on this measurement when it was judged apart from the whole run
    /// (a step of a stepped run); None: the run's verdict applies.
    pub judgement: Option<ClientJudgement>,
}

/// Name of a tool's own median latency in µs, for tools that give no histogram (wrk).
pub const REPORTED_LATENCY_P50_US: &str = "latency_p50_us";
/// Name of a tool's own 99th percentile latency in µs, for tools that give no histogram.
pub const REPORTED_LATENCY_P99_US: &str = "latency_p99_us";
/// Name of the resolution, in seconds, of the clock that timed the measurement, for tools
/// whose clock is coarse (ab prints its run time to the millisecond).
pub const REPORTED_TIMER_RESOLUTION_S: &str = "timer_resolution_s";
/// Present (1) when the run was stopped before its end (Ctrl-C): a partial result.
pub const REPORTED_INTERRUPTED: &str = "interrupted";
/// NetBench (smbtorture's NBENCH): throughput in MB/s, MB = 10^6 bytes, the ReadX and WriteX
/// bytes of every client over the time limit (NetBench's "bytes delivered to and taken from
/// clients per second").
pub const REPORTED_THROUGHPUT_MB_S: &str = "throughput_mb_s";
/// NetBench: the same throughput in Mbit/s (8 × MB/s), NetBench's published unit.
pub const REPORTED_THROUGHPUT_MBIT_S: &str = "throughput_mbit_s";
/// NetBench: load-file lines per client, how far into the trace the step got.
pub const REPORTED_LINES_PER_CLIENT: &str = "lines_per_client";
/// NetBench: 1 when the step never left the trace's write-only opening, else 0.
pub const REPORTED_WRITE_ONLY_OPENING: &str = "write_only_opening";
/// NetBench: smbtorture's warm-up before the measured time, seconds (its time limit / 20).
pub const REPORTED_WARMUP_S: &str = "warmup_s";
/// NetBench: CPU seconds the client's processes used over the step.
pub const REPORTED_CLIENT_CPU_S: &str = "client_cpu_s";
/// `[runner] server_count` (on a run's last measurement): the responses to the workload's
/// request in the server's own access log, read once the server had stopped.
pub const REPORTED_SERVER_COUNT_LOGGED: &str = "server_count.logged";
/// `[runner] server_count`: the fewest such lines what the client counted allows (the
/// verification, and every request the warm-up and the measured run completed).
pub const REPORTED_SERVER_COUNT_LEAST: &str = "server_count.expected_least";
/// `[runner] server_count`: the most (the fewest, plus every request the client counted as
/// failed and, for a timed load, every request that could be in flight when a run stopped);
/// the same as the fewest for a request-count load without failures.
pub const REPORTED_SERVER_COUNT_MOST: &str = "server_count.expected_most";

/// One agent's own figure of a run spread over agents (herd cluster run): stored among the
/// reported figures as `agent.<index>.<figure>` beside the merged measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AgentFigure {
    /// Its completed requests per second.
    RequestsPerSecond,
    /// Its 99th percentile of latency from the intended send, µs.
    P99Us,
    /// How late its engine started after the shared start instant, µs.
    StartLateUs,
    /// Its clock's offset from the coordinator's, as the coordinator measured it, µs: an
    /// agent on another machine starts by its own clock.
    ClockOffsetUs,
}

impl AgentFigure {
    pub const ALL: [AgentFigure; 4] = [
        AgentFigure::RequestsPerSecond,
        AgentFigure::P99Us,
        AgentFigure::StartLateUs,
        AgentFigure::ClockOffsetUs,
    ];

    fn as_str(self) -> &'static str {
        match self {
            AgentFigure::RequestsPerSecond => "requests_per_second",
            AgentFigure::P99Us => "p99_us",
            AgentFigure::StartLateUs => "start_late_us",
            AgentFigure::ClockOffsetUs => "clock_offset_us",
        }
    }

    /// Its name among the reported figures, for agent `index`.
    pub fn name(self, index: u32) -> String {
        format!("agent.{index}.{}", self.as_str())
    }

    /// The agent and figure a reported name is of, if it is one.
    pub fn parse(name: &str) -> Option<(u32, AgentFigure)> {
        let rest = name.strip_prefix("agent.")?;
        let (index, what) = rest.split_once('.')?;
        let figure = AgentFigure::ALL.into_iter().find(|f| f.as_str() == what)?;
        Some((index.parse().ok()?, figure))
    }
}

impl Measurement {
    /// Completed requests per second of the measured part; `None` when it lasted no time.
    pub fn requests_per_second(&self) -> Option<f64> {
        (self.duration_s > 0.0).then(|| self.completed as f64 / self.duration_s)
    }

    /// Bytes received per second / 1024, headers included (ab's "Transfer rate"); `None`
    /// when it lasted no time.
    pub fn kib_per_second(&self) -> Option<f64> {
        (self.duration_s > 0.0).then(|| self.bytes_total as f64 / self.duration_s / 1024.0)
    }

    /// Megabits (10^6 bits) moved per second, NetBench's unit: 8 × bytes / 10^6 / s of
    /// `bytes_total`; `None` when it lasted no time.
    pub fn mbit_per_second(&self) -> Option<f64> {
        (self.duration_s > 0.0).then(|| self.bytes_total as f64 * 8.0 / 1e6 / self.duration_s)
    }

    /// The histogram of that series, if the tool gave it.
    pub fn histogram(&self, series: LatencySeries) -> Option<&Histogram<u64>> {
        self.histograms.iter().find(|(s, _)| *s == series).map(|(_, h)| h)
    }

    /// The reported figure of that name ([`REPORTED_LATENCY_P50_US`] …).
    pub fn reported(&self, name: &str) -> Option<f64> {
        self.reported.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    /// Failed requests of that kind.
    pub fn failures_of(&self, kind: Failure) -> u64 {
        self.failures.iter().filter(|(k, _)| *k == kind).map(|&(_, n)| n).sum()
    }

    /// Complete responses with a wrong body length (counted in `failed` too).
    pub fn wrong_length(&self) -> u64 {
        self.failures_of(Failure::Length)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_figures_name_and_parse_back() {
        for f in AgentFigure::ALL {
            assert_eq!(AgentFigure::parse(&f.name(12)), Some((12, f)));
        }
        assert_eq!(AgentFigure::RequestsPerSecond.name(0), "agent.0.requests_per_second");
        for other in ["agent.x.p99_us", "agent.1.melted", "latency_p99_us", "agent.1"] {
            assert_eq!(AgentFigure::parse(other), None, "{other}");
        }
    }

    #[test]
    fn derived_figures() {
        let mut m = Measurement {
            step: 1,
            duration_s: 2.0,
            completed: 1000,
            bytes_total: 4096,
            failed: 3,
            failures: vec![(Failure::Connect, 1), (Failure::Length, 2)],
            reported: vec![(REPORTED_LATENCY_P50_US.into(), 12.5)],
            ..Measurement::default()
        };
        assert_eq!(m.requests_per_second(), Some(500.0));
        assert_eq!(m.kib_per_second(), Some(2.0));
        assert_eq!(m.reported(REPORTED_LATENCY_P50_US), Some(12.5));
        assert_eq!(m.histogram(LatencySeries::Total), None);
        assert_eq!((m.wrong_length(), m.failures_of(Failure::Timeout)), (2, 0));
        m.duration_s = 0.0;
        assert_eq!(m.requests_per_second(), None);
    }
}
