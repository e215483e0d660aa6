//! What the metrics say, kept up to date a second at a time: counters since the start
//! (requests, failures by kind, bytes, every latency in one histogram) and the last second's
//! rate and percentiles. The writer thread adds each merged second ([`MetricsFeed`]); a scrape
//! renders a copy taken under the lock (a few microseconds), never the measuring threads'
//! state.

use std::sync::{Arc, Mutex, PoisonError};

use herd_record::Interval;
use herd_stats::{Failures, LatencyHistogram};

use crate::outputs::SecondObserver;
use crate::RunSecond;

/// The labels every series carries: which run, and, when there is one, which agent, step
/// or lab cell it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// The run's id (`herd run` makes one at start and prints it).
    pub run: String,
    /// The agent of a spread run whose own figures these are (none: merged, or one process).
    pub agent: Option<String>,
    /// The user's own (`--metrics-label KEY=VALUE`): the lab's `cell` and `repetition`.
    pub extra: Vec<(String, String)>,
}

/// A run's figures so far.
#[derive(Debug, Clone)]
pub struct LiveFigures {
    pub labels: Labels,
    pub completed: u64,
    pub failures: Failures,
    pub bytes_read: u64,
    /// Completed requests sent 1 ms or more behind their schedule with a connection free
    /// (the client's own lag: an open loop's health as it goes).
    pub late_sends: u64,
    /// Connections open at the end of the last whole second (every worker's, every agent's).
    pub open_connections: u64,
    /// Every completed request's latency from its intended send, since the start.
    pub latency: LatencyHistogram,
    /// The step (from 1) of the last second, for a stepped run.
    pub step: Option<usize>,
    /// The last whole second: its requests a second and its latencies.
    pub last_rate: f64,
    pub last_latency: LatencyHistogram,
    /// The run is over: these are its final figures.
    pub finished: bool,
    /// Bumped at every change: a scrape that saw the final figures says so by this.
    pub version: u64,
}

impl LiveFigures {
    pub fn new(labels: Labels) -> LiveFigures {
        LiveFigures {
            labels,
            completed: 0,
            failures: Failures::default(),
            bytes_read: 0,
            late_sends: 0,
            open_connections: 0,
            latency: LatencyHistogram::growing(),
            step: None,
            last_rate: 0.0,
            last_latency: LatencyHistogram::growing(),
            finished: false,
            version: 0,
        }
    }

    /// Adds one merged second (of step `step`).
    pub fn add(&mut self, step: Option<usize>, s: &RunSecond) {
        let i: &Interval = &s.interval;
        self.completed += i.completed;
        self.failures += &i.failures;
        self.bytes_read += i.bytes_read;
        self.late_sends += i.late_sends;
        self.open_connections = i.open_connections;
        self.latency += &i.latency;
        self.step = step;
        self.last_rate = s.per_second();
        self.last_latency = i.latency.clone();
        self.version += 1;
    }

    pub fn finish(&mut self) {
        self.finished = true;
        self.version += 1;
    }
}

/// The figures as the writer thread and the server share them.
pub type SharedFigures = Arc<Mutex<LiveFigures>>;

/// The writer thread's observer that keeps [`LiveFigures`]; other observers (the live line)
/// go on behind it.
pub struct MetricsFeed {
    figures: SharedFigures,
    next: Option<Box<dyn SecondObserver>>,
}

impl MetricsFeed {
    pub fn new(figures: SharedFigures, next: Option<Box<dyn SecondObserver>>) -> MetricsFeed {
        MetricsFeed { figures, next }
    }
}

impl SecondObserver for MetricsFeed {
    fn second(&mut self, step: Option<usize>, s: &RunSecond) {
        self.figures.lock().unwrap_or_else(PoisonError::into_inner).add(step, s);
        if let Some(next) = &mut self.next {
            next.second(step, s);
        }
    }

    fn end_step(&mut self) {
        if let Some(next) = &mut self.next {
            next.end_step();
        }
    }

    fn agent_behind(&mut self, agent: usize, behind: std::time::Duration) {
        if let Some(next) = &mut self.next {
            next.agent_behind(agent, behind);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use herd_stats::FailureKind;

    use super::*;

    #[test]
    fn seconds_add_up_and_the_last_one_is_kept() {
        let mut f = LiveFigures::new(Labels { run: "r1".into(), ..Labels::default() });
        for (n, us) in [(3u64, 100u64), (5, 2_000)] {
            let mut interval = Interval::default();
            for _ in 0..n {
                interval.completed += 1;
                interval.latency.record_micros(us);
            }
            interval.failed += 1;
            interval.failures.add(FailureKind::Timeout);
            interval.bytes_read += 10 * n;
            f.add(Some(2), &RunSecond { second: 0, length: Duration::from_secs(1), interval });
        }
        assert_eq!(f.completed, 8);
        assert_eq!(f.failures.get(FailureKind::Timeout), 2);
        assert_eq!(f.bytes_read, 80);
        assert_eq!(f.latency.len(), 8);
        assert_eq!(f.last_latency.len(), 5);
        assert!((f.last_rate - 5.0).abs() < 1e-9, "5 completed in the last second");
        assert_eq!((f.step, f.version), (Some(2), 2));
        f.finish();
        assert!(f.finished && f.version == 3);
    }
}
