//! One interface for plain and TLS connections, as wrk's `struct sock`: [`Transport::read`],
//! [`Transport::write`] and [`Transport::flush`] (and the TLS handshake) each answer with an
//! [`Io`] status — done, retry when the socket says so, end of stream, or a fault — so that
//! the connection's read and write paths are written once for both.
//!
//! Plain or TLS is decided when a connection opens; each call is then a `match` on a
//! two-variant enum (static dispatch, inlined on the plain path), never a virtual call.
//!
//! The plain path reads and writes with raw read(2)/write(2) through rustix: std's socket calls
//! go through glibc's recv()/send(), which in a multi-threaded process take the
//! cancellation-point path on every call. The bench profile (BENCHMARKS.md) counted that at
//! about 1.4 % of the client's CPU on keep-alive requests, where the client's whole user-space
//! budget is a few percent.
//!
//! What a fault means for the request in progress (a connect failure, a retry on a new
//! connection, a receive failure) is not decided here: the connection knows where its request
//! stands.

use std::io::{self, Read as _, Write as _};

use rustls::ClientConnection;

use crate::socket::Socket;
use crate::TlsInfo;

/// The status of one transport call.
#[derive(Debug)]
pub(crate) enum Io {
    /// This many bytes were read or accepted (0 for a finished flush or handshake).
    Done(usize),
    /// The socket cannot go on now; its next epoll edge will say when.
    Retry,
    /// The peer closed the stream (a read of 0 bytes, or TLS close_notify).
    Eof,
    Err(Fault),
}

#[derive(Debug)]
pub(crate) enum Fault {
    /// The operating system refused (reset, refused, unreachable, ...).
    Os(io::Error),
    /// The peer's TLS was not acceptable (a protocol error or a bad certificate); the alert
    /// has been sent, best effort.
    Tls,
}

pub(crate) enum Transport {
    Plain(Socket),
    Tls(Box<Tls>),
    /// io_uring's: the ring reads the socket and sends what writes queue here.
    Queued(Socket, Vec<u8>),
    /// io_uring's over TLS: rustls on the ring's buffers. What the ring receives is handed
    /// to the session ([`Transport::decrypt`]); what the session writes is queued here.
    QueuedTls(Box<QueuedTls>),
}

/// A socket and the TLS session over it.
pub(crate) struct Tls {
    sock: Socket,
    session: ClientConnection,
}

/// A TLS session whose bytes the ring moves: ciphertext in from its receive buffers, out
/// through `out`, the connection's outbox.
pub(crate) struct QueuedTls {
    sock: Socket,
    session: ClientConnection,
    out: Vec<u8>,
}

impl Transport {
    /// Wraps the plain transport's socket in TLS; the handshake is driven by
    /// [`Transport::handshake`]. A transport that is TLS already stays as it is.
    pub(crate) fn start_tls(self, session: ClientConnection) -> Transport {
        match self {
            Transport::Plain(sock) => Transport::Tls(Box::new(Tls { sock, session })),
            Transport::Queued(sock, out) => {
                Transport::QueuedTls(Box::new(QueuedTls { sock, session, out }))
            }
            other @ (Transport::Tls(_) | Transport::QueuedTls(_)) => other,
        }
    }

    pub(crate) fn socket(&self) -> &Socket {
        match self {
            Transport::Plain(sock) | Transport::Queued(sock, _) => sock,
            Transport::Tls(t) => &t.sock,
            Transport::QueuedTls(t) => &t.sock,
        }
    }

    /// The same connection for the ring to read and write (one opened ahead, taken by an
    /// io_uring worker); a TLS session goes on over the ring.
    pub(crate) fn queued(self) -> Transport {
        match self {
            Transport::Plain(sock) => Transport::Queued(sock, Vec::new()),
            Transport::Tls(t) => {
                let Tls { sock, session } = *t;
                Transport::QueuedTls(Box::new(QueuedTls { sock, session, out: Vec::new() }))
            }
            other @ (Transport::Queued(..) | Transport::QueuedTls(_)) => other,
        }
    }

