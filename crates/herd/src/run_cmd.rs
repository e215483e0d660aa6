//! `herd run`: the modern load mode. Turns flags into an engine `RunSpec` (closed loop, or an
//! open loop at `--rate` with latency measured from each request's intended start), runs it
//! with Ctrl-C stopping it early, and prints the summary (run/summary.rs) and, with `--json`,
//! writes `herd.run.v1` (run/json.rs, docs/run-json.md).
//!
//! Exit codes: 0 when the run completed; 1 when it could not start (bad URL, refused address,
//! TLS settings) or was interrupted (the partial summary is still printed); 2 for bad usage
//! (clap); 3 when a `--fail-if` condition did not hold.

use std::fs;
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use herd_engine::{
    Arrivals, Control, RunSpec, Schedule, SocketOptions, Target, TlsClient, TlsSettings,
    TlsVersions,
};
use herd_proto::Request;

use crate::run::client_usage::UsageProbe;
use crate::run::recorder::RunRecorder;
use crate::run::summary::{self, RunInfo};
use crate::run::threshold::{self, Threshold};
use crate::run::{duration, json, url};

/// Flags of `herd run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
    /// The URL to load: http://HOST[:PORT]/PATH (only 127.0.0.0/8, ::1 and herd's lab range)
    #[arg(value_name = "URL")]
    pub(crate) url: String,

    /// Connections open at once
    #[arg(short = 'c', long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) connections: u32,

    /// Worker threads, each with its own event loop [default: one per core, at most -c]
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) threads: Option<u32>,

    /// How long to run (10s, 500ms, 2m) [default: 10s unless -n is given]
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = duration::parse)]
    pub(crate) duration: Option<Duration>,

    /// Stop after this many requests (warm-up included)
    #[arg(short = 'n', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) requests: Option<u64>,

    /// Open loop: send this many requests per second in total, whatever the server's pace, and
    /// measure latency from when each request was due (corrected for coordinated omission)
    #[arg(long, value_name = "REQ/S", value_parser = parse_rate)]
    pub(crate) rate: Option<f64>,

    /// With --rate: evenly spaced requests, or a Poisson process (independent arrivals)
    #[arg(long, value_enum, default_value_t = ArrivalsArg::Uniform, requires = "rate")]
    pub(crate) arrivals: ArrivalsArg,

    /// Seed of --arrivals poisson: the same seed replays the same schedule
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) seed: u64,

    /// Run this long first without counting (connections warm, caches filled)
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    pub(crate) warmup: Option<Duration>,

    /// A new connection for every request
    #[arg(long)]
    pub(crate) no_keep_alive: bool,

    /// Request method
    #[arg(short = 'm', long, value_name = "METHOD", default_value = "GET")]
    pub(crate) method: String,

    /// Extra request header, `Name: value` (repeatable; a Host header replaces the default)
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub(crate) headers: Vec<String>,

    /// Request body (sent with Content-Length)
    #[arg(long, value_name = "TEXT", conflicts_with = "body_file")]
    pub(crate) body: Option<String>,

    /// Request body read from a file
    #[arg(long, value_name = "FILE")]
    pub(crate) body_file: Option<PathBuf>,

    /// Send HTTP/1.0 requests instead of HTTP/1.1
    #[arg(long)]
    pub(crate) http10: bool,

    /// A request without a complete response this long after it started fails (timeout)
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration::parse)]
    pub(crate) timeout: Duration,

    /// https: trust the certificates in this PEM file and verify the server's
    #[arg(long, value_name = "FILE")]
    pub(crate) ca_file: Option<PathBuf>,

    /// https: do not verify the server's certificate
    #[arg(short = 'k', long, conflicts_with = "ca_file")]
    pub(crate) insecure: bool,

    /// Steps of connections, one result each, in order (WebBench-style): 1,2,4,8,16
    #[arg(long, value_name = "LIST", value_delimiter = ',', conflicts_with_all = ["rate_steps", "requests", "duration"],
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) steps: Option<Vec<u32>>,

    /// Steps of request rates (open loop, -c connections), one result each: 1000,2000,4000
    #[arg(long, value_name = "LIST", value_delimiter = ',', conflicts_with_all = ["rate", "requests", "duration"],
          value_parser = parse_rate)]
    pub(crate) rate_steps: Option<Vec<f64>>,

    /// How long each step runs
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration::parse)]
    pub(crate) step_time: Duration,

    /// Fail (exit code 3) unless this holds: p99<50ms, p99.9<=200ms, max<1s, errors<0.1%,
    /// errors<=3, rps>=1000 (repeatable; latency from the intended start; a stepped run is
    /// judged on its last step)
    #[arg(long, value_name = "CONDITION", value_parser = threshold::parse)]
    pub(crate) fail_if: Vec<Threshold>,

    /// Write the summary as JSON (format herd.run.v1, docs/run-json.md) to FILE
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
}

