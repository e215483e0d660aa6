//! HTTP/2 as a [`Link`]: the sans-I/O session (h2/) on a TCP transport, plain or TLS, with
//! its receive-rate cap. Opening is TCP's connect (its readiness, then `SO_ERROR`), then
//! TLS's handshake, which must choose `h2` by ALPN; open, it reads until the socket is
//! drained and writes what the session queued.

use std::io;
use std::time::{Duration, Instant};

use herd_stats::FailureKind;

use super::h2::{Event, Limits, H2};
use super::request::RequestFields;
use super::seam::{Dial, Link, Outcomes, Progress, Readiness, Received, Record};
use super::tcp::{Read, Tcp};
use crate::quic::QuicStats;
use crate::session::Exchange;
use crate::throttle::Throttle;
use crate::transport::{Fault, Io, Transport};
use crate::{H2Settings, RunSpec};

/// What a worker's HTTP/2 connections share.
pub(crate) struct H2Ctx<'a> {
    spec: &'a RunSpec,
    requests: &'a [RequestFields],
    /// The workload has several requests (`:path` stays out of the HPACK table).
    many: bool,
    settings: H2Settings,
    limits: Limits,
}

pub(crate) struct H2Link {
    tcp: Tcp,
    h2: H2,
    /// Open: the session may speak.
    ready: bool,
    /// The request that opens it, while it opens ([`Link::hold_first`]).
    first: Option<Exchange>,
}

fn write_fault(io: Io) -> Result<(), (FailureKind, Option<io::Error>)> {
    match io {
        Io::Done(_) | Io::Retry => Ok(()),
        Io::Eof => Err((FailureKind::Write, None)),
        Io::Err(Fault::Tls) => Err((FailureKind::Tls, None)),
        Io::Err(Fault::Os(e)) => Err((FailureKind::Write, Some(e))),
    }
}

impl<'a> H2Ctx<'a> {
    pub(crate) fn new(
        spec: &'a RunSpec,
        requests: &'a [RequestFields],
        settings: H2Settings,
    ) -> Self {
        let max_head = spec.limits.max_head_bytes;
        let limits =
            Limits { max_list: u32::try_from(max_head).unwrap_or(u32::MAX), max_block: max_head };
        H2Ctx { spec, requests, many: requests.len() > 1, settings, limits }
    }
}

impl<'a> Link<'a> for H2Link {
    type Ctx = H2Ctx<'a>;
    const QUIC: bool = false;

    #[inline(always)]
    fn tcp(&self) -> Option<&Tcp> {
        Some(&self.tcp)
    }
    #[inline(always)]
    fn tcp_mut(&mut self) -> Option<&mut Tcp> {
        Some(&mut self.tcp)
    }

    fn new(ctx: &H2Ctx<'a>) -> H2Link {
        H2Link {
            tcp: Tcp::new(true),
            h2: H2::new(ctx.settings, ctx.limits, ctx.requests.len()),
            ready: false,
            first: None,
        }
    }

    fn open(
        &mut self,
        ctx: &mut H2Ctx<'a>,
        dial: Dial<'_>,
        throttle: Option<Throttle>,
        _now: Instant,
    ) -> Progress {
        self.tcp.open(ctx.spec, dial, throttle)
    }

    fn adopt(&mut self, t: Transport, throttle: Option<Throttle>) {
        self.tcp.adopt(t, throttle);
    }

    fn advance(&mut self, ctx: &mut H2Ctx<'a>, ready: Option<Readiness>) -> Progress {
        self.tcp.advance(ctx.spec, ready)
    }

    fn start(&mut self) {
        self.ready = true;
        self.h2.start();
    }

    fn close(&mut self) {
        self.tcp.close();
        self.ready = false;
        self.h2.reset();
        self.first = None;
    }

    fn hold_first(&mut self, first: Exchange) {
        self.first = Some(first);
    }

    fn first(&self) -> Option<&Exchange> {
        self.first.as_ref()
    }

    fn take_first(&mut self) -> Option<Exchange> {
        self.first.take()
    }

    #[inline]
    fn receive(
        &mut self,
        ctx: &mut H2Ctx<'a>,
        buf: &mut [u8],
        hangup: bool,
        _out: &mut impl Outcomes,
    ) -> Received {
        let (n, drained) = match self.tcp.read(buf) {
            Read::Data { n, drained } => (n, drained),
            Read::Blocked => return Received::Blocked,
            Read::Paused => return Received::Paused,
            Read::Eof => return Received::Eof,
            Read::Failed(Fault::Tls) => return Received::Failed(FailureKind::Tls, None),
            Read::Failed(Fault::Os(e)) => return Received::Failed(FailureKind::Receive, Some(e)),
        };
        let now = Instant::now();
        let data = buf.get(..n).unwrap_or_default();
        if let Err(e) = self.h2.on_read(data, now, ctx.requests) {
            self.h2.fail_all(e.kind, Some(e.code));
            // The GOAWAY that says why, best effort, then the end.
            let _ = self.send(ctx);
            return Received::Broken { now };
        }
        Received::Data { now, heard: n > 0, more: !drained, eof: drained && hangup }
    }