    /// The bytes queued for the ring to send (io_uring), with the socket's descriptor.
    pub(crate) fn outbox(&mut self) -> Option<(std::os::fd::RawFd, &mut Vec<u8>)> {
        use std::os::fd::{AsFd, AsRawFd};
        match self {
            Transport::Queued(sock, out) => Some((sock.as_fd().as_raw_fd(), out)),
            Transport::QueuedTls(t) => Some((t.sock.as_fd().as_raw_fd(), &mut t.out)),
            Transport::Plain(_) | Transport::Tls(_) => None,
        }
    }

    /// TLS whose ciphertext the ring receives: [`Transport::decrypt`] reads it.
    #[inline(always)]
    pub(crate) fn ring_tls(&self) -> bool {
        matches!(self, Transport::QueuedTls(_))
    }

    /// Its socket, for the ring to close (the transport is gone).
    pub(crate) fn into_socket(self) -> Socket {
        match self {
            Transport::Plain(sock) | Transport::Queued(sock, _) => sock,
            Transport::Tls(t) => t.sock,
            Transport::QueuedTls(t) => t.sock,
        }
    }

    /// A read shorter than the buffer means the socket is drained (until its next edge).
    /// True for a plain stream socket; a TLS read returns one record's plaintext at most.
    pub(crate) fn short_read_drains(&self) -> bool {
        matches!(self, Transport::Plain(_))
    }

    /// Drives the TLS handshake as far as the socket allows: `Done` when it is complete
    /// (at once for plain), `Retry` while waiting for the peer, `Eof` if the peer closed.
    pub(crate) fn handshake(&mut self) -> Io {
        let t = match self {
            Transport::Tls(t) => t,
            Transport::QueuedTls(t) => return t.handshake(),
            Transport::Plain(_) | Transport::Queued(..) => return Io::Done(0),
        };
        let Tls { sock, session } = &mut **t;
        loop {
            match flush_tls(sock, session) {
                Io::Done(_) => {}
                other => return other,
            }
            if !session.is_handshaking() {
                return Io::Done(0);
            }
            match session.read_tls(sock) {
                Ok(0) => return Io::Eof,
                Ok(_) => {
                    if let Some(fault) = process(sock, session) {
                        return Io::Err(fault);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Io::Retry,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Io::Err(Fault::Os(e)),
            }
        }
    }

    /// The protocol ALPN agreed on (TLS only, once the handshake is done).
    /// The TLS handshake chose HTTP/2 (ALPN `h2`).
    pub(crate) fn chose_h2(&self) -> bool {
        self.alpn() == Some(b"h2".as_slice())
    }

    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        self.session().and_then(|s| s.alpn_protocol())
    }

    /// What the handshake negotiated (TLS only).
    pub(crate) fn tls_info(&self) -> Option<TlsInfo> {
        self.session().and_then(crate::tls::info)
    }

    fn session(&self) -> Option<&ClientConnection> {
        match self {
            Transport::Plain(_) | Transport::Queued(..) => None,
            Transport::Tls(t) => Some(&t.session),
            Transport::QueuedTls(t) => Some(&t.session),
        }
    }

    /// Readable between requests: whether the connection is still idle — a TLS 1.3 server's
    /// session tickets, sent after the handshake, read with no plaintext. Anything else (bytes
    /// of a plain connection, a close, plaintext nobody asked for) and it is not.
    pub(crate) fn still_idle(&mut self, buf: &mut [u8]) -> bool {
        matches!(self, Transport::Tls(_)) && matches!(self.read(buf), Io::Retry)
    }

    /// Reads into `buf`: response bytes (decrypted for TLS).
    #[inline(always)]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Io {
        match self {
            Transport::Plain(sock) => loop {
                match rustix::io::read(&*sock, &mut *buf) {
                    Ok(0) => return Io::Eof,
                    Ok(n) => return Io::Done(n),
                    Err(rustix::io::Errno::AGAIN) => return Io::Retry,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Io::Err(Fault::Os(e.into())),
                }
            },
            Transport::Tls(t) => t.read(buf),
            // The ring reads it: nothing to read here ([`Transport::decrypt`] takes what it
            // received over TLS).
            Transport::Queued(..) | Transport::QueuedTls(_) => Io::Retry,
        }
    }

