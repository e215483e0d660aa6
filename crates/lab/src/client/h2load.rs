//! h2load (nghttp2, Debian's `nghttp2-client`) as a cell's client: `h2load -c C -t T
//! (-n N | -D D) [-m S] -N TIMEOUT [--h1 | --npn-list=h2] [-d FILE -H 'content-type: …'] URL`,
//! and its text report (`h2load_report.rs`) back into a measurement.
//!
//! The protocol is the URL's scheme and a flag: h2c is h2load's default for `http://`
//! (prior knowledge), h2 over TLS is `--npn-list=h2` with `https://` (1.52's spelling; later
//! versions call it `--alpn-list`), h1 and h1-tls are `--h1`. Debian's 1.52 is built
//! without ngtcp2: no h3. The report's `Application protocol:` must name the protocol asked,
//! or the run's figures are not the cell's.
//!
//! h2load runs closed loops only: a request count (`-n`) or a duration (`-D`), its
//! connections kept open. Its `-r` is a rate of new *connections* and its `--rps` a pace per
//! connection, neither a fixed request rate; it has no steps; it cannot open a connection
//! per request. Those are refused. Its timeout is per connection (`-N`: a connection silent
//! that long ends, its requests in flight counted as timeouts), the nearest it has to the
//! load's per-request timeout. It does not verify the server's certificate.
//!
//! What it prints, and so what a measurement gets: counts (the requests that got a whole
//! response of any status are `completed`, h2load's `errored` and `timeout` are the
//! failures; `h2load_report.rs` says how they follow from its counts), the responses not 2xx,
//! the bytes, and min, max and mean of its time lines as `reported` figures. It
//! prints no percentiles, and none are made up: the cell has no histogram. Its bytes count as
//! they arrive: in a timed run they include the bodies of the answers in flight at its end,
//! which its counts leave out (at most one per stream).

use std::ffi::OsString;
use std::time::Duration;

use herd_stats::{Failure, Measurement, Protocol, REPORTED_TIMER_RESOLUTION_S};

use super::h2load_report::Report;
use super::{argv, post_body, ClientCommand, ClientError, ClientJob, ClientOutcome, Tool};
use crate::load::Shape;

/// h2load's threads when none are given: its own default.
const DEFAULT_THREADS: u32 = 1;

/// The threads h2load runs for `job`.
pub(super) fn threads(job: &ClientJob) -> u32 {
    job.threads.unwrap_or(DEFAULT_THREADS)
}

pub(super) fn command(job: &ClientJob) -> Result<ClientCommand, ClientError> {
    let load = job.load;
    let (stop, connections) =
        match &load.shape {
            Shape::Requests { n_requests, concurrency } => {
                (vec!["-n".to_owned(), n_requests.to_string()], *concurrency)
            }
            Shape::Duration { duration, concurrency } => {
                (vec!["-D".to_owned(), time_arg(job, "duration", *duration)?], *concurrency)
            }
            Shape::Rate { .. } => {
                return Err(job.unsupported(
                    "send a fixed request rate",
                    "its -r is a rate of new connections and its --rps a pace per connection",
                    "use the herd client (a `rate` load)",
                ))
            }
            Shape::Steps { .. } => return Err(job.unsupported(
                "run client steps",
                "one h2load run has one connection count",
                "make one load per step with `requests` or `duration` and `concurrency`, or use \
                 the herd client",
            )),
            Shape::RateSteps { .. } => {
                return Err(job.unsupported(
                    "send offered rates in steps",
                    "its -r is a rate of new connections and its --rps a pace per connection",
                    "use the herd client (a `rate_steps` load)",
                ))
            }
        };
    if !load.keep_alive {
        return Err(job.unsupported(
            "open a connection per request",
            "it keeps its connections open for all their requests",
            "set keep_alive = true in the load, or use the herd or ab client",
        ));
    }
    if job.request.specweb_dir.is_some() {
        return Err(job.unsupported(
            "send a SPECweb99 mix",
            "the lab loads a single URL with h2load",
            "use the herd client",
        ));
    }
    let threads = threads(job);
    if threads > connections {
        return Err(job.unsupported(
            &format!("run {threads} threads with {connections} connections"),
            "h2load needs at least one connection per thread",
            "give fewer threads or more connections",
        ));
    }
    let mut a = argv([job.program.as_os_str().to_owned()]);
    a.extend(argv([
        "-c".to_owned(),
        connections.to_string(),
        "-t".to_owned(),
        threads.to_string(),
    ]));
    a.extend(argv(stop));
    if let Some(streams) = load.streams {
        a.extend(argv(["-m".to_owned(), streams.to_string()]));
    }
    a.extend(argv(["-N".to_owned(), time_arg(job, "request timeout", load.timeout)?]));
    match job.protocol {
        Protocol::H1 | Protocol::H1Tls => a.push("--h1".into()),
        Protocol::H2 => a.push("--npn-list=h2".into()),
        Protocol::H2c => {}
        // `command` refused it already (client::speaks).
        Protocol::H3 => return Err(job.invalid("h2load 1.52 has no h3".to_owned())),
    }
    if let Some((file, content_type)) = post_body(job.request) {
        a.push("-d".into());
        a.push(file.as_os_str().to_owned());
        a.extend(argv(["-H".to_owned(), format!("content-type: {content_type}")]));
    }
    a.push(OsString::from(job.url()));
    Ok(ClientCommand { main: a, files: Vec::new() })
}

