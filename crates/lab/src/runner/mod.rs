//! The runner: a checked experiment in, every repetition of every cell run and stored.
//!
//! Rounds (`rounds.rs`): repetition r of every cell, in an order shuffled for that round;
//! after the minimum, more rounds for the cells whose tables' figure (`cell::figure`) is still
//! beyond a `[repetitions]` bound (its spread, the width of its 95 % interval), or that have
//! fewer held runs than the minimum (a run at a pinned rate that did not hold its load gets a
//! replacement), up to the maximum. Each run of a cell is a sequence of phases (`cell.rs`,
//! `CellRun::measure`): start the servers afresh in a directory of their own
//! (`servers.rs`), start a proxy path's router program (`router.rs`), check the path and
//! verify the workload's answer (`checks.rs`), warm up and measure with the servers' CPU time
//! around the client (`client_run.rs`: from a cgroup made for each server process where herd
//! can make one, `herd_topo::cgroup`, the method stored in the environment), account
//! (`account.rs`); then everything it started is stopped by PID (its cgroups removed) and the
//! result written in one transaction. A phase that fails ends the run
//! with a typed `RunFailure` (`failure.rs`), stored as its kind and message. Ctrl-C (the
//! `cancel` flag) stops between or inside a run: what finished is kept, the run in flight is
//! dropped, and everything herd started is stopped. `--resume` (`resume.rs`) runs an
//! unfinished experiment to its end: the same rounds, without the runs already stored. An
//! A/A control's twin (`[runner] controls`) is one more cell, last, that `Rounds` keeps to
//! its own number of runs.

mod account;
mod budget;
mod cell;
mod checks;
pub(crate) mod client_hosts;
mod client_run;
mod config_on_host;
mod disk;
mod external;
mod failure;
mod host_path;
mod launch;
mod log_tail;
mod netbench;
mod perf_control;
mod place;
mod port;
mod preflight;
mod profile;
pub mod progress;
mod readiness;
pub mod resume;
pub(crate) mod role_host;
mod rounds;
mod router;
mod server_check;
mod server_count;
mod servers;
mod servers_on_host;
mod tool_on_host;
pub mod up;
mod up_on_host;
mod watched;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use herd_store::{ExperimentId, ExperimentStatus, NewExperiment, RunFailureKind, Store};
use herd_topo::cgroup::Wanted;
use herd_topo::{Cgroups, CpuAccounting, Registry, Supervisor};

use crate::error::{with_causes, LabError};
use crate::experiment::Experiment;
use crate::matrix::{cells, Cell};
use progress::Progress;
use resume::Resume;
use rounds::Rounds;

/// Version of the method the runner applies (warm-up, verify, repetitions, drain): stored
/// with every result so that results of different methods are never mixed unknowingly.
pub const METHODOLOGY_VERSION: u32 = 1;

/// What [`preflight`] found: the programs every cell needs, located. A lab run starts from it.
#[derive(Debug)]
pub struct Checked {
    ready: preflight::Ready,
    /// The cells that run, an A/A control's twin last.
    cells: Vec<Cell>,
    /// The cells refused before anything runs, each with its reason (`Cell::refused`).
    refused: Vec<Cell>,
    /// Where the servers' cgroups go; None: their CPU time is read per process.
    cgroups: Option<Cgroups>,
    /// The `[hosts]` server host, reached by [`reach_hosts`]; None: servers run here.
    server_host: Option<role_host::RoleHost>,
    /// The `[hosts]` client hosts, reached by [`reach_hosts`]; None: the client runs here.
    client_hosts: Option<client_hosts::ClientHosts>,
    /// The `[hosts]` router host, reached by [`reach_hosts`]; None: a proxy path's program
    /// runs here (in its namespace).
    router_host: Option<role_host::RoleHost>,
}

/// The `[hosts]` reached, as a lab run uses them.
#[derive(Clone, Copy)]
struct OnHosts<'a> {
    server: Option<&'a role_host::RoleHost>,
    clients: Option<&'a client_hosts::ClientHosts>,
    router: Option<&'a role_host::RoleHost>,
}

