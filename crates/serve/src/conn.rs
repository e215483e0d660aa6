//! One client connection's state machine: write what is queued, answer every complete request
//! already buffered (pipelining, in order), read more, repeat until the socket would block, then
//! tell the event loop what to wait for. Every connection starts here; one whose first bytes are
//! HTTP/2's preface, or its request line at least (or whose TLS handshake chose `h2`), asks to
//! become an HTTP/2 connection (`Drive::Upgrade`, h2/), taking the bytes read so far along.
//! Also decides persistence, reads request bodies (skipped,
//! or streamed into the response by `/echo`), holds back a response that must wait (`/sleep`,
//! `/stall`), and closes without losing the last response. Does not own the event loop, timers
//! or accept (worker.rs) and does not decide answers (router.rs).
//!
//! The socket is registered edge-triggered for both readable and writable events, once, so no
//! `epoll_ctl` is needed per request. Edge-triggered means an event arrives only on a change, so
//! [`Conn::drive`] returns `Wait` only after the direction it waits on reported `WouldBlock`;
//! when it stops early to be fair to other connections it returns `Yield`, and the worker calls
//! it again on its next turn without waiting for an event.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::date::DateCache;
use crate::h2::H2Conn;
use crate::read_buf::{Limits, ReadBuf, Scan};
use crate::request::{self, BodyFraming, HeadError, Method};
use crate::request_body::{BadChunk, RequestBody};
use crate::response::{Persist, Reply, Responder, Status};
use crate::route::Route;
use crate::router;
use crate::transport::Transport;
use crate::worker::Ctx;
use crate::write_queue::{Flushed, WriteQueue, HIGH_WATER};

/// What the event loop should do with a connection after [`Conn::drive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drive {
    /// Blocked on the socket: wait for its next event.
    Wait,
    /// Stopped to let others run: drive again on the next turn.
    Yield,
    /// Done: close it.
    Close,
    /// A response is held until this instant: drive again then (the worker's timer), or on a
    /// socket event before it.
    Sleep(Instant),
    /// The client speaks HTTP/2: hand the connection to an HTTP/2 one ([`Conn::into_h2`]).
    Upgrade,
}

/// Bytes one `drive` may write before yielding, so a fast reader of a large body cannot keep
/// the worker from its other connections.
const WRITE_BUDGET: u64 = 4 << 20;

/// Write–answer–read rounds one `drive` may run before yielding, so a client pipelining
/// requests as fast as they are answered cannot either.
const MAX_ROUNDS: usize = 16;

/// How long a closing connection keeps reading (and discarding) what the client still sends,
/// at most; see [`Conn::begin_close`].
const LINGER: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub(crate) struct Conn {
    io: Transport,
    peer: SocketAddr,
    rbuf: ReadBuf,
    wq: WriteQueue,
    /// The body of the request answered last, while it is still arriving.
    body: Option<RequestBody>,
    /// The response answered last closes the connection, but its request body is still
    /// being read (and, for `/echo`, streamed into the response): close once it has been.
    close_after_body: bool,
    /// The response queued last waits until then (see [`WriteQueue::hold_from`]).
    hold: Option<Hold>,
    phase: Phase,
    /// The client shut down its sending side: answer what is buffered, then close.
    peer_closed: bool,
    /// Last time a request was read or a response byte written; the idle timeout counts from it.
    last_progress: Instant,
    /// The socket may hold bytes not read yet. False after a read that returned less than it
    /// had room for (the socket was emptied); set again by the worker when epoll reports the
    /// socket readable. Edge-triggered epoll reports every arrival after that read, so waiting
    /// without another read is safe, and it saves the read that would only say EAGAIN: one
    /// system call of about five per keep-alive request.
    maybe_readable: bool,
    /// Epoll reported the peer's FIN (or an error): a short read does not mean there is nothing
    /// left, since the end of stream (or the error) is only seen by reading once more.
    fin_reported: bool,
    /// Whether the connection may turn out to be HTTP/2, until its first request shows it
    /// is not (see [`Conn::sniff`]).
    may_be_h2: bool,
    /// It is HTTP/2: `drive` returns `Upgrade`.
    upgrade: bool,
}

/// What the first bytes of a connection say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sniff {
    Http1,
    Http2,
    /// A prefix of the preface so far: read more.
    NeedMore,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hold {
    until: Instant,
    /// The worker has a timer for `until` (one per hold, however many events arrive meanwhile).
    timer_set: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Open,
    /// The last response queued says `Connection: close`: write it, then close.
    Closing,
    /// Our side is shut down; discarding input until the client closes or the deadline passes.
    Lingering {
        until: Instant,
    },
}

