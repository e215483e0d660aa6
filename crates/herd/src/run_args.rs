//! `herd run`'s flags (clap), and the validated plan they become: [`plan`] turns the flags
//! into a `herd_run::RunPlan` (ripgrep's low to high arguments). The flow of a run is
//! run_cmd.rs's. A test parses `RunPlan::to_args` back into the same plan, so the command
//! lines the lab builds from plans mean what the lab asked for.

use std::num::{NonZeroU32, NonZeroU64};
use std::path::PathBuf;

use herd_engine::{IoChoice, Think};
use herd_run::plan::{self, Arrivals, Body, Load, Pace, Reuse, Source, Stop, TlsOptions};
use herd_run::protocol::{Speak, Windows};
use herd_run::units::{self as run_units, BindList};
use herd_run::{PlanError, RunPlan, RunUrl, Threshold};
use herd_stats::units::{BitRate, ByteSize, RequestRate, TimeSpan};

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

    /// The workers' event-loop backend: auto (io_uring where this machine has it and it was
    /// measured faster for the protocol, else epoll, saying why), epoll, or uring (refused
    /// where it cannot run)
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = IoArg::Auto)]
    pub(crate) io: IoArg,

    /// Send a W3C `traceparent` on every request: one trace id for the run (said on stderr
    /// and in --json), a fresh span id each, the sampled flag set, or clear with
    /// `--trace-context=unsampled` (docs/run.md)
    #[arg(long, value_enum, value_name = "FLAG", num_args = 0..=1, require_equals = true,
          default_missing_value = "sampled")]
    pub(crate) trace_context: Option<TraceArg>,

    /// With --trace-context: this trace id (32 hex digits, not all zeros) instead of a new
    /// one, to join a trace of your own
    #[arg(long, value_name = "HEX", requires = "trace_context", value_parser = parse_trace_id)]
    pub(crate) trace_id: Option<[u8; 16]>,

    /// How long to run (10s, 500ms, 2m); with -n, whichever comes first [default: 10s unless
    /// -n is given]
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = clap::value_parser!(TimeSpan))]
    pub(crate) duration: Option<TimeSpan>,

    /// Stop after this many requests (warm-up included); with -d, whichever comes first
    #[arg(short = 'n', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) requests: Option<u64>,

    /// Open loop: send this many requests per second in total, whatever the server's pace, and
    /// measure latency from when each request was due (corrected for coordinated omission)
    #[arg(long, value_name = "REQ/S")]
    pub(crate) rate: Option<RequestRate>,

    /// With --rate or --rate-steps: evenly spaced requests, or a Poisson process (independent arrivals)
    #[arg(long, value_enum, default_value_t = ArrivalsArg::Uniform)]
    pub(crate) arrivals: ArrivalsArg,

    /// Seed of every random choice (Poisson arrivals, the URL mix, requests per connection,
    /// think times): the same seed replays the same run
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) seed: u64,

    /// Run this long first without counting (connections warm, caches filled)
    #[arg(long, value_name = "DURATION")]
    pub(crate) warmup: Option<TimeSpan>,

    /// A new connection for every request (each asks the server to close)
    #[arg(long)]
    pub(crate) no_keep_alive: bool,

    /// Requests each connection carries before herd closes it and opens another: a count, or
    /// a range drawn per connection (SPECweb99's clients: 5-15); the last asks the server to
    /// close
    #[arg(long, value_name = "N|LO-HI", value_parser = run_units::parse_range, conflicts_with = "no_keep_alive")]
    pub(crate) requests_per_conn: Option<(u32, u32)>,

    /// Write this many requests at once on each connection before reading their responses
    /// (HTTP/1.1 pipelining); latency counts from the batch's start. Synthetic: browsers do
    /// not pipeline, and the summary says so
    #[arg(long, value_name = "DEPTH", value_parser = clap::value_parser!(u32).range(1..=1024),
          conflicts_with_all = ["rate", "rate_steps", "no_keep_alive", "think"])]
    pub(crate) pipeline: Option<u32>,

    /// Closed loop: pause this long before each of a connection's requests but the first,
    /// as a user reading a page; exp:MEAN draws each pause from an exponential distribution
    #[arg(long, value_name = "DURATION|exp:MEAN", value_parser = run_units::parse_think,
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
    #[arg(long, value_name = "RATE")]
    pub(crate) bandwidth: Option<BitRate>,

    /// Count the connections whose receive rate stayed at or above this (SPECweb99's
    /// conforming connections) [default: 320kbit with --bandwidth]
    #[arg(long, value_name = "RATE")]
    pub(crate) conforming: Option<BitRate>,

    /// Source addresses to connect from, spread over the connections:
    /// 127.0.0.2-127.0.0.50,::1 (each brings its own range of local ports)
    #[arg(long, value_name = "LIST", value_parser = run_units::parse_bind)]
    pub(crate) bind: Option<BindList>,

    /// Request method
    #[arg(short = 'X', long, value_name = "METHOD", default_value = "GET")]
    pub(crate) method: String,

    /// Speak HTTP/2 over TLS (ALPN h2; an https:// URL). The server must agree: to fall back
    /// to HTTP/1.1, give --alpn h2,http/1.1 instead
    #[arg(long, conflicts_with_all = ["h2c", "alpn"])]
    pub(crate) h2: bool,

    /// Speak HTTP/2 in the clear, with prior knowledge (an http:// URL; no Upgrade)
    #[arg(long, conflicts_with = "alpn")]
    pub(crate) h2c: bool,

    /// Speak HTTP/3 over QUIC (an https:// URL; UDP to its port)
    #[arg(long, conflicts_with_all = ["h2", "h2c", "alpn"])]
    pub(crate) h3: bool,

    /// Offer these ALPN protocols in the TLS handshake, in order of preference, and speak
    /// the one the server chooses: h2, http/1.1 or h2,http/1.1
    // A String, read in `plan`: clap takes a parser's Vec for a list of values.
    #[arg(long, value_name = "LIST")]
    pub(crate) alpn: Option<String>,

    /// HTTP/2 and HTTP/3: requests in flight at once on each connection, as streams (capped
    /// by the server's SETTINGS_MAX_CONCURRENT_STREAMS, or QUIC's stream limit), as h2load's -m
    #[arg(short = 'm', long, value_name = "N", value_parser = parse_streams)]
    pub(crate) streams: Option<u32>,

    /// HTTP/2: each stream's flow-control window (64Ki − 1 to 2Gi − 1) [default: 1Gi]
    #[arg(long, value_name = "SIZE")]
    pub(crate) window: Option<ByteSize>,

    /// HTTP/2: the connection's flow-control window [default: 1Gi]
    #[arg(long, value_name = "SIZE")]
    pub(crate) connection_window: Option<ByteSize>,

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
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub(crate) timeout: TimeSpan,

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

    /// https: resume TLS sessions on new connections (TLS 1.3 tickets), as a browser does.
    /// Without it every connection makes a full handshake, as ab's do
    #[arg(long)]
    pub(crate) tls_resume: bool,

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
)]
    pub(crate) rate_steps: Option<Vec<RequestRate>>,

    /// How long each step runs
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) step_time: TimeSpan,

    /// Fail (exit code 3) unless this holds: p99<50ms, p99.9<=200ms, max<1s, errors<0.1%,
    /// errors<=3, rps>=1000 (repeatable; latency from the intended start; a stepped run is
    /// judged on its last step)
    #[arg(long, value_name = "CONDITION", value_parser = clap::value_parser!(Threshold))]
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
    #[arg(long, value_name = "FILE", value_parser = herd_run::series::parse_path)]
    pub(crate) series: Option<PathBuf>,

    /// Write an HdrHistogram interval log to FILE as the run goes: one latency histogram per
    /// second, in microseconds, for HdrHistogram's tools (docs/run-series.md)
    #[arg(long, value_name = "FILE")]
    pub(crate) hlog: Option<PathBuf>,

    /// Show the run live in the terminal instead of the one-line progress: requests/s and
    /// latency percentiles over time, failures by kind, the totals; q or Ctrl-C stops the run
    /// (docs/run-series.md). Needs stderr on a terminal
    #[arg(long)]
    pub(crate) tui: bool,

    /// Serve the run's live figures at http://ADDR/metrics in Prometheus's text format while
    /// it runs (requests and failures by kind, bytes, a latency histogram, the last second's
    /// rate and percentiles, herd's own CPU; docs/metrics.md): ADDR is IP:PORT, e.g.
    /// 127.0.0.1:9464 (port 0: any free port, printed)
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    pub(crate) metrics_listen: Option<std::net::SocketAddr>,

    /// A label of your own on every series of --metrics-listen: KEY=VALUE (repeatable; KEY a
    /// Prometheus label name other than run, agent, kind, le and quantile)
    #[arg(long, value_name = "KEY=VALUE", requires = "metrics_listen", value_parser = parse_label)]
    pub(crate) metrics_label: Vec<(String, String)>,

    /// After the run, keep the final figures up until a scrape has read them, at most this
    /// long (no wait when nothing scraped during the run)
    #[arg(long, value_name = "DURATION", default_value = "15s", requires = "metrics_listen")]
    pub(crate) metrics_linger: TimeSpan,
}