impl Checked {
    /// The cells that will not run, each with its reason, in matrix order.
    pub fn refused(&self) -> &[Cell] {
        &self.refused
    }

    /// How the servers' CPU time will be read.
    pub fn cpu_accounting(&self) -> CpuAccounting {
        self.cgroups.as_ref().map_or(CpuAccounting::PerProcess, Cgroups::accounting)
    }

    /// How many cells of the matrix run (an A/A control's twin apart).
    pub fn runnable(&self) -> usize {
        self.cells.iter().filter(|c| c.control_of.is_none()).count()
    }

    /// The A/A control's twin (`[runner] controls`), if the experiment has one.
    pub fn control_twin(&self) -> Option<&Cell> {
        self.cells.iter().find(|c| c.control_of.is_some())
    }
}

/// Checks, before the store is opened and before any server starts, that this machine can
/// run every cell of `e`: programs installed, CPUs online, root and kernel features for
/// network paths. For shaped links it probes the kernel's qdiscs in a scratch namespace it
/// removes again (`herd_topo::net::machine::probe_qdiscs`); nothing else is written.
pub fn preflight(e: &Experiment, herd_exe: &Path) -> Result<Checked, LabError> {
    let all = cells(e);
    if all.is_empty() {
        return Err(LabError::NoCells);
    }
    let twin = crate::matrix::control_twin(e, &all);
    let (mut cells, refused): (Vec<Cell>, Vec<Cell>) =
        all.into_iter().partition(|c| c.refused.is_none());
    if cells.is_empty() {
        return Err(LabError::AllRefused(refused_reasons(&refused)));
    }
    // The A/A twin runs last in matrix order, which `Rounds` knows it by.
    cells.extend(twin);
    if let Some(hosts) = &e.hosts {
        hosts_refusal(hosts, &cells).map_err(LabError::OnHosts)?;
    }
    let ready = preflight::check(e, &cells, herd_exe)?;
    // How the servers' CPU time is read: from a cgroup made for each, where herd can make one
    // (`HERD_SERVER_CPU` may ask otherwise; a cgroup it asks for and cannot have refuses).
    let cgroups = Wanted::from_env()
        .and_then(Cgroups::detect)
        .map_err(|err| LabError::Setup(with_causes(&err)))?;
    let (server_host, client_hosts, router_host) = (None, None, None);
    Ok(Checked { ready, cells, refused, cgroups, server_host, client_hosts, router_host })
}

/// For an experiment with a `[hosts]` server: reaches that host over ssh (this build's
/// helper there), locates the servers' programs there, checks the cells' server CPUs
/// against its own and a user's own configs with the server's own test there, measures
/// the path to it and reaches the client hosts, before the store is opened; a line for the
/// user on what it found. None without a server host.
pub fn reach_hosts(
    checked: &mut Checked,
    e: &Experiment,
    herd_version: &str,
) -> Result<Option<String>, LabError> {
    let Some(hosts) = &e.hosts else { return Ok(None) };
    let scratch = std::env::temp_dir();
    let Some(mut host) = open_server_host(checked, hosts, herd_version, &scratch)? else {
        return Ok(None);
    };
    let path = host.disclose();
    let mut said = format!("{}; the path: {path}", host.describe());
    checked.server_host = Some(host);
    if let Some(mut router) =
        role_host::RoleHost::open_router(hosts, &checked.cells, herd_version, &scratch)?
    {
        router
            .check_cpus(&e.router_cpus)
            .map_err(|why| LabError::Cpus(format!("[router] cpus on [hosts] router {why}")))?;
        let path = router.disclose();
        said.push_str(&format!("\nherd lab: {}; the path: {path}", router.describe()));
        checked.router_host = Some(router);
    }
    let cells = &checked.cells;
    let target = checked.server_host.as_ref().map(|h| h.address);
    if let Some(mut clients) =
        client_hosts::ClientHosts::open(hosts, cells, &e.client_cpus, herd_version, &scratch)?
    {
        if let Some(target) = target {
            clients.disclose_nics(target);
        }
        said.push_str(&format!("\nherd lab: {}", clients.describe()));
        checked.client_hosts = Some(clients);
    }
    Ok(Some(said))
}

