//! A NetBench cell's phases (seed 004's file-serving half): start samba and the path's
//! router, check that the path carries a TCP connection to smbd, warm up, then one
//! smbtorture NBENCH run per step and client host (its clients replaying dbench's NetBench
//! trace for the step's time; on `four-links` four side by side), and account: each step's throughput as a measurement, the servers' CPU time
//! over all the steps. There is no HTTP request to verify: a share that cannot be written,
//! or an SMB dialect refused, fails the first step with smbtorture's cause, named
//! (`client::smbtorture::NbenchError`).
//!
//! A calibration cell runs the same phases with tbench_srv as the server and tbench as the
//! client: the trace over plain TCP, the path's ceiling for it.
//!
//! Each run is herd's child in the client's namespace, on the client's CPUs, in a process
//! group of its own (the Supervisor's): smbtorture forks a process per client, and stopping
//! the group stops them all. It runs in its own directory, where it makes (and on a kill
//! leaves) a `smbtortureXXXXXX` directory, removed with the run directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_stats::{Measurement, REPORTED_CLIENT_CPU_S};
use herd_store::ServerRecord;
use herd_topo::Spawn;

use super::cell::CellRun;
use super::client_run::Usage;
use super::failure::{Phase, RunFailure, Stop};
use super::log_tail::last_lines_of;
use super::watched::Started;
use crate::client::smbtorture::{self, NbenchExit, NbenchOutcome};
use crate::client::trace::TraceJob;
use crate::error::with_causes;
use crate::load::Warmup;

/// Grace between SIGTERM and SIGKILL for an smbtorture past its time limit.
const CLIENT_GRACE: Duration = Duration::from_secs(5);

/// One client host's trace client of a step.
struct HostRun<'a> {
    /// Its number among the client hosts, from 1.
    number: usize,
    job: TraceJob<'a>,
    /// `env -C DIR PROGRAM …`.
    argv: Vec<OsString>,
    stdout: PathBuf,
    stderr: PathBuf,
    netns: Option<String>,
}

