//! The C and APR formatting primitives ab's report is made of: `%.Nf`, `ap_round_ms`,
//! `ap_double_ms`, `apr_time_sec` and `apr_ctime`.
//!
//! Kept in one place so each renderer says "%.3f" or "ap_round_ms" exactly where ab does, and
//! so the subtle parts (C's truncating integer division, glibc's tie rounding, APR's zero-padded
//! day of month) are tested once.

use chrono::{DateTime, TimeZone};

/// C's `printf("%.{prec}f", x)` (glibc).
///
/// Rust's `{:.prec$}` formats the exact binary value and rounds exact ties to even, like glibc
/// (checked against glibc for 0.5, 2.5, 0.125, 2.675, 1.0005, 0.0005, -0.0 ...: see the tests).
/// Only the non-finite spellings differ: glibc prints `nan`, `-nan`, `inf`, `-inf`.
pub(crate) fn c_fixed(x: f64, prec: usize) -> String {
    if x.is_nan() {
        if x.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        }
    } else if x.is_infinite() {
        if x < 0.0 {
            "-inf".into()
        } else {
            "inf".into()
        }
    } else {
        format!("{x:.prec$}")
    }
}

/// C's `printf("%{width}.{prec}f", x)`: right-aligned in `width` columns, never truncated.
pub(crate) fn c_fixed_width(x: f64, width: usize, prec: usize) -> String {
    format!("{:>width$}", c_fixed(x, prec))
}

/// ab's `#define ap_round_ms(a) ((apr_time_t)((a) + 500)/1000)`: microseconds to whole
/// milliseconds, rounding halves up for positive values. C's `/` truncates toward zero, and so
/// does Rust's on i64, so negatives round as ab does: -1500 µs is -1 ms, -1501 µs is -1 ms, -499
/// µs is 0 ms. The addition wraps like ab's (undefined, in practice wrapping) signed overflow
/// instead of panicking; only ab's `AB_MAX` sentinels come close, and those are never printed.
pub(crate) fn ap_round_ms(us: i64) -> i64 {
    us.wrapping_add(500) / 1000
}

/// ab's `#define ap_double_ms(a) ((double)(a)/1000.0)`.
pub(crate) fn ap_double_ms(x: f64) -> f64 {
    x / 1000.0
}

/// APR's `apr_time_sec(t)`: `t / APR_USEC_PER_SEC`, truncating toward zero.
pub(crate) fn apr_time_sec(us: i64) -> i64 {
    us / 1_000_000
}

/// APR's `apr_ctime()` in the time zone `tz` (ab uses local time): like C's `ctime()` without
/// the newline, except that the day of the month is zero-padded (`"Sat Nov 01 09:02:35 2026"`,
/// where ctime() says `"Nov  1"`), because apr_ctime writes `tm_mday / 10 + '0'` unconditionally.
/// APR explodes `t / APR_USEC_PER_SEC` seconds, so sub-second parts are truncated toward zero.
pub(crate) fn apr_ctime<Tz: TimeZone>(us: i64, tz: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    // Out of chrono's range only for absurd timestamps (±262,000 years); APR would print
    // garbage digits there, the epoch is as good an answer.
    let utc = DateTime::from_timestamp(apr_time_sec(us), 0).unwrap_or(DateTime::UNIX_EPOCH);
    utc.with_timezone(tz).format("%a %b %d %H:%M:%S %Y").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{FixedOffset, Utc};

    #[test]
    fn c_fixed_matches_glibc_on_ties_and_near_ties() {
        // Expected strings are glibc printf's output for the same doubles.
        let cases: &[(f64, usize, &str)] = &[
            (0.0005, 3, "0.001"), // 0.0005 is slightly above the tie in binary
            (2.675, 2, "2.67"),   // 2.675 is slightly below the tie in binary
            (1.0005, 3, "1.000"), // slightly below
            (0.0015, 3, "0.002"),
            (0.0025, 3, "0.003"),
            (0.5, 0, "0"), // exact tie: round half to even
            (1.5, 0, "2"),
            (2.5, 0, "2"),
            (0.125, 2, "0.12"), // exact tie
            (0.375, 2, "0.38"), // exact tie
            (123456.0625, 3, "123456.062"),
            (-0.0005, 3, "-0.001"),
            (-0.0, 3, "-0.000"),
            (1984.126984126984, 2, "1984.13"),
            (0.0, 1, "0.0"),
        ];
        for &(x, prec, want) in cases {
            assert_eq!(c_fixed(x, prec), want, "{x} with precision {prec}");
        }
        assert_eq!(c_fixed(f64::NAN, 3), "nan");
        assert_eq!(c_fixed(-f64::NAN, 3), "-nan");
        assert_eq!(c_fixed(f64::INFINITY, 2), "inf");
        assert_eq!(c_fixed(f64::NEG_INFINITY, 2), "-inf");
    }

    #[test]
    fn c_fixed_width_pads_left_and_never_truncates() {
        assert_eq!(c_fixed_width(0.0, 5, 1), "  0.0");
        assert_eq!(c_fixed_width(12.34, 5, 1), " 12.3");
        assert_eq!(c_fixed_width(123456.7, 5, 1), "123456.7");
        assert_eq!(c_fixed_width(-1.25, 5, 1), " -1.2");
    }

    #[test]
    fn ap_round_ms_rounds_halves_up_and_truncates_negatives_toward_zero() {
        assert_eq!(ap_round_ms(0), 0);
        assert_eq!(ap_round_ms(499), 0);
        assert_eq!(ap_round_ms(500), 1);
        assert_eq!(ap_round_ms(1499), 1);
        assert_eq!(ap_round_ms(1500), 2);
        // Not banker's rounding.
        assert_eq!(ap_round_ms(2500), 3);
        // C: (-499 + 500) / 1000 = 1 / 1000 = 0; (-500 + 500) / 1000 = 0.
        assert_eq!(ap_round_ms(-499), 0);
        assert_eq!(ap_round_ms(-500), 0);
        // (-1000 + 500) / 1000 = -500 / 1000 = 0 in C (floor division would give -1).
        assert_eq!(ap_round_ms(-1000), 0);
        assert_eq!(ap_round_ms(-1499), 0);
        assert_eq!(ap_round_ms(-1500), -1);
        assert_eq!(ap_round_ms(-1501), -1);
        assert_eq!(ap_round_ms(-2500), -2);
        assert_eq!(ap_round_ms(-2501), -2);
        // Wraps instead of panicking, like ab's AB_MAX sentinel would.
        assert_eq!(ap_round_ms(i64::MAX), (i64::MAX.wrapping_add(500)) / 1000);
    }

    #[test]
    fn apr_time_sec_truncates() {
        assert_eq!(apr_time_sec(1_795_252_204_999_999), 1_795_252_204);
        assert_eq!(apr_time_sec(-1), 0);
    }

    #[test]
    fn apr_ctime_zero_pads_the_day() {
        // 2026-11-01T09:02:35.75Z
        let us = 1_793_523_755_750_000;
        assert_eq!(apr_ctime(us, &Utc), "Sun Nov 01 09:02:35 2026");
        let ist = FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
        assert_eq!(apr_ctime(us, &ist), "Sun Nov 01 14:32:35 2026");
        assert_eq!(apr_ctime(0, &Utc), "Thu Jan 01 00:00:00 1970");
    }
}
