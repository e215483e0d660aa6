//! A rate in bits per second, as links and receive caps are given.

use std::fmt;
use std::str::FromStr;

use super::decimal::{largest_exact, split_unit, Decimal};

/// Bits per second, from 8 (a byte a second) to 1,000 gbit/s. Parsed from `400kbit`,
/// `400kbit/s`, `1.5mbit`, `28.8k` (k, m and g alone mean kbit, mbit and gbit; SI, so k is
/// 1,000), `9600bit`, any case, or a profile: `modem-28.8k` (28,800), `modem-56k` (56,000),
/// `specweb99` (400 kbit/s, SPECweb99's client link). Displays as tc writes rates, in the
/// largest unit that holds it exactly: `1500kbit`, `100mbit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(u64);

const MIN: u64 = 8;
const MAX: u64 = 1_000_000_000_000;

impl BitRate {
    /// `bits_per_second` when it is within 8 bit/s to 1,000 gbit/s.
    pub fn new(bits_per_second: u64) -> Option<BitRate> {
        (MIN..=MAX).contains(&bits_per_second).then_some(BitRate(bits_per_second))
    }

    pub fn bits_per_second(self) -> u64 {
        self.0
    }

    /// Whole bytes per second (at least 1): what a receive cap paces reads to.
    pub fn bytes_per_second(self) -> u64 {
        (self.0 / 8).max(1)
    }
}

impl FromStr for BitRate {
    type Err = String;

    fn from_str(s: &str) -> Result<BitRate, String> {
        let lower = s.trim().to_ascii_lowercase();
        let text = lower.strip_suffix("/s").unwrap_or(&lower);
        let bits = match text {
            "modem-28.8k" => 28_800,
            "modem-56k" => 56_000,
            "specweb99" => 400_000,
            _ => {
                let (number, unit) = split_unit(text);
                let scale: u128 = match unit {
                    "bit" | "b" => 1,
                    "k" | "kbit" => 1_000,
                    "m" | "mbit" => 1_000_000,
                    "g" | "gbit" => 1_000_000_000,
                    _ => return Err(help(s)),
                };
                let bits = Decimal::parse(number).ok_or_else(|| help(s))?.times(scale);
                bits.and_then(|b| u64::try_from(b).ok()).unwrap_or(u64::MAX)
            }
        };
        BitRate::new(bits).ok_or_else(|| format!("`{}`: a rate from 8 bit/s to 1000gbit", s.trim()))
    }
}

fn help(s: &str) -> String {
    format!(
        "`{}`: a rate in bits per second, e.g. 400kbit, 1.5mbit, 100mbit, 56k, or a profile: \
         modem-28.8k, modem-56k, specweb99",
        s.trim()
    )
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [("gbit", 1_000_000_000), ("mbit", 1_000_000), ("kbit", 1_000), ("bit", 1)];
        f.write_str(&largest_exact(u128::from(self.0), &units))
    }
}

super::serde_as_text!(BitRate, "a bit rate such as 100mbit or 400kbit");

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn bits(s: &str) -> Result<u64, String> {
        s.parse::<BitRate>().map(BitRate::bits_per_second)
    }

    #[test]
    fn spellings() {
        assert_eq!(bits("400kbit"), Ok(400_000));
        assert_eq!(bits("400kbit/s"), Ok(400_000));
        assert_eq!(bits("1.5mbit"), Ok(1_500_000));
        assert_eq!(bits("1.5Mbit"), Ok(1_500_000));
        assert_eq!(bits("28.8k"), Ok(28_800));
        assert_eq!(bits("100mbit"), Ok(100_000_000));
        assert_eq!(bits("1gbit"), Ok(1_000_000_000));
        assert_eq!(bits("modem-56k"), Ok(56_000));
        assert_eq!(bits("modem-28.8k"), Ok(28_800));
        assert_eq!(bits("SPECweb99"), Ok(400_000));
        assert_eq!(bits("9600bit"), Ok(9600));
        assert!(bits("400kb/s").unwrap_err().contains("e.g. 400kbit"));
        assert!(bits("0k").unwrap_err().contains("from 8 bit/s"));
        assert!(bits("7bit").is_err());
        assert!(bits("1001gbit").is_err());
        assert!(bits("99999999999999999999999999999gbit").unwrap_err().contains("from 8 bit/s"));
        assert!(bits("fast").is_err());
        assert!(bits("").is_err());
    }

    #[test]
    fn displays_as_tc_writes_rates() {
        let show = |b| BitRate::new(b).map(|r| r.to_string());
        assert_eq!(show(1_500_000).as_deref(), Some("1500kbit"));
        assert_eq!(show(100_000_000).as_deref(), Some("100mbit"));
        assert_eq!(show(28_800).as_deref(), Some("28800bit"));
        assert_eq!(show(2_000_000_000).as_deref(), Some("2gbit"));
        assert_eq!(BitRate::new(56_000).unwrap().bytes_per_second(), 7_000);
        assert_eq!(BitRate::new(12).unwrap().bytes_per_second(), 1);
    }

    proptest! {
        #[test]
        fn display_round_trips(b in MIN..=MAX) {
            let r = BitRate::new(b).unwrap();
            prop_assert_eq!(r.to_string().parse::<BitRate>(), Ok(r));
        }

        #[test]
        fn any_text_parses_or_explains(s in "\\PC{0,14}") {
            if let Ok(r) = s.parse::<BitRate>() {
                prop_assert_eq!(r.to_string().parse::<BitRate>(), Ok(r));
            }
        }
    }
}
