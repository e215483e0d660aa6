//! One HTTP/2 connection's protocol, without I/O: requests in, frames out; frames in,
//! outcomes out (h2load's `Http2Session`, on herd-proto's frame codec and HPACK instead of
//! nghttp2).
//!
//! - Opening: the preface, our SETTINGS (no push, the stream window, our header list limit)
//!   and a WINDOW_UPDATE that opens the connection window, queued before any request.
//! - Requests: [`H2::submit`] opens a stream with the request's header block (encoded once
//!   per connection and reused while the HPACK table is unchanged: the second request on a
//!   connection sends a few indexed bytes) and its body as flow control allows.
//! - Responses: [`H2::on_read`] (read.rs) decodes frames and leaves each stream's outcome as
//!   an [`Event`] for the worker, which records it and then frees the slot.
//! - What the peer may do to a benchmark, and what it costs: a GOAWAY ends the connection
//!   once its streams are done, and requests it never processed go again, uncounted; a
//!   RST_STREAM fails one stream (`reset`), except REFUSED_STREAM, which retries it; frames
//!   that make no progress past a bound (a SETTINGS or PING flood) end the connection
//!   (`flood`), as does a header block past the limit (`head_too_large`).
//!
//! Nothing here allocates per request once a connection has carried its first few: the
//! frame buffers and the stream slab are reused.

mod read;
mod streams;

use std::time::Instant;

use herd_proto::h2::{encode, hpack, ErrorCode, FrameDecoder, SettingId, DEFAULT_MAX_FRAME_SIZE};
use herd_stats::FailureKind;

use super::request::{RequestFields, PATH_FIELD};
use crate::session::Exchange;
use crate::trace_context::{self, Spans, TraceContext};
use crate::H2Settings;

use streams::{Stream, Streams};

/// Streams opened before the peer's SETTINGS says how many it takes: RFC 9113 §6.5.2
/// recommends a server allow at least 100.
const STREAMS_BEFORE_SETTINGS: u32 = 100;
/// The initial window of RFC 9113 §6.9.2, for both directions until SETTINGS says otherwise.
const INITIAL_WINDOW: i64 = 65_535;
/// Frames in a row that move no stream forward (SETTINGS, PING, PRIORITY, WINDOW_UPDATE with
/// nothing to send, empty DATA, unknown types) before the connection counts as flooded.
/// A healthy server sends a handful per response.
const FLOOD_FRAMES: u32 = 10_000;
/// Bytes of our own frames (PING and SETTINGS acknowledgements) waiting to be written
/// before the peer counts as flooding us: it sends faster than it reads.
const MAX_OUT_BACKLOG: usize = 1 << 20;
/// The largest stream id (RFC 9113 §5.1.1): a connection that reaches it opens no more.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// The outcome of one stream, for the worker to record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A complete, well-formed response.
    Done(usize),
    Failed(usize, FailureKind),
    /// The server did not process it (REFUSED_STREAM, or above a GOAWAY's last stream id):
    /// send it again, uncounted.
    Retry(usize),
}

/// The connection cannot go on: every open stream fails with `kind`; `code` goes out in a
/// GOAWAY, best effort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnError {
    pub(crate) kind: FailureKind,
    pub(crate) code: ErrorCode,
}

/// What the peer's SETTINGS said (RFC 9113 §6.5.2 defaults until then).
#[derive(Debug, Clone, Copy)]
struct Peer {
    max_streams: u32,
    initial_window: i64,
    max_frame: u32,
}

/// Limits on what the peer may send us.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// A response's header list, decoded (RFC 9113's SETTINGS_MAX_HEADER_LIST_SIZE).
    pub(crate) max_list: u32,
    /// A header block's encoded size across CONTINUATION frames.
    pub(crate) max_block: usize,
}

/// A header block encoded for one of the workload's requests, valid while the HPACK
/// encoder's table is at `generation`.
#[derive(Debug, Default)]
struct Cached {
    block: Vec<u8>,
    generation: Option<u64>,
}

