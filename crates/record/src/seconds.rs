//! One worker's run cut into whole seconds, for the outputs that show a run over time
//! (`--series`, `--hlog`, the live line). A worker keeps only the second it is in: each
//! finished second, empty or not, goes at once to the writer thread (herd-run's outputs.rs), so memory
//! does not grow with the run's length. A recorder has a [`Seconds`] only when one of those
//! outputs is on; otherwise there is no channel and no per-request cost.
//!
//! Seconds count from the measurement start (the end of the warm-up), the origin of every
//! figure in the summary; warm-up outcomes never land in a second. This file cuts and sends;
//! merging the workers' seconds is herd-run's merge.rs's job.

use std::time::{Duration, Instant};

use herd_stats::{FailureKind, Failures, LatencyHistogram};

/// Where a worker's finished seconds go, in order: `herd run`'s writer thread.
pub type SecondsOut = Box<dyn FnMut(Report) + Send>;

const SECOND: Duration = Duration::from_secs(1);

/// What happened in one second: of one worker, or merged over all of them.
#[derive(Debug)]
pub struct Interval {
    /// Requests completed in this second.
    pub completed: u64,
    pub failed: u64,
    /// The failed requests by kind (`failed` is their total): what a live view and the
    /// metrics show as errors by kind.
    pub failures: Failures,
    /// Every byte read by requests that ended in this second, failures included (as in the
    /// summary's `bytes.read`).
    pub bytes_read: u64,
    /// end − intended start of the completed requests: the latency corrected for coordinated
    /// omission, as the summary's `total`.
    pub latency: LatencyHistogram,
    /// Completed requests sent [`LATE_SEND`] or more after they were due while a connection
    /// was free: the client's own lag (the health verdict's send lag), second by second.
    pub late_sends: u64,
    /// Connections open (connecting or connected) at the second's end, as the workers last
    /// counted them (each checks every ~100 ms): a gauge, summed over workers and agents.
    pub open_connections: u64,
}

/// A send this late behind its schedule, with a connection free, is the client's delay in
/// the request's latency: the health verdict's send lag finds a run suspect from 1 ms at p99.
pub const LATE_SEND: Duration = Duration::from_millis(1);

impl Default for Interval {
    fn default() -> Self {
        Interval {
            completed: 0,
            failed: 0,
            failures: Failures::default(),
            bytes_read: 0,
            // A new histogram every second per worker: one sized for the latencies seen,
            // not for an hour (LatencyHistogram::growing), keeps that cheap in memory.
            latency: LatencyHistogram::growing(),
            late_sends: 0,
            open_connections: 0,
        }
    }
}

impl Interval {
    /// An empty interval whose histogram starts at the size this one's grew to.
    fn empty_like(&self) -> Interval {
        Interval {
            completed: 0,
            failed: 0,
            failures: Failures::default(),
            bytes_read: 0,
            latency: self.latency.empty_like(),
            late_sends: 0,
            open_connections: 0,
        }
    }

    pub fn has_outcomes(&self) -> bool {
        self.completed + self.failed > 0
    }

    pub fn merge(&mut self, o: &Interval) {
        self.completed += o.completed;
        self.failed += o.failed;
        self.failures += &o.failures;
        self.bytes_read += o.bytes_read;
        self.latency += &o.latency;
        self.late_sends += o.late_sends;
        self.open_connections += o.open_connections;
    }
}

/// What a worker tells the writer thread, in order.
#[derive(Debug)]
pub enum Report {
    /// Worker `worker`'s clock has passed the end of second `second`. A worker sends its
    /// seconds in order, each once, from 0, with no gaps (a second without outcomes is sent
    /// empty).
    Second { worker: usize, second: u64, interval: Box<Interval> },
    /// Worker `worker` has ended, `at` after the measurement start (never past the step's
    /// planned length), in second `second`, whose outcomes so far are `interval`. It sends
    /// nothing more in this step. Kept apart from `Second` because that second is not
    /// necessarily over: it is the run's last if no other worker goes on past it.
    Ended { worker: usize, second: u64, interval: Box<Interval>, at: Duration },
}

