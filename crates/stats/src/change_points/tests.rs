//! Tests of `change_points.rs`: synthetic histories with A/A-like noise (a step must be
//! found where it is, pure noise must rarely alarm, over many seeds of a small xorshift
//! generator), properties over any series, and Apache Otava's own answers on a few series.

use proptest::prelude::*;

use super::*;

/// xorshift64*: a deterministic generator for the tests, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Never zero; seeds close together still start far apart.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1).
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// A history of `n` runs around `level` with relative noise `cv` (standard deviation over
/// the mean), the runs from `shift_at` on `shift` (a fraction) higher.
fn history(seed: u64, n: usize, level: f64, cv: f64, shift_at: usize, shift: f64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let mean = if i >= shift_at { level * (1.0 + shift) } else { level };
            mean * (1.0 + cv * rng.normal())
        })
        .collect()
}

/// A/A-like noise: the run-to-run spread of a run's median throughput that repetitions of
/// herd serve on loopback show, 0.5 % to 1 % (relative standard deviation). False alarms do
/// not depend on it (a history's scale cuts out); how sharply a shift is placed does.
const CV_LOW: f64 = 0.005;
const CV_HIGH: f64 = 0.01;
const SEEDS: u64 = 1000;

/// Of `SEEDS` 30-run histories with a −2 % shift at run 15: how many had a change point, one
/// at run 15, one within a run of it, and run 15's alone.
fn shift_rates(cv: f64) -> [f64; 4] {
    let settings = Settings::default();
    let mut counts = [0usize; 4];
    for seed in 0..SEEDS {
        let series = history(seed, 30, 20_000.0, cv, 15, -0.02);
        let cps = change_points(&series, &settings).unwrap();
        counts[0] += usize::from(!cps.is_empty());
        counts[1] += usize::from(cps.iter().any(|c| c.index == 15));
        counts[2] += usize::from(cps.iter().any(|c| c.index.abs_diff(15) <= 1));
        counts[3] += usize::from(cps.len() == 1 && cps[0].index == 15);
        if let [cp] = cps.as_slice() {
            // Alone, its sides are the two halves: −2 % within four standard errors of a
            // difference of two 15-run means (σ ≈ 0.37 % at 1 % CV), the shift put in.
            assert!((cp.relative_change() + 0.02).abs() < 0.015, "{cp:?}");
            assert!(cp.p_value < settings.max_p_value);
        }
    }
    let rates = counts.map(|c| c as f64 / SEEDS as f64);
    eprintln!(
        "2 % shift at run 15 of 30, CV {cv}: found {:.3}, at run 15 {:.3}, within one run {:.3}, alone at 15 {:.3} ({SEEDS} seeds)",
        rates[0], rates[1], rates[2], rates[3]
    );
    rates
}

#[test]
fn a_two_percent_shift_in_thirty_runs_is_found_where_it_is() {
    let [found, at, _, alone] = shift_rates(CV_LOW);
    assert!(found >= 0.99, "found in {found:.3}");
    assert!(at >= 0.90, "at run 15 in {at:.3}");
    assert!(alone >= 0.90, "alone at run 15 in {alone:.3}");
    // And a fixed one, as a reader would check it by hand.
    let series = history(1, 30, 20_000.0, CV_LOW, 15, -0.02);
    let cps = change_points(&series, &Settings::default()).unwrap();
    assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [15]);
}

#[test]
fn at_one_percent_noise_a_two_percent_shift_is_found_less_sharply() {
    // A 2 % shift is two standard deviations of one run: a run next to it often looks like
    // the other side, so the place is less sure; that it happened is not.
    let [found, _, near, _] = shift_rates(CV_HIGH);
    assert!(found >= 0.95, "found in {found:.3}");
    assert!(near >= 0.75, "within a run of 15 in {near:.3}");
}

#[test]
fn pure_noise_alarms_in_no_more_than_five_percent_of_histories() {
    let settings = Settings::default();
    for n in [10, 30, 60] {
        let alarms = (0..SEEDS)
            .filter(|&seed| {
                let series = history(seed + 1_000_000, n, 20_000.0, CV_HIGH, n, 0.0);
                !change_points(&series, &settings).unwrap().is_empty()
            })
            .count();
        let rate = alarms as f64 / SEEDS as f64;
        eprintln!(
            "pure noise, {n} runs: false alarms in {alarms} of {SEEDS} histories ({rate:.3})"
        );
        assert!(rate <= 0.05, "{n} runs: {rate:.3}");
    }
}

