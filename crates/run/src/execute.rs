//! Carrying out a [`RunPlan`]: [`prepare`] reads what the plan names and resolves where the
//! load goes (before any output is created or request sent, so a bad setting costs nothing);
//! [`execute`] runs every step with the engine and returns the [`RunReport`].

use std::fs;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use std::num::{NonZeroU32, NonZeroU64};

use herd_engine::quic::{QuicClient, QuicSettings};
use herd_engine::{
    self as engine, Control, EngineError, H2Settings, H3Wire, PerConnection, Reach, RunSpec,
    SocketOptions, StartGate, Target, Think, TlsClient, TlsSettings, TlsVersions, Unreachable,
    Wire,
};
use herd_stats::units::{BitRate, RequestRate};
use herd_stats::Protocol;

use crate::client_usage::UsageProbe;
use crate::error::RunError;
use crate::outputs::{Outputs, StepStart};
use crate::plan::PlanError;
use crate::plan::{Arrivals, Body, Load, Reuse, RunPlan, Source, Stop};
use crate::protocol::Speak;
use crate::report::{RunReport, StepReport};
use crate::request::RequestTemplate;
use crate::run_info::RunInfo;
use crate::server_usage::ServerProbe;
use crate::step_result;
use crate::workload::{self, BuiltWorkload};
use herd_record::Seconds;
use herd_record::{RecorderPlan, RunRecorder};

/// What was asked of the whole run (every step alike), as the summary and the report say it.
#[derive(Debug, Clone, Default)]
pub struct RunSetup {
    /// The URL as given.
    pub url: String,
    /// The mix, when not the URL alone.
    pub description: Option<String>,
    pub group_names: Vec<String>,
    /// What a group is (`URL`, `class`).
    pub group_kind: &'static str,
    pub bandwidth: Option<BitRate>,
    /// The conforming threshold.
    pub conforming: Option<BitRate>,
    pub think: Option<Think>,
    pub per_connection: Option<(u32, u32)>,
    /// Pipelining depth, when more than 1.
    pub pipeline: Option<u32>,
    /// What the run speaks (None only in setups built before a run was prepared).
    pub protocol: Option<Protocol>,
    /// Requests at once per connection, for a multiplexed protocol.
    pub streams: Option<u32>,
    /// A stepped run's planned length of each step (a step that ended early, such as one
    /// whose server was not there, measured less).
    pub step: Option<herd_stats::units::TimeSpan>,
    /// `--trace-context`: what every request's `traceparent` carries.
    pub trace: Option<herd_engine::TraceContext>,
}

/// A plan made ready: its requests built, its target resolved and checked.
#[derive(Debug)]
pub struct Prepared {
    plan: RunPlan,
    target: Target,
    built: BuiltWorkload,
    setup: RunSetup,
    recorder_plan: Arc<RecorderPlan>,
    /// What the run speaks (the server's ALPN choice, when it decides).
    protocol: Protocol,
    /// HTTP/3: the QUIC configuration every connection shares.
    quic: Option<QuicClient>,
    /// This process's part of a run spread over agents, and their shared start.
    spread: Option<Spread>,
}

/// This process as agent `slice` of a run spread over several (docs/cluster.md): it sends
/// its stripe of the run's connections, requests and arrivals, and every step starts at a
/// moment all agents share: the first when `gate` opens (its connections opened first),
/// each next one a step's length (and the warm-up) later, so that the agents' seconds line
/// up by index.
#[derive(Debug, Clone)]
pub struct Spread {
    pub slice: engine::Slice,
    pub gate: Arc<StartGate>,
}

