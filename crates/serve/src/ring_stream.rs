//! A plain TCP connection on an io_uring worker (`herd serve --io uring`, worker/ring_loop.rs):
//! what its socket would be on epoll, as buffers the worker's ring fills and empties. The
//! ring's multishot receive hands the worker the bytes that came ([`RingStream::received`]);
//! the connection reads them through [`std::io::Read`] as it would read the socket (HTTP/1 and
//! HTTP/2 alike, so neither knows the backend). What the connection writes goes to `outbox`
//! (write_queue.rs, h2/conn.rs), which the worker hands to the ring once a turn: moved, not
//! copied, when the ring holds nothing of the connection's, and given back after the send, so
//! one buffer goes round.
//!
//! Three things the ring changes: the bytes written are not in the socket when `drive`
//! returns, so a close or a shutdown waits until the ring says they were sent
//! ([`RingStream::close_when_sent`], [`RingStream::shutdown_write`]); "would block" means
//! nothing received is left, not an empty socket; and a receive is armed only when the
//! connection has read everything received before ([`RingStream::wants_recv`]): one read at a
//! time, as epoll's loop reads only a connection that wants to read, so a client that sends
//! without reading is held back by TCP's window, not buffered here without bound. (A
//! multishot receive would take whatever comes.)

use std::io;
use std::net::Shutdown;

use mio::net::TcpStream;

#[derive(Debug)]
pub(crate) struct RingStream {
    pub(crate) sock: TcpStream,
    /// Received and not read yet: from `at` on.
    inbox: Vec<u8>,
    at: usize,
    /// The receive ended: at the peer's FIN (None) or with an error.
    ended: Option<Option<io::ErrorKind>>,
    /// Written, for the ring to send at the end of the turn.
    pub(crate) outbox: Vec<u8>,
    /// Bytes handed to the ring that it has not said were sent.
    held: usize,
    /// The connection closes once the ring has sent all it holds (the ring's close would
    /// cancel a send in flight).
    pub(crate) close_when_sent: bool,
    /// Our side shuts down once the ring has sent all it holds.
    shutdown_when_sent: bool,
    /// A receive is armed on the ring.
    recv_armed: bool,
}

impl RingStream {
    pub(crate) fn new(sock: TcpStream) -> RingStream {
        RingStream {
            sock,
            inbox: Vec::new(),
            at: 0,
            ended: None,
            outbox: Vec::new(),
            held: 0,
            close_when_sent: false,
            shutdown_when_sent: false,
            recv_armed: false,
        }
    }

    /// Whether a receive should be armed: none is, the input has not ended, and everything
    /// received so far was read.
    pub(crate) fn wants_recv(&self) -> bool {
        !self.recv_armed && self.ended.is_none() && self.at == self.inbox.len()
    }

    /// A receive was armed on the ring.
    pub(crate) fn recv_armed(&mut self) {
        self.recv_armed = true;
    }

    /// Bytes the ring received, in order: the receive that brought them is over.
    pub(crate) fn received(&mut self, bytes: &[u8]) {
        self.recv_armed = false;
        if self.at == self.inbox.len() {
            self.inbox.clear();
            self.at = 0;
        }
        self.inbox.extend_from_slice(bytes);
    }

    /// The ring's receive ended: the peer's FIN (`None`) or an error.
    pub(crate) fn ended(&mut self, error: Option<io::ErrorKind>) {
        self.recv_armed = false;
        self.ended = Some(error);
    }

    /// Whether anything is still to be sent: written and not handed over, or in flight.
    pub(crate) fn sending(&self) -> bool {
        self.held > 0 || !self.outbox.is_empty()
    }

    /// Bytes not yet sent: written, and held by the ring. The connection stops writing at
    /// its high-water mark until the ring's send completes, as it stops on epoll when the
    /// socket is full.
    pub(crate) fn unsent(&self) -> usize {
        self.held + self.outbox.len()
    }