pub(crate) struct H2 {
    settings: H2Settings,
    limits: Limits,
    frames: FrameDecoder,
    hpack_in: hpack::Decoder,
    hpack_out: hpack::Encoder,
    /// Frames to write; the first `out_at` bytes are written.
    out: Vec<u8>,
    out_at: usize,
    /// The front of a frame that arrived split across reads (at most one frame).
    carry: Vec<u8>,
    streams: Streams,
    next_id: u32,
    peer: Peer,
    /// The peer's first SETTINGS has come.
    settled: bool,
    conn_send_window: i64,
    conn_recv_window: i64,
    conn_unacked: u32,
    /// The peer's GOAWAY: the last stream it will process.
    goaway: Option<u32>,
    /// A header block arriving in CONTINUATION frames: its stream, END_STREAM, wire bytes.
    block: Vec<u8>,
    continuing: Option<(u32, bool, usize)>,
    idle_frames: u32,
    /// Responses completed on this connection.
    answered: u32,
    /// Streams whose request body is not all sent.
    bodies_left: u32,
    /// The slots of the streams whose frames are queued but not yet all written (a slot may
    /// be listed twice if its stream ended and another took it before the flush: harmless).
    unwritten: Vec<usize>,
    blocks: Vec<Cached>,
    scratch: Vec<u8>,
    events: Vec<Event>,
    /// `--trace-context`: made at the first traced request.
    trace: Option<Box<Traced>>,
}

#[derive(Debug)]
/// What a traced connection adds to each header block: the `traceparent` literal (never
/// indexed, not Huffman-coded, so its value is there to stamp) and its span ids.
struct Traced {
    literal: Vec<u8>,
    /// Where the span id is in the literal.
    span_at: usize,
    spans: Spans,
    /// The request's block with the literal behind it.
    block: Vec<u8>,
}

impl Traced {
    /// `block` with the field behind it, its span id new.
    fn behind(&mut self, block: &[u8]) -> &[u8] {
        self.block.clear();
        self.block.extend_from_slice(block);
        self.block.extend_from_slice(&self.literal);
        self.spans.stamp_at(&mut self.block, block.len() + self.span_at);
        &self.block
    }
}

