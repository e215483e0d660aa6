//! A TCP connection, plain or TLS, as HTTP/1 and HTTP/2 open and read it: connect (its
//! readiness, then `SO_ERROR`), TLS's handshake (which must choose `h2` by ALPN for HTTP/2),
//! and reads under the receive-rate cap, whose pause is the link's timer. What a link adds is
//! its protocol; the bytes come and go here.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use herd_stats::FailureKind;

use super::seam::{Dial, Progress, Readiness, RingOp, RingRecv, Via};
use crate::socket;
use crate::throttle::Throttle;
use crate::transport::{Fault, Io, Transport};
use crate::RunSpec;

pub(crate) struct Tcp {
    transport: Option<Transport>,
    /// Its reads' receive-rate cap, if the run has one.
    pacing: Option<Box<Pacing>>,
    /// TCP's connect is done (a TLS handshake may follow).
    up: bool,
    /// TLS must choose HTTP/2 by ALPN.
    h2: bool,
}

/// A paced connection's receive-rate cap, and the end of the pause its reads wait for. Boxed:
/// few runs pace their reads, and every connection of every other run would carry its 48
/// bytes (10,000 idle connections: 0.5 MiB).
struct Pacing {
    throttle: Throttle,
    /// Reads wait for the cap until then.
    paused: Option<Instant>,
}

impl Pacing {
    /// What the cap allows to be read now (one chunk at least), or None until the pause's
    /// end, which it keeps (the link's timer). The clock is read only here: paced reads only.
    fn allowance(&mut self) -> Option<usize> {
        match self.throttle.allowance(Instant::now()) {
            Ok(n) => {
                self.paused = None;
                Some(n)
            }
            Err(at) => {
                self.paused = Some(at);
                None
            }
        }
    }
}

/// The cap `throttle`, boxed with no pause yet (None without a cap).
fn pacing(throttle: Option<Throttle>) -> Option<Box<Pacing>> {
    throttle.map(|throttle| Box::new(Pacing { throttle, paused: None }))
}

/// What one read did.
pub(crate) enum Read {
    /// `n` bytes are at the start of the buffer; `drained`: the socket holds no more (a short
    /// plain read).
    Data {
        n: usize,
        drained: bool,
    },
    /// Nothing now: the next readiness event says when.
    Blocked,
    /// The receive-rate cap allows nothing before [`Tcp::timer`].
    Paused,
    Eof,
    Failed(Fault),
}

impl Tcp {
    /// `h2`: the connection speaks HTTP/2, which TLS must choose by ALPN.
    pub(crate) fn new(h2: bool) -> Tcp {
        Tcp { transport: None, pacing: None, up: false, h2 }
    }

    /// Starts connecting toward the dial's address, its reads under `throttle`.
    #[inline(always)]
    pub(crate) fn open(
        &mut self,
        spec: &RunSpec,
        dial: Dial<'_>,
        throttle: Option<Throttle>,
    ) -> Progress {
        self.pacing = pacing(throttle);
        let registry = match dial.via {
            Via::Ring(ops) => {
                return self.open_on_ring(spec, ops, dial.token.0, dial.addr, dial.conn)
            }
            Via::Poll(registry) => registry,
        };
        match socket::connect(spec, dial.addr, dial.conn, socket::Stream) {
            Ok((mut sock, in_progress)) => {
                if let Err(failed) = super::seam::register(registry, dial.token, &mut sock) {
                    return failed;
                }
                self.transport = Some(Transport::Plain(sock));
                if in_progress {
                    Progress::pending()
                } else {
                    self.on_tcp_up(spec)
                }
            }
            Err(e) => Progress::refused(e),
        }
    }

    /// Opens toward the dial's address through the ring: the socket made and handed to the
    /// ring's connect (a Unix socket connects at once). TLS starts once TCP is up, its
    /// handshake's flights queued for the ring ([`Tcp::ring_handshake`]).
    fn open_on_ring(
        &mut self,
        spec: &RunSpec,
        ops: &mut Vec<RingOp>,
        token: usize,
        addr: usize,
        conn: usize,
    ) -> Progress {
        match socket::connect(spec, addr, conn, socket::RingStream) {
            Ok((sock, to)) => {
                let fd = sock.as_fd().as_raw_fd();
                self.transport = Some(Transport::Queued(sock, Vec::new()));
                match to {
                    Some(to) => {
                        ops.push(RingOp::Connect(token, fd, to));
                        Progress::pending()
                    }
                    None => self.on_tcp_up(spec),
                }
            }
            Err(e) => Progress::refused(e),
        }
    }