    /// The outbox was handed to the ring (and left empty).
    pub(crate) fn handed(&mut self, n: usize) {
        self.held += n;
    }

    /// The ring sent everything it held: a shutdown that waited for that happens now.
    pub(crate) fn sent(&mut self) {
        self.held = 0;
        if self.shutdown_when_sent && self.outbox.is_empty() {
            self.shutdown_when_sent = false;
            let _ = self.sock.shutdown(Shutdown::Write);
        }
    }

    pub(crate) fn shutdown_write(&mut self) -> io::Result<()> {
        if self.sending() {
            self.shutdown_when_sent = true;
            Ok(())
        } else {
            self.sock.shutdown(Shutdown::Write)
        }
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = &self.inbox[self.at..];
        if left.is_empty() {
            return self.end_of_input();
        }
        let n = left.len().min(buf.len());
        buf[..n].copy_from_slice(&left[..n]);
        self.at += n;
        Ok(n)
    }

    /// Drops what was received: how many bytes, or as [`RingStream::read`] when none.
    pub(crate) fn discard_some(&mut self) -> io::Result<usize> {
        let n = self.inbox.len() - self.at;
        self.inbox.clear();
        self.at = 0;
        if n > 0 {
            Ok(n)
        } else {
            self.end_of_input()
        }
    }

    fn end_of_input(&self) -> io::Result<usize> {
        match self.ended {
            None => Err(io::ErrorKind::WouldBlock.into()),
            Some(None) => Ok(0),
            Some(Some(kind)) => Err(kind.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> RingStream {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        drop(client);
        let (accepted, _) = listener.accept().unwrap();
        RingStream::new(TcpStream::from_std(accepted))
    }

    #[test]
    fn reads_what_came_in_order_then_would_block_then_ends() {
        let mut s = stream();
        let mut buf = [0u8; 4];
        assert_eq!(s.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        s.received(b"GET /");
        s.received(b" HTTP");
        assert_eq!(s.read(&mut buf).unwrap(), 4);
        assert_eq!(&buf, b"GET ");
        assert_eq!(s.read(&mut buf).unwrap(), 4);
        assert_eq!(&buf, b"/ HT");
        assert_eq!(s.read(&mut buf).unwrap(), 2);
        assert_eq!(s.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        s.received(b"x");
        s.ended(None);
        assert_eq!(s.read(&mut buf).unwrap(), 1, "the bytes before the end come first");
        assert_eq!(s.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn a_receive_is_wanted_only_once_all_received_was_read() {
        let mut s = stream();
        assert!(s.wants_recv());
        s.recv_armed();
        assert!(!s.wants_recv(), "one receive at a time");
        s.received(b"abc");
        assert!(!s.wants_recv(), "not before the connection read what came");
        let mut buf = [0u8; 2];
        s.read(&mut buf).unwrap();
        assert!(!s.wants_recv());
        s.read(&mut buf).unwrap();
        assert!(s.wants_recv());
        s.ended(None);
        assert!(!s.wants_recv(), "nothing after the end");
    }

    #[test]
    fn an_error_ends_input_after_the_bytes_before_it() {
        let mut s = stream();
        s.received(b"ab");
        s.ended(Some(io::ErrorKind::ConnectionReset));
        assert_eq!(s.discard_some().unwrap(), 2);
        assert_eq!(s.discard_some().unwrap_err().kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn a_shutdown_waits_for_the_bytes_in_flight() {
        let mut s = stream();
        s.outbox.extend_from_slice(b"response");
        s.shutdown_write().unwrap();
        assert!(s.shutdown_when_sent, "not while the response is still ours to send");
        let n = std::mem::take(&mut s.outbox).len();
        s.handed(n);
        assert_eq!(s.unsent(), 8);
        s.sent();
        assert!(!s.shutdown_when_sent && !s.sending());
    }
}