    fn ring_connected(&mut self, ctx: &mut H2Ctx<'a>, result: io::Result<()>) -> Progress {
        self.tcp.ring_connected(ctx.spec, result)
    }

    fn received(
        &mut self,
        ctx: &mut H2Ctx<'a>,
        data: &[u8],
        now: Instant,
        _out: &mut impl Outcomes,
    ) -> Received {
        if let Err(e) = self.h2.on_read(data, now, ctx.requests) {
            self.h2.fail_all(e.kind, Some(e.code));
            // The GOAWAY that says why, best effort (queued for the ring), then the end.
            let _ = self.send(ctx);
            return Received::Broken { now };
        }
        Received::Data { now, heard: !data.is_empty(), more: false, eof: false }
    }

    fn send(&mut self, _ctx: &mut H2Ctx<'a>) -> Result<(), (FailureKind, Option<io::Error>)> {
        let Some(t) = self.tcp.transport() else { return Err((FailureKind::Write, None)) };
        if !self.ready {
            return Ok(()); // still opening: the session has nothing to say yet
        }
        loop {
            let data = self.h2.to_write();
            if data.is_empty() {
                return match t.flush() {
                    Io::Done(_) => {
                        self.h2.written(Instant::now());
                        Ok(())
                    }
                    other => write_fault(other),
                };
            }
            match t.write(data) {
                Io::Done(n) => self.h2.wrote(n),
                other => return write_fault(other),
            }
        }
    }

    fn on_writable(&mut self, ctx: &mut H2Ctx<'a>) -> Result<(), (FailureKind, Option<io::Error>)> {
        self.send(ctx)
    }

    #[inline]
    fn in_flight(&self) -> u32 {
        self.h2.open()
    }

    #[inline]
    fn can_open(&self) -> bool {
        self.h2.can_open()
    }

    #[inline]
    fn is_closing(&self) -> bool {
        self.h2.is_closing()
    }

    #[inline]
    fn closed(&self) -> Option<FailureKind> {
        None // an HTTP/2 connection's end is its transport's: a receive says so
    }

    #[inline]
    fn submit(&mut self, ctx: &mut H2Ctx<'a>, ex: &Exchange, first: bool, _now: Instant) -> bool {
        self.h2.submit(*ex, first, ctx.requests, ctx.many, ctx.spec.workload.trace());
        true
    }

    fn drain(&mut self, now: Instant, out: &mut impl Outcomes) {
        while let Some(ev) = self.h2.next_event() {
            let (Event::Done(slot) | Event::Failed(slot, _) | Event::Retry(slot)) = ev;
            if let Some(s) = self.h2.stream(slot) {
                let r = Record {
                    ex: s.ex,
                    first: s.first,
                    status: s.status,
                    body: s.body,
                    bytes_written: s.bytes_written,
                };
                r.report(ev, now, out);
            }
            self.h2.release(slot);
        }
    }

    fn expire(
        &mut self,
        _ctx: &mut H2Ctx<'a>,
        now: Instant,
        timeout: Duration,
        _out: &mut impl Outcomes,
    ) {
        self.h2.expire(now, timeout);
    }

    fn on_eof(
        &mut self,
        _ctx: &mut H2Ctx<'a>,
        unheard: bool,
        _now: Instant,
        _out: &mut impl Outcomes,
    ) {
        if unheard {
            self.h2.retry_all();
        } else {
            self.h2.on_eof();
        }
    }

    fn fail_all(
        &mut self,
        _ctx: &mut H2Ctx<'a>,
        kind: FailureKind,
        _err: Option<&io::Error>,
        retry: bool,
        _now: Instant,
        _out: &mut impl Outcomes,
    ) {
        if retry {
            self.h2.retry_all();
        } else {
            self.h2.fail_all(kind, None);
        }
    }

    fn add_stats(&self, _total: &mut QuicStats) {}
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::num::{NonZeroU32, NonZeroU64};
    use std::time::Duration;

    use mio::{Events, Poll, Token};

    use super::*;
    use crate::link::seam::{Kept, Opening};
    use crate::Target;

    fn spec(port: u16) -> RunSpec {
        let target = Target::resolve("127.0.0.1", port, None).unwrap();
        RunSpec {
            wire: crate::Wire::Http2(H2Settings::new(NonZeroU32::MIN)),
            ..RunSpec::for_tests(target)
        }
    }

    /// The next readiness event for token 0, within a second.
    fn wait(poll: &mut Poll) -> Readiness {
        let mut events = Events::with_capacity(4);
        let end = Instant::now() + Duration::from_secs(1);
        while Instant::now() < end {
            poll.poll(&mut events, Some(Duration::from_millis(50))).unwrap();
            if let Some(ev) = events.iter().next() {
                return Readiness::of(ev);
            }
        }
        panic!("no readiness event within a second");
    }

