//! A run from start to end: check what no type can (an empty address list), give each worker
//! its event loop, share and clock, start the workers on their threads, and join them.
//!
//! Nothing here runs per request; the workers (worker.rs) do that, each on its own.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mio::{Interest, Poll, Waker};

use crate::control::Slot;
use crate::mux::{H2Request, MuxWorker};
use crate::pacer::Pacer;
use crate::rng::Rng;
use crate::worker::{Worker, WorkerEnd, TIMER, WAKER};
use crate::{Arrivals, Control, EngineError, Recorder, Run, RunSpec, Schedule, Wire};

pub(crate) fn run_all<R, F>(
    spec: &RunSpec,
    control: &Control,
    make: &F,
) -> Result<Run<R>, EngineError>
where
    R: Recorder,
    F: Fn(usize) -> R + Sync,
{
    if spec.target.addrs.is_empty() && spec.target.unix.is_none() {
        return Err(EngineError::NoAddress);
    }
    spec.check()?;
    // HTTP/2's requests in its own terms, once for every worker.
    let h2_requests = match &spec.wire {
        Wire::Http2(_) => Some(H2Request::from_workload(&spec.workload, &spec.target)?),
        Wire::Http3(_) => Some(H2Request::for_target(&spec.workload, &spec.target, true)?),
        Wire::Http1 => None,
    };
    let n = spec.worker_count();
    control.reset_workers();
    let mut prepared = Vec::with_capacity(n as usize);
    for i in 0..n {
        let poll = Poll::new().map_err(EngineError::Poll)?;
        let waker = Waker::new(poll.registry(), WAKER).map_err(EngineError::Poll)?;
        let slot = control.register(waker);
        prepared.push((i, poll, slot));
    }
    let started = Instant::now();
    let started_wall = SystemTime::now();
    let deadline = spec.stop.deadline().map(|d| started + d);
    let mut pacers = Vec::with_capacity(n as usize);
    for (i, poll, _) in &prepared {
        pacers.push(pacer(spec, *i, n, started, poll)?);
    }

    let results: Vec<Result<WorkerEnd<R>, EngineError>> = std::thread::scope(|s| {
        let handles: Vec<_> = prepared
            .into_iter()
            .zip(pacers)
            .map(|((i, poll, slot), pacer)| {
                let h2_requests = &h2_requests;
                let (conns, quota) = spec.share(i, n);
                let first_conn = spec.first_connection(i, n);
                let recorder = make(i as usize);
                std::thread::Builder::new()
                    .name(format!("herd-worker-{i}"))
                    .spawn_scoped(s, move || {
                        let share = Share {
                            poll,
                            slot,
                            recorder,
                            n_conns: conns,
                            first_conn,
                            rng: Rng::new(spec.seed ^ u64::from(i).wrapping_mul(0x9e37_79b9)),
                            quota,
                            deadline,
                            pacer,
                        };
                        match &h2_requests {
                            Some(requests) => MuxWorker::new(spec, control, share, requests).run(),
                            None => Worker::new(spec, control, share).run(),
                        }
                    })
                    .map_err(EngineError::Thread)
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(EngineError::WorkerPanicked)),
                Err(e) => Err(e),
            })
            .collect()
    });

    let mut recorders = Vec::with_capacity(results.len());
    let mut workers = Vec::with_capacity(results.len());
    let mut ended = started;
    let mut interrupted = false;
    let mut tls_info = None;
    let mut quic: Option<crate::quic::QuicStats> = None;
    for r in results {
        let end = r?;
        if let Some(q) = &end.quic {
            crate::mux::add_quic(quic.get_or_insert_with(Default::default), q);
        }
        ended = ended.max(end.last_activity);
        interrupted |= end.interrupted;
        if tls_info.is_none() {
            tls_info = end.tls_info;
        }
        recorders.push(end.recorder);
        workers.push(end.usage);
    }
    control.reset_workers();
    if let Some(q) = &mut quic {
        q.datagrams_per_recv =
            if q.recv_calls > 0 { q.datagrams_received as f64 / q.recv_calls as f64 } else { 0.0 };
    }
    Ok(Run { started, started_wall, ended, interrupted, recorders, workers, tls_info, quic })
}

/// What one worker is given: its event loop, its part of the run, and its recorder.
pub(crate) struct Share<R> {
    pub(crate) poll: Poll,
    pub(crate) slot: Arc<Slot>,
    pub(crate) recorder: R,
    pub(crate) n_conns: u32,
    /// The run-wide index of this worker's first connection.
    pub(crate) first_conn: u32,
    pub(crate) rng: Rng,
    /// Requests this worker may start; None: until the deadline.
    pub(crate) quota: Option<u64>,
    pub(crate) deadline: Option<Instant>,
    /// Open loop only.
    pub(crate) pacer: Option<Pacer>,
}

/// Worker `i` of `n`'s open-loop clock, registered with its event loop (None in a closed
/// loop).
fn pacer(
    spec: &RunSpec,
    i: u32,
    n: u32,
    started: Instant,
    poll: &Poll,
) -> Result<Option<Pacer>, EngineError> {
    let Schedule::Rate { rate, arrivals, .. } = spec.schedule else { return Ok(None) };
    let rate = rate.per_second() / f64::from(n);
    // Workers take turns: worker i starts i/n of an interval after worker 0.
    let offset = Duration::from_secs_f64(f64::from(i) / f64::from(n) / rate);
    // Each worker its own stream of gaps: independent arrivals, replayable.
    let seed = match arrivals {
        Arrivals::Uniform => None,
        Arrivals::Poisson { seed } => Some(seed ^ u64::from(i).wrapping_mul(0x9e37)),
    };
    let pacer = Pacer::new(rate, started + offset, seed).map_err(EngineError::Timer)?;
    let fd = pacer.raw_fd();
    poll.registry()
        .register(&mut mio::unix::SourceFd(&fd), TIMER, Interest::READABLE)
        .map_err(EngineError::Poll)?;
    Ok(Some(pacer))
}
