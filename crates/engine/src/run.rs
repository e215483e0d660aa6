//! A run from start to end: refuse what no type can (an empty address list, the spec's own
//! checks in `RunSpec::check`, a request HTTP/2 or HTTP/3 cannot carry), settle the I/O
//! backend once (io_choice.rs; `run_on_backend` is the one place a worker is chosen for
//! it), give each worker its event loop, start the workers on their threads (which open
//! their connections first when the run starts later: warm.rs), wait for the start
//! (start.rs), give each worker its recorder, deadline and clock, and join them.
//!
//! Nothing here runs per request; the workers (worker.rs) do that, each on its own.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mio::{Interest, Poll, Waker};

use crate::control::{Slot, WAKER};
use crate::link::{H1Ctx, H1Link, H2Ctx, H2Link, H3Ctx, H3Link, RequestFields};
use crate::pacer::{Pacer, TIMER};
use crate::reach::ReachWatch;
use crate::rng::Rng;
use crate::start::{self, Start};
use crate::warm::{self, Warm};
use crate::worker::base::{Share, WorkerEnd};
use crate::worker::Worker;
use crate::{Arrivals, Backend, Control, EngineError, Recorder, Run, RunSpec, Schedule, Wire};

pub(crate) fn run_all<R, F>(
    spec: &RunSpec,
    control: &Control,
    make: &F,
) -> Result<Run<R>, EngineError>
where
    R: Recorder,
    F: Fn(usize, Instant) -> R + Sync,
{
    if spec.target.addrs.is_empty() && spec.target.unix.is_none() {
        return Err(EngineError::NoAddress);
    }
    spec.check()?;
    // The backend, settled once for every worker (the probe runs once per process).
    let io = crate::io_choice::resolve(spec.io, &spec.wire)?;
    let backend = io.backend;
    // HTTP/2's and HTTP/3's requests in their own terms, once for every worker (none for
    // HTTP/1, which writes the workload's bytes).
    let field_requests = match &spec.wire {
        Wire::Http2(_) => RequestFields::from_workload(&spec.workload, &spec.target)?,
        Wire::Http3(_) => RequestFields::for_target(&spec.workload, &spec.target, true)?,
        Wire::Http1 => Vec::new(),
    };
    let n = spec.worker_count();
    control.reset_workers();
    let reach = Arc::new(ReachWatch::new(spec.first_attempts()));
    let mut prepared = Vec::with_capacity(n as usize);
    for i in 0..n {
        let poll = Poll::new().map_err(EngineError::Poll)?;
        let waker = Waker::new(poll.registry(), WAKER).map_err(EngineError::Poll)?;
        let slot = control.register(waker);
        prepared.push((i, poll, slot));
    }
    if let Start::Gate(gate) = &spec.start {
        gate.expect(n);
    }

    type Ended<R> = Result<Option<WorkerEnd<R>>, EngineError>;
    let (results, begun) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n as usize);
        let mut begins = Vec::with_capacity(n as usize);
        for (i, poll, slot) in prepared {
            // Each worker is told its start (and given its recorder) once the start is known.
            let (tx, rx) = std::sync::mpsc::sync_channel::<Begin<R>>(1);
            begins.push(tx);
            let field_requests = &field_requests[..];
            let reach = reach.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("herd-worker-{i}"))
                .spawn_scoped(s, move || {
                    let parts = (poll, slot, reach);
                    worker(spec, control, (i, n), parts, rx, (backend, field_requests))
                });
            handles.push(spawned.map_err(EngineError::Thread));
        }
        if let (Start::Gate(gate), true) = (&spec.start, handles.iter().any(Result::is_err)) {
            // A worker that never ran never reports: the caller must not wait for it.
            gate.close();
        }
        let begun = begin(spec, control, n, make, begins);
        let results: Vec<Ended<R>> = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(EngineError::WorkerPanicked)),
                Err(e) => Err(e),
            })
            .collect();
        (results, begun)
    });
    let Begun { started, started_wall, held } = begun;

    let mut recorders = Vec::with_capacity(results.len());
    let mut workers = Vec::with_capacity(results.len());
    let mut ended = started;
    let mut late = Duration::ZERO;
    let mut interrupted = held.is_some();
    let mut tls_info = None;
    let mut quic: Option<crate::quic::QuicStats> = None;
    for r in results {
        let Some(end) = r? else { continue };
        if let Some(q) = &end.quic {
            crate::link::add_quic(quic.get_or_insert_with(Default::default), q);
        }
        ended = ended.max(end.last_activity);
        late = late.max(end.late);
        interrupted |= end.interrupted;
        if tls_info.is_none() {
            tls_info = end.tls_info;
        }
        recorders.push(end.recorder);
        workers.push(end.usage);
    }
    // A run that never started still hands back a recorder per worker, empty.
    if let Some(held) = held {
        recorders = held;
    }
    control.reset_workers();
    if let Some(q) = &mut quic {
        q.datagrams_per_recv =
            if q.recv_calls > 0 { q.datagrams_received as f64 / q.recv_calls as f64 } else { 0.0 };
    }
    Ok(Run {
        started,
        started_wall,
        late,
        ended,
        interrupted,
        reach: reach.reach(),
        recorders,
        workers,
        tls_info,
        quic,
        io,
    })
}

/// What a worker is told once the run's start is known.
struct Begin<R> {
    at: Instant,
    deadline: Option<Instant>,
    recorder: R,
}