/// `--arrivals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ArrivalsArg {
    Uniform,
    Poisson,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 10_000_000.0 => Ok(r),
        _ => Err(format!("`{s}`: a rate is requests per second, more than 0 and at most 10000000")),
    }
}

/// How a `herd run` ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Done,
    Interrupted,
    /// A `--fail-if` condition did not hold.
    ThresholdFailed,
}

/// One measured run (or step).
struct Measured {
    info: RunInfo,
    recorder: RunRecorder,
}

/// Runs `herd run`.
pub(crate) fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let url = url::parse(&args.url).map_err(anyhow::Error::msg)?;
    let request = build_request(&args, &url.authority, &url.target)?;
    let tls = if url.tls {
        if args.ca_file.is_none() && !args.insecure {
            bail!(
                "{}: give --ca-file FILE to verify the server's certificate, or --insecure (-k) \
                 to skip the check",
                args.url
            );
        }
        let settings = TlsSettings {
            versions: TlsVersions::All,
            cipher_suites: None,
            client_cert: None,
            ca_file: args.ca_file.clone(),
            sni: url.host.parse::<std::net::IpAddr>().is_err().then(|| url.host.clone()),
            alpn: vec![b"http/1.1".to_vec()],
        };
        Some(TlsClient::new(&settings, &url.host).context("TLS settings")?)
    } else {
        None
    };
    let target = Target::resolve(&url.host, url.port, tls)?;
    // Best effort: without it, large -c runs report fd errors plainly.
    let _ = herd_engine::raise_nofile_limit();

    let control = Arc::new(Control::new());
    {
        let control = control.clone();
        // Only fails if a handler is already installed, which happens only in tests.
        let _ = ctrlc::set_handler(move || control.stop());
    }

    // Steps: one run per step, in order, each with its own result.
    let steps: Vec<(u32, Option<f64>)> = match (&args.steps, &args.rate_steps) {
        (Some(cs), _) => cs.iter().map(|&c| (c, args.rate)).collect(),
        (None, Some(rates)) => rates.iter().map(|&r| (args.connections, Some(r))).collect(),
        (None, None) => vec![(args.connections, args.rate)],
    };
    let stepped = args.steps.is_some() || args.rate_steps.is_some();
    let mut results = Vec::with_capacity(steps.len());
    let mut out = io::stdout().lock();
    for (k, &(connections, rate)) in steps.iter().enumerate() {
        let warmup = if k == 0 { args.warmup.unwrap_or_default() } else { Duration::ZERO };
        let duration = if stepped {
            Some(args.step_time + warmup)
        } else {
            match (args.duration, args.requests) {
                (None, None) => Some(Duration::from_secs(10) + warmup),
                (d, _) => d.map(|d| d + warmup),
            }
        };
        let spec = spec_for(&args, target.clone(), request.clone(), connections, rate, duration);
        let m = measure(&spec, &control, rate, warmup)?;
        if stepped {
            summary::write_step(&mut out, k + 1, &args.url, &m.info, &m.recorder)?;
            out.flush()?;
        }
        let interrupted = m.info.interrupted;
        results.push(m);
        if interrupted {
            break;
        }
    }
    let last = results.last().context("no step was run")?;
    if !stepped {
        summary::write(&mut out, &args.url, &last.info, &last.recorder)
            .context("cannot write the summary")?;
    }
    let mut outcome = if last.info.interrupted { Outcome::Interrupted } else { Outcome::Done };
    // Thresholds judge the whole of a single run, or the last step of a stepped one.
    for t in &args.fail_if {
        let (measured, holds) = t.check(&last.recorder, last.info.elapsed);
        writeln!(out, "  fail-if     {t}: {measured} {}", if holds { "ok" } else { "FAILED" })?;
        if !holds && outcome == Outcome::Done {
            outcome = Outcome::ThresholdFailed;
        }
    }
    out.flush().context("cannot write the summary")?;
    if let Some(path) = &args.json {
        let value = if stepped {
            let steps: Vec<_> =
                results.iter().map(|m| json::to_json(&args.url, &m.info, &m.recorder)).collect();
            serde_json::json!({ "format": json::FORMAT, "url": args.url, "steps": steps })
        } else {
            json::to_json(&args.url, &last.info, &last.recorder)
        };
        let text = serde_json::to_string_pretty(&value)?;
        fs::write(path, text + "\n")
            .with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    Ok(outcome)
}

