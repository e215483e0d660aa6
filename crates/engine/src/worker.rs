//! The worker: one thread, one event loop (epoll's, worker/base.rs, or io_uring's,
//! worker/ring_turn.rs), a share of the connections and
//! requests, and the one question of who starts the next request — asked of a connection's
//! room, whatever it speaks. Every protocol is a [`Link`] (link/): HTTP/1, whose room is one
//! request or a pipelined batch, HTTP/2 and HTTP/3, whose room is their streams. The worker
//! is written once and built once per protocol (run.rs); it never asks which one it has.
//!
//! A closed loop keeps every connection full (one request, the batch, `--streams` each or
//! what the server allows), after each request's think time if the run has one; an open loop
//! ([`Schedule::Rate`]) hands each due request to the connection that has waited longest with
//! room (a queue, not a scan), or opens one, with its due time as the request's intended
//! start. The first request of a connection is taken when it opens and carries the connect
//! (and TLS) time; the others start when the connection is ready and count as reused. A
//! request the server did not process (HTTP/1's keep-alive race, GOAWAY, REFUSED_STREAM)
//! goes again on whichever connection has room, uncounted, its due times kept.
//!
//! Connections to (re)open are queued rather than opened recursively, so a server that
//! refuses every connection costs a loop turn per attempt, never stack depth. A link reports
//! each outcome through [`Outcomes`] (this file's `Sink`: the recorder, the progress count,
//! the requests to send again); what the connection does next is [`Worker::settle`]'s.

pub(crate) mod base;
mod conn;
mod ring_turn;

use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

use herd_stats::FailureKind;
use mio::event::Event as MioEvent;
use mio::Token;

use self::base::{Base, Share, Turns, WorkerEnd};
use self::conn::{Conn, State};
use crate::link::{
    Dial, Link, Opening, Outcomes, Progress, Readiness, Received, RingOp, RingRecv, Via,
};
use crate::pacer::Pacer;
use crate::quic::QuicStats;
use crate::recorder::{Completed, Failed};
use crate::session::Exchange;
use crate::thread_usage::ThreadClock;
use crate::throttle::Throttle;
use crate::uring::{Event as RingEvent, Ring, RingConfig};
use crate::warm::Warm;
use crate::{Control, EngineError, Recorder, RunSpec, Schedule, Think};

/// How long a connection waits after a failed connect before trying again, in a closed loop
/// bounded by time (see `conn_failed`).
pub(crate) const CONNECT_BACKOFF: Duration = Duration::from_millis(10);

pub(crate) struct Worker<'a, R, L: Link<'a>> {
    base: Base<'a, R>,
    /// What the connections' protocol shares: requests in its form, settings, buffers.
    ctx: L::Ctx,
    conns: Vec<Conn<L>>,
    /// Requests to send again, uncounted, with their due times.
    retry: Vec<Exchange>,
    /// Open loop: connections that gained room, oldest first (each at most once: a stale
    /// entry, full again by the time it is taken, is skipped).
    room: VecDeque<usize>,
    /// Closed loop: connections opened before the start, to fill at the first turn.
    opened: Vec<usize>,
    /// The closed loop's pause after each request (HTTP/1 only: `RunSpec::check`).
    think: Option<Think>,
    /// The connections' I/O goes through the worker's io_uring ring (else its mio poll).
    ring: bool,
    /// What the ring is to do next, in order (worker/ring_turn.rs hands it over).
    ring_ops: Vec<RingOp>,
    /// On the ring, the sockets polled ready in a turn (QUIC's), with their events: handled
    /// once each after the turn.
    polled: Vec<(usize, u32)>,
    /// TLS on the ring: where received records are decrypted to (a record's plaintext
    /// whole). Empty otherwise.
    plain: Vec<u8>,
}

/// The most plaintext one TLS record carries.
const TLS_RECORD: usize = 16 * 1024;

/// The worker's side of [`Outcomes`]: one connection's outcomes to the recorder.
struct Sink<'s, 'a, R> {
    base: &'s mut Base<'a, R>,
    retry: &'s mut Vec<Exchange>,
    conn: u32,
}

impl<R: Recorder> Outcomes for Sink<'_, '_, R> {
    #[inline(always)]
    fn conn(&self) -> u32 {
        self.conn
    }

    #[inline(always)]
    fn completed(&mut self, c: &Completed<'_>) -> bool {
        let answer = self.base.recorder.completed(c);
        self.base.last_activity = c.timing.end;
        self.base.after_outcome(answer);
        !self.base.stop
    }

