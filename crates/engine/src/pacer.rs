//! The open-loop clock of one worker (`Schedule::Rate`): when each of its requests is due, and
//! a timer that wakes the event loop at that moment with nanosecond precision. mio's poll
//! timeout is rounded up to whole milliseconds, which would send requests in bursts up to a
//! millisecond late at any rate above 1000/s; a `timerfd` in the same epoll set does not.
//!
//! Uniform arrivals: request k of a worker is due at `first + k × interval`, computed from k
//! rather than by adding intervals, so the schedule never drifts. Poisson arrivals: each gap is
//! drawn from the exponential distribution with mean `interval`, from a seeded generator, so a
//! schedule can be replayed. A request that could not be sent when due
//! (every connection busy) keeps its due time: latency is measured from it (the intended send
//! time), which is what makes the figures free of coordinated omission.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::rng::Rng;
use mio::Token;
use rustix::time::{
    timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags,
    Timespec,
};

/// The token of the pacer's timer in its worker's event loop (open loop only): just below
/// the waker's (control.rs's `WAKER`), above every connection's `Token(i)`.
pub(crate) const TIMER: Token = Token(usize::MAX - 1);

pub(crate) struct Pacer {
    first: Instant,
    interval_ns: f64,
    /// Index of the next request to send.
    next_k: u64,
    /// Poisson arrivals: the generator, and the next due time in ns after `first`.
    poisson: Option<(Rng, f64)>,
    timer: OwnedFd,
    /// The due time the timer is set for.
    armed: Option<Instant>,
}

impl Pacer {
    /// A worker sending `rate` requests per second, the first at `first`; with a seed, as a
    /// Poisson process.
    pub(crate) fn new(rate: f64, first: Instant, poisson_seed: Option<u64>) -> io::Result<Pacer> {
        let timer = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        let interval_ns = 1e9 / rate;
        let poisson = poisson_seed.map(|seed| {
            let mut rng = Rng::new(seed);
            let gap = rng.exponential(interval_ns);
            (rng, gap)
        });
        Ok(Pacer { first, interval_ns, next_k: 0, poisson, timer, armed: None })
    }

    /// When the next request is due.
    pub(crate) fn next_due(&self) -> Instant {
        let offset_ns = match self.poisson {
            Some((_, due_ns)) => due_ns,
            None => self.next_k as f64 * self.interval_ns,
        };
        // Saturates far beyond any run's length (f64 → u64 casts saturate).
        self.first + Duration::from_nanos(offset_ns as u64)
    }

    /// The next request has been sent (or given up): move to the one after.
    pub(crate) fn advance(&mut self) {
        self.next_k += 1;
        if let Some((rng, due_ns)) = &mut self.poisson {
            *due_ns += rng.exponential(self.interval_ns);
        }
    }

    /// Sets the timer to fire when the next request is due, unless it already is.
    pub(crate) fn arm(&mut self, now: Instant) -> io::Result<()> {
        let due = self.next_due();
        if self.armed == Some(due) {
            return Ok(());
        }
        // A zero it_value would disarm the timer: at least 1 ns.
        let wait = due.saturating_duration_since(now).max(Duration::from_nanos(1));
        let spec = Itimerspec {
            it_interval: Timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: Timespec {
                tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(wait.subsec_nanos()),
            },
        };
        timerfd_settime(&self.timer, TimerfdTimerFlags::empty(), &spec)?;
        self.armed = Some(due);
        Ok(())
    }

    /// The timer fired: consume its count so the next expiry raises a new edge.
    pub(crate) fn fired(&mut self) {
        let mut count = [0u8; 8];
        // EAGAIN (a spurious wake-up) is fine: there was nothing to consume.
        let _ = rustix::io::read(&self.timer, &mut count);
        self.armed = None;
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.timer.as_fd().as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_do_not_drift() {
        let t0 = Instant::now();
        let mut p = Pacer::new(3.0, t0, None).unwrap();
        for _ in 0..3_000_000 {
            p.advance();
        }
        assert_eq!(p.next_due() - t0, Duration::from_secs(1_000_000));
    }

    #[test]
    fn the_timer_fires_when_due() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000.0, t0 + Duration::from_millis(5), None).unwrap();
        p.arm(Instant::now()).unwrap();
        let mut fds = [rustix::event::PollFd::new(&p.timer, rustix::event::PollFlags::IN)];
        let timeout = rustix::time::Timespec { tv_sec: 1, tv_nsec: 0 };
        // The timer fired (poll did not just time out), and not before it was due.
        assert_eq!(rustix::event::poll(&mut fds, Some(&timeout)).unwrap(), 1);
        assert!(fds[0].revents().contains(rustix::event::PollFlags::IN));
        assert!(Instant::now() >= t0 + Duration::from_millis(5));
        p.fired();
    }

    #[test]
    fn poisson_gaps_have_the_right_mean_and_spread() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000.0, t0, Some(42)).unwrap();
        let n = 200_000;
        let mut gaps = Vec::with_capacity(n);
        let mut last = p.next_due();
        for _ in 0..n {
            p.advance();
            let due = p.next_due();
            gaps.push((due - last).as_secs_f64() * 1e3);
            last = due;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        // Exponential with mean 1 ms: standard deviation 1 ms too.
        assert!((mean - 1.0).abs() < 0.01, "mean {mean} ms");
        assert!((var.sqrt() - 1.0).abs() < 0.02, "sd {} ms", var.sqrt());
        // Same seed, same schedule.
        let mut q = Pacer::new(1000.0, t0, Some(42)).unwrap();
        q.advance();
        let mut r = Pacer::new(1000.0, t0, Some(42)).unwrap();
        r.advance();
        assert_eq!(q.next_due(), r.next_due());
    }
}