/// For `herd lab up`: the `[hosts]` server host reached and checked as a run's is (its
/// helper, programs, CPUs, a user's own configs), without measuring the path or reaching
/// client hosts: one server starts there, for runs by hand. None without a server host.
pub fn reach_server_host(
    checked: &mut Checked,
    e: &Experiment,
    herd_version: &str,
) -> Result<Option<String>, LabError> {
    let Some(hosts) = &e.hosts else { return Ok(None) };
    let scratch = std::env::temp_dir();
    let Some(host) = open_server_host(checked, hosts, herd_version, &scratch)? else {
        return Ok(None);
    };
    let said = host.describe();
    checked.server_host = Some(host);
    Ok(Some(said))
}

/// The server host of `hosts` reached, its CPUs checked against the cells' and a user's
/// own configs judged there.
fn open_server_host(
    checked: &Checked,
    hosts: &crate::hosts::Hosts,
    herd_version: &str,
    scratch: &Path,
) -> Result<Option<role_host::RoleHost>, LabError> {
    let Some(host) = role_host::RoleHost::open(hosts, &checked.cells, herd_version, scratch)?
    else {
        return Ok(None);
    };
    // An external server outside herd's ranges is loaded only where the file named its
    // machine as the server host.
    for c in &checked.cells {
        if let Some(ext) = &c.server.external {
            if herd_engine::check_allowed(ext.addr.ip()).is_err() && ext.addr.ip() != host.address {
                return Err(LabError::Setup(format!(
                    "[servers.{}] url {}: {} is neither in herd's ranges nor the [hosts] \
                     server's address ({}): herd sends it no load",
                    c.server.name,
                    ext.url(),
                    ext.addr.ip(),
                    host.address
                )));
            }
        }
    }
    for c in &checked.cells {
        host.check_cpus(&c.server_cpus)
            .map_err(|why| LabError::Cpus(format!("server_cpus on [hosts] server {why}")))?;
    }
    // A user's own config, judged where its server will read it.
    config_on_host::check(&host, &checked.cells)?;
    Ok(Some(host))
}

/// What the runner cannot do on `[hosts]` (yet, or at all), said before anything starts.
fn hosts_refusal(hosts: &crate::hosts::Hosts, cells: &[Cell]) -> Result<(), String> {
    if hosts.server.is_none() {
        let what = if hosts.router.is_some() { "a router host" } else { "client hosts" };
        return Err(format!(
            "[hosts] names {what} but no server: a server on this machine listens on \
             loopback, which they cannot reach; name the server host too"
        ));
    }
    for c in cells {
        if let Some(path) = c.path {
            path_on_hosts(path, hosts.router.as_ref())?;
            if c.server.external.is_some() {
                return Err(format!(
                    "[matrix] path {path} with server {}: an external server is loaded where \
                     its url says, not behind the router host's proxy: leave `path` out",
                    c.server.name
                ));
            }
        }
        if c.link.is_some() {
            return Err("[matrix] link: shaping applies to links herd builds on this machine; \
                        between [hosts] the network is the real one: leave `link` out"
                .to_owned());
        }
        if c.workload.is_netbench() {
            return Err("NetBench workloads do not run on [hosts] yet (issue 34): their Samba \
                        and smbtorture start on this machine"
                .to_owned());
        }
    }
    if let Some(router) = &hosts.router {
        if !cells.iter().any(|c| c.proxy().is_some()) {
            return Err(format!(
                "[hosts] router {router}: no cell runs a proxy path (haproxy-http, \
                 haproxy-tcp, nginx-proxy, sslh-fork, sslh-select) for it to run; add one to \
                 [matrix] path, or leave `router` out"
            ));
        }
    }
    Ok(())
}

