//! What the peer sent: frames decoded from the bytes of each read, each applied to the
//! connection or to its stream, leaving outcomes as events.
//!
//! A read may end inside a frame. The decoder hands out DATA as it arrives, so what is left
//! over is at most one frame header or one control frame (bounded by the frame size we
//! announced): it is kept in `carry`, completed from the front of the next read, and the rest
//! of that read is decoded where it lies, so bytes are copied only at a split.

use std::time::Instant;

use herd_proto::h2::{encode, ErrorCode, Frame, FrameError, SettingId, Settings, FRAME_HEADER_LEN};
use herd_stats::FailureKind;

use super::{ConnError, FLOOD_FRAMES, H2, MAX_OUT_BACKLOG};
use crate::link::request::RequestFields;

impl H2 {
    /// Feeds bytes that arrived at `now`. The outcomes are left as events
    /// ([`H2::next_event`]); an error ends the connection.
    pub(crate) fn on_read(
        &mut self,
        data: &[u8],
        now: Instant,
        requests: &[RequestFields],
    ) -> Result<(), ConnError> {
        let mut data = data;
        while !self.carry.is_empty() {
            let need = frame_rest(&self.carry);
            if need == 0 {
                // A whole frame the decoder would not take cannot happen; never loop on it.
                return Err(ConnError {
                    kind: FailureKind::Malformed,
                    code: ErrorCode::INTERNAL_ERROR,
                });
            }
            let take = need.min(data.len());
            self.carry.extend_from_slice(&data[..take]);
            data = &data[take..];
            let carry = std::mem::take(&mut self.carry);
            let used = self.frames(&carry, now, requests);
            self.carry = carry;
            let used = used?;
            self.carry.drain(..used);
            if !self.carry.is_empty() && data.is_empty() {
                return Ok(());
            }
        }
        let used = self.frames(data, now, requests)?;
        self.carry.extend_from_slice(data.get(used..).unwrap_or_default());
        Ok(())
    }

    /// Decodes and applies the frames at the front of `buf`; returns the bytes used.
    fn frames(
        &mut self,
        buf: &[u8],
        now: Instant,
        requests: &[RequestFields],
    ) -> Result<usize, ConnError> {
        let mut at = 0;
        // Until the decoder wants more: it ends a DATA frame (DataEnd) after its last piece,
        // even when no byte is left.
        loop {
            let rest = buf.get(at..).unwrap_or_default();
            match self.frames.decode(rest) {
                Ok(Some((frame, used))) => {
                    at += used;
                    self.on_frame(frame, now, requests)?;
                }
                Ok(None) => break,
                Err(e) => return Err(frame_error(e)),
            }
        }
        Ok(at)
    }

    fn on_frame(
        &mut self,
        frame: Frame<'_>,
        now: Instant,
        requests: &[RequestFields],
    ) -> Result<(), ConnError> {
        match frame {
            Frame::Data { stream, data } => self.on_data(stream, data.len(), now),
            Frame::DataEnd { stream, end_stream, flow } => {
                self.on_data_end(stream, end_stream, flow, now)
            }
            Frame::Headers { stream, end_stream, end_headers, block } => {
                let wire = FRAME_HEADER_LEN + block.len();
                if end_headers {
                    self.on_block(stream, end_stream, block, wire, now)
                } else {
                    self.block.clear();
                    self.block.extend_from_slice(block);
                    self.continuing = Some((stream, end_stream, wire));
                    self.check_block()
                }
            }
            Frame::Continuation { stream, end_headers, block } => {
                let Some((first, end_stream, wire)) = self.continuing else {
                    return Err(protocol_error());
                };
                if first != stream {
                    return Err(protocol_error());
                }
                self.block.extend_from_slice(block);
                let wire = wire + FRAME_HEADER_LEN + block.len();
                self.continuing = Some((first, end_stream, wire));
                self.check_block()?;
                if end_headers {
                    self.continuing = None;
                    let whole = std::mem::take(&mut self.block);
                    let r = self.on_block(stream, end_stream, &whole, wire, now);
                    self.block = whole;
                    r?;
                }
                Ok(())
            }
            Frame::RstStream { stream, code } => self.on_reset(stream, code),
            Frame::Settings { ack: false, settings } => {
                self.apply(settings, requests)?;
                encode::settings_ack(&mut self.out);
                self.idle_frame()
            }
            Frame::Settings { ack: true, .. } => self.idle_frame(),
            // We announced ENABLE_PUSH = 0 (RFC 9113 §6.6: a PUSH_PROMISE then is a
            // connection error).
            Frame::PushPromise { .. } => Err(protocol_error()),
            Frame::Ping { ack: false, payload } => {
                encode::ping(&mut self.out, true, payload);
                self.idle_frame()
            }
            Frame::Ping { ack: true, .. } | Frame::Priority { .. } | Frame::Unknown { .. } => {
                self.idle_frame()
            }
            Frame::GoAway { last_stream, .. } => {
                self.on_goaway(last_stream);
                Ok(())
            }
            Frame::WindowUpdate { stream, increment } => {
                self.on_window_update(stream, increment, requests)
            }
        }
    }