    fn failed(&mut self, f: &Failed) -> bool {
        let answer = self.base.recorder.failed(f);
        self.base.last_activity = f.timing.end;
        self.base.after_outcome(answer);
        !self.base.stop
    }

    fn retry(&mut self, ex: Exchange) {
        self.retry.push(ex);
    }
}

impl<'a, R: Recorder, L: Link<'a>> Worker<'a, R, L> {
    pub(crate) fn new(
        spec: &'a RunSpec,
        control: &'a Control,
        share: Share<R>,
        ctx: L::Ctx,
        warm: Warm,
        ring: bool,
    ) -> Self {
        let (base, n_conns) = Base::new(spec, control, share);
        let now = base.last_activity;
        let conns = (0..n_conns).map(|_| Conn::new(L::new(&ctx), now)).collect();
        let think = match spec.schedule {
            Schedule::Closed { think, .. } => think,
            Schedule::Pipelined { .. } | Schedule::Rate { .. } => None,
        };
        let mut w = Worker {
            base,
            ctx,
            conns,
            retry: Vec::new(),
            room: VecDeque::new(),
            opened: Vec::new(),
            think,
            ring,
            ring_ops: Vec::new(),
            polled: Vec::new(),
            plain: if ring && spec.target.tls.is_some() { vec![0; TLS_RECORD] } else { Vec::new() },
        };
        w.adopt(warm, now);
        w
    }

    /// Takes the connections opened before the start (warm.rs): open, with no request yet;
    /// a closed loop fills them at its first turn, an open loop as requests fall due. No
    /// request on them pays a connect. (HTTP/3 opens none ahead.)
    fn adopt(&mut self, warm: Warm, now: Instant) {
        let paced = self.base.pacer.is_some();
        let (conns, opened, room) = (&mut self.conns, &mut self.opened, &mut self.room);
        let (ring, ring_ops) = (self.ring, &mut self.ring_ops);
        self.base.adopt(warm, conns.len(), now, |i, t, limit, throttle| {
            // On the ring, its socket is the ring's to read and write from now on.
            let t = if ring { t.queued() } else { t };
            conns[i].adopt(t, limit, throttle);
            if ring {
                arm_receive(&mut conns[i].link, i, ring_ops);
            }
            conns[i].set_waiting_since(now);
            if paced {
                conns[i].offered = true;
                room.push_back(i);
            } else {
                opened.push(i);
            }
        });
    }

    pub(crate) fn run(mut self) -> Result<WorkerEnd<R>, EngineError> {
        let clock = ThreadClock::start();
        if self.ring {
            // Made on this thread: a ring has one issuer, its worker.
            let tokens = u32::try_from(self.conns.len()).unwrap_or(u32::MAX);
            let config = RingConfig { tokens, ..RingConfig::default() };
            let mut ring = Ring::new(config).map_err(EngineError::Ring)?;
            let turned = ring_turn::run(&mut self, &mut ring);
            // Handed over a batch at a time: one list of every connection's close would hold
            // the memory of the start's burst again, at the end.
            for i in 0..self.conns.len() {
                self.close_conn(i);
                if self.ring_ops.len() >= ring_turn::KEEP_OPS {
                    ring_turn::hand_over(&mut self, &mut ring.ops());
                }
            }
            ring_turn::hand_over(&mut self, &mut ring.ops());
            // Dropping the ring cancels what is left and waits for it (ring.rs).
            drop(ring);
            turned?;
        } else {
            base::run(&mut self)?;
        }
        let quic = L::QUIC.then(|| self.quic_stats());
        for c in &mut self.conns {
            c.close();
        }
        Ok(self.base.end(clock.stop(), quic))
    }

    /// Closes connection `i`; on the ring, its socket goes to the ring to close (the ring may
    /// still have a receive on it).
    fn close_conn(&mut self, i: usize) {
        if self.ring {
            match self.conns[i].link.detach() {
                Some(fd) => self.ring_ops.push(RingOp::Close(i, fd)),
                // The link closes its socket itself (QUIC's): the ring's polls of it go.
                None => self.ring_ops.push(RingOp::Forget(i)),
            }
        }
        self.conns[i].close();
    }

    /// Every HTTP/3 connection's figures, summed.
    fn quic_stats(&self) -> QuicStats {
        let mut total = QuicStats::default();
        for c in &self.conns {
            c.link.add_stats(&mut total);
        }
        total
    }

    /// The next request to start at `now`: one to send again first, else a new one from
    /// the quota.
    #[inline(always)]
    fn next_request(&mut self, now: Instant) -> Option<Exchange> {
        if let Some(ex) = self.retry.pop() {
            return Some(ex.again(false, now));
        }
        if !self.base.take_request() {
            return None;
        }
        let req = self.base.spec.workload.pick(&mut self.base.rng);
        Some(Exchange::new(req, false, now))
    }

    /// Closed loop: fills the connections opened before the start, and opens the
    /// connections waiting for it, each with its first request.
    fn open_pending(&mut self) {
        while let Some(i) = self.opened.pop() {
            if self.base.stop {
                return;
            }
            self.settle(i, Instant::now());
        }
        // At most the connections queued now: one that fails at once (no free local port,
        // refused) is queued again for the next turn, never looped on here, so the deadline
        // and Ctrl-C are always checked.
        for _ in 0..self.base.to_open.len() {
            let Some(i) = self.base.to_open.pop() else { break };
            if self.base.stop || self.base.given_up_elsewhere() {
                return;
            }
            let now = Instant::now();
            let Some(first) = self.next_request(now) else { continue };
            self.open(i, first, now);
        }
    }

    /// Open loop: every due request to a connection with room, or one that opens for it.
    fn dispatch(&mut self, now: Instant) {
        loop {
            let Some(due) = self.base.pacer.as_ref().map(Pacer::next_due) else { return };
            if due > now || self.base.stop {
                return;
            }
            if let Some(i) = self.conn_with_room() {
                let Some(ex) = self.next_request(now) else { return };
                self.advance_pacer();
                // The client's own lag counts from when both the request and a connection
                // were ready; before that the request waited for the server to free one.
                let ready = due.max(self.conns[i].waiting_since());
                self.start(i, ex.due(due, ready), now);
                self.write(i);
                self.arm(i);
                self.offer(i);
            } else if let Some(i) = self.base.free.pop() {
                // The request starts just before its connect (one of several opened this turn
                // starts when its own turn comes).
                let start = Instant::now();
                let Some(ex) = self.next_request(start) else {
                    self.base.free.push(i);
                    return;
                };
                self.advance_pacer();
                let ready = due.max(self.conns[i].waiting_since());
                self.open(i, ex.due(due, ready), start);
            } else {
                return; // every connection is full: the request stays due
            }
        }
    }

    fn advance_pacer(&mut self) {
        if let Some(p) = &mut self.base.pacer {
            p.advance();
        }
    }

    /// Open loop: the connection that has waited longest with room for a request.
    fn conn_with_room(&mut self) -> Option<usize> {
        while let Some(i) = self.room.pop_front() {
            self.conns[i].offered = false;
            if self.conns[i].has_room() {
                return Some(i);
            }
        }
        None
    }

    /// Open loop: connection `i` waits for the schedule if it has room (and is not waiting
    /// already).
    #[inline]
    fn offer(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if !c.offered && c.has_room() {
            c.offered = true;
            self.room.push_back(i);
        }
    }

    /// Opens connection `i` for `first`, already taken from the quota (or a retry), at `now`.
    #[inline(always)]
    fn open(&mut self, i: usize, first: Exchange, now: Instant) {
        let spec = self.base.spec;
        let limit = if self.base.keep_alive { self.base.connection_limit() } else { 1 };
        self.base.timers.cancel(i);
        if self.conns[i].state() != State::Closed {
            self.close_conn(i);
        }
        self.conns[i].reopen(first, limit);
        let via = if self.ring {
            Via::Ring(&mut self.ring_ops)
        } else {
            Via::Poll(self.base.poll.registry())
        };
        let dial = Dial {
            via,
            token: Token(i),
            addr: self.base.addr,
            conn: self.base.first_conn as usize + i,
        };
        let throttle = spec.receive_rate.map(|r| Throttle::new(r, now));
        let p = self.conns[i].link.open(&mut self.ctx, dial, throttle, now);
        // A TCP connect under way (the usual case) has nothing to say: no call for it.
        if L::QUIC || p.connected || !matches!(p.step, Opening::Pending) {
            self.progress(i, p);
        }
    }

    /// Where opening connection `i` has got to: on, ready, or failed.
    #[inline]
    fn progress(&mut self, i: usize, p: Progress) {
        if p.connected {
            self.base.connected();
            if self.conns[i].state() == State::Connecting {
                self.conns[i].set_state(State::Handshaking);
            }
        }
        match p.step {
            // QUIC's handshake has its own packets and timers to send and set; a TCP link has
            // nothing to say before it is up.
            Opening::Pending if L::QUIC => {
                self.write(i);
                self.arm(i);
            }
            // TLS's handshake on the ring: its flight goes out and the ring receives the
            // answer (a receive armed already stays as it is).
            Opening::Pending if self.ring && self.conns[i].state() == State::Handshaking => {
                self.queue_send(i);
                arm_receive(&mut self.conns[i].link, i, &mut self.ring_ops);
                self.arm(i);
            }
            Opening::Pending => {}
            Opening::Ready => self.on_ready(i),
            Opening::Failed(kind, e) => self.conn_failed(i, kind, e),
            Opening::Refused(e) => self.connect_failed(i, e),
        }
    }

    fn connect_failed(&mut self, i: usize, e: io::Error) {
        // Like ab, move to the next resolved address while none has answered yet; the
        // request is retried there and not counted as failed.
        if !self.base.any_connected && self.base.addr + 1 < self.base.spec.target.addrs.len() {
            self.base.addr += 1;
            if let Some(first) = self.conns[i].take_first() {
                self.retry.push(first);
            }
            self.close_conn(i);
            self.base.to_open.push(i);
            return;
        }
        self.conn_failed(i, FailureKind::Connect, Some(e));
    }

    #[inline(always)]
    fn on_event(&mut self, i: usize, ev: &MioEvent, buf: &mut [u8]) {
        self.on_readiness(i, Readiness::of(ev), buf);
    }

    /// Connection `i`'s socket is ready: from epoll, or from the ring's poll of a socket its
    /// link reads and writes itself (QUIC's).
    #[inline(always)]
    fn on_readiness(&mut self, i: usize, r: Readiness, buf: &mut [u8]) {
        match self.conns[i].state() {
            State::Closed => {}
            State::Connecting | State::Handshaking => {
                let p = self.conns[i].link.advance(&mut self.ctx, Some(r));
                self.progress(i, p);
            }
            State::Open => {
                if r.writable {
                    let sent = self.conns[i].link.on_writable(&mut self.ctx);
                    if let Err((kind, e)) = sent {
                        return self.conn_failed(i, kind, e);
                    }
                }
                if r.readable || r.hangup() {
                    self.on_readable(i, r.hangup(), buf);
                } else {
                    self.settle(i, Instant::now());
                }
            }
        }
    }

    /// What the ring did for connection `i` (io_uring's counterpart of [`Worker::on_event`]).
    #[inline(always)]
    fn on_completion(&mut self, i: usize, event: RingEvent<'_>) {
        match (self.conns[i].state(), event) {
            (State::Connecting, RingEvent::Connected(result)) => {
                let p = self.conns[i].link.ring_connected(&mut self.ctx, result);
                self.progress(i, p);
            }
            (State::Open, RingEvent::Received(data)) => {
                let got = self.ring_received(i, data, Instant::now());
                self.after_receive(i, got);
                self.rearm_capped(i);
            }
            (State::Handshaking, RingEvent::Received(mut data)) => {
                let p = self.conns[i].link.ring_handshake(&mut data);
                self.progress(i, p);
                if self.conns[i].state() == State::Open {
                    // What came behind the handshake's end, and any plaintext the session
                    // already holds (a server's first words, sent with its last flight).
                    let got = self.ring_received(i, data, Instant::now());
                    self.after_receive(i, got);
                }
                self.rearm_capped(i);
            }
            // The handshake's receive ended (the peer's close, or an error), or its flight
            // could not be sent: as a failed handshake read or write on epoll.
            (State::Handshaking, RingEvent::RecvEnded(err)) => {
                let p = self.conns[i].link.ring_handshake_ended(err);
                self.progress(i, p);
            }
            (State::Handshaking, RingEvent::SendFailed(e)) => {
                let p = self.conns[i].link.ring_handshake_ended(Some(e));
                self.progress(i, p);
            }
            (State::Open, RingEvent::RecvEnded(err)) => {
                let got = self.conns[i].link.receive_ended(err);
                self.after_receive(i, got);
            }
            (State::Open, RingEvent::SendFailed(e)) => {
                let (kind, e) = self.conns[i].link.send_failed(e);
                self.conn_failed(i, kind, e);
            }
            // A socket its link reads and writes itself (QUIC's) is ready: read after the
            // turn ([`Worker::on_polled`]).
            (_, RingEvent::Polled(mask)) => self.polled.push((i, mask)),
            // Sent: the link counted its request written when it queued it. Anything else
            // is for a connection that has moved on (the ring drops what it knows is stale).
            _ => {}
        }
    }

    /// After a ring turn: each socket polled ready in it (QUIC's) handled once, as an epoll
    /// event is, with every event its polls said; one that was readable is polled again.
    pub(super) fn on_polled(&mut self) {
        if self.polled.is_empty() {
            return;
        }
        let mut polled = std::mem::take(&mut self.polled);
        polled.sort_unstable_by_key(|&(i, _)| i);
        let mut k = 0;
        while let Some(&(i, mut mask)) = polled.get(k) {
            k += 1;
            while let Some(&(_, more)) = polled.get(k).filter(|(j, _)| *j == i) {
                mask |= more;
                k += 1;
            }
            self.on_readiness(i, Readiness::of_poll(mask), &mut []);
            self.watch_writable(i);
            // Read to the end (a socket error too, which the read takes): polled again, each
            // poll being once. A poll for writing alone comes with POLLOUT only, and the poll
            // for reading it left armed stays armed (the ring arms none twice).
            if self.conns[i].state() != State::Closed {
                if let Some(fd) = self.conns[i].link.polled_socket() {
                    self.ring_ops.push(RingOp::PollIn(i, fd));
                }
            }
        }
        polled.clear();
        self.polled = polled;
    }

    /// On the ring, a link whose own send found its socket full (QUIC's) learns from the
    /// ring when it is writable again, as epoll's edge tells it.
    #[inline(always)]
    fn watch_writable(&mut self, i: usize) {
        // send_blocked first: false for every TCP link, so that this costs a request
        // nothing there.
        let link = &self.conns[i].link;
        if link.send_blocked() && self.conns[i].state() != State::Closed {
            if let Some(fd) = link.polled_socket() {
                self.ring_ops.push(RingOp::PollOut(i, fd));
            }
        }
    }

    /// What the ring received for connection `i`, handed to its link (over TLS, decrypted
    /// into the worker's plaintext buffer) with the recorder's side of its outcomes.
    #[inline(always)]
    fn ring_received(&mut self, i: usize, data: &[u8], now: Instant) -> Received {
        let mut plain = std::mem::take(&mut self.plain);
        let (link, ctx, mut out) = self.sink(i);
        let got = link.ring_received(ctx, data, &mut plain, now, &mut out);
        self.plain = plain;
        got
    }

    /// A paced reader receives one allowance at a time: after each, the next, or its pause.
    #[inline(always)]
    fn rearm_capped(&mut self, i: usize) {
        let state = self.conns[i].state();
        if matches!(state, State::Open | State::Handshaking) && self.conns[i].link.receive_capped()
        {
            arm_receive(&mut self.conns[i].link, i, &mut self.ring_ops);
            self.arm(i);
        }
    }

    /// What a receive through the ring came to, for connection `i`.
    #[inline(always)]
    fn after_receive(&mut self, i: usize, got: Received) {
        match got {
            Received::Data { now, heard, eof, .. } => {
                if heard {
                    self.conns[i].heard();
                }
                self.drain(i, now);
                if self.base.stop {
                    return;
                }
                if eof {
                    // TLS's close_notify behind the data.
                    return self.on_eof_at(i, now);
                }
                self.settle(i, now);
            }
            Received::Blocked | Received::Paused => {}
            Received::Eof => self.on_eof(i),
            Received::Failed(kind, e) => self.conn_failed(i, kind, e),
            Received::Broken { now } => {
                self.drain(i, now);
                self.close_and_release(i);
            }
        }
    }

    /// The connection is ready: its protocol's opening, the first request, then as many as
    /// there is room for.
    #[inline]
    fn on_ready(&mut self, i: usize) {
        let now = Instant::now();
        if self.base.tls_info.is_none() && self.base.spec.target.tls.is_some() {
            self.base.tls_info = self.conns[i].link.tls_info();
        }
        self.conns[i].open();
        if self.ring {
            arm_receive(&mut self.conns[i].link, i, &mut self.ring_ops);
        }
        if let Some(mut first) = self.conns[i].take_first() {
            first.connected_at(now);
            self.submit(i, first, true, now);
        }
        // Nothing to drain or end yet (no request has gone): straight to filling it.
        self.fill(i, now);
        self.write(i);
        self.arm(i);
    }

    /// Closed loop: starts requests on `i` while it has room and the quota lasts. Open loop:
    /// a connection with room waits for the schedule.
    #[inline(always)]
    fn fill(&mut self, i: usize, now: Instant) {
        if self.base.pacer.is_some() {
            if !self.conns[i].offered && self.conns[i].has_room() {
                self.conns[i].set_waiting_since(now);
                self.offer(i);
            }
            return;
        }
        while self.conns[i].has_room() {
            let Some(ex) = self.next_request(now) else { return };
            if !self.start(i, ex, now) {
                return;
            }
        }
    }

    /// Starts `ex` on open connection `i` (its connection is ready: reused). False when an
    /// HTTP/3 connection would not take it after all (the server's stream limit, which only
    /// the attempt tells): the request goes back to be sent again.
    #[inline(always)]
    fn start(&mut self, i: usize, mut ex: Exchange, now: Instant) -> bool {
        ex.connected_at(now);
        self.submit(i, ex, false, now)
    }

    /// Hands `ex` to connection `i`'s protocol, marked if it is the connection's last.
    #[inline(always)]
    fn submit(&mut self, i: usize, mut ex: Exchange, first: bool, now: Instant) -> bool {
        let c = &mut self.conns[i];
        // Lent to the link, which copies it where it keeps it: one copy a request, not three.
        ex.set_last(c.is_last(first));
        if !c.link.submit(&mut self.ctx, &ex, first, now) {
            self.retry.push(ex);
            return false;
        }
        if !first {
            c.count_start();
        }
        c.requested();
        true
    }

    #[inline(always)]
    fn write(&mut self, i: usize) {
        if let Err((kind, e)) = self.conns[i].link.send(&mut self.ctx) {
            return self.conn_failed(i, kind, e);
        }
        if self.ring {
            self.queue_send(i);
            self.watch_writable(i);
        }
    }

    /// On the ring: what connection `i`'s link queued goes at the turn's end, with the turn's
    /// others.
    #[inline(always)]
    fn queue_send(&mut self, i: usize) {
        if self.conns[i].link.outbox().is_some_and(|(_, out)| !out.is_empty()) {
            self.ring_ops.push(RingOp::Send(i));
        }
    }

    /// The recorder's side of connection `i`'s outcomes.
    #[inline(always)]
    fn sink(&mut self, i: usize) -> (&mut L, &mut L::Ctx, Sink<'_, 'a, R>) {
        let conn = self.base.first_conn + i as u32;
        let sink = Sink { base: &mut self.base, retry: &mut self.retry, conn };
        (&mut self.conns[i].link, &mut self.ctx, sink)
    }

    /// Reads until the socket is drained (or the receive-rate cap pauses it), recording each
    /// read's outcomes before the next read, then settles the connection.
    #[inline(always)]
    fn on_readable(&mut self, i: usize, hangup: bool, buf: &mut [u8]) {
        // The last read's moment serves the settling too: one clock read fewer a request.
        let mut read_at = None;
        loop {
            let (link, ctx, mut out) = self.sink(i);
            match link.receive(ctx, buf, hangup, &mut out) {
                Received::Data { now, heard, more, eof } => {
                    read_at = Some(now);
                    if heard {
                        self.conns[i].heard();
                    }
                    self.drain(i, now);
                    if self.base.stop {
                        return;
                    }
                    if eof {
                        // The close came with this read: it ends what it ends at the read's
                        // moment, with no clock read of its own.
                        return self.on_eof_at(i, now);
                    }
                    if !more {
                        break;
                    }
                }
                Received::Blocked | Received::Paused => break,
                Received::Eof => return self.on_eof(i),
                Received::Failed(kind, e) => return self.conn_failed(i, kind, e),
                Received::Broken { now } => {
                    self.drain(i, now);
                    self.close_and_release(i);
                    return;
                }
            }
        }
        self.settle(i, read_at.unwrap_or_else(Instant::now));
    }

    /// After I/O or a timer: outcomes recorded; a connection that ended on its own fails
    /// what it still held and goes, one that is spent goes; one whose request just ended
    /// pauses if the run thinks; otherwise its streams are refilled, what the protocol has
    /// to say is sent (acks, window updates, new requests) and its timer set.
    #[inline(always)]
    fn settle(&mut self, i: usize, now: Instant) {
        if self.conns[i].state() != State::Open {
            return;
        }
        self.drain(i, now);
        if let Some(kind) = self.conns[i].link.closed() {
            self.conn_failed(i, kind, None);
            return;
        }
        if self.conns[i].is_spent() {
            self.close_and_release(i);
            return;
        }
        if self.think.is_some() && self.conns[i].idle_after_request() {
            self.pause(i, now);
        }
        self.fill(i, now);
        self.write(i);
        self.arm(i);
    }

    /// Closed loop with think time: connection `i`, its request done, waits before the
    /// next (its socket, if the server keeps it, stays open).
    fn pause(&mut self, i: usize, now: Instant) {
        let pause = match self.think {
            Some(Think::Fixed(d)) => d,
            Some(Think::Exponential(mean)) => {
                let secs = self.base.rng.exponential(mean.as_secs_f64()).min(86_400.0);
                Duration::from_secs_f64(secs)
            }
            None => Duration::ZERO,
        };
        self.conns[i].think_until(now + pause);
        if self.ring {
            drop_idle_outbox(&mut self.conns[i].link);
        }
    }

    #[inline]
    fn on_eof(&mut self, i: usize) {
        self.on_eof_at(i, Instant::now());
    }

    /// The server's close, seen at `now`.
    #[inline]
    fn on_eof_at(&mut self, i: usize, now: Instant) {
        let unheard = self.conns[i].unheard();
        let (link, ctx, mut out) = self.sink(i);
        link.on_eof(ctx, unheard, now, &mut out);
        self.drain(i, now);
        if self.conns[i].first().is_some() {
            self.conn_failed(i, FailureKind::Closed, None);
            return;
        }
        self.close_and_release(i);
    }

    /// Records the outcomes the protocol has decided and queued.
    #[inline(always)]
    fn drain(&mut self, i: usize, now: Instant) {
        let (link, _, mut out) = self.sink(i);
        link.drain(now, &mut out);
    }

    /// The connection's timer: its think time's end, or the link's own (QUIC's, or the end
    /// of a receive-rate pause), in the worker's heap.
    #[inline(always)]
    fn arm(&mut self, i: usize) {
        let at = match self.conns[i].thinking() {
            Some(until) => Some(until),
            None => self.conns[i].link.timer(),
        };
        match at {
            Some(at) => self.base.timers.set(i, at),
            None => self.base.timers.cancel(i),
        }
    }

    /// The connection failed as a whole (connect, TLS, a write, a protocol error): its
    /// first request if it never got to send it, and every open request, fail with `kind`.
    fn conn_failed(&mut self, i: usize, kind: FailureKind, err: Option<io::Error>) {
        let now = Instant::now();
        let conn = self.base.first_conn + i as u32;
        let os_error = err.as_ref().and_then(io::Error::raw_os_error);
        if let Some(first) = self.conns[i].take_first() {
            let failed = Failed {
                kind,
                timing: first.timing(now),
                bytes_read: 0,
                bytes_written: 0,
                os_error,
                reused: false,
                request: first.req(),
                conn,
            };
            let answer = self.base.recorder.failed(&failed);
            self.base.last_activity = now;
            self.base.after_outcome(answer);
        }
        // A connection opened before the start that the server closed before saying anything
        // (its idle timeout): its requests go again, uncounted, as HTTP/1's keep-alive race.
        let closed =
            matches!(kind, FailureKind::Closed | FailureKind::Write | FailureKind::Receive);
        let race = closed && self.conns[i].unheard();
        let (link, ctx, mut out) = self.sink(i);
        link.fail_all(ctx, kind, err.as_ref(), race, now, &mut out);
        self.drain(i, now);
        self.close_conn(i);
        self.base.timers.cancel(i);
        if kind == FailureKind::Connect {
            self.base.connect_failed(os_error);
        }
        if kind == FailureKind::Connect && self.base.quota.is_none() && self.base.pacer.is_none() {
            // A duration-bound closed loop would otherwise reconnect as fast as the CPU allows
            // against a server that refuses, or with no local port left: each connection
            // waits a little before trying again (its failures are counted all the same).
            self.base.timers.set(i, now + CONNECT_BACKOFF);
            return;
        }
        self.release(i);
    }

    #[inline]
    fn close_and_release(&mut self, i: usize) {
        self.close_conn(i);
        self.base.timers.cancel(i);
        self.release(i);
    }

    /// A closed connection goes back to the schedule (open loop), or reopens (closed loop):
    /// after its think time when the run thinks.
    #[inline(always)]
    fn release(&mut self, i: usize) {
        if self.base.pacer.is_some() {
            self.conns[i].set_waiting_since(Instant::now());
            self.base.free.push(i);
        } else if self.base.stop {
            // Nothing reopens.
        } else if self.think.is_some() {
            // Its request ended (or it was already pausing when the server closed it): the
            // pause runs its course, closed, and the timer reopens it.
            let now = Instant::now();
            if self.conns[i].thinking().is_none() {
                self.pause(i, now);
            }
            let until = self.conns[i].thinking().unwrap_or(now);
            self.base.timers.set(i, until);
        } else {
            self.base.to_open.push(i);
        }
    }

    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        while !self.base.stop {
            let Some(i) = self.base.timers.pop_due(now) else { return };
            match self.conns[i].state() {
                // A connect back-off or a pause ended: open again.
                State::Closed => {
                    self.conns[i].end_think();
                    if self.base.pacer.is_some() {
                        self.release(i);
                    } else {
                        self.base.to_open.push(i);
                    }
                }
                State::Connecting | State::Handshaking => {
                    let p = self.conns[i].link.advance(&mut self.ctx, None);
                    self.progress(i, p);
                }
                State::Open => {
                    if self.conns[i].thinking().is_some_and(|t| t <= now) {
                        self.conns[i].end_think();
                        self.settle(i, now);
                    } else if self.conns[i].link.on_timer(&mut self.ctx, now) {
                        // A receive-rate pause ended: read on (on the ring: arm the read).
                        if self.ring {
                            arm_receive(&mut self.conns[i].link, i, &mut self.ring_ops);
                            self.settle(i, now);
                        } else {
                            self.on_readable(i, false, buf);
                        }
                    } else {
                        self.settle(i, now);
                    }
                }
            }
            // A timer's sends (QUIC's) may have found the socket full.
            if self.ring {
                self.watch_writable(i);
            }
        }
    }

    /// Fails the requests past their timeout: streams are cancelled and their connection
    /// goes on (HTTP/1's ends); a connection still connecting fails its first request.
    fn expire(&mut self, now: Instant) {
        let timeout = self.base.spec.timeout;
        for i in 0..self.conns.len() {
            let late_first = self.conns[i].first().is_some_and(|f| f.timed_out(now, timeout));
            match self.conns[i].state() {
                State::Connecting if late_first => {
                    let e = io::Error::from(io::ErrorKind::TimedOut);
                    self.conn_failed(i, FailureKind::Connect, Some(e));
                }
                State::Handshaking if late_first => {
                    self.conn_failed(i, FailureKind::Timeout, None);
                }
                State::Open => {
                    let (link, ctx, mut out) = self.sink(i);
                    link.expire(ctx, now, timeout, &mut out);
                    self.settle(i, now);
                }
                _ => {}
            }
            if self.base.stop {
                return;
            }
        }
    }
}

