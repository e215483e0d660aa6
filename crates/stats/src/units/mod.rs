//! Units as users type them, written once: every flag, experiment key, link setting and argv
//! builder parses and prints them here, so `link = "1.5mbit"` in an experiment file and
//! `--bandwidth 1.5mbit` on the command line mean the same, and what herd writes into a command
//! line reads back as the same value.
//!
//! - [`TimeSpan`]: `10s`, `500ms`, `250us`, `1.5s`, `2m`, `1h`; a bare number is seconds.
//! - [`BitRate`]: `400kbit`, `1.5mbit`, `56k`, `9600bit`, `1gbit` (SI: k = 1,000), and the
//!   profiles `modem-28.8k`, `modem-56k`, `specweb99`.
//! - [`ByteSize`]: `6397`, `4Ki`, `1Mi`, `1G` (binary: k = 1,024).
//! - [`RequestRate`]: requests per second, `1000`, `2500.5`, `1000/s`.
//!
//! Each has `FromStr` (the error says what is accepted) and `Display` (a canonical spelling)
//! that round-trip: `x.to_string().parse() == Ok(x)` for every value (property tests below).
//! Decimals are read exactly, digit by digit, not through `f64`, so `1.1s` is 1.1 s to the
//! nanosecond. Crates exist (humantime, bytesize, parse-size) but take other spellings:
//! humantime refuses `1.5s` and bare numbers, bytesize reads k as 1,000.

mod bit_rate;
mod byte_size;
mod decimal;
mod request_rate;
mod time_span;

pub use bit_rate::BitRate;
pub use byte_size::{ByteSize, ByteSizeError};
pub use request_rate::RequestRate;
pub use time_span::TimeSpan;

use std::time::Duration;

/// Parses a duration (`10s`, `500ms`, a bare number of seconds) into a std `Duration`: the
/// same as `s.parse::<TimeSpan>()`, for callers that want the std type.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    s.parse::<TimeSpan>().map(Duration::from)
}

/// Implements `serde::{Serialize, Deserialize}` through `Display` and `FromStr`, so a unit
/// reads and writes as the same text in JSON and TOML as on the command line.
macro_rules! serde_as_text {
    ($t:ty, $expecting:literal) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visit;
                impl serde::de::Visitor<'_> for Visit {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(Visit)
            }
        }
    };
}
pub(crate) use serde_as_text;
