//! The worker of a multiplexed run: one thread, one mio loop, a share of the connections
//! and requests, as worker.rs is for HTTP/1 — but a connection carries many requests at
//! once, so the question of who starts the next request is asked of its room, not of its
//! state: a closed loop keeps every connection's streams full (`--streams` each, or what
//! the server allows), and an open loop hands each due request to a connection with room.
//!
//! The first request of a connection is taken when it opens and carries the connect (and
//! TLS) time, as HTTP/1's does; the others start when the connection is ready and count
//! as reused. A request the server did not process (GOAWAY, REFUSED_STREAM) goes again on
//! whichever connection has room, uncounted, its due times kept.

use std::io;
use std::time::Instant;

use herd_stats::FailureKind;
use mio::event::Event as MioEvent;
use mio::Token;

use super::conn::{MuxConn, State};
use super::h2::Event;
use super::link::{Dial, Link, Opening, Progress, Readiness, Received};
use crate::pacer::Pacer;
use crate::quic::QuicStats;
use crate::recorder::Failed;
use crate::session::Exchange;
use crate::thread_usage::ThreadClock;
use crate::throttle::Throttle;
use crate::warm::Warm;
use crate::worker::base::{self, Base, Share, Turns, WorkerEnd};
use crate::worker::outcome::CONNECT_BACKOFF;
use crate::{Control, EngineError, Recorder, RunSpec};

pub(crate) struct MuxWorker<'a, R, L: Link<'a>> {
    base: Base<'a, R>,
    /// What the connections' protocol shares: requests in its form, settings, buffers.
    ctx: L::Ctx,
    conns: Vec<MuxConn<L>>,
    /// Requests to send again, uncounted, with their due times.
    retry: Vec<Exchange>,
    /// Open loop: where the search for a connection with room starts.
    cursor: usize,
    /// Closed loop: connections opened before the start, to fill at the first turn.
    opened: Vec<usize>,
}

