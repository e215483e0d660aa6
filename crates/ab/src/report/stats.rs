//! ab's "Connection Times (ms)" statistics, computed exactly as `output_results()` does,
//! quirks included (docs/ab-compat.md, "Report: quirks reproduced on purpose"):
//!
//! - means are integer divisions of microsecond sums (`total / done`), truncated;
//! - the standard deviation is the sample one (n-1), taken around that *truncated* mean, summed
//!   in completion order, 0 when there is a single sample;
//! - the median takes element `n/2` for even counts but averages elements `n/2` and `n/2+1` for
//!   odd counts above 1 (the textbook rule, reversed and off by one);
//! - min, mean, median and max are then rounded with `ap_round_ms`, the sd divided by 1000;
//! - percentiles are nearest-rank on the total-time order: `stats[done * p / 100]`.

use std::borrow::Cow;

use std::cmp::Ordering;

use crate::results::Sample;

use super::cfmt::{ap_double_ms, ap_round_ms};

/// One row of the table (Connect, Processing, Waiting or Total), in ab's printed units:
/// rounded milliseconds, except `sd`, which is a double in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Row {
    pub(crate) min: i64,
    pub(crate) mean: i64,
    pub(crate) sd: f64,
    pub(crate) median: i64,
    pub(crate) max: i64,
}

/// The four rows, and the samples in ab's final order (sorted by total time), which the
/// percentile table, `-e` and `-g` read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConnectionTimes<'a> {
    pub(crate) connect: Row,
    pub(crate) processing: Row,
    pub(crate) waiting: Row,
    pub(crate) total: Row,
    pub(crate) by_total: Cow<'a, [Sample]>,
}

/// ab's processing time, `time - ctime` (it includes writing the request and reading the
/// whole response, despite the label).
pub(crate) fn processing_us(s: &Sample) -> i64 {
    s.time_us().wrapping_sub(s.ctime_us())
}

/// The statistics of one column, from the samples in completion order.
fn row(
    samples: &[Sample],
    key: impl Fn(&Sample) -> i64,
    sd_term: impl Fn(&Sample, f64) -> f64,
) -> Row {
    let n = samples.len();
    // ab: `apr_interval_time_t min = AB_MAX, max = 0`, so a column of negative values (which
    // ab's ap_max(0, ...) clamps prevent anyway) would show max 0.
    let (mut min, mut max, mut total) = (i64::MAX, 0i64, 0i64);
    for s in samples {
        let k = key(s);
        min = min.min(k);
        max = max.max(k);
        total = total.wrapping_add(k);
    }
    // `meantot = total / done`: integer division, truncating toward zero like C's.
    let mean = total / n as i64;
    // `sdtot += a * a` with `a = (double)s->time - meantot`, in stats[] order (completion
    // order: the qsorts come later), then `sqrt(sdtot / (done - 1))`, or 0 for one sample.
    let mut sum = 0.0f64;
    for s in samples {
        let a = sd_term(s, mean as f64);
        sum += a * a;
    }
    let sd = if n > 1 { (sum / (n - 1) as f64).sqrt() } else { 0.0 };
    let mut keys: Vec<i64> = samples.iter().map(&key).collect();
    keys.sort_unstable();
    let median = ab_median(&keys);
    Row {
        min: ap_round_ms(min),
        mean: ap_round_ms(mean),
        sd: ap_double_ms(sd),
        median: ap_round_ms(median),
        max: ap_round_ms(max),
    }
}

/// ab's median of sorted, non-empty keys (µs):
///
/// ```c
/// if ((done > 1) && (done % 2))
///     mediantot = (stats[done / 2].time + stats[done / 2 + 1].time) / 2;
/// else
///     mediantot = stats[done / 2].time;
/// ```
///
/// So 3 samples give the mean of the 2nd and 3rd, 4 samples the 3rd, 1 sample the only one.
/// For odd `done > 1`, `done / 2 + 1 <= done - 1`, so ab never reads out of bounds here.
pub(crate) fn ab_median(sorted: &[i64]) -> i64 {
    let n = sorted.len();
    match (sorted.get(n / 2), sorted.get(n / 2 + 1)) {
        (Some(&a), Some(&b)) if n > 1 && n % 2 == 1 => a.wrapping_add(b) / 2,
        (Some(&a), _) => a,
        // Empty: ab never gets here (the block is inside `if (done > 0)`).
        (None, _) => 0,
    }
}

