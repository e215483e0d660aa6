//! The worker: one thread, one mio event loop, a share of the connections and requests, and
//! the one question of who starts the next request.
//!
//! Each worker runs the same loop whatever the load: open connections, write the prebuilt
//! request, read and frame the response, report the outcome to its recorder, and start
//! the next request (on the same connection when both sides keep it alive). Sockets are
//! registered once, edge-triggered, for reading and writing; a read shorter than the
//! buffer means the socket is drained, so a keep-alive request costs one write, one read
//! and a share of epoll_wait, as the floor client in bench/ does.
//!
//! Connections to (re)open are queued rather than opened recursively, so a server that
//! refuses every connection costs a loop turn per attempt, never stack depth.
//!
//! The schedule ([`Schedule`]) changes one thing: who starts the next request. In a closed
//! loop a connection starts its next request as soon as the last one ends (or after its
//! think time). In an open loop ([`Schedule::Rate`]) a finished connection waits (idle if
//! kept alive, free if closed) and the worker's pacer (pacer.rs) hands each due request to a
//! waiting connection, with its due time as the request's intended start; if none is
//! waiting, the request stays due until one is. It is the same loop, the same connection
//! transitions (conn.rs) and the same recorder calls.
//!
//! What a socket's readiness means for its connection is in worker/events.rs; what happens
//! when a request ends (recording, and what the connection does next) in worker/outcome.rs.

mod events;
pub(crate) mod outcome;

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use herd_stats::FailureKind;
use mio::{Events, Interest, Poll, Token};

use crate::conn::{Conn, State};
use crate::control::Slot;
use crate::pacer::Pacer;
use crate::rng::Rng;
use crate::run::Share;
use crate::session::{Exchange, Session};
use crate::socket;
use crate::thread_usage::{ThreadClock, ThreadUsage};
use crate::throttle::Throttle;
use crate::timers::Timers;
use crate::{Control, EngineError, PerConnection, Recorder, RunSpec, Schedule, Think, TlsInfo};

pub(crate) const WAKER: Token = Token(usize::MAX);
/// The pacer's timer (open loop only).
pub(crate) const TIMER: Token = Token(usize::MAX - 1);
/// Large reads: on 1 MiB bodies the read size decides the client's cost (baseline.md:
/// ab's 8 KiB reads cost it x2.6 the floor).
pub(crate) const READ_BUFFER: usize = 256 * 1024;

/// What a worker hands back when its loop ends.
pub(crate) struct WorkerEnd<R> {
    pub(crate) recorder: R,
    pub(crate) last_activity: Instant,
    pub(crate) interrupted: bool,
    pub(crate) tls_info: Option<TlsInfo>,
    pub(crate) usage: ThreadUsage,
    /// HTTP/3 runs: what QUIC did on this worker's connections.
    pub(crate) quic: Option<crate::quic::QuicStats>,
}

pub(crate) struct Worker<'a, R> {
    spec: &'a RunSpec,
    control: &'a Control,
    poll: Poll,
    slot: Arc<Slot>,
    conns: Vec<Conn>,
    /// Connections waiting to be (re)opened (closed loop).
    to_open: Vec<usize>,
    /// Requests to re-send at once on a new connection, uncounted (the keep-alive race).
    retry: Vec<usize>,
    /// Open loop: the schedule, kept-alive connections waiting for it, and closed ones.
    pacer: Option<Pacer>,
    idle: Vec<usize>,
    free: Vec<usize>,
    /// Per-connection timers: think time, paced reads, connect back-off.
    timers: Timers,
    /// From the schedule, read per request: whether connections are kept alive and for how
    /// many requests, and the closed loop's think time.
    keep_alive: bool,
    per_connection: Option<PerConnection>,
    think: Option<Think>,
    first_conn: u32,
    /// The run's choices: which request, how many per connection, how long to think.
    rng: Rng,
    recorder: R,
    /// Requests this worker may start; None: until the deadline.
    quota: Option<u64>,
    started: u64,
    finished: u64,
    deadline: Option<Instant>,
    /// Index into the target's addresses; moves on while no connection has succeeded.
    addr: usize,
    any_connected: bool,
    /// Ask the parser for the Server header until one response has delivered it.
    want_server: bool,
    tls_info: Option<TlsInfo>,
    last_activity: Instant,
    stop: bool,
    interrupted: bool,
}

