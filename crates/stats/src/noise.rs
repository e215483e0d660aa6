//! The noise floor an A/A control measures (`[runner] controls = N`): one cell run again as
//! its own twin, so that two sets of runs of one configuration say how far apart identical
//! systems come out on this machine, and how large a change must be to be told from that.
//!
//! Everything is on the logarithms of the figures (requests/s, seconds …). A ratio is what a
//! report states, and on logarithms a ratio is a difference, symmetric in its two
//! directions; run-to-run variation of throughput is closer to proportional than to
//! additive, and the standard deviation of ln x is, for small spreads, the coefficient of
//! variation. One model then gives every figure:
//!
//! - the A/A ratio: the twin's geometric mean over the cell's, exp(mean ln b − mean ln a),
//!   with the pooled two-sample Student t interval of that difference (equal variances: the
//!   two sides are one configuration, which is the point of the control), on
//!   n + m − 2 degrees of freedom;
//! - the run-to-run variation: s, the pooled standard deviation of the ln figures, each side
//!   about its own mean;
//! - the minimum detectable effect of a ratio between two cells of n and m runs, at 95 %
//!   (two-sided) with 80 % power, by the usual normal-shift approximation:
//!   d = (t₀.₉₇₅ + t₀.₈₀) · s · √(1/n + 1/m), t on n + m − 2 degrees of freedom. A ratio r
//!   is within noise when |ln r| < d; the report states d as the percentage exp(d) − 1.
//!   The approximation's true power (scipy's noncentral t, `tests/reference/noise.py`) is
//!   0.79 to 0.80 for 3 to 30 runs a side, 0.77 for 2: "80 % power" is its name, not a
//!   promise, and the report calls d the smallest difference it can tell from noise.
//!
//! The geometric mean, not the median, is the A/A ratio's centre because it is the one the
//! interval and the MDE are about; for the handful of runs a cell has the two differ by far
//! less than the interval. Every figure is checked against scipy (`tests/noise_reference.rs`,
//! golden values written by `tests/reference/noise.py`).

use crate::student_t::quantile;

/// What an A/A pair shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AaPair {
    /// The twin's geometric mean over the cell's (1.012: the twin came out 1.2 % higher).
    pub ratio: f64,
    /// The ratio's 95 % interval.
    pub low: f64,
    pub high: f64,
    /// The pooled standard deviation of the ln figures: the run-to-run variation (0.023:
    /// about 2.3 % from run to run).
    pub sd_log: f64,
    /// The degrees of freedom of `sd_log`: n + m − 2.
    pub df: u32,
}

impl AaPair {
    /// The minimum detectable effect ([`mde_log`]) of a ratio between two cells of `n` and
    /// `m` runs, by this pair's variation, as a fraction (0.031 for ±3.1 %).
    pub fn mde(&self, n: usize, m: usize) -> Option<f64> {
        mde_log(self.sd_log, n, m).map(f64::exp_m1)
    }

    /// Whether `ratio` between cells of `n` and `m` runs is within noise ([`within_noise`]).
    pub fn within_noise(&self, ratio: f64, n: usize, m: usize) -> Option<bool> {
        within_noise(ratio, self.sd_log, n, m)
    }
}

/// The A/A pair of a cell's figures (`original`) and its twin's. None unless every figure
/// is positive and finite, each side has one at least and both together three (one degree
/// of freedom).
pub fn aa_pair(original: &[f64], twin: &[f64]) -> Option<AaPair> {
    let (n, m) = (original.len(), twin.len());
    if n == 0 || m == 0 || n + m < 3 {
        return None;
    }
    let logs = |v: &[f64]| -> Option<Vec<f64>> {
        v.iter().map(|&x| (x.is_finite() && x > 0.0).then(|| x.ln())).collect()
    };
    let (a, b) = (logs(original)?, logs(twin)?);
    let (mean_a, mean_b) = (mean(&a), mean(&b));
    let squares = |v: &[f64], mean: f64| v.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    let df = n + m - 2;
    let sd_log = ((squares(&a, mean_a) + squares(&b, mean_b)) / df as f64).sqrt();
    let half = quantile(0.975, df as f64)? * sd_log * (1.0 / n as f64 + 1.0 / m as f64).sqrt();
    let diff = mean_b - mean_a;
    Some(AaPair {
        ratio: diff.exp(),
        low: (diff - half).exp(),
        high: (diff + half).exp(),
        sd_log,
        df: u32::try_from(df).ok()?,
    })
}

