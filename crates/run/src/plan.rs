//! `RunPlan`: a `herd run`, validated, before anything is read, resolved or sent. The flags
//! become a plan (the binary's `run_args.rs`, ripgrep's low-to-high arguments), the plan is
//! executed ([`crate::prepare`], [`crate::execute`]), and the lab builds its client's command
//! line from a plan ([`RunPlan::to_args`]), so what the lab asks for and what `herd run`
//! reads cannot drift apart: a test in the binary parses `to_args` back into the same plan.
//!
//! The types say what a run can be: a stop condition, at least one connection, a closed loop
//! (with think time) or a pipelined one or an open loop at a rate. What the types cannot say
//! (pipelining without keep-alive, a client certificate without https, …) [`RunPlan::check`]
//! refuses, with the flags to change.

use std::ffi::OsString;
use std::net::IpAddr;
use std::num::{NonZeroU32, NonZeroU64};
use std::path::PathBuf;

use herd_engine::{IoChoice, Think};
use herd_stats::units::{BitRate, RequestRate, TimeSpan};

use crate::protocol::{self, Speak, Windows};
use crate::threshold::Threshold;
use crate::url::RunUrl;

/// Everything `herd run` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    pub url: RunUrl,
    pub load: Load,
    /// Worker threads; None: one per core, at most the connections.
    pub threads: Option<NonZeroU32>,
    /// The workers' event-loop backend (`--io`): epoll, io_uring, or `auto` (io_uring where
    /// it runs and was measured faster, else epoll, saying why).
    pub io: IoChoice,
    /// `--trace-context`: a W3C `traceparent` on every request, one trace id for the run
    /// (agents of a spread run share it: `to_args` passes it on).
    pub trace: Option<herd_engine::TraceContext>,
    /// Run this long first without counting.
    pub warmup: Option<TimeSpan>,
    /// Seeds every random choice: the same seed replays the same run.
    pub seed: u64,
    pub reuse: Reuse,
    /// The protocol asked for (with the URL's scheme).
    pub speak: Speak,
    /// Requests in flight at once on each HTTP/2 connection (`--streams`; capped by the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS); 1 for HTTP/1.
    pub streams: NonZeroU32,
    /// HTTP/2's flow-control windows.
    pub windows: Windows,
    pub requests: Requests,
    /// A request without a complete response this long after it started fails.
    pub timeout: TimeSpan,
    pub tls: TlsOptions,
    /// Connect to this Unix-domain socket instead of the URL's host and port.
    pub unix_socket: Option<PathBuf>,
    /// Source addresses, spread over the connections.
    pub bind: Vec<IpAddr>,
    /// Cap each connection's receive rate.
    pub bandwidth: Option<BitRate>,
    /// Count the connections whose receive rate kept at least this; with `bandwidth` and no
    /// threshold, SPECweb99's 320 kbit/s ([`RunPlan::conforming`]).
    pub conforming: Option<BitRate>,
    /// `--fail-if` conditions.
    pub fail_if: Vec<Threshold>,
    pub outputs: Outputs,
    /// The one target outside the safety rule's ranges this run may load, named by its user
    /// through `HERD_ALLOW_TARGET`: an agent on a real cluster (docs/cluster.md), or the
    /// lab's client for the server host of an experiment's `[hosts]` (docs/hosts.md); never
    /// a `herd run` flag, never in [`RunPlan::to_args`].
    pub opt_in: Option<herd_engine::OptIn>,
}

/// How much load, and how it is paced.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// One result.
    Single { connections: NonZeroU32, stop: Stop, pace: Pace },
    /// WebBench-style: one result per count of connections, in order, each `step` long.
    Steps { clients: Vec<NonZeroU32>, step: TimeSpan, pace: Pace },
    /// One result per request rate (open loop over `connections`), in order.
    RateSteps {
        connections: NonZeroU32,
        rates: Vec<RequestRate>,
        arrivals: Arrivals,
        step: TimeSpan,
    },
}

/// When a single run stops (a request count includes the warm-up's requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    After(TimeSpan),
    Requests(NonZeroU64),
    /// Whichever comes first.
    Either(TimeSpan, NonZeroU64),
}

