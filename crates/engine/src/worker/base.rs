//! What a worker keeps and does whatever its connections speak: what it is given ([`Share`],
//! made by run.rs) and hands back ([`WorkerEnd`]), the share's bookkeeping (quota, deadline,
//! progress, stop) and the turn of the event loop. The worker (worker.rs) brings its
//! connections to the loop through [`Turns`]; the loop is generic over it (static dispatch:
//! the worker's calls inline), so that the loop is the one place that waits for the kernel.
//!
//! The loop's tokens: connection i is `Token(i)`; the two highest are the run's waker
//! (`control::WAKER`) and the open loop's timer (`pacer::TIMER`), each defined beside what it
//! names, so that this file, run.rs (which registers them) and warm.rs (which turns the same
//! event loop before the start) take them from below and none of them imports another's.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::{Events, Poll};

use crate::control::{Slot, WAKER};
use crate::pacer::{Pacer, TIMER};
use crate::quic::QuicStats;
use crate::reach::ReachWatch;
use crate::recorder::Answer;
use crate::rng::Rng;
use crate::thread_usage::ThreadUsage;
use crate::throttle::Throttle;
use crate::timers::Timers;
use crate::transport::Transport;
use crate::warm::Warm;
use crate::{Control, EngineError, PerConnection, Recorder, RunSpec, TlsInfo};

/// How often progress is published for `Control::finished`.
const PUBLISH_EVERY: u64 = 16;

/// Large reads: on 1 MiB bodies the read size decides the client's cost (baseline.md:
/// ab's 8 KiB reads cost it x2.6 the floor).
pub(crate) const READ_BUFFER: usize = 256 * 1024;

/// What one worker is given: its event loop, its part of the run, and its recorder.
pub(crate) struct Share<R> {
    pub(crate) poll: Poll,
    pub(crate) slot: Arc<Slot>,
    /// Whether the run has reached its target, shared by its workers.
    pub(crate) reach: Arc<ReachWatch>,
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

/// What a worker hands back when its loop ends.
pub(crate) struct WorkerEnd<R> {
    pub(crate) recorder: R,
    pub(crate) last_activity: Instant,
    pub(crate) interrupted: bool,
    pub(crate) tls_info: Option<TlsInfo>,
    pub(crate) usage: ThreadUsage,
    /// HTTP/3 runs: what QUIC did on this worker's connections.
    pub(crate) quic: Option<QuicStats>,
    /// How long after the run's start instant this worker began (zero without one).
    pub(crate) late: Duration,
}

/// A worker's share of the run and where it stands, apart from its connections.
pub(crate) struct Base<'a, R> {
    pub(crate) spec: &'a RunSpec,
    pub(crate) control: &'a Control,
    pub(crate) poll: Poll,
    pub(crate) slot: Arc<Slot>,
    /// Whether any connection of the run has connected, and whether the run gave up.
    pub(crate) reach: Arc<ReachWatch>,
    /// Connections waiting to be (re)opened (closed loop).
    pub(crate) to_open: Vec<usize>,
    /// Open loop: the schedule, and the closed connections waiting for it.
    pub(crate) pacer: Option<Pacer>,
    pub(crate) free: Vec<usize>,
    /// Per-connection timers: think time, paced reads, connect back-off, QUIC's timers.
    pub(crate) timers: Timers,
    /// From the schedule: whether connections are kept alive and for how many requests.
    pub(crate) keep_alive: bool,
    pub(crate) per_connection: Option<PerConnection>,
    /// The run-wide number of this worker's first connection.
    pub(crate) first_conn: u32,
    /// The run's choices: which request, how many per connection, how long to think.
    pub(crate) rng: Rng,
    pub(crate) recorder: R,
    /// Requests this worker may start; None: until the deadline.
    pub(crate) quota: Option<u64>,
    pub(crate) started: u64,
    pub(crate) finished: u64,
    pub(crate) deadline: Option<Instant>,
    /// Index into the target's addresses; moves on while no connection has succeeded.
    pub(crate) addr: usize,
    /// Whether one of this worker's connections has connected ([`Base::connected`]).
    pub(crate) any_connected: bool,
    pub(crate) tls_info: Option<TlsInfo>,
    pub(crate) last_activity: Instant,
    pub(crate) stop: bool,
    pub(crate) interrupted: bool,
    /// The run gave up on its target (reach.rs): the worker stopped, not interrupted.
    pub(crate) gave_up: bool,
}