/// The minimum detectable effect on ln figures of a ratio between two cells of `n` and `m`
/// runs, whose runs vary by `sd_log` (the module's formula, df = n + m − 2). None with no
/// degrees of freedom or a variation that is not a finite number ≥ 0.
pub fn mde_log(sd_log: f64, n: usize, m: usize) -> Option<f64> {
    if n == 0 || m == 0 || n + m < 3 || !(sd_log.is_finite() && sd_log >= 0.0) {
        return None;
    }
    let df = (n + m - 2) as f64;
    let t = quantile(0.975, df)? + quantile(0.8, df)?;
    Some(t * sd_log * (1.0 / n as f64 + 1.0 / m as f64).sqrt())
}

/// Whether a ratio between cells of `n` and `m` runs is smaller than the minimum detectable
/// effect ([`mde_log`]): |ln ratio| < d. None where there is no MDE or no positive ratio.
pub fn within_noise(ratio: f64, sd_log: f64, n: usize, m: usize) -> Option<bool> {
    if !(ratio.is_finite() && ratio > 0.0) {
        return None;
    }
    Some(ratio.ln().abs() < mde_log(sd_log, n, m)?)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_sides_are_one_with_an_interval_about_one() {
        let a = [1000.0, 1020.0, 980.0];
        let p = aa_pair(&a, &a).unwrap();
        assert!((p.ratio - 1.0).abs() < 1e-12);
        assert!(p.low < 1.0 && p.high > 1.0);
        assert!((p.low * p.high - 1.0).abs() < 1e-12, "symmetric on logs: {p:?}");
        assert_eq!(p.df, 4);
        // About 2 % from run to run.
        assert!((p.sd_log - 0.02).abs() < 0.001, "{p:?}");
    }

    #[test]
    fn too_few_or_unusable_figures_give_nothing() {
        assert_eq!(aa_pair(&[1.0], &[1.0]), None);
        assert_eq!(aa_pair(&[], &[1.0, 2.0, 3.0]), None);
        assert_eq!(aa_pair(&[1.0, 0.0], &[1.0]), None);
        assert_eq!(aa_pair(&[1.0, f64::NAN], &[1.0]), None);
        assert!(aa_pair(&[1.0], &[1.0, 1.1]).is_some());
        assert_eq!(mde_log(0.1, 1, 1), None);
        assert_eq!(mde_log(f64::NAN, 3, 3), None);
        assert_eq!(within_noise(0.0, 0.1, 3, 3), None);
    }

    #[test]
    fn a_difference_under_the_mde_is_noise_and_one_over_it_is_not() {
        // s = 0.02 and 3 runs a side: d = (2.776 + 0.941) · 0.02 · √(2/3) ≈ 0.0607.
        let d = mde_log(0.02, 3, 3).unwrap();
        assert!((d - 0.0607).abs() < 0.0005, "{d}");
        assert_eq!(within_noise(1.05, 0.02, 3, 3), Some(true));
        assert_eq!(within_noise(1.0 / 1.05, 0.02, 3, 3), Some(true));
        assert_eq!(within_noise(1.07, 0.02, 3, 3), Some(false));
        assert_eq!(within_noise(1.0 / 1.07, 0.02, 3, 3), Some(false));
        // More runs, smaller MDE.
        assert!(mde_log(0.02, 10, 10).unwrap() < d);
        // No variation: any change is real.
        assert_eq!(within_noise(1.001, 0.0, 3, 3), Some(false));
    }
}
