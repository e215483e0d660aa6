//! What the live view shows, kept a second at a time by the writer thread's observer: each
//! second's rate, latency percentiles and failures (the last ten minutes of them, for the
//! charts), and the totals so far. Pure data: drawing is draw.rs's, the terminal mod.rs's.

use std::collections::VecDeque;
use std::time::Duration;

use herd_run::RunSecond;
use herd_stats::{FailureKind, Failures};

/// Seconds kept for the charts: ten minutes (a longer run scrolls).
const HISTORY: usize = 600;

/// One second as the view shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Second {
    /// From the measurement start (a stepped run's seconds go on across steps).
    pub(crate) at: u64,
    pub(crate) rate: f64,
    /// p50, p90, p99, p99.9 in milliseconds; None for a second without a response.
    pub(crate) latency_ms: Option<[f64; 4]>,
    /// The share of its responses sent [`herd_run::LATE_SEND`] or more behind schedule.
    pub(crate) late_share: Option<f64>,
}

/// The view's state.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// What runs: the URL and how (a line of text).
    pub(crate) title: String,
    /// A stepped run's steps.
    pub(crate) steps: Option<usize>,
    /// An open loop (a rate asked): whether the client keeps its schedule is its health.
    pub(crate) open_loop: bool,
    /// The worst second's share of late sends so far.
    pub(crate) worst_late_share: f64,
    pub(crate) step: Option<usize>,
    pub(crate) seconds: VecDeque<Second>,
    pub(crate) completed: u64,
    pub(crate) failures: Failures,
    pub(crate) bytes_read: u64,
    /// Connections open at the last second's end.
    pub(crate) open_connections: u64,
    /// Seconds seen in all (the charts keep the last [`HISTORY`]).
    pub(crate) elapsed: u64,
    /// herd's own CPU over the last second, in cores (its process: workers, writer, this
    /// view): the client's cost as the run goes, beside what it measures.
    pub(crate) cpu_cores: Option<f64>,
    /// A spread run's agents: how long after its end each one's last second came (None
    /// before its first).
    pub(crate) agents_behind: Vec<Option<Duration>>,
    /// The run is over (or stopping): said in the footer until the view closes.
    pub(crate) stopping: bool,
    /// Bumped at every change: the view is drawn again only when it changed (a second a
    /// second), not at every look at the keys.
    pub(crate) version: u64,
}

impl View {
    pub(crate) fn new(title: String, steps: Option<usize>, open_loop: bool) -> View {
        View { title, steps, open_loop, ..View::default() }
    }

    /// Adds merged second `s` of step `step`.
    pub(crate) fn add(&mut self, step: Option<usize>, s: &RunSecond) {
        let i = &s.interval;
        let latency_ms = (!i.latency.is_empty())
            .then(|| [0.5, 0.9, 0.99, 0.999].map(|q| i.latency.quantile_micros(q) as f64 / 1000.0));
        if self.seconds.len() == HISTORY {
            self.seconds.pop_front();
        }
        let late_share = (i.completed > 0).then(|| i.late_sends as f64 / i.completed as f64);
        self.worst_late_share = self.worst_late_share.max(late_share.unwrap_or(0.0));
        let at = self.elapsed;
        self.seconds.push_back(Second { at, rate: s.per_second(), latency_ms, late_share });
        self.elapsed += 1;
        self.step = step;
        self.completed += i.completed;
        self.failures += &i.failures;
        self.bytes_read += i.bytes_read;
        self.open_connections = i.open_connections;
        self.version += 1;
    }

    /// herd used `used` CPU seconds over the last `wall` seconds: the cores it used.
    pub(crate) fn cpu(&mut self, used: f64, wall: f64) {
        if wall > 0.0 {
            self.cpu_cores = Some(used / wall);
        }
    }

    /// Agent `agent`'s last second came `behind` after it ended (drawn with the next
    /// merged second, not at each agent's).
    pub(crate) fn agent_behind(&mut self, agent: usize, behind: Duration) {
        if self.agents_behind.len() <= agent {
            self.agents_behind.resize(agent + 1, None);
        }
        self.agents_behind[agent] = Some(behind);
    }

    /// The run is stopping (a key, or its end).
    pub(crate) fn stop(&mut self) {
        self.stopping = true;
        self.version += 1;
    }

    /// The failure kinds that happened, most first.
    pub(crate) fn failures_by_kind(&self) -> Vec<(FailureKind, u64)> {
        let mut v: Vec<_> = self.failures.iter().collect();
        v.sort_by_key(|k| std::cmp::Reverse(k.1));
        v
    }

    /// The last second, if any.
    pub(crate) fn last(&self) -> Option<&Second> {
        self.seconds.back()
    }
}

#[cfg(test)]
mod tests {
    use herd_run::Interval;

    use super::*;

    fn second(completed: u64, us: u64, failed: u64) -> RunSecond {
        let mut interval = Interval::default();
        for _ in 0..completed {
            interval.completed += 1;
            interval.latency.record_micros(us);
        }
        for _ in 0..failed {
            interval.failed += 1;
            interval.failures.add(FailureKind::Timeout);
        }
        RunSecond { second: 0, length: Duration::from_secs(1), interval }
    }

    #[test]
    fn seconds_add_up_and_the_history_is_bounded() {
        let mut v = View::new("t".into(), None, true);
        v.add(None, &second(10, 2_000, 1));
        v.add(None, &second(0, 0, 3));
        assert_eq!((v.completed, v.elapsed), (10, 2));
        assert_eq!(v.failures_by_kind(), [(FailureKind::Timeout, 4)]);
        let first = v.seconds[0];
        assert_eq!(first.rate, 10.0);
        assert!((first.latency_ms.unwrap()[2] - 2.0).abs() < 0.01, "{first:?}");
        assert_eq!(v.last().unwrap().latency_ms, None, "no response in that second");
        for _ in 0..700 {
            v.add(Some(2), &second(1, 100, 0));
        }
        assert_eq!(v.seconds.len(), HISTORY);
        assert_eq!(v.seconds.back().unwrap().at, 701);
        assert_eq!(v.step, Some(2));
    }

    #[test]
    fn each_seconds_late_sends_and_the_worst_so_far_are_kept() {
        let mut v = View::new("t".into(), None, true);
        let mut late = second(10, 2_000, 0);
        late.interval.late_sends = 3;
        v.add(None, &late);
        assert_eq!((v.last().unwrap().late_share, v.worst_late_share), (Some(0.3), 0.3));
        v.add(None, &second(10, 2_000, 0));
        assert_eq!((v.last().unwrap().late_share, v.worst_late_share), (Some(0.0), 0.3));
        v.add(None, &second(0, 0, 1));
        assert_eq!(v.last().unwrap().late_share, None, "no response, no share");
    }
}