    /// Opens a link to `port` and drives it until it is ready or fails.
    fn open(
        poll: &mut Poll,
        ctx: &mut H2Ctx<'_>,
        link: &mut H2Link,
        throttle: Option<Throttle>,
    ) -> Progress {
        let via = crate::link::Via::Poll(poll.registry());
        let dial = Dial { via, token: Token(0), addr: 0, conn: 0 };
        let mut p = link.open(ctx, dial, throttle, Instant::now());
        while matches!(p.step, Opening::Pending) {
            let r = wait(poll);
            p = link.advance(ctx, Some(r));
        }
        p
    }

    #[test]
    fn a_refused_connect_is_refused_with_the_os_error() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let spec = spec(port);
        let mut ctx = H2Ctx::new(&spec, &[], H2Settings::new(NonZeroU32::MIN));
        let mut link = H2Link::new(&ctx);
        let mut poll = Poll::new().unwrap();
        let p = open(&mut poll, &mut ctx, &mut link, None);
        assert!(!p.connected);
        match p.step {
            Opening::Refused(e) => assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED)),
            other => panic!("a refused connect: {other:?}"),
        }
    }

    #[test]
    fn a_plain_connection_is_ready_once_tcp_is_up_and_sends_the_preface_first() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let spec = spec(listener.local_addr().unwrap().port());
        let mut ctx = H2Ctx::new(&spec, &[], H2Settings::new(NonZeroU32::MIN));
        let mut link = H2Link::new(&ctx);
        let mut poll = Poll::new().unwrap();
        let p = open(&mut poll, &mut ctx, &mut link, None);
        assert!(p.connected && link.tls_info().is_none());
        assert!(matches!(p.step, Opening::Ready), "{:?}", p.step);
        // Nothing goes out before the link is started; then the preface leads.
        link.send(&mut ctx).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        let mut got = [0u8; 64];
        assert!(server.read(&mut got).is_err(), "bytes before the start");
        link.start();
        link.send(&mut ctx).unwrap();
        server.set_nonblocking(false).unwrap();
        server.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let n = server.read(&mut got).unwrap();
        assert!(got[..n].starts_with(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
    }

    #[test]
    fn a_peer_that_breaks_the_protocol_ends_the_link_with_a_goaway() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let spec = spec(listener.local_addr().unwrap().port());
        let mut ctx = H2Ctx::new(&spec, &[], H2Settings::new(NonZeroU32::MIN));
        let mut link = H2Link::new(&ctx);
        let mut poll = Poll::new().unwrap();
        assert!(matches!(open(&mut poll, &mut ctx, &mut link, None).step, Opening::Ready));
        link.start();
        link.send(&mut ctx).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut preface = [0u8; 256];
        let _ = server.read(&mut preface).unwrap();
        // An HTTP/1 answer where a SETTINGS frame must come first.
        server.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").unwrap();
        let mut buf = vec![0u8; 4096];
        let got = loop {
            match link.receive(&mut ctx, &mut buf, false, &mut Kept::default()) {
                Received::Blocked => {
                    wait(&mut poll);
                }
                other => break other,
            }
        };
        assert!(matches!(got, Received::Broken { .. }), "{got:?}");
        // The goodbye: a GOAWAY frame (type 7) reached the server.
        let mut frames = [0u8; 64];
        let n = server.read(&mut frames).unwrap();
        assert!(n >= 9 && frames[3] == 7, "{:?}", &frames[..n]);
    }

    #[test]
    fn a_receive_rate_pause_is_the_links_timer_until_it_fires() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let spec = spec(listener.local_addr().unwrap().port());
        let mut ctx = H2Ctx::new(&spec, &[], H2Settings::new(NonZeroU32::MIN));
        let mut link = H2Link::new(&ctx);
        let mut poll = Poll::new().unwrap();
        let now = Instant::now();
        let throttle = Throttle::new(NonZeroU64::MIN, now);
        assert!(matches!(
            open(&mut poll, &mut ctx, &mut link, Some(throttle)).step,
            Opening::Ready
        ));
        link.start();
        let (mut server, _) = listener.accept().unwrap();
        // An empty SETTINGS frame, then more than a byte a second allows.
        server.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
        let mut buf = vec![0u8; 4096];
        let mut paused = false;
        for _ in 0..100 {
            match link.receive(&mut ctx, &mut buf, false, &mut Kept::default()) {
                Received::Paused => {
                    paused = true;
                    break;
                }
                Received::Blocked => {
                    wait(&mut poll);
                }
                Received::Data { .. } => {}
                other => panic!("{other:?}"),
            }
        }
        assert!(paused, "a byte a second never paused the reads");
        let at = link.timer().expect("a paused link wants its timer");
        assert!(at > now);
        assert!(link.on_timer(&mut ctx, at), "a pause's end reads");
        assert_eq!(link.timer(), None);
    }
}