pub(super) fn parse(
    job: &ClientJob,
    stdout: &str,
    stderr: &str,
) -> Result<ClientOutcome, ClientError> {
    let r = Report::read(stdout, stderr)?;
    let completed = r.completed();
    let wanted = alpn_id(job.protocol);
    match r.protocols.iter().find(|p| p.as_str() != wanted) {
        Some(other) => {
            return Err(ClientError::output(
                Tool::H2load,
                format!(
                    "spoke {other} where the cell asks for {} ({wanted}): the server chose \
                     another protocol",
                    job.protocol
                ),
            ))
        }
        // No connection got as far as a protocol (refused, a failed handshake, no ALPN
        // id in common): then no request got a response either, which the runner says.
        None if r.protocols.is_empty() && completed > 0 => {
            return Err(ClientError::output(
                Tool::H2load,
                format!("printed no 'Application protocol:' line for {completed} responses"),
            ))
        }
        None => {}
    }
    if r.errored > r.total || completed > r.done || r.timeout > r.errored {
        return Err(ClientError::output(
            Tool::H2load,
            format!(
                "counted {} requests, {} done, {} errored and {} timeouts, which do not add up",
                r.total, r.done, r.errored, r.timeout
            ),
        ));
    }
    // A timed run counts its main duration only (the warm-up and the stop are outside it,
    // and its req/s is over that duration); a counted run, the whole of it.
    let (duration, resolution) = match &job.load.shape {
        Shape::Duration { duration, .. } => (*duration, None),
        _ => (r.finished_in, Some(r.finished_in_resolution)),
    };
    let mut failures = Vec::new();
    if r.timeout > 0 {
        failures.push((Failure::Timeout, r.timeout));
    }
    if r.errored > r.timeout {
        failures.push((Failure::Errored, r.errored - r.timeout));
    }
    failures.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mut reported = vec![
        ("requests_per_second".to_owned(), r.requests_per_second),
        ("request_min_us".to_owned(), us(r.request.min)),
        ("request_max_us".to_owned(), us(r.request.max)),
        ("request_mean_us".to_owned(), us(r.request.mean)),
        ("connect_mean_us".to_owned(), us(r.connect.mean)),
        // Once per connection: the time to its first byte, not every request's.
        ("first_byte_per_connection_mean_us".to_owned(), us(r.first_byte.mean)),
        ("header_bytes".to_owned(), r.bytes_headers as f64),
    ];
    if let Some(resolution) = resolution {
        reported.push((REPORTED_TIMER_RESOLUTION_S.to_owned(), resolution.as_secs_f64()));
    }
    let m = Measurement {
        step: 1,
        label: String::new(),
        concurrency: Some(job.load.shape.max_connections()),
        rate: None,
        duration_s: duration.as_secs_f64(),
        completed,
        failed: r.errored,
        failures,
        statuses: Vec::new(),
        non_2xx: r.non_2xx(),
        bytes_total: r.bytes_total,
        bytes_body: r.bytes_data,
        warmup_requests: 0,
        histograms: Vec::new(),
        reported,
        judgement: None,
    };
    Ok(ClientOutcome { steps: vec![m], judgement: None, health: None, io: None, trace_id: None })
}

/// What h2load's `Application protocol:` says for `protocol`.
fn alpn_id(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::H1 | Protocol::H1Tls => "http/1.1",
        Protocol::H2 => "h2",
        Protocol::H2c => "h2c",
        Protocol::H3 => "h3",
    }
}

/// A duration as h2load's `<DURATION>` takes it: whole seconds, or milliseconds.
fn time_arg(job: &ClientJob, what: &str, d: Duration) -> Result<String, ClientError> {
    if d.subsec_nanos() == 0 && d.as_secs() > 0 {
        Ok(format!("{}s", d.as_secs()))
    } else if d.subsec_nanos() % 1_000_000 == 0 && !d.is_zero() {
        Ok(format!("{}ms", d.as_millis()))
    } else {
        Err(job.unsupported(
            &format!("run a {what} of {d:?}"),
            "h2load takes whole milliseconds",
            "give a whole number of milliseconds",
        ))
    }
}
