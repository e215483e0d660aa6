//! One multiplexed connection: where it stands, how many requests it may still carry, the
//! request that opened it, and its protocol's [`Link`]. Unlike HTTP/1's connection
//! (conn.rs) it has no current request: its requests are the link's streams, and the worker
//! asks it only whether it has room, and what has ended.

use std::time::Instant;

use crate::link::Link;
use crate::session::Exchange;
use crate::throttle::Throttle;
use crate::transport::Transport;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// No socket.
    Closed,
    /// TCP's connect, or QUIC's handshake, is in progress.
    Connecting,
    /// TCP is up; TLS's handshake is in progress.
    Handshaking,
    /// Streams open, close and wait.
    Open,
}

pub(crate) struct Conn<L> {
    state: State,
    pub(crate) link: L,
    /// Requests started on it since it opened, and how many it may carry. (The request that
    /// opened it, waiting for the connection — its latency includes the connect — is its
    /// link's to keep: [`Link::hold_first`].)
    started: u32,
    limit: u32,
    /// Open loop: since when it has had room for a request.
    waiting_since: Instant,
    /// Opened before the start (warm.rs) and nothing heard from the server on it yet: if it
    /// ends now, the server closed an idle connection as the run began (its idle timeout),
    /// before it could have taken a request: HTTP/1's keep-alive race, retried.
    unheard: bool,
    /// Open loop: it is in the worker's queue of connections with room.
    pub(crate) offered: bool,
    /// Closed loop with think time: it pauses until then before its next request.
    thinking: Option<Instant>,
    /// A request started on it since its last pause.
    requested: bool,
}

impl<L> Conn<L> {
    pub(crate) fn new(link: L, now: Instant) -> Conn<L> {
        Conn {
            state: State::Closed,
            link,
            started: 0,
            limit: u32::MAX,
            waiting_since: now,
            unheard: false,
            offered: false,
            thinking: None,
            requested: false,
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> State {
        self.state
    }

    #[inline]
    pub(crate) fn set_state(&mut self, state: State) {
        self.state = state;
    }

    #[inline]
    pub(crate) fn waiting_since(&self) -> Instant {
        self.waiting_since
    }

    pub(crate) fn set_waiting_since(&mut self, now: Instant) {
        self.waiting_since = now;
    }

    /// Opened before the start and nothing received on it yet ([`Conn::adopt`]).
    #[inline]
    pub(crate) fn unheard(&self) -> bool {
        self.unheard
    }

    /// Bytes arrived from the server.
    #[inline]
    pub(crate) fn heard(&mut self) {
        self.unheard = false;
    }

    /// One more request started on it.
    #[inline]
    pub(crate) fn count_start(&mut self) {
        self.started = self.started.saturating_add(1);
    }

    /// Whether the request it takes next is the last it carries (`first`: the one that
    /// opened it, counted at the open).
    #[inline(always)]
    pub(crate) fn is_last(&self, first: bool) -> bool {
        let nth = if first { self.started } else { self.started.saturating_add(1) };
        nth >= self.limit
    }

    /// A request went to its protocol.
    #[inline(always)]
    pub(crate) fn requested(&mut self) {
        self.requested = true;
    }

    /// Until when it pauses, if it does.
    #[inline(always)]
    pub(crate) fn thinking(&self) -> Option<Instant> {
        self.thinking
    }

    /// It pauses until `until` before its next request.
    pub(crate) fn think_until(&mut self, until: Instant) {
        self.thinking = Some(until);
        self.requested = false;
    }

    pub(crate) fn end_think(&mut self) {
        self.thinking = None;
    }
}

impl<'a, L: Link<'a>> Conn<L> {
    /// The request that opened it, if it has not been handed to the protocol yet.
    #[inline]
    pub(crate) fn take_first(&mut self) -> Option<Exchange> {
        self.link.take_first()
    }

    pub(crate) fn first(&self) -> Option<&Exchange> {
        self.link.first()
    }

    /// Requests in flight on it, the first one included while it connects.
    #[inline]
    pub(crate) fn in_flight(&self) -> u32 {
        self.link.in_flight() + u32::from(self.link.first().is_some())
    }

    /// A request may start on it now.
    #[inline(always)]
    pub(crate) fn has_room(&self) -> bool {
        self.state == State::Open
            && self.started < self.limit
            && self.thinking.is_none()
            && self.link.can_open()
    }

    /// Its requests have ended since it last paused, none is in flight and none waits for
    /// it: it is to pause now (closed loop with think time).
    #[inline(always)]
    pub(crate) fn idle_after_request(&self) -> bool {
        self.requested && self.thinking.is_none() && self.in_flight() == 0
    }

    /// No request will start on it again, and none is in flight: it is done.
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        self.state == State::Open
            && self.in_flight() == 0
            && (self.started >= self.limit || self.link.is_closing())
    }

    /// Closed, about to open for `first`: it may carry `limit` requests.
    #[inline]
    pub(crate) fn reopen(&mut self, first: Exchange, limit: u32) {
        // A closed connection's link is closed already (only `close` closes one).
        if self.state != State::Closed {
            self.close();
        }
        self.unheard = false;
        self.thinking = None;
        self.requested = true;
        self.limit = limit;
        self.started = 1;
        self.link.hold_first(first);
        self.state = State::Connecting;
    }

    /// Opened before the start (warm.rs): open with no request yet, its preface queued to go
    /// with its first requests. It may carry `limit` requests.
    pub(crate) fn adopt(&mut self, t: Transport, limit: u32, throttle: Option<Throttle>) {
        self.close();
        self.link.adopt(t, throttle);
        self.limit = limit;
        self.started = 0;
        self.open();
        self.unheard = true;
    }

    /// Drops the socket; the protocol starts afresh next time.
    pub(crate) fn close(&mut self) {
        self.state = State::Closed;
        self.unheard = false;
        self.link.close();
    }

    /// The transport is ready: what the protocol says first goes first.
    #[inline]
    pub(crate) fn open(&mut self) {
        self.state = State::Open;
        self.link.start();
    }
}
