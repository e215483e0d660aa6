//! The figures in Prometheus's text exposition format (0.0.4, which every Prometheus and
//! OpenMetrics scraper reads): counters since the start, a histogram of every latency with
//! fixed buckets, the last second's rate and percentiles, the client's own CPU time. Each
//! series carries the run's labels; a failure kind that did not happen is still there, at 0,
//! so that a dashboard's series exist from the first scrape. `promtool check metrics` passes
//! it (tests/it/run_metrics.rs).

use std::fmt::Write as _;

use herd_stats::FailureKind;

use super::figures::{Labels, LiveFigures};

/// The latency histogram's bucket bounds, in seconds: 100 µs to 10 s, 1-2.5-5 a decade.
pub const BUCKETS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// The last second's percentiles, as a summary's quantiles.
const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// The metrics page: `f`, and the client's CPU seconds so far if known.
pub fn render(f: &LiveFigures, cpu_seconds: Option<f64>) -> String {
    let l = labels(&f.labels);
    let mut out = String::with_capacity(4096);
    family(
        &mut out,
        "herd_requests_completed_total",
        "counter",
        "Requests answered, whatever the status, since the run's measurement start.",
    );
    let _ = writeln!(out, "herd_requests_completed_total{{{l}}} {}", f.completed);
    family(
        &mut out,
        "herd_requests_failed_total",
        "counter",
        "Requests that failed, by kind (docs/run.md), since the measurement start.",
    );
    for kind in FailureKind::ALL {
        let _ = writeln!(
            out,
            "herd_requests_failed_total{{{l},kind=\"{}\"}} {}",
            kind.name(),
            f.failures.get(kind)
        );
    }
    family(
        &mut out,
        "herd_bytes_read_total",
        "counter",
        "Bytes read by requests that ended, failures included.",
    );
    let _ = writeln!(out, "herd_bytes_read_total{{{l}}} {}", f.bytes_read);
    family(
        &mut out,
        "herd_requests_sent_late_total",
        "counter",
        "Completed requests sent 1 ms or more behind their schedule while a connection was free: the client's own lag (0 in a closed loop).",
    );
    let _ = writeln!(out, "herd_requests_sent_late_total{{{l}}} {}", f.late_sends);
    family(
        &mut out,
        "herd_connections_open",
        "gauge",
        "Connections open (connecting or connected) at the end of the last whole second, every worker's.",
    );
    let _ = writeln!(out, "herd_connections_open{{{l}}} {}", f.open_connections);

    family(&mut out, "herd_request_duration_seconds", "histogram", "Latency from each request's intended send to the end of its response (coordinated omission corrected), every completed request since the start.");
    let h = f.latency.histogram();
    for bound in BUCKETS {
        let us = (bound * 1e6) as u64;
        let n = if h.is_empty() { 0 } else { h.count_between(0, us) };
        let _ = writeln!(out, "herd_request_duration_seconds_bucket{{{l},le=\"{bound}\"}} {n}");
    }
    let count = f.latency.len();
    let _ = writeln!(out, "herd_request_duration_seconds_bucket{{{l},le=\"+Inf\"}} {count}");
    let sum = seconds(f.latency.mean_micros() * count as f64);
    let _ = writeln!(out, "herd_request_duration_seconds_sum{{{l}}} {sum}");
    let _ = writeln!(out, "herd_request_duration_seconds_count{{{l}}} {count}");

    family(
        &mut out,
        "herd_last_second_requests_per_second",
        "gauge",
        "Requests completed in the last whole second.",
    );
    let _ = writeln!(out, "herd_last_second_requests_per_second{{{l}}} {}", f.last_rate);
    family(
        &mut out,
        "herd_last_second_latency_seconds",
        "summary",
        "The last whole second's latency percentiles (from the intended send).",
    );
    let last = &f.last_latency;
    for q in QUANTILES {
        let v = if last.is_empty() { 0.0 } else { seconds(last.quantile_micros(q) as f64) };
        let _ = writeln!(out, "herd_last_second_latency_seconds{{{l},quantile=\"{q}\"}} {v}");
    }
    let last_sum = seconds(last.mean_micros() * last.len() as f64);
    let _ = writeln!(out, "herd_last_second_latency_seconds_sum{{{l}}} {last_sum}");
    let _ = writeln!(out, "herd_last_second_latency_seconds_count{{{l}}} {}", last.len());

    if let Some(cpu) = cpu_seconds {
        family(
            &mut out,
            "herd_client_cpu_seconds_total",
            "counter",
            "CPU time herd's process has used, user and system, all its threads.",
        );
        let _ = writeln!(out, "herd_client_cpu_seconds_total{{{l}}} {cpu}");
    }
    if let Some(step) = f.step {
        family(
            &mut out,
            "herd_run_step",
            "gauge",
            "The step of a stepped run the last second belongs to (from 1).",
        );
        let _ = writeln!(out, "herd_run_step{{{l}}} {step}");
    }
    family(
        &mut out,
        "herd_run_finished",
        "gauge",
        "1 once the run is over and these are its final figures.",
    );
    let _ = writeln!(out, "herd_run_finished{{{l}}} {}", u8::from(f.finished));
    out
}