    /// Writes from `data` (plain) or hands it to TLS to encrypt (written out by `flush`);
    /// `Done(n)` with n ≤ data.len().
    #[inline(always)]
    pub(crate) fn write(&mut self, data: &[u8]) -> Io {
        match self {
            Transport::Plain(sock) => loop {
                match rustix::io::write(&*sock, data) {
                    // Never for a socket; said so rather than retried forever.
                    Ok(0) if !data.is_empty() => {
                        return Io::Err(Fault::Os(io::ErrorKind::WriteZero.into()))
                    }
                    Ok(n) => return Io::Done(n),
                    Err(rustix::io::Errno::AGAIN) => return Io::Retry,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Io::Err(Fault::Os(e.into())),
                }
            },
            Transport::Tls(t) => t.write(data),
            Transport::Queued(_, out) => {
                out.extend_from_slice(data);
                Io::Done(data.len())
            }
            Transport::QueuedTls(t) => t.write(data),
        }
    }

    /// Sends what the transport holds (TLS records); nothing to do for plain.
    #[inline(always)]
    pub(crate) fn flush(&mut self) -> Io {
        match self {
            Transport::Plain(_) | Transport::Queued(..) => Io::Done(0),
            Transport::Tls(t) => t.flush(),
            Transport::QueuedTls(t) => t.flush(),
        }
    }

    /// Over TLS on the ring: takes what it can of `ciphertext` (advanced past what it took)
    /// and returns the plaintext it holds, into `buf`: `Done(n)`, `Retry` once every
    /// received byte is taken and no plaintext is left, `Eof` at the peer's close_notify.
    /// Anything else has no ciphertext to take: `Retry`.
    #[inline]
    pub(crate) fn decrypt(&mut self, ciphertext: &mut &[u8], buf: &mut [u8]) -> Io {
        match self {
            Transport::QueuedTls(t) => t.decrypt(ciphertext, buf),
            Transport::Plain(_) | Transport::Tls(_) | Transport::Queued(..) => Io::Retry,
        }
    }

    /// Over TLS on the ring, still handshaking: takes `ciphertext` (the peer's handshake
    /// flight; advanced past what it took) up to the handshake's end, and queues the answer.
    /// What follows the end is left in `ciphertext`, for [`Transport::decrypt`]. As
    /// [`Transport::handshake`]'s.
    pub(crate) fn handshake_with(&mut self, ciphertext: &mut &[u8]) -> Io {
        let Transport::QueuedTls(t) = self else { return self.handshake() };
        while !ciphertext.is_empty() && t.session.is_handshaking() {
            if let Some(fault) = t.take(ciphertext) {
                return Io::Err(fault);
            }
        }
        t.handshake()
    }
}

// The TLS side is kept out of line: the plain path, inlined into the connection's read and
// write loops, is the one that runs per request in the figures that matter most.
impl Tls {
    #[inline(never)]
    fn write(&mut self, data: &[u8]) -> Io {
        write_plain(&mut self.session, data)
    }

    #[inline(never)]
    fn flush(&mut self) -> Io {
        flush_tls(&mut self.sock, &mut self.session)
    }

