//! `--fail-if` conditions for CI: `p99<50ms`, `p99.9<=200ms`, `max<1s`, `errors<0.1%`,
//! `errors<=3`, `rps>=1000`. Each states what must be true of the run, as k6's thresholds do:
//! `--fail-if 'p99<50ms'` fails the run (exit code 3) unless p99 is under 50 ms. Latency
//! metrics read the latency from the intended start (`total`), the one a user saw.

use std::fmt;
use std::str::FromStr;

use herd_stats::units::TimeSpan;

use crate::report::StepReport;
use crate::report::QUANTILES;
use crate::summary::micros;

/// One parsed condition; displays as given (whitespace removed), which parses back to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    text: String,
    metric: Metric,
    op: Op,
    value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    /// Latency quantile of `total` (from the intended start), in µs.
    Quantile(f64),
    Max,
    /// Failed requests: a count, or with `%` a share of all requests.
    Errors {
        percent: bool,
    },
    Rps,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const SYNTAX: &str = "use METRIC OP VALUE, e.g. p99<50ms, max<=1s, errors<0.1%, errors<=3, \
                      rps>=1000 (metrics: p50 p90 p99 p99.9 p99.99 max errors rps)";

impl FromStr for Threshold {
    type Err = String;

    fn from_str(s: &str) -> Result<Threshold, String> {
        parse(s)
    }
}

/// Parses one `--fail-if` value.
pub fn parse(s: &str) -> Result<Threshold, String> {
    let text: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let i = text.find(['<', '>']).ok_or_else(|| format!("`{s}`: no comparison; {SYNTAX}"))?;
    let (name, rest) = text.split_at(i);
    let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
        (Op::Le, v)
    } else if let Some(v) = rest.strip_prefix(">=") {
        (Op::Ge, v)
    } else if let Some(v) = rest.strip_prefix('<') {
        (Op::Lt, v)
    } else {
        (Op::Gt, &rest[1..])
    };
    let bad = || format!("`{s}`: {SYNTAX}");
    let (metric, value) = match name {
        "p50" | "p90" | "p99" | "p99.9" | "p99.99" | "max" => {
            // The same quantiles the summary prints, so a threshold and the table agree.
            let metric = match QUANTILES.iter().find(|(n, _)| *n == name) {
                Some(&(_, q)) => Metric::Quantile(q),
                None => Metric::Max,
            };
            let d = value.parse::<TimeSpan>().map_err(|e| format!("`{s}`: {e}"))?;
            (metric, d.get().as_secs_f64() * 1e6)
        }
        "errors" => match value.strip_suffix('%') {
            Some(p) => (Metric::Errors { percent: true }, p.parse::<f64>().map_err(|_| bad())?),
            None => (Metric::Errors { percent: false }, value.parse::<f64>().map_err(|_| bad())?),
        },
        "rps" => (Metric::Rps, value.parse::<f64>().map_err(|_| bad())?),
        _ => return Err(bad()),
    };
    if !value.is_finite() || value < 0.0 {
        return Err(bad());
    }
    Ok(Threshold { text, metric, op, value })
}

impl Threshold {
    /// The measured value and whether the condition holds of `r` (a whole run, or a
    /// stepped run's last step).
    pub fn check(&self, r: &StepReport) -> (String, bool) {
        let failed = r.requests.failed as f64;
        let all = r.requests.completed as f64 + failed;
        let total = &r.latency_us.total;
        let (measured, shown) = match self.metric {
            Metric::Quantile(q) => {
                let us = total.quantile(q).unwrap_or(0);
                (us as f64, micros(us))
            }
            Metric::Max => {
                let us = total.max().unwrap_or(0);
                (us as f64, micros(us))
            }
            Metric::Errors { percent: true } => {
                let p = if all > 0.0 { failed / all * 100.0 } else { 0.0 };
                (p, format!("{p:.3}%"))
            }
            Metric::Errors { percent: false } => (failed, format!("{failed}")),
            Metric::Rps => {
                let rps = r.requests.per_second;
                (rps, format!("{rps:.1}"))
            }
        };
        let holds = match self.op {
            Op::Lt => measured < self.value,
            Op::Le => measured <= self.value,
            Op::Gt => measured > self.value,
            Op::Ge => measured >= self.value,
        };
        (shown, holds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let t = parse("p99 < 50ms").unwrap();
        assert_eq!((t.metric, t.op, t.value), (Metric::Quantile(0.99), Op::Lt, 50_000.0));
        let t = parse("p99.9<=1s").unwrap();
        assert_eq!((t.metric, t.op, t.value), (Metric::Quantile(0.999), Op::Le, 1e6));
        assert_eq!(parse("errors<0.1%").unwrap().metric, Metric::Errors { percent: true });
        assert_eq!(parse("errors<=3").unwrap().value, 3.0);
        assert_eq!(parse("rps>=1000").unwrap().op, Op::Ge);
        for bad in ["p99", "p98<1s", "errors<x", "rps>-1", "latency<1s", "p99<1x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn checks() {
        let mut r = herd_record::RunRecorder::new(None, Default::default());
        for us in [100, 200, 300] {
            r.core.count_response(200, 0, 0, 0, false);
            r.core.total.record_micros(us);
        }
        r.core.count_failure(herd_stats::FailureKind::Timeout, 0, 0);
        let report = crate::step_result::tests::report_of(&r, std::time::Duration::from_secs(1));
        assert!(parse("max<301us").unwrap().check(&report).1);
        assert!(!parse("max<300us").unwrap().check(&report).1);
        assert!(parse("errors<=1").unwrap().check(&report).1);
        assert!(!parse("errors<25%").unwrap().check(&report).1);
        assert!(parse("rps>=3").unwrap().check(&report).1);
        assert!(!parse("rps>=3.1").unwrap().check(&report).1);
    }

    #[test]
    fn displays_as_given_and_parses_back() {
        for text in ["p99<50ms", "p99.9<=1s", "errors<0.1%", "errors<=3", "rps>=1000", "max>2s"] {
            let t = parse(text).unwrap();
            assert_eq!(t.to_string(), text);
            assert_eq!(t.to_string().parse::<Threshold>(), Ok(t));
        }
        assert_eq!(parse("p99 < 50ms").unwrap().to_string(), "p99<50ms");
    }
}