/// Whether `path` runs between `[hosts]`: a proxy path does, its program on the router
/// host; the others are namespaces and rules herd builds on this machine, or a real
/// router's forwarding and firewall, which herd does not change.
fn path_on_hosts(
    path: herd_topo::net::Path,
    router: Option<&crate::hosts::HostUrl>,
) -> Result<(), String> {
    use herd_topo::net::Path as P;
    match (path, router) {
        (P::HaproxyHttp | P::HaproxyTcp | P::NginxProxy | P::SslhFork | P::SslhSelect, Some(_)) => {
            Ok(())
        }
        (P::HaproxyHttp | P::HaproxyTcp | P::NginxProxy | P::SslhFork | P::SslhSelect, None) => {
            Err(format!(
                "[matrix] path {path}: its proxy runs on a router; between [hosts] name the \
                 machine it runs on as `[hosts] router`"
            ))
        }
        (P::Routed | P::IptablesDnat | P::NftDnat | P::NftNumgen | P::LvsNat, _) => Err(format!(
            "[matrix] path {path}: between [hosts] the forwarding and any NAT are the real \
             network's; herd does not change a real router's routes or firewall: leave `path` \
             out, and say in the experiment's note what the path between your hosts is"
        )),
        // The client straight to the server host over the network as it is: the baseline
        // a proxy path on the router host is held against.
        (P::Direct, _) => Ok(()),
        (P::FourLinks, _) => Err(format!(
            "[matrix] path {path}: four links to four client hosts are namespaces built on \
             this machine; between [hosts] the network is the real one: leave `path` out"
        )),
    }
}

/// The reasons of refused cells, each once with how many cells it refused, in the order
/// first met (`3 cells: server: nginx 1.22 has no h3 …`).
pub fn refused_reasons(refused: &[Cell]) -> Vec<String> {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for why in refused.iter().filter_map(|c| c.refused.as_deref()) {
        match reasons.iter_mut().find(|(r, _)| *r == why) {
            Some((_, n)) => *n += 1,
            None => reasons.push((why, 1)),
        }
    }
    reasons
        .into_iter()
        .map(|(why, n)| format!("{n} {}: {why}", if n == 1 { "cell" } else { "cells" }))
        .collect()
}

/// What a lab run needs from its caller.
pub struct LabRun<'a> {
    pub experiment: &'a Experiment,
    pub store: &'a mut Store,
    /// herd's own executable: herd serve and herd run are started from it.
    pub herd_exe: PathBuf,
    pub herd_version: String,
    /// Where the run directory goes (the system's temporary directory).
    pub tmp: PathBuf,
    /// The plan text (`--dry-run`'s output), stored with the experiment.
    pub plan: String,
    pub cancel: &'a AtomicBool,
    pub progress: &'a mut dyn Progress,
    /// The unfinished experiment to run to its end (`--resume`; [`resume::find`]), whose
    /// definition `experiment` is; None: a new experiment.
    pub resume: Option<&'a Resume>,
    /// `herd lab run --metrics-listen`: each measured run of herd's client serves its live
    /// figures there, labelled with its cell and repetition (`--metrics-label`), and keeps
    /// its final figures up at most `.1` for a scrape.
    pub metrics: Option<(std::net::SocketAddr, herd_stats::units::TimeSpan)>,
    /// `herd lab run --tui`: each measured run of herd's client writes its seconds here
    /// (`--series`), where the view follows the run in flight; the other clients give their
    /// figures only at their end.
    pub live_series: Option<PathBuf>,
}

/// How a lab run ended.
#[derive(Debug)]
pub struct Finished {
    pub experiment: ExperimentId,
    /// Every run stored, a resumed experiment's earlier ones included.
    pub runs_done: usize,
    /// A resumed experiment's runs stored before this lab run.
    pub resumed: Option<usize>,
    /// The kind of every failed run (a resumed experiment's stored ones first), in the
    /// order they ran (as many as failed).
    pub failures: Vec<RunFailureKind>,
    pub runs_planned: usize,
    pub interrupted: bool,
    /// Processes herd still had to stop at the end (after Ctrl-C: the servers and client of
    /// the run in flight).
    pub stopped: usize,
    pub run_dir: PathBuf,
    pub run_dir_removed: bool,
    pub seed: u64,
}

