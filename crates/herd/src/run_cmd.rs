//! `herd run`: the modern load mode. Turns flags into an engine `RunSpec` (closed loop, or an
//! open loop at `--rate` with latency measured from each request's intended start), runs it
//! with Ctrl-C stopping it early, and prints the summary (run/summary.rs) and, with `--json`,
//! writes `herd.run.v1` (run/json.rs, docs/run-json.md). While it runs, `--series`, `--hlog`
//! and (stderr on a terminal) the live line show it second by second (run/outputs.rs,
//! docs/run-series.md).
//!
//! Exit codes: 0 when the run completed; 1 when it could not start (bad URL, refused address,
//! TLS settings) or was interrupted (the partial summary is still printed); 2 for bad usage
//! (clap); 3 when a `--fail-if` condition did not hold.

use std::fs;
use std::io::{self, IsTerminal as _, Write as _};
use std::num::{NonZeroU32, NonZeroU64};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context as _};
use herd_engine::{
    Arrivals, Control, PerConnection, RequestRate, Reuse, RunSpec, Schedule, SocketOptions, StopAt,
    Target, Think, TlsClient, TlsSettings, TlsVersions,
};

use crate::run::client_usage::UsageProbe;
use crate::run::interval::Seconds;
use crate::run::outputs::{Outputs, StepStart};
use crate::run::recorder::{RecorderPlan, RunRecorder};
use crate::run::request::RequestTemplate;
use crate::run::summary::{self, RunInfo, RunSetup};
use crate::run::threshold::{self, Threshold};
use crate::run::workload::{self, BuiltWorkload, Source};
use crate::run::{duration, json, series, units, url};
use crate::single_run::SingleRun;

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

    /// Seed of every random choice (Poisson arrivals, the URL mix, requests per connection,
    /// think times): the same seed replays the same run
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) seed: u64,

    /// Run this long first without counting (connections warm, caches filled)
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    pub(crate) warmup: Option<Duration>,

    /// A new connection for every request (each asks the server to close)
    #[arg(long)]
    pub(crate) no_keep_alive: bool,

    /// Requests each connection carries before herd closes it and opens another: a count, or
    /// a range drawn per connection (SPECweb99's clients: 5-15); the last asks the server to
    /// close
    #[arg(long, value_name = "N|LO-HI", value_parser = units::parse_range, conflicts_with = "no_keep_alive")]
    pub(crate) requests_per_conn: Option<(u32, u32)>,

    /// Write this many requests at once on each connection before reading their responses
    /// (HTTP/1.1 pipelining); latency counts from the batch's start. Synthetic: browsers do
    /// not pipeline, and the summary says so
    #[arg(long, value_name = "DEPTH", value_parser = clap::value_parser!(u32).range(1..=1024),
          conflicts_with_all = ["rate", "rate_steps", "no_keep_alive", "think"])]
    pub(crate) pipeline: Option<u32>,

    /// Closed loop: pause this long before each of a connection's requests but the first,
    /// as a user reading a page; exp:MEAN draws each pause from an exponential distribution
    #[arg(long, value_name = "DURATION|exp:MEAN", value_parser = units::parse_think,
          conflicts_with_all = ["rate", "rate_steps"])]
    pub(crate) think: Option<Think>,

    /// Requests from a file of weighted URLs, one per line: `[weight] [METHOD] path-or-URL`
    /// (on the server of the run's URL)
    #[arg(long, value_name = "FILE", conflicts_with = "specweb")]
    pub(crate) urls: Option<PathBuf>,

    /// A SPECweb99-like mix over the file set `herd serve --generate DIR --specweb-dirs N`
    /// wrote (its manifest gives the weights); the run's URL names where DIR is served
    #[arg(long, value_name = "DIR")]
    pub(crate) specweb: Option<PathBuf>,

    /// Cap each connection's receive rate by pacing its reads, as a slow link would:
    /// 400kbit, 1.5mbit, 56k, or a profile: modem-28.8k, modem-56k, specweb99 (400 kbit/s)
    #[arg(long, value_name = "RATE", value_parser = units::parse_bit_rate)]
    pub(crate) bandwidth: Option<u64>,

    /// Count the connections whose receive rate stayed at or above this (SPECweb99's
    /// conforming connections) [default: 320kbit with --bandwidth]
    #[arg(long, value_name = "RATE", value_parser = units::parse_bit_rate)]
    pub(crate) conforming: Option<u64>,

    /// Source addresses to connect from, spread over the connections:
    /// 127.0.0.2-127.0.0.50,::1 (each brings its own range of local ports)
    #[arg(long, value_name = "LIST", value_parser = units::parse_bind)]
    pub(crate) bind: Option<units::BindList>,

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

    /// https: present this client certificate (a PEM file with the certificate chain and
    /// its private key)
    #[arg(long, value_name = "FILE")]
    pub(crate) cert: Option<PathBuf>,

    /// Connect to the server's Unix-domain socket at PATH instead of the URL's host and port
    /// (the URL still gives the Host header and the path)
    #[arg(long, value_name = "PATH")]
    pub(crate) unix_socket: Option<PathBuf>,

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

    /// Write the run as a self-contained page to FILE, in herd report's look: figures,
    /// latency percentile spectrum, status codes, failures, client health, and for --steps
    /// the throughput against clients (docs/report.md); not with --rate-steps
    #[arg(long, value_name = "FILE", conflicts_with = "rate_steps")]
    pub(crate) html: Option<PathBuf>,

    /// Write the run second by second to FILE as it goes: requests, failures, bytes, req/s and
    /// latency percentiles; CSV for .csv, one JSON object per line for .ndjson or .jsonl
    /// (docs/run-series.md)
    #[arg(long, value_name = "FILE", value_parser = series::parse_path)]
    pub(crate) series: Option<PathBuf>,

    /// Write an HdrHistogram interval log to FILE as the run goes: one latency histogram per
    /// second, in microseconds, for HdrHistogram's tools (docs/run-series.md)
    #[arg(long, value_name = "FILE")]
    pub(crate) hlog: Option<PathBuf>,
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
    let built = build_workload(&args, &url)?;
    if url.tls && args.bandwidth.is_some() {
        bail!("--bandwidth paces plain reads only; it is not supported with https");
    }
    let setup = RunSetup {
        url: args.url.clone(),
        description: built.description.clone(),
        group_names: built.group_names.clone(),
        group_kind: built.group_kind,
        bandwidth: args.bandwidth,
        conforming: args.conforming.or(args.bandwidth.map(|_| DEFAULT_CONFORMING)),
        think: args.think,
        per_connection: args.requests_per_conn,
        pipeline: args.pipeline.filter(|&d| d > 1),
    };
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
            client_cert: args.cert.clone(),
            ca_file: args.ca_file.clone(),
            sni: url.host.parse::<std::net::IpAddr>().is_err().then(|| url.host.clone()),
            alpn: vec![b"http/1.1".to_vec()],
        };
        Some(TlsClient::new(&settings, &url.host).context("TLS settings")?)
    } else {
        None
    };
    if args.cert.is_some() && !url.tls {
        bail!("--cert presents a client certificate over TLS: it needs an https:// URL");
    }
    let target = match &args.unix_socket {
        Some(path) => {
            use std::os::unix::fs::FileTypeExt as _;
            let meta = fs::metadata(path)
                .with_context(|| format!("cannot use --unix-socket {}", path.display()))?;
            if !meta.file_type().is_socket() {
                bail!("--unix-socket {}: not a socket", path.display());
            }
            if args.bind.is_some() {
                bail!("--bind chooses source IP addresses; it does not apply to --unix-socket");
            }
            Target::unix(path.clone(), &url.host, tls)
        }
        None => Target::resolve(&url.host, url.port, tls)?,
    };
    if let Some(bind) = &args.bind {
        check_sources(&bind.0, &target)?;
    }
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
    // Before anything is written or sent: a page that could not be written must cost
    // neither a run nor the files of an earlier one (--series, --hlog).
    if let Some(path) = &args.html {
        crate::report_cmd::check_page_path(path)?;
    }
    let started_at = herd_lab::runner::now_rfc3339();
    let environment =
        args.html.as_ref().map(|_| herd_lab::environment::record(env!("CARGO_PKG_VERSION")));
    // Opened before any load is sent: a path that cannot be written stops the run here. The
    // live line only on a terminal, so that logs and pipes never see it.
    let outputs = Outputs::start(
        args.series.as_deref(),
        args.hlog.as_deref(),
        io::stderr().is_terminal(),
        stepped.then_some(steps.len()),
        &args.url,
    )?;
    // Created before the run too, so that a bad --json path never costs a whole run.
    let json_file = match &args.json {
        Some(path) => Some(
            fs::File::create(path)
                .with_context(|| format!("cannot write --json {}", path.display()))?,
        ),
        None => None,
    };
    // The recorders' view of the workload, the same for every step; per-connection rates are
    // sized for the largest step.
    let plan = Arc::new(RecorderPlan {
        group_of: built.group_of.clone(),
        n_groups: built.group_names.len(),
        expected_bytes: built.expected_bytes.clone(),
        conn_rates: setup.conforming.and(steps.iter().map(|&(c, _)| c).max()),
    });
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
        let spec = spec_for(&args, target.clone(), &built, connections, rate, duration)?;
        let step = stepped.then_some(k + 1);
        let m = measure(&spec, &control, rate, warmup, &plan, outputs.as_ref().map(|o| (o, step)))?;
        if stepped {
            summary::write_step(&mut out, k + 1, &setup, &m.info, &m.recorder)?;
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
        summary::write(&mut out, &setup, &last.info, &last.recorder)
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
    // The herd.run.v1 document, for --json and for the page (read back as the lab reads it).
    let document = if args.json.is_some() || args.html.is_some() {
        let value = if stepped {
            let steps = results
                .iter()
                .map(|m| json::to_json(&setup, &m.info, &m.recorder))
                .collect::<io::Result<Vec<_>>>()
                .context("cannot encode a histogram for --json or --html")?;
            serde_json::json!({ "format": json::FORMAT, "url": args.url, "steps": steps })
        } else {
            json::to_json(&setup, &last.info, &last.recorder)
                .context("cannot encode a histogram for --json or --html")?
        };
        Some(value)
    } else {
        None
    };
    if let (Some(path), Some(mut file), Some(value)) = (&args.json, json_file, &document) {
        let text = serde_json::to_string_pretty(value)?;
        file.write_all((text + "\n").as_bytes())
            .with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    if let (Some(path), Some(value)) = (&args.html, &document) {
        let read = herd_lab::client::herd_run_outcome(value)
            .context("cannot read this run's own figures back for --html")?;
        let run = SingleRun {
            tool: "herd run",
            url: args.url.clone(),
            started_at,
            finished_at: herd_lab::runner::now_rfc3339(),
            interrupted: last.info.interrupted,
            measurements: read.steps.into_iter().map(Into::into).collect(),
            verdict: read.verdict.map(|v| (v.verdict, v.reason)),
            health_json: read.health_json,
            environment: environment.unwrap_or_default(),
        };
        crate::single_run::write(path, run)
            .with_context(|| format!("--html {}", path.display()))?;
    }
    if let Some(o) = outputs {
        o.finish()?;
    }
    Ok(outcome)
}

/// Every `--bind` address must be one of this host's, of the target's family: checked by
/// binding a socket to it, so that a typo fails before the run instead of as N connect errors.
fn check_sources(sources: &[std::net::IpAddr], target: &Target) -> anyhow::Result<()> {
    let family_ok =
        |ip: &std::net::IpAddr| target.addrs.iter().any(|a| a.is_ipv4() == ip.is_ipv4());
    for ip in sources {
        if !family_ok(ip) {
            bail!(
                "--bind {ip}: {} resolves to no {} address; give source addresses of its family",
                target.host,
                if ip.is_ipv4() { "IPv4" } else { "IPv6" }
            );
        }
        if let Err(e) = std::net::TcpListener::bind((*ip, 0)) {
            bail!(
                "--bind {ip}: cannot use it as a source address ({e}); give addresses of this host"
            );
        }
    }
    Ok(())
}

/// SPECweb99's conforming bit rate: 320 kbit/s, 80 % of its clients' 400 kbit/s link.
const DEFAULT_CONFORMING: u64 = 320_000;

fn build_workload(args: &RunArgs, url: &url::RunUrl) -> anyhow::Result<BuiltWorkload> {
    let body = match (&args.body, &args.body_file) {
        (Some(b), _) => b.clone().into_bytes(),
        (None, Some(path)) => {
            fs::read(path).with_context(|| format!("--body-file {}", path.display()))?
        }
        (None, None) => Vec::new(),
    };
    let template = RequestTemplate::new(&args.headers, &url.authority, body, args.http10)
        .map_err(anyhow::Error::msg)?;
    let source = match (&args.urls, &args.specweb) {
        (Some(list), _) => Source::List(list),
        (None, Some(dir)) => Source::Specweb(dir),
        (None, None) => Source::Single,
    };
    workload::build(
        source,
        url,
        &args.method,
        &template,
        args.requests_per_conn.is_some(),
        args.no_keep_alive,
    )
}

fn spec_for(
    args: &RunArgs,
    target: Target,
    built: &BuiltWorkload,
    connections: u32,
    rate: Option<f64>,
    duration: Option<Duration>,
) -> anyhow::Result<RunSpec> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.unwrap_or(u32::try_from(cores).unwrap_or(1));
    let per_connection =
        args.requests_per_conn.map(|(lo, hi)| PerConnection::new(lo, hi)).transpose()?;
    let reuse = if args.no_keep_alive { Reuse::Close } else { Reuse::KeepAlive { per_connection } };
    // clap refuses the other combinations; the engine's types cannot hold them either.
    let schedule = match (rate, args.pipeline, args.think) {
        (None, None, think) => Schedule::Closed { reuse, think },
        (None, Some(depth), None) if !args.no_keep_alive => Schedule::Pipelined {
            depth: NonZeroU32::new(depth).context("--pipeline must be at least 1")?,
            per_connection,
        },
        (Some(per_second), None, None) => Schedule::Rate {
            rate: RequestRate::new(per_second)?,
            arrivals: match args.arrivals {
                ArrivalsArg::Uniform => Arrivals::Uniform,
                ArrivalsArg::Poisson => Arrivals::Poisson { seed: args.seed },
            },
            reuse,
        },
        _ => bail!(
            "--pipeline needs a closed loop with keep-alive and no --think; --think needs a \
             closed loop (not --rate)"
        ),
    };
    Ok(RunSpec {
        target,
        workload: built.workload.clone(),
        connections: NonZeroU32::new(connections).context("-c must be at least 1")?,
        threads: NonZeroU32::new(threads).unwrap_or(NonZeroU32::MIN),
        stop: StopAt::new(args.requests.and_then(NonZeroU64::new), duration)?,
        timeout: args.timeout,
        limits: herd_proto::Limits::default(),
        socket: SocketOptions {
            bind: args.bind.clone().map(|b| b.0).unwrap_or_default(),
            buffer_size: None,
        },
        schedule,
        // Bits per second on the command line, bytes per second for the engine.
        receive_rate: args.bandwidth.and_then(|bits| NonZeroU64::new((bits / 8).max(1))),
        seed: args.seed,
    })
}

