//! A request whose header block is complete → a stream, the router's answer and its HEADERS:
//! the same routes and handlers as HTTP/1, the head's fields HPACK-encoded, the body moved to
//! the stream for send.rs. A held response (`/sleep`, `/stall`) keeps its fields until it is
//! due, and only then is encoded: header blocks must reach the client in the order the
//! encoder made them. Each response is counted and logged as HTTP/1's are, when it is made.

use std::io::Write as _;

use herd_proto::h2::{encode, ErrorCode};

use super::closed::Closed;
use super::conn::{H2Conn, Phase};
use super::request;
use super::stream::{Recv, Send};
use super::{FieldList, INITIAL_WINDOW_SIZE, MAX_CONCURRENT_STREAMS};
use crate::request::{Method, RequestHead};
use crate::request_body::Sink;
use crate::response::{Reply, Responder, Status};
use crate::route::Route;
use crate::router;
use crate::worker::Ctx;

impl H2Conn {
    /// A new request on stream `id`; `fits`: its fields were within the header list limit.
    pub(super) fn open_stream(
        &mut self,
        id: u32,
        end_stream: bool,
        fits: bool,
        request: &FieldList,
        ctx: &mut Ctx<'_>,
    ) {
        if self.phase != Phase::Open {
            // After our GOAWAY: above the last stream it named, so not processed, and its
            // frames still to come are ignored (RFC 9113 §6.8).
            self.streams.note_closed(id, Closed::ResetHere);
            return;
        }
        if self.streams.len() >= MAX_CONCURRENT_STREAMS as usize {
            self.reset(id, ErrorCode::REFUSED_STREAM);
            return;
        }
        self.last_progress = ctx.now;
        let tls = self.io.is_tls();
        let parsed = if fits {
            let with_tls = |(head, len)| Some((RequestHead { tls, ..head }, len));
            request::head(request, end_stream).map(with_tls)
        } else {
            Ok(None)
        };
        let Ok(parsed) = parsed else {
            // RFC 9113 §8.1.1: a malformed request is a stream error.
            self.reset(id, ErrorCode::PROTOCOL_ERROR);
            return;
        };
        let head_only = parsed.as_ref().is_some_and(|(h, _)| h.method == Method::Head);
        let mut r = Responder::h2(&mut self.scratch, ctx.date, &mut self.fields, head_only);
        let (route, reply, expected) = match &parsed {
            Some((head, expected)) => {
                let (route, reply) = router::respond(head, ctx.shared, ctx.files, &mut r);
                (route, reply, *expected)
            }
            // The header list was larger than the limit, as HTTP/1's 431.
            None => (Route::Unrouted, r.error(Status::HeaderFieldsTooLarge, &[]), None),
        };
        let (hold, sink) = (r.hold, r.body_sink);
        self.account(ctx, request, route, reply);

        let s = self.streams.open(id, self.peer_settings.initial_window, INITIAL_WINDOW_SIZE);
        s.recv = if end_stream { Recv::Closed } else { Recv::Open { expected, received: 0 } };
        s.sink = match sink {
            Sink::Discard => Sink::Discard,
            // HTTP/2 frames the body itself: an echo is never re-chunked.
            Sink::Echo | Sink::EchoChunked => Sink::Echo,
        };
        self.scratch.swap_buf(&mut s.body);
        s.body_pos = 0;
        s.streamed = self.scratch.take_body();
        match hold {
            Some(delay) => {
                s.send = Send::Held { until: ctx.now + delay };
                std::mem::swap(&mut s.fields, &mut self.fields);
            }
            None => {
                s.send = Send::Body;
                let i = self.streams.len() - 1;
                self.send_headers(i, false);
            }
        }
    }

    /// Encodes the response's fields (the stream's own if it was held, else the ones just
    /// made) and queues HEADERS, with END_STREAM when there is no body.
    fn send_headers(&mut self, i: usize, held: bool) {
        let s = self.streams.get_mut(i);
        s.send = Send::Body;
        let end_stream = s.body_complete();
        let fields = if held { &s.fields } else { &self.fields };
        self.block_out.clear();
        self.encoder.encode(fields, &mut self.block_out);
        let max_frame = self.peer_settings.max_frame_size;
        encode::headers(&mut self.out, s.id, &self.block_out, end_stream, max_frame);
        if end_stream {
            s.send = Send::Done;
        }
        s.fields.clear();
    }

    /// Sends the held responses that are due.
    pub(super) fn release_held(&mut self, ctx: &mut Ctx<'_>) {
        if self.phase == Phase::Closing {
            return;
        }
        for i in 0..self.streams.len() {
            if matches!(self.streams.get_mut(i).send, Send::Held { until } if until <= ctx.now) {
                self.send_headers(i, true);
                self.last_progress = ctx.now;
            }
        }
    }

    /// Counts the response and logs it with an HTTP/1-style request line.
    fn account(&mut self, ctx: &mut Ctx<'_>, request: &FieldList, route: Route, reply: Reply) {
        let code = reply.status.code();
        ctx.counters.add_response(code, route);
        if !ctx.log.enabled() {
            return;
        }
        let field = |name: &[u8]| request.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
        self.log_line.clear();
        match (field(b":method"), field(b":path")) {
            (Some(method), Some(path)) => {
                self.log_line.extend_from_slice(method);
                self.log_line.push(b' ');
                self.log_line.extend_from_slice(path);
                self.log_line.extend_from_slice(b" HTTP/2.0");
            }
            _ => {
                let _ = write!(self.log_line, "-");
            }
        }
        ctx.log.record(self.peer.ip(), ctx.date, &self.log_line, code, reply.body_bytes);
    }
}
