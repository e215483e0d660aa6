//! HTTP/1's protocol seam: what an HTTP/1 connection speaks, modelled on h2load's `Session`
//! (nghttp2's src/h2load_session.h). HTTP/2 and HTTP/3 have their own (mux/, below).
//!
//! A [`Session`] turns requests into bytes to write, and response bytes into complete or
//! failed requests, each an [`Exchange`] with its own timing. It knows nothing of sockets,
//! the schedule or the recorder: the connection (conn.rs) moves bytes between it and the
//! [`crate::transport::Transport`], and the worker decides when the next request starts
//! and records each outcome.
//!
//! h2load's methods and ours:
//! - `on_connect`: [`Session::on_connect`], once the transport is ready;
//! - `submit_request`: [`Session::submit`], a request to send (while fewer than
//!   [`Session::max_concurrent_streams`] are in flight);
//! - `on_write`: [`Session::to_write`] and [`Session::wrote`], the bytes to send next;
//! - `on_read`: [`Session::on_read`], response bytes. Pull style: it returns at the end of
//!   each response ([`Fed::Complete`]) so that the worker records it before the next is
//!   parsed, with no callback and no allocation;
//! - `max_concurrent_streams`: [`Session::max_concurrent_streams`].
//!
//! It is an enum, not a trait object: a `match` per call, which the compiler removes while
//! HTTP/1 is the only variant, so HTTP/1's per-request cost does not grow.
//!
//! HTTP/1.1 ([`Http1`], session/http1.rs) is the first kind: one request at a time, or a
//! pipelined batch (`max_concurrent_streams` = the pipeline depth) whose responses come back
//! in request order; the connection's last request asks the server to close.
//!
//! HTTP/2 and HTTP/3 did not fit this seam as a variant: their connection has room, not a
//! current request, so they have their own worker (mux/), which reuses [`Exchange`] for each
//! stream's moments. This seam is HTTP/1's (with pipelining's batch).

mod http1;

use std::time::{Duration, Instant};

use herd_proto::Head;
use herd_stats::FailureKind;

use crate::recorder::Timing;
use crate::workload::Workload;

pub(crate) use http1::Http1;

/// What a connection speaks.
pub(crate) enum Session {
    Http1(Http1),
}

/// One request on a connection, and its moments so far (what HTTP/2 calls a stream, less
/// the protocol's own state).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exchange {
    /// Which of the workload's requests.
    req: usize,
    /// The last its connection carries (sent asking the server to close).
    last: bool,
    intended: Instant,
    ready: Instant,
    start: Instant,
    connected: Option<Instant>,
    written: Option<Instant>,
    first_byte: Option<Instant>,
    /// Response bytes read for it.
    bytes_read: u64,
}

/// What bytes fed to a session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// Every byte was taken; the response needs more.
    More,
    /// The current response ended after `consumed` bytes of the input; the rest, if any,
    /// comes after it.
    Complete { consumed: usize },
    /// The bytes cannot be the response: the request fails, and the connection closes.
    Failed(FailureKind),
}

/// What the connection does after a complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Carry the next request.
    Reuse,
    /// Close it now: herd does not want it, or the body ended with the connection.
    Close,
    /// Wait for the server to close, as it said it would, so that TIME_WAIT stays on its side
    /// (as with ab) and the request ends when the connection does.
    AwaitClose,
}

/// What the server's close meant for the response in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtEof {
    /// It completed it (a body delimited by the close).
    Complete,
    /// Nothing of a response had arrived.
    NoResponse,
    /// It cut a response short.
    Broken,
}

/// A complete response, as the session holds it.
pub(crate) struct Response<'a> {
    pub(crate) head: &'a Head,
    pub(crate) body_bytes: u64,
    /// The `Server` header, when it was asked for (and the response had one).
    pub(crate) server: Option<&'a [u8]>,
    /// Request bytes written for it.
    pub(crate) bytes_written: u64,
}

impl Exchange {
    /// Request `req`, starting at `now` (closed loop: due now, ready now).
    #[inline(always)]
    pub(crate) fn new(req: usize, last: bool, now: Instant) -> Exchange {
        Exchange {
            req,
            last,
            intended: now,
            ready: now,
            start: now,
            connected: None,
            written: None,
            first_byte: None,
            bytes_read: 0,
        }
    }

    /// Open loop: the request was due at `intended`, and a connection free for it at `ready`.
    #[inline(always)]
    pub(crate) fn due(self, intended: Instant, ready: Instant) -> Exchange {
        Exchange { intended, ready, ..self }
    }

    /// The same request again on a new connection (the keep-alive race): its due times stay.
    #[inline]
    pub(crate) fn again(&self, last: bool, now: Instant) -> Exchange {
        Exchange::new(self.req, last, now).due(self.intended, self.ready)
    }

    #[inline]
    pub(crate) fn req(&self) -> usize {
        self.req
    }

    #[inline]
    pub(crate) fn last(&self) -> bool {
        self.last
    }

    #[inline]
    pub(crate) fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// It has had `timeout` since it started (a pipelined request: since its batch started)
    /// and is aborted. Computed at the periodic check, not stored per request.
    pub(crate) fn timed_out(&self, now: Instant, timeout: Duration) -> bool {
        now.saturating_duration_since(self.start) >= timeout
    }

