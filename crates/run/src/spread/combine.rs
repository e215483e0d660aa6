//! The agents' parts of one step added into the step one machine would have measured: their
//! recorders summed (every count and histogram exact, spread/wire.rs), their run facts taken
//! together, and the report (thresholds, client-health verdict) built once on that sum by the
//! same code as a single run's.

use std::sync::Arc;

use crate::client_usage::ClientUsage;
use crate::execute::RunSetup;
use crate::report::{IoReport, QuicReport, StepReport};
use crate::run_info::RunInfo;
use crate::spread::wire::StepFrame;
use crate::step_result;
use herd_record::RunRecorder;

/// The merged report of one step from every agent's part of it.
pub(crate) fn combine(setup: &RunSetup, parts: &[&StepFrame]) -> StepReport {
    let mut recorder = RunRecorder::new(None, Arc::default());
    for p in parts {
        recorder += &p.recorder;
    }
    // The agents sent theirs settled; settling again adds nothing but is what the report
    // builder checks.
    recorder.settle();
    let mut setup = setup.clone();
    if setup.protocol.is_none() {
        // Decided by the server (ALPN): each agent learned it; they agree (one server).
        setup.protocol = parts.iter().find_map(|p| p.report.protocol);
        setup.streams = parts.iter().find_map(|p| p.report.streams);
    }
    let mut report = step_result::step_report(&setup, &combine_info(parts), &recorder);
    report.quic = combine_quic(parts.iter().filter_map(|p| p.report.quic.as_ref()));
    report.io = combine_io(parts.iter().map(|p| p.report.io.as_ref()));
    report
}

/// Which backend measured, from the agents' own reports: theirs when they agree (one plan,
/// alike machines), else the first agent's with what the others took said beside its own.
fn combine_io<'a>(agents: impl Iterator<Item = Option<&'a IoReport>>) -> Option<IoReport> {
    let all: Vec<Option<&IoReport>> = agents.collect();
    let first = all.first().copied().flatten()?.clone();
    if all.iter().all(|io| *io == Some(&first)) {
        return Some(first);
    }
    let each: Vec<String> = all
        .iter()
        .enumerate()
        .map(|(i, io)| match io {
            Some(io) => format!("agent {i} {}", io.backend_name()),
            None => format!("agent {i} unsaid"),
        })
        .collect();
    let fallback = format!("agents differ: {}", each.join(", "));
    Some(IoReport { fallback: Some(fallback), ..first })
}

/// HTTP/3: what QUIC did over every agent's connections, from their own reports: counts
/// added, the lowest RTT the lowest, the smoothed RTT the mean of the agents that measured
/// one (none: none), and datagrams per receive call over all of them (each agent's calls are
/// its datagrams over its ratio).
fn combine_quic<'a>(agents: impl Iterator<Item = &'a QuicReport>) -> Option<QuicReport> {
    let mut total: Option<QuicReport> = None;
    let (mut calls, mut smoothed, mut with_rtt) = (0.0f64, 0u64, 0u64);
    for q in agents {
        if q.datagrams_per_recv > 0.0 {
            calls += q.datagrams_received as f64 / q.datagrams_per_recv;
        }
        if let Some(s) = q.smoothed_rtt_us {
            smoothed += s;
            with_rtt += 1;
        }
        let Some(t) = &mut total else {
            total = Some(*q);
            continue;
        };
        t.min_rtt_us = match (t.min_rtt_us, q.min_rtt_us) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        t.packets_sent += q.packets_sent;
        t.packets_lost += q.packets_lost;
        t.datagrams_sent += q.datagrams_sent;
        t.datagrams_received += q.datagrams_received;
        t.gso |= q.gso;
        t.gro |= q.gro;
    }
    let mut t = total?;
    t.smoothed_rtt_us = smoothed.checked_div(with_rtt);
    t.datagrams_per_recv = if calls > 0.0 { t.datagrams_received as f64 / calls } else { 0.0 };
    Some(t)
}