/// The bytes of the preface that decide for HTTP/2: its request line, `PRI * HTTP/2.0\r\n`,
/// which no HTTP/1 request has. A client that sends it means HTTP/2, and the rest of the
/// preface is the HTTP/2 connection's to check: one that goes wrong there is answered as RFC
/// 9113 §3.4 says (GOAWAY PROTOCOL_ERROR, then the close), not as an HTTP/1 request.
const PREFACE_LINE: usize = 16;

/// What the first bytes of a plain connection say (see [`PREFACE_LINE`]).
fn sniff_bytes(data: &[u8]) -> Sniff {
    let line = &herd_proto::h2::PREFACE[..PREFACE_LINE];
    let n = data.len().min(line.len());
    if data[..n] != line[..n] {
        Sniff::Http1
    } else if n == line.len() {
        Sniff::Http2
    } else {
        Sniff::NeedMore
    }
}

impl Conn {
    /// `h2`: whether the connection may speak HTTP/2 (with prior knowledge, or by ALPN).
    pub(crate) fn new(
        io: Transport,
        peer: SocketAddr,
        limits: Limits,
        now: Instant,
        h2: bool,
    ) -> Conn {
        Conn {
            io,
            peer,
            rbuf: ReadBuf::new(limits),
            wq: WriteQueue::new(),
            body: None,
            close_after_body: false,
            hold: None,
            phase: Phase::Open,
            peer_closed: false,
            last_progress: now,
            maybe_readable: true,
            fin_reported: false,
            may_be_h2: h2,
            upgrade: false,
        }
    }

    /// The HTTP/2 connection this one becomes (after `Drive::Upgrade`), with the bytes read
    /// so far.
    pub(crate) fn into_h2(self, limits: Limits, now: Instant) -> H2Conn {
        H2Conn::new(self.io, self.peer, self.rbuf.unconsumed(), limits, now)
    }

    /// The ring's stream under the connection, if it runs on an io_uring worker.
    pub(crate) fn ring_stream(&mut self) -> Option<&mut crate::transport::RingStream> {
        self.io.ring_stream()
    }

    /// The connection's transport, to close it through the ring.
    pub(crate) fn into_transport(self) -> Transport {
        self.io
    }

    /// Whether the connection is HTTP/2: ALPN decides over TLS; otherwise (TCP, or TLS without
    /// ALPN) its first bytes do: HTTP/2's preface, which no HTTP/1 request starts with.
    /// Called only before the first request, so HTTP/1 pays for it once per connection.
    fn sniff(&self) -> Sniff {
        match self.io.alpn() {
            Some(b"h2") => return Sniff::Http2,
            Some(_) => return Sniff::Http1,
            None if self.io.is_handshaking() => return Sniff::NeedMore,
            None => {}
        }
        sniff_bytes(self.rbuf.unconsumed())
    }

    /// Epoll reported the socket readable, and whether the peer closed its side or the socket
    /// is in error: read before waiting again.
    pub(crate) fn readable_event(&mut self, closed_or_error: bool) {
        self.maybe_readable = true;
        self.fin_reported |= closed_or_error;
    }

    /// When the connection should be closed if nothing happens.
    pub(crate) fn deadline(&self, idle_timeout: Duration) -> Instant {
        match (self.phase, self.hold) {
            (Phase::Lingering { until }, _) => until,
            // A held response is progress deferred, not idleness.
            (_, Some(hold)) => hold.until.max(self.last_progress) + idle_timeout,
            (Phase::Open | Phase::Closing, None) => self.last_progress + idle_timeout,
        }
    }

