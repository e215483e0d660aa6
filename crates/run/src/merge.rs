//! The workers' seconds (herd-record's seconds.rs) merged into the run's seconds, in order.
//! Second s of the run is complete when every worker has sent its second s or has ended; it
//! goes out then, while the run goes on. Only seconds still waiting for a slower worker are
//! held (workers roll over within ~100 ms of each other, so one or two), never the run's
//! history.
//!
//! Pure bookkeeping: no I/O, no clock. The writer thread (outputs.rs) feeds it reports and
//! writes what comes out.

use std::collections::VecDeque;
use std::time::Duration;

use herd_record::{Interval, Report};

const SECOND: Duration = Duration::from_secs(1);

/// One second of the run, merged over all workers.
#[derive(Debug)]
pub struct RunSecond {
    /// Its start, in whole seconds from the measurement start.
    pub second: u64,
    /// One second, except the run's last, which ends with the run.
    pub length: Duration,
    pub interval: Interval,
}

impl RunSecond {
    /// Completed requests per second of this interval's own length.
    pub fn per_second(&self) -> f64 {
        let secs = self.length.as_secs_f64();
        if secs > 0.0 {
            self.interval.completed as f64 / secs
        } else {
            0.0
        }
    }
}

/// The merge of one step's workers.
#[derive(Debug)]
pub(crate) struct Merge {
    /// Per worker: how many seconds it has sent (it sends 0, 1, 2, … in order).
    sent: Vec<u64>,
    /// Per worker: when it ended, once it has.
    ended: Vec<Option<Duration>>,
    /// The next second to go out.
    next: u64,
    /// Seconds `next`, `next + 1`, …: what the workers that sent them have sent so far.
    pending: VecDeque<Option<Box<Interval>>>,
}

impl Merge {
    pub(crate) fn new(workers: usize) -> Merge {
        Merge {
            sent: vec![0; workers],
            ended: vec![None; workers],
            next: 0,
            pending: VecDeque::new(),
        }
    }

    /// Takes one worker's report; appends to `out` the run's seconds now complete, in order.
    pub(crate) fn add(&mut self, report: Report, out: &mut Vec<RunSecond>) {
        match report {
            Report::Second { worker, second, interval } => {
                if self.take(worker, second, interval) {
                    self.sent[worker] = second + 1;
                }
            }
            Report::Ended { worker, second, interval, at } => {
                if self.take(worker, second, interval) {
                    self.ended[worker] = Some(at);
                }
            }
        }
        self.emit(out);
    }

    /// True when every worker has ended and every second is out.
    pub(crate) fn is_done(&self) -> bool {
        self.ended.iter().all(Option::is_some) && self.pending.is_empty()
    }

    fn emit(&mut self, out: &mut Vec<RunSecond>) {
        loop {
            let start = SECOND * u32::try_from(self.next).unwrap_or(u32::MAX);
            let length = match self.run_end() {
                // Every worker has ended: the seconds left are those before the run's end
                // (the last one partial), and any that holds outcomes.
                Some(end) => {
                    if start >= end && !self.pending.iter().flatten().any(|i| i.has_outcomes()) {
                        // Past the end: nothing but empty seconds of no length, if anything
                        // (a worker that ended exactly on a boundary).
                        self.pending.clear();
                        return;
                    }
                    end.saturating_sub(start).min(SECOND)
                }
                // A worker still running has sent this second only once its clock passed
                // the second's end: the second is whole.
                None => {
                    let complete = self
                        .sent
                        .iter()
                        .zip(&self.ended)
                        .all(|(&sent, ended)| ended.is_some() || sent > self.next);
                    if !complete {
                        return;
                    }
                    SECOND
                }
            };
            let interval =
                self.pending.pop_front().flatten().map_or_else(Interval::default, |b| *b);
            out.push(RunSecond { second: self.next, length, interval });
            self.next += 1;
        }
    }