/// Runs the experiment, checked by [`preflight`], to its end, or until `cancel` is raised.
pub fn run(checked: Checked, mut r: LabRun<'_>) -> Result<Finished, LabError> {
    let Checked { ready, cells: all, refused: _, cgroups, server_host, client_hosts, router_host } =
        checked;
    let registry =
        Registry::create(&r.tmp).map_err(|source| LabError::Io { path: r.tmp.clone(), source })?;
    let run_dir = registry.dir().to_path_buf();
    let mut sup = Supervisor::new(Some(registry.clone())).with_cgroups(cgroups);
    let hosts = OnHosts {
        server: server_host.as_ref(),
        clients: client_hosts.as_ref(),
        router: router_host.as_ref(),
    };
    let result = run_in(&mut r, &all, &ready, &run_dir, &mut sup, hosts);
    let mut stopped = sup.stop_all(Duration::from_secs(5));
    if let Some(clients) = client_hosts {
        clients.close();
    }
    // The router's program first: it forwards to the server.
    for host in router_host.into_iter().chain(server_host) {
        let (role, url) = (host.key(), host.url.clone());
        match host.close() {
            Ok(n) => stopped += n,
            Err(why) => r.progress.note(&format!(
                "the {role} host {url} did not end in order ({why}): its helper stops what it \
                 started when its link closes; `herd lab clean --hosts FILE` removes the rest"
            )),
        }
    }
    drop(sup);
    let run_dir_removed = registry.remove().is_ok();
    let mut f = result?;
    f.stopped += stopped;
    f.run_dir_removed = run_dir_removed;
    Ok(f)
}

