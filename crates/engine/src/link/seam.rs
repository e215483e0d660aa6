//! The seam between the worker (worker.rs) and what its connections speak: HTTP/1 and
//! HTTP/2 on a TCP or TLS transport (h1link.rs, h2link.rs), HTTP/3 on QUIC (h3link.rs).
//!
//! The worker is written once, over [`Link`], and built once per protocol (static dispatch:
//! nothing is called through a pointer, and the worker asks no question of the protocol's
//! name). It decides who starts the next request and keeps the timers. A link opens its
//! connection, moves its bytes, and reports each request's end through [`Outcomes`] — h2load's
//! `Session` (nghttp2's src/h2load_session.h): `on_connect` is [`Link::start`],
//! `submit_request` [`Link::submit`], `on_read` [`Link::receive`], `on_write` [`Link::send`],
//! `max_concurrent_streams` [`Link::can_open`].
//!
//! On epoll a link does its own readiness I/O: its socket is in the worker's mio poll, and the
//! worker hands it each readiness event ([`Readiness`]) and each of its timers; which
//! readiness means what (a connect that completed, a socket drained) is the link's to know.
//! On io_uring ([`Via::Ring`]) the worker's ring moves the bytes: the link queues what it
//! writes ([`Link::outbox`]) and is handed what arrived ([`Link::received`]); its protocol code
//! is the same.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{OwnedFd, RawFd};
use std::time::{Duration, Instant};

use herd_stats::FailureKind;
use mio::{Registry, Token};

use super::h2::Event;
use super::tcp::{Read, Tcp};
use crate::quic::QuicStats;
use crate::recorder::{Completed, Failed};
use crate::session::Exchange;
use crate::throttle::Throttle;
use crate::transport::{Fault, Transport};
use crate::TlsInfo;

/// What one readiness event said of a connection's socket.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Readiness {
    pub(crate) readable: bool,
    pub(crate) writable: bool,
    pub(crate) error: bool,
    /// The peer closed its side (EPOLLRDHUP or EPOLLHUP).
    pub(crate) read_closed: bool,
}

impl Readiness {
    #[inline]
    pub(crate) fn of(ev: &mio::event::Event) -> Readiness {
        Readiness {
            readable: ev.is_readable(),
            writable: ev.is_writable(),
            error: ev.is_error(),
            read_closed: ev.is_read_closed(),
        }
    }

    /// A ring poll's events (`poll(2)`'s bits), as epoll's are read.
    pub(crate) fn of_poll(mask: u32) -> Readiness {
        let has = |flag: libc::c_short| mask & flag as u32 != 0;
        Readiness {
            readable: has(libc::POLLIN),
            writable: has(libc::POLLOUT),
            error: has(libc::POLLERR),
            read_closed: has(libc::POLLHUP) || has(libc::POLLRDHUP),
        }
    }

    /// The socket is closed or in error: a read will say how.
    #[inline]
    pub(crate) fn hangup(&self) -> bool {
        self.read_closed || self.error
    }
}

/// Where an opening connection stands, after it started or after an event.
#[derive(Debug)]
pub(crate) struct Progress {
    /// It reached the server just now (TCP's handshake, or QUIC's): the run has a target.
    pub(crate) connected: bool,
    pub(crate) step: Opening,
}

#[derive(Debug)]
pub(crate) enum Opening {
    /// Still opening: an event or its timer will say more.
    Pending,
    /// Ready for requests.
    Ready,
    /// It failed with `kind`.
    Failed(FailureKind, Option<io::Error>),
    /// Nothing answered at this address (a refused or unroutable connect): the next
    /// resolved address may.
    Refused(io::Error),
}

impl Progress {
    #[inline]
    pub(crate) fn pending() -> Progress {
        Progress::at(Opening::Pending)
    }

    /// Ready for requests, without having just connected (plain TCP marks `connected` itself).
    #[inline]
    pub(crate) fn ready() -> Progress {
        Progress::at(Opening::Ready)
    }

    #[inline]
    pub(crate) fn failed(kind: FailureKind, e: Option<io::Error>) -> Progress {
        Progress::at(Opening::Failed(kind, e))
    }

    #[inline]
    pub(crate) fn refused(e: io::Error) -> Progress {
        Progress::at(Opening::Refused(e))
    }

    #[inline]
    fn at(step: Opening) -> Progress {
        Progress { connected: false, step }
    }
}

