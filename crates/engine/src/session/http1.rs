//! HTTP/1.x over one connection: the request's bytes as the caller built them, the response
//! framed by herd-proto's parser, one response at a time and in request order.
//!
//! Without pipelining the request is written straight from the workload's bytes (no copy).
//! With it ([`crate::Schedule::Pipelined`]), a batch of requests is laid out in one buffer
//! (pipeline.rs) and written at once; each response then completes its own request, whose
//! latency counts from the batch's start.

use std::time::Instant;

use herd_proto::{Framing, Limits, ProtoError, ResponseParser};
use herd_stats::FailureKind;

use super::{After, AtEof, Exchange, Fed, Response};
use crate::pipeline::Pipeline;
use crate::trace_context::Spans;
use crate::workload::Workload;

pub(crate) struct Http1 {
    parser: ResponseParser,
    /// The request whose response is being read: the first of a batch until its response
    /// completes, then the next.
    current: Exchange,
    /// Requests pipelined behind the current one; None at depth 1 (boxed: most runs do not
    /// pipeline, and each of their connections would carry its 56 bytes: 10,000 idle
    /// connections, 0.5 MiB).
    pipeline: Option<Box<Pipeline>>,
    depth: u32,
    /// Requests submitted and not yet ended.
    in_flight: u32,
    /// Bytes of the request (or of the batch) written so far.
    written: usize,
    /// `--trace-context`: this connection's span ids (boxed and made at the first traced
    /// request; a traced request is copied into the batch, even at depth 1, and stamped).
    spans: Option<Box<Spans>>,
}

impl Http1 {
    /// `depth`: requests written at once (1: no pipelining).
    pub(crate) fn new(limits: Limits, depth: u32, now: Instant) -> Http1 {
        Http1 {
            parser: ResponseParser::new(limits),
            current: Exchange::new(0, false, now),
            pipeline: (depth > 1).then(Box::default),
            depth: depth.max(1),
            in_flight: 0,
            written: 0,
            spans: None,
        }
    }

    /// Requests the connection may carry at once.
    #[inline]
    pub(crate) fn max_concurrent_streams(&self) -> u32 {
        self.depth
    }

    /// Queues request `ex` (its bytes from `workload`) for writing. `want_server`: capture its
    /// `Server` header.
    ///
    /// The first request submitted on a free connection becomes the current one and starts a
    /// batch; the next ones, until the batch is written, join it.
    #[inline(always)]
    pub(crate) fn submit(&mut self, ex: &Exchange, workload: &Workload, want_server: bool) {
        let p = workload.get(ex.req());
        let trace = workload.span_at(ex.req(), ex.last());
        if trace.is_some() && self.pipeline.is_none() {
            self.pipeline = Some(Box::default());
        }
        let mut from = 0;
        if self.in_flight == 0 {
            self.current = *ex;
            self.written = 0;
            self.parser.reset(p.is_some_and(|p| p.head));
            self.parser.capture_server(want_server);
            if let Some(pipeline) = &mut self.pipeline {
                pipeline.start(p.map_or(&[][..], |p| p.wire(ex.last())));
            }
        } else if let Some(pipeline) = &mut self.pipeline {
            from = pipeline.bytes().len();
            pipeline.push(ex.req(), ex.last(), p.map_or(&[][..], |p| p.wire(ex.last())));
        }
        if let (Some(at), Some(pipeline)) = (trace, &mut self.pipeline) {
            let spans = self.spans.get_or_insert_with(|| Box::new(Spans::new()));
            spans.stamp_at(pipeline.bytes_mut_from(from), at);
        }
        self.in_flight += 1;
    }

    /// A pipelined batch's bytes; empty when not pipelining.
    #[inline(always)]
    fn batch(&self) -> &[u8] {
        self.pipeline.as_deref().map_or(&[][..], Pipeline::bytes)
    }

    /// The bytes to write next; empty when everything submitted is written.
    #[inline(always)]
    pub(crate) fn to_write<'a>(&'a self, workload: &'a Workload) -> &'a [u8] {
        let all = match self.batch() {
            [] => workload.get(self.current.req).map_or(&[][..], |p| p.wire(self.current.last)),
            batch => batch,
        };
        all.get(self.written..).unwrap_or_default()
    }

    /// `n` bytes of [`Http1::to_write`] were written.
    #[inline]
    pub(crate) fn wrote(&mut self, n: usize) {
        self.written += n;
    }

    /// Everything submitted is written, at `now`.
    #[inline]
    pub(crate) fn written(&mut self, now: Instant) {
        self.current.written_at(now);
    }

    /// Request bytes written so far for the current request (or batch).
    #[inline]
    pub(crate) fn bytes_written(&self) -> usize {
        self.written
    }

