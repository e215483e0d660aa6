//! The last phase: what the measured run leaves in the record. The servers' and router's
//! CPU time over it, the client's measurements read from its output, the client's verdict
//! (herd judges itself; ab and wrk are judged by the CPU time they used), what the path's
//! hosts saw. Then whether the run counts: a server or router that exited during it, or a
//! run in which no request got any response, fails it whatever the client counted.

use std::path::Path;

use std::collections::BTreeMap;

use herd_stats::{Failure, HealthFacts, Measurement};
use herd_store::ServerRecord;

use super::cell::CellRun;
use super::client_run::{ClientRun, Usage};
use super::failure::{Phase, RunFailure, Stop};
use super::log_tail::last_lines;
use super::watched::Started;
use crate::client;
use crate::load::{Load, Request};

impl CellRun<'_> {
    /// How many requests the warm-up run `run` of `load` made (completed and failed), read
    /// from its output as a measured run's are: the record says what warmed the server up,
    /// a time or a count.
    pub(super) fn warmed(
        &mut self,
        started: &Started,
        load: &Load,
        request: &Request,
        run: &ClientRun,
    ) -> Result<u64, Stop> {
        let (parsed, _) = self.read_run(started, load, request, run, Phase::Warmup)?;
        Ok(parsed.steps.iter().map(|m| m.completed.saturating_add(m.failed)).sum())
    }

    /// Fills the record from the measured run `run` of `load` sending `request`, after a
    /// warm-up of `warmed` requests.
    pub(super) fn account(
        &mut self,
        started: &Started,
        load: &Load,
        request: &Request,
        run: ClientRun,
        warmed: u64,
    ) -> Result<(), Stop> {
        let cell = self.cell;
        let router_cpu = run.usage.as_ref().and_then(|(b, a)| used(b.router, a.router));
        if let Some((before, after)) = &run.usage {
            self.record_server_cpu(before, after);
        }
        let (parsed, threads) = self.read_run(started, load, request, &run, Phase::Measure)?;
        self.rec.client.health = parsed.health.clone();
        let mut verdict = parsed.judgement.clone();
        // ab and wrk do not judge themselves: judge them by the CPU time they used.
        if let (None, Some(cpu_seconds), Some(threads)) =
            (&verdict, run.finished.cpu_seconds, threads)
        {
            let e = self.ctx.experiment;
            let cpu = client::ClientCpu {
                cpu_seconds,
                wall: run.finished.elapsed,
                threads,
                cpus: e
                    .client_cpus
                    .cpus()
                    .map_or_else(herd_topo::cpuset::usable_cpus, <[usize]>::len),
            };
            verdict = client::judge_by_cpu(cell.client, &cpu);
            if verdict.is_some() {
                self.rec.client.health = Some(HealthFacts::ByCpu(cpu.facts()));
            }
        }
        self.rec.client.judgement = verdict;
        self.rec.measurements = parsed.steps;
        if let Some((Usage { network: Some(b), .. }, Usage { network: Some(a), .. })) = &run.usage {
            let bytes: u64 = self.rec.measurements.iter().map(|m| m.bytes_total).sum();
            let secs: f64 = self.rec.measurements.iter().map(|m| m.duration_s).sum();
            self.rec.network = self.place.facts(b, a, bytes, secs, router_cpu);
        }
        if let Some(r) = &started.router {
            self.rec.servers.push(ServerRecord { cpu_seconds: router_cpu, ..r.record.clone() });
        }
        // The warm-up ran apart, before the first step: its requests are counted there.
        if let Some(first) = self.rec.measurements.first_mut() {
            first.warmup_requests += warmed;
        }
        if let Some(exited) = started.exited(self.sup) {
            return Err(exited.into());
        }
        if self.rec.measurements.iter().all(|m| m.completed == 0) {
            let failures = failures_by_kind(&self.rec.measurements);
            return Err(RunFailure::NoResponse { tool: cell.client, failures }.into());
        }
        Ok(())
    }

    /// Each server process's CPU time over the measured run, and their total (known only if
    /// every part is). The records of started processes come first and in start order
    /// (`servers.rs`), as the readings do.
    pub(super) fn record_server_cpu(&mut self, before: &Usage, after: &Usage) {
        let mut total = Some(0.0);
        for (i, (b, a)) in before.servers.iter().zip(&after.servers).enumerate() {
            let cpu = used(*b, *a);
            if let Some(record) = self.rec.servers.get_mut(i) {
                record.cpu_seconds = cpu;
            }
            total = total.zip(cpu).map(|(t, u)| t + u);
        }
        self.rec.server_cpu_seconds = total;
    }
}

/// CPU seconds between two readings (never negative), if both were read.
pub(super) fn used(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    before.zip(after).map(|(b, a)| (a - b).max(0.0))
}

impl CellRun<'_> {
    /// The outcome of client run `run` (of `load` sending `request`, in `phase`) read from its
    /// output, and the threads of a client herd judges by its CPU time; output the adapter
    /// cannot read fails the run as the client's, with the adapter's reason and, where the
    /// reason does not quote it, stderr's end.
    fn read_run(
        &mut self,
        started: &Started,
        load: &Load,
        request: &Request,
        run: &ClientRun,
        phase: Phase,
    ) -> Result<(client::ClientOutcome, Option<u32>), Stop> {
        let out = read_output(&run.dir.join("stdout"))?;
        let err = read_output(&run.dir.join("stderr"))?;
        let base_url = self.base_url();
        let ca_file = self.ca_file.clone();
        let netns = self.agent_netns();
        let job = self.job(load, request, &base_url, ca_file.as_deref(), &run.dir, &netns)?;
        match client::parse(&job, &out, &err) {
            Ok(parsed) => Ok((parsed, client::external_threads(&job))),
            Err(problem) => {
                let problem = problem.to_string();
                // The adapters quote the tool's output where it explains the problem; the
                // end of stderr is added only where they did not, so it is said once (and an
                // empty stderr adds nothing).
                let last = err.lines().rev().find(|l| !l.trim().is_empty());
                let stderr_tail = match last {
                    Some(line) if !problem.contains(line.trim()) => Some(last_lines(&err)),
                    _ => None,
                };
                let failed = RunFailure::ClientFailed {
                    tool: self.cell.client,
                    phase,
                    status: run.finished.status,
                    problem: Some(problem),
                    stderr_tail,
                };
                Err(started.exited(self.sup).unwrap_or(failed).into())
            }
        }
    }
}

fn read_output(path: &Path) -> Result<String, RunFailure> {
    std::fs::read_to_string(path).map_err(|err| {
        RunFailure::Setup(format!("cannot read the client's output {}: {err}", path.display()))
    })
}

/// The failed requests of every step by kind, in [`Failure`]'s order.
fn failures_by_kind(steps: &[Measurement]) -> Vec<(Failure, u64)> {
    let mut kinds: BTreeMap<Failure, u64> = BTreeMap::new();
    for &(kind, n) in steps.iter().flat_map(|m| &m.failures) {
        let total = kinds.entry(kind).or_insert(0);
        *total = total.saturating_add(n);
    }
    kinds.into_iter().collect()
}
