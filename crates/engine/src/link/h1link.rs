//! HTTP/1.x as a [`Link`]: HTTP/1's protocol ([`Http1`], session/) on a TCP transport, plain
//! or TLS. Its room is one request, or a pipelined batch of up to the depth while nothing of
//! it is written; a batch goes out in one write and its responses come back in order.
//!
//! Each response is reported as soon as it is parsed, before the next one of the same read
//! (a pipelined batch's responses often arrive in one), so that its `Server` header is read
//! from the parser in place and nothing is copied. What happens to the connection after a
//! response is the server's word and herd's: kept for the next request, closed by herd, or
//! (the server said it would close) held until the server's close ends the request, so that
//! TIME_WAIT stays on the server's side as with ab.
//!
//! A request on a reused connection that the server closed before any byte of a response
//! came back is the keep-alive race: the server closed it as the request went out. It goes
//! again on a new connection, uncounted ([`Outcomes::retry`]).

use std::io;
use std::time::{Duration, Instant};

use herd_stats::FailureKind;

use super::seam::{Dial, Link, Outcomes, Progress, Readiness, Received};
use super::tcp::{connect_or, Read, Tcp};
use crate::quic::QuicStats;
use crate::recorder::{Completed, Failed};
use crate::session::{After, AtEof, Exchange, Fed, Http1};
use crate::throttle::Throttle;
use crate::transport::{Fault, Io, Transport};
use crate::{RunSpec, Schedule};

/// What a worker's HTTP/1 connections share.
pub(crate) struct H1Ctx<'a> {
    spec: &'a RunSpec,
    /// Requests written at once (1: no pipelining).
    depth: u32,
    /// Ask the parser for the `Server` header until one response has delivered it (the
    /// recorder wants it once per run).
    want_server: bool,
}

impl<'a> H1Ctx<'a> {
    pub(crate) fn new(spec: &'a RunSpec) -> Self {
        let depth = match spec.schedule {
            Schedule::Pipelined { depth, .. } => depth.get(),
            Schedule::Closed { .. } | Schedule::Rate { .. } => 1,
        };
        H1Ctx { spec, depth, want_server: true }
    }
}

pub(crate) struct H1Link {
    tcp: Tcp,
    http1: Http1,
    /// Open: requests may go.
    ready: bool,
    /// Responses it carried before the current request (closing resets the count).
    responses: u32,
    /// Opened before the run's start (warm.rs): its first request is timed as one on a
    /// kept-alive connection.
    opened_ahead: bool,
    /// Submitted bytes not all written yet.
    unsent: bool,
    /// The batch's last request is the connection's last: nothing joins it.
    batch_last: bool,
    /// The response is complete and the server closes next ([`After::AwaitClose`]): when it
    /// completed.
    awaiting: Option<Instant>,
    /// No request goes on it again: herd closes it once nothing is in flight.
    closing: bool,
    /// The failure just met was the keep-alive race: its requests go again.
    race: bool,
    /// It opens, and `http1` holds the request that opened it ([`Link::hold_first`]).
    holding: bool,
}

impl H1Link {
    /// The connection carried a response before the current request.
    #[inline]
    fn reused(&self) -> bool {
        self.responses > 0 || self.opened_ahead
    }

    /// Feeds response bytes that arrived at `now`; false when the connection is done with
    /// this read (its batch ended, failed or awaits the server's close).
    #[inline(always)]
    fn on_data(
        &mut self,
        ctx: &mut H1Ctx<'_>,
        data: &[u8],
        now: Instant,
        out: &mut impl Outcomes,
    ) -> bool {
        let mut data = data;
        loop {
            if self.awaiting.is_some() {
                // Bytes after a complete response that the server was going to close.
                self.http1.on_trailing(data.len());
                self.fail(FailureKind::Overrun, None, now, out);
                return false;
            }
            match self.http1.on_read(data, now) {
                Fed::More => return true,
                Fed::Failed(kind) => {
                    self.fail(kind, None, now, out);
                    return false;
                }
                Fed::Complete { consumed } => {
                    let rest = data.get(consumed..).unwrap_or_default();
                    if self.http1.queued() > 0 {
                        // Pipelined: this response is done, the next one's bytes follow.
                        if !self.complete_pipelined(ctx, now, out) {
                            return false;
                        }
                        if rest.is_empty() {
                            return true;
                        }
                        data = rest;
                        continue;
                    }
                    if rest.is_empty() {
                        self.on_complete(ctx, now, out);
                    } else {
                        self.http1.on_trailing(rest.len());
                        self.fail(FailureKind::Overrun, None, now, out);
                    }
                    return false;
                }
            }
        }
    }

