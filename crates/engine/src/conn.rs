//! One HTTP/1 connection: its [`Transport`], its protocol ([`Http1`]), its receive-rate
//! [`Throttle`], and where it stands ([`State`]). Every change of state is a method here, so
//! that a transition reads in one place; the worker decides which transition comes next (the
//! schedule, the quota, the recorder) and never touches the fields.

use std::io;
use std::time::Instant;

use herd_stats::FailureKind;
use rustls::ClientConnection;

use crate::recorder::{Completed, Failed};
use crate::session::{After, AtEof, Exchange, Fed, Http1};
use crate::socket::Socket;
use crate::throttle::Throttle;
use crate::transport::{Fault, Io, Transport};
use crate::workload::Workload;

/// Where the connection stands.
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
    /// The response is complete and the server is expected to close (see
    /// [`After::AwaitClose`]).
    AwaitClose,
    /// Open loop only: kept alive, waiting for the schedule's next request.
    Idle,
    /// Closed loop with think time (or a connect back-off): waiting for the connection's
    /// timer before its next request, with the socket kept alive or already closed.
    Thinking,
}

/// How writing the current request went.
#[derive(Debug)]
pub(crate) enum Wrote {
    /// All of it is on its way; the connection now waits for the response.
    All,
    /// The socket is full; its writable edge resumes the write.
    Blocked,
    /// The request fails; `retry`: re-send it on a new connection, uncounted (the server
    /// closed a reused connection before any of it got through: the keep-alive race).
    Failed { kind: FailureKind, err: Option<io::Error>, retry: bool },
}

pub(crate) struct Conn {
    transport: Option<Transport>,
    state: State,
    http1: Http1,
    /// The receive-rate cap, when the run has one.
    throttle: Option<Throttle>,
    /// Responses this connection has carried before the current request.
    responses: u32,
    /// Requests it may carry in all (drawn when it opens; u32::MAX: no limit).
    limit: u32,
    /// Open loop: when it last became free or idle, waiting for the schedule.
    waiting_since: Instant,
    /// When the response completed ([`State::AwaitClose`]).
    completed_at: Option<Instant>,
    /// Opened before the run's start (warm.rs): its first request is timed as one on a
    /// kept-alive connection.
    opened_ahead: bool,
}

