//! A latency histogram in herd.run.v1: just the count when empty, otherwise the figures a
//! reader wants at a glance (min, mean, p50 … p99.99, max) and the histogram itself (`hdr`,
//! `herd_stats::hdr` in base64), from which any other percentile can be computed or runs
//! merged. Reading it back checks that the figures and the histogram agree on the count.

use hdrhistogram::Histogram;
use herd_stats::{LatencyHistogram, LatencySeries};
use serde::{Deserialize, Serialize};

/// The quantiles every herd.run.v1 histogram and every summary table shows, with their names.
pub const QUANTILES: [(&str, f64); 5] =
    [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999)];

/// One latency series of a run, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Wire", into = "Wire")]
pub struct LatencySummary {
    /// None when nothing was measured.
    figures: Option<LatencyFigures>,
}

/// A non-empty histogram's figures, in µs.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyFigures {
    pub min: u64,
    pub mean: f64,
    /// p50, p90, p99, p99.9, p99.99 ([`QUANTILES`]).
    pub quantiles: [u64; 5],
    pub max: u64,
    pub hdr: Histogram<u64>,
}

impl LatencySummary {
    /// The summary of `h` (its figures and a copy of the histogram).
    pub fn of(h: &LatencyHistogram) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary { figures: None };
        }
        LatencySummary {
            figures: Some(LatencyFigures {
                min: h.min_micros(),
                mean: h.mean_micros(),
                quantiles: QUANTILES.map(|(_, q)| h.quantile_micros(q)),
                max: h.max_micros(),
                hdr: h.histogram().clone(),
            }),
        }
    }

    pub fn count(&self) -> u64 {
        self.figures.as_ref().map_or(0, |f| f.hdr.len())
    }

    pub fn is_empty(&self) -> bool {
        self.figures.is_none()
    }

    pub fn figures(&self) -> Option<&LatencyFigures> {
        self.figures.as_ref()
    }

    /// The histogram itself; None when empty.
    pub fn histogram(&self) -> Option<&Histogram<u64>> {
        self.figures.as_ref().map(|f| &f.hdr)
    }

    /// The value at quantile `q` in µs, from the histogram; None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        self.histogram().map(|h| h.value_at_quantile(q))
    }

    pub fn max(&self) -> Option<u64> {
        self.figures.as_ref().map(|f| f.max)
    }
}

/// The five series of a run, as herd.run.v1's `latency_us` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latencies {
    pub total: LatencySummary,
    pub total_from_send: LatencySummary,
    pub connect: LatencySummary,
    pub first_byte: LatencySummary,
    pub queued: LatencySummary,
}

impl Latencies {
    pub fn get(&self, series: LatencySeries) -> &LatencySummary {
        match series {
            LatencySeries::Total => &self.total,
            LatencySeries::TotalFromSend => &self.total_from_send,
            LatencySeries::Connect => &self.connect,
            LatencySeries::FirstByte => &self.first_byte,
            LatencySeries::Queued => &self.queued,
        }
    }
}

/// The histogram object as written.
#[derive(Serialize, Deserialize)]
struct Wire {
    count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p50: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p90: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p99: Option<u64>,
    #[serde(rename = "p99.9", skip_serializing_if = "Option::is_none")]
    p99_9: Option<u64>,
    #[serde(rename = "p99.99", skip_serializing_if = "Option::is_none")]
    p99_99: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hdr_text")]
    hdr: Option<Histogram<u64>>,
}

impl From<LatencySummary> for Wire {
    fn from(s: LatencySummary) -> Wire {
        match s.figures {
            None => Wire {
                count: 0,
                min: None,
                mean: None,
                p50: None,
                p90: None,
                p99: None,
                p99_9: None,
                p99_99: None,
                max: None,
                hdr: None,
            },
            Some(f) => {
                let [p50, p90, p99, p99_9, p99_99] = f.quantiles.map(Some);
                Wire {
                    count: f.hdr.len(),
                    min: Some(f.min),
                    mean: Some(f.mean),
                    p50,
                    p90,
                    p99,
                    p99_9,
                    p99_99,
                    max: Some(f.max),
                    hdr: Some(f.hdr),
                }
            }
        }
    }
}

impl TryFrom<Wire> for LatencySummary {
    type Error = String;

    fn try_from(w: Wire) -> Result<LatencySummary, String> {
        if w.count == 0 {
            return Ok(LatencySummary { figures: None });
        }
        let need = |v: Option<u64>, name: &str| {
            v.ok_or_else(|| format!("a histogram of {} values has no `{name}`", w.count))
        };
        let hdr = w.hdr.ok_or_else(|| {
            format!(
                "a histogram of {} values has no `hdr` (a herd from before it? rebuild herd)",
                w.count
            )
        })?;
        if hdr.len() != w.count {
            return Err(format!("`hdr` holds {} values where `count` says {}", hdr.len(), w.count));
        }
        Ok(LatencySummary {
            figures: Some(LatencyFigures {
                min: need(w.min, "min")?,
                mean: w
                    .mean
                    .ok_or_else(|| format!("a histogram of {} values has no `mean`", w.count))?,
                quantiles: [
                    need(w.p50, "p50")?,
                    need(w.p90, "p90")?,
                    need(w.p99, "p99")?,
                    need(w.p99_9, "p99.9")?,
                    need(w.p99_99, "p99.99")?,
                ],
                max: need(w.max, "max")?,
                hdr,
            }),
        })
    }
}

/// `Option<Histogram>` as its base64 text (`herd_stats::hdr`).
mod hdr_text {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        h: &Option<Histogram<u64>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match h {
            Some(h) => herd_stats::hdr::base64_text::serialize(h, s),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Histogram<u64>>, D::Error> {
        let text = Option::<std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.map(|t| herd_stats::hdr::from_base64(&t).map_err(serde::de::Error::custom)).transpose()
    }
}
