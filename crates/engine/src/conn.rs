//! One connection's state: its socket (plain or TLS), where its current request stands,
//! and that request's timings. The worker drives it; this file holds no policy.

use std::collections::VecDeque;
use std::io;
use std::time::Instant;

use herd_proto::{Limits, ResponseParser};

use crate::recorder::Timing;
use crate::stream::Stream;
use rustls::ClientConnection;

/// Where the connection's current request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// No socket; the connection is idle (its share of requests is done) or waiting to
    /// be reopened.
    Closed,
    /// connect() is in progress.
    Connecting,
    /// TCP is up; the TLS handshake is in progress.
    Handshaking,
    /// Writing the request (more than one write only when the socket buffer fills).
    Writing,
    /// Waiting for, or reading, the response.
    Reading,
    /// The response is complete and the server is expected to close: waiting for its FIN
    /// so that, as with ab, TIME_WAIT stays on the server side and the request ends when
    /// the connection does.
    AwaitClose,
    /// Open loop only: kept alive, waiting for the schedule's next request.
    Idle,
    /// Closed loop with think time: waiting for the connection's timer before its next
    /// request, with the socket kept alive or already closed.
    Thinking,
}

pub(crate) struct Conn {
    pub(crate) sock: Option<Stream>,
    pub(crate) tls: Option<Box<ClientConnection>>,
    pub(crate) state: State,
    pub(crate) parser: ResponseParser,
    /// Bytes of the request written so far.
    pub(crate) written_bytes: usize,
    pub(crate) start: Instant,
    /// When the request was due: `start` in a closed loop, the schedule's time in an open one.
    pub(crate) intended: Instant,
    /// When the request was due and this connection free for it (see [`Timing::ready`]).
    pub(crate) ready: Instant,
    /// Open loop: when the connection last became free or idle, waiting for the schedule.
    pub(crate) waiting_since: Instant,
    pub(crate) connected: Option<Instant>,
    pub(crate) written: Option<Instant>,
    pub(crate) first_byte: Option<Instant>,
    /// When the response completed (for [`State::AwaitClose`]).
    pub(crate) completed_at: Option<Instant>,
    /// Bytes read for the current request.
    pub(crate) bytes_read: u64,
    /// Responses this connection has carried before the current request.
    pub(crate) responses: u32,
    /// The current request is aborted if not finished by then.
    pub(crate) deadline: Instant,
    /// Which of the workload's requests is in progress.
    pub(crate) req: usize,
    /// The current request is the last this connection carries (sent asking to close).
    pub(crate) last: bool,
    /// Requests this connection may carry in all (drawn when it opens; u32::MAX: no limit).
    pub(crate) limit: u32,
    /// The connection's pending timer (think time, or a paced read), if any: a timer-heap
    /// entry whose time differs is stale.
    pub(crate) timer_at: Option<Instant>,
    /// Receive-rate cap: bytes the connection may read now, and when that was computed.
    pub(crate) rx_tokens: f64,
    pub(crate) rx_last: Instant,
    /// Pipelining: the requests written after the current one, whose responses follow its
    /// own (request, last), and the bytes of the whole batch. Empty without pipelining.
    pub(crate) queued: VecDeque<(usize, bool)>,
    pub(crate) batch: Vec<u8>,
}

/// The result of one read attempt.
pub(crate) enum ReadOutcome {
    Data(usize),
    Eof,
    WouldBlock,
    Error(io::Error),
}

impl Conn {
    pub(crate) fn new(limits: Limits, now: Instant) -> Conn {
        Conn {
            sock: None,
            tls: None,
            state: State::Closed,
            parser: ResponseParser::new(limits),
            written_bytes: 0,
            start: now,
            intended: now,
            ready: now,
            waiting_since: now,
            connected: None,
            written: None,
            first_byte: None,
            completed_at: None,
            bytes_read: 0,
            responses: 0,
            deadline: now,
            req: 0,
            last: false,
            limit: u32::MAX,
            timer_at: None,
            rx_tokens: 0.0,
            rx_last: now,
            queued: VecDeque::new(),
            batch: Vec::new(),
        }
    }

    /// Starts timing a new request at `now`.
    pub(crate) fn begin_request(&mut self, now: Instant, timeout: std::time::Duration, head: bool) {
        self.start = now;
        self.intended = now;
        self.ready = now;
        self.connected = None;
        self.written = None;
        self.first_byte = None;
        self.completed_at = None;
        self.written_bytes = 0;
        self.bytes_read = 0;
        self.deadline = now + timeout;
        self.parser.reset(head);
    }

    /// The current request's timings, ending at `end`.
    pub(crate) fn timing(&self, end: Instant) -> Timing {
        Timing {
            intended: self.intended,
            ready: self.ready,
            start: self.start,
            connected: self.connected,
            written: self.written,
            first_byte: self.first_byte,
            end,
        }
    }

    /// Drops the socket (closing it removes it from epoll) and any pending timer.
    pub(crate) fn close(&mut self) {
        self.drop_socket();
        self.state = State::Closed;
        self.timer_at = None;
    }

    /// Drops the socket but keeps the state (a thinking connection the server closed).
    pub(crate) fn drop_socket(&mut self) {
        self.sock = None;
        self.tls = None;
        self.responses = 0;
        self.queued.clear();
        self.batch.clear();
    }

    /// A request is in progress.
    pub(crate) fn is_busy(&self) -> bool {
        !matches!(self.state, State::Closed | State::Idle | State::Thinking)
    }

    /// One plain read into `buf`.
    ///
    /// Through rustix, a raw read(2): std's socket read goes through glibc's recv(), which
    /// in a multi-threaded process takes the cancellation-point path on every call. The
    /// bench profile (BENCHMARKS.md) counted that at about 1.4 % of the client's CPU on
    /// keep-alive requests, where the client's whole user-space budget is a few percent.
    pub(crate) fn read_plain(&mut self, buf: &mut [u8]) -> ReadOutcome {
        let Some(sock) = self.sock.as_ref() else { return ReadOutcome::Eof };
        loop {
            match rustix::io::read(sock, &mut *buf) {
                Ok(0) => return ReadOutcome::Eof,
                Ok(n) => return ReadOutcome::Data(n),
                Err(rustix::io::Errno::AGAIN) => return ReadOutcome::WouldBlock,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return ReadOutcome::Error(e.into()),
            }
        }
    }

    /// One plain write of the unwritten part of `request`; returns bytes written. A raw
    /// write(2), for the reason given at [`Conn::read_plain`].
    pub(crate) fn write_plain(&self, request: &[u8]) -> io::Result<usize> {
        let Some(sock) = self.sock.as_ref() else {
            return Err(io::Error::from(io::ErrorKind::NotConnected));
        };
        let rest = request.get(self.written_bytes..).unwrap_or(&[]);
        loop {
            match rustix::io::write(sock, rest) {
                Ok(n) => return Ok(n),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}