    /// The last response of the batch completed at `now`.
    #[inline(always)]
    fn on_complete(&mut self, ctx: &mut H1Ctx<'_>, now: Instant, out: &mut impl Outcomes) {
        match self.http1.after() {
            Some(After::Reuse) => {
                self.record(ctx, now, out);
                self.finish(ctx);
            }
            Some(After::Close) => self.complete_and_close(ctx, now, out),
            Some(After::AwaitClose) => self.awaiting = Some(now),
            None => {}
        }
    }

    /// Reports the response that ended at `end`, and ends the connection.
    #[inline]
    fn complete_and_close(&mut self, ctx: &mut H1Ctx<'_>, end: Instant, out: &mut impl Outcomes) {
        self.record(ctx, end, out);
        self.finish(ctx);
        self.closing = true;
    }

    /// Pipelining: reports the current response and moves to the next queued request, whose
    /// timing starts with the batch's. False when the connection ends here (the server
    /// closes after this response, or the run stopped).
    fn complete_pipelined(
        &mut self,
        ctx: &mut H1Ctx<'_>,
        now: Instant,
        out: &mut impl Outcomes,
    ) -> bool {
        // A request with others queued behind it is never its connection's last, so the
        // server's word alone decides.
        let reusable = self.http1.after() == Some(After::Reuse);
        if !self.record(ctx, now, out) {
            self.closing = true;
            return false;
        }
        if !reusable {
            // The server ends the connection after this response: the requests queued behind
            // it will never be answered. Counted now, once each; any bytes that follow are
            // ignored with the connection.
            let template = Failed {
                kind: FailureKind::Closed,
                timing: self.http1.current().timing(now),
                bytes_read: 0,
                bytes_written: 0,
                os_error: None,
                reused: true,
                request: 0,
                conn: out.conn(),
            };
            self.fail_queued(&template, out);
            self.http1.reset();
            self.closing = true;
            return false;
        }
        self.finish(ctx);
        true
    }

    /// The current request ended and was reported: the next of the batch is current, or the
    /// connection has room again.
    #[inline]
    fn finish(&mut self, ctx: &H1Ctx<'_>) {
        self.responses = self.responses.saturating_add(1);
        if !self.http1.finish(&ctx.spec.workload) {
            self.unsent = false;
        }
    }

    /// Reports the complete response ending at `end`; false when the run has stopped.
    #[inline(always)]
    fn record(&mut self, ctx: &mut H1Ctx<'_>, end: Instant, out: &mut impl Outcomes) -> bool {
        let workload = &ctx.spec.workload;
        self.http1.end_current(end);
        let Some(r) = self.http1.response(workload, ctx.want_server) else { return true };
        let ex = self.http1.current();
        let done = Completed {
            timing: ex.moments(),
            status: r.head.status,
            reusable: r.head.reusable,
            body_bytes: r.body_bytes,
            bytes_read: ex.bytes_read(),
            bytes_written: r.bytes_written,
            reused: self.reused(),
            server: r.server,
            request: ex.req(),
            conn: out.conn(),
        };
        if done.server.is_some() {
            ctx.want_server = false;
        }
        out.completed(&done)
    }

    /// The current request fails with `kind` at `now`, and those pipelined behind it with it;
    /// the connection ends.
    fn fail(
        &mut self,
        kind: FailureKind,
        err: Option<&io::Error>,
        now: Instant,
        out: &mut impl Outcomes,
    ) {
        let ex = self.http1.current();
        let failed = Failed {
            kind,
            timing: ex.timing(now),
            bytes_read: ex.bytes_read(),
            bytes_written: self.http1.bytes_written() as u64,
            os_error: err.and_then(io::Error::raw_os_error),
            reused: self.reused(),
            request: ex.req(),
            conn: out.conn(),
        };
        out.failed(&failed);
        // Pipelined requests written behind it fail with it: none will be answered.
        self.fail_queued(&failed, out);
        self.end_batch();
    }