/// When each connection sends its next request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// As soon as the previous response ended, after an optional think time.
    Closed { think: Option<Think> },
    /// `depth` requests written at once before their responses are read (HTTP/1.1
    /// pipelining, synthetic: browsers do not pipeline). Needs keep-alive.
    Pipelined { depth: NonZeroU32 },
    /// Open loop: this many requests per second in total, whatever the server's pace.
    Rate { rate: RequestRate, arrivals: Arrivals },
}

/// How an open loop spaces its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrivals {
    #[default]
    Uniform,
    /// A Poisson process, from the run's seed.
    Poisson,
}

/// How long a connection lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reuse {
    /// As many requests as the server allows.
    #[default]
    KeepAlive,
    /// A new connection for every request (each asks the server to close).
    PerRequest,
    /// This many requests (drawn per connection from `lo..=hi`), the last asking to close.
    Limited { lo: NonZeroU32, hi: NonZeroU32 },
}

/// What is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requests {
    pub method: String,
    /// `Name: value`, in order; a Host header replaces the default.
    pub headers: Vec<String>,
    pub body: Body,
    pub http10: bool,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Body {
    #[default]
    None,
    Text(String),
    File(PathBuf),
}

/// Where the requests' targets come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    /// The URL alone.
    #[default]
    Url,
    /// A file of weighted URLs (`--urls`).
    List(PathBuf),
    /// A SPECweb99-like mix over a generated file set (`--specweb`).
    Specweb(PathBuf),
}

/// https settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsOptions {
    /// Trust these certificates and verify the server's.
    pub ca_file: Option<PathBuf>,
    /// Do not verify the server's certificate.
    pub insecure: bool,
    /// Present this client certificate (PEM chain and key).
    pub cert: Option<PathBuf>,
    /// Resume TLS sessions on new connections (`--tls-resume`); false: a full handshake each.
    pub resume: bool,
}

/// Files the run writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub series: Option<PathBuf>,
    pub hlog: Option<PathBuf>,
}

/// SPECweb99's conforming bit rate: 320 kbit/s, 80 % of its clients' 400 kbit/s link.
pub const DEFAULT_CONFORMING_BPS: u64 = 320_000;

/// Ten seconds: a run's length when neither a duration nor a count is given.
pub const DEFAULT_DURATION: TimeSpan = match TimeSpan::new(std::time::Duration::from_secs(10)) {
    Some(t) => t,
    None => TimeSpan::MAX,
};

/// A combination of settings `herd run` cannot do, and what to give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

impl RunPlan {
    /// A plan of `load` against `url` with every other setting at its default (keep-alive,
    /// GET, 30 s timeout, seed 1).
    pub fn new(url: RunUrl, load: Load) -> RunPlan {
        RunPlan {
            url,
            load,
            threads: None,
            io: IoChoice::Auto,
            trace: None,
            warmup: None,
            seed: 1,
            reuse: Reuse::KeepAlive,
            speak: Speak::Http1,
            streams: NonZeroU32::MIN,
            windows: Windows::default(),
            requests: Requests {
                method: "GET".to_owned(),
                headers: Vec::new(),
                body: Body::None,
                http10: false,
                source: Source::Url,
            },
            timeout: TimeSpan::new(std::time::Duration::from_secs(30)).unwrap_or(TimeSpan::MAX),
            tls: TlsOptions::default(),
            unix_socket: None,
            bind: Vec::new(),
            bandwidth: None,
            conforming: None,
            fail_if: Vec::new(),
            outputs: Outputs::default(),
            opt_in: None,
        }
    }

    /// How long each step lasts when steps follow one another on time (a stepped run's
    /// `--step-time`); zero for a single run, which has one step.
    fn step_length(&self) -> std::time::Duration {
        match &self.load {
            Load::Steps { step, .. } | Load::RateSteps { step, .. } => step.get(),
            Load::Single { .. } => std::time::Duration::ZERO,
        }
    }

    /// When step `k` (from 0) starts, after the run's start, in a run whose agents keep one
    /// clock (a spread run): the first at once (with its warm-up), each next one where the
    /// one before it ends.
    pub(crate) fn step_offset(&self, k: usize) -> std::time::Duration {
        if k == 0 {
            return std::time::Duration::ZERO;
        }
        self.measured_offset(k)
    }

