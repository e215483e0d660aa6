//! The last phase: what the measured run leaves in the record. The servers' and router's
//! CPU time over it, the client's measurements read from its output, the client's verdict
//! (herd judges itself; ab and wrk are judged by the CPU time they used), what the path's
//! hosts saw. Then whether the run counts: a server or router that exited during it, or a
//! run in which no request got any response, fails it whatever the client counted.

use std::path::Path;

use std::collections::BTreeMap;

use herd_stats::waiting::{self, WaitingFacts};
use herd_stats::{
    ClientJudgement, ClientVerdict, Failure, HealthFacts, LatencySeries, Measurement,
};
use herd_store::ServerRecord;

use super::cell::CellRun;
use super::client_run::{ClientRun, Usage};
use super::failure::{Phase, RunFailure, Stop};
use super::log_tail::last_lines;
use super::server_count::Counted;
use super::watched::Started;
use crate::client;
use crate::load::{Load, Request, Shape};

impl CellRun<'_> {
    /// How many requests the warm-up run `run` of `load` completed and failed, read from
    /// its output as a measured run's are: the record says what warmed the server up, a
    /// time or a count, and the server-count check what reached the server.
    pub(super) fn warmed(
        &mut self,
        started: &Started,
        load: &Load,
        request: &Request,
        run: &ClientRun,
    ) -> Result<Counted, Stop> {
        let (parsed, _) = self.read_run(started, load, request, run, Phase::Warmup)?;
        Ok(Counted::of(&parsed.steps))
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
        self.rec.client.io = parsed.io.clone();
        self.rec.client.trace_id = parsed.trace_id.clone();
        let mut verdict = parsed.judgement.clone();
        // ab and wrk do not judge themselves: judge them by the CPU time they used.
        if let (None, Some(cpu_seconds), Some(threads)) =
            (&verdict, run.finished.cpu_seconds, threads)
        {
            let e = self.ctx.experiment;
            // On client 1 of `[hosts] clients` it had `[client] cpus` there, else all.
            let there = self.tool_hosts().and_then(|h| h.cpu_count());
            let cpu = client::ClientCpu {
                cpu_seconds,
                wall: run.finished.elapsed,
                threads,
                cpus: there.unwrap_or_else(|| {
                    e.client_cpus.cpus().map_or_else(herd_topo::cpuset::usable_cpus, <[usize]>::len)
                }),
            };
            verdict = client::judge_by_cpu(cell.client, &cpu);
            if verdict.is_some() {
                self.rec.client.health = Some(HealthFacts::ByCpu(cpu.facts()));
            }
        }
        self.rec.measurements = parsed.steps;
        if let Some((Usage { network: Some(b), .. }, Usage { network: Some(a), .. })) = &run.usage {
            let bytes: u64 = self.rec.measurements.iter().map(|m| m.bytes_total).sum();
            let secs: f64 = self.rec.measurements.iter().map(|m| m.duration_s).sum();
            self.rec.network = self.place.facts(b, a, bytes, secs, router_cpu);
        }
        // A verdict of ok (or none) must not vouch for a run whose time went to waiting.
        let vouched = verdict.as_ref().is_none_or(|j| j.verdict == ClientVerdict::Ok);
        let shaped = self.rec.network.as_ref().is_some_and(|n| n.link_bits_per_second.is_some());
        if vouched && !shaped {
            let client_cpu = run.finished.cpu_seconds;
            let run_s = run.finished.elapsed.as_secs_f64();
            let facts = waiting_facts(
                load,
                &self.rec.measurements,
                run_s,
                client_cpu,
                self.rec.server_cpu_seconds,
            );
            if let Some(waiting) = facts.as_ref().and_then(waiting::judge) {
                verdict = Some(ClientJudgement {
                    verdict: ClientVerdict::Suspect,
                    reason: Some(waiting.to_string()),
                });
            }
        }
        self.rec.client.judgement = verdict;
        if let Some(r) = &started.router {
            self.rec.servers.push(ServerRecord { cpu_seconds: router_cpu, ..r.record.clone() });
        }
        // The warm-up ran apart, before the first step: its requests are counted there.
        if let Some(first) = self.rec.measurements.first_mut() {
            first.warmup_requests += warmed;
        }
        if let Some(exited) = started.exited(self.sup, self.ctx.remotes()) {
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
        // No process watched (an external server without its pid): no figure, not zero.
        let mut total = (!before.servers.is_empty()).then_some(0.0);
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

/// The facts of a measured run for the waiting judgement (herd_stats::waiting): a closed loop
/// of one measurement whose latency from the send is known, with the client's and the
/// servers' CPU seconds over the client's whole run of `run_s` seconds (the servers are read
/// just before it starts and just after it ends). None where any is missing.
fn waiting_facts(
    load: &Load,
    steps: &[Measurement],
    run_s: f64,
    client_cpu_s: Option<f64>,
    server_cpu_s: Option<f64>,
) -> Option<WaitingFacts> {
    let closed = matches!(load.shape, Shape::Requests { .. } | Shape::Duration { .. });
    let [m] = steps else { return None };
    if !closed {
        return None;
    }
    let latency = m
        .histogram(LatencySeries::TotalFromSend)
        .or_else(|| m.histogram(LatencySeries::Total))
        .filter(|h| !h.is_empty())?;
    let connect = m.histogram(LatencySeries::Connect).filter(|h| !h.is_empty());
    Some(WaitingFacts {
        completed: m.completed,
        elapsed_s: run_s,
        latency_mean_us: latency.mean(),
        client_cpu_s: client_cpu_s?,
        server_cpu_s: server_cpu_s?,
        connect_min_us: connect.map(|h| h.min() as f64),
        new_connection_share: connect.map_or(0.0, |h| h.len() as f64 / m.completed.max(1) as f64),
    })
}

/// CPU seconds between two readings, if both were read and the second is not below the
/// first. A process-group reading goes down when a member ends whose time no live process
/// reaped (a process of the group that was not the server's child): what the group used is
/// then unknown, and no figure is more honest than a zero.
pub(super) fn used(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    before.zip(after).and_then(|(b, a)| (a >= b).then_some(a - b))
}

#[cfg(test)]
mod used_tests {
    #[test]
    fn a_reading_that_went_down_is_no_figure() {
        assert_eq!(super::used(Some(1.0), Some(1.5)), Some(0.5));
        assert_eq!(super::used(Some(1.0), Some(1.0)), Some(0.0));
        assert_eq!(super::used(Some(1.0), Some(0.9)), None);
        assert_eq!(super::used(None, Some(0.9)), None);
    }
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
                // A tool that ran on client 1 of `[hosts] clients`: where it ran.
                let problem = match self.tool_hosts().and_then(|h| h.first()) {
                    Some(host) => format!("{problem} (on {})", host.url),
                    None => problem,
                };
                let failed = RunFailure::ClientFailed {
                    tool: self.cell.client,
                    phase,
                    status: run.finished.status,
                    problem: Some(problem),
                    stderr_tail,
                };
                Err(started.exited(self.sup, self.ctx.remotes()).unwrap_or(failed).into())
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hdrhistogram::Histogram;
    use herd_stats::{LatencySeries, Measurement};

    use super::*;
    use crate::load::{Load, Shape, Warmup};

    fn load(shape: Shape) -> Load {
        Load {
            shape,
            keep_alive: false,
            warmup: Warmup::None,
            timeout: Duration::from_secs(30),
            streams: None,
        }
    }

    fn histogram(us: u64, n: u64) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        h.record_n(us, n).unwrap();
        h
    }

    /// The lab's h1-tls cell of nginx before TCP_NODELAY, as herd measured it: 100 requests
    /// on one connection at a time, 44 ms each, a new TLS connection each (connect 0.9 ms),
    /// the client 0.15 s of CPU over its 4.5 s run (start-up included), nginx 0.05 s.
    fn stalled() -> Measurement {
        Measurement {
            completed: 100,
            duration_s: 4.4,
            histograms: vec![
                (LatencySeries::TotalFromSend, histogram(44_000, 100)),
                (LatencySeries::Connect, histogram(900, 100)),
            ],
            ..Measurement::default()
        }
    }

    #[test]
    fn the_stalled_tls_cell_waited() {
        let closed = load(Shape::Requests { n_requests: 100, concurrency: 1 });
        let facts = waiting_facts(&closed, &[stalled()], 4.5, Some(0.15), Some(0.05)).unwrap();
        assert_eq!(facts.new_connection_share, 1.0);
        let w = waiting::judge(&facts).unwrap();
        assert!(w.latency_mean_us > 40_000.0 && w.explained_us < 10_000.0, "{w:?}");
    }

    #[test]
    fn only_closed_loops_of_one_measurement_with_both_cpus_are_judged() {
        let closed = load(Shape::Requests { n_requests: 100, concurrency: 1 });
        let rate = load(Shape::Rate {
            per_second: 10.0,
            duration: Duration::from_secs(10),
            connections: 1,
        });
        let steps = load(Shape::Steps { clients: vec![1, 2], step: Duration::from_secs(1) });
        assert!(waiting_facts(&rate, &[stalled()], 4.5, Some(0.5), Some(0.2)).is_none());
        assert!(waiting_facts(&steps, &[stalled(), stalled()], 4.5, Some(0.5), Some(0.2)).is_none());
        assert!(waiting_facts(&closed, &[stalled()], 4.5, None, Some(0.2)).is_none());
        assert!(waiting_facts(&closed, &[stalled()], 4.5, Some(0.5), None).is_none());
        let no_latency = Measurement { histograms: Vec::new(), ..stalled() };
        assert!(waiting_facts(&closed, &[no_latency], 4.5, Some(0.5), Some(0.2)).is_none());
    }
}
