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
    let (started, started_wall) = start(spec.start_at);
    let late = spec.start_at.map_or(Duration::ZERO, |at| at.elapsed());
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
    Ok(Run { started, started_wall, late, ended, interrupted, recorders, workers, tls_info, quic })
}

/// The run's start and the same moment on the wall clock: now, or the shared start instant
/// (slept until, when it is still ahead).
fn start(at: Option<Instant>) -> (Instant, SystemTime) {
    let Some(at) = at else { return (Instant::now(), SystemTime::now()) };
    let wall = wall_clock_at(at);
    let now = Instant::now();
    // Sleep to within half a millisecond, then spin: a sleep overshoots by tens of
    // microseconds or more, and the agents' first sends are judged against this instant.
    const SPIN: Duration = Duration::from_micros(500);
    let ahead = at.saturating_duration_since(now);
    if ahead > SPIN {
        std::thread::sleep(ahead - SPIN);
    }
    while Instant::now() < at {
        std::hint::spin_loop();
    }
    // A past instant is still the start: what is late is measured as lag, not hidden.
    (at, wall)
}

/// `at` on the wall clock, read against the monotonic clock now (a moment ahead or past).
pub fn wall_clock_at(at: Instant) -> SystemTime {
    let (now, wall) = (Instant::now(), SystemTime::now());
    let moved = if at >= now { wall.checked_add(at - now) } else { wall.checked_sub(now - at) };
    moved.unwrap_or(wall)
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
    let Some((rate, offset, seed)) = stripe_clock(spec, i, n) else { return Ok(None) };
    let pacer = Pacer::new(rate, started + offset, seed).map_err(EngineError::Timer)?;
    let fd = pacer.raw_fd();
    poll.registry()
        .register(&mut mio::unix::SourceFd(&fd), TIMER, Interest::READABLE)
        .map_err(EngineError::Poll)?;
    Ok(Some(pacer))
}

/// Worker `i` of `n`'s open-loop clock (None in a closed loop): its rate, when its first
/// request is due after the run's start, and its Poisson seed.
fn stripe_clock(spec: &RunSpec, i: u32, n: u32) -> Option<(f64, Duration, Option<u64>)> {
    let Schedule::Rate { rate, arrivals, .. } = spec.schedule else { return None };
    // The run's arrivals k = 0, 1, 2… are due at k / rate; this worker sends those of its
    // stripe s of N (k ≡ s mod N; N = agents × workers, one stripe a worker): it starts s /
    // rate after the run's start and sends one every N / rate. The agents' stripes together
    // are every arrival of the one schedule, once.
    let (stripe, stripes) = spec.slice.stripe(i, n);
    let global = rate.per_second();
    let rate = global / stripes as f64;
    let offset = Duration::from_secs_f64(stripe as f64 / global);
    // Each stripe its own stream of gaps: independent arrivals, replayable (in one process,
    // stripe s is worker s, as before agents).
    let seed = match arrivals {
        Arrivals::Uniform => None,
        Arrivals::Poisson { seed } => Some(seed ^ stripe.wrapping_mul(0x9e37)),
    };
    Some((rate, offset, seed))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::num::NonZeroU32;

    use super::*;
    use crate::{RequestRate, Reuse, Slice, Target};

    fn open_loop(rate: f64, slice: Slice) -> RunSpec {
        let target = Target::resolve("127.0.0.1", 1, None).unwrap();
        RunSpec {
            schedule: Schedule::Rate {
                rate: RequestRate::new(rate).unwrap(),
                arrivals: Arrivals::Uniform,
                reuse: Reuse::KeepAlive { per_connection: None },
            },
            connections: NonZeroU32::new(64).unwrap(),
            slice,
            ..RunSpec::for_tests(target)
        }
    }

    /// The first arrivals of every worker of every agent, as microseconds after the start,
    /// give exactly one machine's schedule (k / rate for every k), each once, for any number
    /// of agents and workers.
    #[test]
    fn agents_stripes_together_are_the_one_schedule() {
        let rate = 1000.0;
        for agents in 1..=5u32 {
            for workers in 1..=4u32 {
                let per_stripe = 50u64;
                let mut seen = BTreeSet::new();
                for a in 0..agents {
                    let slice = Slice::new(a, NonZeroU32::new(agents).unwrap()).unwrap();
                    let spec = open_loop(rate, slice);
                    for w in 0..workers {
                        let (r, offset, seed) = stripe_clock(&spec, w, workers).unwrap();
                        assert_eq!(seed, None);
                        for j in 0..per_stripe {
                            // Due times in µs, rounded: j gaps of 1/r after the offset.
                            let due = offset.as_secs_f64() + j as f64 / r;
                            let us = (due * 1e6).round() as u64;
                            assert!(
                                seen.insert(us),
                                "{us} µs twice ({agents} agents, {workers} workers)"
                            );
                        }
                    }
                }
                let n = u64::from(agents * workers) * per_stripe;
                let want: BTreeSet<u64> = (0..n).map(|k| k * 1000).collect();
                assert_eq!(seen, want, "{agents} agents x {workers} workers");
            }
        }
    }

    /// One process is stripe i of n, as before agents: Poisson seeds unchanged.
    #[test]
    fn the_whole_run_keeps_its_seeds() {
        let mut spec = open_loop(100.0, Slice::WHOLE);
        spec.schedule = Schedule::Rate {
            rate: RequestRate::new(100.0).unwrap(),
            arrivals: Arrivals::Poisson { seed: 7 },
            reuse: Reuse::Close,
        };
        let (_, offset, seed) = stripe_clock(&spec, 3, 4).unwrap();
        assert_eq!(seed, Some(7 ^ 3u64.wrapping_mul(0x9e37)));
        assert_eq!(offset, Duration::from_millis(30));
    }
}