/// One engine run, its warm-up kept apart; with `outputs`, its seconds go there as it runs
/// (`step`: the step's number in a stepped run).
fn measure(
    spec: &RunSpec,
    control: &Control,
    rate: Option<f64>,
    warmup: Duration,
    plan: &Arc<RecorderPlan>,
    outputs: Option<(&Outputs, Option<usize>)>,
) -> anyhow::Result<Measured> {
    let (now, now_wall) = (Instant::now(), SystemTime::now());
    let measure_from = (!warmup.is_zero()).then(|| now + warmup);
    // Second 0 starts where the summary's figures start: the end of the warm-up, or (a few
    // microseconds before the engine's own start) now.
    let origin = now + warmup;
    let workers = spec.worker_count();
    let feed = outputs.map(|(o, step)| {
        o.begin_step(StepStart {
            step,
            workers: workers as usize,
            origin,
            origin_wall: now_wall.checked_add(warmup).unwrap_or(now_wall),
        })
    });
    // The measured part's planned length: outcomes past it (the engine's last loop turn)
    // belong to its last second.
    let span = spec.stop.deadline().map(|d| d.saturating_sub(warmup));
    let probe = UsageProbe::start();
    let mut done = herd_engine::run(spec, control, |i| {
        let recorder = RunRecorder::new(measure_from, plan.clone());
        match &feed {
            Some(feed) => {
                let quota = u32::try_from(i).ok().and_then(|i| spec.share(i, workers).1);
                recorder.with_seconds(Seconds::new(i, origin, span, quota, feed.clone()))
            }
            None => recorder,
        }
    })?;
    let client = probe.finish(&done.workers);
    if let Some((o, _)) = outputs {
        for r in &mut done.recorders {
            r.finish_seconds(done.ended);
        }
        o.end_step();
    }
    let mut recorder = RunRecorder::new(None, plan.clone());
    for r in &done.recorders {
        recorder.merge(r);
    }
    let from = measure_from.map_or(done.started, |t| t.max(done.started));
    let info = RunInfo {
        connections: spec.connections.get(),
        threads: spec.worker_count(),
        keep_alive: spec.keep_alive(),
        rate,
        elapsed: done.ended.saturating_duration_since(from),
        interrupted: done.interrupted,
        client,
    };
    Ok(Measured { info, recorder })
}