/// A recorder's clock when an output asks for the run's seconds (`--series`, the live view),
/// none otherwise: then a recorder pays one test a request for it. What herd run's and herd
/// ab's recorders share.
#[derive(Debug, Default)]
pub struct MaybeSeconds(Option<Seconds>);

impl MaybeSeconds {
    pub fn set(&mut self, seconds: Seconds) {
        self.0 = Some(seconds);
    }

    /// The clock, if there is one.
    #[inline]
    pub fn get(&mut self) -> Option<&mut Seconds> {
        self.0.as_mut()
    }

    /// The run ended at `end`: sends the last second and lets go of the clock.
    pub fn finish(&mut self, end: Instant) {
        if let Some(mut s) = self.0.take() {
            s.finish(end);
        }
    }

    pub fn tick(&mut self, now: Instant) {
        if let Some(s) = &mut self.0 {
            s.tick(now);
        }
    }

    pub fn open_connections(&mut self, open: usize) {
        if let Some(s) = &mut self.0 {
            s.open_connections(open);
        }
    }
}

/// One worker's clock: the second it is in, and what happened in it so far.
pub struct Seconds {
    worker: usize,
    origin: Instant,
    /// The step's planned length from `origin` (`-d`, `--step-time`), when it has one.
    span: Option<Duration>,
    /// The last second that can hold outcomes: the one `span` ends in. Requests that end
    /// just past the deadline (finished in the engine's last loop turn) belong to the run
    /// (the summary counts them) and are put here, rather than in a sliver of a second
    /// whose per-second rate would be meaningless.
    last: Option<u64>,
    second: u64,
    /// When `second` ends: one comparison per outcome and tick decides whether to roll.
    boundary: Instant,
    current: Interval,
    /// Outcomes still to come from this worker's share of `-n` (warm-up included). The
    /// engine does not tell a recorder that its worker's loop has ended, but a worker whose
    /// share is done has ended: saying so at once lets the other workers' seconds out
    /// instead of holding them until the whole run is over.
    left: Option<u64>,
    ended: bool,
    /// The worker's open connections as last told ([`Seconds::open_connections`]).
    open: u64,
    out: SecondsOut,
}