impl Prepared {
    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }

    pub fn setup(&self) -> &RunSetup {
        &self.setup
    }

    /// What the run speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Runs only this agent's part, from the shared start (`Spread`).
    pub fn spread(&mut self, spread: Spread) {
        self.spread = Some(spread);
    }

    /// When step `k` (from 0) starts: at once, or in a spread run when the gate opens, then
    /// one step's length later for each step before it (the warm-up runs before the first).
    fn step_start(&self, k: usize) -> engine::Start {
        let Some(spread) = &self.spread else { return engine::Start::Now };
        if k == 0 {
            return engine::Start::Gate(spread.gate.clone());
        }
        match spread.gate.opened() {
            Some(at) => engine::Start::At(at + self.plan.step_offset(k)),
            // Unreachable: a later step runs only after the first, which opened the gate.
            None => engine::Start::Now,
        }
    }

    /// The engine's description of one step: `connections` at `rate` (an open loop) or in
    /// the plan's closed loop, for `duration` when the plan stops on time.
    fn spec(
        &self,
        connections: NonZeroU32,
        rate: Option<RequestRate>,
        duration: Option<Duration>,
    ) -> Result<RunSpec, RunError> {
        let plan = &self.plan;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = plan.threads.unwrap_or_else(|| {
            NonZeroU32::new(u32::try_from(cores).unwrap_or(1)).unwrap_or(NonZeroU32::MIN)
        });
        let requests = match &plan.load {
            Load::Single { stop: Stop::Requests(n) | Stop::Either(_, n), .. } => Some(*n),
            _ => None,
        };
        let per_connection = match plan.reuse {
            Reuse::Limited { lo, hi } => Some(
                PerConnection::new(lo.get(), hi.get())
                    .map_err(|e| RunError::Plan(PlanError(e.to_string())))?,
            ),
            Reuse::KeepAlive | Reuse::PerRequest => None,
        };
        let reuse = match plan.reuse {
            Reuse::PerRequest => engine::Reuse::Close,
            Reuse::KeepAlive | Reuse::Limited { .. } => engine::Reuse::KeepAlive { per_connection },
        };
        let schedule = match (rate, plan.pipeline()) {
            (Some(rate), _) => engine::Schedule::Rate {
                rate,
                arrivals: match plan.arrivals() {
                    Arrivals::Uniform => engine::Arrivals::Uniform,
                    Arrivals::Poisson => engine::Arrivals::Poisson { seed: plan.seed },
                },
                reuse,
            },
            (None, Some(depth)) => engine::Schedule::Pipelined { depth, per_connection },
            (None, None) => engine::Schedule::Closed { reuse, think: plan.think() },
        };
        let stop = engine::StopAt::new(requests, duration)
            .map_err(|e| RunError::Plan(PlanError(e.to_string())))?;
        Ok(RunSpec {
            target: self.target.clone(),
            workload: self.built.workload.clone(),
            connections,
            threads,
            stop,
            timeout: plan.timeout.get(),
            limits: herd_proto::Limits::default(),
            socket: SocketOptions { bind: plan.bind.clone(), buffer_size: None },
            schedule,
            receive_rate: plan.bandwidth.and_then(|b| NonZeroU64::new(b.bytes_per_second())),
            seed: plan.seed,
            wire: self.wire(),
            slice: self.spread.as_ref().map_or(engine::Slice::WHOLE, |s| s.slice),
            start: engine::Start::Now,
            // A server that is not there refuses every attempt: trying for the whole run
            // measures nothing (execute_parts keeps trying once a step has reached it).
            unreachable: Unreachable::GiveUp,
            io: plan.io,
        })
    }

    /// The engine's protocol for the run.
    fn wire(&self) -> Wire {
        if let Some(client) = &self.quic {
            return Wire::Http3(H3Wire { streams: self.plan.streams, client: client.clone() });
        }
        if !self.protocol.is_multiplexed() {
            return Wire::Http1;
        }
        let window = |w: herd_stats::units::ByteSize| {
            u32::try_from(w.bytes()).unwrap_or(H2Settings::MAX_WINDOW).min(H2Settings::MAX_WINDOW)
        };
        let windows = self.plan.windows;
        Wire::Http2(H2Settings {
            streams: self.plan.streams,
            stream_window: window(windows.stream),
            connection_window: window(windows.connection),
        })
    }
}

