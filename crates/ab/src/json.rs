//! `herd ab --json FILE`: the full result of an ab run as JSON, shape `herd.ab.v1`
//! (documented in docs/ab-json.md).
//!
//! These are boundary types: they change only with a new format version, whatever the
//! engine's or the report's internals do.

use std::collections::BTreeMap;
use std::io::Write;

use herd_engine::Resolved;
use herd_stats::{FailureKind, LatencyHistogram};
use serde::Serialize;

use crate::account::AbStats;
use crate::{AbConfig, AbResults, Sample};

pub const FORMAT: &str = "herd.ab.v1";

#[derive(Debug, Serialize)]
pub struct AbJson {
    pub format: &'static str,
    pub herd_version: &'static str,
    pub target: Target,
    pub settings: Settings,
    pub results: Results,
    /// Exact figures over every completed request, in microseconds.
    pub timings_us: BTreeMap<&'static str, Timing>,
    /// Response counts by status code.
    pub statuses: BTreeMap<String, u64>,
    /// herd's failure taxonomy (finer than ab's four sub-counters).
    pub failures_by_kind: BTreeMap<&'static str, u64>,
    /// Which event-loop backend measured.
    pub io: Io,
}

/// Which event-loop backend measured (`settings.io` is what was asked).
#[derive(Debug, Serialize)]
pub struct Io {
    /// `epoll` or `io_uring`.
    pub backend: &'static str,
    /// Why `--io auto` did not take io_uring, in one line; null when nothing fell back.
    pub fallback: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Target {
    pub url: String,
    pub hostname: String,
    pub port: u16,
    pub path: String,
    pub tls: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Settings {
    pub requests: u64,
    pub concurrency: u32,
    pub time_limit_s: Option<f64>,
    pub timeout_s: f64,
    pub keepalive: bool,
    pub method: String,
    pub threads: Option<u32>,
    /// `--io` as asked: `auto`, `epoll` or `uring`.
    pub io: &'static str,
}

#[derive(Debug, Serialize)]
pub struct Results {
    pub server_software: String,
    pub document_length: Option<u64>,
    pub time_taken_s: f64,
    pub complete_requests: u64,
    pub failed_requests: u64,
    pub failed_connect: u64,
    pub failed_receive: u64,
    pub failed_length: u64,
    pub failed_exceptions: u64,
    pub write_errors: u64,
    pub non_2xx_responses: u64,
    pub keep_alive_requests: u64,
    pub total_transferred_bytes: u64,
    pub total_body_sent_bytes: u64,
    pub html_transferred_bytes: u64,
    pub requests_per_second: Option<f64>,
    pub transfer_rate_kib_per_s: Option<f64>,
}

/// One row of ab's Connection Times table, unrounded, plus nearest-rank percentiles.
#[derive(Debug, Serialize, PartialEq)]
pub struct Timing {
    pub min: i64,
    pub mean: f64,
    pub sd: f64,
    pub max: i64,
    /// Nearest-rank percentiles (the textbook rule, not ab's median quirk).
    pub percentiles: BTreeMap<String, i64>,
    /// From the merged HdrHistogram (3 significant digits), for cross-checking.
    pub hdr_p99: Option<u64>,
}

/// Writes an ab run to `out` as pretty-printed JSON. Every field is plain data, so it fails
/// only when `out` does; the error is returned to the caller to report, never written into
/// the document in place of the results.
pub fn write_json(
    out: impl Write,
    r: &AbResults,
    stats: &AbStats,
    cfg: &AbConfig,
    io: &Resolved,
) -> serde_json::Result<()> {
    serde_json::to_writer_pretty(out, &document(r, stats, cfg, io))
}

fn document(r: &AbResults, stats: &AbStats, cfg: &AbConfig, io: &Resolved) -> AbJson {
    let rate = |x: f64| (r.time_taken_s > 0.0 && r.done > 0).then(|| x / r.time_taken_s);
    AbJson {
        format: FORMAT,
        herd_version: env!("CARGO_PKG_VERSION"),
        target: Target {
            url: cfg.url.full.clone(),
            hostname: r.hostname.clone(),
            port: r.port,
            path: r.path.clone(),
            tls: r.tls.as_ref().map(|t| t.protocol.clone()),
        },
        settings: Settings {
            requests: cfg.requests,
            concurrency: cfg.concurrency,
            time_limit_s: cfg.time_limit.map(|d| d.as_secs_f64()),
            timeout_s: cfg.timeout.as_secs_f64(),
            keepalive: cfg.keepalive,
            method: cfg.method.clone(),
            threads: cfg.threads,
            io: cfg.io.as_str(),
        },
        results: Results {
            server_software: r.server_software.clone(),
            document_length: (!r.variable_length && r.done > 0).then_some(r.doclen),
            time_taken_s: r.time_taken_s,
            complete_requests: r.done,
            failed_requests: r.bad,
            failed_connect: r.err_conn,
            failed_receive: r.err_recv,
            failed_length: r.err_length,
            failed_exceptions: r.err_except,
            write_errors: r.epipe,
            non_2xx_responses: r.err_response,
            keep_alive_requests: r.doneka,
            total_transferred_bytes: r.total_read,
            total_body_sent_bytes: r.total_posted,
            html_transferred_bytes: r.total_body_read,
            requests_per_second: rate(r.done as f64),
            transfer_rate_kib_per_s: rate(r.total_read as f64 / 1024.0),
        },
        timings_us: [
            ("connect", timing(&r.samples, |s| s.ctime_us(), Some(&stats.core.connect))),
            ("processing", timing(&r.samples, |s| s.time_us() - s.ctime_us(), None)),
            ("waiting", timing(&r.samples, |s| s.wait_us(), Some(&stats.waiting))),
            ("total", timing(&r.samples, |s| s.time_us(), Some(&stats.core.total))),
        ]
        .into_iter()
        .collect(),
        statuses: stats.core.statuses.iter().map(|(s, n)| (s.to_string(), n)).collect(),
        failures_by_kind: FailureKind::HTTP1
            .iter()
            .map(|&k| (k.name(), stats.core.failures.get(k)))
            .collect(),
        io: Io { backend: io.backend.as_str(), fallback: io.why.clone() },
    }
}

fn timing(
    samples: &[Sample],
    key: impl Fn(&Sample) -> i64,
    hdr: Option<&LatencyHistogram>,
) -> Timing {
    let mut v: Vec<i64> = samples.iter().map(key).collect();
    v.sort_unstable();
    let n = v.len();
    let mean = if n > 0 { v.iter().map(|&x| x as f64).sum::<f64>() / n as f64 } else { 0.0 };
    let sd = if n > 1 {
        (v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let mut percentiles = BTreeMap::new();
    if n > 0 {
        for p in [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 100.0] {
            // Nearest rank: the smallest value with at least p% of samples at or below it.
            let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
            percentiles.insert(format!("p{p}"), v[rank.min(n) - 1]);
        }
    }
    Timing {
        min: v.first().copied().unwrap_or(0),
        mean,
        sd,
        max: v.last().copied().unwrap_or(0),
        percentiles,
        hdr_p99: hdr.filter(|h| !h.is_empty()).map(|h| h.quantile_micros(0.99)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that takes `room` bytes, then fails as a full disk does.
    struct Full {
        room: usize,
        taken: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.taken.len() + buf.len() > self.room {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.taken.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn config() -> AbConfig {
        let args = ["-n", "1", "http://127.0.0.1:8080/"].map(std::ffi::OsString::from);
        match crate::args::parse(&args) {
            Ok(crate::args::Parsed::Run(cfg)) => *cfg,
            other => panic!("{other:?}"),
        }
    }

    fn results() -> AbResults {
        AbResults {
            server_software: "herd".into(),
            hostname: "127.0.0.1".into(),
            port: 8080,
            tls: None,
            proxy: None,
            path: "/".into(),
            variable_length: false,
            doclen: 10,
            concurrency: 1,
            time_taken_s: 0.5,
            done: 1,
            bad: 0,
            err_conn: 0,
            err_recv: 0,
            err_length: 0,
            err_except: 0,
            epipe: 0,
            err_response: 0,
            keepalive: false,
            doneka: 0,
            total_read: 100,
            send_body: false,
            total_posted: 0,
            total_body_read: 10,
            samples: vec![Sample::new(0, 10, 100, 50)],
            show_percentiles: true,
            show_confidence: true,
            html: None,
        }
    }

    /// Before: the document was built in memory and a serialisation error replaced it with a
    /// made-up `{"error":"…"}` document, written as if it were the results. Now the error is
    /// the caller's, and what was written is a prefix of the real document, nothing else.
    #[test]
    fn a_failing_writer_is_an_error_not_a_document() {
        let (cfg, r, stats) = (config(), results(), AbStats::default());
        let io = epoll();
        let mut whole = Vec::new();
        write_json(&mut whole, &r, &stats, &cfg, &io).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(doc["format"], FORMAT);
        let mut full = Full { room: 64, taken: Vec::new() };
        let err = write_json(&mut full, &r, &stats, &cfg, &io).unwrap_err();
        assert!(err.is_io(), "{err}");
        assert!(whole.starts_with(&full.taken));
        assert!(!String::from_utf8_lossy(&full.taken).contains("\"error\""));
    }

    fn epoll() -> Resolved {
        Resolved {
            asked: herd_engine::IoChoice::Auto,
            backend: herd_engine::Backend::Epoll,
            why: Some("io_uring not yet for HTTP/1".into()),
        }
    }

    /// What `--io` asked goes with the settings; what measured, and why, beside the results.
    #[test]
    fn the_document_says_what_io_was_asked_and_what_measured() {
        let mut whole = Vec::new();
        write_json(&mut whole, &results(), &AbStats::default(), &config(), &epoll()).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(doc["settings"]["io"], "auto");
        assert_eq!(doc["io"]["backend"], "epoll");
        assert_eq!(doc["io"]["fallback"], "io_uring not yet for HTTP/1");
    }

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<Sample> = (1..=10).map(|t| Sample::new(0, 0, t, 0)).collect();
        let t = timing(&samples, |s| s.time_us(), None);
        assert_eq!(t.percentiles["p50"], 5);
        assert_eq!(t.percentiles["p90"], 9);
        assert_eq!(t.percentiles["p99"], 10);
        assert_eq!(t.min, 1);
        assert_eq!(t.max, 10);
        assert!((t.mean - 5.5).abs() < 1e-9);
    }
}