    /// When step `k`'s measured part (its second 0) begins, after the run's start: after the
    /// warm-up, which only the first step has, then a step's length for each step before.
    /// Every agent and the coordinator count seconds from here, so they line up by index.
    pub(crate) fn measured_offset(&self, k: usize) -> std::time::Duration {
        let warmup = self.warmup.map_or(std::time::Duration::ZERO, |w| w.get());
        warmup + self.step_length().saturating_mul(u32::try_from(k).unwrap_or(u32::MAX))
    }

    /// Refuses what the types allow but a run cannot do.
    pub fn check(&self) -> Result<(), PlanError> {
        let refuse = |why: &str| Err(PlanError(why.to_owned()));
        let paces: Vec<&Pace> = match &self.load {
            Load::Single { pace, .. } | Load::Steps { pace, .. } => vec![pace],
            Load::RateSteps { .. } => Vec::new(),
        };
        for pace in paces {
            if let Pace::Pipelined { depth } = pace {
                if self.reuse == Reuse::PerRequest {
                    return refuse(
                        "--pipeline writes several requests on one connection: it needs \
                         keep-alive (drop --no-keep-alive)",
                    );
                }
                if depth.get() > 1024 {
                    return refuse("--pipeline: at most 1024 requests deep");
                }
            }
        }
        if let Load::Steps { clients, .. } = &self.load {
            if clients.is_empty() {
                return refuse("--steps needs at least one count of connections");
            }
        }
        if let Load::RateSteps { rates, .. } = &self.load {
            if rates.is_empty() {
                return refuse("--rate-steps needs at least one rate");
            }
        }
        if let Reuse::Limited { lo, hi } = self.reuse {
            if hi < lo {
                return refuse("--requests-per-conn LO-HI: HI must be at least LO");
            }
        }
        if self.tls.cert.is_some() && !self.url.tls {
            return refuse(
                "--cert presents a client certificate over TLS: it needs an https:// URL",
            );
        }
        if self.tls.insecure && self.tls.ca_file.is_some() {
            return refuse(
                "--insecure skips the certificate check that --ca-file asks for: give one",
            );
        }
        if self.url.tls && self.tls.ca_file.is_none() && !self.tls.insecure {
            return Err(PlanError(format!(
                "{}: give --ca-file FILE to verify the server's certificate, or --insecure (-k) \
                 to skip the check",
                self.url.text
            )));
        }
        if self.unix_socket.is_some() && !self.bind.is_empty() {
            return refuse(
                "--bind chooses source IP addresses; it does not apply to --unix-socket",
            );
        }
        self.check_protocol()?;
        if matches!(self.load, Load::RateSteps { .. }) && self.outputs.html.is_some() {
            return refuse(
                "--html draws a stepped run against clients; --rate-steps' steps share one \
                 count of connections: write --json instead",
            );
        }
        Ok(())
    }