fn run_in(
    r: &mut LabRun<'_>,
    all: &[Cell],
    ready: &preflight::Ready,
    run_dir: &Path,
    sup: &mut Supervisor,
    hosts: OnHosts<'_>,
) -> Result<Finished, LabError> {
    let (server_host, client_hosts) = (hosts.server, hosts.clients);
    let e = r.experiment;
    let cancelled = || r.cancel.load(Ordering::Relaxed);
    let docroot_dir = run_dir.join("www");
    let workloads: Vec<_> = e.workloads.values().collect();
    let docroot = crate::docroot::prepare(&docroot_dir, workloads)
        .map_err(|source| LabError::Io { path: docroot_dir.clone(), source })?;
    if let Some(host) = server_host {
        servers_on_host::copy_docroot(host, &docroot.dir).map_err(|why| {
            LabError::Setup(format!("cannot copy the document root to {}: {why}", host.url))
        })?;
    }
    let mut versions = preflight::versions(ready, run_dir, sup);
    // ab, wrk and h2load on client 1: their versions there.
    if let Some(clients) = client_hosts {
        versions.extend(clients.versions().clone());
    }

    let seed = match r.resume {
        Some(resume) => resume.seed()?,
        None => e.runner.seed.unwrap_or_else(|| {
            SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
        }),
    };
    let mut environment = environment(e, &r.herd_version, seed, &versions, sup.cpu_accounting());
    if let Some(host) = server_host {
        // The servers' CPU time is read on their host, the way its helper reads it.
        for (k, v) in &mut environment {
            if k == SERVER_CPU {
                *v = format!("on {}: {}", host.url, host.accounting());
            }
        }
        environment.extend(host.disclosure().iter().cloned());
        // This machine's card toward the server host: the client's, or the coordinator's.
        let nic = herd_topo::nic::toward(host.address).map_or_else(|why| why, |n| n.to_string());
        environment.push(("nic".to_owned(), nic));
    }
    if let Some(router) = hosts.router {
        environment.extend(router.disclosure().iter().cloned());
    }
    if let Some(clients) = client_hosts {
        environment.extend(clients.disclosure().iter().cloned());
    }
    let mut rounds = Rounds::new(all.len(), &e.repetitions, seed);
    if let (Some(twin), Some(c)) =
        (all.iter().position(|c| c.control_of.is_some()), &e.runner.controls)
    {
        rounds = rounds.with_twin(twin, c.runs);
    }
    let mut stored = HashSet::new();
    let mut failures = Vec::new();
    if let Some(resume) = r.resume {
        resume.check_environment(&environment, METHODOLOGY_VERSION)?;
        let runs = resume.runs(all, e.report.measure)?;
        for &(cell, rep, figure) in &runs.figures {
            rounds.record(cell, rep, figure);
        }
        stored = runs.done;
        failures = runs.failures;
        // The servers of the runs left, asked now: one upgraded since refuses the resume
        // before anything runs, as a changed machine does.
        let left: Vec<&Cell> = (0..all.len())
            .filter(|&i| (0..rounds.most(i)).any(|rep| !stored.contains(&(i, rep))))
            .filter_map(|i| all.get(i))
            .collect();
        let known = resume.server_versions();
        let dirs = (run_dir, docroot.dir.as_path());
        let changes =
            server_check::changes(&left, ready, dirs, (sup, server_host), &mut versions, &known);
        if !changes.is_empty() {
            return Err(resume.servers_changed(changes).into());
        }
    }
    let resumed = r.resume.map(|_| stored.len());
    let (mut planned, mut counted) = rounds.planned(|cell, rep| stored.contains(&(cell, rep)));
    let mut done = stored.len();
    // The note a resumed experiment keeps: what it said before, and when it was resumed.
    let mut history = None;
    let exp_id = match r.resume {
        Some(resume) => {
            let note = resume.note(&now_rfc3339(), done, planned);
            let owner = [(resume::LAB_PROCESS.to_owned(), herd_topo::registry::owner())];
            r.store.reopen_experiment(resume.id(), &note, &owner)?;
            history = Some(note);
            resume.id()
        }
        None => r.store.begin_experiment(&new_experiment(r, environment)?)?,
    };
    let server_versions = r.resume.map(|resume| (resume, resume.server_versions()));

    // An A/A twin is a run of its cell again, not a cell of the matrix: not counted as one.
    let keys: Vec<&str> =
        all.iter().filter(|c| c.control_of.is_none()).map(|c| c.key.as_str()).collect();
    r.progress.cells(&keys);
    r.progress.begin(done, planned, keys.len());
    if let Some(id) = r.resume.map(|resume| resume.id()) {
        r.progress.note(&format!(
            "resuming experiment {id}: {done} of {planned} runs done, {} to run",
            planned.saturating_sub(done)
        ));
    }
    let mut interrupted = false;
    let mut stopped_in_flight = 0;
    // Its own copy: `r` is lent whole to the profiled runs below.
    let live_series = r.live_series.clone();
    let ctx = cell::Context {
        experiment: e,
        ready,
        docroot: &docroot,
        run_dir,
        cancel: r.cancel,
        server_host,
        client_hosts,
        router_host: hosts.router,
        metrics: r.metrics,
        live_series: live_series.as_deref(),
    };
    let mut rep = 0u32;
    let mut budget = budget::Budget::start(e.repetitions.time_budget);
    'rounds: loop {
        let mut extended = rounds.extended(rep);
        if rep >= e.repetitions.min && extended > 0 {
            let left = rounds.round(rep).iter().filter(|&&i| !stored.contains(&(i, rep))).count();
            if let (Some(end), Some(limit)) = (budget.would_pass(left), budget.limit()) {
                r.progress.note(&format!(
                    "time budget: {extended} cell(s) unsure after {rep} repetitions, but \
                     another round would end at {} of the {} allowed ([repetitions] \
                     time_budget, {} run so far): no more repetitions",
                    crate::estimate::human(end),
                    crate::estimate::human(limit),
                    crate::estimate::human(budget.elapsed())
                ));
                rounds.stop_extending(rep);
                extended = 0;
            }
        }
        let order = rounds.round(rep);
        if order.is_empty() {
            break;
        }
        if rounds::count_round(rep, extended, &mut planned, &mut counted) {
            r.progress.replanned(
                planned,
                &format!(
                    "{extended} cell(s) unsure after {rep} repetitions ({}, or a repetition did \
                     not hold its rate): repetition {}",
                    e.repetitions.bounds.words("their figure"),
                    rep + 1
                ),
            );
        }
        for (position, &i) in order.iter().enumerate() {
            if stored.contains(&(i, rep)) {
                continue;
            }
            if cancelled() {
                interrupted = true;
                break 'rounds;
            }
            let c = &all[i];
            r.progress.run_started(done + 1, planned, c, rep);
            let outcome = cell::run(
                &ctx,
                c,
                (rep, position as u32),
                sup,
                &mut versions,
                &mut *r.progress,
                None,
            );
            let (record, summary) = match outcome {
                cell::RunEnd::Recorded(record, summary, _) => (record, summary),
                cell::RunEnd::Cancelled { stopped } => {
                    stopped_in_flight = stopped;
                    interrupted = true;
                    break 'rounds;
                }
            };
            // A server that answers with another version than before: this run is not
            // stored, and the experiment stops where it was.
            if let Some((resume, known)) = &server_versions {
                let changes = known.changes(&record);
                if !changes.is_empty() {
                    let why = format!("stopped: a server changed ({})", changes.join(", "));
                    let note = joined([history, Some(why)]);
                    let (status, now) = (ExperimentStatus::Interrupted, now_rfc3339());
                    r.store.finish_experiment(exp_id, status, &now, note.as_deref())?;
                    r.progress.end();
                    return Err(resume.server_changed(changes).into());
                }
            }
            r.store.record_repetition(exp_id, &record)?;
            done += 1;
            budget.ran();
            match summary.outcome.failure_kind() {
                None => rounds.record(i, rep, cell::figure(c, &record, e.report.measure)),
                Some(kind) => failures.push(kind),
            }
            r.progress.run_finished(&summary);
            // A server host lost (its link dropped, its helper silent): this run failed
            // naming it, and no other starts; every finished run is kept, and `--resume`
            // runs the rest once the host is back.
            let lost = ctx
                .remotes()
                .each()
                .find_map(|h| h.lost().map(|w| format!("the {} host {} ({w})", h.key(), h.url)))
                .or_else(|| {
                    client_hosts.and_then(|c| c.lost().map(|w| format!("client host {w}")))
                });
            if let Some(why) = lost {
                let lost = format!("stopped: {why} was lost");
                let note = joined([history, Some(lost.clone())]);
                let (status, now) = (ExperimentStatus::Interrupted, now_rfc3339());
                r.store.finish_experiment(exp_id, status, &now, note.as_deref())?;
                r.progress.end();
                return Err(LabError::Setup(format!(
                    "{lost}: experiment {} keeps its {done} finished runs; `herd lab run --resume \
                     {}` runs the rest",
                    exp_id.0, exp_id.0
                )));
            }
        }
        rep += 1;
    }
    if !interrupted {
        if let Some(perf) = ready.perf.as_deref() {
            let round = (rep, sup, &mut versions);
            interrupted = profile_cells(r, &ctx, all, exp_id, perf, round, &mut stopped_in_flight)?;
        }
    }
    let status = if interrupted { ExperimentStatus::Interrupted } else { ExperimentStatus::Done };
    let stop = interrupted.then(|| format!("interrupted after {done} of {planned} runs"));
    let note = joined([history, stop]);
    r.store.finish_experiment(exp_id, status, &now_rfc3339(), note.as_deref())?;
    r.progress.end();
    Ok(Finished {
        experiment: exp_id,
        runs_done: done,
        resumed,
        failures,
        runs_planned: planned,
        interrupted,
        stopped: stopped_in_flight,
        run_dir: run_dir.to_path_buf(),
        run_dir_removed: false,
        seed,
    })
}

