//! One client connection's state machine: write what is queued, answer every complete request
//! already buffered (pipelining, in order), read more, repeat until the socket would block, then
//! tell the event loop what to wait for. Also decides persistence, skips request bodies nobody
//! reads, and closes without losing the last response. Does not own the event loop, timers or
//! accept (worker.rs) and does not decide answers (router.rs).
//!
//! The socket is registered edge-triggered for both readable and writable events, once, so no
//! `epoll_ctl` is needed per request. Edge-triggered means an event arrives only on a change, so
//! [`Conn::drive`] returns `Wait` only after the direction it waits on reported `WouldBlock`;
//! when it stops early to be fair to other connections it returns `Yield`, and the worker calls
//! it again on its next turn without waiting for an event.

use std::io::{self, Read};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use crate::access_log::request_line;
use crate::date::DateCache;
use crate::read_buf::{Limits, ReadBuf, Scan};
use crate::request::{self, BodyFraming, HeadError, Method};
use crate::response::{Persist, Reply, Responder, Status};
use crate::router;
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
    stream: TcpStream,
    peer: SocketAddr,
    rbuf: ReadBuf,
    wq: WriteQueue,
    /// Bytes of the current request's body still to skip before the next head.
    discard: u64,
    phase: Phase,
    /// The client shut down its sending side: answer what is buffered, then close.
    peer_closed: bool,
    /// Last time a request was read or a response byte written; the idle timeout counts from it.
    last_progress: Instant,
    /// TCP_NODELAY is set (see [`Conn::answer`]).
    nodelay: bool,
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

impl Conn {
    pub(crate) fn new(stream: TcpStream, peer: SocketAddr, limits: Limits, now: Instant) -> Conn {
        Conn {
            stream,
            peer,
            rbuf: ReadBuf::new(limits),
            wq: WriteQueue::new(),
            discard: 0,
            phase: Phase::Open,
            peer_closed: false,
            last_progress: now,
            nodelay: false,
        }
    }

    /// When the connection should be closed if nothing happens.
    pub(crate) fn deadline(&self, idle_timeout: Duration) -> Instant {
        match self.phase {
            Phase::Lingering { until } => until,
            Phase::Open | Phase::Closing => self.last_progress + idle_timeout,
        }
    }

    /// Makes all the progress the socket allows now.
    pub(crate) fn drive(&mut self, ctx: &mut Ctx<'_>) -> Drive {
        let mut budget = WRITE_BUDGET;
        for _ in 0..MAX_ROUNDS {
            if let Phase::Lingering { .. } = self.phase {
                return self.linger();
            }
            let mut written = 0;
            let flushed = self.wq.flush(self.stream.as_fd(), &mut budget, &mut written);
            if written > 0 {
                ctx.counters.add_bytes(written);
                self.last_progress = ctx.now;
            }
            match flushed {
                Ok(Flushed::Done) => {}
                Ok(Flushed::Blocked) => return Drive::Wait,
                Ok(Flushed::Yield) => return Drive::Yield,
                Err(_) => return Drive::Close,
            }
            if self.phase == Phase::Closing {
                return self.begin_close(ctx.now);
            }
            if self.answer_buffered(ctx) {
                continue;
            }
            if self.peer_closed {
                // Nothing complete is left and nothing more will come.
                return Drive::Close;
            }
            match self.rbuf.fill(&mut self.stream) {
                Ok(0) => self.peer_closed = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Drive::Wait,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Drive::Close,
            }
        }
        Drive::Yield
    }

    /// Answers complete requests in the buffer until none is left, the output is full, a body
    /// is streaming, or the connection is closing. Returns whether it answered any.
    fn answer_buffered(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let limits = ctx.shared.limits();
        let mut answered = false;
        while self.phase == Phase::Open && !self.wq.has_body() && self.wq.queued() < HIGH_WATER {
            if self.discard > 0 {
                self.discard -= self.rbuf.discard(self.discard);
                if self.discard > 0 {
                    break;
                }
            }
            match self.rbuf.find_head(limits) {
                Scan::Partial => break,
                Scan::Complete(len) => self.answer(len, ctx),
                Scan::LineTooLong => self.refuse(Status::UriTooLong, ctx),
                Scan::HeadTooLarge => self.refuse(Status::HeaderFieldsTooLarge, ctx),
            }
            answered = true;
        }
        answered
    }

