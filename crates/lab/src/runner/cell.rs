//! One run of one cell: fresh servers in their own directory, readiness, verify before
//! measure, warm-up, the measured client run with the servers' CPU time around it, stop by
//! PID, and the record for the store. A failure at any step is the run's result (stored with
//! its reason); only Ctrl-C returns nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use herd_drivers::{render, render_proxy, Launch, Probe, ProxySpec, ServerSpec};
use herd_store::{ClientRecord, MeasurementRecord, Outcome, RepetitionRecord, ServerRecord};
use herd_topo::net::Host;
use herd_topo::{proc::describe, Spawn, Supervisor};

use super::now_rfc3339;
use super::place::Place;
use super::preflight::{self, Ready};
use super::progress::{Progress, RunSummary};
use crate::client::{self, ClientJob};
use crate::docroot::Docroot;
use crate::error::with_causes;
use crate::experiment::Experiment;
use crate::load::{Load, Method, Shape, Warmup};
use crate::matrix::Cell;
use crate::{timewait, verify};

/// What every run of the experiment shares.
pub(super) struct Context<'a> {
    pub experiment: &'a Experiment,
    pub ready: &'a Ready,
    pub docroot: &'a Docroot,
    pub run_dir: &'a Path,
    pub cancel: &'a AtomicBool,
}

/// Grace between SIGTERM and SIGKILL for servers.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How one run ended.
pub(super) enum RunEnd {
    /// Finished (ok or failed): the record to store.
    Recorded(Box<RepetitionRecord>, RunSummary),
    /// Ctrl-C: nothing to keep; `stopped` processes of this run (servers, and the client
    /// when it was running) were stopped.
    Cancelled { stopped: usize },
}

