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
use mio::event::Event as Readiness;
use mio::{Interest, Token};

use bytes::Bytes;

use super::conn::{Link, MuxConn, State};
use super::h2::{Event, Limits, H2};
use super::h3link::H3Link;
use super::request::RequestFields;
use crate::pacer::Pacer;
use crate::quic::{IoBuffers, QuicClient, QuicStats};
use crate::recorder::Failed;
use crate::session::Exchange;
use crate::socket::{self, Stream};
use crate::thread_usage::ThreadClock;
use crate::throttle::Throttle;
use crate::transport::{Fault, Io, Transport};
use crate::warm::Warm;
use crate::worker::base::{self, Base, Share, Turns, WorkerEnd};
use crate::worker::outcome::CONNECT_BACKOFF;
use crate::{Control, EngineError, H2Settings, Recorder, RunSpec, Wire};

pub(crate) struct MuxWorker<'a, R> {
    base: Base<'a, R>,
    requests: &'a [RequestFields],
    /// The workload has several requests (`:path` stays out of the HPACK table).
    many: bool,
    /// HTTP/3: the QUIC client, streams per connection, each request's stream bytes, and the
    /// worker's datagram buffers.
    h3: Option<H3Run<'a>>,
    conns: Vec<MuxConn>,
    /// Requests to send again, uncounted, with their due times.
    retry: Vec<Exchange>,
    /// Open loop: where the search for a connection with room starts.
    cursor: usize,
    /// Closed loop: connections opened before the start, to fill at the first turn.
    opened: Vec<usize>,
}

/// What an HTTP/3 run's worker holds besides its connections.
struct H3Run<'a> {
    client: &'a QuicClient,
    streams: u32,
    /// Each request's stream (HEADERS and DATA), encoded once; cloning shares the bytes.
    bytes: Vec<Bytes>,
    io: IoBuffers,
}

impl<'a, R: Recorder> MuxWorker<'a, R> {
    pub(crate) fn new(
        spec: &'a RunSpec,
        control: &'a Control,
        share: Share<R>,
        requests: &'a [RequestFields],
        warm: Warm,
    ) -> Self {
        let (base, n_conns) = Base::new(spec, control, share);
        let now = base.last_activity;
        let max_head = spec.limits.max_head_bytes;
        let limits =
            Limits { max_list: u32::try_from(max_head).unwrap_or(u32::MAX), max_block: max_head };
        let h3 = match &spec.wire {
            Wire::Http3(w) => Some(H3Run {
                client: &w.client,
                streams: w.streams.get(),
                bytes: requests.iter().map(|r| Bytes::from(r.h3_stream())).collect(),
                io: IoBuffers::new(),
            }),
            _ => None,
        };
        let settings = match &spec.wire {
            Wire::Http2(s) => *s,
            _ => H2Settings::new(std::num::NonZeroU32::MIN),
        };
        let conns = (0..n_conns)
            .map(|_| {
                let link = match h3 {
                    Some(_) => Link::H3(H3Link::new()),
                    None => Link::H2 {
                        transport: None,
                        h2: H2::new(settings, limits, requests.len()),
                        throttle: None,
                    },
                };
                MuxConn::new(link, now)
            })
            .collect();
        let mut w = MuxWorker {
            base,
            requests,
            many: requests.len() > 1,
            h3,
            conns,
            retry: Vec::new(),
            cursor: 0,
            opened: Vec::new(),
        };
        w.adopt(warm, now);
        w
    }

    /// Takes the HTTP/2 connections opened before the start (warm.rs): open, with no request
    /// yet; a closed loop fills them at its first turn, an open loop as requests fall due. No
    /// request on them pays a connect, as on HTTP/1's. (HTTP/3 opens none ahead.)
    fn adopt(&mut self, warm: Warm, now: Instant) {
        if self.h3.is_some() {
            return;
        }
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
        let quic = self.h3.is_some().then(|| self.quic_stats());
        for c in &mut self.conns {
            c.close();
        }
        Ok(self.base.end(clock.stop(), quic))
    }

