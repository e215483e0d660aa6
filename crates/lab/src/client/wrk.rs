//! wrk as a cell's client: `wrk -c C -t T -d Ds --latency --timeout Ts -s out_dir/wrk.lua
//! [-H 'Connection: close'] URL`, and the `herd-wrk` lines its script prints (wrk_script.rs)
//! back into a measurement: counts and wrk's own latency percentiles, no histogram (wrk
//! prints none that could be read back).
//!
//! wrk runs for a duration in a closed loop. It has no request count, no fixed rate (that is
//! wrk2), no steps; its `-d` and `--timeout` are whole seconds. A warm-up is a separate wrk
//! run of the warm-up's duration. wrk always keeps connections alive; without keep-alive each
//! request carries `Connection: close`, the server closes after answering, and wrk opens a
//! new connection for the next request (it reconnects whenever a response is not
//! keep-alive).

use std::collections::HashMap;
use std::ffi::OsString;

use super::error::excerpt;
use super::wrk_script::{self, KEYS, PREFIX};
use herd_stats::{Failure, Measurement};

use super::{
    argv, post_body, whole_seconds, ClientCommand, ClientError, ClientFile, ClientJob,
    ClientOutcome, Tool,
};
use crate::load::Shape;

/// The script's file, in the job's `out_dir`.
pub(super) const SCRIPT_FILE: &str = "wrk.lua";

/// wrk's threads when none are given: its own default (2), but no more than the
/// connections, which wrk refuses.
const DEFAULT_THREADS: u32 = 2;

/// The threads wrk runs for `job` with `connections`.
pub(super) fn threads(job: &ClientJob, connections: u32) -> u32 {
    job.threads.unwrap_or(DEFAULT_THREADS.min(connections))
}

pub(super) fn command(job: &ClientJob) -> Result<ClientCommand, ClientError> {
    let load = job.load;
    let (duration, connections) =
        match &load.shape {
            Shape::Duration { duration, concurrency } => (*duration, *concurrency),
            Shape::Requests { .. } => return Err(job.unsupported(
                "stop after a request count",
                "it runs for a duration (-d) and has no -n",
                "give the load a `duration` instead of `requests`, or use the herd or ab client",
            )),
            Shape::Rate { .. } => {
                return Err(job.unsupported(
                    "send a fixed rate",
                    "it has no open loop (wrk2's -R has)",
                    "use the herd client (a `rate` load)",
                ))
            }
            Shape::Steps { .. } => return Err(job.unsupported(
                "run client steps",
                "one wrk run has one connection count",
                "make one load per step with `duration` and `concurrency`, or use the herd client",
            )),
            Shape::RateSteps { .. } => {
                return Err(job.unsupported(
                    "send offered rates in steps",
                    "it has no open loop (wrk2's -R has)",
                    "use the herd client (a `rate_steps` load)",
                ))
            }
        };
    if job.request.specweb_dir.is_some() {
        return Err(job.unsupported(
            "send a SPECweb99 mix",
            "the lab's wrk script loads a single URL",
            "use the herd client",
        ));
    }
    let threads = threads(job, connections);
    if threads > connections {
        return Err(job.unsupported(
            &format!("run {threads} threads with {connections} connections"),
            "wrk needs at least one connection per thread",
            "give fewer threads or more connections",
        ));
    }
    let seconds = whole_seconds(job, "duration", duration)?;
    let timeout = whole_seconds(job, "request timeout", load.timeout)?;
    let script = job.out_file(SCRIPT_FILE);
    let run = |seconds: u64| {
        let mut a = argv([job.program.as_os_str().to_owned()]);
        a.extend(argv([
            "-c".to_owned(),
            connections.to_string(),
            "-t".to_owned(),
            threads.to_string(),
            "-d".to_owned(),
            format!("{seconds}s"),
        ]));
        a.push("--latency".into());
        a.extend(argv(["--timeout".to_owned(), format!("{timeout}s"), "-s".to_owned()]));
        a.push(script.clone().into_os_string());
        if !load.keep_alive {
            a.extend(argv(["-H", "Connection: close"]));
        }
        a.push(OsString::from(job.url()));
        a
    };
    Ok(ClientCommand {
        main: run(seconds),
        files: vec![ClientFile {
            path: script.clone(),
            contents: wrk_script::script(post_body(job.request)),
        }],
    })
}

pub(super) fn parse(
    job: &ClientJob,
    stdout: &str,
    stderr: &str,
) -> Result<ClientOutcome, ClientError> {
    let mut values: HashMap<&str, f64> = HashMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix(PREFIX) else { continue };
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let v: f64 = value.trim().parse().map_err(|_| {
            ClientError::output(Tool::Wrk, format!("printed {line:?}, whose value is not a number"))
        })?;
        values.insert(key, v);
    }
    let get = |key: &str| {
        values.get(key).copied().ok_or_else(|| {
            ClientError::output(
                Tool::Wrk,
                format!(
                    "printed no '{PREFIX}{key}' line (was {} written, with \
                     ClientCommand::write_files, for wrk to load?); {}",
                    job.out_file(SCRIPT_FILE).display(),
                    excerpt(stdout, stderr)
                ),
            )
        })
    };
    // Whole numbers printed with %.0f: within u64 and exact up to 2^53.
    let count = |key: &str| get(key).map(|v| v as u64);
    // The first line `done` prints: its absence says the script did not run.
    let completed = count("requests")?;
    let mut failures = Vec::new();
    // Not "timeout": wrk 4 counts there a *completed* response slower than --timeout (in
    // `response_complete`, also in `requests`), and, every 2 s (`check_timeouts`), each
    // connection whose request is older than --timeout, again at each check. Neither is a
    // count of failed requests; the figure goes to `reported` as `errors_timeout`.
    for (kind, key) in
        [(Failure::Connect, "connect"), (Failure::Read, "read"), (Failure::Write, "write")]
    {
        let n = count(&format!("errors_{key}"))?;
        if n > 0 {
            failures.push((kind, n));
        }
    }
    let duration_s = get("duration_us")? / 1e6;
    let mut reported = vec![("errors_timeout".to_owned(), get("errors_timeout")?)];
    for key in KEYS.iter().filter(|k| k.starts_with("latency_") || k.starts_with("requests_per")) {
        reported.push(((*key).to_owned(), get(key)?));
    }
    if duration_s > 0.0 {
        reported.push(("requests_per_second".to_owned(), completed as f64 / duration_s));
    }
    let connections = match &job.load.shape {
        Shape::Duration { concurrency, .. } => Some(*concurrency),
        _ => None,
    };
    let m = Measurement {
        step: 1,
        label: String::new(),
        concurrency: connections,
        rate: None,
        duration_s,
        completed,
        failed: failures.iter().map(|(_, n)| n).sum(),
        failures,
        statuses: Vec::new(),
        non_2xx: count("errors_status")?,
        bytes_total: count("bytes")?,
        bytes_body: 0,
        warmup_requests: 0,
        histograms: Vec::new(),
        reported,
        judgement: None,
    };
    Ok(ClientOutcome { steps: vec![m], judgement: None, health: None, io: None, trace_id: None })
}
