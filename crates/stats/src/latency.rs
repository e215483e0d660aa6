//! A latency histogram in microseconds: HdrHistogram, 1 µs to 1 hour, 3 significant digits.
//!
//! Percentiles are read from merged histograms, never averaged across workers.

use std::ops::AddAssign;
use std::time::Duration;

use hdrhistogram::Histogram;

/// The highest value a histogram tracks; longer samples are clamped to it (and counted).
pub(crate) const MAX_MICROS: u64 = 3_600_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    /// Samples above [`MAX_MICROS`], recorded as the maximum.
    clamped: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // The bounds are constants known to be valid, so construction cannot fail; fall back
        // to an auto-resizing histogram rather than panicking if hdrhistogram ever disagrees.
        let hist = Histogram::new_with_bounds(1, MAX_MICROS, 3)
            .or_else(|_| Histogram::new(3))
            .unwrap_or_else(|_| unreachable_histogram());
        LatencyHistogram { hist, clamped: 0 }
    }

    /// A histogram with the same resolution and clamp as [`LatencyHistogram::new`] (so the
    /// two agree on every value, and merge), whose counts start small and grow only as far
    /// as the largest value recorded. For the many short-lived histograms of per-second
    /// intervals: a fixed one-hour range is 184 KiB of counts each, all of it touched when
    /// the allocator hands back reused memory, where a few milliseconds' range is 32 KiB.
    pub fn growing() -> Self {
        // Same lowest value (1) and significant digits as `new`: the same buckets.
        let mut hist = Histogram::new_with_bounds(1, 2, 3)
            .or_else(|_| Histogram::new(3))
            .unwrap_or_else(|_| unreachable_histogram());
        hist.auto(true);
        LatencyHistogram { hist, clamped: 0 }
    }

    /// An empty histogram like this one: the same range, and growing if this one grows. The
    /// next interval of a stream starts at the size the last one grew to, rather than
    /// growing (reallocating) through the same steps again.
    pub fn empty_like(&self) -> Self {
        let mut hist = Histogram::new_with_bounds(1, self.hist.high().max(2), 3)
            .or_else(|_| Histogram::new(3))
            .unwrap_or_else(|_| unreachable_histogram());
        hist.auto(self.hist.is_auto_resize());
        LatencyHistogram { hist, clamped: 0 }
    }

    pub fn record(&mut self, d: Duration) {
        self.record_micros(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    }

    /// `n` samples of `us` microseconds at once: the same histogram as `n` records.
    pub fn record_n_micros(&mut self, us: u64, n: u64) {
        if n == 0 {
            return;
        }
        let v = if us > MAX_MICROS {
            self.clamped += n;
            MAX_MICROS
        } else {
            us
        };
        // Cannot fail: v is within the histogram's bounds.
        let _ = self.hist.record_n(v, n);
    }

    pub fn record_micros(&mut self, us: u64) {
        let v = if us > MAX_MICROS {
            self.clamped += 1;
            MAX_MICROS
        } else {
            us
        };
        // Cannot fail: v is within the histogram's bounds.
        let _ = self.hist.record(v);
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The value at quantile `q` (0.0..=1.0) in microseconds; 0 when empty.
    pub fn quantile_micros(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            return 0;
        }
        self.hist.value_at_quantile(q)
    }

    pub fn min_micros(&self) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.min()
        }
    }

    pub fn max_micros(&self) -> u64 {
        self.hist.max()
    }

    pub fn mean_micros(&self) -> f64 {
        self.hist.mean()
    }

    pub fn stdev_micros(&self) -> f64 {
        self.hist.stdev()
    }

    /// Samples that exceeded one hour and were recorded as one hour.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// A histogram received from another process (transfer.rs): refused unless it is of
    /// herd's configuration, so that adding it is exact. Fixed-range like
    /// [`LatencyHistogram::new`] when it came as one, growing otherwise.
    pub(crate) fn from_received(
        h: &Histogram<u64>,
        clamped: u64,
    ) -> Result<LatencyHistogram, crate::transfer::OtherConfiguration> {
        if h.low() != 1 || h.sigfig() != 3 {
            return Err(crate::transfer::OtherConfiguration {
                low: h.low(),
                high: h.high(),
                sigfig: h.sigfig(),
            });
        }
        let mut out = if h.high() >= MAX_MICROS {
            LatencyHistogram::new()
        } else {
            LatencyHistogram::growing()
        };
        // Same lowest value and digits: an exact addition, refused by the fixed range when
        // a value lies beyond an hour (no herd histogram holds one).
        out.hist.add(h).map_err(|_| crate::transfer::OtherConfiguration {
            low: h.low(),
            high: h.high(),
            sigfig: h.sigfig(),
        })?;
        out.clamped = clamped;
        Ok(out)
    }

    /// The underlying histogram, for serialization.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }
}

