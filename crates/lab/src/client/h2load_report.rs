//! h2load's text report (nghttp2 1.52, Debian's `nghttp2-client`), read into typed figures:
//! the `finished in` line, the request counts, the status classes, the traffic, the
//! min/max/mean of its time lines, and the `Application protocol:` it printed. Lines it
//! prints besides (progress, TLS details, `Process Request Failure:N` in a timed run) are
//! skipped; a line this parser needs and cannot read is an error that quotes it.
//!
//! What h2load's counts mean (nghttp2's `src/h2load.cc`, checked against runs here, see
//! tests/data/clients/README.md): `done` counts every stream that closed, with a whole
//! response or not; `succeeded` those closed with a 2xx or 3xx; `failed` everything else,
//! `errored` included; `errored` the streams that closed without a whole response *and* the
//! requests a client abandoned when its connection ended (never started, so not `done`);
//! `timeout` the requests in flight on a connection that timed out, which are `errored` too.
//! `total` is the requests asked (`-n`), or in a timed run the ones done. So the requests
//! that got a whole response, of any status, are `total − errored` in both kinds of run,
//! which is what its `req/s` counts. The status classes are counted as each response's head
//! arrives: in a timed run they include heads of responses still in flight at its end.

use std::time::Duration;

use super::error::excerpt;
use super::{ClientError, Tool};

/// The figures of one h2load report.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Report {
    /// `finished in`: the whole run (in a timed run, longer than its main duration).
    pub finished_in: Duration,
    /// The resolution `finished in` is printed with (two decimals of its unit).
    pub finished_in_resolution: Duration,
    /// h2load's own requests per second.
    pub requests_per_second: f64,
    pub total: u64,
    pub started: u64,
    pub done: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub errored: u64,
    pub timeout: u64,
    /// Responses by status class: 2xx, 3xx, 4xx, 5xx.
    pub classes: [u64; 4],
    pub bytes_total: u64,
    /// Header bytes as received (HPACK-compressed for HTTP/2).
    pub bytes_headers: u64,
    pub bytes_data: u64,
    /// `time for request`: from a request's HEADERS sent to its stream's end.
    pub request: Times,
    /// `time for connect`: TCP and TLS, per connection.
    pub connect: Times,
    /// `time to 1st byte`: once per connection, from its start.
    pub first_byte: Times,
    /// Every `Application protocol:` h2load printed (one per thread that connected).
    pub protocols: Vec<String>,
}

/// The min, max and mean of one of h2load's time lines (it prints no percentiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Times {
    pub min: Duration,
    pub max: Duration,
    pub mean: Duration,
}

impl Report {
    /// Reads h2load's stdout (`stderr` is quoted when the report is missing).
    pub(super) fn read(stdout: &str, stderr: &str) -> Result<Report, ClientError> {
        let r = Lines { stdout, stderr };
        let finished = r.after("finished in ")?;
        // `34.84ms, 8611.78 req/s, 53.59MB/s`
        let mut parts = finished.split(',').map(str::trim);
        let (Some(time), Some(rate)) = (parts.next(), parts.next()) else {
            return Err(r.unreadable("finished in", finished));
        };
        let (finished_in, finished_in_resolution) =
            duration(time).ok_or_else(|| r.unreadable("finished in", finished))?;
        let requests_per_second = rate
            .strip_suffix(" req/s")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| r.unreadable("finished in", finished))?;
        // `300 total, 300 started, 300 done, 300 succeeded, 0 failed, 0 errored, 0 timeout`
        let requests = r.after("requests: ")?;
        let count =
            |word: &str| counted(requests, word).ok_or_else(|| r.unreadable("requests", requests));
        // `300 2xx, 0 3xx, 0 4xx, 0 5xx`
        let statuses = r.after("status codes: ")?;
        let class = |word: &str| {
            counted(statuses, word).ok_or_else(|| r.unreadable("status codes", statuses))
        };
        // `1.87MB (1957696) total, 32.23KB (33000) headers (space savings 38.55%), 1.83MB (1919100) data`
        let traffic = r.after("traffic: ")?;
        let bytes =
            |word: &str| exact_bytes(traffic, word).ok_or_else(|| r.unreadable("traffic", traffic));
        Ok(Report {
            finished_in,
            finished_in_resolution,
            requests_per_second,
            total: count("total")?,
            started: count("started")?,
            done: count("done")?,
            succeeded: count("succeeded")?,
            failed: count("failed")?,
            errored: count("errored")?,
            timeout: count("timeout")?,
            classes: [class("2xx")?, class("3xx")?, class("4xx")?, class("5xx")?],
            bytes_total: bytes("total")?,
            bytes_headers: bytes("headers")?,
            bytes_data: bytes("data")?,
            request: r.times("time for request:")?,
            connect: r.times("time for connect:")?,
            first_byte: r.times("time to 1st byte:")?,
            protocols: stdout
                .lines()
                .filter_map(|l| l.strip_prefix("Application protocol:"))
                .map(|p| p.trim().to_owned())
                .collect(),
        })
    }

    /// Requests that got a whole response, of any status: what h2load's `req/s` counts.
    pub(super) fn completed(&self) -> u64 {
        self.total.saturating_sub(self.errored)
    }

    /// Whole responses not 2xx: those not `succeeded` (4xx, 5xx) and the 3xx, which h2load
    /// counts as succeeded (its 3xx class, counted at each head, may include one still in
    /// flight at the end of a timed run).
    pub(super) fn non_2xx(&self) -> u64 {
        self.completed().saturating_sub(self.succeeded) + self.classes[1]
    }
}