/// What one receive did.
#[derive(Debug)]
pub(crate) enum Received {
    /// Bytes or datagrams arrived at `now` and their outcomes are queued as events. `heard`:
    /// any byte at all; `more`: read again now (the socket may hold more); `eof`: the peer
    /// closed behind them.
    Data { now: Instant, heard: bool, more: bool, eof: bool },
    /// Nothing more now: the next readiness event says when.
    Blocked,
    /// Reading waits for the receive-rate cap (until [`Link::timer`]).
    Paused,
    /// The peer closed.
    Eof,
    /// The connection failed with `kind`; its open requests are the worker's to fail.
    Failed(FailureKind, Option<io::Error>),
    /// The peer broke the protocol: every open request has failed (its events queued) and
    /// the goodbye is sent, best effort. The connection ends.
    Broken { now: Instant },
}

/// Where a link's requests end: the worker's recorder, and the requests to send again. A
/// link reports each outcome as it decides it (HTTP/1, between two pipelined responses of one
/// read, so that a response's `Server` header is read from the parser before the next one
/// is parsed), or queues it and reports it at [`Link::drain`] (HTTP/2, HTTP/3).
pub(crate) trait Outcomes {
    /// The connection's number in the run, recorded with each outcome.
    fn conn(&self) -> u32;
    /// A complete response. False: the run has stopped, decide nothing more.
    fn completed(&mut self, c: &Completed<'_>) -> bool;
    /// A request that failed. False: the run has stopped.
    fn failed(&mut self, f: &Failed) -> bool;
    /// A request the server did not process (the keep-alive race, REFUSED_STREAM, above a
    /// GOAWAY): it goes again on whichever connection has room, uncounted, its due times kept.
    fn retry(&mut self, ex: Exchange);
}

/// A request whose outcome is decided, as HTTP/2 and HTTP/3 keep it until [`Link::drain`].
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
    /// Reports `ev`, the outcome of this request, as decided at `now`.
    pub(crate) fn report(&self, ev: Event, now: Instant, out: &mut impl Outcomes) {
        let conn = out.conn();
        match ev {
            Event::Done(_) => {
                out.completed(&Completed {
                    timing: &self.ex.timing(now),
                    status: self.status,
                    reusable: true,
                    body_bytes: self.body,
                    bytes_read: self.ex.bytes_read(),
                    bytes_written: self.bytes_written,
                    reused: !self.first,
                    server: None,
                    request: self.ex.req(),
                    conn,
                });
            }
            Event::Failed(_, kind) => {
                out.failed(&Failed {
                    kind,
                    timing: self.ex.timing(now),
                    bytes_read: self.ex.bytes_read(),
                    bytes_written: self.bytes_written,
                    os_error: None,
                    reused: !self.first,
                    request: self.ex.req(),
                    conn,
                });
            }
            Event::Retry(_) => out.retry(self.ex),
        }
    }
}

/// What the worker's ring is to do for a connection (io_uring), queued as the worker decides
/// it and handed to the ring in order before its next wait, or at once inside a turn.
#[derive(Debug)]
pub(crate) enum RingOp {
    /// Connect connection `.0`'s socket to the address.
    Connect(usize, RawFd, SocketAddr),
    /// Keep a receive armed on it (multishot, into the ring's buffers).
    Recv(usize, RawFd),
    /// Say once when its socket is readable (a link that reads its socket itself: QUIC's
    /// UDP socket); polled again once read.
    PollIn(usize, RawFd),
    /// Say once when its socket is writable again (that link's send found it full).
    PollOut(usize, RawFd),
    /// It closes its socket itself: cancel what the ring has on it (its polls).
    Forget(usize),
    /// Receive once, at most `.2` bytes (a paced reader's allowance).
    RecvUpTo(usize, RawFd, u32),
    /// Send what its link has queued ([`Link::outbox`]).
    Send(usize),
    /// Close it: the ring cancels what it still has on the socket, then closes it.
    Close(usize, OwnedFd),
}

/// How the ring is to receive for a connection next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RingRecv {
    /// A multishot receive, armed until the connection ends: reads are not paced.
    Multishot,
    /// One read of at most this many bytes: the receive-rate cap's allowance now.
    UpTo(u32),
    /// Nothing before the link's timer: the cap's pause.
    Paused,
}