/// How a request opening a new connection is timed.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// A new request, due now (closed loop).
    Now,
    /// A new request due at the schedule's time, ready at the second (open loop).
    Due(Instant, Instant),
    /// The same request again after the keep-alive race: its request and times stay.
    Retry,
}

impl<'a, R: Recorder> Worker<'a, R> {
    pub(crate) fn new(spec: &'a RunSpec, control: &'a Control, share: Share<R>) -> Self {
        let Share { poll, slot, recorder, n_conns, first_conn, rng, quota, deadline, pacer } =
            share;
        let now = Instant::now();
        let all: Vec<usize> = (0..n_conns as usize).collect();
        let (to_open, free) = if pacer.is_some() { (Vec::new(), all) } else { (all, Vec::new()) };
        let (think, depth) = match spec.schedule {
            Schedule::Closed { think, .. } => (think, 1),
            Schedule::Pipelined { depth, .. } => (None, depth.get()),
            Schedule::Rate { .. } => (None, 1),
        };
        let conns = (0..n_conns).map(|_| Conn::new(Session::http1(spec.limits, depth, now), now));
        Worker {
            spec,
            control,
            poll,
            slot,
            conns: conns.collect(),
            to_open,
            retry: Vec::new(),
            pacer,
            idle: Vec::new(),
            free,
            timers: Timers::new(n_conns as usize),
            keep_alive: spec.keep_alive(),
            per_connection: spec.schedule.reuse().per_connection(),
            think,
            first_conn,
            rng,
            recorder,
            quota,
            started: 0,
            finished: 0,
            deadline,
            addr: 0,
            any_connected: false,
            want_server: true,
            tls_info: None,
            last_activity: now,
            stop: false,
            interrupted: false,
        }
    }

    pub(crate) fn run(mut self) -> Result<WorkerEnd<R>, EngineError> {
        let clock = ThreadClock::start();
        let mut events = Events::with_capacity(self.conns.len().clamp(16, 1024));
        let mut buf = vec![0u8; READ_BUFFER].into_boxed_slice();
        let check_every =
            (self.spec.timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
        let mut next_check = Instant::now() + check_every;

        loop {
            self.open_pending();
            // Only an open loop has a schedule to keep: no clock read per turn otherwise.
            if self.pacer.is_some() {
                self.dispatch(Instant::now());
            }
            if self.stop {
                break;
            }
            if self.control.is_stopped() {
                self.interrupted = true;
                break;
            }
            // Only once the share is used up can every connection be idle: checking the
            // quota first keeps this O(connections) scan off the per-turn path.
            let share_used = self.quota.is_some_and(|q| self.started >= q);
            if share_used
                && self.to_open.is_empty()
                && self.retry.is_empty()
                && !self.conns.iter().any(Conn::is_busy)
            {
                break; // every request of this worker's share has finished
            }
            let now = Instant::now();
            if self.deadline.is_some_and(|d| now >= d) {
                break;
            }
            let mut wait = next_check.saturating_duration_since(now);
            if let Some(d) = self.deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            if let Some(t) = self.timers.next() {
                wait = wait.min(t.saturating_duration_since(now));
            }
            if !self.to_open.is_empty() || !self.retry.is_empty() {
                wait = Duration::ZERO;
            }
            self.arm_pacer(now)?;
            match self.poll.poll(&mut events, Some(wait)) {
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
                    if let Some(p) = &mut self.pacer {
                        p.fired();
                    }
                    continue;
                }
                let i = t.0;
                if i >= self.conns.len() {
                    continue;
                }
                self.on_event(
                    i,
                    ev.is_readable(),
                    ev.is_writable(),
                    ev.is_read_closed(),
                    ev.is_error(),
                    &mut buf,
                );
                if self.stop {
                    break;
                }
            }
            let now = Instant::now();
            self.fire_timers(now, &mut buf);
            if now >= next_check {
                self.expire(now);
                // The recorder's clock (Recorder::tick): once per check, off the request path.
                self.recorder.tick(now);
                next_check = now + check_every;
            }
        }
        if let Some(d) = self.deadline {
            if !self.stop && !self.interrupted && Instant::now() >= d {
                self.last_activity = self.last_activity.max(d);
            }
        }
        if self.interrupted {
            self.last_activity = Instant::now();
        }
        self.slot.finished.store(self.finished, Ordering::Relaxed);
        for c in &mut self.conns {
            c.close();
        }
        Ok(WorkerEnd {
            recorder: self.recorder,
            last_activity: self.last_activity,
            interrupted: self.interrupted || self.stop,
            tls_info: self.tls_info,
            usage: clock.stop(),
            quic: None,
        })
    }