/// Runs `cell` once.
pub(super) fn run(
    ctx: &Context<'_>,
    cell: &Cell,
    rep: u32,
    position: u32,
    sup: &mut Supervisor,
    versions: &mut BTreeMap<String, String>,
    progress: &mut dyn Progress,
) -> RunEnd {
    let e = ctx.experiment;
    let cancelled = || ctx.cancel.load(Ordering::Relaxed);
    let started_at = now_rfc3339();
    let clock = Instant::now();

    // A path's namespaces are new for every run: no TIME_WAIT to wait for.
    let (tw_before, drained) = if cell.path.is_some() {
        (None, Duration::ZERO)
    } else {
        let bound = e.runner.time_wait_below.unwrap_or_else(timewait::default_bound);
        match timewait::count() {
            Some(waiting) if waiting >= bound => progress.note(&format!(
                "{waiting} sockets in TIME_WAIT: waiting until fewer than {bound} (at most {:?}; [runner] time_wait_below)",
                e.runner.drain_timeout
            )),
            Some(_) => {}
            None => progress.note(
                "cannot read /proc/net/tcp: TIME_WAIT is neither drained nor recorded for this run",
            ),
        }
        timewait::drain(bound, e.runner.drain_timeout, &cancelled)
    };
    if cancelled() {
        return RunEnd::Cancelled { stopped: 0 };
    }
    let dir = ctx.run_dir.join("cells").join(format!("{:03}-r{rep}", cell.index));
    let mut rec = RepetitionRecord {
        cell_key: cell.key.clone(),
        axes: cell.values.iter().map(|(a, v)| (a.as_str().to_string(), v.clone())).collect(),
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
            cpus: Some(e.client_cpus.to_string()),
            verdict: None,
            verdict_reason: None,
            health_json: None,
        },
        servers: Vec::new(),
        server_cpu_seconds: None,
        time_wait_before: tw_before,
        drain_seconds: drained.as_secs_f64(),
        network_json: None,
        measurements: Vec::new(),
    };
    let mut place = None;
    let result = build_place(cell, &dir, sup)
        .and_then(|p| measure(ctx, cell, place.insert(p), &dir, sup, versions, &mut rec));
    // Stop this run's servers (and anything else still running) whatever happened, then
    // remove the path they ran on.
    let stopped = sup.stop_all(STOP_GRACE);
    if let Some(problems) = place.as_mut().map(Place::teardown).filter(|p| !p.is_empty()) {
        progress.note(&format!(
            "the path of this run was not removed completely: {}; run `herd lab clean`",
            problems.join("; ")
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Err(Failure::Cancelled { client }) => {
            return RunEnd::Cancelled { stopped: stopped + usize::from(client) }
        }
        Err(Failure::Failed(reason)) => rec.outcome = Outcome::Failed { reason },
        Ok(()) => {}
    }
    rec.finished_at = now_rfc3339();
    let completed: u64 = rec.measurements.iter().map(|m| m.completed).sum();
    let failed: u64 = rec.measurements.iter().map(|m| m.failed).sum();
    let secs: f64 = rec.measurements.iter().map(|m| m.duration_s).sum();
    let summary = RunSummary {
        cell_key: cell.key.clone(),
        repetition: rep,
        ok: matches!(rec.outcome, Outcome::Ok),
        requests_per_second: if secs > 0.0 { completed as f64 / secs } else { 0.0 },
        failed,
        reason: match &rec.outcome {
            Outcome::Failed { reason } => Some(reason.clone()),
            Outcome::Ok => None,
        },
        seconds: clock.elapsed().as_secs_f64(),
        client_flag: rec.client.verdict.clone().filter(|v| v != "ok"),
    };
    RunEnd::Recorded(Box::new(rec), summary)
}

enum Failure {
    /// Ctrl-C; `client`: a client was running and was interrupted.
    Cancelled {
        client: bool,
    },
    Failed(String),
}

fn fail(s: impl Into<String>) -> Failure {
    Failure::Failed(s.into())
}

/// The run's place: a fresh path for a cell with one, else a loopback port.
fn build_place(cell: &Cell, dir: &Path, sup: &Supervisor) -> Result<Place, Failure> {
    match cell.path {
        None => Ok(Place::loopback(super::port::pick().map_err(fail)?)),
        Some(path) => {
            std::fs::create_dir_all(dir)
                .map_err(|err| fail(format!("cannot create {}: {err}", dir.display())))?;
            Place::path(path, cell.link.as_ref(), sup.registry(), dir).map_err(fail)
        }
    }
}

fn measure(
    ctx: &Context<'_>,
    cell: &Cell,
    place: &Place,
    dir: &Path,
    sup: &mut Supervisor,
    versions: &mut BTreeMap<String, String>,
    rec: &mut RepetitionRecord,
) -> Result<(), Failure> {
    let e = ctx.experiment;
    let cancelled = || ctx.cancel.load(Ordering::Relaxed);
    let server_dir = dir.join(&cell.server.name);
    std::fs::create_dir_all(&server_dir)
        .map_err(|err| fail(format!("cannot create {}: {err}", server_dir.display())))?;
    open_dir(dir);
    open_dir(&server_dir);
    let programs = ctx
        .ready
        .programs
        .get(&cell.server.name)
        .cloned()
        .ok_or_else(|| fail("no programs for this server"))?;
    let listen = place.listen;
    let spec = ServerSpec {
        kind: cell.server.kind,
        php: cell.server.php,
        listen,
        docroot: ctx.docroot.dir.clone(),
        run_dir: server_dir.clone(),
        workers: cell.server.workers,
        user: ctx.ready.user.clone(),
        programs,
    };
    let launch = render(&spec)
        .map_err(|err| fail(format!("cannot configure {}: {err}", cell.server.name)))?;
    write_launch(&launch, ctx.ready.user.as_deref()).map_err(fail)?;
    // One record per process of the launch (php-fpm, then nginx …), each with the version
    // of its program (the probe that runs the same executable).
    let same_program = |p: &herd_drivers::ProcessSpec, v: &herd_drivers::VersionProbe| {
        !p.argv.is_empty() && p.argv.first() == v.argv.first()
    };
    for p in &launch.processes {
        let version = match launch.versions.iter().find(|v| same_program(p, v)) {
            Some(v) => version(v, sup, dir, versions),
            None => "n/a".to_string(),
        };
        rec.servers.push(ServerRecord {
            name: cell.server.name.clone(),
            program: p.name.clone(),
            version,
            argv: p.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            cpus: Some(cell.server_cpus.to_string()),
            cpu_seconds: None,
            configs: Vec::new(),
        });
    }
    // The rendered files go with the front server's record (the last started).
    let configs: Vec<(String, String)> = launch
        .files
        .iter()
        .map(|f| {
            (f.path.strip_prefix(dir).unwrap_or(&f.path).display().to_string(), f.contents.clone())
        })
        .collect();

    // Start the processes in order, each ready before the next.
    let server_ns = place.netns(Host::Server);
    let mut pids = Vec::new();
    for p in &launch.processes {
        let spawn = Spawn {
            name: &p.name,
            argv: &p.argv,
            env: &p.env,
            stdout: &p.log,
            stderr: &p.log,
            cpus: &cell.server_cpus,
            netns: server_ns.as_deref(),
        };
        let pid = sup.start(&spawn).map_err(|err| fail(with_causes(&err)))?;
        pids.push((pid, p));
        if let Some(probe) = &p.ready {
            let probe = place.local_probe(probe);
            let waiting = Waiting { pid, name: &p.name, log: &p.log };
            wait_ready(&probe, place, Host::Server, e.runner.ready_timeout, sup, &waiting, ctx)?;
        }
    }
    if let Some(front) = rec.servers.last_mut() {
        front.configs = configs;
    }
    // Programs the servers start themselves (php-cgi under lighttpd or Apache) get a record
    // for their version; their CPU time is in the server's (reaped children).
    for v in &launch.versions {
        if launch.processes.iter().any(|p| same_program(p, v)) {
            continue;
        }
        rec.servers.push(ServerRecord {
            name: cell.server.name.clone(),
            program: v.program.clone(),
            version: version(v, sup, dir, versions),
            argv: Vec::new(),
            cpus: Some(cell.server_cpus.to_string()),
            cpu_seconds: None,
            configs: Vec::new(),
        });
    }
    let (front_pid, front) = pids
        .last()
        .map(|(pid, p)| (*pid, *p))
        .ok_or_else(|| fail("the driver started no process"))?;
    let front_waiting = Waiting { pid: front_pid, name: &front.name, log: &front.log };
    let ready = place.local_probe(&launch.ready);
    wait_ready(&ready, place, Host::Server, e.runner.ready_timeout, sup, &front_waiting, ctx)?;
    let router = start_router(ctx, cell, place, dir, sup, versions)?;
    if let Some(path) = cell.path {
        // The whole path answers: the client's namespace reaches the server through it. The
        // server answered on its own host already, so a failure here is the path's (its
        // router program's, when it has one: that is the process watched and whose log is
        // shown).
        let through =
            Probe::Http { addr: place.target, path: format!("/{}", herd_drivers::READY_FILE) };
        let watched = match &router {
            Some(r) => Waiting { pid: r.pid, name: &r.name, log: &r.log },
            None => Waiting { pid: front_pid, name: &front.name, log: &front.log },
        };
        wait_ready(&through, place, Host::Client, e.runner.ready_timeout, sup, &watched, ctx)
            .map_err(|failure| match failure {
                Failure::Failed(why) => {
                    fail(format!("through the {path} path from the client's host: {why}"))
                }
                cancelled => cancelled,
            })?;
    }

    // Verify before measuring.
    let expected = ctx
        .docroot
        .expected
        .get(&cell.workload.name)
        .ok_or_else(|| fail("no expected answer for this workload"))?;
    let request = cell
        .request(&ctx.docroot.dir, Some(expected.body_bytes))
        .ok_or_else(|| fail(cell.workload.unsupported_reason(&cell.server)))?;
    let verify_path = expected.path.clone().unwrap_or_else(|| request.path.clone());
    let body = match &request.method {
        Method::Post { body_file, .. } => Some(
            std::fs::read(body_file)
                .map_err(|err| fail(format!("cannot read {}: {err}", body_file.display())))?,
        ),
        Method::Get => None,
    };
    let method = if body.is_some() { "POST" } else { "GET" };
    let answer = place
        .within(Host::Client, || {
            verify::fetch(
                place.target,
                method,
                &verify_path,
                body.as_deref(),
                Duration::from_secs(30),
                expected.body_bytes,
            )
        })
        .and_then(|answer| answer)
        .map_err(|err| fail(format!("verify: {err}")))?;
    verify::check(&answer, expected).map_err(|err| {
        fail(format!("verify: {} answered {method} {verify_path} with {err}", cell.server.name))
    })?;

    // Warm-up, discarded.
    let client_program =
        ctx.ready.clients.get(&cell.client).ok_or_else(|| fail("client not found"))?;
    let base_url = format!("http://{}", place.target);
    let client_ns = place.netns(Host::Client);
    let client_dir = dir.join("client");
    if let Some(warm_load) = cell.load.warmup_run() {
        let warm_dir = client_dir.join("warmup");
        std::fs::create_dir_all(&warm_dir).map_err(|err| fail(err.to_string()))?;
        let job = ClientJob {
            tool: cell.client,
            program: client_program,
            base_url: &base_url,
            request: &request,
            load: &warm_load,
            threads: e.client_threads,
            out_dir: &warm_dir,
        };
        let cmd = client::command(&job).map_err(|err| fail(with_causes(&err)))?;
        cmd.write_files().map_err(|err| fail(with_causes(&err)))?;
        let out = warm_dir.join("output");
        let spawn = Spawn {
            name: "client-warmup",
            argv: &cmd.main,
            env: &[],
            stdout: &out,
            stderr: &out,
            cpus: &e.client_cpus,
            netns: client_ns.as_deref(),
        };
        let f = sup
            .run(&spawn, time_limit(&warm_load), Duration::from_secs(5), Some(ctx.cancel))
            .map_err(|err| fail(with_causes(&err)))?;
        if f.cancelled || cancelled() {
            return Err(Failure::Cancelled { client: f.cancelled });
        }
        // A warm-up that failed would leave the measured run on a server in an unknown state.
        if f.timed_out || !f.status.success() {
            return Err(fail(format!(
                "the warm-up run of {} {} ({}): {}",
                cell.client.name(),
                if f.timed_out { "ran past its time limit" } else { "failed" },
                describe(&f.status),
                tail_file(&out)
            )));
        }
    }

    // The measured run, with the servers' CPU time around it.
    std::fs::create_dir_all(&client_dir).map_err(|err| fail(err.to_string()))?;
    let main_load = cell.load.measured();
    let job = ClientJob {
        tool: cell.client,
        program: client_program,
        base_url: &base_url,
        request: &request,
        load: &main_load,
        threads: e.client_threads,
        out_dir: &client_dir,
    };
    let cmd = client::command(&job).map_err(|err| fail(with_causes(&err)))?;
    cmd.write_files().map_err(|err| fail(with_causes(&err)))?;
    rec.client.argv = cmd.main.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let server_pids: Vec<u32> = pids.iter().map(|(p, _)| *p).collect();
    let cpu = |sup: &Supervisor| -> Vec<Option<f64>> {
        server_pids.iter().map(|&p| sup.cpu_seconds(p)).collect()
    };
    let before = cpu(sup);
    let router_before = router.as_ref().and_then(|r| sup.cpu_seconds(r.pid));
    let net_before = place.snapshot();
    let stdout = client_dir.join("stdout");
    let stderr = client_dir.join("stderr");
    let spawn = Spawn {
        name: "client",
        argv: &cmd.main,
        env: &[],
        stdout: &stdout,
        stderr: &stderr,
        cpus: &e.client_cpus,
        netns: client_ns.as_deref(),
    };
    let finished = sup
        .run(&spawn, time_limit(&main_load), Duration::from_secs(5), Some(ctx.cancel))
        .map_err(|err| fail(with_causes(&err)))?;
    let after = cpu(sup);
    let router_after = router.as_ref().and_then(|r| sup.cpu_seconds(r.pid));
    let net_after = place.snapshot();
    if finished.cancelled || cancelled() {
        return Err(Failure::Cancelled { client: finished.cancelled });
    }
    // rec.servers holds one record per started process, in start order, as `pids` does
    // (helper programs' records come after them). The total is known only if every part is.
    let mut total_cpu = Some(0.0);
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        let used = b.zip(*a).map(|(b, a)| (a - b).max(0.0));
        if let Some(record) = rec.servers.get_mut(i) {
            record.cpu_seconds = used;
        }
        total_cpu = total_cpu.zip(used).map(|(t, u)| t + u);
    }
    rec.server_cpu_seconds = total_cpu;
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|err| {
            fail(format!("cannot read the client's output {}: {err}", path.display()))
        })
    };
    let out = read(&stdout)?;
    let err = read(&stderr)?;
    if finished.timed_out {
        return Err(fail(format!(
            "the client ran past {:?} and was stopped; stderr: {}",
            time_limit(&main_load),
            tail(&err)
        )));
    }
    let parsed = client::parse(&job, &out, &err).map_err(|parse_err| {
        fail(format!(
            "client {} ({}): {parse_err}; stderr: {}",
            cell.client.name(),
            describe(&finished.status),
            tail(&err)
        ))
    })?;
    rec.client.health_json = parsed.health_json.clone();
    let mut verdict = parsed.verdict.clone();
    // ab and wrk do not judge themselves: judge them by the CPU time they used.
    if let (None, Some(cpu_seconds), Some(threads)) =
        (&verdict, finished.cpu_seconds, client::external_threads(&job))
    {
        let cpu = client::ClientCpu {
            cpu_seconds,
            wall: finished.elapsed,
            threads,
            cpus: e.client_cpus.cpus().map_or_else(herd_topo::cpuset::usable_cpus, <[usize]>::len),
        };
        verdict = client::judge_by_cpu(cell.client, &cpu);
        if verdict.is_some() {
            rec.client.health_json = Some(cpu.to_json());
        }
    }
    if let Some(v) = verdict {
        rec.client.verdict = Some(v.verdict);
        rec.client.verdict_reason = v.reason;
    }
    rec.measurements = parsed.steps.into_iter().map(MeasurementRecord::from).collect();
    let router_cpu = router_before.zip(router_after).map(|(b, a)| (a - b).max(0.0));
    if let (Some(b), Some(a)) = (&net_before, &net_after) {
        let bytes: u64 = rec.measurements.iter().map(|m| m.bytes_total).sum();
        let secs: f64 = rec.measurements.iter().map(|m| m.duration_s).sum();
        if let Some(facts) = place.facts(b, a, bytes, secs, router_cpu) {
            let json = serde_json::to_string(&facts)
                .map_err(|err| fail(format!("cannot record what the path's hosts saw: {err}")))?;
            rec.network_json = Some(json);
        }
    }
    // The router's program: its own record, after the servers' (its CPU is not theirs).
    if let Some(r) = &router {
        rec.servers.push(ServerRecord { cpu_seconds: router_cpu, ..r.record.clone() });
    }
    // The warm-up ran apart, before the first step: its requests are counted there.
    if let (Warmup::Requests(k), Some(first)) = (cell.load.warmup, rec.measurements.first_mut()) {
        first.warmup_requests += k;
    }
    // A server or router program that died during the run is a failed run, whatever the
    // client counted.
    let watched = pids.iter().map(|(pid, p)| (*pid, p.name.as_str(), p.log.as_path()));
    let router_watched = router.iter().map(|r| (r.pid, r.name.as_str(), r.log.as_path()));
    for (pid, name, log) in watched.chain(router_watched) {
        if let Some(status) = sup.exit_status(pid) {
            return Err(fail(format!(
                "{name} exited during the run ({}): {}",
                describe(&status),
                tail_file(log)
            )));
        }
    }
    Ok(())
}