/// The profiled run of every cell without a profile yet (a resumed experiment's profiled
/// cells are not run again), after every repetition: one extra run each, its stacks stored
/// apart from the repetitions (`profile.rs`). A profiled run that fails is said and leaves
/// its cell without a profile; the repetitions stand. True: interrupted by Ctrl-C.
fn profile_cells(
    r: &mut LabRun<'_>,
    ctx: &cell::Context<'_>,
    all: &[Cell],
    exp_id: ExperimentId,
    perf: &Path,
    (rep, sup, versions): (u32, &mut Supervisor, &mut BTreeMap<String, String>),
    stopped_in_flight: &mut usize,
) -> Result<bool, LabError> {
    // The twin is its cell again: one profile of that configuration is enough.
    for c in all.iter().filter(|c| !c.workload.is_netbench() && c.control_of.is_none()) {
        if r.store.has_profile(exp_id, &c.key)? {
            continue;
        }
        if r.cancel.load(Ordering::Relaxed) {
            return Ok(true);
        }
        r.progress.note(&format!(
            "profiling {} with perf: one more run, kept apart from the repetitions",
            c.key
        ));
        let outcome = cell::run(ctx, c, (rep, 0), sup, versions, &mut *r.progress, Some(perf));
        let (record, summary, folded) = match outcome {
            cell::RunEnd::Recorded(record, summary, folded) => (record, summary, folded),
            cell::RunEnd::Cancelled { stopped } => {
                *stopped_in_flight = stopped;
                return Ok(true);
            }
        };
        let (herd_store::Outcome::Ok, Some(folded)) = (&record.outcome, folded) else {
            let why = match &record.outcome {
                herd_store::Outcome::Failed { reason, .. } => reason.clone(),
                herd_store::Outcome::Ok => "perf gave no stacks".into(),
            };
            r.progress.note(&format!("the profiled run of {} failed, no profile: {why}", c.key));
            continue;
        };
        r.store.record_profile(
            exp_id,
            &herd_store::ProfileRecord {
                cell_key: c.key.clone(),
                tool: "perf".into(),
                recorded_at: now_rfc3339(),
                weight: folded.weight,
                requests_per_second: Some(summary.requests_per_second).filter(|v| v.is_finite()),
                folded: folded.text,
            },
        )?;
    }
    Ok(false)
}