/// Checks `plan`, builds its requests (reading a body file, a URL list or a SPECweb set),
/// sets up TLS and resolves the target under the safety rule. Nothing is sent.
pub fn prepare(plan: &RunPlan) -> Result<Prepared, RunError> {
    plan.check()?;
    let url = &plan.url;
    let built = build_workload(plan)?;
    let h3 = plan.speak == Speak::Http3;
    let tls_settings = url.tls.then(|| TlsSettings {
        versions: TlsVersions::All,
        cipher_suites: None,
        client_cert: plan.tls.cert.clone(),
        ca_file: plan.tls.ca_file.clone(),
        sni: url.host.parse::<IpAddr>().is_err().then(|| url.host.clone()),
        alpn: plan.speak.alpn_ids(true),
        resume: plan.tls.resume,
    });
    // HTTP/3 has its own TLS (QUIC's, 1.3 with ALPN h3) and no TCP one.
    let quic = match (&tls_settings, h3) {
        (Some(settings), true) => Some(
            QuicClient::new(
                // A silent server fails the handshake within the run's own timeout.
                &QuicSettings {
                    handshake_timeout: plan.timeout.get(),
                    ..QuicSettings::new(settings.clone())
                },
                &url.host,
            )
            .map_err(RunError::Quic)?,
        ),
        _ => None,
    };
    let tls = match (&tls_settings, h3) {
        (Some(settings), false) => {
            Some(TlsClient::new(settings, &url.host).map_err(RunError::Tls)?)
        }
        _ => None,
    };
    let target = match &plan.unix_socket {
        Some(path) => {
            use std::os::unix::fs::FileTypeExt as _;
            let meta = fs::metadata(path).map_err(|e| {
                RunError::Connect(format!("cannot use --unix-socket {}: {e}", path.display()))
            })?;
            if !meta.file_type().is_socket() {
                return Err(RunError::Connect(format!(
                    "--unix-socket {}: not a socket",
                    path.display()
                )));
            }
            Target::unix(path.clone(), &url.host, tls)
        }
        None => Target::resolve_opted_in(&url.host, url.port, tls, plan.opt_in.as_ref())?,
    };
    check_sources(&plan.bind, &target)?;
    let protocol = decide_protocol(plan, &target)?;
    let setup = setup_of(plan, &built, Some(protocol));
    // The recorders' view of the workload, the same for every step; per-connection rates are
    // sized for the largest step.
    let recorder_plan = Arc::new(RecorderPlan {
        group_of: built.group_of.clone(),
        n_groups: built.group_names.len(),
        expected_bytes: built.expected_bytes.clone(),
        conn_rates: setup.conforming.and(plan.steps().iter().map(|&(c, _)| c.get()).max()),
    });
    let prepared = Prepared {
        plan: plan.clone(),
        target,
        built,
        setup,
        recorder_plan,
        protocol,
        quic,
        spread: None,
    };
    // `--io uring` where it cannot run is refused here, before any output is made or any
    // request sent (the engine settles it again, from the same probe, when it runs).
    engine::io_choice::resolve(plan.io, &prepared.wire()).map_err(EngineError::Io)?;
    Ok(prepared)
}

/// What a spread run's coordinator says of the run it merges: the plan checked and its
/// requests built (to name its groups), but no target resolved and nothing sent; the
/// protocol is the plan's, or (when the server decides) left for the agents to tell.
pub(crate) fn spread_setup(plan: &RunPlan) -> Result<RunSetup, RunError> {
    plan.check()?;
    let built = build_workload(plan)?;
    Ok(setup_of(plan, &built, plan.protocol()))
}

/// What was asked of the run, as the summary and the report say it.
fn setup_of(plan: &RunPlan, built: &BuiltWorkload, protocol: Option<Protocol>) -> RunSetup {
    let url = &plan.url;
    RunSetup {
        url: url.text.clone(),
        description: built.description.clone(),
        group_names: built.group_names.clone(),
        group_kind: built.group_kind,
        bandwidth: plan.bandwidth,
        conforming: plan.conforming(),
        think: plan.think(),
        per_connection: match plan.reuse {
            Reuse::Limited { lo, hi } => Some((lo.get(), hi.get())),
            Reuse::KeepAlive | Reuse::PerRequest => None,
        },
        pipeline: plan.pipeline().map(|d| d.get()).filter(|&d| d > 1),
        protocol,
        streams: protocol.filter(|p| p.is_multiplexed()).map(|_| plan.streams.get()),
        step: match &plan.load {
            Load::Steps { step, .. } | Load::RateSteps { step, .. } => Some(*step),
            Load::Single { .. } => None,
        },
        trace: plan.trace,
    }
}

/// The protocol the run speaks. Over TLS, when HTTP/2 may be spoken, one handshake asks the
/// server first: `--alpn` then runs what it chose, and `--h2` stops here with the reason if
/// it will not speak HTTP/2 (rather than failing every connection of the run).
fn decide_protocol(plan: &RunPlan, target: &Target) -> Result<Protocol, RunError> {
    let ask = match &plan.speak {
        Speak::Alpn(_) => true,
        Speak::Http2 => plan.url.tls,
        Speak::Http1 | Speak::Http3 => false,
    };
    if let Some(p) = plan.protocol().filter(|_| !ask) {
        return Ok(p);
    }
    let chosen = engine::negotiate_alpn(target, plan.timeout.get()).map_err(RunError::Probe)?;
    let chosen_text = match &chosen {
        Some(id) => format!("ALPN {}", String::from_utf8_lossy(id)),
        None => "no ALPN protocol".to_owned(),
    };
    let protocol = chosen.as_deref().and_then(Protocol::from_alpn_over_tls);
    let offered = plan.speak.alpn_ids(true);
    match protocol {
        Some(p) if chosen.as_ref().is_some_and(|id| offered.contains(id)) => {
            if !p.is_multiplexed() && plan.streams.get() > 1 {
                return Err(RunError::Protocol(format!(
                    "{} chose {chosen_text}: --streams {} needs HTTP/2; drop --streams or \
                     http/1.1 from --alpn",
                    plan.url.host, plan.streams
                )));
            }
            Ok(p)
        }
        _ => Err(RunError::Protocol(format!(
            "{} does not speak HTTP/2 over TLS (it chose {chosen_text}); to fall back to \
             HTTP/1.1 give --alpn h2,http/1.1, or drop --h2",
            plan.url.host
        ))),
    }
}

