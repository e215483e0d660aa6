//! herd's own engine as a cell's client: `herd run` with the arguments of a
//! `herd_run::RunPlan` built from the cell ([`RunPlan::to_args`]), its result written with
//! `--json out_dir/run.json` and read back as the `RunReport` it is (herd.run.v1, typed with
//! serde), one measurement per step. herd can run every load shape; the warm-up is the
//! runner's own run, as for every tool. It speaks h1 and h1-tls, and h2, h2c and h3 with the
//! load's `streams` (`--h2`, `--h2c`, `--h3`, `--streams`); over TLS and QUIC it verifies the
//! server's certificate against the CA the driver made (`--ca-file`).

use std::num::{NonZeroU32, NonZeroU64};

use herd_run::plan::{Arrivals, Body, Load as RunLoad, Pace, Reuse, Source, Stop};
use herd_run::protocol::Speak;
use herd_run::{RunPlan, RunReport};
use herd_stats::units::{RequestRate, TimeSpan};
use herd_stats::Protocol;

use super::error::excerpt;
use super::{post_body, ClientCommand, ClientError, ClientJob, ClientOutcome, Tool};
use crate::load::Shape;

/// `herd lab run --metrics-listen`'s flags for one measured run of herd's client: its
/// figures served at `addr`, labelled with the cell and the repetition, the final ones kept up
/// at most `linger` for a scrape.
pub(crate) fn metrics_args(
    addr: std::net::SocketAddr,
    linger: TimeSpan,
    cell: &str,
    repetition: u32,
) -> Vec<std::ffi::OsString> {
    vec![
        "--metrics-listen".into(),
        addr.to_string().into(),
        format!("--metrics-linger={linger}").into(),
        "--metrics-label".into(),
        format!("cell={cell}").into(),
        "--metrics-label".into(),
        format!("repetition={repetition}").into(),
    ]
}

/// Where herd writes its result, in the job's `out_dir`.
pub(super) const JSON_FILE: &str = "run.json";

pub(super) fn command(job: &ClientJob) -> Result<ClientCommand, ClientError> {
    let plan = plan(job)?;
    let mut main = vec![job.program.as_os_str().to_owned()];
    if let Some(hosts) = &job.agent_hosts {
        // One agent on each client host, merged exactly; the one target opted in.
        main.extend(["cluster", "run", "--ssh"].map(Into::into));
        main.push(hosts.urls.join(",").into());
        if let Some(config) = hosts.ssh_config {
            main.push("--ssh-config".into());
            main.push(config.as_os_str().to_owned());
        }
        // The experiment's idle time, so that its helpers stop the agents as the server
        // host's stops the servers.
        let idle = TimeSpan::new(hosts.idle)
            .ok_or_else(|| job.invalid("[hosts] idle_timeout must be more than zero".into()))?;
        main.push(format!("--idle-timeout={idle}").into());
        if hosts.cpus.cpus().is_some() {
            main.push(format!("--agent-cpus={}", hosts.cpus).into());
        }
        if let Some(ip) = job.opt_in {
            main.push("--allow-target".into());
            main.push(url_host(ip).into());
        }
        main.push("--".into());
    } else if job.agents > 1 {
        // One run over N agents merged exactly, its JSON a herd.run.v1 as `herd run`'s.
        main.extend(["cluster", "run", "--local"].map(Into::into));
        main.push(job.agents.to_string().into());
        if !job.agent_netns.is_empty() {
            main.push(format!("--netns={}", job.agent_netns.join(",")).into());
        }
        main.push("--".into());
    } else {
        main.push("run".into());
    }
    main.extend(plan.to_args());
    Ok(ClientCommand { main, files: Vec::new() })
}