impl AddAssign<&LatencyHistogram> for LatencyHistogram {
    fn add_assign(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.hist.add(&other.hist);
        self.clamped += other.clamped;
    }
}

#[cold]
fn unreachable_histogram() -> Histogram<u64> {
    // Histogram::new(1) with auto-resize has no failure mode for sigfig 1..=5.
    let mut h = Histogram::new(1).unwrap_or_else(|_| std::process::abort());
    h.auto(true);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_reads_percentiles() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000 {
            h.record_micros(us);
        }
        assert_eq!(h.len(), 1000);
        assert_eq!(h.min_micros(), 1);
        assert_eq!(h.max_micros(), 1000);
        assert_eq!(h.quantile_micros(0.5), 500);
        assert_eq!(h.quantile_micros(0.99), 990);
    }

    #[test]
    fn merge_is_exact() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for us in 0..500 {
            a.record_micros(us);
            b.record_micros(us + 500);
        }
        a += &b;
        assert_eq!(a.len(), 1000);
        assert_eq!(a.quantile_micros(0.5), 499);
    }

    #[test]
    fn clamps_beyond_an_hour() {
        let mut h = LatencyHistogram::new();
        h.record(Duration::from_secs(7200));
        assert_eq!(h.clamped(), 1);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn growing_agrees_with_fixed() {
        let (mut fixed, mut growing) = (LatencyHistogram::new(), LatencyHistogram::growing());
        for us in [1, 999, 2_047, 2_049, 123_456, 9_876_543, 4_000_000_000] {
            fixed.record_micros(us);
            growing.record_micros(us);
            assert_eq!(growing.max_micros(), fixed.max_micros(), "{us}");
            assert_eq!(growing.quantile_micros(0.5), fixed.quantile_micros(0.5), "{us}");
        }
        assert_eq!(growing.clamped(), 1);
        assert!(LatencyHistogram::growing().histogram().distinct_values() <= 2048);
        fixed += &growing;
        growing += &fixed;
        assert_eq!((fixed.len(), growing.len()), (14, 21));
        assert_eq!(growing.max_micros(), fixed.max_micros());
        let like = growing.empty_like();
        assert!(like.is_empty() && like.histogram().is_auto_resize());
        assert_eq!(like.histogram().distinct_values(), growing.histogram().distinct_values());
        assert!(!fixed.empty_like().histogram().is_auto_resize());
    }

    #[test]
    fn recording_n_at_once_is_recording_n_times() {
        let (mut once, mut each) = (LatencyHistogram::new(), LatencyHistogram::new());
        once.record_n_micros(0, 3);
        once.record_n_micros(7_200_000_000, 2);
        once.record_n_micros(5, 0);
        for us in [0, 0, 0, 7_200_000_000, 7_200_000_000] {
            each.record_micros(us);
        }
        assert_eq!(once, each);
        assert_eq!(once.clamped(), 2);
    }

    #[test]
    fn empty_reads_zero() {
        let h = LatencyHistogram::new();
        assert_eq!(h.quantile_micros(0.99), 0);
        assert_eq!(h.min_micros(), 0);
    }
}