#[test]
fn a_steady_or_short_series_has_no_change_and_a_bad_one_no_answer() {
    let s = Settings::default();
    assert_eq!(change_points(&[], &s), Some(vec![]));
    assert_eq!(change_points(&[1.0], &s), Some(vec![]));
    assert_eq!(change_points(&[1.0, 2.0], &s), Some(vec![]));
    assert_eq!(change_points(&[5.0; 20], &s), Some(vec![]));
    assert_eq!(change_points(&[1.0, f64::NAN, 2.0], &s), None);
    assert_eq!(change_points(&[1.0, 2.0], &Settings { window: 1, ..s }), None);
    assert_eq!(change_points(&[1.0, 2.0], &Settings { max_p_value: 0.0, ..s }), None);
}

#[test]
fn a_magnitude_floor_drops_small_changes() {
    let series = history(1, 30, 20_000.0, CV_HIGH, 15, -0.02);
    let s = Settings { min_magnitude: 0.05, ..Settings::default() };
    assert_eq!(change_points(&series, &s), Some(vec![]));
}

#[test]
fn two_steps_are_both_found() {
    let mut series = history(7, 20, 100.0, 0.005, 20, 0.0);
    series.extend(history(8, 20, 110.0, 0.005, 20, 0.0));
    series.extend(history(9, 20, 95.0, 0.005, 20, 0.0));
    let cps = change_points(&series, &Settings::default()).unwrap();
    assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [20, 40]);
    assert!((cps[0].mean_before - 100.0).abs() < 1.0 && (cps[0].mean_after - 110.0).abs() < 1.0);
}

proptest! {
    #[test]
    fn any_series_gives_points_strictly_inside_ascending_and_significant(
        series in prop::collection::vec(-1e6f64..1e6, 0..80),
        window in 2usize..60,
    ) {
        let s = Settings { window, ..Settings::default() };
        let cps = change_points(&series, &s).unwrap();
        for w in cps.windows(2) {
            prop_assert!(w[0].index < w[1].index);
        }
        for cp in &cps {
            prop_assert!(cp.index > 0 && cp.index < series.len());
            prop_assert!(cp.p_value < s.max_p_value);
        }
    }

    #[test]
    fn the_points_do_not_depend_on_the_unit(
        series in prop::collection::vec(1.0f64..100.0, 0..40),
        scale in prop::sample::select(vec![0.5f64, 2.0, 4.0, 1024.0]),
    ) {
        // Scaling by a power of two is exact in floating point: the same points, exactly.
        let s = Settings::default();
        let scaled: Vec<f64> = series.iter().map(|v| v * scale).collect();
        let a: Vec<usize> = change_points(&series, &s).unwrap().iter().map(|c| c.index).collect();
        let b: Vec<usize> = change_points(&scaled, &s).unwrap().iter().map(|c| c.index).collect();
        prop_assert_eq!(a, b);
    }
}

/// Index, mean before, std before, mean after, std after, p-value.
type OtavaPoint = (usize, f64, f64, f64, f64, f64);