    /// The ring's connect ended.
    pub(crate) fn ring_connected(&mut self, spec: &RunSpec, result: io::Result<()>) -> Progress {
        match result {
            Ok(()) => self.on_tcp_up(spec),
            Err(e) => Progress::refused(e),
        }
    }

    /// Its socket's descriptor and the bytes queued for the ring (io_uring only).
    #[inline]
    pub(crate) fn outbox(&mut self) -> Option<(RawFd, &mut Vec<u8>)> {
        self.transport.as_mut().and_then(Transport::outbox)
    }

    /// Gives up its socket, for the ring to close.
    pub(crate) fn detach(&mut self) -> Option<OwnedFd> {
        self.transport.take().map(|t| t.into_socket().into())
    }

    /// Takes a connection opened before the start (warm.rs).
    pub(crate) fn adopt(&mut self, t: Transport, throttle: Option<Throttle>) {
        self.transport = Some(t);
        self.pacing = pacing(throttle);
        self.up = true;
    }

    /// An opening connection's readiness event, or (None) its timer.
    #[inline]
    pub(crate) fn advance(&mut self, spec: &RunSpec, ready: Option<Readiness>) -> Progress {
        // Opening has no timer of its own (the request timeout is the worker's).
        let Some(r) = ready else { return Progress::pending() };
        if self.up {
            return self.handshake();
        }
        // A refused connect reports EPOLLERR and EPOLLHUP with EPOLLOUT: an error is a failed
        // connect whatever else is set, or every refusal would pass for a connection and fail
        // as a write.
        if r.error || (r.read_closed && !r.writable) {
            let sock = self.transport.as_ref().map(Transport::socket);
            let err = sock.and_then(|s| s.take_error().ok().flatten());
            let e = err.unwrap_or_else(|| io::ErrorKind::ConnectionRefused.into());
            return Progress::refused(e);
        }
        if r.writable || r.readable {
            return self.on_tcp_up(spec);
        }
        Progress::pending()
    }

    /// TCP is up: TLS starts, or (plain) the connection is ready.
    #[inline(always)]
    fn on_tcp_up(&mut self, spec: &RunSpec) -> Progress {
        self.up = true;
        let mut p = match &spec.target.tls {
            Some(tls) => match tls.connect() {
                Ok(session) => {
                    self.transport = self.transport.take().map(|t| t.start_tls(session));
                    self.handshake()
                }
                Err(_) => Progress::failed(FailureKind::Tls, None),
            },
            None => Progress::ready(),
        };
        p.connected = true;
        p
    }

    fn handshake(&mut self) -> Progress {
        let Some(t) = self.transport.as_mut() else {
            return Progress::failed(FailureKind::Tls, None);
        };
        let io = t.handshake();
        self.handshaken(io)
    }

    /// The ring received `ciphertext` during the TLS handshake: taken up to the handshake's
    /// end (the rest, if any, is left for [`Tcp::decrypt`]), the answer queued.
    pub(crate) fn ring_handshake(&mut self, ciphertext: &mut &[u8]) -> Progress {
        let Some(t) = self.transport.as_mut() else {
            return Progress::failed(FailureKind::Tls, None);
        };
        let io = t.handshake_with(ciphertext);
        self.handshaken(io)
    }

    /// The ring's receive ended during the TLS handshake: the peer closed (None) or the
    /// socket failed, as the epoll path's handshake reads them.
    pub(crate) fn ring_handshake_ended(&mut self, err: Option<io::Error>) -> Progress {
        self.handshaken(match err {
            None => Io::Eof,
            Some(e) => Io::Err(Fault::Os(e)),
        })
    }

    /// What a step of the TLS handshake came to.
    fn handshaken(&mut self, io: Io) -> Progress {
        let Some(t) = self.transport.as_mut() else {
            return Progress::failed(FailureKind::Tls, None);
        };
        match io {
            // A server that would not speak HTTP/2 over TLS: nothing to send it.
            Io::Done(_) if self.h2 && !t.chose_h2() => Progress::failed(FailureKind::Tls, None),
            Io::Done(_) => Progress::ready(),
            Io::Retry => Progress::pending(),
            Io::Eof | Io::Err(Fault::Tls) => Progress::failed(FailureKind::Tls, None),
            Io::Err(Fault::Os(e)) => {
                let kind = connect_or(e.raw_os_error(), FailureKind::Tls);
                Progress::failed(kind, Some(e))
            }
        }
    }

