//! What each frame from the client does to the connection (RFC 9113 §5–§6), from the server's
//! side: SETTINGS applied and acknowledged, PING answered, WINDOW_UPDATE and RST_STREAM on the
//! streams, GOAWAY noted, HEADERS and CONTINUATION assembled into header blocks, DATA counted
//! against the windows and dropped or echoed. A broken rule the frame decoder cannot see (stream
//! states, windows, a block too large, a stream that depends on itself) is a [`ConnError`] or
//! a reset here.
//!
//! Stream states (RFC 9113 §5.1), as the client's frames meet them: on an idle stream (above
//! the highest the client opened, or even: herd opens none) only HEADERS and PRIORITY may
//! come, else PROTOCOL_ERROR for the connection. On a half-closed (remote) stream (the client
//! sent END_STREAM) DATA and HEADERS get RST_STREAM STREAM_CLOSED. On a closed stream
//! (closed.rs) frames are ignored after the server's RST_STREAM; after the client's END_STREAM
//! or RST_STREAM, DATA gets RST_STREAM STREAM_CLOSED (§6.1) and HEADERS ends the connection
//! with STREAM_CLOSED (§5.1 allows it, and so nothing on a stream the client closed is taken
//! quietly); HEADERS on a lower id never opened is PROTOCOL_ERROR (§5.1.1). WINDOW_UPDATE,
//! RST_STREAM and PRIORITY may come on any stream that is not idle.

use std::time::Instant;

use herd_proto::h2::frame::priority;
use herd_proto::h2::{encode, ErrorCode, Frame, SettingId, Settings};

use super::closed::Closed;
use super::conn::{H2Conn, PendingBlock};
use super::stream::Recv;
use super::{MAX_CONTINUATIONS, RESETS_PER_SECOND, RESET_BURST};
use crate::request_body::Sink;
use crate::worker::Ctx;

/// A connection error: the GOAWAY code and what went wrong (its debug data).
#[derive(Debug)]
pub(super) struct ConnError {
    pub(super) code: ErrorCode,
    pub(super) reason: String,
}

impl ConnError {
    pub(super) fn new(code: ErrorCode, reason: impl Into<String>) -> ConnError {
        ConnError { code, reason: reason.into() }
    }

    fn protocol(reason: impl Into<String>) -> ConnError {
        ConnError::new(ErrorCode::PROTOCOL_ERROR, reason)
    }
}

/// The largest window RFC 9113 allows (§6.9.1).
const MAX_WINDOW: i64 = (1 << 31) - 1;

