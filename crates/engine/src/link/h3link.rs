//! One HTTP/3 connection as the multiplexed worker sees it: the QUIC driver's [`H3Conn`]
//! (quic/), the requests it carries (each an [`Exchange`] in a reused slot, whose index is the
//! driver's tag), and the outcomes it has decided, as [`Event`]s like HTTP/2's.
//!
//! The driver tells what happens through a callback while it holds the connection; the
//! callback only notes it ([`Note`], owned, small, in a reused buffer), and the notes are
//! applied afterwards, when the link is free to change.

use std::io;
use std::time::{Duration, Instant};

use bytes::Bytes;
use herd_stats::FailureKind;

use super::h2::Event;
use super::request::RequestFields;
use super::seam::{Dial, Link, Outcomes, Progress, Readiness, Received, Record};
use crate::quic::udp::UdpSocket;
use crate::quic::{H3Conn, H3Event, IoBuffers, QuicClient, QuicFailure, QuicRtt, QuicStats};
use crate::session::Exchange;
use crate::socket;
use crate::throttle::Throttle;
use crate::trace_context::{span_offset, Spans};
use crate::transport::Transport;
use crate::{H3Wire, RunSpec, TlsInfo};

/// What the driver said, kept until it can be applied.
#[derive(Debug, Clone, Copy)]
enum Note {
    Connected,
    FirstByte(u64),
    Done {
        tag: u64,
        status: u16,
        body: u64,
    },
    /// Not processed (GOAWAY, H3_REQUEST_REJECTED): it may go again.
    Refused(u64),
    Failed(u64, FailureKind),
    Closed(FailureKind),
}

/// A request on the connection: what the worker records of it, and whether it is still open.
#[derive(Debug, Clone, Copy)]
struct H3Request {
    r: Record,
    open: bool,
}

pub(crate) struct H3Link {
    /// Boxed: a QUIC connection's state is several kilobytes, and a link holds none while
    /// closed (one allocation per connection, not per request).
    conn: Option<Box<H3Conn>>,
    notes: Vec<Note>,
    slots: Vec<Option<H3Request>>,
    free: Vec<usize>,
    events: Vec<Event>,
    open: u32,
    /// The handshake is done.
    connected: bool,
    /// The connection's end, when it came: why.
    closed: Option<FailureKind>,
    answered: u32,
    /// The figures of the connections this link has had, summed when each closed.
    stats: QuicStats,
    /// The request that opens it, while it opens ([`Link::hold_first`]).
    first: Option<Exchange>,
    /// `--trace-context`: this link's span ids.
    spans: Option<Spans>,
}

impl H3Link {
    pub(crate) fn new() -> H3Link {
        H3Link {
            conn: None,
            notes: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            events: Vec::new(),
            open: 0,
            connected: false,
            closed: None,
            answered: 0,
            stats: QuicStats::default(),
            first: None,
            spans: None,
        }
    }

    /// Starts a connection over `socket` (opened by `socket::connect`, connected to the
    /// server), its first flight leaving at the next flush.
    pub(crate) fn connect(
        &mut self,
        client: &QuicClient,
        socket: UdpSocket,
        streams: u32,
        now: Instant,
    ) -> Result<(), QuicFailure> {
        self.reset();
        let conn = H3Conn::over(client, socket, streams as usize, now)?;
        self.conn = Some(Box::new(conn));
        Ok(())
    }

    /// Drops the connection (its figures are kept).
    fn reset(&mut self) {
        if let Some(c) = self.conn.take() {
            add(&mut self.stats, &c.stats());
        }
        self.notes.clear();
        self.slots.clear();
        self.free.clear();
        self.events.clear();
        self.open = 0;
        self.connected = false;
        self.closed = None;
        self.answered = 0;
    }

    pub(crate) fn socket(
        &mut self,
    ) -> Option<&mut (impl mio::event::Source + std::os::fd::AsRawFd)> {
        self.conn.as_mut().map(|c| c.quic().socket())
    }

    /// Sends `ex` (request bytes `stream`) on a new stream; false if the connection would
    /// not take it (the caller keeps the request).
    pub(crate) fn submit_stream(
        &mut self,
        ex: Exchange,
        first: bool,
        stream: &Bytes,
        head: bool,
        now: Instant,
    ) -> bool {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        let Some(conn) = self.conn.as_mut() else {
            self.free.push(slot);
            return false;
        };
        if conn.submit(stream, head, slot as u64).is_err() {
            self.free.push(slot);
            return false;
        }
        let mut ex = ex;
        // quinn takes the bytes now; they leave at this turn's flush.
        ex.written_at(now);
        if let Some(s) = self.slots.get_mut(slot) {
            let bytes_written = stream.len() as u64;
            let r = Record { ex, first, status: 0, body: 0, bytes_written };
            *s = Some(H3Request { r, open: true });
        }
        self.open += 1;
        true
    }

