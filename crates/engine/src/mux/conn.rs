//! One multiplexed connection: where it stands, how many requests it may still carry, the
//! request that opened it, and its protocol's link: HTTP/2 on a transport (plain or TLS,
//! with its receive-rate cap), or HTTP/3 on the QUIC driver. Unlike HTTP/1's connection
//! (conn.rs) it has no current request: its requests are the link's streams, and the worker
//! asks it only whether it has room, and what has ended.

use std::time::Instant;

use herd_stats::FailureKind;
use rustls::ClientConnection;

use super::h2::{ConnError, Event, H2};
use super::h3link::H3Link;
use crate::recorder::{Completed, Failed};
use crate::session::Exchange;
use crate::socket::Socket;
use crate::throttle::Throttle;
use crate::transport::{Io, Transport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// No socket.
    Closed,
    Connecting,
    /// TLS (HTTP/2) or QUIC's handshake (HTTP/3) is in progress.
    Handshaking,
    /// Streams open, close and wait.
    Open,
}

/// The protocol under a connection. HTTP/2's variant is the larger (its session's buffers
/// and tables inline) and stays unboxed: it is the per-request path, and a worker has one
/// link per connection, not per request.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Link {
    H2 { transport: Option<Transport>, h2: H2, throttle: Option<Throttle> },
    H3(H3Link),
}

/// A request whose outcome is decided, for the recorder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record {
    pub(crate) ex: Exchange,
    /// The connection's first: it alone carries the connect time.
    pub(crate) first: bool,
    pub(crate) status: u16,
    pub(crate) body: u64,
    pub(crate) bytes_written: u64,
}

impl Record {
    pub(crate) fn completed(&self, end: Instant, conn: u32) -> Completed<'static> {
        Completed {
            timing: self.ex.timing(end),
            status: self.status,
            reusable: true,
            body_bytes: self.body,
            bytes_read: self.ex.bytes_read(),
            bytes_written: self.bytes_written,
            reused: !self.first,
            server: None,
            request: self.ex.req(),
            conn,
        }
    }

    pub(crate) fn failed(&self, kind: FailureKind, end: Instant, conn: u32) -> Failed {
        Failed {
            kind,
            timing: self.ex.timing(end),
            bytes_read: self.ex.bytes_read(),
            bytes_written: self.bytes_written,
            os_error: None,
            reused: !self.first,
            request: self.ex.req(),
            conn,
        }
    }
}

pub(crate) struct MuxConn {
    state: State,
    pub(crate) link: Link,
    /// Requests started on it since it opened, and how many it may carry.
    started: u32,
    limit: u32,
    /// The request that opened it, waiting for the connection (its latency includes the
    /// connect, as HTTP/1's first request's does).
    first: Option<Exchange>,
    /// Open loop: since when it has had room for a request.
    waiting_since: Instant,
    /// Opened before the start (warm.rs) and nothing heard from the server on it yet: if it
    /// ends now, the server closed an idle connection as the run began (its idle timeout),
    /// before it could have taken a request: HTTP/1's keep-alive race, retried.
    unheard: bool,
}

impl MuxConn {
    pub(crate) fn new(link: Link, now: Instant) -> MuxConn {
        MuxConn {
            state: State::Closed,
            link,
            started: 0,
            limit: u32::MAX,
            first: None,
            waiting_since: now,
            unheard: false,
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> State {
        self.state
    }

    pub(crate) fn set_state(&mut self, state: State) {
        self.state = state;
    }

    /// Requests in flight on it, the first one included while it connects.
    #[inline]
    pub(crate) fn in_flight(&self) -> u32 {
        let open = match &self.link {
            Link::H2 { h2, .. } => h2.open(),
            Link::H3(l) => l.open(),
        };
        open + u32::from(self.first.is_some())
    }

    /// A request may start on it now.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.state == State::Open
            && self.started < self.limit
            && match &self.link {
                Link::H2 { h2, .. } => h2.can_open(),
                Link::H3(l) => l.can_open(),
            }
    }

    /// No request will start on it again, and none is in flight: it is done.
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        let closing = match &self.link {
            Link::H2 { h2, .. } => h2.is_closing(),
            Link::H3(l) => l.is_closing(),
        };
        self.state == State::Open
            && self.in_flight() == 0
            && (self.started >= self.limit || closing)
    }