/// A program started on the router of a proxy path.
struct RouterProgram {
    pid: u32,
    name: String,
    log: std::path::PathBuf,
    record: ServerRecord,
}

/// Starts the path's router program (HAProxy, nginx, sslh) in the router's namespace, on the
/// router's CPUs, forwarding to every address the server listens on; None for a path
/// without one.
fn start_router(
    ctx: &Context<'_>,
    cell: &Cell,
    place: &Place,
    dir: &Path,
    sup: &mut Supervisor,
    versions: &mut BTreeMap<String, String>,
) -> Result<Option<RouterProgram>, Failure> {
    let (Some(kind), Some(backends), Some(vip)) =
        (cell.proxy(), place.backends(), place.router_listen())
    else {
        return Ok(None);
    };
    let e = ctx.experiment;
    let programs = ctx
        .ready
        .proxies
        .get(&kind)
        .cloned()
        .ok_or_else(|| fail(format!("no program located for {kind}")))?;
    let run_dir = dir.join("router");
    std::fs::create_dir_all(&run_dir)
        .map_err(|err| fail(format!("cannot create {}: {err}", run_dir.display())))?;
    open_dir(&run_dir);
    let spec = ProxySpec {
        kind,
        listen: vip,
        // Every address of the server host: two on a path HAProxy balances, one otherwise
        // (matrix.rs checks that Path::balanced and ProxyKind::balances agree).
        backends,
        run_dir,
        workers: None,
        user: ctx.ready.user.clone(),
        programs,
    };
    let launch =
        render_proxy(&spec).map_err(|err| fail(format!("cannot configure {kind}: {err}")))?;
    write_launch(&launch, ctx.ready.user.as_deref()).map_err(fail)?;
    let p = launch.processes.last().ok_or_else(|| fail(format!("{kind}: no process")))?;
    let router_ns = place.netns(Host::Router);
    let pid = sup
        .start(&Spawn {
            name: &p.name,
            argv: &p.argv,
            env: &p.env,
            stdout: &p.log,
            stderr: &p.log,
            cpus: &e.router_cpus,
            netns: router_ns.as_deref(),
        })
        .map_err(|err| fail(with_causes(&err)))?;
    let waiting = Waiting { pid, name: &p.name, log: &p.log };
    wait_ready(&launch.ready, place, Host::Router, e.runner.ready_timeout, sup, &waiting, ctx)?;
    // Every proxy driver gives a version probe; "n/a" as for a server process without one.
    let version = launch
        .versions
        .first()
        .map_or_else(|| "n/a".to_owned(), |v| version(v, sup, dir, versions));
    let record = ServerRecord {
        name: format!("router:{kind}"),
        program: kind.program().name.to_string(),
        version,
        argv: p.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        cpus: Some(e.router_cpus.to_string()),
        cpu_seconds: None,
        configs: launch
            .files
            .iter()
            .map(|f| {
                let name = f.path.strip_prefix(dir).unwrap_or(&f.path).display().to_string();
                (name, f.contents.clone())
            })
            .collect(),
    };
    Ok(Some(RouterProgram { pid, name: p.name.clone(), log: p.log.clone(), record }))
}