/// Computes the table; None when there is no sample (ab prints no table when `done == 0`).
pub(crate) fn connection_times(samples: &[Sample]) -> Option<ConnectionTimes<'_>> {
    if samples.is_empty() {
        return None;
    }
    let connect = row(samples, |s| s.ctime_us(), |s, mean| s.ctime_us() as f64 - mean);
    // ab: `a = ((double)s->time - (double)s->ctime - meand)`, each term a double, in this order.
    let processing =
        row(samples, processing_us, |s, mean| s.time_us() as f64 - s.ctime_us() as f64 - mean);
    let waiting = row(samples, |s| s.wait_us(), |s, mean| s.wait_us() as f64 - mean);
    let total = row(samples, |s| s.time_us(), |s, mean| s.time_us() as f64 - mean);
    Some(ConnectionTimes { connect, processing, waiting, total, by_total: sort_by_total(samples) })
}

/// ab's last `qsort(stats, ..., comprando)`: by total time. Only the key matters for every
/// value ab prints, except the row order of `-g`, where ab's ties fall in qsort's order; a
/// stable sort makes herd's deterministic (completion order among equal times).
///
/// herd's accounting hands the samples over already in this order, so no copy is made then:
/// a million samples are 32 MB, and `herd ab -n 1000000` must stay under 64 MB.
pub(crate) fn sort_by_total(samples: &[Sample]) -> Cow<'_, [Sample]> {
    if samples.is_sorted_by_key(|s| s.time_us()) {
        return Cow::Borrowed(samples);
    }
    let mut v = samples.to_vec();
    v.sort_by_key(|s| s.time_us());
    Cow::Owned(v)
}

/// The percentiles ab prints, in order; 100 is printed as "(longest request)".
pub(crate) const PERCENTILES: [u64; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// The sample ab reports for percentile `p` (nearest rank, truncating, no interpolation):
/// `stats[(unsigned long)done * p / 100]`, and `stats[done - 1]` for 100. `by_total` must be
/// non-empty; ab prints the table only when `done > 1`.
pub(crate) fn percentile_sample(by_total: &[Sample], p: u64) -> Option<&Sample> {
    let n = by_total.len();
    if p >= 100 {
        by_total.last()
    } else {
        // n * p / 100 < n for p < 100, so this is always in bounds.
        by_total.get((n as u64 * p / 100) as usize)
    }
}

/// Row `i` (0..=100) of the `-e` file: the sample ab reads, by ab's index rule
/// `stats[(unsigned long)(0.5 + (double)done * i / 100.0)]`, with row 0 the first and row 100
/// the last sample.
///
/// Deviation: for `done < 100` ab's index reaches `done` (out of bounds) for the last rows
/// (i >= 100 - 50/done: rows 50..=99 for a single request) and prints whatever lies past its
/// array: zeroed memory ("0.000") when fewer requests completed than were allocated, heap
/// garbage otherwise (ab 2.4.71 printed 0.257 for a 0.490 ms request). herd clamps the index to
/// `done - 1`, the longest request (docs/ab-compat.md).
pub(crate) fn csv_sample(by_total: &[Sample], i: u32) -> Option<&Sample> {
    let n = by_total.len();
    match i {
        0 => by_total.first(),
        100.. => by_total.last(),
        _ => {
            let idx = (0.5 + n as f64 * f64::from(i) / 100.0) as usize;
            by_total.get(idx.min(n.saturating_sub(1)))
        }
    }
}

/// ab's `SANE()` verdict for one row, when `-S` is not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sanity {
    Fine,
    /// `|mean - median| > sd`.
    Warning,
    /// `|mean - median| > 2 * sd`.
    Error,
}