/// `ip` as a URL's host writes it (an IPv6 address in brackets).
pub(crate) fn url_host(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// The `herd run` of `job`.
pub(super) fn plan(job: &ClientJob) -> Result<RunPlan, ClientError> {
    let count = |what: &str, n: u32| {
        NonZeroU32::new(n).ok_or_else(|| job.invalid(format!("{what} must be at least 1")))
    };
    let span = |what: &str, d: std::time::Duration| {
        TimeSpan::new(d)
            .ok_or_else(|| job.invalid(format!("{what} must be more than zero and at most a year")))
    };
    let load = match &job.load.shape {
        Shape::Requests { n_requests, concurrency } => RunLoad::Single {
            connections: count("the concurrency", *concurrency)?,
            stop: Stop::Requests(
                NonZeroU64::new(*n_requests)
                    .ok_or_else(|| job.invalid("the request count must be at least 1".into()))?,
            ),
            pace: Pace::Closed { think: None },
        },
        Shape::Duration { duration, concurrency } => RunLoad::Single {
            connections: count("the concurrency", *concurrency)?,
            stop: Stop::After(span("the duration", *duration)?),
            pace: Pace::Closed { think: None },
        },
        Shape::Rate { per_second, duration, connections } => RunLoad::Single {
            connections: count("the connections", *connections)?,
            stop: Stop::After(span("the duration", *duration)?),
            pace: Pace::Rate {
                rate: RequestRate::new(*per_second).ok_or_else(|| {
                    job.invalid(format!("the rate {per_second} is not one herd can send"))
                })?,
                arrivals: Arrivals::Uniform,
            },
        },
        Shape::Steps { clients, step } => RunLoad::Steps {
            clients: clients
                .iter()
                .map(|&c| count("every step's clients", c))
                .collect::<Result<_, _>>()?,
            step: span("the step time", *step)?,
            pace: Pace::Closed { think: None },
        },
        Shape::RateSteps { rates, step, connections } => RunLoad::RateSteps {
            connections: count("the connections", *connections)?,
            rates: rates
                .iter()
                .map(|&r| {
                    RequestRate::new(r).ok_or_else(|| {
                        job.invalid(format!("the rate {r} is not one herd can send"))
                    })
                })
                .collect::<Result<_, _>>()?,
            arrivals: Arrivals::Uniform,
            step: span("the step time", *step)?,
        },
    };
    let url = job.url().parse().map_err(|e: String| job.invalid(e))?;
    let mut plan = RunPlan::new(url, load);
    if !job.load.keep_alive {
        plan.reuse = Reuse::PerRequest;
    }
    plan.timeout = span("the timeout", job.load.timeout)?;
    if let Some((file, content_type)) = post_body(job.request) {
        plan.requests.method = "POST".to_owned();
        plan.requests.body = Body::File(file.to_path_buf());
        plan.requests.headers.push(format!("Content-Type: {content_type}"));
    }
    if let Some(dir) = &job.request.specweb_dir {
        plan.requests.source = Source::Specweb(dir.clone());
    }
    plan.speak = match job.protocol {
        Protocol::H1 | Protocol::H1Tls => Speak::Http1,
        Protocol::H2 | Protocol::H2c => Speak::Http2,
        Protocol::H3 => Speak::Http3,
    };
    if let Some(streams) = job.load.streams {
        plan.streams = streams;
    }
    if job.protocol.is_encrypted() {
        let ca = job.ca_file.ok_or_else(|| {
            job.invalid(format!(
                "{} needs the CA file that signed the server's certificate, to verify it",
                job.protocol
            ))
        })?;
        plan.tls.ca_file = Some(ca.to_path_buf());
    }
    plan.threads = job.threads.map(|t| count("the threads", t)).transpose()?;
    plan.io = job.io;
    if job.trace {
        plan.trace = Some(herd_engine::TraceContext::random(true));
    }
    plan.outputs.json = Some(job.out_file(JSON_FILE));
    plan.check().map_err(|e| job.invalid(e.to_string()))?;
    Ok(plan)
}

pub(super) fn parse(
    job: &ClientJob,
    stdout: &str,
    stderr: &str,
) -> Result<ClientOutcome, ClientError> {
    let path = job.out_file(JSON_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        ClientError::output(
            Tool::Herd,
            format!("wrote no readable {} ({e}); {}", path.display(), excerpt(stdout, stderr)),
        )
    })?;
    let report = RunReport::from_json(&text).map_err(|e| {
        ClientError::output(Tool::Herd, format!("wrote {} that {e}", path.display()))
    })?;
    let mut steps = report.measurements();
    add_agent_figures(&text, &mut steps).map_err(|e| {
        ClientError::output(Tool::Herd, format!("wrote {} whose `agents` {e}", path.display()))
    })?;
    // Every step of a run turns the same backend: the first step's says it.
    let io = report.steps().first().and_then(|s| s.io.as_ref()).map(|io| herd_store::ClientIo {
        backend: io.backend_name().to_owned(),
        fallback: io.fallback.clone(),
    });
    let trace_id =
        report.steps().first().and_then(|s| s.trace.as_ref()).map(|t| t.trace_id.clone());
    Ok(ClientOutcome {
        steps,
        judgement: report.judgement(),
        health: Some(report.health()),
        io,
        trace_id,
    })
}

/// A run spread over agents (`herd cluster run`) carries each agent's own report beside the
/// merged one: its requests per second, p99 and start lateness go with each step's
/// measurement, for the report's per-agent breakdown.
fn add_agent_figures(
    text: &str,
    steps: &mut [herd_stats::Measurement],
) -> Result<(), serde_json::Error> {
    use herd_stats::AgentFigure;
    #[derive(serde::Deserialize)]
    struct Spread {
        #[serde(default)]
        agents: Vec<herd_run::spread::AgentFigures>,
    }
    let spread: Spread = serde_json::from_str(text)?;
    for a in &spread.agents {
        for (m, own) in steps.iter_mut().zip(&a.steps) {
            m.reported
                .push((AgentFigure::RequestsPerSecond.name(a.index), own.requests.per_second));
            if let Some(p99) = own.latency_us.total.quantile(0.99) {
                m.reported.push((AgentFigure::P99Us.name(a.index), p99 as f64));
            }
            m.reported.push((AgentFigure::StartLateUs.name(a.index), a.start_late_us));
            m.reported.push((AgentFigure::ClockOffsetUs.name(a.index), a.clock_offset_us));
        }
    }
    Ok(())
}