/// Runs every step of the prepared plan, in order, stopping after a step that `control`
/// interrupted. `on_step(k, report)` sees each step's report as it ends (k from 1); `outputs`
/// gets the run second by second.
pub fn execute(
    p: &Prepared,
    control: &Control,
    outputs: Option<&Outputs>,
    mut on_step: impl FnMut(usize, &StepReport),
) -> Result<RunReport, RunError> {
    execute_parts(p, control, outputs, |k, _, _, report| on_step(k, report))
}

/// [`execute`], `on_step` seeing each step's run facts and merged recorder beside its report
/// (an agent of a spread run sends all three).
pub(crate) fn execute_parts(
    p: &Prepared,
    control: &Control,
    outputs: Option<&Outputs>,
    mut on_step: impl FnMut(usize, &RunInfo, &RunRecorder, &StepReport),
) -> Result<RunReport, RunError> {
    let plan = &p.plan;
    let stepped = plan.is_stepped();
    let warmup_all = plan.warmup.map_or(Duration::ZERO, |w| w.get());
    let mut reports = Vec::new();
    // Whether a step has reached the target: from then on a step whose server stops
    // answering counts its failures to the end, as any run whose server fails mid-run.
    let mut reached = false;
    for (k, (connections, rate)) in plan.steps().into_iter().enumerate() {
        // The warm-up runs once, before the first step.
        let warmup = if k == 0 { warmup_all } else { Duration::ZERO };
        let duration = match &plan.load {
            Load::Steps { step, .. } | Load::RateSteps { step, .. } => Some(step.get() + warmup),
            Load::Single { stop: Stop::After(d) | Stop::Either(d, _), .. } => {
                Some(d.get() + warmup)
            }
            Load::Single { stop: Stop::Requests(_), .. } => None,
        };
        let mut spec = p.spec(connections, rate, duration)?;
        spec.start = p.step_start(k);
        if reached {
            spec.unreachable = Unreachable::KeepTrying;
        }
        let step = stepped.then_some(k + 1);
        let rate = rate.map(|r| r.per_second());
        let (info, recorder, reach) =
            measure(&spec, control, rate, warmup, &p.recorder_plan, outputs.map(|o| (o, step)))?;
        reached |= reach == Reach::Connected;
        let report = step_result::step_report(&p.setup, &info, &recorder);
        on_step(k + 1, &info, &recorder, &report);
        reports.push(report);
        if info.interrupted {
            break;
        }
        // Nothing answered the step's first attempts: the next steps would only try again.
        // A spread run's agents keep step with their coordinator instead, each of them
        // giving every step up as quickly.
        if reach == Reach::GaveUp && p.spread.is_none() {
            break;
        }
    }
    Ok(if stepped {
        RunReport::Stepped { url: plan.url.text.clone(), steps: reports }
    } else {
        match reports.pop() {
            Some(r) => RunReport::Single(Box::new(r)),
            // Unreachable: a plan has at least one step (`RunPlan::check`).
            None => RunReport::Stepped { url: plan.url.text.clone(), steps: Vec::new() },
        }
    })
}