/// The version `probe` finds, asked once per experiment (`versions` keeps the answers).
fn version(
    probe: &herd_drivers::VersionProbe,
    sup: &mut Supervisor,
    dir: &Path,
    versions: &mut BTreeMap<String, String>,
) -> String {
    if let Some(known) = versions.get(&probe.program) {
        return known.clone();
    }
    let text = preflight::run_capture(sup, dir, "version", &probe.argv);
    let found = (probe.parse)(&text).unwrap_or_else(|| preflight::unknown(&text));
    versions.insert(probe.program.clone(), found.clone());
    found
}

/// How long a client may run before it is stopped: its own length plus a margin, or for a
/// request count, a generous bound (10 ms a request, at least a minute, at most two hours).
fn time_limit(load: &Load) -> Duration {
    let margin = Duration::from_secs(60);
    match &load.shape {
        Shape::Duration { duration, .. } | Shape::Rate { duration, .. } => *duration + margin,
        Shape::Steps { clients, step } => *step * clients.len() as u32 + margin,
        Shape::Requests { n_requests, .. } => {
            let per = Duration::from_millis(10)
                .saturating_mul(u32::try_from(*n_requests).unwrap_or(u32::MAX));
            (per + margin).min(Duration::from_secs(7200))
        }
    }
}