impl CellRun<'_> {
    /// The phases of a NetBench cell, in order.
    pub(super) fn measure_netbench(mut self) -> Result<(), Stop> {
        let (servers, over) = self.start_servers()?;
        let router = self.start_router()?;
        let started = Started { servers, router, over };
        self.check_path(&started)?;
        let (clients, step) = smbtorture::steps(&self.cell.load).map_err(RunFailure::Setup)?;
        if let Warmup::Duration(d) = self.cell.load.warmup {
            let most = clients.iter().copied().max().unwrap_or(1);
            self.nbench(Phase::Warmup, 0, most, d, &started)?;
        }
        let before = self.usage(&started);
        let mut steps: Vec<Measurement> = Vec::new();
        for (i, &n) in clients.iter().enumerate() {
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let (outcome, client_cpu) = self.nbench(Phase::Measure, number, n, step, &started)?;
            let mut m = smbtorture::to_measurement(&outcome, number);
            if let Some(cpu) = client_cpu {
                m.reported.push((REPORTED_CLIENT_CPU_S.to_owned(), cpu));
            }
            steps.push(m);
        }
        let after = self.usage(&started);
        self.account_netbench(&started, &before, &after, steps)
    }

    /// One step's NBENCH: `clients` replaying the trace for `limit`, spread over the path's
    /// client hosts (one smbtorture each, run side by side, each to the server address on
    /// its link; one host but on `four-links`), and their outcomes merged with the CPU
    /// seconds their processes used; or the first failure (a server or router that died
    /// meanwhile is named as the cause instead).
    fn nbench(
        &mut self,
        phase: Phase,
        step: u32,
        clients: u32,
        limit: Duration,
        started: &Started,
    ) -> Result<(NbenchOutcome, Option<f64>), Stop> {
        let e = self.ctx.experiment;
        let setup = |what: String| Stop::from(RunFailure::Setup(what));
        let tool = self.cell.client;
        let program = self
            .ctx
            .ready
            .clients
            .get(&tool)
            .ok_or_else(|| setup(format!("the client {tool} was not located")))?;
        let dir = self.dir.join("client").join(format!("{}-{step}", phase.name()));
        let hosts = self.place.clients();
        let spread = hosts.len() > 1;
        let mut runs: Vec<HostRun> = Vec::new();
        let spread_over = smbtorture::spread_clients(clients, hosts.len());
        for (i, (&(host, server), n)) in hosts.iter().zip(spread_over).enumerate() {
            if n == 0 {
                continue;
            }
            let dir = if spread { dir.join(host.name()) } else { dir.clone() };
            std::fs::create_dir_all(&dir)
                .map_err(|err| setup(format!("cannot create {}: {err}", dir.display())))?;
            let job = TraceJob::new(tool, program, server, i, n, limit).map_err(setup)?;
            let argv = job.argv().map_err(setup)?;
            if phase == Phase::Measure && step == 1 && runs.is_empty() {
                self.rec.client.argv =
                    argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            }
            // Started through `env -C`, which changes to the run's own directory and execs it
            // (the PID herd records is the client's): smbtorture writes its scratch directory
            // there.
            let mut chdir: Vec<OsString> = vec!["env".into(), "-C".into(), dir.clone().into()];
            chdir.extend(argv);
            runs.push(HostRun {
                number: i + 1,
                job,
                argv: chdir,
                stdout: dir.join("stdout"),
                stderr: dir.join("stderr"),
                netns: self.place.netns(host),
            });
        }
        let name = match phase {
            Phase::Warmup => "client-warmup",
            Phase::Measure => "client",
        };
        let spawns: Vec<Spawn> = runs
            .iter()
            .map(|r| Spawn {
                name,
                argv: &r.argv,
                env: &[],
                stdout: &r.stdout,
                stderr: &r.stderr,
                cpus: &e.client_cpus,
                netns: r.netns.as_deref(),
            })
            .collect();
        let kill_after = runs.first().map_or(limit, |r| r.job.kill_timeout());
        let cancel = Some(self.ctx.cancel);
        let ends = self
            .sup
            .run_all(&spawns, kill_after, CLIENT_GRACE, cancel)
            .map_err(|err| setup(format!("cannot run {tool}: {}", with_causes(&err))))?;
        let client_cancelled = ends.iter().any(|f| f.cancelled);
        if client_cancelled || self.cancelled() {
            return Err(Stop::Cancelled { client: client_cancelled });
        }
        // Which client host's run it was, when there are several.
        let on_host = |r: &HostRun, problem: String| {
            if spread {
                format!("on client host {} of {}: {problem}", r.number, hosts.len())
            } else {
                problem
            }
        };
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        if let Some((r, f)) = runs.iter().zip(&ends).find(|(_, f)| f.timed_out) {
            let (out, err) = (read(&r.stdout), read(&r.stderr));
            let failed = match r.job.stuck_because(&out, &err, kill_after) {
                Some(problem) => RunFailure::ClientFailed {
                    tool,
                    phase,
                    status: f.status,
                    problem: Some(on_host(r, problem)),
                    stderr_tail: None,
                },
                None => RunFailure::ClientTimedOut {
                    tool,
                    phase,
                    limit: kill_after,
                    stderr_tail: last_lines_of(&r.stderr),
                },
            };
            return Err(started.exited(self.sup, self.ctx.remotes()).unwrap_or(failed).into());
        }
        let mut outcomes = Vec::with_capacity(runs.len());
        for (r, f) in runs.iter().zip(&ends) {
            let (out, err) = (read(&r.stdout), read(&r.stderr));
            let parsed = r.job.parse(&out, &err, NbenchExit::from(f.status));
            let outcome = parsed.map_err(|problem| {
                // The error names the client's cause (and quotes its line where that
                // explains it).
                let failed = RunFailure::ClientFailed {
                    tool,
                    phase,
                    status: f.status,
                    problem: Some(on_host(r, problem)),
                    stderr_tail: None,
                };
                Stop::from(started.exited(self.sup, self.ctx.remotes()).unwrap_or(failed))
            })?;
            outcomes.push(outcome);
        }
        let merged = NbenchOutcome::merged(&outcomes)
            .ok_or_else(|| setup(format!("no {tool} ran (a step of no clients)")))?;
        let cpu = ends.iter().map(|f| f.cpu_seconds).sum::<Option<f64>>();
        Ok((merged, cpu))
    }

    /// The record of the measured steps: their measurements, the servers' and router's CPU
    /// time over them, what the path's hosts saw. A step that moved no bytes fails the run.
    fn account_netbench(
        &mut self,
        started: &Started,
        before: &Usage,
        after: &Usage,
        steps: Vec<Measurement>,
    ) -> Result<(), Stop> {
        // tbench_srv's per-connection processes end with their connections, reaped by
        // nobody herd can ask (they read 0 s per process): its CPU is left unknown, not
        // recorded as 0, unless its cgroup counted them.
        let tbench = self.cell.server.kind == herd_drivers::ServerKind::Tbench;
        if !tbench || self.sup.cpu_accounting().is_cgroup() {
            self.record_server_cpu(before, after);
        }
        let router_cpu = super::account::used(before.router, after.router);
        if let (Some(b), Some(a)) = (&before.network, &after.network) {
            let bytes: u64 = steps.iter().map(|m| m.bytes_total).sum();
            let secs: f64 = steps.iter().map(|m| m.duration_s).sum();
            self.rec.network = self.place.facts(b, a, bytes, secs, router_cpu);
        }
        if let Some(r) = &started.router {
            self.rec.servers.push(ServerRecord { cpu_seconds: router_cpu, ..r.record.clone() });
        }
        let idle = steps.iter().any(|m| m.bytes_total == 0);
        self.rec.measurements = steps;
        if let Some(exited) = started.exited(self.sup, self.ctx.remotes()) {
            return Err(exited.into());
        }
        if idle {
            // Nothing moved: as a run in which no request got an answer.
            let failures = Vec::new();
            return Err(RunFailure::NoResponse { tool: self.cell.client, failures }.into());
        }
        Ok(())
    }
}