/// A metric family's HELP and TYPE lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn seconds(us: f64) -> f64 {
    if us.is_finite() {
        us / 1e6
    } else {
        0.0
    }
}

/// `run="…"` and the other labels present, escaped as the format asks.
fn labels(l: &Labels) -> String {
    let mut s = format!("run=\"{}\"", escape(&l.run));
    if let Some(v) = &l.agent {
        let _ = write!(s, ",agent=\"{}\"", escape(v));
    }
    for (name, v) in &l.extra {
        let _ = write!(s, ",{name}=\"{}\"", escape(v));
    }
    s
}

/// A label value: backslash, double quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use herd_record::Interval;

    use super::*;
    use crate::RunSecond;

    #[test]
    fn labels_are_escaped() {
        let l = Labels {
            run: "a\"b\\c\nd".into(),
            agent: Some("0".into()),
            extra: vec![("cell".into(), "server=herd load=n".into())],
        };
        assert_eq!(labels(&l), "run=\"a\\\"b\\\\c\\nd\",agent=\"0\",cell=\"server=herd load=n\"");
    }

    #[test]
    fn the_page_counts_what_the_seconds_said() {
        let mut f = LiveFigures::new(Labels { run: "r".into(), ..Labels::default() });
        let mut interval = Interval::default();
        for us in [50, 300, 300, 20_000] {
            interval.completed += 1;
            interval.latency.record_micros(us);
        }
        interval.failed = 1;
        interval.failures.add(FailureKind::Connect);
        f.add(None, &RunSecond { second: 0, length: Duration::from_secs(1), interval });
        let page = render(&f, Some(1.5));
        for line in [
            "herd_requests_completed_total{run=\"r\"} 4",
            "herd_requests_failed_total{run=\"r\",kind=\"connect\"} 1",
            "herd_requests_failed_total{run=\"r\",kind=\"timeout\"} 0",
            "herd_request_duration_seconds_bucket{run=\"r\",le=\"0.0001\"} 1",
            "herd_request_duration_seconds_bucket{run=\"r\",le=\"0.0005\"} 3",
            "herd_request_duration_seconds_bucket{run=\"r\",le=\"0.025\"} 4",
            "herd_request_duration_seconds_bucket{run=\"r\",le=\"+Inf\"} 4",
            "herd_request_duration_seconds_count{run=\"r\"} 4",
            "herd_last_second_requests_per_second{run=\"r\"} 4",
            "herd_client_cpu_seconds_total{run=\"r\"} 1.5",
            "herd_run_finished{run=\"r\"} 0",
        ] {
            assert!(page.lines().any(|l| l == line), "no `{line}` in:\n{page}");
        }
        assert!(!page.contains("herd_run_step"), "not a stepped run");
        // Every sample line belongs to a family declared above it.
        let mut declared = Vec::new();
        for line in page.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                declared.push(rest.split(' ').next().unwrap().to_owned());
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap();
                assert!(declared.iter().any(|d| name.starts_with(d.as_str())), "{name} undeclared");
            }
        }
    }
}