/// The process a readiness probe waits for: its start failing is reported with its log.
struct Waiting<'a> {
    pid: u32,
    name: &'a str,
    log: &'a Path,
}

/// Waits until `probe` answers, asked from `host`'s namespace; fails early when the process
/// exits, with its log's end.
fn wait_ready(
    probe: &Probe,
    place: &Place,
    host: Host,
    timeout: Duration,
    sup: &mut Supervisor,
    waiting: &Waiting<'_>,
    ctx: &Context<'_>,
) -> Result<(), Failure> {
    let started = Instant::now();
    let mut last;
    loop {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(Failure::Cancelled { client: false });
        }
        if let Some(status) = sup.exit_status(waiting.pid) {
            return Err(fail(format!(
                "{} exited at start ({}): {}",
                waiting.name,
                describe(&status),
                tail_file(waiting.log)
            )));
        }
        let answered = place.within(host, || match probe {
            Probe::UnixSocket(path) => std::os::unix::net::UnixStream::connect(path)
                .map(|_| ())
                .map_err(|_| format!("no socket at {}", path.display())),
            Probe::Http { addr, path } => {
                match verify::fetch(*addr, "GET", path, None, Duration::from_secs(2), 1 << 16) {
                    Ok(a) if a.status == 200 => Ok(()),
                    Ok(a) => Err(format!("GET {path} on {addr} answered {}", a.status)),
                    Err(err) => Err(err),
                }
            }
        });
        match answered {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(why)) => last = why,
            // The namespace is gone or cannot be entered: waiting will not help.
            Err(why) => return Err(fail(why)),
        }
        if started.elapsed() > timeout {
            return Err(fail(format!(
                "{} did not become ready within {timeout:?} ({last}); its log: {}",
                waiting.name,
                tail_file(waiting.log)
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write_launch(launch: &Launch, user: Option<&str>) -> Result<(), String> {
    for d in launch.dirs.iter().chain(&launch.user_dirs) {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        open_dir(d);
    }
    // Directories a server writes after dropping to its user (lighttpd's uploads, h2o's
    // temporary buffers) belong to that user.
    if let Some(user) = user {
        let (uid, gid) = user_ids(user).ok_or_else(|| format!("no user {user} on this machine"))?;
        for d in &launch.user_dirs {
            std::os::unix::fs::chown(d, Some(uid), Some(gid))
                .map_err(|e| format!("cannot give {} to {user}: {e}", d.display()))?;
        }
    }
    for f in &launch.files {
        if let Some(parent) = f.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&f.path, &f.contents)
            .map_err(|e| format!("cannot write {}: {e}", f.path.display()))?;
    }
    Ok(())
}

/// 0755, so that workers running as www-data can enter (best effort).
fn open_dir(d: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(5);
    let t = lines[start..].join(" | ");
    if t.is_empty() {
        "(empty)".into()
    } else {
        t
    }
}

fn tail_file(path: &Path) -> String {
    tail(&std::fs::read_to_string(path).unwrap_or_default())
}

/// The uid and gid of `user`, from /etc/passwd.
fn user_ids(user: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&user))
            .then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
    })
}
