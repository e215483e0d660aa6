//! A measured run (or step) as its [`StepReport`]: the merged recorder's figures, what was
//! asked of the run, the client's usage and the health verdict judged on it. Everything after
//! the run (the summary, `--fail-if`, `--json`, the page, the lab) reads the report built here.

use std::collections::BTreeMap;

use herd_engine::Think;
use herd_stats::{ClientHealth, Failure, ProcessCpu, SendLag, TimerLate};

use crate::execute::RunSetup;
use crate::health::{self, Inputs};
use crate::report::{
    Bytes, Clients, Conforming, FormatV1, GroupRow, Groups, IoReport, Latencies, LatencySummary,
    PerConnection, QuicReport, Requests, Schedule, StepReport, ThinkKind, ThinkReport,
};
use crate::run_info::RunInfo;
use crate::summary::per_second;
use herd_record::{ConnRate, RunRecorder};

/// The report of one run (or step).
pub(crate) fn step_report(setup: &RunSetup, info: &RunInfo, r: &RunRecorder) -> StepReport {
    debug_assert!(r.is_settled(), "the recorder's zero lags are in its histograms");
    let (completed, failed) = (r.core.responses, r.core.failures.total());
    let rate = |n: u64| per_second(n, info.elapsed);
    StepReport {
        format: FormatV1,
        url: setup.url.clone(),
        connections: info.connections,
        threads: info.threads,
        keep_alive: info.keep_alive,
        protocol: setup.protocol,
        streams: setup.streams,
        quic: info.quic.map(|q| QuicReport::from(&q)),
        io: info.io.as_ref().map(IoReport::from),
        trace: setup.trace.as_ref().map(crate::report::TraceReport::from),
        schedule: match info.rate {
            Some(r) => Schedule::Rate { requests_per_second: r },
            None => Schedule::Closed,
        },
        elapsed_s: info.elapsed.as_secs_f64(),
        interrupted: info.interrupted,
        warmup_requests: r.warmup_requests,
        requests: Requests {
            completed,
            failed,
            per_second: rate(completed),
            attempted_per_second: rate(completed + failed),
        },
        bytes: Bytes { read: r.core.bytes_read, body: r.core.body_bytes },
        latency_us: Latencies {
            total: LatencySummary::of(&r.core.total),
            total_from_send: LatencySummary::of(&r.service),
            connect: LatencySummary::of(&r.core.connect),
            first_byte: LatencySummary::of(&r.first_byte),
            queued: LatencySummary::of(&r.lag),
        },
        statuses: r.core.statuses.iter().collect(),
        failures: r
            .core
            .failures
            .iter()
            .map(|(k, n)| (Failure::from(k), n))
            .collect::<BTreeMap<_, _>>(),
        wrong_length: r.wrong_length,
        clients: Clients {
            requests_per_connection: setup
                .per_connection
                .map(|(min, max)| PerConnection { min, max }),
            think: setup.think.map(|t| {
                let (kind, mean) = match t {
                    Think::Fixed(d) => (ThinkKind::Fixed, d),
                    Think::Exponential(d) => (ThinkKind::Exponential, d),
                };
                ThinkReport { kind, mean_us: u64::try_from(mean.as_micros()).unwrap_or(u64::MAX) }
            }),
            bandwidth_bps: setup.bandwidth.map(|b| b.bits_per_second()),
            pipeline: setup.pipeline,
        },
        conforming: setup.conforming.map(|t| conforming(t.bits_per_second(), &r.conn_rates)),
        groups: groups(setup, r),
        client: client(&health::inputs(info, r), info),
    }
}