/// How a worker's connections do their I/O.
pub(crate) enum Via<'r> {
    /// Readiness: the socket goes in the worker's mio poll and the link reads and writes it.
    Poll(&'r Registry),
    /// Completion: the worker's io_uring ring reads and writes it (TLS's records included).
    Ring(&'r mut Vec<RingOp>),
}

/// Where a connection opens: the worker's poll or ring, its token, and which connection of
/// the run it is toward which of the target's addresses.
pub(crate) struct Dial<'r> {
    pub(crate) via: Via<'r>,
    pub(crate) token: Token,
    /// Index into the target's resolved addresses.
    pub(crate) addr: usize,
    /// The connection's number in the run (`--bind` takes source addresses round robin).
    pub(crate) conn: usize,
}

impl Dial<'_> {
    /// For a link that reads and writes its socket itself (QUIC): the socket in the worker's
    /// poll ([`register`]), or on the ring polled for reading, the ring saying when it is
    /// ready ([`RingOp::PollIn`]).
    pub(crate) fn watch(
        self,
        source: &mut (impl mio::event::Source + std::os::fd::AsRawFd),
    ) -> Result<(), Progress> {
        match self.via {
            Via::Ring(ops) => {
                ops.push(RingOp::PollIn(self.token.0, source.as_raw_fd()));
                Ok(())
            }
            Via::Poll(registry) => register(registry, self.token, source),
        }
    }
}

/// Puts a connection's socket in the worker's poll as `token`, for reading and writing (edge
/// triggered, once). Err: the failed open, as the worker is to see it.
#[inline]
pub(crate) fn register(
    registry: &Registry,
    token: Token,
    source: &mut impl mio::event::Source,
) -> Result<(), Progress> {
    let interest = mio::Interest::READABLE | mio::Interest::WRITABLE;
    registry
        .register(source, token, interest)
        .map_err(|e| Progress::failed(FailureKind::Connect, Some(e)))
}