    /// Pipelining: reports a failure like `template` for every request queued behind the
    /// current one.
    fn fail_queued(&mut self, template: &Failed, out: &mut impl Outcomes) {
        while let Some(request) = self.http1.take_queued() {
            out.failed(&Failed { request, bytes_read: 0, bytes_written: 0, ..*template });
        }
    }

    /// The keep-alive race: the batch goes again, uncounted, its due times kept.
    fn retry(&mut self, now: Instant, out: &mut impl Outcomes) {
        let current = *self.http1.current();
        out.retry(current.again(false, now));
        while let Some(request) = self.http1.take_queued() {
            out.retry(Exchange::new(request, false, now).due_as(&current));
        }
        self.end_batch();
    }

    /// Nothing is in flight any more, and the connection ends.
    fn end_batch(&mut self) {
        self.http1.reset();
        self.unsent = false;
        self.awaiting = None;
        self.closing = true;
    }

    /// Sending what the transport held failed: the request had been handed over whole, the
    /// socket refused the records.
    fn flush_failed(&mut self, io: Io) -> (FailureKind, Option<io::Error>) {
        match io {
            Io::Err(Fault::Os(e)) => {
                self.race = self.reused();
                (FailureKind::Write, Some(e))
            }
            _ => self.write_failed(None),
        }
    }

    fn write_failed(&mut self, fault: Option<Fault>) -> (FailureKind, Option<io::Error>) {
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
                self.race = self.reused() && written == 0;
                (kind, Some(e))
            }
            Some(Fault::Tls) => (FailureKind::Tls, None),
            None => (FailureKind::Write, None),
        }
    }
}

impl<'a> Link<'a> for H1Link {
    type Ctx = H1Ctx<'a>;
    const QUIC: bool = false;

    #[inline(always)]
    fn tcp(&self) -> Option<&Tcp> {
        Some(&self.tcp)
    }
    #[inline(always)]
    fn tcp_mut(&mut self) -> Option<&mut Tcp> {
        Some(&mut self.tcp)
    }

    fn new(ctx: &H1Ctx<'a>) -> H1Link {
        H1Link {
            tcp: Tcp::new(false),
            http1: Http1::new(ctx.spec.limits, ctx.depth, Instant::now()),
            ready: false,
            responses: 0,
            opened_ahead: false,
            unsent: false,
            batch_last: false,
            awaiting: None,
            closing: false,
            race: false,
            holding: false,
        }
    }

    #[inline]
    fn open(
        &mut self,
        ctx: &mut H1Ctx<'a>,
        dial: Dial<'_>,
        throttle: Option<Throttle>,
        _now: Instant,
    ) -> Progress {
        self.tcp.open(ctx.spec, dial, throttle)
    }

    fn adopt(&mut self, t: Transport, throttle: Option<Throttle>) {
        self.tcp.adopt(t, throttle);
        self.opened_ahead = true;
    }

    #[inline]
    fn advance(&mut self, ctx: &mut H1Ctx<'a>, ready: Option<Readiness>) -> Progress {
        self.tcp.advance(ctx.spec, ready)
    }

    #[inline]
    fn start(&mut self) {
        self.ready = true;
    }

    #[inline(never)]
    fn close(&mut self) {
        self.tcp.close();
        self.http1.reset();
        self.ready = false;
        self.responses = 0;
        self.opened_ahead = false;
        self.unsent = false;
        self.batch_last = false;
        self.awaiting = None;
        self.closing = false;
        self.race = false;
        self.holding = false;
    }

    #[inline]
    fn hold_first(&mut self, first: Exchange) {
        self.http1.hold(first);
        self.holding = true;
    }

    #[inline]
    fn first(&self) -> Option<&Exchange> {
        self.holding.then(|| self.http1.held())
    }

    #[inline]
    fn take_first(&mut self) -> Option<Exchange> {
        std::mem::take(&mut self.holding).then(|| *self.http1.held())
    }