/// ab's `SANE(what, mean, median, sd)`: compares the *rounded* ms mean and median with the sd
/// in ms: `double d = (double)mean - median; if (d < 0) d = -d; if (d > 2 * sd) ERROR; else if
/// (d > sd) WARNING`. So a constant 0.0 sd with mean != median is an ERROR.
pub(crate) fn sanity(r: &Row) -> Sanity {
    let d = (r.mean as f64 - r.median as f64).abs();
    match (d.partial_cmp(&(2.0 * r.sd)), d.partial_cmp(&r.sd)) {
        (Some(Ordering::Greater), _) => Sanity::Error,
        (_, Some(Ordering::Greater)) => Sanity::Warning,
        _ => Sanity::Fine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(ctime: i64, time: i64, wait: i64) -> Sample {
        Sample::new(0, ctime, time, wait)
    }

    #[test]
    fn median_odd_count_averages_n_over_2_and_the_next() {
        // Sorted [10, 20, 30]: textbook median 20; ab averages [1] and [2]: 25.
        assert_eq!(ab_median(&[10, 20, 30]), 25);
        // [1, 2, 3, 4, 100]: ab averages [2] and [3] = (3 + 4) / 2 = 3 (integer division).
        assert_eq!(ab_median(&[1, 2, 3, 4, 100]), 3);
        assert_eq!(ab_median(&[1, 2, 3, 4, 101]), 3);
        assert_eq!(ab_median(&[1, 2, 3, 5, 100]), 4);
    }

    #[test]
    fn median_even_count_takes_n_over_2() {
        // [10, 20, 30, 40]: textbook 25; ab takes [2] = 30.
        assert_eq!(ab_median(&[10, 20, 30, 40]), 30);
        assert_eq!(ab_median(&[10, 20]), 20);
    }

    #[test]
    fn median_single_sample_takes_it() {
        assert_eq!(ab_median(&[7]), 7);
        assert_eq!(ab_median(&[]), 0);
    }

    #[test]
    fn medians_use_each_columns_own_order() {
        // Processing = time - ctime: [900, 100, 500]; sorted [100, 500, 900]; ab: (500+900)/2.
        let v = [s(100, 1000, 5), s(900, 1000, 7), s(500, 1000, 6)];
        let t = connection_times(&v).unwrap();
        assert_eq!(t.processing.median, ap_round_ms(700));
        assert_eq!(t.connect.median, ap_round_ms(700));
        assert_eq!(t.waiting.median, ap_round_ms(6)); // (6 + 7) / 2 = 6
        assert_eq!(t.total.median, 1);
    }

    #[test]
    fn sd_of_one_sample_is_zero_and_mean_is_truncated() {
        let v = [s(1234, 5678, 999)];
        let t = connection_times(&v).unwrap();
        assert_eq!(t.total, Row { min: 6, mean: 6, sd: 0.0, median: 6, max: 6 });
        assert_eq!(t.connect, Row { min: 1, mean: 1, sd: 0.0, median: 1, max: 1 });
        assert_eq!(t.processing.mean, ap_round_ms(5678 - 1234));
        assert_eq!(t.waiting.mean, 1);
    }

    #[test]
    fn sd_is_sample_sd_around_the_truncated_mean() {
        // Totals 0, 1, 1 µs: exact mean 2/3, ab's mean 0 (integer division), so
        // sd = sqrt((0 + 1 + 1) / 2) = 1 µs rather than sqrt(1/3).
        let v = [s(0, 0, 0), s(0, 1, 0), s(0, 1, 0)];
        let t = connection_times(&v).unwrap();
        assert_eq!(t.total.sd, 0.001);
        // 2000 and 4000 µs: mean 3000, sd = sqrt((1e6 + 1e6) / 1) µs.
        let v = [s(0, 2000, 0), s(0, 4000, 0)];
        let t = connection_times(&v).unwrap();
        assert_eq!(t.total.sd, (2.0e6f64).sqrt() / 1000.0);
        assert_eq!(t.total.mean, 3);
        assert_eq!(t.total.median, 4); // even count: element n/2
    }

    #[test]
    fn mean_uses_c_truncation_then_rounding() {
        // Sum 2999 µs over 2 = 1499 (truncated), rounded to 1 ms; the exact mean 1499.5 would
        // not change it here, but 1500 µs sums per sample would.
        let v = [s(0, 1000, 0), s(0, 1999, 0)];
        let t = connection_times(&v).unwrap();
        assert_eq!(t.total.mean, 1);
        let v = [s(0, 1000, 0), s(0, 2001, 0)];
        let t = connection_times(&v).unwrap();
        assert_eq!(t.total.mean, 2);
    }

    #[test]
    fn empty_has_no_table() {
        assert!(connection_times(&[]).is_none());
    }

    #[test]
    fn nearest_rank_percentiles_truncate_the_index() {
        let v: Vec<Sample> = (1..=10).map(|i| s(0, i * 1000, 0)).collect();
        let got: Vec<i64> = PERCENTILES
            .iter()
            .map(|&p| ap_round_ms(percentile_sample(&v, p).unwrap().time_us()))
            .collect();
        // done=10: indexes 5, 6, 7, 8, 9, 9, 9, 9 and the last.
        assert_eq!(got, [6, 7, 8, 9, 10, 10, 10, 10, 10]);
        let v: Vec<Sample> = (1..=3).map(|i| s(0, i * 1000, 0)).collect();
        let got: Vec<i64> = PERCENTILES
            .iter()
            .map(|&p| ap_round_ms(percentile_sample(&v, p).unwrap().time_us()))
            .collect();
        // done=3: 3*50/100 = 1, 3*66/100 = 1, 3*75/100 = 2, ...
        assert_eq!(got, [2, 2, 3, 3, 3, 3, 3, 3, 3]);
    }

    #[test]
    fn csv_index_rule_and_clamp() {
        let v: Vec<Sample> = (0..200).map(|i| s(0, i, 0)).collect();
        // 0.5 + 200 * 33 / 100 = 66.5 -> 66
        assert_eq!(csv_sample(&v, 33).unwrap().time_us(), 66);
        assert_eq!(csv_sample(&v, 0).unwrap().time_us(), 0);
        assert_eq!(csv_sample(&v, 100).unwrap().time_us(), 199);
        // 0.5 + 200 * 99 / 100 = 198.5 -> 198
        assert_eq!(csv_sample(&v, 99).unwrap().time_us(), 198);
        let v: Vec<Sample> = (0..3).map(|i| s(0, i, 0)).collect();
        // 0.5 + 3 * 10 / 100 = 0.8 -> 0; 0.5 + 0.51 = 1.01 -> 1
        assert_eq!(csv_sample(&v, 10).unwrap().time_us(), 0);
        assert_eq!(csv_sample(&v, 17).unwrap().time_us(), 1);
        // 0.5 + 3 * 84 / 100 = 3.02 -> 3: out of bounds in ab, clamped to the last here.
        assert_eq!(csv_sample(&v, 84).unwrap().time_us(), 2);
        let one = [s(0, 490, 0)];
        for i in 0..=100 {
            assert_eq!(csv_sample(&one, i).unwrap().time_us(), 490, "row {i}");
        }
    }

    #[test]
    fn sane_thresholds_compare_rounded_mean_and_median_with_sd() {
        let r = |mean, median, sd| Row { min: 0, mean, sd, median, max: 0 };
        assert_eq!(sanity(&r(10, 10, 0.0)), Sanity::Fine);
        assert_eq!(sanity(&r(10, 11, 1.0)), Sanity::Fine); // d == sd: not "> sd"
        assert_eq!(sanity(&r(10, 12, 1.0)), Sanity::Warning); // d == 2 sd: not "> 2 sd"
        assert_eq!(sanity(&r(12, 10, 1.5)), Sanity::Warning);
        assert_eq!(sanity(&r(10, 13, 1.4)), Sanity::Error);
        assert_eq!(sanity(&r(10, 11, 0.0)), Sanity::Error); // sd 0 and any difference
        assert_eq!(sanity(&r(0, 1, 0.49)), Sanity::Error);
        assert_eq!(sanity(&r(0, 1, 0.5)), Sanity::Warning);
    }
}