    /// The socket is readable (or in error).
    pub(crate) fn on_readable(&mut self, now: Instant, io: &mut IoBuffers) {
        let H3Link { conn, notes, .. } = self;
        if let Some(c) = conn.as_mut() {
            c.on_readable(now, io, |ev| note(notes, ev));
        }
        self.apply(now);
    }

    pub(crate) fn on_writable(&mut self, now: Instant, io: &mut IoBuffers) {
        if let Some(c) = self.conn.as_mut() {
            c.on_writable(now, io);
        }
    }

    /// QUIC's timer fired.
    pub(crate) fn on_timeout(&mut self, now: Instant, io: &mut IoBuffers) {
        let H3Link { conn, notes, .. } = self;
        if let Some(c) = conn.as_mut() {
            c.on_timeout(now, io, |ev| note(notes, ev));
        }
        self.apply(now);
    }

    pub(crate) fn flush(&mut self, now: Instant, io: &mut IoBuffers) {
        if let Some(c) = self.conn.as_mut() {
            c.flush(now, io);
        }
    }

    /// When QUIC's timer is due next.
    pub(crate) fn poll_timeout(&mut self) -> Option<Instant> {
        self.conn.as_mut().and_then(|c| c.poll_timeout())
    }

    /// What this link's connections did, summed (the current one included).
    pub(crate) fn stats(&self) -> QuicStats {
        let mut total = self.stats;
        if let Some(c) = &self.conn {
            add(&mut total, &c.stats());
        }
        total
    }

    fn apply(&mut self, now: Instant) {
        for i in 0..self.notes.len() {
            let Some(&n) = self.notes.get(i) else { break };
            match n {
                Note::Connected => self.connected = true,
                Note::FirstByte(tag) => {
                    if let Some(Some(r)) = self.slots.get_mut(tag as usize) {
                        r.r.ex.read(0, now);
                    }
                }
                Note::Done { tag, status, body } => {
                    let slot = tag as usize;
                    if let Some(Some(r)) = self.slots.get_mut(slot) {
                        r.r.status = status;
                        r.r.body = body;
                        r.r.ex.read(body as usize, now);
                    }
                    self.answered += 1;
                    self.end(slot, Event::Done(slot));
                }
                Note::Refused(tag) => {
                    let slot = tag as usize;
                    // As over HTTP/2: only a connection that answered something is worth
                    // sending the request to again.
                    let event = if self.answered > 0 {
                        Event::Retry(slot)
                    } else {
                        Event::Failed(slot, FailureKind::GoAway)
                    };
                    self.end(slot, event);
                }
                Note::Failed(tag, kind) => {
                    let slot = tag as usize;
                    self.end(slot, Event::Failed(slot, kind));
                }
                Note::Closed(kind) => self.closed = Some(kind),
            }
        }
        self.notes.clear();
    }

    fn end(&mut self, slot: usize, event: Event) {
        if let Some(Some(r)) = self.slots.get_mut(slot) {
            if r.open {
                r.open = false;
                self.open = self.open.saturating_sub(1);
                self.events.push(event);
            }
        }
    }
}

/// What a worker's HTTP/3 connections share.
pub(crate) struct H3Ctx<'a> {
    spec: &'a RunSpec,
    requests: &'a [RequestFields],
    client: &'a QuicClient,
    streams: u32,
    /// Each request's stream (HEADERS and DATA), encoded once; cloning shares the bytes.
    bytes: Vec<Bytes>,
    /// `--trace-context`: where each request's span id is in its stream's bytes.
    trace_at: Vec<Option<usize>>,
    io: IoBuffers,
}

impl<'a> H3Ctx<'a> {
    pub(crate) fn new(spec: &'a RunSpec, requests: &'a [RequestFields], wire: &'a H3Wire) -> Self {
        let bytes: Vec<Bytes> = requests.iter().map(|r| Bytes::from(r.h3_stream())).collect();
        let trace_at = match spec.workload.trace_prefix() {
            Some(prefix) => bytes.iter().map(|b| span_offset(b, prefix)).collect(),
            None => Vec::new(),
        };
        H3Ctx {
            spec,
            requests,
            client: &wire.client,
            streams: wire.streams.get(),
            bytes,
            trace_at,
            io: IoBuffers::new(),
        }
    }
}

impl<'a> Link<'a> for H3Link {
    type Ctx = H3Ctx<'a>;
    const QUIC: bool = true;