impl<'a, R: Recorder> Base<'a, R> {
    /// The base of a worker given `share`, and its number of connections. A closed loop
    /// opens every connection at once; an open loop keeps them free for the schedule.
    pub(crate) fn new(spec: &'a RunSpec, control: &'a Control, share: Share<R>) -> (Self, u32) {
        let Share { poll, slot, reach, recorder, n_conns, first_conn, rng, quota, deadline, pacer } =
            share;
        let all: Vec<usize> = (0..n_conns as usize).collect();
        let (to_open, free) = if pacer.is_some() { (Vec::new(), all) } else { (all, Vec::new()) };
        let base = Base {
            spec,
            control,
            poll,
            slot,
            reach,
            to_open,
            pacer,
            free,
            timers: Timers::new(n_conns as usize),
            keep_alive: spec.keep_alive(),
            per_connection: spec.schedule.reuse().per_connection(),
            first_conn,
            rng,
            recorder,
            quota,
            started: 0,
            finished: 0,
            deadline,
            addr: 0,
            any_connected: false,
            tls_info: None,
            last_activity: Instant::now(),
            stop: false,
            interrupted: false,
            gave_up: false,
        };
        (base, n_conns)
    }

    /// Takes one request from the quota; false when the share is used up or the run stops.
    pub(crate) fn take_request(&mut self) -> bool {
        if self.stop {
            return false;
        }
        match self.quota {
            Some(q) if self.started >= q => false,
            _ => {
                self.started += 1;
                true
            }
        }
    }

    /// How many requests a newly opened kept-alive connection may carry: a draw from
    /// `--requests-per-conn`'s range, or no limit.
    pub(crate) fn connection_limit(&mut self) -> u32 {
        match self.per_connection {
            Some(range) => self.rng.between(range.lo().get(), range.hi().get()),
            None => u32::MAX,
        }
    }

    /// Hands each connection opened before the start (warm.rs) to `take(i, transport, limit,
    /// receive cap)`, out of `n`: the target's address they reached becomes the worker's, the
    /// first one's TLS details the run's, and the connections taken leave the lists of those
    /// still to open or free.
    pub(crate) fn adopt(
        &mut self,
        warm: Warm,
        n: usize,
        now: Instant,
        mut take: impl FnMut(usize, Transport, u32, Option<Throttle>),
    ) {
        if let Some(addr) = warm.addr {
            self.addr = addr;
            self.connected();
        }
        let mut adopted = vec![false; n];
        for (i, t) in warm.conns.into_iter().enumerate() {
            let Some(t) = t else { continue };
            if i >= n {
                break;
            }
            if self.tls_info.is_none() {
                self.tls_info = t.tls_info();
            }
            let limit = self.connection_limit();
            take(i, t, limit, self.spec.receive_rate.map(|r| Throttle::new(r, now)));
            adopted[i] = true;
        }
        let waiting = |i: &usize| !adopted.get(*i).copied().unwrap_or(false);
        self.free.retain(waiting);
        self.to_open.retain(waiting);
    }

    /// Counts a request's end, publishes progress now and then, and stops the run when the
    /// recorder says so.
    pub(crate) fn after_outcome(&mut self, answer: Answer) {
        self.finished += 1;
        if self.finished % PUBLISH_EVERY == 0 {
            self.slot.finished.store(self.finished, Ordering::Relaxed);
        }
        if answer == Answer::Abort {
            self.stop = true;
            self.control.stop();
        }
    }

    /// One of this worker's connections has connected (TCP's handshake, or QUIC's): the
    /// worker keeps to the address that answered, and the run will not give up.
    pub(crate) fn connected(&mut self) {
        if !self.any_connected {
            self.any_connected = true;
            self.reach.connected();
        }
    }