/// The run facts of the agents as one client's: connections and workers added, the rate
/// their shares added (the whole run's), the longest elapsed time (all started together),
/// interrupted if any was.
fn combine_info(parts: &[&StepFrame]) -> RunInfo {
    let infos: Vec<&RunInfo> = parts.iter().map(|p| &p.info).collect();
    let usages: Vec<ClientUsage> = infos.iter().map(|i| i.client).collect();
    RunInfo {
        connections: infos.iter().map(|i| i.connections).sum(),
        threads: infos.iter().map(|i| i.threads).sum(),
        keep_alive: infos.iter().any(|i| i.keep_alive),
        rate: infos.iter().map(|i| i.rate).sum(),
        elapsed: infos.iter().map(|i| i.elapsed).max().unwrap_or_default(),
        interrupted: infos.iter().any(|i| i.interrupted),
        client: ClientUsage::combine(&usages),
        // Agents do not read the server (each would count the same one).
        server: None,
        quic: None,
        io: None,
        late: infos.iter().map(|i| i.late).max().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn agents_say_their_backend_and_say_so_when_they_differ() {
        use crate::report::{IoAsked, IoBackend};
        let epoll = IoReport {
            asked: IoAsked::Auto,
            backend: IoBackend::Epoll,
            fallback: Some("io_uring not yet for HTTP/1".into()),
        };
        let uring = IoReport { backend: IoBackend::IoUring, fallback: None, ..epoll.clone() };
        assert_eq!(combine_io([Some(&epoll), Some(&epoll)].into_iter()), Some(epoll.clone()));
        let mixed = combine_io([Some(&epoll), Some(&uring)].into_iter()).unwrap();
        assert_eq!(mixed.backend, IoBackend::Epoll);
        assert_eq!(
            mixed.fallback.as_deref(),
            Some("agents differ: agent 0 epoll, agent 1 io_uring")
        );
        assert_eq!(combine_io([None, None].into_iter()), None);
        assert_eq!(combine_io(std::iter::empty()), None);
    }

    #[test]
    fn agents_quic_figures_add_up() {
        let q = |rtt, smoothed, lost, received, per_recv| QuicReport {
            min_rtt_us: Some(rtt),
            smoothed_rtt_us: Some(smoothed),
            packets_sent: 100,
            packets_lost: lost,
            datagrams_sent: 90,
            datagrams_received: received,
            datagrams_per_recv: per_recv,
            gso: false,
            gro: true,
        };
        let a = q(300, 500, 1, 100, 2.0); // 50 receive calls
        let b = q(200, 700, 2, 300, 1.0); // 300 calls
        let m = combine_quic([a, b].iter()).unwrap();
        assert_eq!((m.min_rtt_us, m.smoothed_rtt_us), (Some(200), Some(600)));
        assert_eq!((m.packets_sent, m.packets_lost, m.datagrams_sent), (200, 3, 180));
        assert_eq!(m.datagrams_received, 400);
        assert!((m.datagrams_per_recv - 400.0 / 350.0).abs() < 1e-9, "{m:?}");
        assert!(m.gro && !m.gso);
        assert_eq!(combine_quic(std::iter::empty()), None);
        // An agent whose connections measured no round trip adds none to the others' (its
        // null is not a zero), and agents that all measured none say none.
        let none = QuicReport { min_rtt_us: None, smoothed_rtt_us: None, ..a };
        let m = combine_quic([none, b].iter()).unwrap();
        assert_eq!((m.min_rtt_us, m.smoothed_rtt_us), (Some(200), Some(700)));
        let m = combine_quic([none, none].iter()).unwrap();
        assert_eq!((m.min_rtt_us, m.smoothed_rtt_us), (None, None));
    }

    use std::time::{Duration, Instant};

    use herd_engine::{Completed, Recorder as _, Timing};

    use super::*;
    use crate::step_result::tests::report_of;
    use herd_record::RecorderPlan;

    fn completed(r: &mut RunRecorder, us: u64, status: u16, conn: u32) {
        let t0 = Instant::now();
        let timing = Timing {
            intended: t0,
            ready: t0,
            start: t0,
            connected: Some(t0),
            written: None,
            first_byte: Some(t0 + Duration::from_micros(us / 2)),
            end: t0 + Duration::from_micros(us),
        };
        r.completed(&Completed {
            timing: &timing,
            status,
            reusable: true,
            body_bytes: 100,
            bytes_read: 180,
            bytes_written: 40,
            reused: us % 3 == 0,
            server: None,
            request: 0,
            conn,
        });
    }

    fn frame(r: RunRecorder, connections: u32) -> StepFrame {
        let report = report_of(&r, Duration::from_secs(1));
        StepFrame {
            step: 1,
            recorder: r,
            info: RunInfo {
                connections,
                threads: 1,
                keep_alive: true,
                rate: Some(100.0),
                elapsed: Duration::from_secs(1),
                interrupted: false,
                client: ClientUsage { workers: 1, busy: 0.2, busiest: 0.2, ..Default::default() },
                server: None,
                quic: None,
                io: None,
                late: Duration::from_micros(connections.into()),
            },
            report,
        }
    }

    /// Three agents' recorders sent over the wire and combined report what one recorder of
    /// every request reports: the same counts, the same histograms, the same quantiles.
    #[test]
    fn three_agents_combined_are_one_machine() {
        let plan = Arc::new(RecorderPlan { conn_rates: Some(9), ..RecorderPlan::default() });
        let mut one = RunRecorder::new(None, plan.clone());
        let mut parts: Vec<RunRecorder> =
            (0..3).map(|_| RunRecorder::new(None, plan.clone())).collect();
        let mut x: u64 = 88_172_645_463_325_252;
        for i in 0..9_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let us = 50 + x % 200_000;
            let status = if x % 17 == 0 { 503 } else { 200 };
            let conn = i % 9;
            completed(&mut one, us, status, conn);
            completed(&mut parts[(conn % 3) as usize], us, status, conn);
        }
        one.settle();
        let frames: Vec<StepFrame> = parts
            .into_iter()
            .map(|mut r| {
                r.settle();
                // Over the wire and back, as the coordinator receives it.
                let text = serde_json::to_string(&r).unwrap();
                frame(serde_json::from_str(&text).unwrap(), 3)
            })
            .collect();
        let refs: Vec<&StepFrame> = frames.iter().collect();
        let setup = RunSetup { url: "http://127.0.0.1:1/".into(), ..RunSetup::default() };
        let merged = combine(&setup, &refs);
        let single = report_of(&one, Duration::from_secs(1));
        assert_eq!(merged.requests, single.requests);
        assert_eq!(merged.latency_us, single.latency_us);
        assert_eq!(merged.statuses, single.statuses);
        assert_eq!(merged.bytes, single.bytes);
        assert_eq!(merged.connections, 9);
        assert_eq!(merged.threads, 3);
        assert_eq!(merged.schedule, crate::report::Schedule::Rate { requests_per_second: 300.0 });
        assert_eq!(merged.client.worker_threads, 3);
        assert!(merged.client.verdict.is_some());
    }
}
