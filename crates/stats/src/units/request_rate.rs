//! A request rate, as an open loop is asked for.

use std::fmt;
use std::str::FromStr;

/// Requests per second: more than 0, at most 10,000,000, finite. Parsed from `1000`,
/// `2500.5`, `1000/s`; displays as the shortest decimal that reads back as the same `f64`
/// (Rust's float formatting), so a rate written into a command line is the rate read.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct RequestRate(f64);

/// The highest rate herd is asked for: ten times what one client core sends.
const MAX: f64 = 10_000_000.0;

impl RequestRate {
    /// `per_second` when it is a rate herd can be asked for.
    pub fn new(per_second: f64) -> Option<RequestRate> {
        (per_second.is_finite() && per_second > 0.0 && per_second <= MAX)
            .then_some(RequestRate(per_second))
    }

    pub fn per_second(self) -> f64 {
        self.0
    }
}

impl FromStr for RequestRate {
    type Err = String;

    fn from_str(s: &str) -> Result<RequestRate, String> {
        let text = s.trim();
        let number = text.strip_suffix("/s").unwrap_or(text);
        // Digits and one point only: `inf`, `NaN` and exponents are not rates anyone types.
        let plain = !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && number.bytes().filter(|&b| b == b'.').count() <= 1;
        plain.then(|| number.parse::<f64>().ok()).flatten().and_then(RequestRate::new).ok_or_else(
            || format!("`{text}`: a rate is requests per second, more than 0 and at most 10000000"),
        )
    }
}

impl fmt::Display for RequestRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

super::serde_as_text!(RequestRate, "a rate in requests per second such as 1000");

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn spellings() {
        let rate = |s: &str| s.parse::<RequestRate>().map(RequestRate::per_second);
        assert_eq!(rate("1000"), Ok(1000.0));
        assert_eq!(rate("1000/s"), Ok(1000.0));
        assert_eq!(rate("2500.5"), Ok(2500.5));
        assert_eq!(rate("0.5"), Ok(0.5));
        assert_eq!(rate("10000000"), Ok(1e7));
        for bad in ["", "0", "-1", "1e3", "inf", "NaN", "10000001", "1.2.3", "fast", "/s"] {
            assert!(rate(bad).unwrap_err().contains("requests per second"), "{bad}");
        }
        assert_eq!(RequestRate::new(1000.0).unwrap().to_string(), "1000");
        assert_eq!(RequestRate::new(0.1).unwrap().to_string(), "0.1");
    }

    proptest! {
        #[test]
        fn display_round_trips(r in 1e-9f64..=MAX) {
            let rate = RequestRate::new(r).unwrap();
            prop_assert_eq!(rate.to_string().parse::<RequestRate>(), Ok(rate));
        }
    }
}