impl H2Conn {
    /// Handles one frame (or one piece of a DATA frame); `raw` is the input from the frame's
    /// first byte, for the priority field the decoder drops.
    pub(super) fn on_frame(
        &mut self,
        frame: Frame<'_>,
        raw: &[u8],
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ConnError> {
        if !self.settings_seen {
            if !matches!(frame, Frame::Settings { ack: false, .. }) {
                return Err(ConnError::protocol(
                    "the client's first frame must be SETTINGS (RFC 9113 §3.4)",
                ));
            }
            self.settings_seen = true;
        }
        match frame {
            Frame::Data { stream, data } => self.on_data(stream, data),
            Frame::DataEnd { stream, end_stream, flow } => {
                self.on_data_end(stream, end_stream, flow)
            }
            Frame::Headers { stream, end_stream, end_headers, block } => {
                let head =
                    Head { stream, end_stream, self_dependent: depends_on_itself(raw, stream) };
                self.on_headers(head, end_headers, block, ctx)
            }
            Frame::Continuation { stream, end_headers, block } => {
                self.on_continuation(stream, end_headers, block, ctx)
            }
            Frame::Priority { stream } => self.on_priority(stream, depends_on_itself(raw, stream)),
            Frame::Unknown { .. } => Ok(()),
            Frame::RstStream { stream, .. } => self.on_reset(stream, ctx.now),
            Frame::Settings { ack: true, .. } => Ok(()),
            Frame::Settings { ack: false, settings } => self.on_settings(settings),
            Frame::PushPromise { .. } => {
                Err(ConnError::protocol("a client must not send PUSH_PROMISE (RFC 9113 §8.4)"))
            }
            Frame::Ping { ack, payload } => {
                if !ack {
                    encode::ping(&mut self.out, true, payload);
                }
                Ok(())
            }
            Frame::GoAway { .. } => {
                self.peer_going_away = true;
                Ok(())
            }
            Frame::WindowUpdate { stream, increment } => self.on_window_update(stream, increment),
        }
    }

    fn on_settings(&mut self, settings: Settings<'_>) -> Result<(), ConnError> {
        for (id, value) in settings.iter() {
            match id {
                SettingId::HEADER_TABLE_SIZE => self.encoder.set_peer_table_size(value),
                SettingId::INITIAL_WINDOW_SIZE => {
                    // §6.9.2: every stream's window moves by the difference, possibly below 0.
                    let delta = i64::from(value) - i64::from(self.peer_settings.initial_window);
                    for s in self.streams.iter_mut() {
                        s.send_window += delta;
                        if s.send_window > MAX_WINDOW {
                            return Err(ConnError::new(
                                ErrorCode::FLOW_CONTROL_ERROR,
                                "SETTINGS_INITIAL_WINDOW_SIZE takes a stream's window past \
                                 2^31-1 (RFC 9113 §6.9.2)",
                            ));
                        }
                    }
                    self.peer_settings.initial_window = value;
                }
                SettingId::MAX_FRAME_SIZE => self.peer_settings.max_frame_size = value,
                _ => {}
            }
        }
        encode::settings_ack(&mut self.out);
        Ok(())
    }

    fn on_window_update(&mut self, stream: u32, increment: u32) -> Result<(), ConnError> {
        if stream == 0 {
            self.send_window += i64::from(increment);
            if self.send_window > MAX_WINDOW {
                return Err(ConnError::new(
                    ErrorCode::FLOW_CONTROL_ERROR,
                    "WINDOW_UPDATE takes the connection's window past 2^31-1 (RFC 9113 §6.9.1)",
                ));
            }
            return Ok(());
        }
        self.check_not_idle(stream, "WINDOW_UPDATE")?;
        if let Some(i) = self.streams.find(stream) {
            let s = self.streams.get_mut(i);
            s.send_window += i64::from(increment);
            if s.send_window > MAX_WINDOW {
                self.reset(stream, ErrorCode::FLOW_CONTROL_ERROR);
            }
        }
        Ok(())
    }

    /// PRIORITY: its signal is ignored (deprecated, §5.3.2), but a stream cannot depend on
    /// itself (§5.3.1): a stream error. On an idle stream, though, the server may not send
    /// RST_STREAM (§6.4), so there it ends the connection (§5.4.1: any stream error may).
    fn on_priority(&mut self, stream: u32, self_dependent: bool) -> Result<(), ConnError> {
        if !self_dependent {
            return Ok(());
        }
        if self.is_idle(stream) {
            return Err(ConnError::protocol(format!(
                "PRIORITY makes idle stream {stream} depend on itself (RFC 9113 §5.3.1)"
            )));
        }
        self.reset(stream, ErrorCode::PROTOCOL_ERROR);
        Ok(())
    }

    fn on_reset(&mut self, stream: u32, now: Instant) -> Result<(), ConnError> {
        self.check_not_idle(stream, "RST_STREAM")?;
        let elapsed = now.saturating_duration_since(self.reset_filled).as_secs_f64();
        self.reset_filled = now;
        self.reset_tokens = (self.reset_tokens + elapsed * RESETS_PER_SECOND).min(RESET_BURST);
        if self.reset_tokens < 1.0 {
            return Err(ConnError::new(
                ErrorCode::ENHANCE_YOUR_CALM,
                "too many RST_STREAM frames (more than 1000 at once, or 33 a second after)",
            ));
        }
        self.reset_tokens -= 1.0;
        if let Some(i) = self.streams.find(stream) {
            let owed = self.streams.close(i, Closed::ByClient);
            self.release_connection(owed);
        }
        Ok(())
    }

    /// Whether `stream` is idle: above the highest the client opened, or even (a server's,
    /// and herd serve opens none; §5.1, §5.1.1).
    pub(super) fn is_idle(&self, stream: u32) -> bool {
        stream > self.last_stream || stream % 2 == 0
    }

    /// RFC 9113 §5.1: a stream the client has not opened yet cannot take these frames.
    fn check_not_idle(&self, stream: u32, what: &str) -> Result<(), ConnError> {
        if self.is_idle(stream) {
            return Err(ConnError::protocol(format!(
                "{what} on stream {stream}, which is idle (RFC 9113 §5.1)"
            )));
        }
        Ok(())
    }

    fn on_data(&mut self, stream: u32, data: &[u8]) -> Result<(), ConnError> {
        self.check_not_idle(stream, "DATA")?;
        let Some(i) = self.streams.find(stream) else {
            // A stream closed or reset: only the connection's window counts it (at its end).
            return Ok(());
        };
        let s = self.streams.get_mut(i);
        let Recv::Open { expected, received } = &mut s.recv else {
            // DATA after END_STREAM (RFC 9113 §5.1, half-closed (remote)).
            self.reset(stream, ErrorCode::STREAM_CLOSED);
            return Ok(());
        };
        *received += data.len() as u64;
        if expected.is_some_and(|n| *received > n) {
            // §8.1.1: more DATA than the content-length said.
            self.reset(stream, ErrorCode::PROTOCOL_ERROR);
            return Ok(());
        }
        if s.sink != Sink::Discard {
            s.body.extend_from_slice(data);
            s.echo_unsent += data.len() as u64;
            self.frame_data += data.len() as u32;
        }
        Ok(())
    }

    fn on_data_end(&mut self, stream: u32, end_stream: bool, flow: u32) -> Result<(), ConnError> {
        let echoed = std::mem::take(&mut self.frame_data);
        self.check_not_idle(stream, "DATA")?;
        self.recv_window -= i64::from(flow);
        if self.recv_window < 0 {
            return Err(ConnError::new(
                ErrorCode::FLOW_CONTROL_ERROR,
                "DATA beyond the connection's window (RFC 9113 §6.9.1)",
            ));
        }
        let Some(i) = self.streams.find(stream) else {
            self.release_connection(u64::from(flow));
            // §6.1: DATA on a closed stream is a stream error STREAM_CLOSED, but after our
            // RST_STREAM the client's DATA in flight is ignored (§5.1, closed.rs).
            if self.streams.closed_as(stream) != Some(Closed::ResetHere) {
                self.reset(stream, ErrorCode::STREAM_CLOSED);
            }
            return Ok(());
        };
        let s = self.streams.get_mut(i);
        if s.recv == Recv::Closed {
            // An empty DATA after END_STREAM (RFC 9113 §5.1, half-closed (remote)).
            self.release_connection(u64::from(flow));
            self.reset(stream, ErrorCode::STREAM_CLOSED);
            return Ok(());
        }
        s.recv_window -= i64::from(flow);
        if s.recv_window < 0 {
            self.release_connection(u64::from(flow));
            self.reset(stream, ErrorCode::FLOW_CONTROL_ERROR);
            return Ok(());
        }
        // What is not echoed (all of it, or the padding) is consumed now; the echo's bytes
        // when they are sent (send.rs).
        self.release(i, u64::from(flow - echoed.min(flow)));
        if end_stream {
            self.end_request(i);
        }
        Ok(())
    }

    /// The request on the stream at `i` ended (END_STREAM): check its length.
    pub(super) fn end_request(&mut self, i: usize) {
        let s = self.streams.get_mut(i);
        let id = s.id;
        if let Recv::Open { expected: Some(n), received } = s.recv {
            if n != received {
                self.reset(id, ErrorCode::PROTOCOL_ERROR);
                return;
            }
        }
        s.recv = Recv::Closed;
    }

    fn on_headers(
        &mut self,
        head: Head,
        end_headers: bool,
        block: &[u8],
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ConnError> {
        let stream = head.stream;
        if stream % 2 == 0 {
            return Err(ConnError::protocol(format!(
                "HEADERS on stream {stream}; a client's streams are odd (RFC 9113 §5.1.1)"
            )));
        }
        if end_headers {
            return self.on_block(head, block, ctx);
        }
        self.block_buf.clear();
        self.append_block(block)?;
        self.block = Some(PendingBlock { head, continuations: 0 });
        Ok(())
    }

    fn on_continuation(
        &mut self,
        stream: u32,
        end_headers: bool,
        block: &[u8],
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ConnError> {
        // The decoder lets a CONTINUATION through only after a HEADERS of its stream.
        let Some(pending) = &mut self.block else {
            return Err(ConnError::protocol("CONTINUATION without HEADERS (RFC 9113 §6.10)"));
        };
        pending.continuations += 1;
        if pending.continuations > MAX_CONTINUATIONS {
            return Err(ConnError::new(
                ErrorCode::ENHANCE_YOUR_CALM,
                format!("a header block in more than {MAX_CONTINUATIONS} CONTINUATION frames"),
            ));
        }
        let pending = *pending;
        debug_assert_eq!(pending.head.stream, stream);
        self.append_block(block)?;
        if end_headers {
            self.block = None;
            let block = std::mem::take(&mut self.block_buf);
            let handled = self.on_block(pending.head, &block, ctx);
            self.block_buf = block;
            return handled;
        }
        Ok(())
    }

    fn append_block(&mut self, fragment: &[u8]) -> Result<(), ConnError> {
        if self.block_buf.len() + fragment.len() > self.limits.max_head {
            return Err(ConnError::new(
                ErrorCode::ENHANCE_YOUR_CALM,
                format!("a header block larger than {} bytes", self.limits.max_head),
            ));
        }
        self.block_buf.extend_from_slice(fragment);
        Ok(())
    }

    /// A complete header block: a new request, or one on a stream the client opened before.
    /// The block is decoded first whatever becomes of it, so that HPACK's table stays in step
    /// with the client's (§4.3).
    fn on_block(&mut self, head: Head, block: &[u8], ctx: &mut Ctx<'_>) -> Result<(), ConnError> {
        let stream = head.stream;
        let mut request = std::mem::take(&mut self.request);
        request.clear();
        let decoded = self.hpack.decode(block, |name, value| request.push_raw(name, value));
        let result = match decoded {
            Err(e) if e.is_connection_error() => Err(ConnError::new(e.code(), e.to_string())),
            decoded if stream > self.last_stream => {
                self.last_stream = stream;
                if head.self_dependent {
                    // §5.3.1: a stream error; the stream is closed before it was served.
                    self.reset(stream, ErrorCode::PROTOCOL_ERROR);
                } else {
                    self.open_stream(stream, head.end_stream, decoded.is_ok(), &request, ctx);
                }
                Ok(())
            }
            decoded => {
                // Trailers, valid unless too large or with pseudo-fields; or a block on a
                // stream no longer open.
                let pseudo = request.iter().any(|(name, _)| name.starts_with(b":"));
                self.on_later_block(head, decoded.is_ok() && !pseudo)
            }
        };
        self.request = request;
        result
    }

    /// A header block on a stream the client opened before (§5.1): trailers, which must end
    /// it (§8.1), on a stream still open; `valid`: within the list limit and without
    /// pseudo-fields.
    fn on_later_block(&mut self, head: Head, valid: bool) -> Result<(), ConnError> {
        let stream = head.stream;
        let Some(i) = self.streams.find(stream) else {
            return match self.streams.closed_as(stream) {
                // §5.1: in flight when the server reset the stream.
                Some(Closed::ResetHere) => Ok(()),
                Some(Closed::ByClient) => Err(ConnError::new(
                    ErrorCode::STREAM_CLOSED,
                    format!("HEADERS on stream {stream}, which the client closed (RFC 9113 §5.1)"),
                )),
                None => Err(ConnError::protocol(format!(
                    "HEADERS on stream {stream}, below stream {} and not open: a stream id \
                     must be above every one the client used (RFC 9113 §5.1.1)",
                    self.last_stream
                ))),
            };
        };
        let code = if self.streams.get_mut(i).recv == Recv::Closed {
            // Half-closed (remote): the client already ended its side.
            ErrorCode::STREAM_CLOSED
        } else if head.self_dependent || !head.end_stream || !valid {
            ErrorCode::PROTOCOL_ERROR
        } else {
            self.end_request(i);
            return Ok(());
        };
        self.reset(stream, code);
        Ok(())
    }

    /// Sends RST_STREAM and forgets the stream, noting that the server reset it: the client's
    /// frames still in flight on it are then ignored (§5.1).
    pub(super) fn reset(&mut self, stream: u32, code: ErrorCode) {
        encode::rst_stream(&mut self.out, stream, code);
        match self.streams.find(stream) {
            Some(i) => {
                let owed = self.streams.close(i, Closed::ResetHere);
                self.release_connection(owed);
            }
            None => self.streams.note_closed(stream, Closed::ResetHere),
        }
    }
}

/// What a HEADERS frame says of the header block it starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    pub(super) stream: u32,
    pub(super) end_stream: bool,
    /// Its priority field names its own stream (§5.3.1).
    pub(super) self_dependent: bool,
}

/// Whether the HEADERS or PRIORITY frame of `stream` at the front of `raw` makes the stream
/// depend on itself.
fn depends_on_itself(raw: &[u8], stream: u32) -> bool {
    priority::dependency(raw) == Some(stream)
}
