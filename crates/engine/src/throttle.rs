//! The receive-rate cap of one connection ([`crate::RunSpec::receive_rate`]): a token bucket
//! that says how many bytes the connection may read now, and when it may read again.
//!
//! The bucket holds 20 ms of the rate, and never less than a segment, so that a slow link
//! costs a wake-up per segment, not per byte. It does not read or set timers itself: the
//! connection asks before each read and the worker arms the timer it is told.

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

/// A paced connection reads at least this much at a time when it can.
const PACED_CHUNK: f64 = 1460.0;

#[derive(Debug, Clone)]
pub(crate) struct Throttle {
    /// Bytes per second.
    rate: f64,
    /// Bytes the connection may read now, as of `last`.
    tokens: f64,
    last: Instant,
}

impl Throttle {
    /// A connection opened at `now`, with a full bucket.
    pub(crate) fn new(rate: NonZeroU64, now: Instant) -> Throttle {
        let rate = rate.get() as f64;
        Throttle { rate, tokens: burst(rate), last: now }
    }

    /// How many bytes may be read at `now`: `Ok(n)` with n ≥ one chunk, or `Err(at)` when
    /// nothing may be read before `at`.
    pub(crate) fn allowance(&mut self, now: Instant) -> Result<usize, Instant> {
        let burst = burst(self.rate);
        let earned = self.rate * now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + earned).min(burst);
        self.last = now;
        let chunk = burst.min(PACED_CHUNK);
        if self.tokens >= chunk {
            return Ok(self.tokens as usize);
        }
        Err(now + Duration::from_secs_f64((chunk - self.tokens) / self.rate))
    }

    /// `n` bytes were read.
    pub(crate) fn spend(&mut self, n: usize) {
        self.tokens -= n as f64;
    }

    /// The receive buffer that makes the TCP window, and so the server's sending, follow the
    /// cap as a slow link would: about 100 ms of the rate. A paced reader with a large one
    /// would let the server hand over a whole response at once.
    pub(crate) fn receive_buffer(rate: NonZeroU64) -> usize {
        (rate.get() / 10).clamp(4096, 256 * 1024) as usize
    }
}

/// The bucket size: 20 ms of the rate, at least a full segment.
fn burst(rate: f64) -> f64 {
    (rate * 0.02).max(PACED_CHUNK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_then_a_wait_for_one_chunk() {
        let t0 = Instant::now();
        // 100 kB/s: a 2,000-byte bucket, 1,460-byte chunks.
        let mut t = Throttle::new(NonZeroU64::new(100_000).unwrap(), t0);
        assert_eq!(t.allowance(t0), Ok(2000));
        t.spend(2000);
        // Empty: the next chunk is earned in 14.6 ms.
        let at = t.allowance(t0).unwrap_err();
        let wait = (at - t0).as_secs_f64() * 1e3;
        assert!((14.59..=14.61).contains(&wait), "{wait} ms");
        let later = at + Duration::from_micros(10);
        assert_eq!(t.allowance(later).map(|n| n >= 1460), Ok(true));
        // Never more than the bucket, however long the pause.
        assert_eq!(t.allowance(t0 + Duration::from_secs(60)), Ok(2000));
    }

    #[test]
    fn over_a_second_the_reads_follow_the_rate() {
        let t0 = Instant::now();
        let mut t = Throttle::new(NonZeroU64::new(50_000).unwrap(), t0);
        let (mut now, mut read) = (t0, 0usize);
        while now < t0 + Duration::from_secs(1) {
            match t.allowance(now) {
                Ok(n) => {
                    t.spend(n);
                    read += n;
                }
                Err(at) => now = at,
            }
        }
        // 50 kB in the second, plus the first bucket (1,460 bytes).
        assert!((50_000..=51_600).contains(&read), "{read} bytes");
    }
}
