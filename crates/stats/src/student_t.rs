//! Student's t distribution's two-sided tail, and the two-sample t-test (equal variances)
//! that judges a change point (`change_points.rs`). Pure arithmetic: the regularized
//! incomplete beta function by its continued fraction (Lentz's method) over a Lanczos
//! log-gamma, good to about 1e-12 relative, far below what a p-value threshold needs. Its
//! quantiles (`quantile`, for the noise floor's `noise.rs`) invert that tail by bisection,
//! so they are exactly as good as it, for any degrees of freedom (the table of
//! `repetitions::t_critical_95` has four decimals and interpolates beyond 30).

/// The probability that |T| ≥ |t| for T Student-distributed with `df` degrees of freedom:
/// the two-sided p-value of a t statistic. 0 for an infinite t, 1 for t = 0; NaN for
/// `df` ≤ 0 or a NaN t.
pub(crate) fn two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    incomplete_beta(df / 2.0, 0.5, x)
}

/// The two-sided, equal-variance two-sample t-test on two samples summarised by their
/// means and standard deviations, as scipy's `ttest_ind_from_stats` computes it: the
/// pooled variance over `n1 + n2 - 2` degrees of freedom. None where there are no degrees
/// of freedom. Where both samples have no spread, two different means differ surely (0)
/// and two equal ones not at all (1).
pub(crate) fn p_value_from_stats(
    mean1: f64,
    std1: f64,
    n1: usize,
    mean2: f64,
    std2: f64,
    n2: usize,
) -> Option<f64> {
    let df = (n1 + n2).checked_sub(2).filter(|&df| df > 0)? as f64;
    let (f1, f2) = (n1 as f64, n2 as f64);
    let pooled = ((f1 - 1.0) * std1 * std1 + (f2 - 1.0) * std2 * std2) / df;
    let se = (pooled * (1.0 / f1 + 1.0 / f2)).sqrt();
    if se == 0.0 {
        return Some(if mean1 == mean2 { 1.0 } else { 0.0 });
    }
    let p = two_sided_p((mean1 - mean2) / se, df);
    Some(if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom (scipy's
/// `t.ppf(p, df)`), for 0.5 ≤ p < 1: the t whose two-sided tail is 2·(1 − p), found by
/// bisection on [`two_sided_p`]. None outside that range or for `df` ≤ 0.
pub(crate) fn quantile(p: f64, df: f64) -> Option<f64> {
    if !((0.5..1.0).contains(&p) && df > 0.0 && df.is_finite()) {
        return None;
    }
    let tail = 2.0 * (1.0 - p);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    // The tail falls as t grows: widen until it is below the one wanted.
    while two_sided_p(hi, df) > tail {
        hi *= 2.0;
        if hi > 1e12 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if two_sided_p(mid, df) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    Some(0.5 * (lo + hi))
}

/// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1].
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast on this side; the other side by symmetry.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=500 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repetitions::t_critical_95;

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * b.abs().max(1e-300)
    }

    #[test]
    fn two_sided_p_matches_known_values() {
        // From scipy.stats.t.sf(|t|, df) * 2.
        let known = [
            (1.0, 1.0, 0.5),
            (2.0, 10.0, 0.073_388_034_770_740_39),
            (3.0, 5.0, 0.030_099_247_897_462_57),
            (5.5, 28.0, 7.084_147_134_503_827e-6),
            (10.0, 8.0, 8.488_181_527_628_5e-6),
            (0.1, 100.0, 0.920_544_531_095_851_2),
        ];
        for (t, df, p) in known {
            let got = two_sided_p(t, df);
            assert!(close(got, p, 1e-9), "t={t} df={df}: {got} vs {p}");
            assert!(close(two_sided_p(-t, df), p, 1e-9));
        }
        assert_eq!(two_sided_p(0.0, 7.0), 1.0);
        assert_eq!(two_sided_p(f64::INFINITY, 7.0), 0.0);
        assert!(two_sided_p(1.0, 0.0).is_nan());
    }

    #[test]
    fn the_critical_values_of_the_table_give_five_percent() {
        for df in [1, 2, 3, 5, 10, 20, 30] {
            let t = t_critical_95(df).unwrap();
            let p = two_sided_p(t, f64::from(df));
            assert!(close(p, 0.05, 2e-3), "df={df}: {p}");
        }
    }

    #[test]
    fn quantiles_invert_the_tail_and_agree_with_the_table() {
        // scipy.stats.t.ppf: (p, df, t).
        let known = [
            (0.975, 1.0, 12.706_204_736_432_095),
            (0.975, 4.0, 2.776_445_105_197_798_7),
            (0.8, 4.0, 0.940_964_577_197_53),
            (0.8, 30.0, 0.853_767_259_839_686),
            (0.5, 3.0, 0.0),
        ];
        for (p, df, t) in known {
            let got = quantile(p, df).unwrap();
            // The tail is good to about 1e-9 here (0.8 at 30: 2e-9 off), the bisection to 1e-13.
            assert!((got - t).abs() <= 1e-8 * t.max(1.0), "p={p} df={df}: {got} vs {t}");
        }
        for df in 1..=200u32 {
            let (table, exact) = (t_critical_95(df).unwrap(), quantile(0.975, f64::from(df)));
            let exact = exact.unwrap();
            let tolerance = if df <= 30 { 5.1e-5 } else { 1e-3 };
            assert!((table - exact).abs() <= tolerance, "df={df}: {table} vs {exact}");
        }
        assert_eq!(quantile(0.4, 3.0), None);
        assert_eq!(quantile(1.0, 3.0), None);
        assert_eq!(quantile(0.9, 0.0), None);
    }

    #[test]
    fn the_two_sample_test_pools_the_variances() {
        // scipy.stats.ttest_ind_from_stats(100, 1, 15, 102, 1, 15).pvalue
        let p = p_value_from_stats(100.0, 1.0, 15, 102.0, 1.0, 15).unwrap();
        assert!(close(p, 7.537_173_756_378_412_5e-6, 1e-6), "{p}");
        assert_eq!(p_value_from_stats(1.0, 0.0, 1, 2.0, 0.0, 1), None);
        assert_eq!(p_value_from_stats(1.0, 0.0, 3, 2.0, 0.0, 3), Some(0.0));
        assert_eq!(p_value_from_stats(1.0, 0.0, 3, 1.0, 0.0, 3), Some(1.0));
    }
}