fn spec_for(
    args: &RunArgs,
    target: Target,
    request: Vec<u8>,
    connections: u32,
    rate: Option<f64>,
    duration: Option<Duration>,
) -> RunSpec {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    RunSpec {
        target,
        head_request: args.method.eq_ignore_ascii_case("HEAD"),
        request,
        connections,
        threads: args.threads.unwrap_or(u32::try_from(cores).unwrap_or(1)),
        keep_alive: !args.no_keep_alive,
        max_requests: args.requests,
        duration,
        timeout: args.timeout,
        limits: herd_proto::Limits::default(),
        socket: SocketOptions::default(),
        schedule: match rate {
            Some(per_second) => Schedule::Rate {
                per_second,
                arrivals: match args.arrivals {
                    ArrivalsArg::Uniform => Arrivals::Uniform,
                    ArrivalsArg::Poisson => Arrivals::Poisson { seed: args.seed },
                },
            },
            None => Schedule::Closed,
        },
    }
}

/// One engine run, its warm-up kept apart.
fn measure(
    spec: &RunSpec,
    control: &Control,
    rate: Option<f64>,
    warmup: Duration,
) -> anyhow::Result<Measured> {
    let measure_from = (!warmup.is_zero()).then(|| Instant::now() + warmup);
    let probe = UsageProbe::start();
    let done = herd_engine::run(spec, control, |_| RunRecorder::new(measure_from))?;
    let client = probe.finish(&done.workers);
    let mut recorder = RunRecorder::new(None);
    for r in &done.recorders {
        recorder.merge(r);
    }
    let from = measure_from.map_or(done.started, |t| t.max(done.started));
    let info = RunInfo {
        connections: spec.connections,
        threads: spec.worker_count(),
        keep_alive: spec.keep_alive,
        rate,
        elapsed: done.ended.saturating_duration_since(from),
        interrupted: done.interrupted,
        client,
    };
    Ok(Measured { info, recorder })
}

/// The request bytes: method, target, Host (unless given), the user's headers, the body.
fn build_request(args: &RunArgs, authority: &str, target: &str) -> anyhow::Result<Vec<u8>> {
    let mut headers = Vec::new();
    let mut has_host = false;
    for h in &args.headers {
        let Some((name, value)) = h.split_once(':') else {
            bail!("-H {h:?}: a header is `Name: value`");
        };
        let name = name.trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            bail!("-H {h:?}: `{name}` is not a header name");
        }
        if h.contains(['\r', '\n']) {
            bail!("-H {h:?}: a header cannot contain line breaks");
        }
        has_host |= name.eq_ignore_ascii_case("host");
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    if !has_host {
        headers.insert(0, ("Host".to_owned(), authority.to_owned()));
    }
    let body = match (&args.body, &args.body_file) {
        (Some(b), _) => b.clone().into_bytes(),
        (None, Some(path)) => {
            fs::read(path).with_context(|| format!("--body-file {}", path.display()))?
        }
        (None, None) => Vec::new(),
    };
    if !body.is_empty()
        || args.method.eq_ignore_ascii_case("POST")
        || args.method.eq_ignore_ascii_case("PUT")
    {
        headers.push(("Content-Length".to_owned(), body.len().to_string()));
    }
    if args.http10 && !args.no_keep_alive {
        headers.push(("Connection".to_owned(), "keep-alive".to_owned()));
    }
    if args.method.is_empty() || !args.method.bytes().all(|b| b.is_ascii_alphabetic()) {
        bail!("-m {:?}: a method is letters only (GET, POST, …)", args.method);
    }
    let request = Request {
        method: args.method.clone(),
        target: target.to_owned(),
        version: if args.http10 { "HTTP/1.0" } else { "HTTP/1.1" },
        headers,
        body,
    };
    Ok(request.encode())
}
