//! The open-loop clock of one worker (`Schedule::Rate`): when each of its requests is due, and
//! a timer that wakes the event loop at that moment with nanosecond precision. mio's poll
//! timeout is rounded up to whole milliseconds, which would send requests in bursts up to a
//! millisecond late at any rate above 1000/s; a `timerfd` in the same epoll set does not.
//!
//! Request k of a worker is due at `first + k × interval`, computed from k rather than by
//! adding intervals, so the schedule never drifts. A request that could not be sent when due
//! (every connection busy) keeps its due time: latency is measured from it (the intended send
//! time), which is what makes the figures free of coordinated omission.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use rustix::time::{
    timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags,
    Timespec,
};

pub(crate) struct Pacer {
    first: Instant,
    interval_ns: f64,
    /// Index of the next request to send.
    next_k: u64,
    timer: OwnedFd,
    /// The due time the timer is set for.
    armed: Option<Instant>,
}

impl Pacer {
    /// A worker sending `rate` requests per second, the first at `first`.
    pub(crate) fn new(rate: f64, first: Instant) -> io::Result<Pacer> {
        let timer = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        Ok(Pacer { first, interval_ns: 1e9 / rate, next_k: 0, timer, armed: None })
    }

    /// When the next request is due.
    pub(crate) fn next_due(&self) -> Instant {
        // Saturates far beyond any run's length (f64 → u64 casts saturate).
        self.first + Duration::from_nanos((self.next_k as f64 * self.interval_ns) as u64)
    }

    /// The next request has been sent (or given up): move to the one after.
    pub(crate) fn advance(&mut self) {
        self.next_k += 1;
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
        let mut p = Pacer::new(3.0, t0).unwrap();
        for _ in 0..3_000_000 {
            p.advance();
        }
        assert_eq!(p.next_due() - t0, Duration::from_secs(1_000_000));
    }

    #[test]
    fn the_timer_fires_when_due() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000.0, t0 + Duration::from_millis(5)).unwrap();
        p.arm(Instant::now()).unwrap();
        let mut fds = [rustix::event::PollFd::new(&p.timer, rustix::event::PollFlags::IN)];
        let timeout = rustix::time::Timespec { tv_sec: 1, tv_nsec: 0 };
        rustix::event::poll(&mut fds, Some(&timeout)).unwrap();
        assert!(Instant::now() >= t0 + Duration::from_millis(5));
        p.fired();
    }
}
