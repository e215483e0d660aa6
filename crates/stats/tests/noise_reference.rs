//! herd-stats' noise floor (`noise.rs`) against scipy: `reference/noise.txt` holds what
//! `reference/noise.py` computes with scipy for fixed inputs (Student's t quantiles, A/A
//! pairs, minimum detectable effects); each must come out the same here, to 1e-8 relative
//! (Student's t tail, inverted for the quantiles, is good to about 1e-9).
//! The test command re-runs the script with `--check`, so the file is scipy's own.

use herd_stats::noise::{aa_pair, mde_log};

const REFERENCE: &str = include_str!("reference/noise.txt");

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn list(s: &str) -> Vec<f64> {
    s.split(',').map(num).collect()
}

fn close(what: &str, got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-8 * want.abs().max(1e-6), "{what}: herd {got}, scipy {want}");
}

fn lines(kind: &str) -> Vec<Vec<&'static str>> {
    REFERENCE
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.first() == Some(&kind))
        .collect()
}

#[test]
fn the_mde_agrees_with_scipy_and_so_its_t_quantiles() {
    let cases = lines("mde");
    assert!(cases.len() >= 5, "{REFERENCE}");
    for f in cases {
        let (sd, n, m) = (num(f[1]), num(f[2]) as usize, num(f[3]) as usize);
        let d = mde_log(sd, n, m).unwrap();
        close(&f.join(" "), d, num(f[4]));
    }
    // The quantiles through the MDE of s = 1 and n = m = (df + 2)/2 runs a side, which is
    // (t₀.₉₇₅ + t₀.₈₀)·√(2/n): the reference's t lines give both terms.
    let t = lines("t");
    assert!(t.len() >= 20);
    let quantile = |p: &str, df: &str| -> f64 {
        t.iter().find(|f| f[1] == p && f[2] == df).map(|f| num(f[3])).unwrap()
    };
    for df in [2usize, 4, 8, 10, 18, 30, 58, 200] {
        let n = (df + 2) / 2;
        let d = mde_log(1.0, n, n).unwrap();
        let df_text = df.to_string();
        let both = quantile("0.975", &df_text) + quantile("0.8", &df_text);
        let want = both * (2.0 / n as f64).sqrt();
        close(&format!("df {df}"), d, want);
    }
}

#[test]
fn the_aa_pair_agrees_with_scipy() {
    let cases = lines("aa");
    assert!(cases.len() >= 5, "{REFERENCE}");
    for f in cases {
        let what = f.join(" ");
        let p = aa_pair(&list(f[1]), &list(f[2])).unwrap();
        close(&what, p.ratio, num(f[3]));
        close(&what, p.low, num(f[4]));
        close(&what, p.high, num(f[5]));
        close(&what, p.sd_log, num(f[6]));
        assert_eq!(p.df, num(f[7]) as u32, "{what}");
    }
}
