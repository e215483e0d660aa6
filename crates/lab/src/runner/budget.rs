//! `[repetitions] time_budget`: repetitions past the minimum only while a round of them would
//! end within the budget. The first `min` rounds always run whole (a figure needs them); after
//! them, a round starts only where the time run so far plus that round's runs at this lab
//! run's mean run time stays within the budget. So an experiment asked to be as sure as it can
//! be in a minute takes about a minute on a slow machine too, its unsettled rows marked `?`
//! as any that reached `max`. The budget is this lab run's time: a resumed run counts its own.

use std::time::{Duration, Instant};

/// The lab run's clock, and how many runs it has made.
pub(super) struct Budget {
    limit: Option<Duration>,
    started: Instant,
    runs: u32,
}

impl Budget {
    pub(super) fn start(limit: Option<Duration>) -> Budget {
        Budget { limit, started: Instant::now(), runs: 0 }
    }

    /// A run ended (ok or failed: either took its time).
    pub(super) fn ran(&mut self) {
        self.runs += 1;
    }

    /// Whether a round of `runs` more would pass the budget, at the mean time a run has
    /// taken so far: the time it would end then. None within the budget (or with no budget,
    /// or before any run gave a mean).
    pub(super) fn would_pass(&self, runs: usize) -> Option<Duration> {
        self.would_pass_at(self.started.elapsed(), runs)
    }

    fn would_pass_at(&self, elapsed: Duration, runs: usize) -> Option<Duration> {
        let limit = self.limit?;
        if self.runs == 0 {
            return None;
        }
        let mean = elapsed.as_secs_f64() / f64::from(self.runs);
        let end = elapsed + Duration::from_secs_f64(mean * runs as f64);
        (end > limit).then_some(end)
    }

    pub(super) fn limit(&self) -> Option<Duration> {
        self.limit
    }

    pub(super) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_passes_the_budget_at_the_mean_run_time() {
        let mut b = Budget::start(Some(Duration::from_secs(60)));
        assert_eq!(b.would_pass_at(Duration::from_secs(10), 100), None, "no run, no mean");
        for _ in 0..40 {
            b.ran();
        }
        // 40 runs in 50 s: 1.25 s each. Four more end at 55 s, ten more at 62.5 s.
        assert_eq!(b.would_pass_at(Duration::from_secs(50), 4), None);
        assert_eq!(
            b.would_pass_at(Duration::from_secs(50), 10),
            Some(Duration::from_secs_f64(62.5))
        );
        let none = Budget { limit: None, started: Instant::now(), runs: 40 };
        assert_eq!(none.would_pass_at(Duration::from_secs(500), 100), None);
    }
}