    /// A failed connect has been recorded (with its OS error, if any): while no connection of
    /// the run has connected, it counts towards the run's first attempts, and the last of them
    /// stops the worker. A failure of herd's own side (no descriptor, no local port, no
    /// memory) says nothing of the target and is not counted: the run goes on, counting it,
    /// and the client verdict names it.
    pub(crate) fn connect_failed(&mut self, os_error: Option<i32>) {
        const LOCAL: [i32; 6] = [
            libc::EMFILE,
            libc::ENFILE,
            libc::EADDRNOTAVAIL,
            libc::EADDRINUSE,
            libc::ENOBUFS,
            libc::ENOMEM,
        ];
        if os_error.is_some_and(|e| LOCAL.contains(&e)) {
            return;
        }
        if !self.any_connected && self.reach.connect_failed() {
            self.give_up();
        }
    }

    /// Whether another worker gave the run up: then this one stops too (its requests in
    /// flight, still connecting to nothing, are abandoned uncounted, as at a deadline).
    fn stopped_as_given_up(&mut self) -> bool {
        if !self.reach.gave_up() {
            return false;
        }
        self.give_up();
        true
    }

    /// [`Base::stopped_as_given_up`] before a new connection, until one of this worker's has
    /// connected (an atomic load, never on a kept connection's path; the periodic check asks
    /// it of every worker).
    pub(crate) fn given_up_elsewhere(&mut self) -> bool {
        !self.any_connected && self.stopped_as_given_up()
    }

    /// Stops this worker because the run gave up on its target.
    fn give_up(&mut self) {
        self.stop = true;
        self.gave_up = true;
    }

    /// What the worker hands back, its connections closed.
    pub(crate) fn end(self, usage: ThreadUsage, quic: Option<QuicStats>) -> WorkerEnd<R> {
        self.slot.finished.store(self.finished, Ordering::Relaxed);
        WorkerEnd {
            recorder: self.recorder,
            last_activity: self.last_activity,
            // A recorder's abort stops the run as Ctrl-C does; giving up does not.
            interrupted: self.interrupted || (self.stop && !self.gave_up),
            tls_info: self.tls_info,
            usage,
            quic,
            late: Duration::ZERO,
        }
    }
}

/// What a worker's connections answer to the loop.
pub(crate) trait Turns<'a, R: Recorder> {
    fn base(&mut self) -> &mut Base<'a, R>;
    fn conns(&self) -> usize;
    /// How many connections are open (connecting or connected): a scan, at the periodic
    /// check only.
    fn open_conns(&self) -> usize;
    /// Closed loop: opens the connections (and re-sends the requests) waiting for it.
    fn open_pending(&mut self);
    /// Open loop: hands every due request to a connection that can take it.
    fn dispatch(&mut self, now: Instant);
    /// Open loop: whether a due request would find a connection now.
    fn can_send(&self) -> bool;
    /// Work that must not wait for an event (a connection or request queued to go again).
    fn queued(&self) -> bool;
    /// Whether a request is queued or in flight; asked only once the share is used up, so
    /// its scan of the connections stays off the per-turn path.
    fn busy(&self) -> bool;
    fn on_event(&mut self, i: usize, ev: &Event, buf: &mut [u8]);
    /// Runs the timers due at `now`.
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]);
    /// Ends the requests past their timeout.
    fn expire(&mut self, now: Instant);
}

/// Turns the loop until the share is done, the deadline passes, the run stops or Ctrl-C.
pub(crate) fn run<'a, R: Recorder, W: Turns<'a, R>>(w: &mut W) -> Result<(), EngineError> {
    let mut events = Events::with_capacity(w.conns().clamp(16, 1024));
    let mut buf = vec![0u8; READ_BUFFER].into_boxed_slice();
    let mut clock = Clock::new(w);
    while let Some(wait) = before_wait(w, &clock, Pacing::Timerfd)? {
        match w.base().poll.poll(&mut events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(EngineError::Poll(e)),
        }
        for ev in events.iter() {
            let t = ev.token();
            if t == WAKER {
                continue;
            }
            if t == TIMER {
                if let Some(p) = &mut w.base().pacer {
                    p.fired();
                }
                continue;
            }
            let i = t.0;
            if i >= w.conns() {
                continue;
            }
            w.on_event(i, ev, &mut buf);
            if w.base().stop {
                break;
            }
        }
        if !after_wait(w, &mut clock, &mut buf) {
            break;
        }
    }
    end(w);
    Ok(())
}