    /// A frame that moves no stream forward: many in a row are a flood.
    fn idle_frame(&mut self) -> Result<(), ConnError> {
        self.idle_frames += 1;
        if self.idle_frames > FLOOD_FRAMES || self.backlog() > MAX_OUT_BACKLOG {
            return Err(ConnError { kind: FailureKind::Flood, code: ErrorCode::ENHANCE_YOUR_CALM });
        }
        Ok(())
    }

    /// A header block in CONTINUATION frames may not grow past the limit (endless
    /// CONTINUATION): the connection ends, since the block can no longer be decoded and
    /// HPACK's table would fall out of step.
    fn check_block(&self) -> Result<(), ConnError> {
        if self.block.len() > self.limits.max_block {
            return Err(ConnError {
                kind: FailureKind::HeadTooLarge,
                code: ErrorCode::ENHANCE_YOUR_CALM,
            });
        }
        Ok(())
    }

    /// A stream id the peer names that is neither open nor one we closed: it never
    /// existed (RFC 9113 §5.1: "idle"), a connection error.
    fn check_known(&self, stream: u32) -> Result<(), ConnError> {
        if stream >= self.next_id || stream % 2 == 0 {
            return Err(protocol_error());
        }
        Ok(())
    }

    fn on_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        wire: usize,
        now: Instant,
    ) -> Result<(), ConnError> {
        let Some(slot) = self.streams.find(stream) else {
            self.check_known(stream)?;
            // A stream we ended (a timeout, an error): decoded all the same, to keep
            // HPACK's table in step with the peer's.
            return self.hpack_in.decode(block, |_, _| {}).map_err(hpack_error);
        };
        self.idle_frames = 0;
        let trailers = match self.streams.open_mut(slot) {
            Some(s) => {
                s.ex.read(wire, now);
                if end_stream {
                    s.peer_closed = true;
                }
                s.headers_done
            }
            None => return Ok(()),
        };
        if trailers {
            self.hpack_in.decode(block, |_, _| {}).map_err(hpack_error)?;
            if !end_stream {
                // Trailers end the stream (RFC 9113 §8.1).
                self.fail(slot, FailureKind::Malformed, Some(ErrorCode::PROTOCOL_ERROR));
                return Ok(());
            }
            return self.end_of_stream(slot);
        }
        let head = match self.hpack_in.decode_response(block) {
            Ok(head) => head,
            Err(e) if e.is_connection_error() => return Err(hpack_error(e)),
            Err(e) => {
                let kind = match e {
                    herd_proto::h2::hpack::HpackError::HeaderListTooLarge { .. } => {
                        FailureKind::HeadTooLarge
                    }
                    _ => FailureKind::Malformed,
                };
                self.fail(slot, kind, Some(e.code()));
                return Ok(());
            }
        };
        if head.status < 200 {
            // Informational (100, 103): the final head follows.
            if end_stream {
                self.fail(slot, FailureKind::Malformed, Some(ErrorCode::PROTOCOL_ERROR));
            }
            return Ok(());
        }
        if let Some(s) = self.streams.open_mut(slot) {
            s.headers_done = true;
            s.status = head.status;
            s.content_length = head.content_length;
        }
        if end_stream {
            return self.end_of_stream(slot);
        }
        Ok(())
    }

    fn on_data(&mut self, stream: u32, n: usize, now: Instant) -> Result<(), ConnError> {
        let Some(slot) = self.streams.find(stream) else {
            return self.check_known(stream);
        };
        let Some(s) = self.streams.open_mut(slot) else { return Ok(()) };
        if !s.headers_done {
            // DATA before the response head (RFC 9113 §8.1).
            self.fail(slot, FailureKind::Malformed, Some(ErrorCode::PROTOCOL_ERROR));
            return Ok(());
        }
        s.ex.read(0, now);
        s.body += n as u64;
        let past = match s.content_length {
            _ if s.head => s.body > 0,
            Some(cl) => s.body > cl,
            None => false,
        };
        if past {
            // More than the response said it would send (RFC 9113 §8.1.1).
            self.fail(slot, FailureKind::Overrun, Some(ErrorCode::PROTOCOL_ERROR));
        }
        Ok(())
    }

    fn on_data_end(
        &mut self,
        stream: u32,
        end_stream: bool,
        flow: u32,
        now: Instant,
    ) -> Result<(), ConnError> {
        // The connection window counts every DATA frame, on any stream.
        self.conn_recv_window -= i64::from(flow);
        if self.conn_recv_window < 0 {
            return Err(ConnError {
                kind: FailureKind::Malformed,
                code: ErrorCode::FLOW_CONTROL_ERROR,
            });
        }
        self.conn_unacked += flow;
        if self.conn_unacked >= self.settings.connection_window / 2 {
            encode::window_update(&mut self.out, 0, self.conn_unacked);
            self.conn_recv_window += i64::from(self.conn_unacked);
            self.conn_unacked = 0;
        }
        if flow == 0 && !end_stream {
            self.idle_frame()?;
        } else {
            self.idle_frames = 0;
        }
        let Some(slot) = self.streams.find(stream) else {
            return self.check_known(stream);
        };
        let half = self.settings.stream_window / 2;
        let Some(s) = self.streams.open_mut(slot) else { return Ok(()) };
        s.ex.read(FRAME_HEADER_LEN + flow as usize, now);
        s.recv_window -= i64::from(flow);
        if s.recv_window < 0 {
            self.fail(slot, FailureKind::Malformed, Some(ErrorCode::FLOW_CONTROL_ERROR));
            return Ok(());
        }
        if end_stream {
            s.peer_closed = true;
            return self.end_of_stream(slot);
        }
        s.unacked += flow;
        if s.unacked >= half {
            let (id, n) = (s.id, s.unacked);
            s.recv_window += i64::from(n);
            s.unacked = 0;
            encode::window_update(&mut self.out, id, n);
        }
        Ok(())
    }

    /// The peer ended the stream: complete if the body is what the head announced.
    fn end_of_stream(&mut self, slot: usize) -> Result<(), ConnError> {
        let Some(s) = self.streams.open_mut(slot) else { return Ok(()) };
        let short = !s.head && s.content_length.is_some_and(|cl| s.body < cl);
        if short || !s.headers_done {
            // Fewer bytes than content-length (RFC 9113 §8.1.1), or no head at all.
            self.fail(slot, FailureKind::Malformed, None);
        } else {
            self.done(slot);
        }
        Ok(())
    }

    fn on_reset(&mut self, stream: u32, code: ErrorCode) -> Result<(), ConnError> {
        let Some(slot) = self.streams.find(stream) else {
            self.check_known(stream)?;
            return self.idle_frame();
        };
        if let Some(s) = self.streams.open_mut(slot) {
            s.peer_closed = true;
        }
        if code == ErrorCode::REFUSED_STREAM {
            // Not processed (RFC 9113 §8.7): safe to send again.
            self.retry(slot);
        } else {
            self.fail(slot, FailureKind::Reset, None);
        }
        Ok(())
    }

    fn on_goaway(&mut self, last_stream: u32) {
        let last = self.goaway.map_or(last_stream, |l| l.min(last_stream));
        self.goaway = Some(last);
        for slot in 0..self.streams.slots() {
            if self.streams.open_mut(slot).is_none() || !self.unprocessed(slot) {
                continue;
            }
            if self.answered > 0 {
                // The server's orderly end (nginx after 1000 requests): not a failure.
                self.retry(slot);
            } else {
                // It answered nothing: sending again would only meet the same GOAWAY.
                self.fail(slot, FailureKind::GoAway, None);
            }
        }
    }

    fn on_window_update(
        &mut self,
        stream: u32,
        increment: u32,
        requests: &[RequestFields],
    ) -> Result<(), ConnError> {
        let max = i64::from(crate::H2Settings::MAX_WINDOW);
        if stream == 0 {
            self.conn_send_window += i64::from(increment);
            if self.conn_send_window > max {
                return Err(ConnError {
                    kind: FailureKind::Malformed,
                    code: ErrorCode::FLOW_CONTROL_ERROR,
                });
            }
        } else if let Some(slot) = self.streams.find(stream) {
            let Some(s) = self.streams.open_mut(slot) else { return Ok(()) };
            s.send_window += i64::from(increment);
            if s.send_window > max {
                self.fail(slot, FailureKind::Malformed, Some(ErrorCode::FLOW_CONTROL_ERROR));
                return Ok(());
            }
        } else {
            self.check_known(stream)?;
        }
        if self.bodies_left == 0 {
            return self.idle_frame();
        }
        self.send_bodies(requests);
        Ok(())
    }

    /// The peer's SETTINGS.
    fn apply(
        &mut self,
        settings: Settings<'_>,
        requests: &[RequestFields],
    ) -> Result<(), ConnError> {
        for (id, value) in settings.iter() {
            match id {
                SettingId::HEADER_TABLE_SIZE => self.hpack_out.set_peer_max_table_size(value),
                // A server may not offer push (RFC 9113 §6.5.2).
                SettingId::ENABLE_PUSH if value != 0 => return Err(protocol_error()),
                SettingId::MAX_CONCURRENT_STREAMS => self.peer.max_streams = value,
                SettingId::MAX_FRAME_SIZE => self.peer.max_frame = value,
                SettingId::INITIAL_WINDOW_SIZE => {
                    // Applies to every open stream's send window (RFC 9113 §6.9.2).
                    let delta = i64::from(value) - self.peer.initial_window;
                    self.peer.initial_window = i64::from(value);
                    let max = i64::from(crate::H2Settings::MAX_WINDOW);
                    for slot in 0..self.streams.slots() {
                        if let Some(s) = self.streams.open_mut(slot) {
                            s.send_window += delta;
                            if s.send_window > max {
                                return Err(ConnError {
                                    kind: FailureKind::Malformed,
                                    code: ErrorCode::FLOW_CONTROL_ERROR,
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        self.settled = true;
        self.send_bodies(requests);
        Ok(())
    }
}

/// Bytes still missing from the frame at the front of `buf` (which starts at a frame).
fn frame_rest(buf: &[u8]) -> usize {
    match buf {
        [a, b, c, ..] if buf.len() >= FRAME_HEADER_LEN => {
            let len = (usize::from(*a) << 16) | (usize::from(*b) << 8) | usize::from(*c);
            (FRAME_HEADER_LEN + len).saturating_sub(buf.len())
        }
        _ => FRAME_HEADER_LEN - buf.len(),
    }
}

/// A broken frame rule. Even the rules RFC 9113 lets end only a stream end the connection
/// here: a benchmark's server that breaks framing is broken, and its streams' figures would
/// not be worth keeping.
fn frame_error(e: FrameError) -> ConnError {
    ConnError { kind: FailureKind::Malformed, code: e.code }
}

fn protocol_error() -> ConnError {
    ConnError { kind: FailureKind::Malformed, code: ErrorCode::PROTOCOL_ERROR }
}

/// A header block that breaks the connection's HPACK state: its table can no longer be
/// trusted, so the connection ends (RFC 9113 §4.3).
fn hpack_error(e: herd_proto::h2::hpack::HpackError) -> ConnError {
    let kind = match e {
        herd_proto::h2::hpack::HpackError::HeaderListTooLarge { .. } => FailureKind::HeadTooLarge,
        _ => FailureKind::Malformed,
    };
    ConnError { kind, code: e.code() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_of_a_split_frame_is_counted_from_its_header() {
        assert_eq!(frame_rest(&[0, 0]), 7);
        assert_eq!(frame_rest(&[0, 0, 4, 8, 0, 0, 0, 0, 0]), 4);
        assert_eq!(frame_rest(&[0, 0, 4, 8, 0, 0, 0, 0, 0, 1, 2]), 2);
    }
}