    fn new(_ctx: &H3Ctx<'a>) -> H3Link {
        H3Link::new()
    }

    /// A QUIC connection, its socket in the worker's poll, its first flight out. Its address
    /// and source address are chosen as TCP's are (socket.rs): `--bind` holds.
    fn open(
        &mut self,
        ctx: &mut H3Ctx<'a>,
        dial: Dial<'_>,
        _throttle: Option<Throttle>,
        now: Instant,
    ) -> Progress {
        // A socket that cannot be opened toward this address (no route, no such source
        // address) is TCP's failed connect: the next resolved address is tried, and the OS's
        // error is counted with the failure either way.
        let sock = match socket::connect(ctx.spec, dial.addr, dial.conn, ctx.client.datagram()) {
            Ok(sock) => sock,
            Err(e) => return Progress::refused(e),
        };
        if let Err(f) = self.connect(ctx.client, sock, ctx.streams, now) {
            return Progress::failed(f.kind(), f.os_error());
        }
        if let Some(Err(failed)) = self.socket().map(|sock| dial.watch(sock)) {
            return failed;
        }
        self.flush(now, &mut ctx.io);
        Progress::pending()
    }

    fn adopt(&mut self, _t: Transport, _throttle: Option<Throttle>) {
        // Never called: connections opened ahead are TCP's (RunSpec::opens_ahead, warm.rs).
        debug_assert!(false, "an HTTP/3 link adopts no TCP connection");
    }

    /// Until QUIC's handshake is done the connection is opening (it has no TCP stage, and
    /// the run has not reached its target until then).
    fn advance(&mut self, ctx: &mut H3Ctx<'a>, ready: Option<Readiness>) -> Progress {
        let now = Instant::now();
        match ready {
            Some(r) => {
                if r.readable || r.hangup() {
                    self.on_readable(now, &mut ctx.io);
                }
                if r.writable {
                    self.on_writable(now, &mut ctx.io);
                }
            }
            None => self.on_timeout(now, &mut ctx.io),
        }
        if self.connected {
            Progress { connected: true, ..Progress::ready() }
        } else if let Some(kind) = self.closed {
            Progress::failed(kind, None)
        } else {
            Progress::pending()
        }
    }

    fn tls_info(&self) -> Option<TlsInfo> {
        None // QUIC's TLS is its own; the run's QUIC figures say what it did
    }

    fn start(&mut self) {}

    fn close(&mut self) {
        self.reset();
        self.first = None;
    }

    fn hold_first(&mut self, first: Exchange) {
        self.first = Some(first);
    }

    fn first(&self) -> Option<&Exchange> {
        self.first.as_ref()
    }

    fn take_first(&mut self) -> Option<Exchange> {
        self.first.take()
    }

    fn receive(
        &mut self,
        ctx: &mut H3Ctx<'a>,
        _buf: &mut [u8],
        _hangup: bool,
        _out: &mut impl Outcomes,
    ) -> Received {
        let now = Instant::now();
        self.on_readable(now, &mut ctx.io);
        Received::Data { now, heard: true, more: false, eof: false }
    }

    fn send(&mut self, ctx: &mut H3Ctx<'a>) -> Result<(), (FailureKind, Option<io::Error>)> {
        self.flush(Instant::now(), &mut ctx.io);
        Ok(())
    }

    fn on_writable(&mut self, ctx: &mut H3Ctx<'a>) -> Result<(), (FailureKind, Option<io::Error>)> {
        H3Link::on_writable(self, Instant::now(), &mut ctx.io);
        Ok(())
    }

    fn timer(&mut self) -> Option<Instant> {
        self.poll_timeout()
    }

    fn polled_socket(&self) -> Option<std::os::fd::RawFd> {
        self.conn.as_ref().map(|c| c.quic_ref().socket_fd())
    }