/// On the ring: arms connection `i`'s next receive, as its link says — multishot, one read
/// of a paced reader's allowance, or none before its pause ends (its timer).
fn arm_receive<'a, L: Link<'a>>(link: &mut L, i: usize, ring_ops: &mut Vec<RingOp>) {
    let Some(fd) = link.outbox().map(|(fd, _)| fd) else { return };
    match link.ring_receive() {
        Some(RingRecv::Multishot) => ring_ops.push(RingOp::Recv(i, fd)),
        Some(RingRecv::UpTo(max)) => ring_ops.push(RingOp::RecvUpTo(i, fd, max)),
        Some(RingRecv::Paused) | None => {}
    }
}

impl<'a, R: Recorder, L: Link<'a>> Turns<'a, R> for Worker<'a, R, L> {
    #[inline(always)]
    fn base(&mut self) -> &mut Base<'a, R> {
        &mut self.base
    }
    fn conns(&self) -> usize {
        self.conns.len()
    }
    fn open_conns(&self) -> usize {
        self.conns.iter().filter(|c| c.state() != State::Closed).count()
    }
    fn open_pending(&mut self) {
        Worker::open_pending(self)
    }
    fn dispatch(&mut self, now: Instant) {
        Worker::dispatch(self, now)
    }
    fn can_send(&self) -> bool {
        !self.base.free.is_empty() || !self.room.is_empty()
    }
    fn queued(&self) -> bool {
        !self.base.to_open.is_empty() || !self.opened.is_empty()
    }
    fn busy(&self) -> bool {
        self.queued() || !self.retry.is_empty() || self.conns.iter().any(|c| c.in_flight() > 0)
    }
    #[inline(always)]
    fn on_event(&mut self, i: usize, ev: &MioEvent, buf: &mut [u8]) {
        Worker::on_event(self, i, ev, buf)
    }
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        Worker::fire_timers(self, now, buf)
    }
    fn expire(&mut self, now: Instant) {
        Worker::expire(self, now)
    }
}

/// On the ring, a connection that pauses between its requests (`--think`) gives its send
/// buffer back to the allocator: it needs none until its next request, which allocates
/// one again (a pause lasts milliseconds at least). What it saves in resident memory is
/// small (26 B a connection at 10,000 idle ones, BENCHMARKS row 35x): every connection's
/// first request is in flight at once at the start, and the allocator keeps the memory
/// that burst took. (On epoll a plain connection writes the workload's bytes directly and
/// has no buffer.)
pub(super) fn drop_idle_outbox<'a, L: Link<'a>>(link: &mut L) {
    if let Some((_, out)) = link.outbox() {
        if out.is_empty() {
            *out = Vec::new();
        }
    }
}
