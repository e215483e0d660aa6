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
//! when a request ends (recording, and what the connection does next) in worker/outcome.rs;
//! the loop itself and the share's bookkeeping, the same for the multiplexed worker, in
//! worker/base.rs.

pub(crate) mod base;
mod events;
pub(crate) mod outcome;

use std::io;
use std::time::{Duration, Instant};

use herd_stats::FailureKind;
use mio::event::Event;
use mio::{Interest, Token};

use self::base::{Base, Share, Turns, WorkerEnd};
use crate::conn::{Conn, State};
use crate::pacer::Pacer;
use crate::session::{Exchange, Http1};
use crate::socket::{self, Stream};
use crate::thread_usage::ThreadClock;
use crate::throttle::Throttle;
use crate::warm::Warm;
use crate::{Control, EngineError, Recorder, RunSpec, Schedule, Think};

pub(crate) struct Worker<'a, R> {
    base: Base<'a, R>,
    conns: Vec<Conn>,
    /// Requests to re-send at once on a new connection, uncounted (the keep-alive race).
    retry: Vec<usize>,
    /// Open loop: kept-alive connections waiting for the schedule.
    idle: Vec<usize>,
    /// Closed loop: connections opened before the start, each to start its first request.
    opened: Vec<usize>,
    /// The closed loop's think time.
    think: Option<Think>,
    /// Ask the parser for the Server header until one response has delivered it.
    want_server: bool,
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
    /// A worker for `share`, with the connections `warm` opened before the start (warm.rs).
    pub(crate) fn new(
        spec: &'a RunSpec,
        control: &'a Control,
        share: Share<R>,
        warm: Warm,
    ) -> Self {
        let (base, n_conns) = Base::new(spec, control, share);
        let now = base.last_activity;
        let (think, depth) = match spec.schedule {
            Schedule::Closed { think, .. } => (think, 1),
            Schedule::Pipelined { depth, .. } => (None, depth.get()),
            Schedule::Rate { .. } => (None, 1),
        };
        let conns = (0..n_conns).map(|_| Conn::new(Http1::new(spec.limits, depth, now), now));
        let mut w = Worker {
            base,
            conns: conns.collect(),
            retry: Vec::new(),
            idle: Vec::new(),
            opened: Vec::new(),
            think,
            want_server: true,
        };
        w.adopt(warm, now);
        w
    }

    /// Takes the connections opened before the start: open and idle, each waiting for its
    /// first request (the schedule's, in an open loop; at once, in a closed one).
    fn adopt(&mut self, warm: Warm, now: Instant) {
        let paced = self.base.pacer.is_some();
        let (conns, idle, opened) = (&mut self.conns, &mut self.idle, &mut self.opened);
        self.base.adopt(warm, conns.len(), now, |i, t, limit, throttle| {
            conns[i].adopt(t, limit, throttle, now);
            if paced {
                idle.push(i);
            } else {
                opened.push(i);
            }
        });
    }

    pub(crate) fn run(mut self) -> Result<WorkerEnd<R>, EngineError> {
        let clock = ThreadClock::start();
        base::run(&mut self)?;
        for c in &mut self.conns {
            c.close();
        }
        Ok(self.base.end(clock.stop(), None))
    }

    fn open_pending(&mut self) {
        while let Some(i) = self.opened.pop() {
            if self.base.stop {
                return;
            }
            if self.conns[i].state() != State::Idle {
                self.base.to_open.push(i);
            } else if self.base.take_request() {
                self.start_on_open(i, Instant::now(), None);
            } else {
                self.close(i);
            }
        }
        while let Some(i) = self.retry.pop() {
            if self.base.stop {
                return;
            }
            // The same request again: its due time stays, and it was counted when first taken.
            self.open(i, Start::Retry);
        }
        // At most the connections queued now: one that fails at once (no free local port,
        // refused) is queued again for the next turn, never looped on here, so the deadline
        // and Ctrl-C are always checked.
        for _ in 0..self.base.to_open.len() {
            let Some(i) = self.base.to_open.pop() else { break };
            if self.base.stop {
                return;
            }
            if !self.base.take_request() {
                self.close(i);
                continue;
            }
            self.open(i, Start::Now);
        }
    }

    /// Open loop: hands every request that is due to a waiting connection, oldest first.
    fn dispatch(&mut self, now: Instant) {
        loop {
            let Some(due) = self.base.pacer.as_ref().map(Pacer::next_due) else { return };
            if due > now || self.base.stop {
                return;
            }
            let Some(i) = self.waiting_conn() else { return };
            if !self.base.take_request() {
                self.base.free.push(i);
                return;
            }
            if let Some(p) = &mut self.base.pacer {
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
        self.base.free.pop()
    }

    /// A connection that finished its request, closed, goes back to the schedule (open loop),
    /// to its think time, or straight to reopening (closed loop).
    fn release(&mut self, i: usize) {
        if self.base.pacer.is_some() {
            self.conns[i].free(Instant::now());
            self.base.free.push(i);
        } else if self.think.is_some() && !self.base.stop {
            self.think(i);
        } else {
            self.base.to_open.push(i);
        }
    }

    /// Closed loop: the connection pauses before its next request (the socket, if still
    /// open, stays open).
    fn think(&mut self, i: usize) {
        let pause = match self.think {
            Some(Think::Fixed(d)) => d,
            Some(Think::Exponential(mean)) => {
                Duration::from_secs_f64(self.base.rng.exponential(mean.as_secs_f64()).min(86_400.0))
            }
            None => Duration::ZERO,
        };
        self.conns[i].think();
        self.base.timers.set(i, Instant::now() + pause);
    }

    /// Runs the timers that are due: a thinking connection sends its next request, a paced
    /// one reads again.
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        while !self.base.stop {
            let Some(i) = self.base.timers.pop_due(now) else { return };
            match self.conns[i].state() {
                State::Thinking if self.conns[i].has_socket() => {
                    if self.base.take_request() {
                        self.start_on_open(i, now, None);
                    } else {
                        self.close(i);
                    }
                }
                State::Thinking => {
                    self.close(i);
                    self.base.to_open.push(i);
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

    /// Chooses connection `i`'s next request and hands it to its connection, timed from `now`
    /// (the open loop then sets when it was due); with pipelining, takes the rest of the batch
    /// from the quota too.
    fn prepare(&mut self, i: usize, now: Instant) {
        let spec = self.base.spec;
        let req = spec.workload.pick(&mut self.base.rng);
        let c = &mut self.conns[i];
        let ex = Exchange::new(req, c.is_last(self.base.keep_alive, 0), now);
        c.submit(ex, &spec.workload, self.want_server);
        let streams = c.max_concurrent_streams();
        if streams > 1 {
            self.fill_batch(i, ex, now, streams);
        }
    }

    /// Pipelining: up to `streams − 1` more requests from the quota behind `first`, stopping
    /// at the connection's last. They share its timing.
    fn fill_batch(&mut self, i: usize, first: Exchange, now: Instant, streams: u32) {
        let spec = self.base.spec;
        let mut last = first.last();
        let mut ahead = 1u32;
        while ahead < streams && !last && self.base.take_request() {
            let req = spec.workload.pick(&mut self.base.rng);
            last = self.conns[i].is_last(self.base.keep_alive, ahead);
            let ex = Exchange::new(req, last, now);
            self.conns[i].submit(ex, &spec.workload, self.want_server);
            ahead += 1;
        }
    }

    /// Opens connection `i` for a request already taken from the quota.
    fn open(&mut self, i: usize, start: Start) {
        let now = Instant::now();
        let spec = self.base.spec;
        let limit = self.base.connection_limit();
        self.base.timers.cancel(i);
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
                let ex = c.current().again(c.is_last(self.base.keep_alive, 0), now);
                c.submit(ex, &spec.workload, self.want_server);
            }
        }
        match socket::connect(spec, self.base.addr, self.base.first_conn as usize + i, Stream) {
            Ok((mut sock, in_progress)) => {
                let reg = self.base.poll.registry().register(
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
        if !self.base.any_connected && self.base.addr + 1 < self.base.spec.target.addrs.len() {
            self.base.addr += 1;
            self.close(i);
            self.retry.push(i);
            return;
        }
        self.fail(i, FailureKind::Connect, Some(e), false);
    }

    /// Closes connection `i` and forgets its timer.
    fn close(&mut self, i: usize) {
        self.conns[i].close();
        self.base.timers.cancel(i);
    }
}

impl<'a, R: Recorder> Turns<'a, R> for Worker<'a, R> {
    #[inline(always)]
    fn base(&mut self) -> &mut Base<'a, R> {
        &mut self.base
    }
    fn conns(&self) -> usize {
        self.conns.len()
    }
    fn open_pending(&mut self) {
        Worker::open_pending(self)
    }
    fn dispatch(&mut self, now: Instant) {
        Worker::dispatch(self, now)
    }
    fn can_send(&self) -> bool {
        !self.idle.is_empty() || !self.base.free.is_empty()
    }
    fn queued(&self) -> bool {
        !self.base.to_open.is_empty() || !self.retry.is_empty() || !self.opened.is_empty()
    }
    fn busy(&self) -> bool {
        self.queued() || self.conns.iter().any(Conn::is_busy)
    }
    #[inline(always)]
    fn on_event(&mut self, i: usize, ev: &Event, buf: &mut [u8]) {
        let (readable, writable) = (ev.is_readable(), ev.is_writable());
        Worker::on_event(self, i, readable, writable, ev.is_read_closed(), ev.is_error(), buf)
    }
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        Worker::fire_timers(self, now, buf)
    }
    fn expire(&mut self, now: Instant) {
        Worker::expire(self, now)
    }
}