/// `--metrics-label`: a Prometheus label name (not one of herd's own) and a value.
fn parse_label(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not KEY=VALUE: give e.g. server=nginx-1.22"))?;
    let name_ok = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with("__");
    if !name_ok {
        return Err(format!(
            "`{key}` is not a Prometheus label name: letters, digits and _, not starting with a \
             digit or __"
        ));
    }
    if ["run", "agent", "kind", "le", "quantile"].contains(&key) {
        return Err(format!("`{key}` is a label herd sets itself: choose another name"));
    }
    Ok((key.to_owned(), value.to_owned()))
}

/// `--metrics-listen`: an IP address and a port.
pub(crate) fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    text.parse().map_err(|_| {
        format!("`{text}` is not IP:PORT: give e.g. 127.0.0.1:9464, [::1]:9464 or 0.0.0.0:9464")
    })
}

/// `-m`/`--streams`: a count. `-m` was the method before HTTP/2 came (h2load's `-m` is the
/// streams, and so is herd's now): a method given to it says where the method went.
fn parse_streams(text: &str) -> Result<u32, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!(
            "-m is --streams (requests at once per HTTP/2 connection, as h2load's -m); the \
             method is -X {text}"
        ));
    }
    match text.parse::<u32>() {
        Ok(n) if (1..=herd_run::protocol::MAX_STREAMS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` is not a count of streams: give 1 to {}",
            herd_run::protocol::MAX_STREAMS
        )),
    }
}

/// `--trace-context`'s sampled flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TraceArg {
    Sampled,
    Unsampled,
}

/// `--trace-id`: 32 hex digits, not all zeros (W3C Trace Context calls that id invalid).
fn parse_trace_id(text: &str) -> Result<[u8; 16], String> {
    let bad = || format!("`{text}` is not a trace id: give 32 hex digits, not all zeros");
    if text.len() != 32 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    if id == [0; 16] {
        return Err(bad());
    }
    Ok(id)
}

/// `--io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum IoArg {
    Auto,
    Epoll,
    Uring,
}

impl From<IoArg> for IoChoice {
    fn from(a: IoArg) -> IoChoice {
        match a {
            IoArg::Auto => IoChoice::Auto,
            IoArg::Epoll => IoChoice::Epoll,
            IoArg::Uring => IoChoice::Uring,
        }
    }
}

/// `--arrivals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ArrivalsArg {
    Uniform,
    Poisson,
}

/// The flags as a validated plan, or what cannot be run and what to give instead. What clap
/// already refuses (conflicting flags) never gets here.
pub(crate) fn plan(args: &RunArgs) -> Result<RunPlan, PlanError> {
    let url: RunUrl = args.url.parse().map_err(PlanError)?;
    let nonzero = |n: u32| NonZeroU32::new(n).ok_or_else(|| PlanError("a count of 0".into()));
    let connections = nonzero(args.connections)?;
    let arrivals = match args.arrivals {
        ArrivalsArg::Uniform => Arrivals::Uniform,
        ArrivalsArg::Poisson if args.rate.is_none() && args.rate_steps.is_none() => {
            return Err(PlanError(
                "--arrivals spaces an open loop's requests: give --rate or --rate-steps with it"
                    .into(),
            ))
        }
        ArrivalsArg::Poisson => Arrivals::Poisson,
    };
    let pace = match (args.rate, args.pipeline) {
        (Some(rate), _) => Pace::Rate { rate, arrivals },
        (None, Some(depth)) => Pace::Pipelined { depth: nonzero(depth)? },
        (None, None) => Pace::Closed { think: args.think },
    };
    let load = match (&args.steps, &args.rate_steps) {
        (Some(clients), _) => Load::Steps {
            clients: clients.iter().map(|&c| nonzero(c)).collect::<Result<_, _>>()?,
            step: args.step_time,
            pace,
        },
        (None, Some(rates)) => {
            Load::RateSteps { connections, rates: rates.clone(), arrivals, step: args.step_time }
        }
        (None, None) => {
            let requests = args.requests.and_then(NonZeroU64::new);
            let stop = match (args.duration, requests) {
                (Some(d), Some(n)) => Stop::Either(d, n),
                (Some(d), None) => Stop::After(d),
                (None, Some(n)) => Stop::Requests(n),
                (None, None) => Stop::After(plan::DEFAULT_DURATION),
            };
            Load::Single { connections, stop, pace }
        }
    };
    let reuse = match (args.no_keep_alive, args.requests_per_conn) {
        (true, _) => Reuse::PerRequest,
        (false, Some((lo, hi))) => Reuse::Limited { lo: nonzero(lo)?, hi: nonzero(hi)? },
        (false, None) => Reuse::KeepAlive,
    };
    let mut p = RunPlan::new(url, load);
    p.threads = args.threads.map(nonzero).transpose()?;
    p.io = args.io.into();
    p.trace = args.trace_context.map(|flag| {
        let sampled = flag == TraceArg::Sampled;
        match args.trace_id {
            Some(id) => herd_engine::TraceContext::new(id, sampled),
            None => herd_engine::TraceContext::random(sampled),
        }
    });
    p.warmup = args.warmup;
    p.seed = args.seed;
    p.reuse = reuse;
    p.requests = plan::Requests {
        method: args.method.clone(),
        headers: args.headers.clone(),
        body: match (&args.body, &args.body_file) {
            (Some(text), _) => Body::Text(text.clone()),
            (None, Some(path)) => Body::File(path.clone()),
            (None, None) => Body::None,
        },
        http10: args.http10,
        source: match (&args.urls, &args.specweb) {
            (Some(list), _) => Source::List(list.clone()),
            (None, Some(dir)) => Source::Specweb(dir.clone()),
            (None, None) => Source::Url,
        },
    };
    p.speak = match (args.h2, args.h2c, &args.alpn) {
        (_, _, Some(list)) => Speak::Alpn(
            herd_run::protocol::parse_alpn(list)
                .map_err(|e| PlanError(format!("--alpn {list}: {e}")))?,
        ),
        (true, _, None) if !p.url.tls => {
            return Err(PlanError(format!(
                "--h2 speaks HTTP/2 over TLS: give an https:// URL, or --h2c for HTTP/2 in the \
                 clear to {}",
                p.url.text
            )))
        }
        (_, true, None) if p.url.tls => {
            return Err(PlanError(format!(
                "--h2c speaks HTTP/2 in the clear: give an http:// URL, or --h2 for HTTP/2 over \
                 TLS to {}",
                p.url.text
            )))
        }
        (true, _, None) | (_, true, None) => Speak::Http2,
        (false, false, None) if args.h3 => Speak::Http3,
        (false, false, None) => Speak::Http1,
    };
    p.streams = args.streams.map(nonzero).transpose()?.unwrap_or(NonZeroU32::MIN);
    p.windows = Windows {
        stream: args.window.unwrap_or(herd_run::protocol::DEFAULT_WINDOW),
        connection: args.connection_window.unwrap_or(herd_run::protocol::DEFAULT_WINDOW),
    };
    p.timeout = args.timeout;
    p.tls = TlsOptions {
        ca_file: args.ca_file.clone(),
        insecure: args.insecure,
        cert: args.cert.clone(),
        resume: args.tls_resume,
    };
    p.unix_socket = args.unix_socket.clone();
    p.bind = args.bind.clone().map(|b| b.0).unwrap_or_default();
    p.bandwidth = args.bandwidth;
    p.conforming = args.conforming;
    p.fail_if = args.fail_if.clone();
    p.outputs = plan::Outputs {
        json: args.json.clone(),
        html: args.html.clone(),
        series: args.series.clone(),
        hlog: args.hlog.clone(),
    };
    p.check()?;
    Ok(p)
}

/// The user's opt-in for one target outside the safety rule's ranges, from
/// `HERD_ALLOW_TARGET` (the URL's host, exactly): set for an agent on a real cluster whose
/// user named the target (docs/cluster.md), and by `herd lab` for its client when the
/// experiment's `[hosts]` names the server host. Checked against the URL now, before
/// anything is sent; any other host is still refused.
pub(crate) fn opt_in_from_env(plan: &mut herd_run::RunPlan) -> anyhow::Result<()> {
    let var = herd_run::spread::agent::ALLOW_TARGET_VAR;
    let Some(host) = std::env::var(var).ok().filter(|h| !h.is_empty()) else { return Ok(()) };
    let opt_in = herd_engine::OptIn::new(&host)?;
    herd_engine::Target::resolve_opted_in(&plan.url.host, plan.url.port, None, Some(&opt_in))?;
    plan.opt_in = Some(opt_in);
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Plans → `to_args` → clap → [`plan`]: the same plan, for plans of every shape.
    use std::net::IpAddr;

    use clap::Parser as _;
    use proptest::prelude::*;

    use super::*;
    use herd_run::protocol;
    use herd_stats::Protocol;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn parse(plan: &RunPlan) -> Result<RunPlan, String> {
        let mut argv = vec![std::ffi::OsString::from("herd-run")];
        argv.extend(plan.to_args());
        let cli = Cli::try_parse_from(&argv).map_err(|e| format!("{argv:?}: {e}"))?;
        super::plan(&cli.run).map_err(|e| format!("{argv:?}: {e}"))
    }

    fn span() -> impl Strategy<Value = TimeSpan> {
        (1u64..=3_600_000_000_000).prop_map(|ns| {
            TimeSpan::new(std::time::Duration::from_nanos(ns)).unwrap_or(TimeSpan::MAX)
        })
    }

    fn rate() -> impl Strategy<Value = RequestRate> {
        (1e-3f64..=1e7).prop_map(|r| RequestRate::new(r).unwrap_or(RequestRate::new(1.0).unwrap()))
    }

    fn count() -> impl Strategy<Value = NonZeroU32> {
        (1u32..=100_000).prop_map(|n| NonZeroU32::new(n).unwrap())
    }

    fn think() -> impl Strategy<Value = Option<Think>> {
        prop_oneof![
            Just(None),
            span().prop_map(|d| Some(Think::Fixed(d.get()))),
            span().prop_map(|d| Some(Think::Exponential(d.get()))),
        ]
    }

    fn arrivals() -> impl Strategy<Value = Arrivals> {
        prop_oneof![Just(Arrivals::Uniform), Just(Arrivals::Poisson)]
    }

    fn pace() -> impl Strategy<Value = Pace> {
        prop_oneof![
            think().prop_map(|think| Pace::Closed { think }),
            (1u32..=1024).prop_map(|d| Pace::Pipelined { depth: NonZeroU32::new(d).unwrap() }),
            (rate(), arrivals()).prop_map(|(rate, arrivals)| Pace::Rate { rate, arrivals }),
        ]
    }

    fn stop() -> impl Strategy<Value = Stop> {
        let n = (1u64..=u64::MAX).prop_map(|n| NonZeroU64::new(n).unwrap());
        prop_oneof![
            span().prop_map(Stop::After),
            n.clone().prop_map(Stop::Requests),
            (span(), n).prop_map(|(d, n)| Stop::Either(d, n)),
        ]
    }

    fn load() -> impl Strategy<Value = Load> {
        prop_oneof![
            (count(), stop(), pace()).prop_map(|(connections, stop, pace)| Load::Single {
                connections,
                stop,
                pace
            }),
            (prop::collection::vec(count(), 1..6), span(), pace())
                .prop_map(|(clients, step, pace)| Load::Steps { clients, step, pace }),
            (count(), prop::collection::vec(rate(), 1..5), arrivals(), span()).prop_map(
                |(connections, rates, arrivals, step)| Load::RateSteps {
                    connections,
                    rates,
                    arrivals,
                    step
                }
            ),
        ]
    }

    fn path() -> impl Strategy<Value = PathBuf> {
        "[a-z/._ -]{1,20}".prop_map(PathBuf::from)
    }

    fn opt_path() -> impl Strategy<Value = Option<PathBuf>> {
        prop::option::of(path())
    }

    prop_compose! {
        fn a_plan()(
            https in any::<bool>(),
            load in load(),
            threads in prop::option::of(1u32..=1024),
            io in prop::sample::select(IoChoice::ALL.to_vec()),
            warmup in prop::option::of(span()),
            seed in any::<u64>(),
            reuse in prop_oneof![
                Just(Reuse::KeepAlive),
                Just(Reuse::PerRequest),
                (1u32..50, 0u32..50).prop_map(|(lo, extra)| Reuse::Limited {
                    lo: NonZeroU32::new(lo).unwrap(),
                    hi: NonZeroU32::new(lo + extra).unwrap(),
                }),
            ],
            method in prop_oneof![Just("GET".to_owned()), Just("POST".to_owned()), Just("HEAD".to_owned())],
            headers in prop::collection::vec("X-[a-z]{1,8}: [ -~]{0,12}", 0..3),
            body in prop_oneof![
                Just(Body::None),
                "[ -~]{0,16}".prop_map(Body::Text),
                path().prop_map(Body::File),
            ],
            http10 in any::<bool>(),
            source in prop_oneof![
                Just(Source::Url),
                path().prop_map(Source::List),
                path().prop_map(Source::Specweb),
            ],
            timeout in span(),
            insecure in any::<bool>(),
            resume in any::<bool>(),
            cert in opt_path(),
            unix_socket in opt_path(),
            bind in prop::collection::vec(any::<std::net::Ipv4Addr>().prop_map(IpAddr::V4), 0..3),
            bandwidth in prop::option::of((8u64..=1_000_000_000_000).prop_map(|b| BitRate::new(b).unwrap())),
            conforming in prop::option::of((8u64..=1_000_000_000).prop_map(|b| BitRate::new(b).unwrap())),
            fail_if in prop::collection::vec(
                prop_oneof![Just("p99<50ms"), Just("errors<=3"), Just("rps>=1000.5"), Just("max<1500us")]
                    .prop_map(|t| t.parse::<Threshold>().unwrap()),
                0..3,
            ),
            outputs in (opt_path(), opt_path(), opt_path(), opt_path()),
            h2 in (0u8..4, any::<bool>(), 1u32..=256, prop::option::of(1u64..=(1 << 31) - 1), prop::option::of(1u64..=(1 << 31) - 1)),
        ) -> RunPlan {
            let scheme = if https { "https" } else { "http" };
            let url: RunUrl = format!("{scheme}://127.0.0.1:8080/x?y=1").parse().unwrap();
            let mut p = RunPlan::new(url, load);
            p.threads = threads.map(|t| NonZeroU32::new(t).unwrap());
            p.io = io;
            p.warmup = warmup;
            p.seed = seed;
            p.reuse = reuse;
            p.requests = plan::Requests { method, headers, body, http10, source };
            p.timeout = timeout;
            p.tls = TlsOptions { ca_file: None, insecure, cert: None, resume: false };
            if https && !insecure {
                p.tls.ca_file = Some(PathBuf::from("ca.pem"));
            }
            if https {
                p.tls.cert = cert;
                p.tls.resume = resume;
            }
            if bind.is_empty() {
                p.unix_socket = unix_socket;
            }
            p.bind = bind;
            p.bandwidth = bandwidth;
            p.conforming = conforming;
            p.fail_if = fail_if;
            // Series paths must name their format.
            let series = outputs.2.map(|_| PathBuf::from("per-second.csv"));
            p.outputs = plan::Outputs { json: outputs.0, html: outputs.1, series, hlog: outputs.3 };
            let (speak, both, streams, window, connection_window) = h2;
            p.speak = match (speak, https) {
                (0, _) => Speak::Http1,
                (2, true) if both => Speak::Alpn(vec![Protocol::H2, Protocol::H1Tls]),
                (2, true) => Speak::Alpn(vec![Protocol::H2]),
                (3, true) => Speak::Http3,
                _ => Speak::Http2,
            };
            if p.speak == Speak::Http3 {
                // What HTTP/3 refuses would only be refused.
                p.requests.http10 = false;
                p.bandwidth = None;
                p.conforming = None;
                p.unix_socket = None;
                p.streams = NonZeroU32::new(streams).unwrap();
            }
            if p.speak.may_be_http2() {
                // HTTP/1-only settings would only be refused.
                p.requests.http10 = false;
                p.streams = NonZeroU32::new(streams).unwrap();
                p.windows = Windows {
                    stream: window.map_or(protocol::DEFAULT_WINDOW, ByteSize::new),
                    connection: connection_window.map_or(protocol::DEFAULT_WINDOW, ByteSize::new),
                };
            }
            p
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn every_valid_plan_reads_back_from_its_arguments(p in a_plan()) {
            // Plans `check` refuses are no argv's meaning.
            prop_assume!(p.check().is_ok());
            prop_assert_eq!(parse(&p), Ok(p));
        }
    }

    #[test]
    fn the_lab_s_plans_read_back() {
        let url: RunUrl = "http://198.18.0.2:8080/bytes/100".parse().unwrap();
        let mut p = RunPlan::new(
            url,
            Load::Steps {
                clients: [1, 4, 16].map(|c| NonZeroU32::new(c).unwrap()).to_vec(),
                step: "500ms".parse().unwrap(),
                pace: Pace::Closed { think: None },
            },
        );
        p.threads = NonZeroU32::new(2);
        p.warmup = Some("200ms".parse().unwrap());
        p.outputs.json = Some(PathBuf::from("/tmp/x/run.json"));
        assert_eq!(parse(&p), Ok(p.clone()));
        let args: Vec<String> =
            p.to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args,
            [
                "http://198.18.0.2:8080/bytes/100",
                "--steps=1,4,16",
                "--step-time=500ms",
                "--threads=2",
                "--warmup=200ms",
                "--json=/tmp/x/run.json"
            ]
        );
    }

    /// `--io` reads into the plan, goes back out as `--io=BACKEND` unless it is the default,
    /// and a spelling it does not have is refused naming the ones it has.
    #[test]
    fn io_reads_back_and_a_bad_backend_is_refused_with_the_allowed_ones() {
        let read = |args: &[&str]| {
            let mut argv = vec!["herd-run", "http://127.0.0.1/"];
            argv.extend(args);
            Cli::try_parse_from(argv).map(|cli| super::plan(&cli.run).unwrap().io)
        };
        assert_eq!(read(&[]).unwrap(), IoChoice::Auto);
        assert_eq!(read(&["--io", "epoll"]).unwrap(), IoChoice::Epoll);
        assert_eq!(read(&["--io=uring"]).unwrap(), IoChoice::Uring);
        for io in IoChoice::ALL {
            let url: RunUrl = "http://127.0.0.1:1/".parse().unwrap();
            let mut p = RunPlan::new(
                url,
                plan::Load::Single {
                    connections: NonZeroU32::MIN,
                    stop: Stop::After(plan::DEFAULT_DURATION),
                    pace: Pace::Closed { think: None },
                },
            );
            p.io = io;
            let args: Vec<String> =
                p.to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
            let said = args.iter().filter(|a| a.starts_with("--io")).collect::<Vec<_>>();
            match io {
                IoChoice::Auto => assert!(said.is_empty(), "{args:?}"),
                _ => assert_eq!(said, [&format!("--io={io}")]),
            }
            assert_eq!(parse(&p), Ok(p));
        }
        let e = read(&["--io", "io_uring"]).unwrap_err().to_string();
        assert!(e.contains("invalid value 'io_uring' for '--io <BACKEND>'"), "{e}");
        assert!(e.contains("[possible values: auto, epoll, uring]"), "{e}");
    }

    #[test]
    fn flags_that_cannot_go_together_are_refused_with_what_to_do() {
        let refused = |args: &[&str]| {
            let mut argv = vec!["herd-run"];
            argv.extend(args);
            let cli = Cli::try_parse_from(argv).unwrap();
            super::plan(&cli.run).unwrap_err().to_string()
        };
        assert!(refused(&["https://127.0.0.1/"]).contains("--ca-file FILE"));
        assert!(refused(&["http://127.0.0.1/", "--cert", "c.pem"]).contains("https:// URL"));
        assert!(refused(&["ftp://127.0.0.1/"]).contains("must start with http"));
        assert!(refused(&["http://127.0.0.1/", "--unix-socket", "/s", "--bind", "127.0.0.2"])
            .contains("--unix-socket"));
        assert!(refused(&["http://127.0.0.1/", "--h2"]).contains("--h2c"));
        assert!(refused(&["https://127.0.0.1/", "-k", "--h2c"]).contains("--h2"));
        assert!(refused(&["http://127.0.0.1/", "--streams", "10"]).contains("--h2c"));
        assert!(refused(&["http://127.0.0.1/", "--h2c", "--pipeline", "4"]).contains("--streams"));
        assert!(refused(&["http://127.0.0.1/", "--alpn", "h2"]).contains("https://"));
        assert!(refused(&["https://127.0.0.1/", "-k", "--alpn", "h3"]).contains("h2, http/1.1"));
    }

    #[test]
    fn m_is_streams_and_a_method_there_says_where_the_method_went() {
        let err = match Cli::try_parse_from(["herd-run", "http://127.0.0.1/", "-m", "POST"]) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("-m POST was taken"),
        };
        assert!(err.contains("-X POST"), "{err}");
        let cli =
            Cli::try_parse_from(["herd-run", "http://127.0.0.1/", "--h2c", "-m", "10"]).unwrap();
        assert_eq!(super::plan(&cli.run).unwrap().streams.get(), 10);
    }
}