    /// Its moments, ending at `end`.
    #[inline(always)]
    pub(crate) fn timing(&self, end: Instant) -> Timing {
        Timing {
            intended: self.intended,
            ready: self.ready,
            start: self.start,
            connected: self.connected,
            written: self.written,
            first_byte: self.first_byte,
            end,
        }
    }

    #[inline]
    pub(crate) fn connected_at(&mut self, now: Instant) {
        self.connected = Some(now);
    }

    /// Its last request byte went out at `now` (HTTP/2: the flush that carried its frames).
    #[inline]
    pub(crate) fn written_at(&mut self, now: Instant) {
        self.written = Some(now);
    }

    #[inline]
    pub(crate) fn is_written(&self) -> bool {
        self.written.is_some()
    }

    /// `n` bytes arrived for it at `now` (the first byte's moment is kept).
    #[inline(always)]
    pub(crate) fn read(&mut self, n: usize, now: Instant) {
        if self.first_byte.is_none() {
            self.first_byte = Some(now);
        }
        self.bytes_read += n as u64;
    }
}

impl Session {
    pub(crate) fn http1(limits: herd_proto::Limits, depth: u32, now: Instant) -> Session {
        Session::Http1(Http1::new(limits, depth, now))
    }

    /// Requests the connection may carry at once.
    #[inline]
    pub(crate) fn max_concurrent_streams(&self) -> u32 {
        match self {
            Session::Http1(s) => s.max_concurrent_streams(),
        }
    }

    /// The transport is ready (TCP connected, TLS handshake done).
    #[inline]
    pub(crate) fn on_connect(&mut self) {
        match self {
            Session::Http1(_) => {}
        }
    }

    /// Queues request `ex` (its bytes from `workload`) for writing. `want_server`: capture its
    /// `Server` header.
    #[inline(always)]
    pub(crate) fn submit(&mut self, ex: Exchange, workload: &Workload, want_server: bool) {
        match self {
            Session::Http1(s) => s.submit(ex, workload, want_server),
        }
    }

    /// The bytes to write next; empty when everything submitted is written.
    #[inline(always)]
    pub(crate) fn to_write<'a>(&'a self, workload: &'a Workload) -> &'a [u8] {
        match self {
            Session::Http1(s) => s.to_write(workload),
        }
    }

    /// `n` bytes of [`Session::to_write`] were written.
    #[inline]
    pub(crate) fn wrote(&mut self, n: usize) {
        match self {
            Session::Http1(s) => s.wrote(n),
        }
    }

    /// Everything submitted is written, at `now`.
    #[inline]
    pub(crate) fn written(&mut self, now: Instant) {
        match self {
            Session::Http1(s) => s.written(now),
        }
    }

    /// Request bytes written so far for the current request (or batch).
    #[inline]
    pub(crate) fn bytes_written(&self) -> usize {
        match self {
            Session::Http1(s) => s.bytes_written(),
        }
    }

    /// Feeds response bytes that arrived at `now`.
    #[inline(always)]
    pub(crate) fn on_read(&mut self, data: &[u8], now: Instant) -> Fed {
        match self {
            Session::Http1(s) => s.on_read(data, now),
        }
    }

    /// Bytes after a complete response (they make it fail as an overrun): counted with it.
    #[inline]
    pub(crate) fn on_trailing(&mut self, n: usize) {
        match self {
            Session::Http1(s) => s.on_trailing(n),
        }
    }

    /// The server closed: what that meant for the response in progress.
    #[inline]
    pub(crate) fn on_eof(&mut self) -> AtEof {
        match self {
            Session::Http1(s) => s.on_eof(),
        }
    }

    /// What to do with the connection after the response that just completed; None when
    /// there is no complete response.
    #[inline]
    pub(crate) fn after(&self) -> Option<After> {
        match self {
            Session::Http1(s) => s.after(),
        }
    }

    /// The response that just completed; with its `Server` header if `want_server`.
    #[inline(always)]
    pub(crate) fn response<'a>(
        &'a self,
        workload: &Workload,
        want_server: bool,
    ) -> Option<Response<'a>> {
        match self {
            Session::Http1(s) => s.response(workload, want_server),
        }
    }

    /// The request whose response is being read (or was last).
    #[inline]
    pub(crate) fn current(&self) -> &Exchange {
        match self {
            Session::Http1(s) => s.current(),
        }
    }

    #[inline]
    pub(crate) fn current_mut(&mut self) -> &mut Exchange {
        match self {
            Session::Http1(s) => s.current_mut(),
        }
    }

    /// Requests in flight behind the current one.
    #[inline]
    pub(crate) fn queued(&self) -> usize {
        match self {
            Session::Http1(s) => s.queued(),
        }
    }

    /// The current request has ended (its outcome is recorded). True when a request queued
    /// behind it is now the current one, its response next.
    #[inline]
    pub(crate) fn finish(&mut self, workload: &Workload) -> bool {
        match self {
            Session::Http1(s) => s.finish(workload),
        }
    }

    /// Takes the next request queued behind the current one (to fail it).
    #[inline]
    pub(crate) fn take_queued(&mut self) -> Option<usize> {
        match self {
            Session::Http1(s) => s.take_queued(),
        }
    }

    /// The connection is gone: nothing is in flight any more.
    #[inline]
    pub(crate) fn reset(&mut self) {
        match self {
            Session::Http1(s) => s.reset(),
        }
    }
}
