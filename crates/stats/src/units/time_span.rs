//! A length of time as herd's flags and experiment files write it.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::decimal::{largest_exact, split_unit, Decimal};

/// A positive duration of at most a year: `10s`, `500ms`, `250us`, `1.5s`, `2m`, `1h`, `20ns`;
/// a bare number is seconds. Displays in the largest unit that holds it exactly (`1500ms`,
/// `2m`), which parses back to the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeSpan(Duration);

const NANOS: u128 = 1;
const MICROS: u128 = 1_000;
const MILLIS: u128 = 1_000_000;
const SECONDS: u128 = 1_000_000_000;
const MINUTES: u128 = 60 * SECONDS;
const HOURS: u128 = 60 * MINUTES;
/// The longest span: a year. Longer is a typo in a tool whose runs last minutes.
const MAX: u128 = 365 * 24 * HOURS;

/// What is accepted, quoted by every error.
const SYNTAX: &str = "use a number with s, ms, us, ns, m or h (e.g. 10s, 500ms, 1.5s)";

impl TimeSpan {
    /// The longest span accepted (a year).
    pub const MAX: TimeSpan = TimeSpan(Duration::from_secs(365 * 24 * 3600));

    /// `d` when it is more than zero and at most a year.
    pub const fn new(d: Duration) -> Option<TimeSpan> {
        if !d.is_zero() && d.as_nanos() <= MAX {
            Some(TimeSpan(d))
        } else {
            None
        }
    }

    /// `secs` seconds (1 s to a year); for constants.
    pub const fn from_secs(secs: u64) -> Option<TimeSpan> {
        TimeSpan::new(Duration::from_secs(secs))
    }

    pub const fn get(self) -> Duration {
        self.0
    }
}

impl From<TimeSpan> for Duration {
    fn from(t: TimeSpan) -> Duration {
        t.0
    }
}

impl FromStr for TimeSpan {
    type Err = String;

    fn from_str(s: &str) -> Result<TimeSpan, String> {
        let text = s.trim();
        let (number, unit) = split_unit(text);
        let scale = match unit {
            "" | "s" => SECONDS,
            "ms" => MILLIS,
            "us" | "µs" => MICROS,
            "ns" => NANOS,
            "m" | "min" => MINUTES,
            "h" => HOURS,
            _ => return Err(format!("`{text}`: {SYNTAX}")),
        };
        let nanos = Decimal::parse(number)
            .ok_or_else(|| format!("`{text}`: {SYNTAX}"))?
            .times(scale)
            .filter(|&n| n > 0 && n <= MAX)
            .ok_or_else(|| format!("`{text}`: must be more than zero and at most a year"))?;
        // At most a year of nanoseconds: within u64.
        Ok(TimeSpan(Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))))
    }
}

impl fmt::Display for TimeSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [
            ("h", HOURS),
            ("m", MINUTES),
            ("s", SECONDS),
            ("ms", MILLIS),
            ("us", MICROS),
            ("ns", NANOS),
        ];
        f.write_str(&largest_exact(self.0.as_nanos(), &units))
    }
}

super::serde_as_text!(TimeSpan, "a duration such as 10s, 500ms or 1.5s");

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn parse(s: &str) -> Result<Duration, String> {
        s.parse::<TimeSpan>().map(TimeSpan::get)
    }

    #[test]
    fn spellings() {
        assert_eq!(parse("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse(" 10s "), Ok(Duration::from_secs(10)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("1.1s"), Ok(Duration::from_nanos(1_100_000_000)), "exact, not via f64");
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(parse("0.5ms"), Ok(Duration::from_micros(500)));
        assert_eq!(parse("20ns"), Ok(Duration::from_nanos(20)));
        assert_eq!(parse("365d"), Err(format!("`365d`: {SYNTAX}")));
        for bad in ["", "s", "10x", "-1s", "0", "0s", "1e3", "..s", "9999999h", "0.1ns", "1 s"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse("0").unwrap_err().contains("more than zero"));
    }

    #[test]
    fn displays_in_the_largest_exact_unit() {
        let show = |d| TimeSpan::new(d).map(|t| t.to_string());
        assert_eq!(show(Duration::from_secs(10)).as_deref(), Some("10s"));
        assert_eq!(show(Duration::from_millis(1500)).as_deref(), Some("1500ms"));
        assert_eq!(show(Duration::from_secs(120)).as_deref(), Some("2m"));
        assert_eq!(show(Duration::from_secs(7200)).as_deref(), Some("2h"));
        assert_eq!(show(Duration::from_micros(250)).as_deref(), Some("250us"));
        assert_eq!(show(Duration::from_nanos(1_500)).as_deref(), Some("1500ns"));
        assert_eq!(show(Duration::ZERO), None);
        assert_eq!(TimeSpan::MAX.to_string(), "8760h");
        assert_eq!(TimeSpan::new(TimeSpan::MAX.get() + Duration::from_nanos(1)), None);
    }

    #[test]
    fn serde_is_the_same_text() {
        let t: TimeSpan = "1500ms".parse().unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"1500ms\"");
        assert_eq!(serde_json::from_str::<TimeSpan>("\"1.5s\"").unwrap(), t);
        let err = serde_json::from_str::<TimeSpan>("\"soon\"").unwrap_err().to_string();
        assert!(err.contains("`soon`"), "{err}");
    }

    proptest! {
        #[test]
        fn display_round_trips(nanos in 1u64..=365 * 24 * 3600 * 1_000_000_000) {
            let t = TimeSpan::new(Duration::from_nanos(nanos)).unwrap();
            prop_assert_eq!(t.to_string().parse::<TimeSpan>(), Ok(t));
        }

        #[test]
        fn round_values_round_trip(n in 1u64..100_000, unit in 0usize..6) {
            let spelled = format!("{n}{}", ["ns", "us", "ms", "s", "m", "h"][unit]);
            if let Ok(t) = spelled.parse::<TimeSpan>() {
                prop_assert_eq!(t.to_string().parse::<TimeSpan>(), Ok(t));
            }
        }

        #[test]
        fn any_text_parses_or_explains(s in "\\PC{0,12}") {
            if let Ok(t) = s.parse::<TimeSpan>() {
                prop_assert_eq!(t.to_string().parse::<TimeSpan>(), Ok(t));
            }
        }
    }
}
