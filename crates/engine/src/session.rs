//! A request's life on a connection, and HTTP/1's protocol, modelled on h2load's `Session`
//! (nghttp2's src/h2load_session.h).
//!
//! [`Exchange`] is one request and its moments (intended, ready, start, connected, written,
//! first byte), for every protocol: HTTP/2 and HTTP/3 (link/) time their streams with it too.
//!
//! [`Http1`] (session/http1.rs) turns requests into bytes to write, and response bytes into
//! complete or failed requests. It knows nothing of sockets, the schedule or the recorder:
//! its link moves the bytes, and the worker decides when the next request starts. h2load's
//! methods and its:
//! - `submit_request`: [`Http1::submit`], a request to send (while fewer than
//!   [`Http1::max_concurrent_streams`] are in flight: 1, or the pipeline depth, whose
//!   responses come back in request order);
//! - `on_write`: [`Http1::to_write`] and [`Http1::wrote`], the bytes to send next;
//! - `on_read`: [`Http1::on_read`], response bytes. Pull style: it returns at the end of
//!   each response ([`Fed::Complete`]) so that the worker records it before the next is
//!   parsed, with no callback and no allocation.
//!
//! HTTP/1's link (link/h1link.rs) holds an `Http1` and moves bytes between it and its
//! [`crate::transport::Transport`]; HTTP/2 and HTTP/3 are their own links, with streams.

mod http1;

use std::time::{Duration, Instant};

use herd_proto::Head;
use herd_stats::FailureKind;

use crate::recorder::Timing;

pub(crate) use http1::Http1;

/// One request on a connection, and its moments so far (what HTTP/2 calls a stream, less
/// the protocol's own state).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exchange {
    /// Which of the workload's requests.
    req: usize,
    /// The last its connection carries (sent asking the server to close).
    last: bool,
    /// Its moments so far, kept as the recorder reads them: a completed request's are lent,
    /// not copied (`end` is set when it ends, and is `start` until then).
    t: Timing,
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
            t: Timing {
                intended: now,
                ready: now,
                start: now,
                connected: None,
                written: None,
                first_byte: None,
                end: now,
            },
            bytes_read: 0,
        }
    }

    /// Open loop: the request was due at `intended`, and a connection free for it at `ready`.
    #[inline(always)]
    pub(crate) fn due(mut self, intended: Instant, ready: Instant) -> Exchange {
        self.t.intended = intended;
        self.t.ready = ready;
        self
    }

    /// This request, due when `batch` was (a request pipelined behind it).
    #[inline]
    pub(crate) fn due_as(self, batch: &Exchange) -> Exchange {
        self.due(batch.t.intended, batch.t.ready)
    }

    /// Marks it the last its connection carries (or not).
    #[inline(always)]
    pub(crate) fn set_last(&mut self, last: bool) {
        self.last = last;
    }

    /// The same request again on a new connection (the keep-alive race): its due times stay.
    #[inline]
    pub(crate) fn again(&self, last: bool, now: Instant) -> Exchange {
        Exchange::new(self.req, last, now).due(self.t.intended, self.t.ready)
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
        now.saturating_duration_since(self.t.start) >= timeout
    }

    /// Its moments, ending at `end`.
    #[inline(always)]
    pub(crate) fn timing(&self, end: Instant) -> Timing {
        Timing { end, ..self.t }
    }

    /// It ended at `end` ([`Exchange::moments`] then lends its timing to the recorder).
    #[inline(always)]
    pub(crate) fn end_at(&mut self, end: Instant) {
        self.t.end = end;
    }

    /// Its moments, `end` as last set by [`Exchange::end_at`].
    #[inline(always)]
    pub(crate) fn moments(&self) -> &Timing {
        &self.t
    }

    #[inline]
    pub(crate) fn connected_at(&mut self, now: Instant) {
        self.t.connected = Some(now);
    }

    /// Its last request byte went out at `now` (HTTP/2: the flush that carried its frames).
    #[inline]
    pub(crate) fn written_at(&mut self, now: Instant) {
        self.t.written = Some(now);
    }

    #[inline]
    pub(crate) fn is_written(&self) -> bool {
        self.t.written.is_some()
    }

    /// `n` bytes arrived for it at `now` (the first byte's moment is kept).
    #[inline(always)]
    pub(crate) fn read(&mut self, n: usize, now: Instant) {
        if self.t.first_byte.is_none() {
            self.t.first_byte = Some(now);
        }
        self.bytes_read += n as u64;
    }
}
