//! The three HTTP-date forms: the RFC's examples, every day from 1970 to 2199 in each form
//! (against date.rs's formatter), RFC 850's two-digit year around its 50-year limit, dates
//! before 1970, and invalid values (each rejected, none panicking).

use super::*;
use crate::date::format_http_date;

/// 2026-06-01T00:00:00Z, a "now" for the tests that do not care about it.
const NOW: u64 = 1_780_272_000;

fn check(value: &str, now: u64, expect: Option<i64>) {
    assert_eq!(parse(value.as_bytes(), now), expect, "{value:?} at {now}");
}

/// `secs` written in the RFC 850 and asctime forms, from date.rs's IMF-fixdate.
fn other_forms(secs: u64) -> (String, String) {
    let imf = format_http_date(secs);
    let imf = std::str::from_utf8(&imf).unwrap();
    let (wday, day, month, year, time) =
        (&imf[0..3], &imf[5..7], &imf[8..11], &imf[12..16], &imf[17..25]);
    let long = LONG_DAYS[SHORT_DAYS.iter().position(|d| *d == wday.as_bytes()).unwrap()];
    let long = std::str::from_utf8(long).unwrap();
    let rfc850 = format!("{long}, {day}-{month}-{} {time} GMT", &year[2..]);
    let asc_day = day.strip_prefix('0').map_or(day.to_owned(), |d| format!(" {d}"));
    let asctime = format!("{wday} {month} {asc_day} {time} {year}");
    (rfc850, asctime)
}

#[test]
fn the_rfcs_examples() {
    for value in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ] {
        check(value, NOW, Some(784_111_777));
    }
    // asctime's day may also be written with a zero; surrounding whitespace is trimmed.
    check("Sun Nov 06 08:49:37 1994", NOW, Some(784_111_777));
    check(" Sun, 06 Nov 1994 08:49:37 GMT\t", NOW, Some(784_111_777));
}

#[test]
fn every_day_from_1970_to_2199_in_every_form() {
    // 2199-12-31 is day 84_005; each day at a different time of day.
    for day in 0..84_006u64 {
        let secs = day * 86_400 + (day * 7919) % 86_400;
        let imf = format_http_date(secs);
        let (rfc850, asctime) = other_forms(secs);
        let expect = Some(secs as i64);
        assert_eq!(parse(&imf, NOW), expect, "{}", String::from_utf8_lossy(&imf));
        assert_eq!(parse(asctime.as_bytes(), NOW), expect, "{asctime}");
        // RFC 850 names the year by two digits: read it with a "now" in the same year.
        assert_eq!(parse(rfc850.as_bytes(), secs), expect, "{rfc850}");
    }
}

#[test]
fn dates_before_1970_and_the_extremes() {
    check("Wed, 31 Dec 1969 23:59:59 GMT", NOW, Some(-1));
    check("Wed Dec 31 23:59:59 1969", NOW, Some(-1));
    check("Mon, 01 Jan 0001 00:00:00 GMT", NOW, Some(-62_135_596_800));
    check("Sat, 01 Jan 0000 00:00:00 GMT", NOW, Some(-62_167_219_200));
    check("Fri, 31 Dec 9999 23:59:59 GMT", NOW, Some(253_402_300_799));
    check("Tue, 29 Feb 2000 00:00:00 GMT", NOW, Some(951_782_400));
    // A leap second is the next minute's start.
    check("Sun, 06 Nov 1994 08:49:60 GMT", NOW, Some(784_111_800));
}

#[test]
fn a_two_digit_year_more_than_50_years_ahead_is_in_the_past() {
    // Now: Fri, 06 Nov 2026 08:49:37 GMT.
    let now = 1_793_954_977;
    check("Friday, 06-Nov-26 08:49:37 GMT", now, Some(1_793_954_977));
    check("Sunday, 06-Nov-94 08:49:37 GMT", now, Some(784_111_777));
    // 2076-11-06 08:49:37 is exactly 50 years ahead: not more, so 2076.
    let in_2076 = parse(b"Friday, 06-Nov-76 08:49:37 GMT", now).unwrap();
    assert_eq!(in_2076, 3_371_878_177);
    // One second later is more than 50 years ahead: 1976.
    let in_1976 = parse(b"Saturday, 06-Nov-76 08:49:38 GMT", now).unwrap();
    assert_eq!(in_1976, 216_118_178);
    // The day before that limit is 2076; the year after, 1977.
    assert!(parse(b"Thursday, 05-Nov-76 08:49:37 GMT", now).unwrap() > now as i64);
    assert!(parse(b"Saturday, 01-Jan-77 00:00:00 GMT", now).unwrap() < 0x1000_0000);

    // Late in a century the next century's years are the near ones.
    let in_2099 = 4_070_908_800; // Thu, 01 Jan 2099 00:00:00 GMT
    assert_eq!(parse(b"Monday, 01-Jan-01 00:00:00 GMT", in_2099), Some(4_133_980_800));
    assert_eq!(parse(b"Wednesday, 01-Jan-98 00:00:00 GMT", in_2099), Some(4_039_372_800));
    // Early in one, the previous century's are.
    let in_1994 = 784_111_777;
    assert_eq!(parse(b"Monday, 01-Jan-69 00:00:00 GMT", in_1994), Some(-31_536_000));
    assert_eq!(parse(b"Wednesday, 01-Jan-40 00:00:00 GMT", in_1994), Some(2_208_988_800));
    // 29 February of a year 50 years after one without it.
    assert_eq!(parse(b"Tuesday, 29-Feb-00 00:00:00 GMT", in_1994), Some(951_782_400));
}

#[test]
fn invalid_values_are_rejected() {
    for bad in [
        "",
        "garbage",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 gmt",
        "sun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "sunday, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday,06-Nov-94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun, 06 Nov 1994 08:49:37 GMT trailing",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 32 Jan 1994 08:49:37 GMT",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nox 1994 08:49:37 GMT",
        "Sun, 0x Nov 1994 08:49:37 GMT",
        "Sun, 29 Feb 1900 08:49:37 GMT",
        "Sun, 29 Feb 2001 08:49:37 GMT",
        "Sun, 30 Feb 2000 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:49:37 GMT",
        "Sun, 06 Nov 1994 08:60:37 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sun, +6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov -994 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37  GMT",
        "Sunday, 31-Apr-94 08:49:37 GMT",
        "Sunday, 06-Nov-+4 08:49:37 GMT",
        "Sun Nov 31 08:49:37 1994",
        "Sun Nov  0 08:49:37 1994",
        "Sun Nov  x 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
        "Sün, 06 Nov 1994 08:49:37 GMT",
    ] {
        check(bad, NOW, None);
    }
}

#[test]
fn every_byte_changed_and_every_cut_never_panics() {
    for good in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ] {
        let good = good.as_bytes();
        for cut in 0..good.len() {
            assert_eq!(parse(&good[..cut], NOW), None, "{:?}", &good[..cut]);
        }
        let mut bytes = good.to_vec();
        for i in 0..bytes.len() {
            for b in 0..=255u8 {
                bytes[i] = b;
                let _ = parse(&bytes, NOW);
                // Every extreme "now" too.
                let _ = parse(&bytes, 0);
                let _ = parse(&bytes, u64::MAX);
            }
            bytes[i] = good[i];
        }
    }
}