    #[inline(always)]
    fn receive(
        &mut self,
        ctx: &mut H1Ctx<'a>,
        buf: &mut [u8],
        hangup: bool,
        out: &mut impl Outcomes,
    ) -> Received {
        if self.http1.in_flight() == 0 {
            // Readable between requests: a TLS 1.3 server's session tickets keep it idle;
            // anything else (a close, bytes nobody asked for) ends it, quietly.
            return if !hangup && self.tcp.still_idle(buf) {
                Received::Blocked
            } else {
                Received::Eof
            };
        }
        let (n, drained) = match self.tcp.read(buf) {
            Read::Data { n, drained } => (n, drained),
            Read::Blocked => return Received::Blocked,
            Read::Paused => return Received::Paused,
            Read::Eof => return Received::Eof,
            Read::Failed(Fault::Tls) => return Received::Failed(FailureKind::Tls, None),
            Read::Failed(Fault::Os(e)) => {
                let ex = self.http1.current();
                self.race = self.reused() && ex.bytes_read() == 0;
                return Received::Failed(FailureKind::Receive, Some(e));
            }
        };
        let now = Instant::now();
        let data = buf.get(..n).unwrap_or_default();
        let reading = self.on_data(ctx, data, now, out);
        // A short plain read drained the socket. With EPOLLRDHUP already reported, the FIN is
        // behind the data just read: no need for a read that returns 0.
        let more = if reading {
            !drained
        } else if self.awaiting.is_none() {
            // The request ended here.
            false
        } else if self.tcp.transport().is_some_and(|t| t.short_read_drains()) {
            // The response is complete and the server closes next. If its FIN came with the
            // response (the usual case), finish now: no further edge will report it.
            false
        } else {
            // Over TLS the close_notify may already sit in rustls, where no edge would ever
            // announce it: read on.
            true
        };
        let eof = hangup && drained && (reading || self.awaiting.is_some());
        Received::Data { now, heard: n > 0, more: more && !eof, eof }
    }

    fn ring_connected(&mut self, ctx: &mut H1Ctx<'a>, result: io::Result<()>) -> Progress {
        self.tcp.ring_connected(ctx.spec, result)
    }

    /// The ring's bytes: a read's, without the read (and no drained socket to watch for: the
    /// peer's close comes as [`Link::receive_ended`]).
    #[inline(always)]
    fn received(
        &mut self,
        ctx: &mut H1Ctx<'a>,
        data: &[u8],
        now: Instant,
        out: &mut impl Outcomes,
    ) -> Received {
        if self.http1.in_flight() == 0 {
            // Bytes nobody asked for between requests (over TLS, plaintext: a session
            // ticket has none, and never gets here): the connection ends, quietly.
            return Received::Eof;
        }
        self.on_data(ctx, data, now, out);
        Received::Data { now, heard: !data.is_empty(), more: false, eof: false }
    }

    fn receive_ended(&mut self, err: Option<io::Error>) -> Received {
        match err {
            None => Received::Eof,
            Some(e) => {
                self.race = self.reused() && self.http1.current().bytes_read() == 0;
                Received::Failed(FailureKind::Receive, Some(e))
            }
        }
    }

    /// Through the ring a request is queued whole at once, so only the response says whether
    /// it got through: none of it back on a reused connection is the keep-alive race.
    fn send_failed(&mut self, e: io::Error) -> (FailureKind, Option<io::Error>) {
        let heard = self.http1.current().bytes_read() > 0;
        self.race = self.reused() && !heard;
        let kind = if self.reused() || heard {
            FailureKind::Write
        } else {
            connect_or(e.raw_os_error(), FailureKind::Write)
        };
        (kind, Some(e))
    }