impl std::fmt::Debug for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seconds")
            .field("worker", &self.worker)
            .field("second", &self.second)
            .field("current", &self.current)
            .field("left", &self.left)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Seconds {
    /// `quota`: this worker's share of `-n` (`RunSpec::share`), when the run has one.
    pub fn new(
        worker: usize,
        origin: Instant,
        span: Option<Duration>,
        quota: Option<u64>,
        out: SecondsOut,
    ) -> Seconds {
        let last = span.map(|d| {
            // The second that `d` ends in: 2.0 s ends in second 1, 2.5 s in second 2.
            if d.subsec_nanos() > 0 {
                d.as_secs()
            } else {
                d.as_secs().saturating_sub(1)
            }
        });
        let mut s = Seconds {
            worker,
            origin,
            span,
            last,
            second: 0,
            boundary: origin + SECOND,
            current: Interval::default(),
            left: quota,
            ended: false,
            open: 0,
            out,
        };
        if quota == Some(0) {
            // A worker with no request to send (-n below the worker count) is done already.
            s.end(origin);
        }
        s
    }

    /// A request completed at `end` after `latency` (from its intended start); `late`: it was
    /// sent [`LATE_SEND`] or more after it was due, with a connection free.
    pub fn completed(&mut self, end: Instant, latency: Duration, bytes_read: u64, late: bool) {
        if self.ended {
            return;
        }
        self.reach(end);
        self.current.completed += 1;
        self.current.latency.record(latency);
        self.current.late_sends += u64::from(late);
        self.current.bytes_read += bytes_read;
        self.count_down(end);
    }

    pub fn failed(&mut self, end: Instant, kind: FailureKind, bytes_read: u64) {
        if self.ended {
            return;
        }
        self.reach(end);
        self.current.failed += 1;
        self.current.failures.add(kind);
        self.current.bytes_read += bytes_read;
        self.count_down(end);
    }

    /// The worker has `open` connections open now: each second sent carries the last count.
    pub fn open_connections(&mut self, open: usize) {
        self.open = open as u64;
    }

    /// A warm-up outcome: in no second, but part of the worker's share.
    pub fn warmup(&mut self, end: Instant) {
        if !self.ended {
            self.count_down(end);
        }
    }

    /// The worker's loop is turning at `now`: close the seconds that have ended, so that a
    /// second without outcomes is reported as such, when it ends.
    pub fn tick(&mut self, now: Instant) {
        if !self.ended {
            self.reach(now);
        }
    }

    /// The run is over, at `end` (the engine's `Run::ended`): send what is left.
    pub fn finish(&mut self, end: Instant) {
        if !self.ended {
            self.end(end);
        }
    }

    /// Moves on to the second `t` is in. An outcome a little behind the clock (a response
    /// that completed before the tick that went past it was noticed) stays in the current
    /// second: seconds go out once, in order.
    fn reach(&mut self, t: Instant) {
        if t >= self.boundary {
            self.roll(t);
        }
    }

    /// Sends every second that ended before `t`, empty ones included.
    fn roll(&mut self, t: Instant) {
        let mut target = t.saturating_duration_since(self.origin).as_secs();
        if let Some(last) = self.last {
            target = target.min(last);
        }
        while self.second < target {
            self.send_current();
            self.second += 1;
        }
        self.boundary = self.origin + SECOND * u32::try_from(self.second + 1).unwrap_or(u32::MAX);
    }

    fn count_down(&mut self, end: Instant) {
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.end(end);
            }
        }
    }

    fn end(&mut self, t: Instant) {
        self.reach(t);
        self.ended = true;
        let mut at = t.saturating_duration_since(self.origin);
        if let Some(span) = self.span {
            at = at.min(span);
        }
        self.current.open_connections = self.open;
        let interval = Box::new(std::mem::take(&mut self.current));
        (self.out)(Report::Ended { worker: self.worker, second: self.second, interval, at });
    }

    fn send_current(&mut self) {
        self.current.open_connections = self.open;
        let next = self.current.empty_like();
        let interval = Box::new(std::mem::replace(&mut self.current, next));
        (self.out)(Report::Second { worker: self.worker, second: self.second, interval });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{self, Receiver};

    /// A channel to read the seconds back from.
    fn test_feed() -> (SecondsOut, Receiver<Report>) {
        let (tx, rx) = mpsc::channel();
        (
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
            rx,
        )
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// (second, completed, failed) of every Second report, and the Ended time.
    fn collect(rx: &Receiver<Report>) -> (Vec<(u64, u64, u64)>, Option<Duration>) {
        let (mut seconds, mut ended) = (Vec::new(), None);
        while let Ok(r) = rx.try_recv() {
            match r {
                Report::Second { second, interval, .. } => {
                    assert!(ended.is_none(), "a second after the end");
                    seconds.push((second, interval.completed, interval.failed));
                }
                Report::Ended { second, interval, at, .. } => {
                    assert!(ended.is_none(), "ended twice");
                    seconds.push((second, interval.completed, interval.failed));
                    ended = Some(at);
                }
            }
        }
        (seconds, ended)
    }

    #[test]
    fn ticks_close_empty_seconds_and_outcomes_land_in_theirs() {
        let (feed, rx) = test_feed();
        let t0 = Instant::now();
        let mut s = Seconds::new(0, t0, None, None, feed);
        s.completed(t0 + ms(100), ms(5), 10, false);
        s.failed(t0 + ms(900), FailureKind::Timeout, 3);
        s.tick(t0 + ms(999));
        assert!(collect(&rx).0.is_empty(), "nothing before the second ends");
        // A stall: nothing for three seconds, then the clock moves on.
        s.tick(t0 + ms(3_050));
        assert_eq!(collect(&rx).0, [(0, 1, 1), (1, 0, 0), (2, 0, 0)]);
        s.completed(t0 + ms(3_500), ms(2_000), 10, false);
        s.finish(t0 + ms(3_700));
        assert_eq!(collect(&rx), (vec![(3, 1, 0)], Some(ms(3_700))));
    }

    /// Every interval sent so far, in order, ended or not.
    fn intervals(rx: &Receiver<Report>) -> Vec<Interval> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|r| match r {
                Report::Second { interval, .. } | Report::Ended { interval, .. } => *interval,
            })
            .collect()
    }

    #[test]
    fn late_sends_are_counted_in_their_second() {
        let (feed, rx) = test_feed();
        let t0 = Instant::now();
        let mut s = Seconds::new(0, t0, None, None, feed);
        s.completed(t0 + ms(100), ms(5), 10, true);
        s.completed(t0 + ms(200), ms(5), 10, false);
        s.completed(t0 + ms(1_100), ms(5), 10, true);
        s.finish(t0 + ms(1_500));
        let late: Vec<u64> = intervals(&rx).iter().map(|i| i.late_sends).collect();
        assert_eq!(late, [1, 1]);
        let mut merged = Interval::default();
        merged.merge(&Interval { late_sends: 2, ..Interval::default() });
        assert_eq!(merged.late_sends, 2);
    }

    #[test]
    fn each_second_carries_the_last_count_of_open_connections() {
        let (feed, rx) = test_feed();
        let t0 = Instant::now();
        let mut s = Seconds::new(0, t0, None, None, feed);
        s.open_connections(4);
        s.tick(t0 + ms(500));
        s.open_connections(3);
        s.tick(t0 + ms(1_100));
        s.open_connections(1);
        s.finish(t0 + ms(1_500));
        let open: Vec<u64> = intervals(&rx).iter().map(|i| i.open_connections).collect();
        // Second 0 ended with 3 open (told before the tick that closed it); the last, with 1.
        assert_eq!(open, [3, 1]);
    }

    #[test]
    fn outcomes_past_the_deadline_join_the_last_second() {
        let (feed, rx) = test_feed();
        let t0 = Instant::now();
        let mut s = Seconds::new(0, t0, Some(ms(2_000)), None, feed);
        s.completed(t0 + ms(1_500), ms(1), 1, false);
        s.tick(t0 + ms(2_001));
        s.completed(t0 + ms(2_002), ms(1), 1, false);
        s.finish(t0 + ms(2_003));
        assert_eq!(collect(&rx), (vec![(0, 0, 0), (1, 2, 0)], Some(ms(2_000))));
    }

    #[test]
    fn a_used_up_share_ends_the_worker_at_its_last_outcome() {
        let (feed, rx) = test_feed();
        let t0 = Instant::now();
        // Two requests, the first during the warm-up.
        let mut s = Seconds::new(0, t0, None, Some(2), feed);
        s.warmup(t0 - ms(10));
        s.completed(t0 + ms(1_200), ms(1), 1, false);
        assert_eq!(collect(&rx), (vec![(0, 0, 0), (1, 1, 0)], Some(ms(1_200))));
        s.tick(t0 + ms(5_000));
        s.finish(t0 + ms(5_000));
        assert_eq!(collect(&rx), (vec![], None), "nothing after the end");
        // No share at all: ended from the start.
        let (feed, rx) = test_feed();
        let _s = Seconds::new(1, t0, None, Some(0), feed);
        assert_eq!(collect(&rx), (vec![(0, 0, 0)], Some(Duration::ZERO)));
    }
}
