//! Statistics over a handful of per-repetition values: median, mean, sample standard
//! deviation, relative standard deviation, and the Student t confidence interval of the
//! mean (methodology 4.5: ≥ 3 repetitions, median and 95 % CI, more repetitions while the
//! relative standard deviation is above a threshold).
//!
//! Pure functions on `&[f64]`; the lab runner uses [`relative_std_dev`] to decide whether
//! to repeat, the reports use the others too. An empty input, or one too small
//! for the figure, gives `None` rather than NaN.

/// The 95 % two-sided Student t critical values (the 0.975 quantile) for 1 to 30 degrees
/// of freedom, to four decimals (standard tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
const T_975: [f64; 30] = [
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
    2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
    2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
];

/// Beyond 30 degrees of freedom: (df, t), with the normal limit at df = ∞ last.
const T_975_LARGE: [(f64, f64); 4] =
    [(40.0, 2.0211), (60.0, 2.0003), (120.0, 1.9799), (f64::INFINITY, 1.9600)];

/// A mean with the half-width of its confidence interval: the interval is
/// `mean - half_width ..= mean + half_width`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub half_width: f64,
}

impl Interval {
    /// The half-width as a fraction of the mean (0.021 for ±2.1 %); `None` for a zero mean.
    pub fn relative_half_width(&self) -> Option<f64> {
        (self.mean != 0.0).then(|| self.half_width / self.mean.abs())
    }
}

/// The arithmetic mean.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The median: the middle value, or the mean of the two middle values for an even count.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The sample standard deviation (divided by n − 1); needs two values.
pub fn std_dev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let squares: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some((squares / (values.len() - 1) as f64).sqrt())
}