    #[inline(always)]
    fn send(&mut self, ctx: &mut H1Ctx<'a>) -> Result<(), (FailureKind, Option<io::Error>)> {
        if !self.unsent {
            return Ok(());
        }
        let Some(t) = self.tcp.transport() else { return Err((FailureKind::Write, None)) };
        let workload = &ctx.spec.workload;
        loop {
            let data = self.http1.to_write(workload);
            if data.is_empty() {
                // Written before, but not all sent on (TLS): send the rest.
                match t.flush() {
                    Io::Done(_) => break,
                    Io::Retry => return Ok(()),
                    other => return Err(self.flush_failed(other)),
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
                            Io::Retry => return Ok(()),
                            other => return Err(self.flush_failed(other)),
                        }
                    }
                }
                Io::Retry => return Ok(()),
                Io::Eof => return Err(self.write_failed(None)),
                Io::Err(fault) => return Err(self.write_failed(Some(fault))),
            }
        }
        self.http1.written(Instant::now());
        self.unsent = false;
        Ok(())
    }

    #[inline(always)]
    fn on_writable(&mut self, ctx: &mut H1Ctx<'a>) -> Result<(), (FailureKind, Option<io::Error>)> {
        if !self.unsent {
            return Ok(()); // a writable edge with nothing to write (every event has one)
        }
        self.send(ctx)
    }

    #[inline]
    fn in_flight(&self) -> u32 {
        self.http1.in_flight()
    }

    #[inline]
    fn can_open(&self) -> bool {
        if !self.ready || self.closing {
            return false;
        }
        let n = self.http1.in_flight();
        // A batch takes requests until any of it is written, it is full, or its last is the
        // connection's last.
        n == 0
            || (self.unsent
                && self.http1.bytes_written() == 0
                && n < self.http1.max_concurrent_streams()
                && !self.batch_last)
    }

    #[inline]
    fn is_closing(&self) -> bool {
        self.closing
    }

    #[inline]
    fn closed(&self) -> Option<FailureKind> {
        None // an HTTP/1 connection's end is its transport's: a receive says so
    }

    #[inline(always)]
    fn submit(&mut self, ctx: &mut H1Ctx<'a>, ex: &Exchange, _first: bool, _now: Instant) -> bool {
        self.http1.submit(ex, &ctx.spec.workload, ctx.want_server);
        self.batch_last = ex.last();
        self.unsent = true;
        true
    }

    #[inline(always)]
    fn drain(&mut self, _now: Instant, _out: &mut impl Outcomes) {
        // Every outcome was reported as it was decided.
    }

    fn expire(
        &mut self,
        ctx: &mut H1Ctx<'a>,
        now: Instant,
        timeout: Duration,
        out: &mut impl Outcomes,
    ) {
        if self.http1.in_flight() == 0 || !self.http1.current().timed_out(now, timeout) {
            return;
        }
        match self.awaiting {
            // The response was complete; the server just never closed.
            Some(end) => self.complete_and_close(ctx, end, out),
            None => self.fail(FailureKind::Timeout, None, now, out),
        }
        self.end_batch();
    }

    fn on_eof(
        &mut self,
        ctx: &mut H1Ctx<'a>,
        _unheard: bool,
        now: Instant,
        out: &mut impl Outcomes,
    ) {
        if self.http1.in_flight() == 0 {
            return; // closed between requests
        }
        if self.awaiting.is_some() {
            self.complete_and_close(ctx, now, out);
        } else {
            match self.http1.on_eof() {
                AtEof::Complete => self.complete_and_close(ctx, now, out),
                // Nothing of a response arrived. On a reused connection this is the keep-alive
                // race (the server closed it as the request went): again, uncounted.
                AtEof::NoResponse if self.reused() => self.retry(now, out),
                AtEof::NoResponse | AtEof::Broken => {
                    self.fail(FailureKind::Closed, None, now, out);
                }
            }
        }
        self.end_batch();
    }

    /// The worker's `retry` is the HTTP/2 view (a connection opened ahead, nothing heard);
    /// HTTP/1 decided at the failure itself whether nothing of the request got through.
    fn fail_all(
        &mut self,
        _ctx: &mut H1Ctx<'a>,
        kind: FailureKind,
        err: Option<&io::Error>,
        _retry: bool,
        now: Instant,
        out: &mut impl Outcomes,
    ) {
        if self.http1.in_flight() == 0 {
            return;
        }
        if self.race {
            self.retry(now, out);
        } else {
            self.fail(kind, err, now, out);
        }
        self.end_batch();
    }

    fn add_stats(&self, _total: &mut QuicStats) {}
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write};
    use std::net::{TcpListener, TcpStream};
    use std::num::NonZeroU32;

    use mio::{Events, Poll, Token};

    use super::*;
    use crate::link::seam::{Kept, Opening};
    use crate::{Reuse, Target};

    fn spec(port: u16, schedule: Schedule) -> RunSpec {
        let target = Target::resolve("127.0.0.1", port, None).unwrap();
        RunSpec { schedule, ..RunSpec::for_tests(target) }
    }

    fn keep_alive() -> Schedule {
        Schedule::Closed { reuse: Reuse::KeepAlive { per_connection: None }, think: None }
    }

    /// A link opened toward `listener`, ready, and the server's end of it.
    fn opened(poll: &mut Poll, ctx: &mut H1Ctx<'_>, listener: &TcpListener) -> (H1Link, TcpStream) {
        let mut link = H1Link::new(ctx);
        let via = crate::link::Via::Poll(poll.registry());
        let dial = Dial { via, token: Token(0), addr: 0, conn: 0 };
        let mut p = link.open(ctx, dial, None, Instant::now());
        let mut events = Events::with_capacity(4);
        let end = Instant::now() + Duration::from_secs(2);
        while matches!(p.step, Opening::Pending) && Instant::now() < end {
            poll.poll(&mut events, Some(Duration::from_millis(50))).unwrap();
            if let Some(ev) = events.iter().next() {
                p = link.advance(ctx, Some(Readiness::of(ev)));
            }
        }
        assert!(matches!(p.step, Opening::Ready), "{:?}", p.step);
        link.start();
        let (server, _) = listener.accept().unwrap();
        server.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        (link, server)
    }

    /// Submits request 0 (`n` times: a pipelined batch), and sends it.
    fn submit(link: &mut H1Link, ctx: &mut H1Ctx<'_>, n: u32) {
        for _ in 0..n {
            assert!(link.can_open(), "room for the batch");
            assert!(link.submit(
                ctx,
                &Exchange::new(0, false, Instant::now()),
                false,
                Instant::now()
            ));
        }
        link.send(ctx).unwrap();
    }

    /// Receives until the link says something other than Blocked (within 2 s).
    fn receive(link: &mut H1Link, ctx: &mut H1Ctx<'_>, hangup: bool, out: &mut Kept) -> Received {
        let mut buf = vec![0u8; 64 * 1024];
        let end = Instant::now() + Duration::from_secs(2);
        loop {
            match link.receive(ctx, &mut buf, hangup, out) {
                Received::Blocked if Instant::now() < end => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => return other,
            }
        }
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nServer: pip\r\nContent-Length: 2\r\n\r\nhi";

    #[test]
    fn a_batch_is_one_write_and_its_responses_in_one_read_are_each_reported_in_order() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let depth = NonZeroU32::new(3).unwrap();
        let sp = spec(
            listener.local_addr().unwrap().port(),
            Schedule::Pipelined { depth, per_connection: None },
        );
        let mut ctx = H1Ctx::new(&sp);
        let mut poll = Poll::new().unwrap();
        let (mut link, mut server) = opened(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 3);
        assert!(!link.can_open(), "a full batch has no room");
        assert_eq!(link.in_flight(), 3);
        let request = sp.workload.get(0).unwrap().wire(false).to_vec();
        let mut got = vec![0u8; request.len() * 3];
        server.read_exact(&mut got).unwrap();
        assert_eq!(got, request.repeat(3), "the batch, whole");
        server.write_all(&OK.repeat(3)).unwrap();
        let mut out = Kept::default();
        let r = receive(&mut link, &mut ctx, false, &mut out);
        assert!(matches!(r, Received::Data { more: false, eof: false, .. }), "{r:?}");
        // The Server header is asked for until one response delivered it, then no more.
        assert_eq!(out.completed.len(), 3);
        assert_eq!(out.completed[0], (200, Some(b"pip".to_vec()), true));
        assert_eq!(out.completed[1], (200, None, true));
        assert!(out.failed.is_empty() && out.retried.is_empty());
        assert_eq!(link.in_flight(), 0);
        assert!(link.can_open() && !link.is_closing());
    }

    /// A kept-alive connection that carried one response, and the server's end of it.
    fn reused(poll: &mut Poll, ctx: &mut H1Ctx<'_>, listener: &TcpListener) -> (H1Link, TcpStream) {
        let (mut link, mut server) = opened(poll, ctx, listener);
        submit(&mut link, ctx, 1);
        let mut got = [0u8; 256];
        let _ = server.read(&mut got).unwrap();
        server.write_all(OK).unwrap();
        let mut out = Kept::default();
        receive(&mut link, ctx, false, &mut out);
        assert_eq!(out.completed.len(), 1);
        (link, server)
    }

    #[test]
    fn a_reused_connection_closed_before_any_response_byte_sends_its_request_again() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let sp = spec(listener.local_addr().unwrap().port(), keep_alive());
        let mut ctx = H1Ctx::new(&sp);
        let mut poll = Poll::new().unwrap();
        // The server read the request, then closed (its FIN): the end of the stream.
        let (mut link, mut server) = reused(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 1);
        let mut got = [0u8; 256];
        let _ = server.read(&mut got).unwrap();
        drop(server);
        let mut out = Kept::default();
        let r = receive(&mut link, &mut ctx, true, &mut out);
        assert!(matches!(r, Received::Eof), "{r:?}");
        link.on_eof(&mut ctx, false, Instant::now(), &mut out);
        assert_eq!(out.retried.len(), 1, "sent again");
        assert!(out.failed.is_empty(), "not counted: {:?}", out.failed);
        assert!(link.is_closing() && link.in_flight() == 0);

        // The server closed with the request unread (a reset): a failed read, the same race.
        link.close();
        let (mut link, server) = reused(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 1);
        std::thread::sleep(Duration::from_millis(20));
        drop(server);
        let mut out = Kept::default();
        let (kind, err) = match receive(&mut link, &mut ctx, true, &mut out) {
            Received::Failed(kind, err) => (kind, err),
            other => panic!("a reset: {other:?}"),
        };
        link.fail_all(&mut ctx, kind, err.as_ref(), false, Instant::now(), &mut out);
        assert_eq!(out.retried.len(), 1, "sent again");
        assert!(out.failed.is_empty(), "not counted: {:?}", out.failed);
    }

    #[test]
    fn a_first_request_closed_unanswered_fails_as_closed() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let sp = spec(listener.local_addr().unwrap().port(), keep_alive());
        let mut ctx = H1Ctx::new(&sp);
        let mut poll = Poll::new().unwrap();
        let (mut link, mut server) = opened(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 1);
        let mut got = [0u8; 256];
        let _ = server.read(&mut got).unwrap();
        drop(server);
        let mut out = Kept::default();
        assert!(matches!(receive(&mut link, &mut ctx, true, &mut out), Received::Eof));
        link.on_eof(&mut ctx, false, Instant::now(), &mut out);
        assert!(out.retried.is_empty());
        assert_eq!(out.failed.len(), 1);
        assert_eq!(out.failed[0].kind, FailureKind::Closed);
    }

    #[test]
    fn a_response_the_server_closes_after_ends_at_the_close_and_bytes_before_it_overrun() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let sp = spec(listener.local_addr().unwrap().port(), keep_alive());
        let mut ctx = H1Ctx::new(&sp);
        let mut poll = Poll::new().unwrap();
        let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi";
        // Held until the close: completed then, not before.
        let (mut link, mut server) = opened(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 1);
        let mut got = [0u8; 256];
        let _ = server.read(&mut got).unwrap();
        server.write_all(close).unwrap();
        let mut out = Kept::default();
        receive(&mut link, &mut ctx, false, &mut out);
        assert!(out.completed.is_empty(), "completed before the server's close");
        assert_eq!(link.in_flight(), 1);
        assert!(!link.can_open());
        drop(server);
        let mut ended = false;
        for _ in 0..100 {
            match receive(&mut link, &mut ctx, true, &mut out) {
                Received::Eof | Received::Data { eof: true, .. } => {
                    ended = true;
                    break;
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        assert!(ended, "the close was never seen");
        link.on_eof(&mut ctx, false, Instant::now(), &mut out);
        assert_eq!(out.completed, vec![(200, None, false)]);
        assert!(link.is_closing() && link.in_flight() == 0);

        // Bytes after such a response: it overruns.
        link.close();
        let (mut link, mut server) = opened(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 1);
        let _ = server.read(&mut got).unwrap();
        server.write_all(close).unwrap();
        let mut out = Kept::default();
        receive(&mut link, &mut ctx, false, &mut out);
        server.write_all(b"junk").unwrap();
        receive(&mut link, &mut ctx, false, &mut out);
        assert_eq!(out.failed.len(), 1, "{:?}", out.completed);
        assert_eq!(out.failed[0].kind, FailureKind::Overrun);
        assert!(link.is_closing());
    }

    #[test]
    fn a_timed_out_request_fails_and_ends_its_connection() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let sp = spec(listener.local_addr().unwrap().port(), keep_alive());
        let mut ctx = H1Ctx::new(&sp);
        let mut poll = Poll::new().unwrap();
        let (mut link, _server) = opened(&mut poll, &mut ctx, &listener);
        submit(&mut link, &mut ctx, 1);
        let mut out = Kept::default();
        let later = Instant::now() + Duration::from_secs(60);
        link.expire(&mut ctx, later, Duration::from_secs(30), &mut out);
        assert_eq!(out.failed.len(), 1);
        assert_eq!(out.failed[0].kind, FailureKind::Timeout);
        assert!(link.is_closing() && link.in_flight() == 0);
    }
}
