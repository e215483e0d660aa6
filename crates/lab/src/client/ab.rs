//! The real ApacheBench as a cell's client: `ab -n N -c C [-k] -s T [-p FILE -T TYPE]
//! -g out_dir/ab.tsv URL`, and its report (the layout `herd ab` copies; see
//! docs/ab-compat.md) plus the `-g` file (ab_tsv.rs) back into a measurement.
//!
//! ab stops after a request count, on one thread, in a closed loop. It cannot run for a
//! duration (its `-t` also caps the run at 50,000 requests, silently, and allocates a record
//! per request), at a rate, or in steps; a warm-up is a separate `ab -n K` run, so it cannot
//! be a duration either.
//!
//! No `-r`: with it ab survives a receive error, but counts each one as a *complete* request
//! too and writes its row in the `-g` file (ab.c's `read_connection` closes the connection
//! through `close_connection`, which stores the timing), so completions and latencies would
//! include failures. Without it a receive error ends ab's run with its message (e.g.
//! `apr_socket_recv: Connection reset by peer (104)`) and no report, which [`parse`] turns
//! into an error that quotes it.

use std::ffi::OsString;

use super::ab_tsv;
use super::error::excerpt;
use herd_stats::{Failure, Measurement, REPORTED_TIMER_RESOLUTION_S};

use super::{
    argv, post_body, whole_seconds, ClientCommand, ClientError, ClientJob, ClientOutcome, Tool,
};
use crate::load::Shape;

/// Where ab writes its `-g` file, in the job's `out_dir`.
pub(super) const TSV_FILE: &str = "ab.tsv";

/// ab.c's `MAX_CONCURRENCY`.
const MAX_CONCURRENCY: u32 = 20_000;

pub(super) fn command(job: &ClientJob) -> Result<ClientCommand, ClientError> {
    let load = job.load;
    let (n_requests, concurrency) =
        match &load.shape {
            Shape::Requests { n_requests, concurrency } => (*n_requests, *concurrency),
            Shape::Duration { .. } => {
                return Err(job.unsupported(
                    "run for a duration",
                    "it stops after a request count (its -t time limit also stops at 50000 \
                 requests, silently)",
                    "give the load `requests` instead of a duration, or use the herd or wrk client",
                ))
            }
            Shape::Rate { .. } => {
                return Err(job.unsupported(
                    "send a fixed rate",
                    "it has no open loop: each connection sends when its last response ends",
                    "use the herd client (a `rate` load)",
                ))
            }
            Shape::Steps { .. } => return Err(job.unsupported(
                "run client steps",
                "one ab run has one concurrency",
                "make one load per step with `requests` and `concurrency`, or use the herd client",
            )),
            Shape::RateSteps { .. } => {
                return Err(job.unsupported(
                    "send offered rates in steps",
                    "it has no open loop: each connection sends when its last response ends",
                    "use the herd client (a `rate_steps` load)",
                ))
            }
        };
    if concurrency > MAX_CONCURRENCY {
        return Err(job.unsupported(
            &format!("open {concurrency} connections"),
            &format!("ab allows at most {MAX_CONCURRENCY} (-c)"),
            "use the herd or wrk client for more",
        ));
    }
    if u64::from(concurrency) > n_requests {
        return Err(job.unsupported(
            &format!("run {concurrency} connections for {n_requests} requests"),
            "ab refuses a concurrency above its request count",
            "give at least as many requests as connections",
        ));
    }
    if job.request.specweb_dir.is_some() {
        return Err(job.unsupported(
            "send a SPECweb99 mix",
            "ab loads a single URL",
            "use the herd client",
        ));
    }
    if job.threads.is_some_and(|t| t != 1) {
        return Err(job.unsupported(
            "use more than one thread",
            "ab runs on one thread (its -t is a time limit, not threads)",
            "leave threads unset for ab",
        ));
    }
    let timeout = whole_seconds(job, "request timeout", load.timeout)?;
    let run = |n: u64, c: u32| {
        let mut a = argv([job.program.as_os_str().to_owned()]);
        a.extend(argv(["-n".to_owned(), n.to_string(), "-c".to_owned(), c.to_string()]));
        if load.keep_alive {
            a.push("-k".into());
        }
        a.extend(argv(["-s".to_owned(), timeout.to_string()]));
        if let Some((file, content_type)) = post_body(job.request) {
            a.push("-p".into());
            a.push(file.as_os_str().to_owned());
            a.extend(argv(["-T", content_type]));
        }
        a.push("-g".into());
        a.push(job.out_file(TSV_FILE).into_os_string());
        a.push(OsString::from(job.url()));
        a
    };
    Ok(ClientCommand {
        // ab refuses -c above -n: a short warm-up uses fewer connections.
        main: run(n_requests, concurrency),
        files: Vec::new(),
    })
}

/// Failed requests by kind as ab counts them: the kinds of ab's breakdown (Connect,
/// Receive, Length, Exceptions), what its total of `failed` has beyond them
/// ([`Failure::Other`]: a head ab could not read), and failed writes, which ab keeps out of
/// its total but a measurement counts as failed ([`Failure::Write`]). Kinds with none are
/// left out. herd ab's own page (`herd ab --html`) names them the same way.
pub fn ab_failures(
    kinds: &[(Failure, u64)],
    failed: u64,
    write_errors: u64,
) -> Vec<(Failure, u64)> {
    let mut failures: Vec<(Failure, u64)> = Vec::new();
    let mut named = 0u64;
    for &(kind, n) in kinds {
        named = named.saturating_add(n);
        if n > 0 {
            failures.push((kind, n));
        }
    }
    if failed > named {
        failures.push((Failure::Other, failed - named));
    }
    if write_errors > 0 {
        failures.push((Failure::Write, write_errors));
    }
    failures.sort();
    failures
}

