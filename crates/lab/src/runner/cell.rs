//! One run of one cell, as a sequence of phases ([`CellRun::measure`]): start the servers,
//! start the path's router program, check the path, verify the workload's answer, warm up,
//! measure (the servers' CPU time around the client), account (the record for the store).
//! Each phase is a method of [`CellRun`], in a file of its own; a failure at any of them is
//! the run's result, a typed [`RunFailure`] stored as its kind and message. Whatever
//! happened, everything the run started is stopped by PID and its path removed. Only Ctrl-C
//! returns nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use herd_stats::{LatencySeries, RateHold};
use herd_store::{ClientRecord, Measure, Outcome, RepetitionRecord};
use herd_topo::net::PATH_PORT;
use herd_topo::Supervisor;

use super::failure::{Phase, RunFailure, Stop};
use super::now_rfc3339;
use super::place::Place;
use super::preflight::Ready;
use super::profile::{self, Folded};
use super::progress::{Progress, RunSummary};
use super::server_count::{self as count, Counted, Pending, Sent, ServerLog};
use super::watched::Started;
use crate::docroot::Docroot;
use crate::experiment::Experiment;
use crate::matrix::Cell;
use crate::timewait;

/// What every run of the experiment shares.
pub(super) struct Context<'a> {
    pub experiment: &'a Experiment,
    pub ready: &'a Ready,
    pub docroot: &'a Docroot,
    pub run_dir: &'a Path,
    pub cancel: &'a AtomicBool,
    /// The `[hosts]` server host, where every run's server starts; None: this machine.
    pub server_host: Option<&'a super::role_host::RoleHost>,
    /// The `[hosts]` client hosts, where herd's client runs as agents; None: here.
    pub client_hosts: Option<&'a super::client_hosts::ClientHosts>,
    /// The `[hosts]` router host, where a proxy path's program starts; None: here.
    pub router_host: Option<&'a super::role_host::RoleHost>,
    /// `herd lab run --metrics-listen` (LabRun's `metrics`).
    pub metrics: Option<(std::net::SocketAddr, herd_stats::units::TimeSpan)>,
    /// `herd lab run --tui` (LabRun's `live_series`).
    pub live_series: Option<&'a Path>,
}

impl<'a> Context<'a> {
    /// The `[hosts]` hosts a run's programs may start on.
    pub(super) fn remotes(&self) -> super::watched::Remotes<'a> {
        super::watched::Remotes { server: self.server_host, router: self.router_host }
    }
}

/// How one run ended.
pub(super) enum RunEnd {
    /// Finished (ok or failed): the record to store, and for a profiled run its stacks.
    Recorded(Box<RepetitionRecord>, RunSummary, Option<Folded>),
    /// Ctrl-C: nothing to keep; `stopped` processes of this run (servers, and the client
    /// when it was running) were stopped.
    Cancelled { stopped: usize },
}

/// One run of a cell in flight: what its phases read and the record they fill.
pub(super) struct CellRun<'a> {
    pub(super) ctx: &'a Context<'a>,
    pub(super) cell: &'a Cell,
    pub(super) place: &'a Place,
    /// The run's own directory: configs, logs, the client's output.
    pub(super) dir: &'a Path,
    pub(super) sup: &'a mut Supervisor,
    /// Program versions found so far in this experiment (asked once each).
    pub(super) versions: &'a mut BTreeMap<String, String>,
    pub(super) rec: &'a mut RepetitionRecord,
    /// For a protocol over TLS, the CA the client and the verification trust: the one made
    /// with the server's launch, or the router's where a proxy ends TLS itself.
    pub(super) ca_file: Option<PathBuf>,
    /// A profiled run (`[runner] profile`): perf, and where the folded stacks go.
    pub(super) profile: Option<(&'a Path, &'a mut Option<Folded>)>,
    /// With `[runner] server_count`, where the front server writes its access log (set as
    /// the servers start).
    pub(super) server_log: Option<ServerLog>,
}