    #[inline]
    pub(crate) fn waiting_since(&self) -> Instant {
        self.waiting_since
    }

    pub(crate) fn set_waiting_since(&mut self, now: Instant) {
        self.waiting_since = now;
    }

    /// Closed, about to open for `first`: it may carry `limit` requests.
    pub(crate) fn reopen(&mut self, first: Exchange, limit: u32, throttle: Option<Throttle>) {
        self.close();
        self.limit = limit;
        if let Link::H2 { throttle: t, .. } = &mut self.link {
            *t = throttle;
        }
        self.started = 1;
        self.first = Some(first);
    }

    /// Opened before the start (warm.rs): open with no request yet, its preface queued to go
    /// with its first requests. It may carry `limit` requests.
    pub(crate) fn adopt(&mut self, t: Transport, limit: u32, throttle: Option<Throttle>) {
        self.close();
        self.limit = limit;
        self.started = 0;
        if let Link::H2 { transport, throttle: th, .. } = &mut self.link {
            *transport = Some(t);
            *th = throttle;
        }
        self.open();
        self.unheard = true;
    }

    /// Opened before the start and nothing received on it yet ([`MuxConn::adopt`]).
    #[inline]
    pub(crate) fn unheard(&self) -> bool {
        self.unheard
    }

    /// Bytes arrived from the server.
    #[inline]
    pub(crate) fn heard(&mut self) {
        self.unheard = false;
    }

    /// Drops the socket; the protocol starts afresh next time.
    pub(crate) fn close(&mut self) {
        self.state = State::Closed;
        self.unheard = false;
        self.first = None;
        match &mut self.link {
            Link::H2 { transport, h2, .. } => {
                *transport = None;
                h2.reset();
            }
            Link::H3(l) => l.close(),
        }
    }

    /// The request that opened it, if it has not been handed to the protocol yet.
    pub(crate) fn take_first(&mut self) -> Option<Exchange> {
        self.first.take()
    }

    pub(crate) fn first(&self) -> Option<&Exchange> {
        self.first.as_ref()
    }

    /// One more request started on it.
    #[inline]
    pub(crate) fn count_start(&mut self) {
        self.started = self.started.saturating_add(1);
    }

    /// The outcome the protocol decided next.
    #[inline]
    pub(crate) fn next_event(&mut self) -> Option<Event> {
        match &mut self.link {
            Link::H2 { h2, .. } => h2.next_event(),
            Link::H3(l) => l.next_event(),
        }
    }

    /// The request in `slot`, whose outcome an event named.
    pub(crate) fn record(&self, slot: usize) -> Option<Record> {
        match &self.link {
            Link::H2 { h2, .. } => h2.stream(slot).map(|s| Record {
                ex: s.ex,
                first: s.first,
                status: s.status,
                body: s.body,
                bytes_written: s.bytes_written,
            }),
            Link::H3(l) => l.request(slot).map(|r| Record {
                ex: r.ex,
                first: r.first,
                status: r.status,
                body: r.body,
                bytes_written: r.bytes_written,
            }),
        }
    }

    /// The outcome of `slot` is recorded.
    #[inline]
    pub(crate) fn release(&mut self, slot: usize) {
        match &mut self.link {
            Link::H2 { h2, .. } => h2.release(slot),
            Link::H3(l) => l.release(slot),
        }
    }