    /// What the protocol asked for needs: the right scheme, and no HTTP/1 setting on HTTP/2
    /// or the other way round.
    fn check_protocol(&self) -> Result<(), PlanError> {
        let refuse = |why: &str| Err(PlanError(why.to_owned()));
        let tls = self.url.tls;
        match &self.speak {
            Speak::Http2 if tls && self.requests.http10 => {
                return refuse("--h2 speaks HTTP/2: drop --http10, which asks for HTTP/1.0")
            }
            Speak::Http2 if self.requests.http10 => {
                return refuse("--h2c speaks HTTP/2: drop --http10, which asks for HTTP/1.0")
            }
            Speak::Http3 if !tls => {
                return refuse(
                    "--h3 speaks HTTP/3 over QUIC, which is always encrypted: give an https:// URL",
                )
            }
            Speak::Http3 if self.requests.http10 => {
                return refuse("--h3 speaks HTTP/3: drop --http10, which asks for HTTP/1.0")
            }
            Speak::Http3 if self.bandwidth.is_some() => {
                return refuse(
                    "--bandwidth paces TCP reads; HTTP/3 runs over UDP: drop --bandwidth with --h3",
                )
            }
            Speak::Http3 if self.unix_socket.is_some() => {
                return refuse("--h3 runs over UDP to a host and port: drop --unix-socket")
            }
            Speak::Http3 if self.windows != Windows::default() => {
                return refuse(
                    "--window and --connection-window are HTTP/2's flow control; HTTP/3's \
                     windows are QUIC's (16 MiB per stream): drop them with --h3",
                )
            }
            Speak::Alpn(_) if !tls => {
                return refuse(
                    "--alpn chooses the protocol in the TLS handshake: it needs an https:// URL \
                     (for HTTP/2 in the clear, give --h2c)",
                )
            }
            Speak::Alpn(list) if list.is_empty() => {
                return refuse("--alpn needs at least one protocol: h2, http/1.1")
            }
            Speak::Alpn(list)
                if self.requests.http10 && list.contains(&herd_stats::Protocol::H2) =>
            {
                return refuse("--alpn with h2 may speak HTTP/2: drop --http10")
            }
            _ => {}
        }
        if !self.speak.may_multiplex() {
            if self.streams.get() > 1 {
                return refuse(
                    "--streams sends several requests at once on each HTTP/2 or HTTP/3 connection; \
                     HTTP/1.1 carries one at a time: give --h2 (https://), --h2c (http://) or --h3 \
                     (https://), or --pipeline for HTTP/1.1 pipelining",
                );
            }
            if self.windows != Windows::default() {
                return refuse(
                    "--window and --connection-window are HTTP/2's flow control: give --h2 \
                     (https://) or --h2c (http://)",
                );
            }
            return Ok(());
        }
        if self.streams.get() > protocol::MAX_STREAMS {
            return Err(PlanError(format!(
                "--streams {}: at most {} requests at once on one connection",
                self.streams,
                protocol::MAX_STREAMS
            )));
        }
        protocol::check_window("--window", self.windows.stream).map_err(PlanError)?;
        protocol::check_window("--connection-window", self.windows.connection)
            .map_err(PlanError)?;
        if self.pipeline().is_some() {
            return refuse(
                "--pipeline is HTTP/1.1's way to have several requests in flight; HTTP/2 \
                 multiplexes them: give --streams N instead",
            );
        }
        if self.think().is_some() {
            return refuse(
                "--think pauses a connection between its requests, an HTTP/1 user's pace; \
                 with HTTP/2 give an open loop (--rate) instead",
            );
        }
        Ok(())
    }

    /// The protocol the run speaks, when the asking decides it (None: the server's ALPN
    /// choice does).
    pub fn protocol(&self) -> Option<herd_stats::Protocol> {
        self.speak.protocol(self.url.tls)
    }

    /// The conforming threshold the run counts against: `--conforming`, or SPECweb99's
    /// 320 kbit/s when only `--bandwidth` is given.
    pub fn conforming(&self) -> Option<BitRate> {
        self.conforming
            .or_else(|| self.bandwidth.and_then(|_| BitRate::new(DEFAULT_CONFORMING_BPS)))
    }

    /// The steps of the run: (connections, asked rate) of each; one for a single run.
    pub fn steps(&self) -> Vec<(NonZeroU32, Option<RequestRate>)> {
        match &self.load {
            Load::Single { connections, pace, .. } => vec![(*connections, pace.rate())],
            Load::Steps { clients, pace, .. } => {
                clients.iter().map(|&c| (c, pace.rate())).collect()
            }
            Load::RateSteps { connections, rates, .. } => {
                rates.iter().map(|&r| (*connections, Some(r))).collect()
            }
        }
    }

    pub fn is_stepped(&self) -> bool {
        !matches!(self.load, Load::Single { .. })
    }

    /// Think time between a connection's requests (closed loop).
    pub fn think(&self) -> Option<Think> {
        match &self.load {
            Load::Single { pace: Pace::Closed { think }, .. }
            | Load::Steps { pace: Pace::Closed { think }, .. } => *think,
            _ => None,
        }
    }

    /// Pipelining depth, when more than one request is written at once.
    pub fn pipeline(&self) -> Option<NonZeroU32> {
        match &self.load {
            Load::Single { pace: Pace::Pipelined { depth }, .. }
            | Load::Steps { pace: Pace::Pipelined { depth }, .. } => Some(*depth),
            _ => None,
        }
    }