/// Grace between SIGTERM and SIGKILL for servers.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs `cell` once: repetition `rep`, at `position` in its round; with `perf`, profiled.
pub(super) fn run(
    ctx: &Context<'_>,
    cell: &Cell,
    (rep, position): (u32, u32),
    sup: &mut Supervisor,
    versions: &mut BTreeMap<String, String>,
    progress: &mut dyn Progress,
    perf: Option<&Path>,
) -> RunEnd {
    let started_at = now_rfc3339();
    let clock = Instant::now();
    let Some((tw_before, drained)) = drain_time_wait(ctx, cell, progress) else {
        return RunEnd::Cancelled { stopped: 0 };
    };
    let dir = ctx.run_dir.join("cells").join(format!("{:03}-r{rep}", cell.index));
    let mut rec = new_record(ctx, cell, rep, position, started_at, versions);
    rec.time_wait_before = tw_before;
    rec.drain_seconds = drained.as_secs_f64();
    let mut place = None;
    let agents = ctx.experiment.client_agents.unwrap_or(1);
    let mut folded = None;
    let result = build_place(ctx, cell, agents, &dir, sup).and_then(|p| {
        let place = place.insert(p);
        let profile = perf.map(|perf| (perf, &mut folded));
        let rec = &mut rec;
        let server_log = None;
        CellRun {
            ctx,
            cell,
            place,
            dir: &dir,
            sup,
            versions,
            rec,
            ca_file: None,
            profile,
            server_log,
        }
        .measure()
    });
    // Stop this run's servers (and anything else still running) whatever happened, then
    // remove the path they ran on.
    let mut stopped = sup.stop_all(STOP_GRACE);
    // The router's program first: it forwards to the server.
    for host in ctx.remotes().each().collect::<Vec<_>>().into_iter().rev() {
        stopped += host.stop_all(STOP_GRACE);
    }
    // The server-count check reads the access log here, after the stop and before the run's
    // directory goes: every process of the run has ended, so a server that buffers its lines
    // (lighttpd) or logs from children (Apache, php-fpm behind nginx) has written them all
    // out, and the one stop above stays the only one (stopping the servers earlier, in the
    // account phase, would need a second stop path for every failure after it).
    let result = result.and_then(|check| match check {
        Some(pending) => {
            let (figures, verdict) = pending.check(ctx.server_host);
            if let Some(last) = rec.measurements.last_mut() {
                last.reported.extend(figures);
            }
            verdict.map_err(|f| RunFailure::ServerCount(f).into())
        }
        None => Ok(()),
    });
    if let Some(problems) = place.as_mut().map(Place::teardown).filter(|p| !p.is_empty()) {
        progress.note(&format!(
            "the path of this run was not removed completely: {}; run `herd lab clean`",
            problems.join("; ")
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Err(Stop::Cancelled { client }) => {
            return RunEnd::Cancelled { stopped: stopped + usize::from(client) }
        }
        Err(Stop::Failed(failure)) => {
            rec.outcome = Outcome::Failed { kind: failure.kind(), reason: failure.to_string() }
        }
        Ok(()) => {}
    }
    rec.finished_at = now_rfc3339();
    let summary = summary(cell, &rec, clock.elapsed());
    RunEnd::Recorded(Box::new(rec), summary, folded)
}

impl CellRun<'_> {
    /// The phases, in order. The servers' CPU time is measured around the measured client
    /// run only; the warm-up is a run of its own, discarded (`Load::warmup_run`, the one
    /// warm-up of every tool). With `[runner] server_count`, the check of the server's own
    /// count, to make once it has stopped.
    fn measure(mut self) -> Result<Option<Pending>, Stop> {
        if self.cell.workload.is_netbench() {
            return self.measure_netbench().map(|()| None);
        }
        let (servers, over) = self.start_servers()?;
        let router = self.start_router()?;
        let started = Started { servers, router, over };
        self.check_path(&started)?;
        let request = self.verify()?;
        let agents = self.ctx.experiment.client_agents.unwrap_or(1);
        let warmed = match self.cell.load.warmup_run() {
            Some(warmup) => {
                let run = self.run_client(Phase::Warmup, &warmup, &request, &started)?;
                let counted = self.warmed(&started, &warmup, &request, &run)?;
                Some((counted, count::in_flight(&warmup, agents)))
            }
            None => None,
        };
        let load = self.cell.load.measured();
        let warmed_total = warmed.map_or(0, |(c, _)| c.total());
        match self.profile.take() {
            None => {
                let measured = self.run_client(Phase::Measure, &load, &request, &started)?;
                self.account(&started, &load, &request, measured, warmed_total)?;
            }
            Some((perf, folded)) => {
                // A profiled run: perf records the servers for the length of the measured run.
                let recording = profile::start(
                    self.sup,
                    perf,
                    &started,
                    &self.dir.join("profile"),
                    self.ctx.cancel,
                )?;
                let measured = self.run_client(Phase::Measure, &load, &request, &started)?;
                *folded = Some(profile::finish(self.sup, perf, recording)?);
                self.account(&started, &load, &request, measured, warmed_total)?;
            }
        }
        self.server_count(&request, &load, warmed)
    }

    /// With `[runner] server_count`, the check of the run's log against what the client
    /// sent: the verification, the warm-up (`warmed`: its counts and what it could leave in
    /// flight) and the measured run of `load`, as the record now holds it.
    fn server_count(
        &mut self,
        request: &crate::load::Request,
        load: &crate::load::Load,
        warmed: Option<(Counted, u64)>,
    ) -> Result<Option<Pending>, Stop> {
        if !self.ctx.experiment.runner.server_count {
            return Ok(None);
        }
        let name = &self.cell.server.name;
        let log = self.server_log.take().ok_or_else(|| {
            RunFailure::Setup(format!("server_count: the driver of {name} wrote no access log"))
        })?;
        // The verification asks the workload's own target, but for a mix (one file of it).
        let expected = self.ctx.docroot.expected.get(&self.cell.workload.name);
        let verified = expected.and_then(|e| e.path.as_ref()).is_none_or(|p| *p == request.path);
        let agents = self.ctx.experiment.client_agents.unwrap_or(1);
        let sent = Sent {
            verified: u64::from(verified),
            warmup: warmed,
            measured: (Counted::of(&self.rec.measurements), count::in_flight(load, agents)),
        };
        Ok(Some(Pending::new(log, request, sent)))
    }

    pub(super) fn cancelled(&self) -> bool {
        self.ctx.cancel.load(Ordering::Relaxed)
    }
}

/// Waits until the TIME_WAIT sockets of earlier runs drain (over loopback; a path's
/// namespaces are new for every run). The count before and the time waited; None: Ctrl-C.
fn drain_time_wait(
    ctx: &Context<'_>,
    cell: &Cell,
    progress: &mut dyn Progress,
) -> Option<(Option<u64>, Duration)> {
    let e = ctx.experiment;
    let cancelled = || ctx.cancel.load(Ordering::Relaxed);
    // A path herd builds has new namespaces every run: nothing to drain. Between
    // `[hosts]` the network and its hosts' tables are the real ones, path or not.
    let drained = if cell.path.is_some() && ctx.server_host.is_none() {
        (None, Duration::ZERO)
    } else {
        let bound = e.runner.time_wait_below.unwrap_or_else(timewait::default_bound);
        let first = timewait::count();
        match first {
            Some(waiting) if waiting >= bound => progress.note(&format!(
                "{waiting} sockets in TIME_WAIT: waiting until fewer than {bound} (at most {:?}; [runner] time_wait_below)",
                e.runner.drain_timeout
            )),
            Some(_) => {}
            None => progress.note(
                "cannot read /proc/net/tcp: TIME_WAIT is neither drained nor recorded for this run",
            ),
        }
        let (first, mut waited) = timewait::drain(first, bound, e.runner.drain_timeout, &cancelled);
        // The server host's own, where a server that closes first leaves them, and the
        // router host's, whose proxy connects to the server; the time waited for all is the
        // run's.
        for host in ctx.remotes().each() {
            let role = host.key();
            match host.time_wait() {
                Some((there, host_bound)) => {
                    let bound = e.runner.time_wait_below.unwrap_or(host_bound);
                    if there >= bound {
                        progress.note(&format!(
                            "{there} sockets in TIME_WAIT on the {role} host {}: waiting until \
                             fewer than {bound} (at most {:?}; [runner] time_wait_below)",
                            host.url, e.runner.drain_timeout
                        ));
                    }
                    let count = || host.time_wait().map(|(n, _)| n);
                    let limit = e.runner.drain_timeout.saturating_sub(waited);
                    let (_, more) =
                        timewait::drain_with(Some(there), bound, limit, &cancelled, &count);
                    waited += more;
                }
                None => progress.note(&format!(
                    "cannot read TIME_WAIT on the {role} host {}: not drained there for this run",
                    host.url
                )),
            }
        }
        (first, waited)
    };
    (!cancelled()).then_some(drained)
}

/// The record of a run before it starts: ok until a phase fails.
fn new_record(
    ctx: &Context<'_>,
    cell: &Cell,
    rep: u32,
    position: u32,
    started_at: String,
    versions: &BTreeMap<String, String>,
) -> RepetitionRecord {
    RepetitionRecord {
        cell_key: cell.key.clone(),
        axes: cell.values.iter().map(|(a, v)| (a.as_str().to_string(), v.clone())).collect(),
        control_of: cell.control_of.clone(),
        repetition: rep,
        position,
        started_at,
        finished_at: String::new(),
        outcome: Outcome::Ok,
        client: ClientRecord {
            tool: cell.client.name().to_string(),
            version: versions
                .get(&format!("client:{}", cell.client.name()))
                .cloned()
                .unwrap_or_default(),
            argv: Vec::new(),
            cpus: Some(match ctx.client_hosts {
                Some(hosts) => hosts.cpus_record(cell.client == crate::client::Tool::Herd),
                None => ctx.experiment.client_cpus.to_string(),
            }),
            judgement: None,
            health: None,
            io: None,
            trace_id: None,
        },
        servers: Vec::new(),
        server_cpu_seconds: None,
        time_wait_before: None,
        drain_seconds: 0.0,
        network: None,
        measurements: Vec::new(),
    }
}

/// The run's place: the `[hosts]` server host, a fresh path for a cell with one (a client
/// host for each of `agents`), else a loopback port.
fn build_place(
    ctx: &Context<'_>,
    cell: &Cell,
    agents: u8,
    dir: &Path,
    sup: &Supervisor,
) -> Result<Place, Stop> {
    if let Some(ext) = &cell.server.external {
        return Ok(Place::remote(ext.addr.ip(), ext.addr.port()));
    }
    if let Some(host) = ctx.server_host {
        let port = cell.server.kind.fixed_port().unwrap_or(super::role_host::HOST_PORT);
        let server = std::net::SocketAddr::new(host.address, port);
        // A proxy path's program on the router host, in front of the server host (the
        // runner refuses a path without a router host before anything starts).
        if let (Some(router), Some(kind)) = (ctx.router_host, cell.proxy()) {
            let at = std::net::SocketAddr::new(router.address, super::role_host::HOST_PORT);
            return Ok(Place::remote_via(server, at, if kind.balances() { 2 } else { 1 }));
        }
        return Ok(Place::remote(host.address, port));
    }
    let place = match cell.path {
        None => super::port::pick().map(Place::loopback),
        Some(path) => super::launch::create_dir(dir).and_then(|()| {
            // tbench_srv's port is built in; every other server takes the path's.
            let port = cell.server.kind.fixed_port().unwrap_or(PATH_PORT);
            Place::path(path, cell.link.as_ref(), port, agents, sup.registry(), dir)
        }),
    };
    place.map_err(|why| RunFailure::Setup(why).into())
}

/// The figure the repetition rule judges a run by: the one the experiment's tables show
/// (`[report] measure`) where a run of one step gives it (the server's CPU per request, a
/// latency percentile from the intended send), else its requests per second over all steps,
/// or a NetBench run's Mbit/s. At a pinned rate requests/s barely moves, so judging it would
/// never add the repetitions a spread cost or latency needs. None for a run of one step at a
/// pinned rate that did not hold its load ([`RateHold`]: the reports leave it out of every
/// figure, so it neither widens a spread nor counts towards the minimum). Computed from the
/// record alone, so a run read back from the store (a resumed experiment's) gives the figure
/// it gave when it ran.
pub(super) fn figure(cell: &Cell, rec: &RepetitionRecord, measure: Option<Measure>) -> Option<f64> {
    if let [m] = rec.measurements.as_slice() {
        let judgement = rec.client.judgement.as_ref();
        if RateHold::of(m, judgement).is_some_and(|h| !h.held()) {
            return None;
        }
    }
    if let Some(f) = measure.and_then(|m| measured(rec, m)) {
        return Some(f);
    }
    let s = summary(cell, rec, Duration::ZERO);
    Some(s.mbit_per_second.unwrap_or(s.requests_per_second))
}

/// `measure` of a run of one step, when it is a cost or a latency and the run has it.
fn measured(rec: &RepetitionRecord, measure: Measure) -> Option<f64> {
    let [m] = rec.measurements.as_slice() else { return None };
    let quantile = |q: f64| {
        let h = m.histogram(LatencySeries::Total).filter(|h| !h.is_empty())?;
        Some(h.value_at_quantile(q) as f64)
    };
    match measure {
        Measure::CpuPerRequest => {
            let cpu = rec.server_cpu_seconds?;
            (m.completed > 0).then(|| cpu * 1e6 / m.completed as f64)
        }
        Measure::LatencyP50 => quantile(0.5),
        Measure::LatencyP99 => quantile(0.99),
        Measure::LatencyP999 => quantile(0.999),
        _ => None,
    }
}

/// The run in a few figures, for the progress line.
fn summary(cell: &Cell, rec: &RepetitionRecord, took: Duration) -> RunSummary {
    let completed: u64 = rec.measurements.iter().map(|m| m.completed).sum();
    let failed: u64 = rec.measurements.iter().map(|m| m.failed).sum();
    let secs: f64 = rec.measurements.iter().map(|m| m.duration_s).sum();
    RunSummary {
        cell_key: cell.key.clone(),
        repetition: rec.repetition,
        outcome: rec.outcome.clone(),
        requests_per_second: if secs > 0.0 { completed as f64 / secs } else { 0.0 },
        mbit_per_second: cell.workload.is_netbench().then(|| {
            let bytes: u64 = rec.measurements.iter().map(|m| m.bytes_total).sum();
            if secs > 0.0 {
                bytes as f64 * 8.0 / 1e6 / secs
            } else {
                0.0
            }
        }),
        failed,
        seconds: took.as_secs_f64(),
        client_flag: rec
            .client
            .judgement
            .as_ref()
            .map(|j| j.verdict)
            .filter(|&v| v != herd_stats::ClientVerdict::Ok),
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;
    use herd_stats::Measurement;

    use super::*;

    /// A run of one step: 4,000 requests, 0.2 s of server CPU, latencies 1..=100 ms.
    fn run() -> RepetitionRecord {
        let mut total = Histogram::<u64>::new(3).unwrap();
        for ms in 1..=100u64 {
            total.record(ms * 1000).unwrap();
        }
        let m = Measurement {
            completed: 4000,
            duration_s: 1.0,
            rate: Some(4000.0),
            histograms: vec![(LatencySeries::Total, total)],
            ..Measurement::default()
        };
        RepetitionRecord {
            cell_key: "load=r4000".into(),
            axes: Vec::new(),
            control_of: None,
            repetition: 0,
            position: 0,
            started_at: String::new(),
            finished_at: String::new(),
            outcome: Outcome::Ok,
            client: ClientRecord {
                tool: "herd".into(),
                version: String::new(),
                argv: Vec::new(),
                cpus: None,
                judgement: None,
                health: None,
                io: None,
                trace_id: None,
            },
            servers: Vec::new(),
            server_cpu_seconds: Some(0.2),
            time_wait_before: None,
            drain_seconds: 0.0,
            network: None,
            measurements: vec![m],
        }
    }

    #[test]
    fn the_spread_rule_judges_the_measure_the_tables_show() {
        let rec = run();
        let near = |got: Option<f64>, want: f64| {
            let got = got.unwrap();
            assert!((got - want).abs() <= want * 0.002, "{got} against {want}");
        };
        near(measured(&rec, Measure::CpuPerRequest), 50.0);
        near(measured(&rec, Measure::LatencyP50), 50_000.0);
        near(measured(&rec, Measure::LatencyP99), 99_000.0);
        near(measured(&rec, Measure::LatencyP999), 100_000.0);
        // Throughput measures fall back to requests/s (the caller's), as does a run without
        // what the measure needs.
        assert_eq!(measured(&rec, Measure::RequestsPerSecond), None);
        let mut no_cpu = run();
        no_cpu.server_cpu_seconds = None;
        assert_eq!(measured(&no_cpu, Measure::CpuPerRequest), None);
        // A stepped run has no one figure of a cost or latency.
        let mut stepped = run();
        stepped.measurements.push(stepped.measurements[0].clone());
        assert_eq!(measured(&stepped, Measure::LatencyP99), None);
    }
}
