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
    /// io_uring's: the ring reads the socket and sends what writes queue here (plain only).
    Queued(Socket, Vec<u8>),
}

/// A socket and the TLS session over it.
pub(crate) struct Tls {
    sock: Socket,
    session: ClientConnection,
}

impl Transport {
    /// Wraps the plain transport's socket in TLS; the handshake is driven by
    /// [`Transport::handshake`]. A transport that is TLS already stays as it is.
    pub(crate) fn start_tls(self, session: ClientConnection) -> Transport {
        match self {
            Transport::Plain(sock) => Transport::Tls(Box::new(Tls { sock, session })),
            other @ (Transport::Tls(_) | Transport::Queued(..)) => other,
        }
    }

    pub(crate) fn socket(&self) -> &Socket {
        match self {
            Transport::Plain(sock) | Transport::Queued(sock, _) => sock,
            Transport::Tls(t) => &t.sock,
        }
    }

    /// The same socket for the ring to read and write (a connection opened ahead, taken by
    /// an io_uring worker). TLS stays as it is (the ring carries plain connections only).
    pub(crate) fn queued(self) -> Transport {
        match self {
            Transport::Plain(sock) => Transport::Queued(sock, Vec::new()),
            other => other,
        }
    }

    /// The bytes queued for the ring to send (io_uring), with the socket's descriptor.
    pub(crate) fn outbox(&mut self) -> Option<(std::os::fd::RawFd, &mut Vec<u8>)> {
        use std::os::fd::{AsFd, AsRawFd};
        match self {
            Transport::Queued(sock, out) => Some((sock.as_fd().as_raw_fd(), out)),
            _ => None,
        }
    }

    /// Its socket, for the ring to close (the transport is gone).
    pub(crate) fn into_socket(self) -> Socket {
        match self {
            Transport::Plain(sock) | Transport::Queued(sock, _) => sock,
            Transport::Tls(t) => t.sock,
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
        let Transport::Tls(t) = self else { return Io::Done(0) };
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
        match self {
            Transport::Plain(_) | Transport::Queued(..) => None,
            Transport::Tls(t) => t.session.alpn_protocol(),
        }
    }

    /// What the handshake negotiated (TLS only).
    pub(crate) fn tls_info(&self) -> Option<TlsInfo> {
        match self {
            Transport::Plain(_) | Transport::Queued(..) => None,
            Transport::Tls(t) => crate::tls::info(&t.session),
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
            // The ring reads it: nothing to read here.
            Transport::Queued(..) => Io::Retry,
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
        }
    }

    /// Sends what the transport holds (TLS records); nothing to do for plain.
    #[inline(always)]
    pub(crate) fn flush(&mut self) -> Io {
        match self {
            Transport::Plain(_) | Transport::Queued(..) => Io::Done(0),
            Transport::Tls(t) => t.flush(),
        }
    }
}

// The TLS side is kept out of line: the plain path, inlined into the connection's read and
// write loops, is the one that runs per request in the figures that matter most.
impl Tls {
    /// rustls takes as much as its buffer allows (64 KiB); a failure here is one the session
    /// met before (a TLS protocol error), not the socket's.
    #[inline(never)]
    fn write(&mut self, data: &[u8]) -> Io {
        match self.session.writer().write(data) {
            Ok(n) => Io::Done(n),
            Err(_) => Io::Err(Fault::Tls),
        }
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