    /// Fails every request past `timeout` (each cancelled; the connection goes on).
    pub(crate) fn expire(&mut self, now: Instant, timeout: std::time::Duration) {
        match &mut self.link {
            Link::H2 { h2, .. } => h2.expire(now, timeout),
            Link::H3(l) => l.expire(now, timeout),
        }
    }

    // ---- HTTP/2's transport ----

    pub(crate) fn h2(&mut self) -> Option<&mut H2> {
        match &mut self.link {
            Link::H2 { h2, .. } => Some(h2),
            Link::H3(_) => None,
        }
    }

    pub(crate) fn h3(&mut self) -> Option<&mut H3Link> {
        match &mut self.link {
            Link::H3(l) => Some(l),
            Link::H2 { .. } => None,
        }
    }

    pub(crate) fn connecting(&mut self, sock: Socket) {
        if let Link::H2 { transport, .. } = &mut self.link {
            *transport = Some(Transport::Plain(sock));
        }
        self.state = State::Connecting;
    }

    pub(crate) fn start_tls(&mut self, session: ClientConnection) {
        if let Link::H2 { transport, .. } = &mut self.link {
            *transport = transport.take().map(|t| t.start_tls(session));
        }
        self.state = State::Handshaking;
    }

    pub(crate) fn handshake(&mut self) -> Io {
        match self.transport_mut() {
            Some(t) => t.handshake(),
            None => Io::Eof,
        }
    }

    pub(crate) fn socket(&self) -> Option<&Socket> {
        self.transport().map(Transport::socket)
    }

    pub(crate) fn transport(&self) -> Option<&Transport> {
        match &self.link {
            Link::H2 { transport, .. } => transport.as_ref(),
            Link::H3(_) => None,
        }
    }

    fn transport_mut(&mut self) -> Option<&mut Transport> {
        match &mut self.link {
            Link::H2 { transport, .. } => transport.as_mut(),
            Link::H3(_) => None,
        }
    }

    /// The transport is ready: the session's preface goes first.
    pub(crate) fn open(&mut self) {
        self.state = State::Open;
        if let Link::H2 { h2, .. } = &mut self.link {
            h2.start();
        }
    }

    /// Writes what the session has queued; `Io::Done` when all of it is on its way.
    pub(crate) fn write(&mut self) -> Io {
        let Link::H2 { transport: Some(t), h2, .. } = &mut self.link else { return Io::Eof };
        loop {
            let data = h2.to_write();
            if data.is_empty() {
                return match t.flush() {
                    Io::Done(_) => {
                        h2.written(Instant::now());
                        Io::Done(0)
                    }
                    other => other,
                };
            }
            match t.write(data) {
                Io::Done(n) => h2.wrote(n),
                other => return other,
            }
        }
    }

    /// How much may be read now (see conn.rs's `read_limit`).
    #[inline]
    pub(crate) fn read_limit(&mut self, max: usize) -> Result<usize, Instant> {
        match &mut self.link {
            Link::H2 { throttle, .. } => crate::throttle::read_limit(throttle, max),
            Link::H3(_) => Ok(max),
        }
    }

    #[inline]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Io {
        let Link::H2 { transport, throttle, .. } = &mut self.link else { return Io::Eof };
        let io = match transport.as_mut() {
            Some(t) => t.read(buf),
            None => Io::Eof,
        };
        if let (Io::Done(n), Some(t)) = (&io, throttle) {
            t.spend(*n);
        }
        io
    }

    /// Bytes that arrived at `now`, for HTTP/2's session.
    #[inline]
    pub(crate) fn on_read(
        &mut self,
        data: &[u8],
        now: Instant,
        requests: &[super::request::RequestFields],
    ) -> Result<(), ConnError> {
        match &mut self.link {
            Link::H2 { h2, .. } => h2.on_read(data, now, requests),
            Link::H3(_) => Ok(()),
        }
    }

    #[inline]
    pub(crate) fn short_read_drains(&self) -> bool {
        self.transport().is_some_and(Transport::short_read_drains)
    }
}