    /// Takes one request from the quota; false when the share is used up.
    fn take_request(&mut self) -> bool {
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

    fn open_pending(&mut self) {
        while let Some(i) = self.retry.pop() {
            if self.stop {
                return;
            }
            // The same request again: its due time stays, and it was counted when first taken.
            self.open(i, Start::Retry);
        }
        // At most the connections queued now: one that fails at once (no free local port,
        // refused) is queued again for the next turn, never looped on here, so the deadline
        // and Ctrl-C are always checked.
        for _ in 0..self.to_open.len() {
            let Some(i) = self.to_open.pop() else { break };
            if self.stop {
                return;
            }
            if !self.take_request() {
                self.close(i);
                continue;
            }
            self.open(i, Start::Now);
        }
    }

    /// Open loop: hands every request that is due to a waiting connection, oldest first.
    fn dispatch(&mut self, now: Instant) {
        loop {
            let Some(due) = self.pacer.as_ref().map(Pacer::next_due) else { return };
            if due > now || self.stop {
                return;
            }
            let Some(i) = self.waiting_conn() else { return };
            if !self.take_request() {
                self.free.push(i);
                return;
            }
            if let Some(p) = &mut self.pacer {
                p.advance();
            }
            // The client's own lag counts from when both the request and a connection
            // were ready; before that the request waited for the server to free one.
            let ready = due.max(self.conns[i].waiting_since());
            if self.conns[i].state() == State::Idle {
                self.start_on_open(i, now, Some((due, ready)));
            } else {
                self.open(i, Start::Due(due, ready));
            }
        }
    }

    /// A kept-alive connection waiting for the schedule, or else a closed one.
    fn waiting_conn(&mut self) -> Option<usize> {
        while let Some(i) = self.idle.pop() {
            // The server may have closed it since (on_event moved it to `free`).
            if self.conns[i].state() == State::Idle {
                return Some(i);
            }
        }
        self.free.pop()
    }

    /// Open loop: wake when the next request is due, if a connection can take it.
    fn arm_pacer(&mut self, now: Instant) -> Result<(), EngineError> {
        let quota_left = self.quota.is_none_or(|q| self.started < q);
        let can_send = !self.idle.is_empty() || !self.free.is_empty();
        match &mut self.pacer {
            Some(p) if quota_left && can_send => p.arm(now).map_err(EngineError::Timer),
            _ => Ok(()),
        }
    }

    /// A connection that finished its request, closed, goes back to the schedule (open loop),
    /// to its think time, or straight to reopening (closed loop).
    fn release(&mut self, i: usize) {
        if self.pacer.is_some() {
            self.conns[i].free(Instant::now());
            self.free.push(i);
        } else if self.think.is_some() && !self.stop {
            self.think(i);
        } else {
            self.to_open.push(i);
        }
    }

    /// Closed loop: the connection pauses before its next request (the socket, if still
    /// open, stays open).
    fn think(&mut self, i: usize) {
        let pause = match self.think {
            Some(Think::Fixed(d)) => d,
            Some(Think::Exponential(mean)) => {
                Duration::from_secs_f64(self.rng.exponential(mean.as_secs_f64()).min(86_400.0))
            }
            None => Duration::ZERO,
        };
        self.conns[i].think();
        self.timers.set(i, Instant::now() + pause);
    }

    /// Runs the timers that are due: a thinking connection sends its next request, a paced
    /// one reads again.
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        while !self.stop {
            let Some(i) = self.timers.pop_due(now) else { return };
            match self.conns[i].state() {
                State::Thinking if self.conns[i].has_socket() => {
                    if self.take_request() {
                        self.start_on_open(i, now, None);
                    } else {
                        self.close(i);
                    }
                }
                State::Thinking => {
                    self.close(i);
                    self.to_open.push(i);
                }
                State::Writing | State::Reading | State::AwaitClose => {
                    self.on_readable(i, false, buf);
                }
                _ => {}
            }
        }
    }