/// The run's start as the caller sees it; `held`: the run never started (its gate closed,
/// or it was stopped first), and these are its workers' recorders, empty.
struct Begun<R> {
    started: Instant,
    started_wall: SystemTime,
    held: Option<Vec<R>>,
}

/// Waits for the run's start (at once, at its instant, or when its gate opens), then makes
/// each worker's recorder and tells every worker when to start. Dropping the senders
/// without a word ends the workers before they send anything.
fn begin<R, F>(
    spec: &RunSpec,
    control: &Control,
    n: u32,
    make: &F,
    begins: Vec<SyncSender<Begin<R>>>,
) -> Begun<R>
where
    F: Fn(usize, Instant) -> R,
{
    let at = match &spec.start {
        Start::Now => Some(Instant::now()),
        Start::At(at) => Some(*at),
        Start::Gate(gate) => gate.wait_open(control),
    };
    let Some(at) = at else {
        let now = Instant::now();
        let held = (0..n as usize).map(|i| make(i, now)).collect();
        return Begun { started: now, started_wall: SystemTime::now(), held: Some(held) };
    };
    let deadline = spec.stop.deadline().map(|d| at + d);
    for (i, tx) in begins.into_iter().enumerate() {
        // A worker that already ended (an error) has dropped its receiver: its error is
        // the run's.
        let _ = tx.send(Begin { at, deadline, recorder: make(i, at) });
    }
    Begun { started: at, started_wall: wall_clock_at(at), held: None }
}

/// One worker's thread: open its connections ahead when the run starts later, wait for the
/// start, and run its loop.
fn worker<R: Recorder>(
    spec: &RunSpec,
    control: &Control,
    (i, n): (u32, u32),
    (mut poll, slot, reach): (Poll, Arc<Slot>, Arc<ReachWatch>),
    begin: Receiver<Begin<R>>,
    (backend, field_requests): (Backend, &[RequestFields]),
) -> Result<Option<WorkerEnd<R>>, EngineError> {
    let (conns, quota) = spec.share(i, n);
    let first_conn = spec.first_connection(i, n);
    // Opened ahead until the start instant, or (a gate) for at most the request timeout: a
    // connection that takes longer opens again with its first request, where a failure
    // counts. Only those the quota will use.
    let until = match (&spec.start, spec.opens_ahead()) {
        (Start::At(at), true) => Some(*at),
        (Start::Gate(_), true) => Some(Instant::now() + spec.timeout),
        _ => None,
    };
    let warm = match until {
        Some(until) => {
            let n_open = quota.map_or(conns, |q| conns.min(u32::try_from(q).unwrap_or(u32::MAX)));
            warm::open(&mut poll, spec, control, (conns, n_open, first_conn), until)
        }
        None => Warm::none(conns),
    };
    if let Start::Gate(gate) = &spec.start {
        gate.report(&warm.warmed);
    }
    let Ok(Begin { at, deadline, recorder }) = begin.recv() else {
        // No start: the run ended before it began (its recorders are made by the caller).
        return Ok(None);
    };
    let pacer = pacer(spec, i, n, at, &poll)?;
    let share = Share {
        poll,
        slot,
        reach,
        recorder,
        n_conns: conns,
        first_conn,
        rng: Rng::new(spec.seed ^ u64::from(i).wrapping_mul(0x9e37_79b9)),
        quota,
        deadline,
        pacer,
    };
    // Made before the start (17,000 connections' state is no instant's work), run from it.
    let wait = || {
        start::wait_until(at);
        match spec.start {
            Start::Now => Duration::ZERO,
            Start::At(_) | Start::Gate(_) => at.elapsed(),
        }
    };
    let (late, end) = run_on_backend(backend, spec, control, share, warm, field_requests, wait);
    end.map(|mut e| {
        e.late = late;
        Some(e)
    })
}

/// The one choice of worker, by the backend `io_choice::resolve` settled for the run, then by
/// its protocol (built once, here: link/seam.rs). `wait` waits for the start once the worker
/// is built, and says how late it began.
fn run_on_backend<R: Recorder>(
    backend: Backend,
    spec: &RunSpec,
    control: &Control,
    share: Share<R>,
    warm: Warm,
    field_requests: &[RequestFields],
    wait: impl FnOnce() -> Duration,
) -> (Duration, Result<WorkerEnd<R>, EngineError>) {
    // The ring is made on the worker's own thread, when it runs (worker.rs).
    let ring = backend == Backend::Uring;
    match &spec.wire {
        Wire::Http2(settings) => {
            let ctx = H2Ctx::new(spec, field_requests, *settings);
            let w = Worker::<_, H2Link>::new(spec, control, share, ctx, warm, ring);
            (wait(), w.run())
        }
        // On the ring, QUIC still reads and writes its UDP socket itself (GRO, GSO): the
        // ring polls it and says when it is ready (Dial::watch).
        Wire::Http3(wire) => {
            let ctx = H3Ctx::new(spec, field_requests, wire);
            let w = Worker::<_, H3Link>::new(spec, control, share, ctx, warm, ring);
            (wait(), w.run())
        }
        Wire::Http1 => {
            let ctx = H1Ctx::new(spec);
            let w = Worker::<_, H1Link>::new(spec, control, share, ctx, warm, ring);
            (wait(), w.run())
        }
    }
}

/// `at` on the wall clock, read against the monotonic clock now (a moment ahead or past).
pub fn wall_clock_at(at: Instant) -> SystemTime {
    let (now, wall) = (Instant::now(), SystemTime::now());
    let moved = if at >= now { wall.checked_add(at - now) } else { wall.checked_sub(now - at) };
    moved.unwrap_or(wall)
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
