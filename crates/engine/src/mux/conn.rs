//! One multiplexed connection: its transport, its HTTP/2 session, its receive-rate cap, and
//! where it stands. Unlike HTTP/1's connection (conn.rs) it has no current request: its
//! requests are the session's streams, and the worker asks it only whether it has room.

use std::time::Instant;

use rustls::ClientConnection;

use super::h2::H2;
use crate::session::Exchange;
use crate::socket::Socket;
use crate::throttle::Throttle;
use crate::transport::{Io, Transport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// No socket.
    Closed,
    Connecting,
    Handshaking,
    /// The session speaks: streams open, close and wait.
    Open,
}

pub(crate) struct MuxConn {
    transport: Option<Transport>,
    state: State,
    pub(crate) h2: H2,
    throttle: Option<Throttle>,
    /// Requests started on it since it opened, and how many it may carry.
    started: u32,
    limit: u32,
    /// The request that opened it, waiting for the transport (its latency includes the
    /// connect, as HTTP/1's first request's does).
    first: Option<Exchange>,
    /// Open loop: since when it has had room for a request.
    waiting_since: Instant,
}

impl MuxConn {
    pub(crate) fn new(h2: H2, now: Instant) -> MuxConn {
        MuxConn {
            transport: None,
            state: State::Closed,
            h2,
            throttle: None,
            started: 0,
            limit: u32::MAX,
            first: None,
            waiting_since: now,
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// Requests in flight on it, the first one included while it connects.
    #[inline]
    pub(crate) fn in_flight(&self) -> u32 {
        self.h2.open() + u32::from(self.first.is_some())
    }

    /// A request may start on it now.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.state == State::Open && self.started < self.limit && self.h2.can_open()
    }

    /// No request will start on it again, and none is in flight: it is done.
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        self.state == State::Open
            && self.h2.open() == 0
            && (self.started >= self.limit || self.h2.is_closing())
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
        self.throttle = throttle;
        self.started = 1;
        self.first = Some(first);
    }

    /// Drops the socket; the session starts afresh next time.
    pub(crate) fn close(&mut self) {
        self.transport = None;
        self.state = State::Closed;
        self.first = None;
        self.h2.reset();
    }

    /// The request that opened it, if it has not been handed to the session yet.
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

    pub(crate) fn connecting(&mut self, sock: Socket) {
        self.transport = Some(Transport::Plain(sock));
        self.state = State::Connecting;
    }

    pub(crate) fn start_tls(&mut self, session: ClientConnection) {
        self.transport = self.transport.take().map(|t| t.start_tls(session));
        self.state = State::Handshaking;
    }

    pub(crate) fn handshake(&mut self) -> Io {
        match self.transport.as_mut() {
            Some(t) => t.handshake(),
            None => Io::Eof,
        }
    }

    pub(crate) fn socket(&self) -> Option<&Socket> {
        self.transport.as_ref().map(Transport::socket)
    }

    pub(crate) fn transport(&self) -> Option<&Transport> {
        self.transport.as_ref()
    }

    /// The transport is ready: the session's preface goes first.
    pub(crate) fn open(&mut self) {
        self.state = State::Open;
        self.h2.start();
    }

    /// Writes what the session has queued; `Io::Done` when all of it is on its way.
    pub(crate) fn write(&mut self) -> Io {
        let Some(t) = self.transport.as_mut() else { return Io::Eof };
        loop {
            let data = self.h2.to_write();
            if data.is_empty() {
                return match t.flush() {
                    Io::Done(_) => {
                        self.h2.written(Instant::now());
                        Io::Done(0)
                    }
                    other => other,
                };
            }
            match t.write(data) {
                Io::Done(n) => self.h2.wrote(n),
                other => return other,
            }
        }
    }

    /// How much may be read now (see conn.rs's `read_limit`).
    #[inline]
    pub(crate) fn read_limit(&mut self, max: usize) -> Result<usize, Instant> {
        match &mut self.throttle {
            None => Ok(max),
            Some(t) => t.allowance(Instant::now()).map(|n| n.min(max)),
        }
    }

    #[inline]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Io {
        let io = match self.transport.as_mut() {
            Some(t) => t.read(buf),
            None => Io::Eof,
        };
        if let (Io::Done(n), Some(t)) = (&io, &mut self.throttle) {
            t.spend(*n);
        }
        io
    }

    #[inline]
    pub(crate) fn short_read_drains(&self) -> bool {
        self.transport.as_ref().is_some_and(Transport::short_read_drains)
    }
}