/// When the loop next looks beyond its waits: the periodic check (timeouts, the recorder's
/// clock, a run given up).
pub(crate) struct Clock {
    check_every: Duration,
    next_check: Instant,
}

impl Clock {
    pub(crate) fn new<'a, R: Recorder, W: Turns<'a, R>>(w: &mut W) -> Clock {
        let check_every = (w.base().spec.timeout / 10)
            .clamp(Duration::from_millis(1), Duration::from_millis(100));
        Clock { check_every, next_check: Instant::now() + check_every }
    }
}

/// How an open loop's schedule wakes the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pacing {
    /// Its timerfd, in the poll (epoll).
    Timerfd,
    /// The wait ends when the next request is due (io_uring: the turn's timeout).
    Wait,
}

/// The work of a turn before its wait: connections to open, due requests, and whether the
/// loop is over (None). Otherwise how long the wait may last: until the next timer, check,
/// deadline (or due request, `Pacing::Wait`), and not at all when work is queued.
pub(crate) fn before_wait<'a, R: Recorder, W: Turns<'a, R>>(
    w: &mut W,
    clock: &Clock,
    pacing: Pacing,
) -> Result<Option<Duration>, EngineError> {
    w.open_pending();
    // Only an open loop has a schedule to keep: no clock read per turn otherwise.
    if w.base().pacer.is_some() {
        w.dispatch(Instant::now());
    }
    let base = w.base();
    if base.stop {
        return Ok(None);
    }
    if base.control.is_stopped() {
        base.interrupted = true;
        return Ok(None);
    }
    // Only once the share is used up can every connection be idle: checking the quota
    // first keeps the scan of the connections off the per-turn path.
    let share_used = base.quota.is_some_and(|q| base.started >= q);
    if share_used && !w.queued() && !w.busy() {
        return Ok(None); // every request of this worker's share has finished
    }
    let base = w.base();
    let now = Instant::now();
    if base.deadline.is_some_and(|d| now >= d) {
        return Ok(None);
    }
    let mut wait = clock.next_check.saturating_duration_since(now);
    if let Some(d) = base.deadline {
        wait = wait.min(d.saturating_duration_since(now));
    }
    if let Some(t) = base.timers.next() {
        wait = wait.min(t.saturating_duration_since(now));
    }
    let quota_left = base.quota.is_none_or(|q| base.started < q);
    if w.queued() {
        wait = Duration::ZERO;
    }
    // Open loop: wake when the next request is due, if a connection can take it.
    if quota_left && w.base().pacer.is_some() && w.can_send() {
        if let Some(p) = &mut w.base().pacer {
            match pacing {
                Pacing::Timerfd => p.arm(now).map_err(EngineError::Timer)?,
                Pacing::Wait => wait = wait.min(p.next_due().saturating_duration_since(now)),
            }
        }
    }
    Ok(Some(wait))
}

/// The work of a turn after its wait: due timers, and now and then the periodic check.
/// False: the loop is over (another worker gave the run up).
pub(crate) fn after_wait<'a, R: Recorder, W: Turns<'a, R>>(
    w: &mut W,
    clock: &mut Clock,
    buf: &mut [u8],
) -> bool {
    let now = Instant::now();
    w.fire_timers(now, buf);
    if now >= clock.next_check {
        if w.base().stopped_as_given_up() {
            return false;
        }
        w.expire(now);
        // The recorder's clock (Recorder::tick): once per check, off the request path.
        let open = w.open_conns();
        w.base().recorder.open_connections(open);
        w.base().recorder.tick(now);
        clock.next_check = now + clock.check_every;
    }
    true
}

/// The loop is over: when the run's activity ended.
pub(crate) fn end<'a, R: Recorder, W: Turns<'a, R>>(w: &mut W) {
    let base = w.base();
    if let Some(d) = base.deadline {
        if !base.stop && !base.interrupted && Instant::now() >= d {
            base.last_activity = base.last_activity.max(d);
        }
    }
    if base.interrupted {
        base.last_activity = Instant::now();
    }
}