    /// Drops the socket (closing it takes it out of the poll).
    #[inline]
    pub(crate) fn close(&mut self) {
        self.transport = None;
        self.up = false;
        self.pacing = None;
    }

    /// What its TLS handshake negotiated, once done (None without TLS).
    pub(crate) fn tls_info(&self) -> Option<crate::TlsInfo> {
        self.transport.as_ref().and_then(Transport::tls_info)
    }

    #[inline(always)]
    pub(crate) fn transport(&mut self) -> Option<&mut Transport> {
        self.transport.as_mut()
    }

    /// TLS on the ring: what the ring receives is ciphertext, for [`Tcp::decrypt`].
    #[inline(always)]
    pub(crate) fn ring_tls(&self) -> bool {
        self.transport.as_ref().is_some_and(Transport::ring_tls)
    }

    /// TLS on the ring: takes what it can of the received `ciphertext` and returns the
    /// plaintext that is ready, into `buf` (`Blocked` once there is none). The cap was spent
    /// as the ring received: what it bounds is the bytes read from the socket.
    #[inline]
    pub(crate) fn decrypt(&mut self, ciphertext: &mut &[u8], buf: &mut [u8]) -> Read {
        let Some(t) = self.transport.as_mut() else { return Read::Eof };
        match t.decrypt(ciphertext, buf) {
            Io::Done(n) => Read::Data { n, drained: false },
            Io::Retry => Read::Blocked,
            Io::Eof => Read::Eof,
            Io::Err(f) => Read::Failed(f),
        }
    }

    /// Reads once into `buf`, as far as the receive-rate cap allows.
    #[inline(always)]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Read {
        let Some(t) = self.transport.as_mut() else { return Read::Eof };
        let limit = match &mut self.pacing {
            None => buf.len(),
            Some(p) => match p.allowance() {
                Some(n) => n.min(buf.len()),
                None => return Read::Paused,
            },
        };
        let Some(into) = buf.get_mut(..limit) else { return Read::Blocked };
        match t.read(into) {
            Io::Done(n) => {
                if let Some(p) = &mut self.pacing {
                    p.throttle.spend(n);
                }
                Read::Data { n, drained: t.short_read_drains() && n < limit }
            }
            Io::Retry => Read::Blocked,
            Io::Eof => Read::Eof,
            Io::Err(f) => Read::Failed(f),
        }
    }

    /// How the ring is to receive for it next: a multishot receive when reads are not
    /// paced; else one read of the cap's allowance now, or nothing before the pause's end
    /// (its timer). The same bucket as [`Tcp::read`]'s, asked at the same moments: before
    /// each read.
    pub(crate) fn ring_receive(&mut self) -> RingRecv {
        let Some(p) = &mut self.pacing else { return RingRecv::Multishot };
        match p.allowance() {
            Some(n) => RingRecv::UpTo(u32::try_from(n).unwrap_or(u32::MAX)),
            None => RingRecv::Paused,
        }
    }

    /// The ring received `n` bytes for it: spent from the cap's bucket.
    #[inline(always)]
    pub(crate) fn spent(&mut self, n: usize) {
        if let Some(p) = &mut self.pacing {
            p.throttle.spend(n);
        }
    }

    /// Its reads are paced.
    #[inline(always)]
    pub(crate) fn capped(&self) -> bool {
        self.pacing.is_some()
    }

    /// Readable between requests: whether it is still idle ([`Transport::still_idle`]).
    pub(crate) fn still_idle(&mut self, buf: &mut [u8]) -> bool {
        self.transport.as_mut().is_some_and(|t| t.still_idle(buf))
    }

    /// The end of a receive-rate pause.
    #[inline]
    pub(crate) fn timer(&self) -> Option<Instant> {
        self.pacing.as_ref().and_then(|p| p.paused)
    }

    /// The pause is over: reads may go on.
    pub(crate) fn resume(&mut self) {
        if let Some(p) = &mut self.pacing {
            p.paused = None;
        }
    }
}

/// A write or TLS error on a connection that never carried a byte is a connect failure
/// when the OS says so (refused, unreachable, reset during the handshake).
pub(crate) fn connect_or(errno: Option<i32>, otherwise: FailureKind) -> FailureKind {
    match errno {
        Some(libc::ECONNREFUSED | libc::ENETUNREACH | libc::EHOSTUNREACH | libc::ETIMEDOUT) => {
            FailureKind::Connect
        }
        _ => otherwise,
    }
}