/// The verdict and the figures it was judged on (docs/client-health.md). A run in which no
/// request got a response gives nothing to judge the client on: no verdict, and a reason
/// that says so.
fn client(i: &Inputs, info: &RunInfo) -> ClientHealth {
    let usage = &info.client;
    let (verdict, reason) = if i.completed == 0 {
        (None, Some(health::nothing_to_judge(i)))
    } else {
        let h = health::judge(i);
        (Some(h.level), h.cause.map(|c| c.to_string()))
    };
    ClientHealth {
        verdict,
        reason,
        worker_threads: i.workers,
        cpu_busy_share: i.busy,
        run_queue_wait_share: i.run_queue_wait,
        throttled_share: i.throttled,
        throttled_periods: usage.throttled_periods.map(|(t, _)| t),
        quota_periods: usage.throttled_periods.map(|(_, p)| p),
        send_lag_us: SendLag { p50: i.send_lag_p50_us, p99: i.send_lag_p99_us },
        port_errors: i.errors.ports(),
        fd_errors: i.errors.fds(),
        process_cpu_s: usage
            .process
            .map(|p| ProcessCpu { user: p.user.as_secs_f64(), system: p.system.as_secs_f64() }),
        involuntary_switches: usage.process.map(|p| p.involuntary_switches),
        // Over the measured part, at the rate read over the whole engine run (warm-up too).
        server_cpu_s: info.server.map(|s| s.cpus() * info.elapsed.as_secs_f64()),
        server_processes: info.server.map(|s| s.processes),
        timer_late_us: usage.timers.map(|t| TimerLate { p50: t.p50_us, p99: t.p99_us }),
        steal_share: usage.steal,
    }
}

/// The receive rate of each connection, and how many conformed.
fn conforming(threshold: u64, rates: &[ConnRate]) -> Conforming {
    let mut bps: Vec<f64> = rates.iter().filter_map(ConnRate::bits_per_second).collect();
    bps.sort_by(f64::total_cmp);
    Conforming {
        threshold_bps: threshold,
        connections: bps.len() as u64,
        conforming: bps.iter().filter(|&&b| b >= threshold as f64).count() as u64,
        min_bps: bps.first().copied(),
        median_bps: bps.get(bps.len() / 2).copied(),
        max_bps: bps.last().copied(),
    }
}

/// Per URL (or SPECweb99 class), when the workload has more than one.
fn groups(setup: &RunSetup, r: &RunRecorder) -> Option<Groups> {
    if setup.group_names.len() < 2 {
        return None;
    }
    let rows = setup
        .group_names
        .iter()
        .zip(&r.groups)
        .map(|(name, g)| GroupRow {
            name: name.clone(),
            completed: g.completed,
            failed: g.failed,
            body_bytes: g.body_bytes,
            mean_us: g.latency_us.checked_div(g.completed),
        })
        .collect();
    Some(Groups { source: setup.description.clone(), rows })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client_usage::ClientUsage;

    /// The report of a closed-loop run of one connection that `r` recorded over `elapsed`.
    pub(crate) fn report_of(r: &RunRecorder, elapsed: Duration) -> StepReport {
        let setup = RunSetup { url: "http://127.0.0.1:1/".into(), ..RunSetup::default() };
        let info = RunInfo {
            connections: 1,
            threads: 1,
            keep_alive: true,
            rate: None,
            elapsed,
            interrupted: false,
            client: ClientUsage { workers: 1, busy: 0.1, ..ClientUsage::default() },
            server: None,
            quic: None,
            io: None,
            late: Duration::ZERO,
        };
        step_report(&setup, &info, r)
    }

    #[test]
    fn a_run_without_a_response_has_no_verdict_and_says_why() {
        let mut r = RunRecorder::new(None, Default::default());
        for _ in 0..5 {
            r.core.count_failure(herd_stats::FailureKind::Connect, 0, 0);
        }
        let report = report_of(&r, Duration::from_millis(3));
        assert_eq!(report.client.verdict, None);
        assert_eq!(
            report.client.reason.as_deref(),
            Some("no request got a response (5 failed): nothing to judge the client on")
        );
        assert!(report.no_response());
        assert_eq!(report.failures.get(&Failure::Connect), Some(&5));
    }

    #[test]
    fn a_run_with_responses_is_judged() {
        let mut r = RunRecorder::new(None, Default::default());
        r.core.count_response(200, 100, 40, 60, false);
        r.core.total.record_micros(80);
        let report = report_of(&r, Duration::from_secs(1));
        assert_eq!(report.client.verdict, Some(herd_stats::ClientVerdict::Ok));
        assert_eq!(report.requests.per_second, 1.0);
        assert_eq!(report.latency_us.total.count(), 1);
        assert!(report.latency_us.total_from_send.is_empty(), "nothing recorded from the send");
    }
}