/// h2load's stdout, read a labelled line at a time.
struct Lines<'a> {
    stdout: &'a str,
    stderr: &'a str,
}

impl Lines<'_> {
    /// The rest of the line that starts with `label`.
    fn after(&self, label: &str) -> Result<&str, ClientError> {
        self.stdout.lines().find_map(|l| l.strip_prefix(label)).map(str::trim).ok_or_else(|| {
            ClientError::output(
                Tool::H2load,
                format!(
                    "printed no '{}' line; {}",
                    label.trim(),
                    excerpt(self.stdout, self.stderr)
                ),
            )
        })
    }

    /// `time for request:       64us     10.66ms      3.69ms      3.37ms    71.00%`
    fn times(&self, label: &str) -> Result<Times, ClientError> {
        let line = self.after(label)?;
        let mut words = line.split_whitespace().map(|w| duration(w).map(|(d, _)| d));
        match (words.next(), words.next(), words.next()) {
            (Some(Some(min)), Some(Some(max)), Some(Some(mean))) => Ok(Times { min, max, mean }),
            _ => Err(self.unreadable(label.trim_end_matches(':'), line)),
        }
    }

    fn unreadable(&self, label: &str, line: &str) -> ClientError {
        ClientError::output(
            Tool::H2load,
            format!("printed a '{label}' line herd cannot read: {line:?}"),
        )
    }
}

/// The count before `word` in `300 total, 300 started, …`.
fn counted(line: &str, word: &str) -> Option<u64> {
    line.split(',').find_map(|part| {
        let mut w = part.split_whitespace();
        match (w.next(), w.next()) {
            (Some(n), Some(label)) if label == word => n.parse().ok(),
            _ => None,
        }
    })
}

/// The exact byte count in parentheses of `1.87MB (1957696) total`.
fn exact_bytes(line: &str, word: &str) -> Option<u64> {
    line.split(',').find_map(|part| {
        let (_, rest) = part.split_once('(')?;
        let (n, label) = rest.split_once(')')?;
        (label.split_whitespace().next() == Some(word)).then(|| n.parse().ok()).flatten()
    })
}

/// A duration as h2load prints one (nghttp2's `util::format_duration`): whole `us`, or two
/// decimals of `ms` or `s`; with the resolution it was printed at.
fn duration(text: &str) -> Option<(Duration, Duration)> {
    let (number, unit_us, resolution_us) = if let Some(n) = text.strip_suffix("us") {
        (n, 1.0, 1.0)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1e3, 10.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1e6, 10_000.0)
    } else {
        return None;
    };
    let value: f64 = number.parse().ok()?;
    if !(value.is_finite() && value >= 0.0) {
        return None;
    }
    let micros = (value * unit_us).round();
    Some((Duration::from_micros(micros as u64), Duration::from_micros(resolution_us as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit_h2load_prints() {
        let us = Duration::from_micros;
        assert_eq!(duration("378us"), Some((us(378), us(1))));
        assert_eq!(duration("34.84ms"), Some((us(34_840), us(10))));
        assert_eq!(duration("1.02s"), Some((us(1_020_000), us(10_000))));
        for bad in ["", "12", "ms", "-1ms", "1.5m", "NaNs"] {
            assert_eq!(duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn counts_and_bytes_by_their_words() {
        let line = "300 total, 300 started, 299 done, 3 succeeded";
        assert_eq!(counted(line, "done"), Some(299));
        assert_eq!(counted(line, "timeout"), None);
        let traffic = "1.87MB (1957696) total, 32.23KB (33000) headers (space savings 38.55%), 1.83MB (1919100) data";
        assert_eq!(exact_bytes(traffic, "headers"), Some(33_000));
        assert_eq!(exact_bytes(traffic, "data"), Some(1_919_100));
        assert_eq!(exact_bytes(traffic, "body"), None);
    }
}