    /// Answers the head of `len` bytes at the front of the buffer.
    fn answer(&mut self, len: usize, ctx: &mut Ctx<'_>) {
        self.last_progress = ctx.now;
        let head = self.rbuf.head(len);
        let (reply, close, body) = match request::parse_head(head) {
            Ok(req) => {
                // A chunked body cannot be skipped without decoding it (not in this slice), so
                // the connection ends after the answer.
                let chunked = req.body == BodyFraming::Chunked;
                let persist = if !req.keep_alive || chunked {
                    Persist::Close
                } else if req.minor_version == 0 {
                    Persist::KeepAliveEcho
                } else {
                    Persist::KeepAlive
                };
                let mut r = Responder {
                    wq: &mut self.wq,
                    date: ctx.date,
                    persist,
                    head_only: req.method == Method::Head,
                };
                let reply = if chunked {
                    r.error(Status::NotImplemented, &[])
                } else {
                    router::respond(&req, ctx.shared, &mut r)
                };
                // Nagle's algorithm would hold back a response written while an earlier one is
                // unacknowledged, up to the client's delayed-ACK timeout (40 ms on Linux): that
                // happens on a kept-alive connection only. A closing one flushes on close, so
                // connection-per-request traffic is spared the setsockopt, as in nginx.
                if persist != Persist::Close && !self.nodelay {
                    self.nodelay = self.stream.set_nodelay(true).is_ok();
                }
                let body = match req.body {
                    BodyFraming::Length(n) => n,
                    BodyFraming::None | BodyFraming::Chunked => 0,
                };
                (reply, persist == Persist::Close, body)
            }
            Err(e) => {
                let status = match e {
                    HeadError::TooManyHeaders => Status::HeaderFieldsTooLarge,
                    HeadError::Malformed
                    | HeadError::BadHost
                    | HeadError::BadContentLength
                    | HeadError::BadTransferEncoding => Status::BadRequest,
                };
                (error_reply(&mut self.wq, ctx.date, status), true, 0)
            }
        };
        Self::account(ctx, self.peer, request_line(head), reply);
        self.rbuf.consume(len);
        self.discard = body;
        if close {
            self.phase = Phase::Closing;
        }
    }

    /// Answers a head that broke a size limit, and closes: where the next request would start
    /// is unknown.
    fn refuse(&mut self, status: Status, ctx: &mut Ctx<'_>) {
        let reply = error_reply(&mut self.wq, ctx.date, status);
        Self::account(ctx, self.peer, b"-", reply);
        self.phase = Phase::Closing;
    }

    fn account(ctx: &mut Ctx<'_>, peer: SocketAddr, request_line: &[u8], reply: Reply) {
        let code = reply.status.code();
        ctx.counters.add_response(code);
        ctx.log.record(peer.ip(), ctx.date, request_line, code, reply.body_bytes);
    }

    /// Everything is written and the connection must close. Closing a socket that still has
    /// unread input makes the kernel send RST, and an RST can destroy the response before the
    /// client has read it (a client that sent a 70 KiB head gets its 431 reset away). So if the
    /// client has sent more, shut down our side and read until it closes, as nginx's
    /// `lingering_close` does; otherwise close now. Whether it has sent more is known without a
    /// system call when the last read emptied the socket (the usual case for one request per
    /// connection); data arriving after that is the client's race to lose, as with nginx.
    fn begin_close(&mut self, now: Instant) -> Drive {
        if self.peer_closed || self.rbuf.drained() {
            return Drive::Close;
        }
        let mut scratch = [0u8; 4096];
        match self.stream.read(&mut scratch) {
            Ok(n) if n > 0 => {
                if self.stream.shutdown(Shutdown::Write).is_err() {
                    return Drive::Close;
                }
                self.phase = Phase::Lingering { until: now + LINGER };
                self.linger()
            }
            _ => Drive::Close,
        }
    }

    /// Discards input until the client closes (→ Close) or has nothing more now (→ Wait).
    fn linger(&mut self) -> Drive {
        let mut scratch = [0u8; 16 * 1024];
        for _ in 0..MAX_ROUNDS {
            match self.stream.read(&mut scratch) {
                Ok(0) => return Drive::Close,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Drive::Wait,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Drive::Close,
            }
        }
        Drive::Yield
    }
}

/// An error page that ends the connection.
fn error_reply(wq: &mut WriteQueue, date: &DateCache, status: Status) -> Reply {
    Responder { wq, date, persist: Persist::Close, head_only: false }.error(status, &[])
}