/// An experiment's note from its parts, in order: `interrupted after 4 of 9 runs; resumed …`.
fn joined<const N: usize>(parts: [Option<String>; N]) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The environment entry saying how the servers' CPU time was read (the disclosure's words,
/// `CpuAccounting`'s Display).
pub const SERVER_CPU: &str = "server_cpu_accounting";

/// What the store keeps about the run's machine and software: the machine
/// (`environment::record`), the order seed, the client's CPUs, how the servers' CPU time is
/// read ([`SERVER_CPU`]), the herd process running it (for `--resume`,
/// [`resume::LAB_PROCESS`]) and every client program's version. A resumed run compares its
/// own with the stored one.
fn environment(
    e: &Experiment,
    herd_version: &str,
    seed: u64,
    versions: &BTreeMap<String, String>,
    server_cpu: CpuAccounting,
) -> Vec<(String, String)> {
    let mut environment = crate::environment::record(herd_version);
    environment.push(("order_seed".into(), seed.to_string()));
    environment.push(("client_cpus".into(), e.client_cpus.to_string()));
    environment.push((SERVER_CPU.into(), server_cpu.to_string()));
    environment.push((resume::LAB_PROCESS.into(), herd_topo::registry::owner()));
    for (k, v) in versions {
        environment.push((format!("version.{k}"), v.clone()));
    }
    // Servers herd did not start: the report says every repetition met the same process.
    for (name, def) in &e.servers {
        if let Some(ext) = &def.external {
            environment.push((format!("external.{name}"), ext.url()));
        }
    }
    environment
}

/// The experiment as a new lab run begins it in the store.
fn new_experiment(
    r: &LabRun<'_>,
    environment: Vec<(String, String)>,
) -> Result<NewExperiment, LabError> {
    let e = r.experiment;
    let published_json = e
        .published
        .as_ref()
        .map(herd_store::Published::to_json)
        .transpose()
        .map_err(LabError::Setup)?;
    Ok(NewExperiment {
        name: e.name.clone(),
        title: e.title.clone(),
        source: e.source.clone(),
        definition: e.text.clone(),
        plan: r.plan.clone(),
        started_at: now_rfc3339(),
        herd_version: r.herd_version.clone(),
        methodology_version: METHODOLOGY_VERSION,
        axes: e.axes.iter().map(|a| a.name.as_str().to_string()).collect(),
        environment,
        reference: e.reference.clone(),
        published_json,
        axis_values: e.axes.iter().map(|a| a.values.clone()).collect(),
        report: e.report.clone(),
    })
}

/// Now, as RFC 3339 UTC with seconds (`2026-11-21T14:03:07Z`).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }
}