    /// How an open loop spaces its requests.
    pub fn arrivals(&self) -> Arrivals {
        match &self.load {
            Load::Single { pace: Pace::Rate { arrivals, .. }, .. }
            | Load::Steps { pace: Pace::Rate { arrivals, .. }, .. }
            | Load::RateSteps { arrivals, .. } => *arrivals,
            _ => Arrivals::Uniform,
        }
    }

    /// `herd run`'s arguments for this plan (after `herd run`): the URL, then every setting
    /// that is not its default, each as one `--flag=value` in its canonical spelling.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut a = Args::default();
        a.push(&self.url.text);
        match &self.load {
            Load::Single { connections, stop, pace } => {
                a.flag("--connections", connections);
                match stop {
                    Stop::After(d) => a.flag("--duration", d),
                    Stop::Requests(n) => a.flag("--requests", n),
                    Stop::Either(d, n) => {
                        a.flag("--duration", d);
                        a.flag("--requests", n);
                    }
                }
                a.pace(pace);
            }
            Load::Steps { clients, step, pace } => {
                a.flag("--steps", list(clients));
                a.flag("--step-time", step);
                a.pace(pace);
            }
            Load::RateSteps { connections, rates, arrivals, step } => {
                a.flag("--connections", connections);
                a.flag("--rate-steps", list(rates));
                a.flag("--step-time", step);
                a.arrivals(*arrivals);
            }
        }
        if let Some(t) = self.threads {
            a.flag("--threads", t);
        }
        if self.io != IoChoice::Auto {
            a.flag("--io", self.io);
        }
        if let Some(t) = &self.trace {
            a.push(if t.sampled() { "--trace-context" } else { "--trace-context=unsampled" });
            a.flag("--trace-id", t.trace_id());
        }
        if let Some(w) = self.warmup {
            a.flag("--warmup", w);
        }
        if self.seed != 1 {
            a.flag("--seed", self.seed);
        }
        match self.reuse {
            Reuse::KeepAlive => {}
            Reuse::PerRequest => a.push("--no-keep-alive"),
            Reuse::Limited { lo, hi } if lo == hi => a.flag("--requests-per-conn", lo),
            Reuse::Limited { lo, hi } => a.flag("--requests-per-conn", format!("{lo}-{hi}")),
        }
        match &self.speak {
            Speak::Http1 => {}
            Speak::Http2 if self.url.tls => a.push("--h2"),
            Speak::Http2 => a.push("--h2c"),
            Speak::Http3 => a.push("--h3"),
            Speak::Alpn(list) => a.flag("--alpn", protocol::alpn_text(list)),
        }
        if self.streams.get() != 1 {
            a.flag("--streams", self.streams);
        }
        if self.windows.stream != protocol::DEFAULT_WINDOW {
            a.flag("--window", self.windows.stream);
        }
        if self.windows.connection != protocol::DEFAULT_WINDOW {
            a.flag("--connection-window", self.windows.connection);
        }
        let r = &self.requests;
        if r.method != "GET" {
            a.flag("--method", &r.method);
        }
        for h in &r.headers {
            a.flag("--header", h);
        }
        match &r.body {
            Body::None => {}
            Body::Text(t) => a.flag("--body", t),
            Body::File(p) => a.path("--body-file", p),
        }
        if r.http10 {
            a.push("--http10");
        }
        match &r.source {
            Source::Url => {}
            Source::List(p) => a.path("--urls", p),
            Source::Specweb(p) => a.path("--specweb", p),
        }
        if self.timeout.get() != std::time::Duration::from_secs(30) {
            a.flag("--timeout", self.timeout);
        }
        if let Some(p) = &self.tls.ca_file {
            a.path("--ca-file", p);
        }
        if self.tls.insecure {
            a.push("--insecure");
        }
        if let Some(p) = &self.tls.cert {
            a.path("--cert", p);
        }
        if self.tls.resume {
            a.push("--tls-resume");
        }
        if let Some(p) = &self.unix_socket {
            a.path("--unix-socket", p);
        }
        if !self.bind.is_empty() {
            a.flag("--bind", list(&self.bind));
        }
        if let Some(b) = self.bandwidth {
            a.flag("--bandwidth", b);
        }
        if let Some(c) = self.conforming {
            a.flag("--conforming", c);
        }
        for t in &self.fail_if {
            a.flag("--fail-if", t);
        }
        let o = &self.outputs;
        for (flag, path) in
            [("--json", &o.json), ("--html", &o.html), ("--series", &o.series), ("--hlog", &o.hlog)]
        {
            if let Some(p) = path {
                a.path(flag, p);
            }
        }
        a.0
    }
}