impl H2 {
    pub(crate) fn new(settings: H2Settings, limits: Limits, requests: usize) -> H2 {
        let cap = settings.streams.get().min(1024) as usize;
        H2 {
            settings,
            limits,
            frames: FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE),
            hpack_in: hpack::Decoder::new(4096, limits.max_list),
            hpack_out: hpack::Encoder::new(4096),
            out: Vec::with_capacity(4096),
            out_at: 0,
            carry: Vec::new(),
            streams: Streams::default(),
            next_id: 1,
            peer: Peer {
                max_streams: STREAMS_BEFORE_SETTINGS,
                initial_window: INITIAL_WINDOW,
                max_frame: DEFAULT_MAX_FRAME_SIZE,
            },
            settled: false,
            conn_send_window: INITIAL_WINDOW,
            conn_recv_window: INITIAL_WINDOW,
            conn_unacked: 0,
            goaway: None,
            block: Vec::new(),
            continuing: None,
            idle_frames: 0,
            answered: 0,
            bodies_left: 0,
            unwritten: Vec::with_capacity(cap),
            blocks: (0..requests).map(|_| Cached::default()).collect(),
            scratch: Vec::new(),
            events: Vec::with_capacity(cap),
            trace: None,
        }
    }

    /// A new connection: everything back to RFC 9113's starting point, buffers kept.
    pub(crate) fn reset(&mut self) {
        let requests = self.blocks.len();
        let mut fresh = H2::new(self.settings, self.limits, requests);
        // Keep the allocations: a reconnecting run (nginx's GOAWAY every 1000 requests)
        // should not pay for them again.
        std::mem::swap(&mut fresh.out, &mut self.out);
        std::mem::swap(&mut fresh.carry, &mut self.carry);
        std::mem::swap(&mut fresh.events, &mut self.events);
        std::mem::swap(&mut fresh.scratch, &mut self.scratch);
        std::mem::swap(&mut fresh.unwritten, &mut self.unwritten);
        fresh.unwritten.clear();
        fresh.out.clear();
        fresh.carry.clear();
        fresh.events.clear();
        *self = fresh;
    }

    /// Queues the preface and our settings: the first bytes of every connection.
    pub(crate) fn start(&mut self) {
        let s = self.settings;
        encode::preface_and_settings(
            &mut self.out,
            &[
                (SettingId::ENABLE_PUSH, 0),
                (SettingId::INITIAL_WINDOW_SIZE, s.stream_window),
                (SettingId::MAX_HEADER_LIST_SIZE, self.limits.max_list),
            ],
        );
        self.conn_recv_window = i64::from(s.connection_window);
        if let Some(more) = s.connection_window.checked_sub(INITIAL_WINDOW as u32) {
            if more > 0 {
                encode::window_update(&mut self.out, 0, more);
            }
        }
    }

    /// Streams that may be open at once now: ours, the peer's, and 100 until it says.
    #[inline]
    pub(crate) fn capacity(&self) -> u32 {
        self.settings.streams.get().min(self.peer.max_streams)
    }

    /// Requests in flight.
    #[inline]
    pub(crate) fn open(&self) -> u32 {
        self.streams.open() as u32
    }

    /// A new stream may open now.
    #[inline]
    pub(crate) fn can_open(&self) -> bool {
        self.goaway.is_none() && self.open() < self.capacity() && self.next_id < MAX_STREAM_ID
    }

    /// No stream will ever open on it again (GOAWAY, or the ids are used up).
    #[inline]
    pub(crate) fn is_closing(&self) -> bool {
        self.goaway.is_some() || self.next_id >= MAX_STREAM_ID
    }

    /// Opens a stream for `ex`, request `req` of `requests`; `first`: the connection's first.
    /// `many`: the workload has several requests, so `:path` stays out of the HPACK table.
    pub(crate) fn submit(
        &mut self,
        ex: Exchange,
        first: bool,
        requests: &[RequestFields],
        many: bool,
        trace: Option<&TraceContext>,
    ) -> usize {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(2);
        let index = ex.req();
        let Some(request) = requests.get(index) else {
            // Cannot happen (the worker picks from the same workload); fail the stream
            // rather than send something else.
            let slot = self.streams.insert(Stream::new(id, ex, first, false));
            self.fail(slot, FailureKind::Malformed, None);
            return slot;
        };
        let generation = self.hpack_out.generation();
        let at = self.out.len();
        let end_stream = request.body.is_empty();
        let max_frame = self.peer.max_frame;
        if let Some(t) = trace {
            self.trace.get_or_insert_with(|| {
                let (literal, span_at) = t.hpack_literal();
                Box::new(Traced { literal, span_at, spans: Spans::new(), block: Vec::new() })
            });
        }
        let traced = self.trace.as_deref_mut().filter(|_| trace.is_some());
        match self.blocks.get(index) {
            Some(c) if c.generation == Some(generation) => {
                let block = match traced {
                    Some(t) => t.behind(&c.block),
                    None => &c.block,
                };
                encode::headers(&mut self.out, id, block, end_stream, max_frame);
            }
            _ => {
                self.scratch.clear();
                let mut fields = request.field_slices();
                if trace.is_some() {
                    // Sent as the literal below, never through the table.
                    fields.retain(|(name, _)| *name != trace_context::FIELD.as_bytes());
                }
                let changed =
                    self.hpack_out.encode(&fields, |k| many && k == PATH_FIELD, &mut self.scratch);
                let block = match traced {
                    Some(t) => t.behind(&self.scratch),
                    None => &self.scratch,
                };
                encode::headers(&mut self.out, id, block, end_stream, max_frame);
                if !changed {
                    // All indexed (or literals kept out of the table): the same bytes
                    // are right for every later request while the table stays as it is.
                    if let Some(c) = self.blocks.get_mut(index) {
                        c.block.clear();
                        c.block.extend_from_slice(&self.scratch);
                        c.generation = Some(self.hpack_out.generation());
                    }
                }
            }
        }
        let mut stream = Stream::new(id, ex, first, request.head);
        stream.bytes_written = (self.out.len() - at) as u64;
        stream.send_window = self.peer.initial_window;
        stream.recv_window = i64::from(self.settings.stream_window);
        let slot = self.streams.insert(stream);
        self.unwritten.push(slot);
        if !end_stream {
            self.bodies_left += 1;
            self.send_bodies(requests);
        }
        slot
    }

    /// Sends what request bodies the flow-control windows allow.
    fn send_bodies(&mut self, requests: &[RequestFields]) {
        if self.bodies_left == 0 {
            return;
        }
        for slot in 0..self.streams.slots() {
            let Some(s) = self.streams.open_mut(slot) else { continue };
            let Some(body) = requests.get(s.ex.req()).map(|r| r.body.as_slice()) else { continue };
            while s.body_sent < body.len() {
                let window = s.send_window.min(self.conn_send_window).max(0) as usize;
                let n = (body.len() - s.body_sent).min(window).min(self.peer.max_frame as usize);
                if n == 0 {
                    break;
                }
                let end = s.body_sent + n == body.len();
                encode::data_header(&mut self.out, s.id, n as u32, end);
                self.out.extend_from_slice(&body[s.body_sent..s.body_sent + n]);
                s.body_sent += n;
                s.send_window -= n as i64;
                self.conn_send_window -= n as i64;
                s.bytes_written += 9 + n as u64;
                if end {
                    self.bodies_left = self.bodies_left.saturating_sub(1);
                }
            }
        }
    }

    /// The bytes to write next.
    #[inline]
    pub(crate) fn to_write(&self) -> &[u8] {
        self.out.get(self.out_at..).unwrap_or_default()
    }

    /// `n` bytes of [`H2::to_write`] were written.
    #[inline]
    pub(crate) fn wrote(&mut self, n: usize) {
        self.out_at += n;
        if self.out_at >= self.out.len() {
            self.out.clear();
            self.out_at = 0;
        }
    }

    /// Everything queued is written, at `now`: the streams waiting for that are sent.
    #[inline]
    pub(crate) fn written(&mut self, now: Instant) {
        // The streams queued since the last flush, not the whole slab: every stream open at
        // a flush was queued before it, so this flush carried its frames.
        for slot in self.unwritten.drain(..) {
            if let Some(s) = self.streams.open_mut(slot) {
                if !s.ex.is_written() {
                    s.ex.written_at(now);
                }
            }
        }
    }

    /// The next outcome to record.
    #[inline]
    pub(crate) fn next_event(&mut self) -> Option<Event> {
        self.events.pop()
    }

    pub(crate) fn stream(&self, slot: usize) -> Option<&Stream> {
        self.streams.get(slot)
    }

    /// The outcome of `slot` is recorded: its slot is free.
    #[inline]
    pub(crate) fn release(&mut self, slot: usize) {
        self.streams.release(slot);
    }

    /// Fails every stream whose request has run `timeout`: each is cancelled (RST_STREAM
    /// CANCEL) and the connection goes on.
    pub(crate) fn expire(&mut self, now: Instant, timeout: std::time::Duration) {
        for slot in 0..self.streams.slots() {
            if self.streams.open_mut(slot).is_some_and(|s| s.ex.timed_out(now, timeout)) {
                self.fail(slot, FailureKind::Timeout, Some(ErrorCode::CANCEL));
            }
        }
    }

    /// The transport closed: each open stream fails as `closed`, or goes again if the
    /// server said with GOAWAY that it never processed it.
    pub(crate) fn on_eof(&mut self) {
        for slot in 0..self.streams.slots() {
            if self.streams.open_mut(slot).is_none() {
                continue;
            }
            if self.unprocessed(slot) {
                self.retry(slot);
            } else {
                self.fail(slot, FailureKind::Closed, None);
            }
        }
    }

    /// The connection ended before the server sent anything on it (a connection opened
    /// before the start, closed at its idle timeout): no stream was processed, every open one
    /// may go again.
    pub(crate) fn retry_all(&mut self) {
        for slot in 0..self.streams.slots() {
            if self.streams.open_mut(slot).is_some() {
                self.retry(slot);
            }
        }
    }

    /// The connection failed: every open stream fails with `kind`, and a GOAWAY with `code`
    /// is queued (the caller writes it, best effort, before closing).
    pub(crate) fn fail_all(&mut self, kind: FailureKind, code: Option<ErrorCode>) {
        for slot in 0..self.streams.slots() {
            if self.streams.open_mut(slot).is_some() {
                self.streams.end(slot);
                self.events.push(Event::Failed(slot, kind));
            }
        }
        if let Some(code) = code {
            encode::goaway(&mut self.out, 0, code, b"");
        }
    }

    /// The server said (GOAWAY) it will not process this stream: it may go again.
    fn unprocessed(&self, slot: usize) -> bool {
        match (self.goaway, self.streams.get(slot)) {
            (Some(last), Some(s)) => s.id > last,
            _ => false,
        }
    }

    fn retry(&mut self, slot: usize) {
        self.streams.end(slot);
        self.events.push(Event::Retry(slot));
    }

    /// Fails one stream; `rst`: the code to reset it with, if the peer has not closed it.
    fn fail(&mut self, slot: usize, kind: FailureKind, rst: Option<ErrorCode>) {
        let Some(s) = self.streams.get(slot) else { return };
        if let (Some(code), false) = (rst, s.peer_closed) {
            encode::rst_stream(&mut self.out, s.id, code);
        }
        self.streams.end(slot);
        self.events.push(Event::Failed(slot, kind));
    }

    /// A stream's response is complete.
    fn done(&mut self, slot: usize) {
        self.streams.end(slot);
        self.answered = self.answered.saturating_add(1);
        self.idle_frames = 0;
        self.events.push(Event::Done(slot));
    }

    /// Our frames waiting to be written: past a bound, the peer is flooding us.
    fn backlog(&self) -> usize {
        self.out.len() - self.out_at
    }
}
