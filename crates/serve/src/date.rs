//! HTTP dates: formatting `Date` and `Last-Modified` values (IMF-fixdate, the one form a
//! sender may use) and the access log's timestamp, and a per-worker cache so that the `Date`
//! header is formatted once per second rather than once per response. Reading the dates of
//! request headers, in all three forms, is http_date.rs's job.
//!
//! Times before 1970 or after 9999 are clamped; there are no time zones other than GMT.

use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate.
pub(crate) const HTTP_DATE_LEN: usize = 29;

/// Length of a Common Log Format timestamp, `10/Oct/2000:13:55:36 +0000`.
pub(crate) const CLF_DATE_LEN: usize = 26;

/// The current second, formatted both ways. One per worker: refreshed once per event-loop turn,
/// reformatted only when the second changes.
#[derive(Debug, Clone)]
pub(crate) struct DateCache {
    secs: u64,
    http: [u8; HTTP_DATE_LEN],
    clf: [u8; CLF_DATE_LEN],
}

impl DateCache {
    pub(crate) fn new(now: SystemTime) -> DateCache {
        let secs = unix_secs(now);
        DateCache { secs, http: format_http_date(secs), clf: format_clf_date(secs) }
    }

    pub(crate) fn refresh(&mut self, now: SystemTime) {
        let secs = unix_secs(now);
        if secs != self.secs {
            *self = DateCache { secs, http: format_http_date(secs), clf: format_clf_date(secs) };
        }
    }

    /// The `Date` header value.
    pub(crate) fn http(&self) -> &[u8; HTTP_DATE_LEN] {
        &self.http
    }

    /// The access log timestamp.
    pub(crate) fn clf(&self) -> &[u8; CLF_DATE_LEN] {
        &self.clf
    }

    /// The current second, since the epoch: "now" for the dates of request headers.
    pub(crate) fn secs(&self) -> u64 {
        self.secs
    }
}

/// Seconds since the Unix epoch; 0 for earlier times.
pub(crate) fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`.
pub(crate) fn format_http_date(secs: u64) -> [u8; HTTP_DATE_LEN] {
    let t = Civil::from_unix(secs);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[0..3].copy_from_slice(WEEKDAYS[t.weekday]);
    put2(&mut out[5..7], t.day);
    out[8..11].copy_from_slice(MONTHS[usize::from(t.month - 1)]);
    put4(&mut out[12..16], t.year);
    put2(&mut out[17..19], t.hour);
    put2(&mut out[20..22], t.minute);
    put2(&mut out[23..25], t.second);
    out
}

/// `10/Oct/2000:13:55:36 +0000`.
pub(crate) fn format_clf_date(secs: u64) -> [u8; CLF_DATE_LEN] {
    let t = Civil::from_unix(secs);
    let mut out = *b"01/Jan/1970:00:00:00 +0000";
    put2(&mut out[0..2], t.day);
    out[3..6].copy_from_slice(MONTHS[usize::from(t.month - 1)]);
    put4(&mut out[7..11], t.year);
    put2(&mut out[12..14], t.hour);
    put2(&mut out[15..17], t.minute);
    put2(&mut out[18..20], t.second);
    out
}

/// 1970-01-01 was a Thursday.
const WEEKDAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// 9999-12-31T23:59:59Z: the last second with a four-digit year.
const MAX_SECS: u64 = 253_402_300_799;

struct Civil {
    year: u64,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    weekday: usize,
}

impl Civil {
    fn from_unix(secs: u64) -> Civil {
        let secs = secs.min(MAX_SECS);
        let days = secs / 86_400;
        let rem = secs % 86_400;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            // rem < 86_400, so these fit in u8.
            hour: (rem / 3600) as u8,
            minute: (rem / 60 % 60) as u8,
            second: (rem % 60) as u8,
            weekday: (days % 7) as usize,
        }
    }
}

/// Howard Hinnant's `civil_from_days`, restricted to days on or after 1970-01-01.
/// See: <https://howardhinnant.github.io/date_algorithms.html#civil_from_days>
fn civil_from_days(days: u64) -> (u64, u8, u8) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

fn put2(out: &mut [u8], v: u8) {
    out[0] = b'0' + v / 10;
    out[1] = b'0' + v % 10;
}

fn put4(out: &mut [u8], v: u64) {
    let v = v.min(9999);
    for (i, slot) in out.iter_mut().enumerate().take(4) {
        *slot = b'0' + (v / 10u64.pow(3 - i as u32) % 10) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(secs: u64, http: &str, clf: &str) {
        assert_eq!(std::str::from_utf8(&format_http_date(secs)).unwrap(), http);
        assert_eq!(std::str::from_utf8(&format_clf_date(secs)).unwrap(), clf);
        let parsed = crate::http_date::parse(http.as_bytes(), secs);
        assert_eq!(parsed, i64::try_from(secs).ok(), "{http}");
    }

    #[test]
    fn epoch() {
        check(0, "Thu, 01 Jan 1970 00:00:00 GMT", "01/Jan/1970:00:00:00 +0000");
    }

    #[test]
    fn rfc_example() {
        check(784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT", "06/Nov/1994:08:49:37 +0000");
    }

    #[test]
    fn leap_day_2000() {
        check(951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT", "29/Feb/2000:00:00:00 +0000");
    }

    #[test]
    fn end_of_2038() {
        check(2_147_483_647, "Tue, 19 Jan 2038 03:14:07 GMT", "19/Jan/2038:03:14:07 +0000");
    }

    #[test]
    fn last_representable_second() {
        check(MAX_SECS, "Fri, 31 Dec 9999 23:59:59 GMT", "31/Dec/9999:23:59:59 +0000");
        assert_eq!(format_http_date(u64::MAX), format_http_date(MAX_SECS));
    }

    #[test]
    fn cache_reformats_only_when_the_second_changes() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(784_111_777);
        let mut cache = DateCache::new(t);
        cache.refresh(t + std::time::Duration::from_millis(900));
        assert_eq!(cache.http(), b"Sun, 06 Nov 1994 08:49:37 GMT");
        cache.refresh(t + std::time::Duration::from_secs(1));
        assert_eq!(cache.http(), b"Sun, 06 Nov 1994 08:49:38 GMT");
        assert_eq!(cache.secs(), 784_111_778);
        assert_eq!(cache.clf(), b"06/Nov/1994:08:49:38 +0000");
    }
}