    /// Makes all the progress the socket allows now.
    pub(crate) fn drive(&mut self, ctx: &mut Ctx<'_>) -> Drive {
        let mut budget = WRITE_BUDGET;
        for _ in 0..MAX_ROUNDS {
            if let Phase::Lingering { .. } = self.phase {
                return self.linger();
            }
            if self.hold.is_some_and(|hold| ctx.now >= hold.until) {
                self.hold = None;
                self.wq.release();
                self.last_progress = ctx.now;
                // Whatever arrived during the hold is still to be read.
                self.maybe_readable = true;
            }
            let mut written = 0;
            let flushed = self.wq.flush(&mut self.io, &mut budget, &mut written);
            if written > 0 {
                ctx.counters.add_bytes(written);
                self.last_progress = ctx.now;
            }
            match flushed {
                Ok(Flushed::Done) => {}
                Ok(Flushed::Blocked) => return Drive::Wait,
                Ok(Flushed::Yield) => return Drive::Yield,
                Ok(Flushed::Held) => return self.sleep(),
                Err(_) => return Drive::Close,
            }
            if self.phase == Phase::Closing {
                return self.begin_close(ctx.now);
            }
            self.answer_buffered(ctx);
            if self.upgrade {
                return Drive::Upgrade;
            }
            if self.wq.queued() > 0 || self.wq.has_body() || self.phase != Phase::Open {
                // Something to write (or a close to begin): flush it next round.
                continue;
            }
            if self.peer_closed {
                // Nothing complete is left and nothing more will come.
                return Drive::Close;
            }
            if !self.maybe_readable {
                return Drive::Wait;
            }
            match self.rbuf.fill(&mut self.io) {
                Ok(0) => self.peer_closed = true,
                Ok(_) => {
                    self.maybe_readable =
                        self.fin_reported || !self.rbuf.drained() || !self.io.short_read_drains();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.maybe_readable = false;
                    return Drive::Wait;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Drive::Close,
            }
        }
        Drive::Yield
    }

    /// The output is held: ask for a timer once per hold.
    fn sleep(&mut self) -> Drive {
        match &mut self.hold {
            Some(hold) if !hold.timer_set => {
                hold.timer_set = true;
                Drive::Sleep(hold.until)
            }
            Some(_) => Drive::Wait,
            // Cannot happen (the queue holds only with a hold set); waiting is the safe answer.
            None => Drive::Wait,
        }
    }

    /// Reads the body of the request answered last from the buffer, and answers complete
    /// requests after it, until none is left, the output is full, a body is streaming, a
    /// response is held, or the connection is closing.
    fn answer_buffered(&mut self, ctx: &mut Ctx<'_>) {
        let limits = ctx.shared.limits();
        while self.phase == Phase::Open
            && self.hold.is_none()
            && !self.wq.has_body()
            && self.wq.queued() < HIGH_WATER
        {
            if self.may_be_h2 {
                match self.sniff() {
                    Sniff::Http1 => self.may_be_h2 = false,
                    Sniff::Http2 => {
                        self.upgrade = true;
                        break;
                    }
                    Sniff::NeedMore => break,
                }
            }
            if let Some(body) = &mut self.body {
                match body.feed(self.rbuf.unconsumed(), self.wq.buf_mut()) {
                    Ok((n, done)) => {
                        self.rbuf.consume(n);
                        if n > 0 {
                            self.last_progress = ctx.now;
                        }
                        if !done {
                            // Everything buffered belonged to the body: read more.
                            break;
                        }
                        self.body = None;
                        if self.close_after_body {
                            self.close_after_output();
                            break;
                        }
                    }
                    Err(BadChunk) => {
                        // The response has started; all that is left is to end the connection
                        // after it, which tells the client its upload was not taken whole.
                        self.body = None;
                        self.close_after_output();
                        break;
                    }
                }
            }
            match self.rbuf.find_head(limits) {
                Scan::Partial => break,
                Scan::Complete(len) => self.answer(len, ctx),
                Scan::LineTooLong => self.refuse(Status::UriTooLong, ctx),
                Scan::HeadTooLarge => self.refuse(Status::HeaderFieldsTooLarge, ctx),
            }
        }
    }

    /// Answers the head of `len` bytes at the front of the buffer.
    fn answer(&mut self, len: usize, ctx: &mut Ctx<'_>) {
        self.last_progress = ctx.now;
        let head = self.rbuf.head(len);
        let (route, reply, close) = match request::parse_head(head) {
            Ok(mut req) => {
                req.tls = self.io.is_tls();
                let persist = if !req.keep_alive {
                    Persist::Close
                } else if req.minor_version == 0 {
                    Persist::KeepAliveEcho
                } else {
                    Persist::KeepAlive
                };
                if req.expect_continue && req.minor_version == 1 && req.body != BodyFraming::None {
                    // The client waits for this before sending its body (curl waits a second).
                    self.wq.buf_mut().extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                }
                let mark = self.wq.mark();
                let mut r =
                    Responder::new(&mut self.wq, ctx.date, persist, req.method == Method::Head);
                let (route, reply) = router::respond(&req, ctx.shared, ctx.files, &mut r);
                let (hold, sink) = (r.hold, r.body_sink);
                if let Some(delay) = hold {
                    self.wq.hold_from(mark);
                    self.hold = Some(Hold { until: ctx.now + delay, timer_set: false });
                }
                self.body = match req.body {
                    BodyFraming::None => None,
                    BodyFraming::Length(n) => Some(RequestBody::with_length(n, sink)),
                    BodyFraming::Chunked => Some(RequestBody::chunked(sink)),
                };
                (route, reply, persist == Persist::Close)
            }
            Err(e) => {
                let status = match e {
                    HeadError::TooManyHeaders => Status::HeaderFieldsTooLarge,
                    HeadError::Malformed
                    | HeadError::BadHost
                    | HeadError::BadContentLength
                    | HeadError::BadTransferEncoding => Status::BadRequest,
                };
                (Route::Unrouted, error_reply(&mut self.wq, ctx.date, status), true)
            }
        };
        Self::account(ctx, self.peer, head, route, reply);
        self.rbuf.consume(len);
        if close && self.body.is_some() {
            // An echoed body is part of the response: read it before closing (a discarded
            // one is read too, so that closing does not reset the answer away).
            self.close_after_body = true;
        } else if close {
            self.close_after_output();
        }
    }

    /// Writes what is queued, then closes.
    fn close_after_output(&mut self) {
        self.phase = Phase::Closing;
        self.wq.closing();
    }

    /// Answers a head that broke a size limit, and closes: where the next request would start
    /// is unknown.
    fn refuse(&mut self, status: Status, ctx: &mut Ctx<'_>) {
        let reply = error_reply(&mut self.wq, ctx.date, status);
        Self::account(ctx, self.peer, b"-", Route::Unrouted, reply);
        self.close_after_output();
    }

    fn account(ctx: &mut Ctx<'_>, peer: SocketAddr, request: &[u8], route: Route, reply: Reply) {
        let code = reply.status.code();
        ctx.counters.add_response(code, route);
        ctx.log.record(peer.ip(), ctx.date, request, code, reply.body_bytes);
    }

    /// Everything is written and the connection must close. Closing a socket that still has
    /// unread input makes the kernel send RST, and an RST can destroy the response before the
    /// client has read it (a client that sent a 70 KiB head gets its 431 reset away). So if the
    /// client has sent more, shut down our side and read until it closes, as nginx's
    /// `lingering_close` does; otherwise close now. Whether it has sent more is known without a
    /// system call when the last read emptied the socket (the usual case for one request per
    /// connection); data arriving after that is the client's race to lose, as with nginx.
    fn begin_close(&mut self, now: Instant) -> Drive {
        self.io.close_notify();
        if self.peer_closed || (self.rbuf.drained() && self.io.short_read_drains()) {
            return Drive::Close;
        }
        // What is left is the client's to lose: read (and over TLS, discard undecrypted).
        match self.io.discard_some() {
            Ok(n) if n > 0 => {
                if self.io.shutdown_write().is_err() {
                    return Drive::Close;
                }
                self.phase = Phase::Lingering { until: now + LINGER };
                self.linger()
            }
            _ => Drive::Close,
        }
    }

    fn linger(&mut self) -> Drive {
        discard_input(&mut self.io)
    }
}

/// Discards input until the client closes (→ Close) or has nothing more now (→ Wait), at
/// most MAX_ROUNDS reads per turn (→ Yield): a lingering close, HTTP/1's and HTTP/2's.
pub(crate) fn discard_input(io: &mut Transport) -> Drive {
    for _ in 0..MAX_ROUNDS {
        match io.discard_some() {
            Ok(0) => return Drive::Close,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Drive::Wait,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Drive::Close,
        }
    }
    Drive::Yield
}

/// An error page that ends the connection.
fn error_reply(wq: &mut WriteQueue, date: &DateCache, status: Status) -> Reply {
    Responder::new(wq, date, Persist::Close, false).error(status, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preface_s_request_line_decides_for_http2() {
        assert_eq!(sniff_bytes(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Sniff::Http2);
        // A preface that goes wrong after its request line is HTTP/2's to refuse (§3.4).
        assert_eq!(sniff_bytes(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"), Sniff::Http2);
        assert_eq!(sniff_bytes(b"PRI * HTTP/2.0\r\n"), Sniff::Http2);
        assert_eq!(sniff_bytes(b"PRI * HTTP/2.0\r"), Sniff::NeedMore);
        assert_eq!(sniff_bytes(b""), Sniff::NeedMore);
        // Anything else is HTTP/1, including a line that is neither (answered 400 there).
        assert_eq!(sniff_bytes(b"PRI * HTTP/1.1\r\n"), Sniff::Http1);
        assert_eq!(sniff_bytes(b"GET / HTTP/1.1\r\n"), Sniff::Http1);
        assert_eq!(sniff_bytes(b"INVALID CONNECTION PREFACE\r\n\r\n"), Sniff::Http1);
    }
}