    /// Every HTTP/3 connection's figures, summed.
    fn quic_stats(&mut self) -> QuicStats {
        let mut total = QuicStats::default();
        for c in &mut self.conns {
            if let Some(l) = c.h3() {
                super::h3link::add(&mut total, &l.stats());
            }
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
                if self.h3.is_some() {
                    self.arm_quic(i);
                }
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
        self.conns[i].reopen(first, limit, spec.receive_rate.map(|r| Throttle::new(r, now)));
        if self.h3.is_some() {
            self.open_h3(i, now);
            return;
        }
        match socket::connect(spec, self.base.addr, self.base.first_conn as usize + i, Stream) {
            Ok((mut sock, in_progress)) => {
                let reg = self.base.poll.registry().register(
                    &mut sock,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                );
                if let Err(e) = reg {
                    self.conn_failed(i, FailureKind::Connect, Some(e));
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

    /// HTTP/3: a QUIC connection, its socket in the worker's poll, its first flight out. Its
    /// UDP socket opens as TCP's do (socket.rs: address, source address, `--bind`).
    fn open_h3(&mut self, i: usize, now: Instant) {
        let Some(h3) = &self.h3 else { return };
        let (client, streams) = (h3.client, h3.streams);
        let conn = self.base.first_conn as usize + i;
        // A socket that cannot be opened toward this address (no route, no such source
        // address) is TCP's failed connect: the next resolved address is tried, and the OS's
        // error is counted with the failure either way.
        let sock = match socket::connect(self.base.spec, self.base.addr, conn, client.datagram()) {
            Ok(sock) => sock,
            Err(e) => return self.connect_failed(i, e),
        };
        let Some(link) = self.conns[i].h3() else { return };
        if let Err(f) = link.connect(client, sock, streams, now) {
            self.conn_failed(i, f.kind(), f.os_error());
            return;
        }
        let registered = match link.socket() {
            Some(sock) => self.base.poll.registry().register(
                sock,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            ),
            None => Ok(()),
        };
        if let Err(e) = registered {
            self.conn_failed(i, FailureKind::Connect, Some(e));
            return;
        }
        // Until QUIC's handshake is done the connection is connecting: it has no TCP stage
        // (and the run has not reached its target: after_h3 says when it has).
        self.conns[i].set_state(State::Connecting);
        self.write(i);
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
    fn on_event(&mut self, i: usize, ev: &Readiness, buf: &mut [u8]) {
        let hangup = ev.is_read_closed() || ev.is_error();
        let (readable, writable) = (ev.is_readable() || hangup, ev.is_writable());
        if self.h3.is_some() {
            if self.conns[i].state() == State::Closed {
                return;
            }
            let now = Instant::now();
            if let (Some(h3), Some(link)) = (self.h3.as_mut(), self.conns[i].h3()) {
                if readable || hangup {
                    link.on_readable(now, &mut h3.io);
                }
                if writable {
                    link.on_writable(now, &mut h3.io);
                }
            }
            self.after_h3(i, now);
            return;
        }
        match self.conns[i].state() {
            State::Closed => {}
            State::Connecting => {
                // A refused connect reports EPOLLERR and EPOLLHUP with EPOLLOUT: an error
                // is a failed connect whatever else is set (as HTTP/1's worker reads it), or
                // every refusal would pass for a connection and fail as a write.
                if ev.is_error() || (ev.is_read_closed() && !writable) {
                    let err = self.conns[i].socket().and_then(|s| s.take_error().ok().flatten());
                    let e = err.unwrap_or_else(|| io::ErrorKind::ConnectionRefused.into());
                    self.connect_failed(i, e);
                } else if writable || readable {
                    self.on_connected(i);
                }
            }
            State::Handshaking => self.drive_handshake(i),
            State::Open => {
                if writable {
                    self.write(i);
                }
                if readable && self.conns[i].state() == State::Open {
                    self.on_readable(i, hangup, buf);
                }
            }
        }
    }

    fn on_connected(&mut self, i: usize) {
        self.base.connected();
        match &self.base.spec.target.tls {
            Some(tls) => match tls.connect() {
                Ok(session) => {
                    self.conns[i].start_tls(session);
                    self.drive_handshake(i);
                }
                Err(_) => self.conn_failed(i, FailureKind::Tls, None),
            },
            None => self.on_ready(i),
        }
    }

    fn drive_handshake(&mut self, i: usize) {
        match self.conns[i].handshake() {
            Io::Done(_) => {
                if self.base.tls_info.is_none() {
                    self.base.tls_info = self.conns[i].transport().and_then(|t| t.tls_info());
                }
                if !self.conns[i].transport().is_some_and(Transport::chose_h2) {
                    // The server would not speak HTTP/2 over TLS: nothing to send it.
                    self.conn_failed(i, FailureKind::Tls, None);
                    return;
                }
                self.on_ready(i);
            }
            Io::Retry => {}
            Io::Eof | Io::Err(Fault::Tls) => self.conn_failed(i, FailureKind::Tls, None),
            Io::Err(Fault::Os(e)) => {
                let kind = crate::conn::connect_or(e.raw_os_error(), FailureKind::Tls);
                self.conn_failed(i, kind, Some(e));
            }
        }
    }

    /// The transport is ready: preface, the first request, then as many as there is room for.
    fn on_ready(&mut self, i: usize) {
        let now = Instant::now();
        self.conns[i].open();
        if let Some(mut first) = self.conns[i].take_first() {
            first.connected_at(now);
            self.submit(i, first, true, now);
        }
        self.fill(i, now);
        self.write(i);
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
        let (requests, many) = (self.requests, self.many);
        let taken = match (&self.h3, &mut self.conns[i].link) {
            (Some(h3), Link::H3(l)) => {
                let head = requests.get(ex.req()).is_some_and(|r| r.head);
                match h3.bytes.get(ex.req()) {
                    Some(b) => l.submit(ex, first, b, head, now),
                    None => false,
                }
            }
            (_, Link::H2 { h2, .. }) => {
                h2.submit(ex, first, requests, many);
                true
            }
            (None, Link::H3(_)) => false,
        };
        if !taken {
            self.retry.push(ex);
            return false;
        }
        if !first {
            self.conns[i].count_start();
        }
        true
    }

    fn write(&mut self, i: usize) {
        if let Some(h3) = self.h3.as_mut() {
            if let Some(l) = self.conns[i].h3() {
                l.flush(Instant::now(), &mut h3.io);
            }
            return;
        }
        match self.conns[i].write() {
            Io::Done(_) | Io::Retry => {}
            Io::Eof => self.conn_failed(i, FailureKind::Write, None),
            Io::Err(Fault::Tls) => self.conn_failed(i, FailureKind::Tls, None),
            Io::Err(Fault::Os(e)) => self.conn_failed(i, FailureKind::Write, Some(e)),
        }
    }

    fn on_readable(&mut self, i: usize, hangup: bool, buf: &mut [u8]) {
        let drains = self.conns[i].short_read_drains();
        loop {
            let limit = match self.conns[i].read_limit(buf.len()) {
                Ok(n) => n,
                Err(at) => {
                    if !self.base.timers.is_set(i) {
                        self.base.timers.set(i, at);
                    }
                    break;
                }
            };
            let Some(into) = buf.get_mut(..limit) else { break };
            match self.conns[i].read(into) {
                Io::Retry => break,
                Io::Eof => return self.on_eof(i),
                Io::Err(Fault::Tls) => return self.conn_failed(i, FailureKind::Tls, None),
                Io::Err(Fault::Os(e)) => return self.conn_failed(i, FailureKind::Receive, Some(e)),
                Io::Done(n) => {
                    let now = Instant::now();
                    if n > 0 {
                        self.conns[i].heard();
                    }
                    let data = into.get(..n).unwrap_or_default();
                    let fed = self.conns[i].on_read(data, now, self.requests);
                    if let Err(e) = fed {
                        if let Some(h2) = self.conns[i].h2() {
                            h2.fail_all(e.kind, Some(e.code));
                        }
                        // The GOAWAY that says why, best effort, then the end.
                        let _ = self.conns[i].write();
                        self.drain_events(i, now);
                        self.close_and_release(i);
                        return;
                    }
                    self.drain_events(i, now);
                    if self.base.stop {
                        return;
                    }
                    if drains && n < limit {
                        if hangup {
                            return self.on_eof(i);
                        }
                        break;
                    }
                }
            }
        }
        self.after_read(i);
    }

    /// After a read: refill the streams, send what the session has to say (acks, window
    /// updates, new requests), or end a connection that is spent.
    fn after_read(&mut self, i: usize) {
        if self.conns[i].state() != State::Open {
            return;
        }
        if self.conns[i].is_spent() {
            self.close_and_release(i);
            return;
        }
        self.fill(i, Instant::now());
        self.write(i);
    }

    fn on_eof(&mut self, i: usize) {
        let now = Instant::now();
        let unheard = self.conns[i].unheard();
        if let Some(h2) = self.conns[i].h2() {
            if unheard {
                h2.retry_all();
            } else {
                h2.on_eof();
            }
        }
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
        while let Some(ev) = self.conns[i].next_event() {
            let (Event::Done(slot) | Event::Failed(slot, _) | Event::Retry(slot)) = ev;
            if let Some(r) = self.conns[i].record(slot) {
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
            self.conns[i].release(slot);
        }
    }

    /// HTTP/3: after the driver ran (a read, a timer): the handshake's end starts the first
    /// request; outcomes are recorded; a connection that ended fails what it still held and
    /// goes; otherwise its streams are refilled, its packets sent and its timer set.
    fn after_h3(&mut self, i: usize, now: Instant) {
        let (connected, closed) = match self.conns[i].h3() {
            Some(l) => (l.is_connected(), l.closed()),
            None => return,
        };
        if connected && self.conns[i].state() != State::Open {
            self.base.connected();
            self.conns[i].set_state(State::Open);
            if let Some(mut first) = self.conns[i].take_first() {
                first.connected_at(now);
                self.submit(i, first, true, now);
            }
        }
        self.drain_events(i, now);
        if let Some(kind) = closed {
            self.conn_failed(i, kind, None);
            return;
        }
        if self.conns[i].is_spent() {
            self.close_and_release(i);
            return;
        }
        if self.conns[i].state() == State::Open {
            self.fill(i, now);
        }
        self.write(i);
        self.arm_quic(i);
    }

    /// HTTP/3: the connection's QUIC timer, in the worker's heap.
    fn arm_quic(&mut self, i: usize) {
        let at = self.conns[i].h3().and_then(H3Link::poll_timeout);
        match at {
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
        match &mut self.conns[i].link {
            Link::H2 { h2, .. } if race => h2.retry_all(),
            Link::H2 { h2, .. } => h2.fail_all(kind, None),
            Link::H3(l) => l.fail_all(kind),
        }
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
            if self.h3.is_some() && self.conns[i].state() != State::Closed {
                if let (Some(h3), Some(link)) = (self.h3.as_mut(), self.conns[i].h3()) {
                    link.on_timeout(now, &mut h3.io);
                }
                self.after_h3(i, now);
                continue;
            }
            match self.conns[i].state() {
                State::Open => self.on_readable(i, false, buf),
                State::Closed => self.release(i),
                _ => {}
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
                    self.conns[i].expire(now, timeout);
                    self.drain_events(i, now);
                    if self.h3.is_some() {
                        self.after_h3(i, now);
                    } else {
                        self.after_read(i);
                    }
                }
                _ => {}
            }
            if self.base.stop {
                return;
            }
        }
    }
}

impl<'a, R: Recorder> Turns<'a, R> for MuxWorker<'a, R> {
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
    fn on_event(&mut self, i: usize, ev: &Readiness, buf: &mut [u8]) {
        MuxWorker::on_event(self, i, ev, buf)
    }
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        MuxWorker::fire_timers(self, now, buf)
    }
    fn expire(&mut self, now: Instant) {
        MuxWorker::expire(self, now)
    }
}
