//! What a socket's readiness means for its connection: connected, handshake progress, room to
//! write, bytes or the end of the stream to read. Written once for plain and TLS, over the
//! transport's status ([`Io`]); the request's end is handed to worker/outcome.rs.

use std::io;
use std::time::Instant;

use herd_stats::FailureKind;

use super::outcome::Next;
use super::Worker;
use crate::conn::{connect_or, State, Wrote};
use crate::session::{AtEof, Fed};
use crate::transport::{Fault, Io};
use crate::Recorder;

impl<R: Recorder> Worker<'_, R> {
    pub(super) fn on_event(
        &mut self,
        i: usize,
        readable: bool,
        writable: bool,
        read_closed: bool,
        error: bool,
        buf: &mut [u8],
    ) {
        match self.conns[i].state() {
            State::Closed => {}
            State::Idle => {
                let closed = read_closed || error;
                if closed || (readable && !self.conns[i].still_idle(buf)) {
                    // A kept-alive connection the server closed (or wrote to) between requests.
                    self.close(i);
                    self.base.free.push(i);
                }
            }
            State::Thinking => {
                if readable || read_closed || error {
                    // The server closed it during the pause: the next request opens anew.
                    self.conns[i].drop_socket();
                }
            }
            State::Connecting => {
                if error || (read_closed && !writable) {
                    let e = self.take_socket_error(i);
                    self.connect_failed(i, e);
                } else if writable || readable {
                    self.on_connected(i);
                }
            }
            State::Handshaking => self.drive_handshake(i),
            State::Writing => {
                if writable || error {
                    self.write_request(i);
                }
                if readable && self.conns[i].state() == State::Writing {
                    // The server answered before the request was fully written (an early
                    // error response): read it.
                    self.on_readable(i, read_closed, buf);
                }
            }
            State::Reading | State::AwaitClose => {
                if readable || read_closed || error {
                    self.on_readable(i, read_closed, buf);
                }
            }
        }
    }

    fn take_socket_error(&mut self, i: usize) -> io::Error {
        let err = self.conns[i].socket().and_then(|s| s.take_error().ok().flatten());
        err.unwrap_or_else(|| io::Error::from(io::ErrorKind::ConnectionRefused))
    }

    /// TCP is connected: start TLS, or write the request.
    pub(super) fn on_connected(&mut self, i: usize) {
        self.base.connected();
        match &self.base.spec.target.tls {
            Some(tls) => match tls.connect() {
                Ok(session) => {
                    self.conns[i].start_tls(session);
                    self.drive_handshake(i);
                }
                Err(_) => self.fail(i, FailureKind::Tls, None, false),
            },
            None => {
                self.conns[i].on_connect(Instant::now());
                self.write_request(i);
            }
        }
    }

    fn drive_handshake(&mut self, i: usize) {
        match self.conns[i].handshake() {
            Io::Done(_) => {
                let now = Instant::now();
                if self.base.tls_info.is_none() {
                    self.base.tls_info = self.conns[i].tls_info();
                }
                self.conns[i].on_connect(now);
                self.write_request(i);
            }
            Io::Retry => {}
            Io::Eof | Io::Err(Fault::Tls) => self.fail(i, FailureKind::Tls, None, false),
            Io::Err(Fault::Os(e)) => {
                let kind = connect_or(e.raw_os_error(), FailureKind::Tls);
                self.fail(i, kind, Some(e), false);
            }
        }
    }

    pub(super) fn write_request(&mut self, i: usize) {
        match self.conns[i].write(&self.base.spec.workload) {
            Wrote::All | Wrote::Blocked => {}
            Wrote::Failed { kind, err, retry } => self.fail(i, kind, err, retry),
        }
    }

    /// Reads what connection `i` has, as far as its receive-rate cap allows.
    /// `read_closed`: epoll has reported the peer's FIN.
    pub(super) fn on_readable(&mut self, i: usize, read_closed: bool, buf: &mut [u8]) {
        let drains = self.conns[i].short_read_drains();
        loop {
            let limit = match self.conns[i].read_limit(buf.len()) {
                Ok(n) => n,
                Err(at) => {
                    // Paced: the timer resumes reading.
                    if !self.base.timers.is_set(i) {
                        self.base.timers.set(i, at);
                    }
                    return;
                }
            };
            let Some(into) = buf.get_mut(..limit) else { return };
            match self.conns[i].read(into) {
                Io::Retry => return,
                Io::Eof => return self.on_eof(i),
                Io::Err(Fault::Tls) => return self.fail(i, FailureKind::Tls, None, false),
                Io::Err(Fault::Os(e)) => return self.on_read_error(i, e),
                Io::Done(n) => {
                    let read = into.get(..n).unwrap_or_default();
                    let more = self.on_data(i, read);
                    // A short plain read drained the socket. With EPOLLRDHUP already
                    // reported, the FIN is behind the data just read: no need for a read
                    // that returns 0.
                    let drained = drains && n < limit;
                    if !more {
                        // The request ended here. If the server's FIN came with its response
                        // (the usual case for a server that closes), finish now: no further
                        // edge will report it. Over TLS the close_notify may already sit in
                        // rustls, where no edge would ever announce it: read on.
                        if self.conns[i].state() != State::AwaitClose {
                            return;
                        }
                        if drains {
                            if read_closed && drained {
                                self.on_eof(i);
                            }
                            return;
                        }
                        continue;
                    }
                    if drained {
                        if read_closed {
                            self.on_eof(i);
                        }
                        return;
                    }
                }
            }
        }
    }

    /// Feeds response bytes; returns false when the connection is done with this read
    /// (its request completed or failed).
    fn on_data(&mut self, i: usize, data: &[u8]) -> bool {
        let now = Instant::now();
        let mut data = data;
        loop {
            match self.conns[i].on_bytes(data, now) {
                Fed::More => return true,
                Fed::Failed(kind) => {
                    self.fail(i, kind, None, false);
                    return false;
                }
                Fed::Complete { consumed } => {
                    let rest = data.get(consumed..).unwrap_or_default();
                    if self.conns[i].queued() > 0 {
                        // Pipelined: this response is done, the next one's bytes follow.
                        if !self.complete_pipelined(i, now) {
                            return false;
                        }
                        let reading = self.conns[i].state() == State::Reading;
                        if rest.is_empty() || !reading {
                            return reading;
                        }
                        data = rest;
                        continue;
                    }
                    if rest.is_empty() {
                        self.on_complete(i, now);
                    } else {
                        self.conns[i].trailing(rest.len());
                        self.fail(i, FailureKind::Overrun, None, false);
                    }
                    return false;
                }
            }
        }
    }

    pub(super) fn on_eof(&mut self, i: usize) {
        let now = Instant::now();
        match self.conns[i].state() {
            State::AwaitClose => self.complete(i, now, Next::Reopen),
            State::Reading | State::Writing => match self.conns[i].on_eof() {
                AtEof::Complete => self.complete(i, now, Next::Reopen),
                AtEof::NoResponse => {
                    // Nothing of a response arrived. On a reused connection this is the
                    // keep-alive race (the server closed it as we sent): retry, uncounted.
                    let retry = self.conns[i].reused();
                    self.fail(i, FailureKind::Closed, None, retry);
                }
                AtEof::Broken => self.fail(i, FailureKind::Closed, None, false),
            },
            State::Connecting => self.fail(i, FailureKind::Connect, None, false),
            State::Handshaking => self.fail(i, FailureKind::Tls, None, false),
            State::Idle => {
                self.close(i);
                self.base.free.push(i);
            }
            State::Thinking => self.conns[i].drop_socket(),
            State::Closed => {}
        }
    }

    fn on_read_error(&mut self, i: usize, e: io::Error) {
        let c = &self.conns[i];
        let kind = match c.state() {
            State::Connecting => FailureKind::Connect,
            _ => FailureKind::Receive,
        };
        let retry = c.reused() && c.current().bytes_read() == 0 && kind == FailureKind::Receive;
        self.fail(i, kind, Some(e), retry);
    }
}
