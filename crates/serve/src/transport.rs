//! A connection's byte stream, plain TCP or TLS over it, behind one interface: reads of
//! plaintext ([`Read`]), the raw socket for what only TCP has (`sendfile`, `MSG_MORE`, socket
//! options, the lingering close), and for TLS the records rustls holds to send
//! ([`Transport::push_tls`]). How response bytes are written is the write queue's business
//! (write_queue.rs): `sendfile` and `send` on plain sockets, rustls's writer on TLS ones.
//!
//! The TLS handshake needs no call of its own: reading runs it, since rustls answers each
//! handshake message as it is processed, and the records it queues go out with the next
//! [`Transport::push_tls`] (every `drive` flushes first) or at once when a read produced them.
//! Plain or TLS is a `match` on a two-variant enum, so the plain path pays a branch, not a
//! virtual call.

use std::io::{self, Read, Write as _};
use std::net::Shutdown;

use mio::net::TcpStream;
use rustls::ServerConnection;

pub(crate) use crate::ring_stream::RingStream;

#[derive(Debug)]
pub(crate) enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
    /// Plain TCP on an io_uring worker (`herd serve --io uring`): its bytes come and go
    /// through the worker's ring (ring_stream.rs). Boxed: its two buffers would make every
    /// epoll connection larger.
    Ring(Box<RingStream>),
}

#[derive(Debug)]
pub(crate) struct TlsStream {
    pub(crate) sock: TcpStream,
    pub(crate) session: ServerConnection,
}

impl Transport {
    /// The ring's stream, on an io_uring worker.
    pub(crate) fn ring_stream(&mut self) -> Option<&mut RingStream> {
        match self {
            Transport::Ring(r) => Some(r),
            Transport::Plain(_) | Transport::Tls(_) => None,
        }
    }

    /// Whether the connection is TLS: its requests' scheme is `https`.
    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// Whether a read that returned less than it had room for proves the socket empty. True
    /// for TCP; a TLS read returns one record's plaintext at most, so more may be waiting.
    pub(crate) fn short_read_drains(&self) -> bool {
        matches!(self, Transport::Plain(_) | Transport::Ring(_))
    }

    /// Whether the TLS handshake is still going on (never for plain).
    pub(crate) fn is_handshaking(&self) -> bool {
        match self {
            Transport::Plain(_) | Transport::Ring(_) => false,
            Transport::Tls(tls) => tls.session.is_handshaking(),
        }
    }

    /// The protocol ALPN chose, once the handshake is over (never for plain).
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        match self {
            Transport::Plain(_) | Transport::Ring(_) => None,
            Transport::Tls(tls) => tls.session.alpn_protocol(),
        }
    }

    /// Shuts our sending side down (the lingering close). On the ring, once what the ring
    /// holds of ours is sent: shut down now, it would cut the response off.
    pub(crate) fn shutdown_write(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(sock) => sock.shutdown(Shutdown::Write),
            Transport::Tls(tls) => tls.sock.shutdown(Shutdown::Write),
            Transport::Ring(r) => r.shutdown_write(),
        }
    }

    /// Reads and drops what the client sent, undecrypted over TLS (a closing connection's
    /// input): `Ok(0)` at its end, `WouldBlock` when nothing more is there now.
    pub(crate) fn discard_some(&mut self) -> io::Result<usize> {
        let mut scratch = [0u8; 16 * 1024];
        match self {
            Transport::Plain(sock) => sock.read(&mut scratch),
            Transport::Tls(tls) => tls.sock.read(&mut scratch),
            Transport::Ring(r) => r.discard_some(),
        }
    }

    /// Queues TLS's close_notify and sends what it can without waiting; nothing for plain.
    /// Called just before the socket is closed, so a client can tell the end of the
    /// connection from a truncation.
    pub(crate) fn close_notify(&mut self) {
        if let Transport::Tls(tls) = self {
            tls.session.send_close_notify();
            let _ = tls.push();
        }
    }
}

impl TlsStream {
    pub(crate) fn new(sock: TcpStream, session: ServerConnection) -> TlsStream {
        TlsStream { sock, session }
    }

    /// See [`Transport::push_tls`].
    pub(crate) fn push(&mut self) -> io::Result<bool> {
        while self.session.wants_write() {
            match self.session.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Plaintext rustls holds is returned first; the socket is read only when there is none,
    /// so rustls's plaintext buffer never fills. `Ok(0)` at close_notify or the end of the TCP
    /// stream; `InvalidData` for a TLS protocol error (the alert is sent, best effort).
    fn read_plain(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The TCP stream ended without close_notify: an end all the same.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match self.session.read_tls(&mut self.sock) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    let processed = self.session.process_new_packets();
                    // Handshake answers, alerts and tickets leave now; a full socket keeps
                    // the rest for the next push (the writable edge drives the connection).
                    let _ = self.push();
                    if let Err(e) = processed {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Hands up to `data.len()` plaintext bytes to rustls to encrypt; returns how many it
    /// took (0 when its buffer of unsent records is full: push first).
    pub(crate) fn write_plain(&mut self, data: &[u8]) -> io::Result<usize> {
        self.session.writer().write(data)
    }
}

impl Read for Transport {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(sock) => sock.read(buf),
            Transport::Tls(tls) => tls.read_plain(buf),
            Transport::Ring(r) => r.read(buf),
        }
    }
}