    /// Adds one worker's second to the run's. A worker sends each second once, in order,
    /// and nothing after its end; a report that breaks this (a bug in herd-record's seconds.rs) is
    /// dropped rather than merged into a second that is already out.
    fn take(&mut self, worker: usize, second: u64, interval: Box<Interval>) -> bool {
        let fresh = self.ended.get(worker).is_some_and(Option::is_none)
            && self.sent.get(worker).is_some_and(|&n| second >= n)
            && second >= self.next;
        let Some(i) = fresh.then(|| usize::try_from(second - self.next).ok()).flatten() else {
            return false;
        };
        if self.pending.len() <= i {
            self.pending.resize_with(i + 1, || None);
        }
        match &mut self.pending[i] {
            Some(sum) => sum.merge(&interval),
            slot @ None => *slot = Some(interval),
        }
        true
    }

    /// The run's end (the last worker's), once every worker has ended.
    fn run_end(&self) -> Option<Duration> {
        self.ended.iter().try_fold(Duration::ZERO, |end, e| e.map(|at| end.max(at)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(worker: usize, second: u64, completed: u64) -> Report {
        let mut interval = Interval::default();
        for _ in 0..completed {
            interval.completed += 1;
            interval.latency.record_micros(100 * (worker as u64 + 1));
        }
        Report::Second { worker, second, interval: Box::new(interval) }
    }

    fn ended(worker: usize, completed: u64, ms: u64) -> Report {
        let Report::Second { second, interval, .. } = second(worker, ms / 1000, completed) else {
            unreachable!()
        };
        Report::Ended { worker, second, interval, at: Duration::from_millis(ms) }
    }

    /// Feeds `reports`; returns (second, length in ms, completed, max µs) of what came out
    /// after each report.
    fn check(workers: usize, reports: Vec<Report>) -> Vec<Vec<(u64, u128, u64, u64)>> {
        let mut m = Merge::new(workers);
        let mut all = Vec::new();
        for r in reports {
            let mut out = Vec::new();
            m.add(r, &mut out);
            all.push(
                out.iter()
                    .map(|s| {
                        let i = &s.interval;
                        (s.second, s.length.as_millis(), i.completed, i.latency.max_micros())
                    })
                    .collect(),
            );
        }
        assert!(m.is_done(), "{m:?}");
        all
    }

    #[test]
    fn a_second_goes_out_when_every_worker_has_sent_it() {
        let out = check(
            2,
            vec![
                second(0, 0, 3),
                second(1, 0, 4),
                second(1, 1, 1),
                second(0, 1, 2),
                ended(0, 1, 2_500),
                ended(1, 2, 2_400),
            ],
        );
        assert_eq!(
            out,
            [
                vec![],
                vec![(0, 1000, 7, 200)],
                vec![],
                vec![(1, 1000, 3, 200)],
                vec![],
                // The last second ends with the last worker.
                vec![(2, 500, 3, 200)],
            ]
        );
    }

    #[test]
    fn an_ended_worker_holds_nothing_back_and_empty_seconds_go_out() {
        let out = check(
            2,
            vec![
                ended(0, 1, 400),
                second(1, 0, 0),
                second(1, 1, 0),
                second(1, 2, 5),
                // It ends exactly at 3 s: no second of no length after it.
                ended(1, 0, 3_000),
            ],
        );
        assert_eq!(
            out,
            [
                vec![],
                vec![(0, 1000, 1, 100)],
                vec![(1, 1000, 0, 0)],
                vec![(2, 1000, 5, 200)],
                vec![],
            ],
        );
    }

    #[test]
    fn pending_seconds_stay_few_while_workers_keep_pace() {
        let mut m = Merge::new(3);
        let mut out = Vec::new();
        for s in 0..1_000 {
            for w in 0..3 {
                m.add(second(w, s, 1), &mut out);
                assert!(m.pending.len() <= 1, "second {s}: {} held", m.pending.len());
            }
        }
        assert_eq!(out.len(), 1_000);
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, s)| s.second == i as u64 && s.interval.completed == 3));
    }

    #[test]
    fn out_of_order_reports_are_dropped_not_merged() {
        let mut m = Merge::new(2);
        let mut out = Vec::new();
        m.add(second(0, 0, 1), &mut out);
        m.add(second(0, 0, 1), &mut out);
        m.add(second(1, 0, 1), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].interval.completed, 2, "the repeated second was not counted");
        m.add(second(1, 0, 1), &mut out);
        m.add(ended(1, 0, 1_500), &mut out);
        m.add(second(1, 1, 7), &mut out);
        m.add(ended(0, 0, 1_200), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].interval.completed, 0, "nothing counted after an end or twice");
        assert!(m.is_done());
    }
}