impl Pace {
    /// The asked rate of an open loop.
    pub fn rate(&self) -> Option<RequestRate> {
        match self {
            Pace::Rate { rate, .. } => Some(*rate),
            Pace::Closed { .. } | Pace::Pipelined { .. } => None,
        }
    }
}

/// `herd run`'s argv, built in order.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn push(&mut self, s: impl Into<OsString>) {
        self.0.push(s.into());
    }

    /// `--flag=value` as one argument: a value that starts with `-` (a body, a path) is
    /// still the flag's value, not another flag.
    fn flag(&mut self, flag: &str, value: impl std::fmt::Display) {
        self.push(format!("{flag}={value}"));
    }

    fn path(&mut self, flag: &str, path: &std::path::Path) {
        let mut arg = OsString::from(format!("{flag}="));
        arg.push(path.as_os_str());
        self.push(arg);
    }

    fn pace(&mut self, pace: &Pace) {
        match pace {
            Pace::Closed { think: None } => {}
            Pace::Closed { think: Some(t) } => self.flag("--think", think_text(*t)),
            Pace::Pipelined { depth } => self.flag("--pipeline", depth),
            Pace::Rate { rate, arrivals } => {
                self.flag("--rate", rate);
                self.arrivals(*arrivals);
            }
        }
    }

    fn arrivals(&mut self, arrivals: Arrivals) {
        if arrivals == Arrivals::Poisson {
            self.flag("--arrivals", "poisson");
        }
    }
}

/// `--think`'s spelling: `1s`, or `exp:1s` for an exponential mean.
pub fn think_text(t: Think) -> String {
    let span =
        |d| TimeSpan::new(d).map_or_else(|| format!("{}ns", d.as_nanos()), |s| s.to_string());
    match t {
        Think::Fixed(d) => span(d),
        Think::Exponential(d) => format!("exp:{}", span(d)),
    }
}

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use super::*;

    /// Spread runs' intervals line up: every step's measured part begins where the one before
    /// it ends, and the first after the warm-up; each step's engine starts there too, except
    /// the first, which starts at the run's start with its warm-up.
    #[test]
    fn steps_follow_one_another_on_one_clock() {
        let span = |s| TimeSpan::new(Duration::from_secs(s)).unwrap();
        let url: RunUrl = "http://127.0.0.1:1/".parse().unwrap();
        let mut p = RunPlan::new(
            url,
            Load::Steps {
                clients: [1, 2, 4].map(|c| NonZeroU32::new(c).unwrap()).into(),
                step: span(5),
                pace: Pace::Closed { think: None },
            },
        );
        p.warmup = Some(span(2));
        let secs = |d: Duration| d.as_secs();
        let measured: Vec<u64> = (0..3).map(|k| secs(p.measured_offset(k))).collect();
        let starts: Vec<u64> = (0..3).map(|k| secs(p.step_offset(k))).collect();
        assert_eq!(measured, [2, 7, 12]);
        assert_eq!(starts, [0, 7, 12]);
        for k in 0..2 {
            assert_eq!(p.measured_offset(k) + Duration::from_secs(5), p.measured_offset(k + 1));
        }
        // A single run: one step, measured after its warm-up.
        p.load = Load::Single {
            connections: NonZeroU32::MIN,
            stop: Stop::After(span(10)),
            pace: Pace::Closed { think: None },
        };
        assert_eq!(
            (p.step_offset(0), p.measured_offset(0)),
            (Duration::ZERO, Duration::from_secs(2))
        );
    }
}