    /// Feeds response bytes that arrived at `now`.
    #[inline(always)]
    pub(crate) fn on_read(&mut self, data: &[u8], now: Instant) -> Fed {
        let ex = &mut self.current;
        if ex.t.first_byte.is_none() {
            ex.t.first_byte = Some(now);
        }
        match self.parser.feed(data) {
            Err(e) => {
                ex.bytes_read += data.len() as u64;
                Fed::Failed(proto_failure(&e))
            }
            Ok(feed) if feed.complete => {
                ex.bytes_read += feed.consumed as u64;
                Fed::Complete { consumed: feed.consumed }
            }
            Ok(_) => {
                ex.bytes_read += data.len() as u64;
                Fed::More
            }
        }
    }

    /// Bytes after a complete response (they make it fail as an overrun): counted with it.
    pub(crate) fn on_trailing(&mut self, n: usize) {
        self.current.bytes_read += n as u64;
    }

    /// The server closed: what that meant for the response in progress.
    pub(crate) fn on_eof(&mut self) -> AtEof {
        match self.parser.finish() {
            Ok(true) => AtEof::Complete,
            Ok(false) => AtEof::NoResponse,
            Err(_) => AtEof::Broken,
        }
    }

    /// What to do with the connection after the response that just completed; None when
    /// there is no complete response.
    #[inline]
    pub(crate) fn after(&self) -> Option<After> {
        let head = self.parser.head()?;
        // `last` is set when herd wants no further request here (no keep-alive, or the
        // connection's share is used).
        Some(if head.reusable && !self.current.last {
            After::Reuse
        } else if head.reusable || head.framing == Framing::UntilClose {
            // The server would keep the connection, but herd does not want it (or the body
            // ended at EOF already): herd closes it.
            After::Close
        } else {
            After::AwaitClose
        })
    }

    /// The response that just completed; with its `Server` header if `want_server`.
    #[inline(always)]
    pub(crate) fn response<'a>(
        &'a self,
        workload: &Workload,
        want_server: bool,
    ) -> Option<Response<'a>> {
        let head = self.parser.head()?;
        // A pipelined request's own bytes, not the batch's.
        let bytes_written = match self.batch() {
            [] => self.written as u64,
            _ => {
                workload.get(self.current.req).map_or(0, |p| p.wire(self.current.last).len() as u64)
            }
        };
        Some(Response {
            head,
            body_bytes: self.parser.body_bytes(),
            server: if want_server { self.parser.server() } else { None },
            bytes_written,
        })
    }

    /// The request whose response is being read (or was last).
    #[inline]
    pub(crate) fn current(&self) -> &Exchange {
        &self.current
    }

    /// The current request ended at `end`.
    #[inline(always)]
    pub(crate) fn end_current(&mut self, end: Instant) {
        self.current.end_at(end);
    }

    /// Requests submitted and not yet ended, the current one included.
    #[inline]
    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Requests in flight behind the current one.
    #[inline]
    pub(crate) fn queued(&self) -> usize {
        self.pipeline.as_ref().map_or(0, |p| p.queued())
    }

    /// The current request has ended (its outcome is recorded). True when a request queued
    /// behind it is now the current one, its response next.
    ///
    /// The next queued request's response follows, timed from the batch's start (its own
    /// first byte and bytes read start afresh).
    #[inline]
    pub(crate) fn finish(&mut self, workload: &Workload) -> bool {
        if self.in_flight <= 1 {
            self.in_flight = 0;
            return false;
        }
        self.in_flight -= 1;
        let Some((req, last)) = self.pipeline.as_mut().and_then(|p| p.pop()) else {
            return false;
        };
        let c = &mut self.current;
        c.req = req;
        c.last = last;
        c.t.first_byte = None;
        c.bytes_read = 0;
        self.parser.reset(workload.get(req).is_some_and(|p| p.head));
        true
    }

    /// Takes the next request queued behind the current one (to fail it).
    pub(crate) fn take_queued(&mut self) -> Option<usize> {
        let (req, _) = self.pipeline.as_mut()?.pop()?;
        self.in_flight = self.in_flight.saturating_sub(1);
        Some(req)
    }

    /// The connection is gone: nothing is in flight any more.
    /// Keeps `ex`, a connection's first request, where the current request goes, while the
    /// connection opens: nothing is in flight, and the place is free until the first submit.
    #[inline]
    pub(crate) fn hold(&mut self, ex: Exchange) {
        self.current = ex;
    }

    /// What [`Http1::hold`] kept (or the current request, once one is submitted).
    #[inline]
    pub(crate) fn held(&self) -> &Exchange {
        &self.current
    }

    pub(crate) fn reset(&mut self) {
        if let Some(pipeline) = &mut self.pipeline {
            pipeline.clear();
        }
        self.in_flight = 0;
    }
}

fn proto_failure(e: &ProtoError) -> FailureKind {
    match e {
        ProtoError::HeadTooLarge { .. } => FailureKind::HeadTooLarge,
        ProtoError::Truncated => FailureKind::Closed,
        _ => FailureKind::Malformed,
    }
}
