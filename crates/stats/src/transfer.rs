//! How a recorder's counts travel between processes: the agents of a spread run send theirs
//! to the coordinator, which adds them up (`+=`) as it adds up one process's workers. Every
//! count goes whole, so the sum is the one a single recorder would hold.
//!
//! A latency histogram goes in the one encoding ([`crate::hdr`], base64) with its clamped
//! count. It must be of herd's one configuration (1 µs lowest, 3 significant digits, at most
//! an hour): only then is the sum of two histograms an element-wise, exact addition. A
//! histogram of any other configuration is refused, with what it was.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::latency::MAX_MICROS;
use crate::{hdr, FailureKind, Failures, LatencyHistogram, StatusCounts};

/// A histogram on the wire.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistogramWire {
    hdr: String,
    clamped: u64,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let hdr = hdr::to_base64(self.histogram()).map_err(serde::ser::Error::custom)?;
        HistogramWire { hdr, clamped: self.clamped() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LatencyHistogram, D::Error> {
        let wire = HistogramWire::deserialize(d)?;
        let h = hdr::from_base64(&wire.hdr).map_err(D::Error::custom)?;
        LatencyHistogram::from_received(&h, wire.clamped).map_err(D::Error::custom)
    }
}

/// Why a received histogram cannot be added to herd's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a histogram of another configuration (lowest {low}, highest {high}, {sigfig} significant \
     digits): herd records 1 µs to {MAX_MICROS} µs at 3 digits, and only such histograms add \
     up exactly; run the same herd on every agent"
)]
pub struct OtherConfiguration {
    pub low: u64,
    pub high: u64,
    pub sigfig: u8,
}

/// Failure counts on the wire: by name, only the kinds that happened.
impl Serialize for Failures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            FailureKind::ALL.iter().filter(|k| self.get(**k) > 0).map(|k| (k.name(), self.get(*k))),
        )
    }
}

impl<'de> Deserialize<'de> for Failures {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Failures, D::Error> {
        let map = std::collections::BTreeMap::<String, u64>::deserialize(d)?;
        let mut f = Failures::default();
        for (name, n) in map {
            let kind = FailureKind::ALL
                .iter()
                .find(|k| k.name() == name)
                .ok_or_else(|| D::Error::custom(format!("no failure kind is called `{name}`")))?;
            f.add_n(*kind, n);
        }
        Ok(f)
    }
}

/// Status counts on the wire: `{"200": n, …}`, only the statuses seen.
impl Serialize for StatusCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter().map(|(status, n)| (status.to_string(), n)))
    }
}

impl<'de> Deserialize<'de> for StatusCounts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StatusCounts, D::Error> {
        let map = std::collections::BTreeMap::<String, u64>::deserialize(d)?;
        let mut counts = StatusCounts::default();
        for (text, n) in map {
            let status = text
                .parse::<u16>()
                .ok()
                .filter(|s| (100..=999).contains(s))
                .ok_or_else(|| D::Error::custom(format!("`{text}` is no HTTP status")))?;
            counts.add_n(status, n);
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use crate::RunStats;

    use super::*;

    fn full() -> RunStats {
        let mut s = RunStats::new();
        s.count_response(200, 100, 40, 60, false);
        s.count_response(503, 90, 40, 50, true);
        s.count_failure(FailureKind::Timeout, 7, 40);
        s.count_failure(FailureKind::GoAway, 0, 40);
        s.connect.record_micros(30);
        for us in [1, 500, 900, 65_000, 7_200_000_000] {
            s.total.record_micros(us);
        }
        s
    }

    #[test]
    fn run_stats_come_back_whole() {
        let s = full();
        let text = serde_json::to_string(&s).unwrap();
        let back: RunStats = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.total.clamped(), 1);
        assert!(text.contains(r#""goaway":1"#), "{text}");
        assert!(text.contains(r#""503":1"#), "{text}");
    }

    #[test]
    fn split_recorders_sent_and_added_are_one_recorder() {
        // The same samples recorded by one recorder, and spread over three that travel.
        let mut one = LatencyHistogram::new();
        let mut parts = [LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new()];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..30_000u64 {
            // xorshift: latencies over five decades.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let us = 1 + x % 10u64.pow(1 + (x % 5) as u32);
            one.record_micros(us);
            parts[(i % 3) as usize].record_micros(us);
        }
        let mut sum = LatencyHistogram::new();
        for p in &parts {
            let text = serde_json::to_string(p).unwrap();
            let back: LatencyHistogram = serde_json::from_str(&text).unwrap();
            sum += &back;
        }
        assert_eq!(sum, one);
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(sum.quantile_micros(q), one.quantile_micros(q), "q {q}");
        }
    }

    #[test]
    fn a_growing_histogram_travels_and_adds_exactly() {
        let mut g = LatencyHistogram::growing();
        for us in [3, 40, 5_000] {
            g.record_micros(us);
        }
        let back: LatencyHistogram =
            serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        let mut fixed = LatencyHistogram::new();
        fixed += &back;
        let mut want = LatencyHistogram::new();
        want += &g;
        assert_eq!(fixed, want);
    }

    #[test]
    fn another_configuration_is_refused_and_named() {
        let h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000_000, 2).unwrap();
        let text = format!(r#"{{"hdr":"{}","clamped":0}}"#, hdr::to_base64(&h).unwrap());
        let e = serde_json::from_str::<LatencyHistogram>(&text).unwrap_err().to_string();
        assert!(e.contains("lowest 1, highest 1000000, 2 significant digits"), "{e}");
    }

    #[test]
    fn hostile_counts_are_refused() {
        for (text, want) in
            [(r#"{"999999":1}"#, "is no HTTP status"), (r#"{"abc":1}"#, "is no HTTP status")]
        {
            let e = serde_json::from_str::<StatusCounts>(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let e = serde_json::from_str::<Failures>(r#"{"melted":2}"#).unwrap_err().to_string();
        assert!(e.contains("no failure kind is called `melted`"), "{e}");
        let e = serde_json::from_str::<LatencyHistogram>(r#"{"hdr":"!!","clamped":0}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("base64"), "{e}");
    }
}