impl Conn {
    pub(crate) fn new(http1: Http1, now: Instant) -> Conn {
        Conn {
            transport: None,
            state: State::Closed,
            http1,
            throttle: None,
            responses: 0,
            limit: u32::MAX,
            waiting_since: now,
            completed_at: None,
            opened_ahead: false,
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// A request is in progress.
    #[inline]
    pub(crate) fn is_busy(&self) -> bool {
        !matches!(self.state, State::Closed | State::Idle | State::Thinking)
    }

    #[inline]
    pub(crate) fn has_socket(&self) -> bool {
        self.transport.is_some()
    }

    /// The connection carried a response before the current request.
    #[inline]
    pub(crate) fn reused(&self) -> bool {
        self.responses > 0 || self.opened_ahead
    }

    #[inline]
    pub(crate) fn current(&self) -> &Exchange {
        self.http1.current()
    }

    #[inline]
    pub(crate) fn waiting_since(&self) -> Instant {
        self.waiting_since
    }

    pub(crate) fn completed_at(&self) -> Option<Instant> {
        self.completed_at
    }

    /// Requests the connection may carry at once.
    #[inline]
    pub(crate) fn max_concurrent_streams(&self) -> u32 {
        self.http1.max_concurrent_streams()
    }

    /// Requests in flight behind the current one (pipelining).
    #[inline]
    pub(crate) fn queued(&self) -> usize {
        self.http1.queued()
    }

    /// Whether the request `ahead` places after the current one (0: the next) is the last
    /// this connection carries.
    #[inline]
    pub(crate) fn is_last(&self, keep_alive: bool, ahead: u32) -> bool {
        !keep_alive || self.responses.saturating_add(ahead.saturating_add(1)) >= self.limit
    }

    /// Drops the socket (closing it removes it from epoll); nothing is in flight any more.
    /// Out of line: once per connection, and kept out of the per-request paths that call it
    /// on their less common branches.
    #[inline(never)]
    pub(crate) fn close(&mut self) {
        self.drop_socket();
        self.state = State::Closed;
    }

    /// Drops the socket but keeps the state (a thinking connection the server closed).
    pub(crate) fn drop_socket(&mut self) {
        self.transport = None;
        self.responses = 0;
        self.opened_ahead = false;
        self.http1.reset();
    }

    /// Closed, about to open again: it may carry `limit` requests, reading under `throttle`.
    /// The current request's record stays, for a retry to send it again.
    pub(crate) fn reopen(&mut self, limit: u32, throttle: Option<Throttle>) {
        self.close();
        self.limit = limit;
        self.throttle = throttle;
    }

    /// Takes `t`, opened before the run's start: open and idle, it may carry `limit`
    /// requests, reading under `throttle`.
    pub(crate) fn adopt(
        &mut self,
        t: Transport,
        limit: u32,
        throttle: Option<Throttle>,
        now: Instant,
    ) {
        self.reopen(limit, throttle);
        self.transport = Some(t);
        self.opened_ahead = true;
        self.idle(now);
    }

    /// Idle, its socket readable: whether it is still idle ([`Transport::still_idle`]).
    pub(crate) fn still_idle(&mut self, buf: &mut [u8]) -> bool {
        self.transport.as_mut().is_some_and(|t| t.still_idle(buf))
    }

    /// Hands request `ex` to its protocol: the next request, or one more of a batch.
    #[inline(always)]
    pub(crate) fn submit(&mut self, ex: Exchange, workload: &Workload, want_server: bool) {
        self.http1.submit(ex, workload, want_server);
    }

    /// Open loop: the current request was due at `intended`, and a connection free for it
    /// at `ready`.
    pub(crate) fn due(&mut self, intended: Instant, ready: Instant) {
        let ex = self.http1.current_mut();
        *ex = ex.due(intended, ready);
    }

    /// connect() has started on `sock`.
    pub(crate) fn connecting(&mut self, sock: Socket) {
        self.transport = Some(Transport::Plain(sock));
        self.state = State::Connecting;
    }

    /// TCP is up: the TLS handshake starts.
    pub(crate) fn start_tls(&mut self, session: ClientConnection) {
        self.transport = self.transport.take().map(|t| t.start_tls(session));
        self.state = State::Handshaking;
    }

    pub(crate) fn handshake(&mut self) -> Io {
        match self.transport.as_mut() {
            Some(t) => t.handshake(),
            None => Io::Eof,
        }
    }

    pub(crate) fn socket(&self) -> Option<&Socket> {
        self.transport.as_ref().map(Transport::socket)
    }

    pub(crate) fn tls_info(&self) -> Option<crate::TlsInfo> {
        self.transport.as_ref().and_then(Transport::tls_info)
    }

    /// The transport is ready (TCP, and TLS if any): the request may be written.
    pub(crate) fn on_connect(&mut self, now: Instant) {
        self.ready(now);
    }

    /// The current request may be written now (its connection is ready).
    #[inline]
    pub(crate) fn ready(&mut self, now: Instant) {
        self.http1.current_mut().connected_at(now);
        self.state = State::Writing;
    }

    /// Writes what the protocol has to send, as far as the socket takes it.
    #[inline(always)]
    pub(crate) fn write(&mut self, workload: &Workload) -> Wrote {
        let Some(t) = self.transport.as_mut() else {
            return Wrote::Failed { kind: FailureKind::Write, err: None, retry: false };
        };
        loop {
            let data = self.http1.to_write(workload);
            if data.is_empty() {
                // Written before, but not all sent on (TLS): send the rest.
                match t.flush() {
                    Io::Done(_) => break,
                    Io::Retry => return Wrote::Blocked,
                    other => return self.flush_failed(other),
                }
            }
            match t.write(data) {
                Io::Done(n) => {
                    let all = n == data.len();
                    self.http1.wrote(n);
                    // TLS holds all it can take (or all of it): send that on. Nothing to do
                    // for plain, where this is the whole of a request's write.
                    if all || n == 0 {
                        match t.flush() {
                            Io::Done(_) if all => break,
                            Io::Done(_) => {}
                            Io::Retry => return Wrote::Blocked,
                            other => return self.flush_failed(other),
                        }
                    }
                }
                Io::Retry => return Wrote::Blocked,
                Io::Eof => return self.write_failed(None),
                Io::Err(fault) => return self.write_failed(Some(fault)),
            }
        }
        self.http1.written(Instant::now());
        self.state = State::Reading;
        Wrote::All
    }

    /// Sending what the transport held failed: the request had been handed over whole, the
    /// socket refused the records.
    fn flush_failed(&self, io: Io) -> Wrote {
        match io {
            Io::Err(Fault::Os(e)) => {
                let retry = self.reused();
                Wrote::Failed { kind: FailureKind::Write, err: Some(e), retry }
            }
            _ => self.write_failed(None),
        }
    }

    fn write_failed(&self, fault: Option<Fault>) -> Wrote {
        let written = self.http1.bytes_written();
        match fault {
            Some(Fault::Os(e)) => {
                // A connection that never carried a byte failed to connect, if the OS says so.
                let fresh = !self.reused() && written == 0;
                let kind = if fresh {
                    connect_or(e.raw_os_error(), FailureKind::Write)
                } else {
                    FailureKind::Write
                };
                let retry = self.reused() && written == 0;
                Wrote::Failed { kind, err: Some(e), retry }
            }
            Some(Fault::Tls) => Wrote::Failed { kind: FailureKind::Tls, err: None, retry: false },
            None => Wrote::Failed { kind: FailureKind::Write, err: None, retry: false },
        }
    }

    /// How much may be read now: `Ok(max)` at most, or `Err(at)` when the receive-rate cap
    /// allows nothing before `at`.
    #[inline]
    pub(crate) fn read_limit(&mut self, max: usize) -> Result<usize, Instant> {
        crate::throttle::read_limit(&mut self.throttle, max)
    }

    /// One read into `buf`.
    #[inline(always)]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Io {
        let io = match self.transport.as_mut() {
            Some(t) => t.read(buf),
            None => Io::Eof,
        };
        if let (Io::Done(n), Some(t)) = (&io, &mut self.throttle) {
            t.spend(*n);
        }
        io
    }

    /// See [`Transport::short_read_drains`].
    #[inline]
    pub(crate) fn short_read_drains(&self) -> bool {
        self.transport.as_ref().is_some_and(Transport::short_read_drains)
    }

    /// Response bytes that arrived at `now`.
    #[inline(always)]
    pub(crate) fn on_bytes(&mut self, data: &[u8], now: Instant) -> Fed {
        if self.state == State::AwaitClose {
            // Bytes after a complete response that the server was going to close.
            self.http1.on_trailing(data.len());
            return Fed::Failed(FailureKind::Overrun);
        }
        self.http1.on_read(data, now)
    }

    /// `n` bytes followed a complete response (it fails as an overrun).
    pub(crate) fn trailing(&mut self, n: usize) {
        self.http1.on_trailing(n);
    }

    /// What to do after the response that just completed (None: there is none).
    #[inline]
    pub(crate) fn after(&self) -> Option<After> {
        self.http1.after()
    }

    /// The server closed the connection: what that meant for the response in progress.
    pub(crate) fn on_eof(&mut self) -> AtEof {
        self.http1.on_eof()
    }

    /// The response is complete; the server closes next.
    pub(crate) fn await_close(&mut self, now: Instant) {
        self.completed_at = Some(now);
        self.state = State::AwaitClose;
    }

    /// The current request ended and was recorded; true when a pipelined request's response
    /// follows on this connection.
    #[inline]
    pub(crate) fn finish(&mut self, workload: &Workload) -> bool {
        self.responses = self.responses.saturating_add(1);
        self.http1.finish(workload)
    }

    /// The next pipelined request behind the current one, which failed.
    pub(crate) fn take_queued(&mut self) -> Option<usize> {
        self.http1.take_queued()
    }

    /// Open loop: kept alive, waiting for the schedule since `now`.
    #[inline]
    pub(crate) fn idle(&mut self, now: Instant) {
        self.state = State::Idle;
        self.waiting_since = now;
    }

    /// Open loop: closed, waiting for the schedule since `now`.
    pub(crate) fn free(&mut self, now: Instant) {
        self.waiting_since = now;
    }

    /// Waiting for its timer before the next request (think time, or a connect back-off).
    pub(crate) fn think(&mut self) {
        self.state = State::Thinking;
    }

    /// The complete response, for the recorder; `conn` is the connection's run-wide number.
    #[inline(always)]
    pub(crate) fn completed<'a>(
        &'a self,
        end: Instant,
        want_server: bool,
        conn: u32,
        workload: &Workload,
    ) -> Option<Completed<'a>> {
        let r = self.http1.response(workload, want_server)?;
        let ex = self.http1.current();
        Some(Completed {
            timing: ex.timing(end),
            status: r.head.status,
            reusable: r.head.reusable,
            body_bytes: r.body_bytes,
            bytes_read: ex.bytes_read(),
            bytes_written: r.bytes_written,
            reused: self.reused(),
            server: r.server,
            request: ex.req(),
            conn,
        })
    }

    /// The current request's failure, for the recorder.
    pub(crate) fn failed(
        &self,
        kind: FailureKind,
        end: Instant,
        err: Option<&io::Error>,
        conn: u32,
    ) -> Failed {
        let ex = self.http1.current();
        Failed {
            kind,
            timing: ex.timing(end),
            bytes_read: ex.bytes_read(),
            bytes_written: self.http1.bytes_written() as u64,
            os_error: err.and_then(io::Error::raw_os_error),
            reused: self.reused(),
            request: ex.req(),
            conn,
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
