//! Reads the HTTP-date of a request's If-Modified-Since, If-Unmodified-Since and If-Range, in
//! the three forms RFC 9110 §5.6.7 requires every recipient to accept:
//!
//! - IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the only one senders may generate;
//! - obsolete RFC 850, `Sunday, 06-Nov-94 08:49:37 GMT`, whose two-digit year is read as the
//!   RFC says: a year that would be more than 50 years in the future is the most recent past
//!   one with the same two digits (so the reading depends on today's date);
//! - asctime, `Sun Nov  6 08:49:37 1994`, the day padded with a space (or a zero).
//!
//! Matching is case-sensitive, as the RFC defines HTTP-date. The weekday must be a weekday's
//! name but is not checked against the date, as nginx and Apache do not check it either. A day
//! the month does not have (`30 Feb`), an hour above 23 or anything else malformed makes the
//! whole value invalid, and the caller then ignores the condition (RFC 9110 §13.1.3,
//! §13.1.4). A second of 60 (a leap second) is read as the next minute's first. Results are
//! signed: a date before 1970 is still a date (every file is newer than it).
//!
//! Why not the `httpdate` crate, which reads all three forms too: it reads RFC 850's year with
//! a fixed pivot (00–69 as 20xx) instead of the RFC's rule relative to today, takes `+5` for a
//! number and 31 February for 3 March, and refuses years before 1970; each of those is a case
//! this server answers differently, and the three forms take less code here than those
//! exceptions would around it. Formatting dates is date.rs's job.

/// Seconds since the Unix epoch (negative before it) of `value`, an HTTP-date in any of the
/// three forms; `None` if it is none of them. `now`, in seconds since the epoch, places an RFC
/// 850 date's two-digit year.
pub(crate) fn parse(value: &[u8], now: u64) -> Option<i64> {
    let s = value.trim_ascii();
    imf_fixdate(s).or_else(|| rfc850(s, now)).or_else(|| asctime(s))
}

/// The fields of a date as written, before validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
}

const SHORT_DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
const LONG_DAYS: [&[u8]; 7] =
    [b"Monday", b"Tuesday", b"Wednesday", b"Thursday", b"Friday", b"Saturday", b"Sunday"];
const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// `Sun, 06 Nov 1994 08:49:37 GMT`.
fn imf_fixdate(s: &[u8]) -> Option<i64> {
    if s.len() != 29 || !SHORT_DAYS.contains(&&s[0..3]) || &s[3..5] != b", " {
        return None;
    }
    let (day, month, year) = (&s[5..7], &s[8..11], &s[12..16]);
    if s[7] != b' ' || s[11] != b' ' || s[16] != b' ' || &s[25..] != b" GMT" {
        return None;
    }
    let (hour, minute, second) = time_of_day(&s[17..25])?;
    Fields {
        year: digits(year)?,
        month: month_number(month)?,
        day: digits(day)?,
        hour,
        minute,
        second,
    }
    .seconds()
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`.
fn rfc850(s: &[u8], now: u64) -> Option<i64> {
    let comma = s.iter().position(|&b| b == b',')?;
    if !LONG_DAYS.contains(&&s[..comma]) {
        return None;
    }
    let s = s[comma..].strip_prefix(b", ")?;
    if s.len() != 22 || s[2] != b'-' || s[6] != b'-' || s[9] != b' ' || &s[18..] != b" GMT" {
        return None;
    }
    let (hour, minute, second) = time_of_day(&s[10..18])?;
    let mut fields = Fields {
        year: digits(&s[7..9])?,
        month: month_number(&s[3..6])?,
        day: digits(&s[0..2])?,
        hour,
        minute,
        second,
    };
    fields.year = full_year(fields, now);
    fields.seconds()
}

/// `Sun Nov  6 08:49:37 1994` (or `Nov 06`).
fn asctime(s: &[u8]) -> Option<i64> {
    if s.len() != 24 || !SHORT_DAYS.contains(&&s[0..3]) || s[3] != b' ' || s[7] != b' ' {
        return None;
    }
    if s[10] != b' ' || s[19] != b' ' {
        return None;
    }
    let day = match s[8] {
        b' ' => digits(&s[9..10])?,
        _ => digits(&s[8..10])?,
    };
    let (hour, minute, second) = time_of_day(&s[11..19])?;
    Fields { year: digits(&s[20..24])?, month: month_number(&s[4..7])?, day, hour, minute, second }
        .seconds()
}

impl Fields {
    /// Seconds since the epoch, if every field is in range (the day for its month and year).
    fn seconds(self) -> Option<i64> {
        let Fields { year, month, day, hour, minute, second } = self;
        if !(1..=days_in_month(year, month)).contains(&day)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
    }
}

/// The four-digit year of an RFC 850 date whose year is written `fields.year` (0 to 99),
/// by RFC 9110 §5.6.7: "Recipients of a timestamp value in rfc850-date format, which uses a
/// two-digit year, MUST interpret a timestamp that appears to be more than 50 years in the
/// future as representing the most recent year in the past that had the same last two
/// digits." So: the latest year ending in those digits whose date is at most 50 years after
/// `now`.
fn full_year(fields: Fields, now: u64) -> i64 {
    // A clock past the year 9999 is read as in it, which keeps the arithmetic small.
    let now = i64::try_from(now.min(MAX_NOW)).unwrap_or(0);
    let this_century = days_to_year(now.div_euclid(86_400)) / 100 * 100;
    let not_too_far = |year: i64| {
        // The date is at most 50 years after now when the same date 50 years earlier is not
        // after now. Counted from the month's first day, so that a 29 February whose earlier
        // year has none is still a date (1 March).
        let earlier = Fields { year: year - 50, day: 1, ..fields };
        earlier.seconds().is_some_and(|s| s + (fields.day - 1) * 86_400 <= now)
    };
    let candidates = [this_century + 100, this_century, this_century - 100];
    candidates
        .into_iter()
        .map(|century| century + fields.year)
        .find(|&year| not_too_far(year))
        // The previous century's reading is before this century began, so in the past and
        // never too far ahead: `find` does not fail; this keeps a result anyway.
        .unwrap_or(this_century - 100 + fields.year)
}

/// 9999-12-31T23:59:59Z: the last second [`full_year`] takes for now.
const MAX_NOW: u64 = 253_402_300_799;

/// `HH:MM:SS`.
fn time_of_day(s: &[u8]) -> Option<(i64, i64, i64)> {
    if s.len() != 8 || s[2] != b':' || s[5] != b':' {
        return None;
    }
    Some((digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?))
}

fn month_number(s: &[u8]) -> Option<i64> {
    MONTHS.iter().position(|m| *m == s).map(|i| i as i64 + 1)
}

/// ASCII digits only (no sign, no space); at most four, so the value fits.
fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 4 {
        return None;
    }
    s.iter().try_fold(0i64, |n, &b| b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0')))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (negative before it): Howard Hinnant's
/// `days_from_civil`, whose eras make every year from 0 on exact.
/// See: <https://howardhinnant.github.io/date_algorithms.html#days_from_civil>
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The year of the day `days` since 1970-01-01 (Hinnant's `civil_from_days`, year only).
fn days_to_year(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    yoe + era * 400 + i64::from(mp >= 10)
}

#[cfg(test)]
mod tests;