/// The sample standard deviation as a fraction of the mean (0.025 for 2.5 %); needs two
/// values and a non-zero mean.
pub fn relative_std_dev(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    let s = std_dev(values)?;
    (m != 0.0).then(|| s / m.abs())
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom: the
/// critical value of a two-sided 95 % interval. Exact to four decimals up to 30; beyond,
/// interpolated linearly in 1/df between 40, 60, 120 and the normal limit 1.96, which is
/// within 0.001 of the exact value.
pub fn t_critical_95(df: u32) -> Option<f64> {
    match df {
        0 => None,
        1..=30 => Some(T_975[df as usize - 1]),
        _ => {
            let x = 1.0 / f64::from(df);
            let mut lower = (30.0, T_975[29]);
            for upper in T_975_LARGE {
                if f64::from(df) <= upper.0 {
                    // Interpolate between `lower` and `upper` in 1/df (1/∞ = 0).
                    let (x0, x1) = (1.0 / lower.0, 1.0 / upper.0);
                    return Some(upper.1 + (lower.1 - upper.1) * (x - x1) / (x0 - x1));
                }
                lower = upper;
            }
            Some(1.96)
        }
    }
}

/// The 95 % confidence interval of the mean, by Student's t: `mean ± t·s/√n`. Needs two
/// values. It treats the values as independent draws, which is what process-level
/// repetitions in shuffled order are meant to make them.
pub fn confidence_interval_95(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    let df = u32::try_from(n.checked_sub(1)?).ok()?;
    let t = t_critical_95(df)?;
    let mean = mean(values)?;
    let s = std_dev(values)?;
    Some(Interval { mean, half_width: t * s / (n as f64).sqrt() })
}

/// One mean over another (`b / a`) with its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

impl Ratio {
    /// Whether the interval leaves out 1: a change the repetitions' spread cannot explain
    /// (at the 5 % level).
    pub fn significant(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// The ratio of the means of `b` and `a` with its 95 % confidence interval, by the delta
/// method on the ratio's logarithm (var ln m ≈ s²/(n·m²)), so the interval stays above zero
/// and is symmetric in the two directions of change; the t quantile takes Welch's degrees
/// of freedom, rounded down (which widens the interval a little). Needs two values on each
/// side, positive finite means, and some spread: with none on either side (a coarse clock
/// giving identical times) there is nothing to judge a change by, and no interval.
pub fn ratio_of_means_95(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let (ma, mb) = (mean(a)?, mean(b)?);
    let (sa, sb) = (std_dev(a)?, std_dev(b)?);
    let finite = [ma, mb, sa, sb].iter().all(|v| v.is_finite());
    if !finite || ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let ratio = mb / ma;
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let va = sa * sa / (na * ma * ma);
    let vb = sb * sb / (nb * mb * mb);
    let variance = va + vb;
    if variance == 0.0 {
        return None;
    }
    let df = variance * variance / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    // At least 1, floored: a fractional Welch df rounds toward the wider interval.
    let t = t_critical_95(df.floor().max(1.0).min(f64::from(u32::MAX)) as u32)?;
    let spread = (t * variance.sqrt()).exp();
    Some(Ratio { ratio, low: ratio / spread, high: ratio * spread })
}

/// When a cell's repetitions are sure enough to stop: the lab adds repetitions while a bound
/// is exceeded (up to its maximum), and a report marks a figure whose bound still is. Either
/// bound, or both (then a cell goes on while either is exceeded).
///
/// The interval bound is the direct one: repeat until the 95 % confidence interval of the
/// mean is within ±x % of it, as Georges, Buytaert and Eeckhout recommend ("Statistically
/// rigorous Java performance evaluation", OOPSLA 2007, §4.1). A spread bound asks the same
/// relative standard deviation of 3 repetitions as of 10, where the interval narrows with
/// √n: it stops a quiet cell no sooner and a noisy one no surer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The relative standard deviation across repetitions, in percent.
    pub max_spread_percent: Option<f64>,
    /// The half-width of the 95 % interval of the mean, in percent of the mean.
    pub max_interval_percent: Option<f64>,
}

impl Bounds {
    /// Whether `values` (two or more) exceed a bound. Fewer than two give no spread and no
    /// interval: nothing to judge, so no bound is exceeded.
    pub fn exceeded(&self, values: &[f64]) -> bool {
        let over = |bound: Option<f64>, figure: Option<f64>| match (bound, figure) {
            (Some(bound), Some(figure)) => figure * 100.0 > bound,
            _ => false,
        };
        let interval = confidence_interval_95(values).and_then(|ci| ci.relative_half_width());
        over(self.max_spread_percent, relative_std_dev(values))
            || over(self.max_interval_percent, interval)
    }

    /// The bounds in words, for what the lab says it will do: `the spread of X over 3 %`,
    /// `the 95 % interval of X wider than ±4 %`, or both joined by "or".
    pub fn words(&self, of: &str) -> String {
        let spread = self.max_spread_percent.map(|b| format!("the spread of {of} is over {b}%"));
        let interval = self
            .max_interval_percent
            .map(|b| format!("the 95 % interval of {of} is wider than ±{b}%"));
        match (spread, interval) {
            (Some(s), Some(i)) => format!("{s} or {i}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => "never".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_judge_the_spread_the_interval_or_both() {
        // Mean 100, sd √(32/3) = 3.27 %; n = 4: t(3) = 3.1824, half-width 5.20 %.
        let four = [96.0, 100.0, 100.0, 104.0];
        let spread = |b| Bounds { max_spread_percent: Some(b), max_interval_percent: None };
        let interval = |b| Bounds { max_spread_percent: None, max_interval_percent: Some(b) };
        assert!(spread(3.2).exceeded(&four) && !spread(3.3).exceeded(&four));
        assert!(interval(5.1).exceeded(&four) && !interval(5.3).exceeded(&four));
        // Four times over: sd √(128/15) = 2.92 %, half-width 2.1314 · 2.92 / 4 = 1.56 %.
        let sixteen: Vec<f64> = four.iter().cycle().take(16).copied().collect();
        assert!(spread(2.9).exceeded(&sixteen), "the spread does not narrow with n");
        assert!(!interval(1.6).exceeded(&sixteen), "the interval does");
        assert!(interval(1.5).exceeded(&sixteen));
        let both = Bounds { max_spread_percent: Some(5.0), max_interval_percent: Some(1.5) };
        assert!(both.exceeded(&sixteen), "either bound exceeded extends");
        assert!(!both.exceeded(&[100.0]), "one value has nothing to judge");
        assert_eq!(
            both.words("µs/request"),
            "the spread of µs/request is over 5% or the 95 % interval of µs/request is wider \
             than ±1.5%"
        );
    }

    #[test]
    fn a_ratio_of_means_has_an_interval_and_says_whether_it_leaves_out_one() {
        // The same spread on both sides, 10 % apart: ratio 1.1.
        let a = [100.0, 102.0, 98.0];
        let b = [110.0, 112.2, 107.8];
        let r = ratio_of_means_95(&a, &b).unwrap();
        assert!(close(r.ratio, 1.1, 1e-12), "{r:?}");
        // se(ln) = sqrt(2 · 4/(3·100²))… by hand: va = 4/30000, vb = 4.84/36300 = va;
        // df = (2va)²/(2va²/2) = 4; t = 2.7764; spread = exp(2.7764·sqrt(2va)).
        let va: f64 = 4.0 / 30_000.0;
        let spread = (2.7764 * (2.0 * va).sqrt()).exp();
        assert!(close(r.low, 1.1 / spread, 1e-9) && close(r.high, 1.1 * spread, 1e-9), "{r:?}");
        assert!(r.significant(), "10 % apart with 2 % spread: {r:?}");
        // Overlapping samples: not significant.
        let r = ratio_of_means_95(&[100.0, 110.0, 90.0], &[105.0, 95.0, 112.0]).unwrap();
        assert!(!r.significant() && r.low < 1.0 && r.high > 1.0, "{r:?}");
        // The direction does not change the verdict, and the intervals mirror.
        let back = ratio_of_means_95(&[105.0, 95.0, 112.0], &[100.0, 110.0, 90.0]).unwrap();
        assert!(close(back.low, 1.0 / r.high, 1e-12), "{back:?} {r:?}");
        // Too few values, or a mean of zero: no ratio.
        assert_eq!(ratio_of_means_95(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(ratio_of_means_95(&[0.0, 0.0], &[1.0, 2.0]), None);
        // No spread at all, or a value beyond f64: nothing to judge by.
        assert_eq!(ratio_of_means_95(&[5.0, 5.0], &[10.0, 10.0]), None);
        assert_eq!(ratio_of_means_95(&[1.0, f64::INFINITY], &[1.0, 2.0]), None);
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[10.0, 10.0, 1e9]), Some(10.0), "an outlier does not move it");
    }

    #[test]
    fn mean_and_standard_deviation() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(std_dev(&[5.0]), None);
        // Sample standard deviation of 2, 4, 4, 4, 5, 5, 7, 9 is sqrt(32/7).
        let s = std_dev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(s, (32.0f64 / 7.0).sqrt(), 1e-12), "{s}");
        assert_eq!(std_dev(&[3.0, 3.0, 3.0]), Some(0.0));
    }

    #[test]
    fn relative_std_dev_is_a_fraction_of_the_mean() {
        assert_eq!(relative_std_dev(&[100.0]), None);
        assert_eq!(relative_std_dev(&[0.0, 0.0]), None);
        let rsd = relative_std_dev(&[98.0, 100.0, 102.0]).unwrap();
        assert!(close(rsd, 0.02, 1e-12), "{rsd}");
    }

    #[test]
    fn t_critical_values_follow_the_table() {
        assert_eq!(t_critical_95(0), None);
        assert_eq!(t_critical_95(1), Some(12.7062));
        assert_eq!(t_critical_95(2), Some(4.3027));
        assert_eq!(t_critical_95(4), Some(2.7764));
        assert_eq!(t_critical_95(30), Some(2.0423));
        assert_eq!(t_critical_95(40), Some(2.0211));
        assert_eq!(t_critical_95(120), Some(1.9799));
        // Exact values: df 50 → 2.0086, df 100 → 1.9840, df 1000 → 1.9623.
        for (df, exact) in [(35, 2.0301), (50, 2.0086), (100, 1.9840), (1000, 1.9623)] {
            let t = t_critical_95(df).unwrap();
            assert!(close(t, exact, 0.001), "df {df}: {t} vs {exact}");
        }
        assert!(close(t_critical_95(u32::MAX).unwrap(), 1.96, 1e-6));
    }

    #[test]
    fn t_critical_values_decrease_with_df() {
        let mut last = f64::INFINITY;
        for df in 1..=500 {
            let t = t_critical_95(df).unwrap();
            assert!(t < last, "df {df}: {t} not below {last}");
            last = t;
        }
    }

    #[test]
    fn confidence_interval_of_three_repetitions() {
        assert_eq!(confidence_interval_95(&[]), None);
        assert_eq!(confidence_interval_95(&[1000.0]), None);
        // 990, 1000, 1010: mean 1000, s = 10, t(2) = 4.3027, half-width 4.3027·10/√3.
        let ci = confidence_interval_95(&[990.0, 1000.0, 1010.0]).unwrap();
        assert_eq!(ci.mean, 1000.0);
        assert!(close(ci.half_width, 4.3027 * 10.0 / 3f64.sqrt(), 1e-9), "{ci:?}");
        assert!(close(ci.relative_half_width().unwrap(), 0.024842, 1e-6), "{ci:?}");
        let same = confidence_interval_95(&[5.0, 5.0]).unwrap();
        assert_eq!(same, Interval { mean: 5.0, half_width: 0.0 });
    }
}