    /// Starts the next request on connection `i`, open and free, at `now` (`due`: the open
    /// loop's intended and ready times). The one place a request starts on a connection
    /// that is already open: after the previous response (closed loop), after think time,
    /// or when the schedule hands it a due request (open loop).
    fn start_on_open(&mut self, i: usize, now: Instant, due: Option<(Instant, Instant)>) {
        self.prepare(i, now);
        if let Some((intended, ready)) = due {
            self.conns[i].due(intended, ready);
        }
        self.conns[i].ready(now);
        self.write_request(i);
    }

    /// Chooses connection `i`'s next request and hands it to its session, timed from `now`
    /// (the open loop then sets when it was due); with pipelining, takes the rest of the batch
    /// from the quota too.
    fn prepare(&mut self, i: usize, now: Instant) {
        let spec = self.spec;
        let req = spec.workload.pick(&mut self.rng);
        let c = &mut self.conns[i];
        let ex = Exchange::new(req, c.is_last(self.keep_alive, 0), now);
        c.submit(ex, &spec.workload, self.want_server);
        let streams = c.max_concurrent_streams();
        if streams > 1 {
            self.fill_batch(i, ex, now, streams);
        }
    }

    /// Pipelining: up to `streams − 1` more requests from the quota behind `first`, stopping
    /// at the connection's last. They share its timing.
    fn fill_batch(&mut self, i: usize, first: Exchange, now: Instant, streams: u32) {
        let spec = self.spec;
        let mut last = first.last();
        let mut ahead = 1u32;
        while ahead < streams && !last && self.take_request() {
            let req = spec.workload.pick(&mut self.rng);
            last = self.conns[i].is_last(self.keep_alive, ahead);
            let ex = Exchange::new(req, last, now);
            self.conns[i].submit(ex, &spec.workload, self.want_server);
            ahead += 1;
        }
    }

    /// Opens connection `i` for a request already taken from the quota.
    fn open(&mut self, i: usize, start: Start) {
        let now = Instant::now();
        let spec = self.spec;
        let limit = match self.per_connection {
            Some(range) => self.rng.between(range.lo().get(), range.hi().get()),
            None => u32::MAX,
        };
        self.timers.cancel(i);
        self.conns[i].reopen(limit, spec.receive_rate.map(|r| Throttle::new(r, now)));
        match start {
            Start::Now => self.prepare(i, now),
            Start::Due(intended, ready) => {
                self.prepare(i, now);
                self.conns[i].due(intended, ready);
            }
            Start::Retry => {
                // Reopening kept the request's record: the same request, its due times kept.
                let c = &mut self.conns[i];
                let ex = c.current().again(c.is_last(self.keep_alive, 0), now);
                c.submit(ex, &spec.workload, self.want_server);
            }
        }
        let connecting = match &spec.target.unix {
            Some(path) => socket::connect_unix(path),
            None => {
                // run_all refused an empty address list; `addr` never passes the last one.
                let addrs = &spec.target.addrs;
                let Some(&addr) = addrs.get(self.addr).or(addrs.last()) else { return };
                let bind = bind_for(&spec.socket.bind, self.first_conn as usize + i);
                socket::connect_tcp(addr, spec, bind)
            }
        };
        match connecting {
            Ok((mut sock, in_progress)) => {
                let reg = self.poll.registry().register(
                    &mut sock,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                );
                if let Err(e) = reg {
                    self.fail(i, FailureKind::Connect, Some(e), false);
                    return;
                }
                self.conns[i].connecting(sock);
                if !in_progress {
                    self.on_connected(i);
                }
            }
            Err(e) => self.connect_failed(i, e),
        }
    }

    fn connect_failed(&mut self, i: usize, e: io::Error) {
        // Like ab, move to the next resolved address while none has answered yet; the
        // request is retried there and not counted as failed.
        if !self.any_connected && self.addr + 1 < self.spec.target.addrs.len() {
            self.addr += 1;
            self.close(i);
            self.retry.push(i);
            return;
        }
        self.fail(i, FailureKind::Connect, Some(e), false);
    }

    /// Closes connection `i` and forgets its timer.
    fn close(&mut self, i: usize) {
        self.conns[i].close();
        self.timers.cancel(i);
    }
}

/// The source address of run-wide connection `k`.
pub(crate) fn bind_for(bind: &[std::net::IpAddr], k: usize) -> Option<std::net::IpAddr> {
    match bind.len() {
        0 => None,
        n => bind.get(k % n).copied(),
    }
}