pub(super) fn parse(
    job: &ClientJob,
    stdout: &str,
    stderr: &str,
) -> Result<ClientOutcome, ClientError> {
    let report = Report { stdout, stderr };
    let completed = report.count("Complete requests:")?;
    let failed = report.count("Failed requests:")?;
    // Printed only when something failed; its four kinds may sum to less than the total
    // (ab counts a head too large or unparsable in none of them).
    let kinds = report.breakdown()?;
    let write_errors = report.optional_count("Write errors:")?.unwrap_or(0);
    let failures = ab_failures(&kinds, failed, write_errors);
    let tsv_path = job.out_file(TSV_FILE);
    let tsv = std::fs::read_to_string(&tsv_path).map_err(|e| {
        ClientError::output(
            Tool::Ab,
            format!(
                "wrote no readable -g file {} ({e}); {}",
                tsv_path.display(),
                excerpt(stdout, stderr)
            ),
        )
    })?;
    let histograms = ab_tsv::histograms(&tsv)?;
    let rows = histograms.first().map_or(0, |(_, h)| h.len());
    if rows != completed {
        return Err(ClientError::output(
            Tool::Ab,
            format!(
                "wrote {rows} rows in {} for {completed} complete requests",
                tsv_path.display()
            ),
        ));
    }
    let mut reported = vec![
        ("requests_per_second".to_owned(), report.number("Requests per second:")?),
        ("time_per_request_ms".to_owned(), report.number("Time per request:")?),
        // "Time taken for tests" has three decimals: a run of a few milliseconds gets a
        // rate no better than its clock; the report says so.
        (REPORTED_TIMER_RESOLUTION_S.to_owned(), 0.001),
    ];
    if let Some(ka) = report.optional_count("Keep-Alive requests:")? {
        reported.push(("keep_alive_requests".to_owned(), ka as f64));
    }
    let m = Measurement {
        step: 1,
        label: String::new(),
        concurrency: Some(u32::try_from(report.count("Concurrency Level:")?).map_err(|_| {
            ClientError::output(Tool::Ab, "printed a concurrency level beyond 32 bits")
        })?),
        rate: None,
        duration_s: report.number("Time taken for tests:")?,
        completed,
        failed: failed + write_errors,
        failures,
        statuses: Vec::new(),
        non_2xx: report.optional_count("Non-2xx responses:")?.unwrap_or(0),
        bytes_total: report.count("Total transferred:")?,
        bytes_body: report.count("HTML transferred:")?,
        warmup_requests: 0,
        histograms,
        reported,
        judgement: None,
    };
    Ok(ClientOutcome { steps: vec![m], judgement: None, health: None, io: None, trace_id: None })
}

/// ab's report text, read a labelled line at a time.
struct Report<'a> {
    stdout: &'a str,
    stderr: &'a str,
}

impl Report<'_> {
    /// The text after `label` on its line, if ab printed the line.
    fn value(&self, label: &str) -> Option<&str> {
        self.stdout.lines().find_map(|l| l.strip_prefix(label)).map(str::trim)
    }

    /// The first word after `label`, which ab always prints.
    fn word(&self, label: &str) -> Result<&str, ClientError> {
        let v = self.value(label).ok_or_else(|| {
            ClientError::output(
                Tool::Ab,
                format!("printed no '{label}' line; {}", excerpt(self.stdout, self.stderr)),
            )
        })?;
        Ok(v.split_whitespace().next().unwrap_or(""))
    }

    fn count(&self, label: &str) -> Result<u64, ClientError> {
        let w = self.word(label)?;
        w.parse().map_err(|_| self.unreadable(label, w))
    }

    fn number(&self, label: &str) -> Result<f64, ClientError> {
        let w = self.word(label)?;
        w.parse().map_err(|_| self.unreadable(label, w))
    }

    /// A count on a line ab prints only when it is not zero (or only with some flags).
    fn optional_count(&self, label: &str) -> Result<Option<u64>, ClientError> {
        match self.value(label) {
            None => Ok(None),
            Some(_) => self.count(label).map(Some),
        }
    }

    /// `   (Connect: 0, Receive: 0, Length: 3, Exceptions: 0)` under "Failed requests",
    /// as (kind, count); empty when ab did not print it (nothing failed).
    fn breakdown(&self) -> Result<Vec<(Failure, u64)>, ClientError> {
        let Some(line) = self.stdout.lines().map(str::trim).find(|l| l.starts_with("(Connect:"))
        else {
            return Ok(Vec::new());
        };
        let inner = line.trim_start_matches('(').trim_end_matches(')');
        inner
            .split(',')
            .map(|part| {
                let (kind, n) = part.split_once(':').ok_or_else(|| self.unreadable("(", line))?;
                let n = n.trim().parse().map_err(|_| self.unreadable("(", line))?;
                let kind = match kind.trim() {
                    "Connect" => Failure::Connect,
                    "Receive" => Failure::Receive,
                    "Length" => Failure::Length,
                    "Exceptions" => Failure::Exceptions,
                    other => {
                        return Err(ClientError::output(
                            Tool::Ab,
                            format!(
                                "printed a failure kind {other:?} ab 2.3 does not have: {line:?}"
                            ),
                        ))
                    }
                };
                Ok((kind, n))
            })
            .collect()
    }

    fn unreadable(&self, label: &str, value: &str) -> ClientError {
        ClientError::output(Tool::Ab, format!("printed '{label}' with {value:?}, not a number"))
    }
}