/// One connection's protocol and its I/O, as the multiplexed worker drives it.
pub(crate) trait Link<'a>: Sized {
    /// What every connection of a worker shares: the requests in this protocol's form, its
    /// settings, its buffers.
    type Ctx;
    /// The run's QUIC figures come from these links (HTTP/3).
    const QUIC: bool;

    fn new(ctx: &Self::Ctx) -> Self;

    // ---- Its TCP connection, for a link that has one (HTTP/1, HTTP/2) ----

    /// Its TCP (or TLS) connection: where the defaults below find the socket, the TLS
    /// session and the receive-rate pause. None (HTTP/3) leaves them to the link.
    #[inline(always)]
    fn tcp(&self) -> Option<&Tcp> {
        None
    }
    #[inline(always)]
    fn tcp_mut(&mut self) -> Option<&mut Tcp> {
        None
    }

    // ---- Opening ----

    /// Starts a connection (the link was closed), its reads under `throttle`.
    fn open(
        &mut self,
        ctx: &mut Self::Ctx,
        dial: Dial<'_>,
        throttle: Option<Throttle>,
        now: Instant,
    ) -> Progress;
    /// Takes a connection opened before the start (warm.rs, TCP and TLS only).
    fn adopt(&mut self, t: Transport, throttle: Option<Throttle>);
    /// An opening connection's readiness event, or (None) its timer.
    fn advance(&mut self, ctx: &mut Self::Ctx, ready: Option<Readiness>) -> Progress;
    /// What its TLS handshake negotiated, once done (None without TLS). Asked once a run.
    fn tls_info(&self) -> Option<TlsInfo> {
        self.tcp().and_then(Tcp::tls_info)
    }
    /// Ready for requests: what the protocol says first (HTTP/2's preface) goes first.
    fn start(&mut self);
    /// Drops the connection; the protocol starts afresh at the next open.
    fn close(&mut self);

    // ---- I/O, open ----

    /// Reads once: a buffer's worth of bytes (into `buf`), or every datagram waiting.
    /// `hangup`: the readiness event said the peer closed or the socket is in error.
    fn receive(
        &mut self,
        ctx: &mut Self::Ctx,
        buf: &mut [u8],
        hangup: bool,
        out: &mut impl Outcomes,
    ) -> Received;
    /// Sends what the protocol has queued, as far as the socket takes it.
    fn send(&mut self, ctx: &mut Self::Ctx) -> Result<(), (FailureKind, Option<io::Error>)>;
    /// The socket is writable again.
    fn on_writable(&mut self, ctx: &mut Self::Ctx) -> Result<(), (FailureKind, Option<io::Error>)>;
    /// When the link wants its timer (QUIC's, or the end of a receive-rate pause).
    #[inline(always)]
    fn timer(&mut self) -> Option<Instant> {
        self.tcp().and_then(Tcp::timer)
    }
    /// Its timer fired; true: read now (a receive-rate pause ended).
    fn on_timer(&mut self, _ctx: &mut Self::Ctx, _now: Instant) -> bool {
        if let Some(tcp) = self.tcp_mut() {
            tcp.resume();
        }
        true
    }

    // ---- I/O through the worker's ring (io_uring): the ring moves the bytes ----

    /// The ring's connect ended.
    fn ring_connected(&mut self, _ctx: &mut Self::Ctx, result: io::Result<()>) -> Progress {
        let e = result.err().unwrap_or_else(|| io::ErrorKind::Unsupported.into());
        Progress::failed(FailureKind::Connect, Some(e))
    }
    /// The ring received `ciphertext` while its TLS handshake runs: taken up to the
    /// handshake's end (the rest is left in it, for [`Link::ring_received`]).
    fn ring_handshake(&mut self, ciphertext: &mut &[u8]) -> Progress {
        match self.tcp_mut() {
            Some(tcp) => tcp.ring_handshake(ciphertext),
            None => Progress::failed(FailureKind::Tls, None),
        }
    }
    /// The ring's receive ended (`None`: the peer closed), or its send failed, while its TLS
    /// handshake ran.
    fn ring_handshake_ended(&mut self, err: Option<io::Error>) -> Progress {
        match self.tcp_mut() {
            Some(tcp) => tcp.ring_handshake_ended(err),
            None => Progress::failed(FailureKind::Tls, err),
        }
    }
    /// What the ring received for it at `now`, spent from the receive-rate cap: handed to
    /// [`Link::received`] as it is, or over TLS decrypted first, a piece of plaintext at a
    /// time (into `plain`, the worker's), each piece's outcomes reported before the next is
    /// decrypted.
    #[inline(always)]
    fn ring_received(
        &mut self,
        ctx: &mut Self::Ctx,
        mut data: &[u8],
        plain: &mut [u8],
        now: Instant,
        out: &mut impl Outcomes,
    ) -> Received {
        match self.tcp_mut() {
            Some(tcp) if tcp.ring_tls() => tcp.spent(data.len()),
            Some(tcp) => {
                tcp.spent(data.len());
                return self.received(ctx, data, now, out);
            }
            None => return self.received(ctx, data, now, out),
        }
        let mut heard = false;
        loop {
            let Some(tcp) = self.tcp_mut() else { return Received::Eof };
            let n = match tcp.decrypt(&mut data, plain) {
                Read::Data { n, .. } => n,
                Read::Blocked | Read::Paused if heard => {
                    return Received::Data { now, heard, more: false, eof: false };
                }
                // Only records with no plaintext (a TLS 1.3 server's session tickets).
                Read::Blocked | Read::Paused => return Received::Blocked,
                Read::Eof if heard => return Received::Data { now, heard, more: false, eof: true },
                Read::Eof => return Received::Eof,
                Read::Failed(Fault::Tls) => return Received::Failed(FailureKind::Tls, None),
                Read::Failed(Fault::Os(e)) => {
                    return Received::Failed(FailureKind::Receive, Some(e))
                }
            };
            match self.received(ctx, plain.get(..n).unwrap_or_default(), now, out) {
                Received::Data { heard: h, .. } => heard |= h,
                other => return other,
            }
        }
    }
    /// Bytes (plaintext) the ring received for it, at `now`.
    fn received(
        &mut self,
        _ctx: &mut Self::Ctx,
        _data: &[u8],
        _now: Instant,
        _out: &mut impl Outcomes,
    ) -> Received {
        Received::Failed(FailureKind::Receive, None)
    }
    /// The ring's receive ended: at the peer's close (None), or with an error.
    fn receive_ended(&mut self, err: Option<io::Error>) -> Received {
        match err {
            None => Received::Eof,
            Some(e) => Received::Failed(FailureKind::Receive, Some(e)),
        }
    }
    /// The ring could not send what it queued.
    fn send_failed(&mut self, e: io::Error) -> (FailureKind, Option<io::Error>) {
        (FailureKind::Write, Some(e))
    }
    /// How the ring is to receive for it next (None: the ring does not carry it).
    fn ring_receive(&mut self) -> Option<RingRecv> {
        self.tcp_mut().map(Tcp::ring_receive)
    }
    /// Its reads are paced (a receive-rate cap): the ring receives its allowance at a time.
    #[inline(always)]
    fn receive_capped(&self) -> bool {
        self.tcp().is_some_and(Tcp::capped)
    }
    /// Its socket's descriptor and the bytes queued for the ring to send.
    #[inline(always)]
    fn outbox(&mut self) -> Option<(RawFd, &mut Vec<u8>)> {
        self.tcp_mut().and_then(Tcp::outbox)
    }
    /// A link that reads and writes its socket itself (QUIC's): the socket, which the ring
    /// polls for it ([`RingOp::PollIn`], [`RingOp::PollOut`]).
    #[inline(always)]
    fn polled_socket(&self) -> Option<RawFd> {
        None
    }
    /// That link's sends wait for its socket to be writable.
    #[inline(always)]
    fn send_blocked(&self) -> bool {
        false
    }
    /// Gives up its socket for the ring to close (the link closes next).
    fn detach(&mut self) -> Option<OwnedFd> {
        self.tcp_mut().and_then(Tcp::detach)
    }

    // ---- The request that opens it ----

    /// Keeps `first`, the request that opens the connection, until it is ready (or fails):
    /// HTTP/1 in the place its current request takes, unused while it opens, so that a
    /// connection does not carry room for a second request all its life (136 bytes; 1.3 MiB
    /// at 10,000 idle connections).
    fn hold_first(&mut self, first: Exchange);
    /// The request that opens it, while it opens.
    fn first(&self) -> Option<&Exchange>;
    /// Gives that request back (to submit once ready, or to fail): None if it holds none.
    fn take_first(&mut self) -> Option<Exchange>;

    // ---- Requests ----

    /// Requests in flight on it.
    fn in_flight(&self) -> u32;
    /// A request may start on it now.
    fn can_open(&self) -> bool;
    /// No request will start on it again (GOAWAY, or its end).
    fn is_closing(&self) -> bool;
    /// The connection ended on its own (QUIC's close): why.
    fn closed(&self) -> Option<FailureKind>;
    /// Starts `ex`; false if the connection would not take it after all (HTTP/3's stream
    /// limit, which only the attempt tells): the caller keeps the request.
    fn submit(&mut self, ctx: &mut Self::Ctx, ex: &Exchange, first: bool, now: Instant) -> bool;
    /// Reports the outcomes decided since the last call, as of `now`, and frees their places.
    fn drain(&mut self, now: Instant, out: &mut impl Outcomes);
    /// Fails every request past `timeout`: HTTP/2's and HTTP/3's streams are cancelled and the
    /// connection goes on; HTTP/1's connection ends with its request.
    fn expire(
        &mut self,
        ctx: &mut Self::Ctx,
        now: Instant,
        timeout: Duration,
        out: &mut impl Outcomes,
    );
    /// The peer closed. `unheard`: before it said anything (a connection opened ahead, at
    /// the server's idle timeout), so no request was processed and each may go again.
    fn on_eof(&mut self, ctx: &mut Self::Ctx, unheard: bool, now: Instant, out: &mut impl Outcomes);
    /// The connection failed as a whole (`err`: the OS's word): every open request fails
    /// with `kind`, or (`retry`) goes again, uncounted. HTTP/1 knows better whether its
    /// request may go again (it saw whether any byte went out or came back) and decides.
    fn fail_all(
        &mut self,
        ctx: &mut Self::Ctx,
        kind: FailureKind,
        err: Option<&io::Error>,
        retry: bool,
        now: Instant,
        out: &mut impl Outcomes,
    );
    /// Adds what its QUIC connections did to `total` (nothing for HTTP/2).
    fn add_stats(&self, total: &mut QuicStats);
}

/// What a link reported, kept for a test to read.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Kept {
    /// Each complete response's status, `Server` header and whether it was reusable.
    pub(crate) completed: Vec<(u16, Option<Vec<u8>>, bool)>,
    pub(crate) failed: Vec<Failed>,
    pub(crate) retried: Vec<Exchange>,
}

#[cfg(test)]
impl Outcomes for Kept {
    fn conn(&self) -> u32 {
        0
    }
    fn completed(&mut self, c: &Completed<'_>) -> bool {
        self.completed.push((c.status, c.server.map(<[u8]>::to_vec), c.reusable));
        true
    }
    fn failed(&mut self, f: &Failed) -> bool {
        self.failed.push(*f);
        true
    }
    fn retry(&mut self, ex: Exchange) {
        self.retried.push(ex);
    }
}