    fn send_blocked(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.quic_ref().wants_writable())
    }

    fn on_timer(&mut self, ctx: &mut H3Ctx<'a>, now: Instant) -> bool {
        self.on_timeout(now, &mut ctx.io);
        false
    }

    #[inline]
    fn in_flight(&self) -> u32 {
        self.open
    }

    #[inline]
    fn can_open(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.can_submit())
    }

    #[inline]
    fn is_closing(&self) -> bool {
        self.closed.is_some() || (self.connected && !self.can_open() && self.open == 0)
    }

    #[inline]
    fn closed(&self) -> Option<FailureKind> {
        self.closed
    }

    fn submit(&mut self, ctx: &mut H3Ctx<'a>, ex: &Exchange, first: bool, now: Instant) -> bool {
        let head = ctx.requests.get(ex.req()).is_some_and(|r| r.head);
        let Some(b) = ctx.bytes.get(ex.req()) else { return false };
        match ctx.trace_at.get(ex.req()).copied().flatten() {
            // QPACK codes no literal with Huffman: the value is in the stream's bytes as it
            // is, and this request's copy gets its own span id.
            Some(at) => {
                let mut copy = b.to_vec();
                self.spans.get_or_insert_with(Spans::new).stamp_at(&mut copy, at);
                self.submit_stream(*ex, first, &Bytes::from(copy), head, now)
            }
            None => self.submit_stream(*ex, first, b, head, now),
        }
    }

    fn drain(&mut self, now: Instant, out: &mut impl Outcomes) {
        while let Some(ev) = self.events.pop() {
            let (Event::Done(slot) | Event::Failed(slot, _) | Event::Retry(slot)) = ev;
            if let Some(s) = self.slots.get_mut(slot) {
                if let Some(r) = s.take() {
                    r.r.report(ev, now, out);
                    self.free.push(slot);
                }
            }
        }
    }

    /// Each stream past `timeout` is cancelled; the connection goes on.
    fn expire(
        &mut self,
        _ctx: &mut H3Ctx<'a>,
        now: Instant,
        timeout: Duration,
        _out: &mut impl Outcomes,
    ) {
        for slot in 0..self.slots.len() {
            let late =
                matches!(self.slots[slot], Some(r) if r.open && r.r.ex.timed_out(now, timeout));
            if late {
                if let Some(c) = self.conn.as_mut() {
                    c.cancel(slot as u64);
                }
                self.end(slot, Event::Failed(slot, FailureKind::Timeout));
            }
        }
    }

    /// A datagram socket has no end of stream; QUIC's own close is [`Link::closed`].
    fn on_eof(
        &mut self,
        _ctx: &mut H3Ctx<'a>,
        _unheard: bool,
        _now: Instant,
        _out: &mut impl Outcomes,
    ) {
        self.fail_streams(FailureKind::Closed);
    }

    /// `retry` cannot hold here: no HTTP/3 connection is opened ahead, so none ends unheard.
    fn fail_all(
        &mut self,
        _ctx: &mut H3Ctx<'a>,
        kind: FailureKind,
        _err: Option<&io::Error>,
        _retry: bool,
        _now: Instant,
        _out: &mut impl Outcomes,
    ) {
        self.fail_streams(kind);
    }

    fn add_stats(&self, total: &mut QuicStats) {
        add(total, &self.stats());
    }
}

impl H3Link {
    /// Every open stream fails with `kind`.
    fn fail_streams(&mut self, kind: FailureKind) {
        for slot in 0..self.slots.len() {
            self.end(slot, Event::Failed(slot, kind));
        }
    }
}

/// Keeps what the driver said, owned (the callback holds no reference to the link).
fn note(notes: &mut Vec<Note>, ev: H3Event<'_>) {
    let n = match ev {
        H3Event::Connected { .. } => Note::Connected,
        H3Event::FirstByte { tag } => Note::FirstByte(tag),
        H3Event::Response { tag, result: Ok(r) } => {
            Note::Done { tag, status: r.status, body: r.body_bytes }
        }
        H3Event::Response { tag, result: Err(QuicFailure::Goaway) } => Note::Refused(tag),
        H3Event::Response { tag, result: Err(f) } => Note::Failed(tag, f.kind()),
        H3Event::Closed(f) => Note::Closed(f.kind()),
        H3Event::Part { .. } | H3Event::Ready => return,
    };
    notes.push(n);
}

/// Sums connection figures: counts add up; RTTs, from the connections that measured one,
/// keep the lowest minimum and the latest smoothed estimate.
pub(crate) fn add(total: &mut QuicStats, s: &QuicStats) {
    if let Some(r) = s.rtt {
        total.rtt = Some(match total.rtt {
            Some(t) => QuicRtt { min: t.min.min(r.min), smoothed: r.smoothed },
            None => r,
        });
    }
    total.packets_sent += s.packets_sent;
    total.packets_lost += s.packets_lost;
    total.datagrams_sent += s.datagrams_sent;
    total.datagrams_received += s.datagrams_received;
    total.bytes_sent += s.bytes_sent;
    total.bytes_received += s.bytes_received;
    total.send_calls += s.send_calls;
    total.recv_calls += s.recv_calls;
    total.gro_messages += s.gro_messages;
    total.truncated += s.truncated;
    total.gso |= s.gso;
    total.gro |= s.gro;
    total.congestion_events += s.congestion_events;
    total.mtu = total.mtu.max(s.mtu);
}