/// One engine run, its warm-up kept apart, and whether it reached the target; with
/// `outputs`, its seconds go there as it runs (`step`: the step's number in a stepped run).
fn measure(
    spec: &RunSpec,
    control: &Control,
    rate: Option<f64>,
    warmup: Duration,
    plan: &Arc<RecorderPlan>,
    outputs: Option<(&Outputs, Option<usize>)>,
) -> Result<(RunInfo, RunRecorder, Reach), RunError> {
    let workers = spec.worker_count();
    // The step's outputs begin once the engine knows its start (a spread run's is known
    // only when its gate opens): second 0 starts where the summary's figures start, the
    // end of the warm-up.
    let feed = OnceLock::new();
    let begin = |start: Instant| {
        feed.get_or_init(|| {
            outputs.map(|(o, step)| {
                let wall = engine::wall_clock_at(start);
                o.begin_step(StepStart {
                    step,
                    workers: workers as usize,
                    origin: start + warmup,
                    origin_wall: wall.checked_add(warmup).unwrap_or(wall),
                })
            })
        })
    };
    let measure_from = |start: Instant| (!warmup.is_zero()).then(|| start + warmup);
    // The measured part's planned length: outcomes past it (the engine's last loop turn)
    // belong to its last second.
    let span = spec.stop.deadline().map(|d| d.saturating_sub(warmup));
    let probe = UsageProbe::start(rate.is_some());
    // The server's CPU, where it runs here and herd can read it; not for an agent of a spread
    // run, whose fellow agents would each count the same server.
    let server_probe = (spec.slice.count() == 1 && spec.target.unix.is_none())
        .then(|| {
            let udp = matches!(spec.wire, herd_engine::Wire::Http3(_));
            ServerProbe::start(&spec.target.addrs, udp)
        })
        .flatten();
    let mut done = herd_engine::run(spec, control, |i, start| {
        let origin = start + warmup;
        let recorder = RunRecorder::new(measure_from(start), plan.clone());
        match begin(start) {
            Some(feed) => {
                let quota = u32::try_from(i).ok().and_then(|i| spec.share(i, workers).1);
                recorder.with_seconds(Seconds::new(i, origin, span, quota, feed.clone().into_out()))
            }
            None => recorder,
        }
    })?;
    let client = probe.finish(&done.workers);
    let server = server_probe.as_ref().and_then(ServerProbe::finish);
    if let Some((o, _)) = outputs {
        for r in &mut done.recorders {
            r.finish_seconds(done.ended);
        }
        o.end_step();
    }
    let mut recorder = RunRecorder::new(None, plan.clone());
    for r in &done.recorders {
        recorder += r;
    }
    recorder.settle();
    let from = measure_from(done.started).map_or(done.started, |t| t.max(done.started));
    // An agent's report is of its own part: its connections and its share of the rate.
    let agents = spec.slice.count();
    let info = RunInfo {
        connections: spec.agent_connections(),
        threads: spec.worker_count(),
        keep_alive: spec.keep_alive(),
        rate: rate.map(|r| r / f64::from(agents)),
        elapsed: done.ended.saturating_duration_since(from),
        interrupted: done.interrupted,
        client,
        server,
        quic: done.quic,
        io: Some(done.io),
        late: done.late,
    };
    Ok((info, recorder, done.reach))
}

/// Every `--bind` address must be one of this host's, of the target's family: checked by
/// binding a socket to it, so that a typo fails before the run instead of as N connect errors.
fn check_sources(sources: &[IpAddr], target: &Target) -> Result<(), RunError> {
    let family_ok = |ip: &IpAddr| target.addrs.iter().any(|a| a.is_ipv4() == ip.is_ipv4());
    for ip in sources {
        if !family_ok(ip) {
            return Err(RunError::Connect(format!(
                "--bind {ip}: {} resolves to no {} address; give source addresses of its family",
                target.host,
                if ip.is_ipv4() { "IPv4" } else { "IPv6" }
            )));
        }
        if let Err(e) = std::net::TcpListener::bind((*ip, 0)) {
            return Err(RunError::Connect(format!(
                "--bind {ip}: cannot use it as a source address ({e}); give addresses of this host"
            )));
        }
    }
    Ok(())
}

fn build_workload(plan: &RunPlan) -> Result<BuiltWorkload, RunError> {
    let r = &plan.requests;
    let body = match &r.body {
        Body::Text(b) => b.clone().into_bytes(),
        Body::File(path) => fs::read(path).map_err(|e| {
            RunError::Requests(format!("--body-file {}: cannot read it: {e}", path.display()))
        })?,
        Body::None => Vec::new(),
    };
    let template = RequestTemplate::new(&r.headers, &plan.url.authority, body, r.http10)
        .map_err(RunError::Requests)?;
    let source = match &r.source {
        Source::List(list) => workload::Source::List(list),
        Source::Specweb(dir) => workload::Source::Specweb(dir),
        Source::Url => workload::Source::Single,
    };
    let mut built = workload::build(
        source,
        &plan.url,
        &r.method,
        &template,
        matches!(plan.reuse, Reuse::Limited { .. }),
        plan.reuse == Reuse::PerRequest,
    )
    .map_err(RunError::Requests)?;
    if let Some(t) = plan.trace {
        built.workload = built.workload.traced(t);
    }
    Ok(built)
}