    /// Plaintext that rustls holds is returned first; the socket is read only when there is
    /// none, so the plaintext buffer never fills (read_tls would refuse) and a close_notify
    /// that arrived with the last response is seen without waiting for another edge.
    #[inline(never)]
    fn read(&mut self, buf: &mut [u8]) -> Io {
        let Tls { sock, session } = self;
        loop {
            match session.reader().read(buf) {
                Ok(0) => return Io::Eof, // close_notify
                Ok(n) => return Io::Done(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Io::Eof,
                Err(e) => return Io::Err(Fault::Os(e)),
            }
            match session.read_tls(sock) {
                // The reader now reports the end (Ok(0) or UnexpectedEof) after any plaintext.
                Ok(0) => {}
                Ok(_) => {
                    if let Some(fault) = process(sock, session) {
                        return Io::Err(fault);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Io::Retry,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Io::Err(Fault::Os(e)),
            }
        }
    }
}

// rustls on the ring's buffers: the same session calls as [`Tls`]'s, with a received slice
// for the socket to read and the outbox for the socket to write (a Vec never blocks).
impl QueuedTls {
    fn write(&mut self, data: &[u8]) -> Io {
        write_plain(&mut self.session, data)
    }

    /// Queues the records rustls holds into the outbox.
    fn flush(&mut self) -> Io {
        while self.session.wants_write() {
            if let Err(e) = self.session.write_tls(&mut self.out) {
                return Io::Err(Fault::Os(e));
            }
        }
        Io::Done(0)
    }

    /// Queues the handshake's next flight; `Done` once it is complete, `Retry` while the
    /// peer's next flight is awaited (the ring's next receive).
    fn handshake(&mut self) -> Io {
        match self.flush() {
            Io::Done(_) if !self.session.is_handshaking() => Io::Done(0),
            Io::Done(_) => Io::Retry,
            other => other,
        }
    }

    /// Hands rustls as much of `ciphertext` as it takes at once (it reads a few KiB a call)
    /// and decrypts it. An empty slice is never offered: rustls reads a read of 0 bytes as
    /// the peer's close.
    fn take(&mut self, ciphertext: &mut &[u8]) -> Option<Fault> {
        match self.session.read_tls(ciphertext) {
            Ok(_) => match self.session.process_new_packets() {
                Ok(_) => None,
                Err(_) => {
                    // The alert rustls queued goes out with the outbox, best effort.
                    let _ = self.flush();
                    Some(Fault::Tls)
                }
            },
            // Its buffer is full of records not yet decrypted: never, as the plaintext is
            // taken out before each read; a fault of the session's if it happens.
            Err(_) => Some(Fault::Tls),
        }
    }

    /// As [`Tls::read`]: plaintext rustls holds first, then more ciphertext, until both are
    /// used up.
    fn decrypt(&mut self, ciphertext: &mut &[u8], buf: &mut [u8]) -> Io {
        loop {
            match self.session.reader().read(buf) {
                Ok(0) => return Io::Eof, // close_notify
                Ok(n) => return Io::Done(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Io::Eof,
                Err(e) => return Io::Err(Fault::Os(e)),
            }
            if ciphertext.is_empty() {
                return Io::Retry;
            }
            if let Some(fault) = self.take(ciphertext) {
                return Io::Err(fault);
            }
        }
    }
}

/// Hands `data` to the session to encrypt: rustls takes as much as its buffer allows
/// (64 KiB); a failure here is one the session met before (a TLS protocol error), not the
/// socket's.
fn write_plain(session: &mut ClientConnection, data: &[u8]) -> Io {
    match session.writer().write(data) {
        Ok(n) => Io::Done(n),
        Err(_) => Io::Err(Fault::Tls),
    }
}

/// Decrypts what read_tls took in; on a protocol error, sends the alert rustls queued (best
/// effort) and reports it.
fn process(sock: &mut Socket, session: &mut ClientConnection) -> Option<Fault> {
    match session.process_new_packets() {
        Ok(_) => None,
        Err(_) => {
            let _ = session.write_tls(sock);
            Some(Fault::Tls)
        }
    }
}

/// Writes what rustls has queued: `Done` when all is sent, `Retry` when the socket is full.
fn flush_tls(sock: &mut Socket, session: &mut ClientConnection) -> Io {
    while session.wants_write() {
        match session.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Io::Retry,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Io::Err(Fault::Os(e)),
        }
    }
    Io::Done(0)
}