/// Apache Otava 0.8.0's answers, from `compute_change_points(series, window_len=50,
/// max_pvalue=0.001, min_magnitude=0.0)` in `otava.analysis` (pip install apache-otava;
/// the series are sums of twelve draws of a 64-bit LCG, rounded to 0.1, written out here):
/// (series, [(index, mean before, std before, mean after, std after, p-value)]).
fn otava_answers() -> Vec<(Vec<f64>, Vec<OtavaPoint>)> {
    vec![
        (
            vec![
                20039.8, 20186.7, 20050.4, 19826.1, 19870.8, 19849.6, 19949.7, 19881.3, 20086.0,
                20160.1, 20038.9, 20085.4, 19901.0, 19775.0, 19980.0, 19318.3, 19816.2, 19829.2,
                19786.3, 19426.6, 19664.7, 19472.4, 19652.9, 19710.4, 19148.4, 19729.1, 19698.4,
                19655.9, 19820.7, 19794.9,
            ],
            vec![(
                15,
                19978.719999999998,
                121.3871723041611,
                19634.960000000003,
                196.74651305677577,
                3.5065513117114332e-06,
            )],
        ),
        (
            vec![
                20180.8, 19601.4, 19938.5, 20179.9, 19619.4, 19735.2, 20012.7, 19853.8, 20249.8,
                19988.9, 20072.5, 20488.2, 20197.7, 20108.7, 20305.0, 19838.7, 19935.7, 20397.0,
                19943.3, 20034.9, 20044.1, 20110.4, 19813.2, 19764.0, 19907.5, 20180.2, 20103.0,
                20214.6, 20108.6, 20133.1,
            ],
            vec![],
        ),
        (
            vec![
                100.3, 100.5, 99.6, 100.3, 100.4, 100.1, 99.7, 100.1, 99.5, 99.5, 100.3, 100.2,
                101.2, 99.6, 99.6, 99.9, 100.1, 100.9, 100.2, 99.6, 109.6, 110.6, 110.3, 109.7,
                109.8, 110.3, 110.4, 110.5, 109.9, 110.1, 109.8, 110.3, 110.5, 110.5, 109.3, 110.2,
                108.8, 109.8, 108.5, 109.1, 94.5, 95.1, 94.5, 94.6, 94.2, 95.0, 95.5, 94.9, 95.3,
                94.7, 94.0, 95.2, 94.7, 95.3, 95.2, 95.0, 94.7, 95.2, 95.0, 95.6,
            ],
            vec![
                (
                    20,
                    100.08000000000001,
                    0.45563142999578254,
                    110.1125,
                    0.37228181529588616,
                    1.457874333569621e-38,
                ),
                (
                    36,
                    110.1125,
                    0.37228181529588616,
                    109.05000000000001,
                    0.48218253804964684,
                    0.0001315673726845357,
                ),
                (
                    40,
                    109.05000000000001,
                    0.48218253804964684,
                    94.91000000000001,
                    0.4085339643163091,
                    3.9887419661898055e-26,
                ),
            ],
        ),
        (
            vec![
                5036.2, 5065.1, 5022.8, 5048.9, 5053.4, 5019.3, 5016.1, 5036.0, 5026.3, 4976.1,
                5001.8, 5024.8, 4846.2, 4910.8, 5051.2, 4935.8, 5049.0, 5012.5, 5039.0, 4970.6,
                5039.0, 4968.2, 5012.5, 4942.3, 4895.1, 4943.6, 4978.3, 5061.3, 5010.6, 5067.6,
                5047.1, 5088.8, 5038.4, 4980.6, 5025.7, 4964.7, 4957.4, 5096.8, 5013.4, 5034.2,
                4979.9, 5029.5, 5000.3, 4998.9, 5008.0, 5225.2, 5331.7, 5244.3, 5249.7, 5223.7,
                5210.1, 5265.0, 5299.4, 5201.0, 5306.9, 5192.9, 5339.4, 5239.4, 5214.5, 5180.8,
                5362.3, 5297.5, 5283.9, 5272.5, 5200.0, 5302.7, 5313.2, 5238.7, 5273.5, 5180.0,
            ],
            vec![(
                45,
                5007.202222222222,
                50.095692823896265,
                5257.932,
                51.039496235758385,
                4.1783780811314254e-30,
            )],
        ),
        (
            vec![10.0, 10.1, 9.9, 10.0, 15.0, 15.2, 14.9, 15.1],
            vec![(4, 10.0, 0.0707106781186545, 15.05, 0.11180339887498908, 3.3987312644782105e-10)],
        ),
    ]
}

#[test]
fn the_answers_are_apache_otavas() {
    let close = |a: f64, b: f64, rel: f64| (a - b).abs() <= rel * b.abs();
    for (series, expected) in otava_answers() {
        let got = change_points(&series, &Settings::default()).unwrap();
        let indices: Vec<usize> = got.iter().map(|c| c.index).collect();
        let want: Vec<usize> = expected.iter().map(|e| e.0).collect();
        assert_eq!(indices, want, "{series:?}");
        for (cp, &(_, mb, sb, ma, sa, p)) in got.iter().zip(&expected) {
            assert!(close(cp.mean_before, mb, 1e-12) && close(cp.mean_after, ma, 1e-12), "{cp:?}");
            assert!(close(cp.std_before, sb, 1e-9) && close(cp.std_after, sa, 1e-9), "{cp:?}");
            // scipy's t distribution against ours: agreement to 1e-6 relative even at 1e-38.
            assert!(close(cp.p_value, p, 1e-6), "{cp:?} against p = {p}");
        }
    }
}