impl<'a, R: Recorder, L: Link<'a>> MuxWorker<'a, R, L> {
    pub(crate) fn new(
        spec: &'a RunSpec,
        control: &'a Control,
        share: Share<R>,
        ctx: L::Ctx,
        warm: Warm,
    ) -> Self {
        let (base, n_conns) = Base::new(spec, control, share);
        let now = base.last_activity;
        let conns = (0..n_conns).map(|_| MuxConn::new(L::new(&ctx), now)).collect();
        let mut w =
            MuxWorker { base, ctx, conns, retry: Vec::new(), cursor: 0, opened: Vec::new() };
        w.adopt(warm, now);
        w
    }

    /// Takes the HTTP/2 connections opened before the start (warm.rs): open, with no request
    /// yet; a closed loop fills them at its first turn, an open loop as requests fall due. No
    /// request on them pays a connect, as on HTTP/1's. (HTTP/3 opens none ahead.)
    fn adopt(&mut self, warm: Warm, now: Instant) {
        let paced = self.base.pacer.is_some();
        let (conns, opened) = (&mut self.conns, &mut self.opened);
        self.base.adopt(warm, conns.len(), now, |i, t, limit, throttle| {
            conns[i].adopt(t, limit, throttle);
            conns[i].set_waiting_since(now);
            if !paced {
                opened.push(i);
            }
        });
    }

    pub(crate) fn run(mut self) -> Result<WorkerEnd<R>, EngineError> {
        let clock = ThreadClock::start();
        base::run(&mut self)?;
        let quic = L::QUIC.then(|| self.quic_stats());
        for c in &mut self.conns {
            c.close();
        }
        Ok(self.base.end(clock.stop(), quic))
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
            self.fill(i, Instant::now());
            self.write(i);
        }
        for _ in 0..self.base.to_open.len() {
            let Some(i) = self.base.to_open.pop() else { break };
            if self.base.stop {
                return;
            }
            let Some(first) = self.next_request(Instant::now()) else { continue };
            self.open(i, first);
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
                let ready = due.max(self.conns[i].waiting_since());
                self.start(i, ex.due(due, ready), now);
                self.write(i);
                self.arm(i);
            } else if let Some(i) = self.base.free.pop() {
                let Some(ex) = self.next_request(now) else {
                    self.base.free.push(i);
                    return;
                };
                self.advance_pacer();
                let ready = due.max(self.conns[i].waiting_since());
                self.open(i, ex.due(due, ready));
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

    /// An open connection with room for a request, searched from where the last search
    /// ended so that requests spread over the connections.
    fn conn_with_room(&mut self) -> Option<usize> {
        let n = self.conns.len();
        for k in 0..n {
            let i = (self.cursor + k) % n;
            if self.conns[i].has_room() {
                self.cursor = (i + 1) % n;
                return Some(i);
            }
        }
        None
    }

    /// Opens connection `i` for `first`, already taken from the quota (or a retry).
    fn open(&mut self, i: usize, first: Exchange) {
        let now = Instant::now();
        let spec = self.base.spec;
        let limit = if self.base.keep_alive { self.base.connection_limit() } else { 1 };
        self.base.timers.cancel(i);
        self.conns[i].reopen(first, limit);
        let dial = Dial {
            registry: self.base.poll.registry(),
            token: Token(i),
            addr: self.base.addr,
            conn: self.base.first_conn as usize + i,
        };
        let throttle = spec.receive_rate.map(|r| Throttle::new(r, now));
        let p = self.conns[i].link.open(&mut self.ctx, dial, throttle, now);
        self.progress(i, p);
    }

    /// Where opening connection `i` has got to: on, ready, or failed.
    fn progress(&mut self, i: usize, p: Progress) {
        if p.connected {
            self.base.connected();
            if self.conns[i].state() == State::Connecting {
                self.conns[i].set_state(State::Handshaking);
            }
        }
        if p.tls.is_some() && self.base.tls_info.is_none() {
            self.base.tls_info = p.tls;
        }
        match p.step {
            Opening::Pending => {
                // QUIC's handshake has its own packets and timers to send and set.
                self.write(i);
                self.arm(i);
            }
            Opening::Ready => self.on_ready(i),
            Opening::Failed(kind, e) => self.conn_failed(i, kind, e),
            Opening::Refused(e) => self.connect_failed(i, e),
        }
    }

    fn connect_failed(&mut self, i: usize, e: io::Error) {
        if !self.base.any_connected && self.base.addr + 1 < self.base.spec.target.addrs.len() {
            // As HTTP/1 does: the next resolved address, the request kept.
            self.base.addr += 1;
            if let Some(first) = self.conns[i].take_first() {
                self.retry.push(first);
            }
            self.conns[i].close();
            self.base.to_open.push(i);
            return;
        }
        self.conn_failed(i, FailureKind::Connect, Some(e));
    }

    #[inline(always)]
    fn on_event(&mut self, i: usize, ev: &MioEvent, buf: &mut [u8]) {
        let r = Readiness::of(ev);
        match self.conns[i].state() {
            State::Closed => {}
            State::Connecting | State::Handshaking => {
                let p = self.conns[i].link.advance(&mut self.ctx, Some(r), Instant::now());
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

    /// The connection is ready: its protocol's opening, the first request, then as many as
    /// there is room for.
    fn on_ready(&mut self, i: usize) {
        let now = Instant::now();
        self.conns[i].open();
        if let Some(mut first) = self.conns[i].take_first() {
            first.connected_at(now);
            self.submit(i, first, true, now);
        }
        self.settle(i, now);
    }

    /// Closed loop: starts requests on `i` while it has room and the quota lasts.
    fn fill(&mut self, i: usize, now: Instant) {
        if self.base.pacer.is_some() {
            if self.conns[i].has_room() {
                self.conns[i].set_waiting_since(now);
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
    fn start(&mut self, i: usize, mut ex: Exchange, now: Instant) -> bool {
        ex.connected_at(now);
        self.submit(i, ex, false, now)
    }

    /// Hands `ex` to connection `i`'s protocol.
    fn submit(&mut self, i: usize, ex: Exchange, first: bool, now: Instant) -> bool {
        if !self.conns[i].link.submit(&mut self.ctx, ex, first, now) {
            self.retry.push(ex);
            return false;
        }
        if !first {
            self.conns[i].count_start();
        }
        true
    }

    fn write(&mut self, i: usize) {
        if let Err((kind, e)) = self.conns[i].link.send(&mut self.ctx) {
            self.conn_failed(i, kind, e);
        }
    }

    /// Reads until the socket is drained (or the receive-rate cap pauses it), recording each
    /// read's outcomes before the next read, then settles the connection.
    fn on_readable(&mut self, i: usize, hangup: bool, buf: &mut [u8]) {
        loop {
            match self.conns[i].link.receive(&mut self.ctx, buf, hangup) {
                Received::Data { now, heard, more, eof } => {
                    if heard {
                        self.conns[i].heard();
                    }
                    self.drain_events(i, now);
                    if self.base.stop {
                        return;
                    }
                    if eof {
                        return self.on_eof(i);
                    }
                    if !more {
                        break;
                    }
                }
                Received::Blocked | Received::Paused => break,
                Received::Eof => return self.on_eof(i),
                Received::Failed(kind, e) => return self.conn_failed(i, kind, e),
                Received::Broken { now } => {
                    self.drain_events(i, now);
                    self.close_and_release(i);
                    return;
                }
            }
        }
        self.settle(i, Instant::now());
    }

    /// After I/O or a timer: outcomes recorded; a connection that ended on its own fails
    /// what it still held and goes, one that is spent goes; otherwise its streams are
    /// refilled, what the protocol has to say is sent (acks, window updates, new requests)
    /// and its timer set.
    fn settle(&mut self, i: usize, now: Instant) {
        if self.conns[i].state() != State::Open {
            return;
        }
        self.drain_events(i, now);
        if let Some(kind) = self.conns[i].link.closed() {
            self.conn_failed(i, kind, None);
            return;
        }
        if self.conns[i].is_spent() {
            self.close_and_release(i);
            return;
        }
        self.fill(i, now);
        self.write(i);
        self.arm(i);
    }

    fn on_eof(&mut self, i: usize) {
        let now = Instant::now();
        let unheard = self.conns[i].unheard();
        self.conns[i].link.on_eof(unheard);
        self.drain_events(i, now);
        if self.conns[i].first().is_some() {
            self.conn_failed(i, FailureKind::Closed, None);
            return;
        }
        self.close_and_release(i);
    }

    /// Records the outcomes the protocol has decided, and frees their slots.
    fn drain_events(&mut self, i: usize, now: Instant) {
        let conn = self.base.first_conn + i as u32;
        while let Some(ev) = self.conns[i].link.next_event() {
            let (Event::Done(slot) | Event::Failed(slot, _) | Event::Retry(slot)) = ev;
            if let Some(r) = self.conns[i].link.record(slot) {
                match ev {
                    Event::Done(_) => {
                        let answer = self.base.recorder.completed(&r.completed(now, conn));
                        self.base.last_activity = now;
                        self.base.after_outcome(answer);
                    }
                    Event::Failed(_, kind) => {
                        let answer = self.base.recorder.failed(&r.failed(kind, now, conn));
                        self.base.last_activity = now;
                        self.base.after_outcome(answer);
                    }
                    Event::Retry(_) => self.retry.push(r.ex),
                }
            }
            self.conns[i].link.release(slot);
        }
    }

    /// The link's timer (QUIC's, or the end of a receive-rate pause), in the worker's heap.
    fn arm(&mut self, i: usize) {
        match self.conns[i].link.timer() {
            Some(at) => self.base.timers.set(i, at),
            None => self.base.timers.cancel(i),
        }
    }

    /// The connection failed as a whole (connect, TLS, a write, a protocol error): its
    /// first request if it never got to send it, and every open stream, fail with `kind`.
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
        self.conns[i].link.fail_all(kind, race);
        self.drain_events(i, now);
        self.conns[i].close();
        self.base.timers.cancel(i);
        if kind == FailureKind::Connect {
            self.base.connect_failed(os_error);
        }
        if kind == FailureKind::Connect && self.base.quota.is_none() && self.base.pacer.is_none() {
            // As HTTP/1: a duration-bound closed loop pauses before reconnecting.
            self.base.timers.set(i, now + CONNECT_BACKOFF);
            return;
        }
        self.release(i);
    }

    fn close_and_release(&mut self, i: usize) {
        self.conns[i].close();
        self.base.timers.cancel(i);
        self.release(i);
    }

    /// A closed connection goes back to the schedule (open loop) or reopens (closed loop).
    fn release(&mut self, i: usize) {
        if self.base.pacer.is_some() {
            self.conns[i].set_waiting_since(Instant::now());
            self.base.free.push(i);
        } else if !self.base.stop {
            self.base.to_open.push(i);
        }
    }

    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        while !self.base.stop {
            let Some(i) = self.base.timers.pop_due(now) else { return };
            match self.conns[i].state() {
                State::Closed => self.release(i),
                State::Connecting | State::Handshaking => {
                    let p = self.conns[i].link.advance(&mut self.ctx, None, now);
                    self.progress(i, p);
                }
                State::Open => {
                    if self.conns[i].link.on_timer(&mut self.ctx, now) {
                        self.on_readable(i, false, buf);
                    } else {
                        self.settle(i, now);
                    }
                }
            }
        }
    }

    /// Fails the requests past their timeout: streams are cancelled and their connection
    /// goes on; a connection still connecting fails its first request.
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
                    self.conns[i].link.expire(now, timeout);
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

impl<'a, R: Recorder, L: Link<'a>> Turns<'a, R> for MuxWorker<'a, R, L> {
    #[inline(always)]
    fn base(&mut self) -> &mut Base<'a, R> {
        &mut self.base
    }
    fn conns(&self) -> usize {
        self.conns.len()
    }
    fn open_pending(&mut self) {
        MuxWorker::open_pending(self)
    }
    fn dispatch(&mut self, now: Instant) {
        MuxWorker::dispatch(self, now)
    }
    fn can_send(&self) -> bool {
        !self.base.free.is_empty() || self.conns.iter().any(MuxConn::has_room)
    }
    fn queued(&self) -> bool {
        !self.base.to_open.is_empty() || !self.opened.is_empty()
    }
    fn busy(&self) -> bool {
        self.queued() || !self.retry.is_empty() || self.conns.iter().any(|c| c.in_flight() > 0)
    }
    #[inline(always)]
    fn on_event(&mut self, i: usize, ev: &MioEvent, buf: &mut [u8]) {
        MuxWorker::on_event(self, i, ev, buf)
    }
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        MuxWorker::fire_timers(self, now, buf)
    }
    fn expire(&mut self, now: Instant) {
        MuxWorker::expire(self, now)
    }
}
