//! Encoders for the frames a client sends (RFC 9113 §6), appending to `out`: no allocation
//! beyond `out` growing, so a connection that reuses its write buffer allocates nothing.
//! Also PRIORITY and PUSH_PROMISE, which a client does not send, for tests and for the
//! hostile-server fixtures.
//!
//! These take herd's own values, not a peer's: a length that does not fit the 24-bit field
//! is the caller's bug (debug builds assert); stream ids and increments are cut to 31 bits.

use super::header::STREAM_MASK;
use super::{flag, kind, SettingId, PREFACE};
use crate::h2::ErrorCode;

/// The connection preface and the first SETTINGS frame (§3.4), in one write.
pub fn preface_and_settings(out: &mut Vec<u8>, settings: &[(SettingId, u32)]) {
    out.extend_from_slice(PREFACE);
    self::settings(out, settings);
}

pub fn settings(out: &mut Vec<u8>, settings: &[(SettingId, u32)]) {
    frame_header(out, len24(settings.len().saturating_mul(6)), kind::SETTINGS, 0, 0);
    for &(id, value) in settings {
        out.extend_from_slice(&id.0.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn settings_ack(out: &mut Vec<u8>) {
    frame_header(out, 0, kind::SETTINGS, flag::ACK, 0);
}

pub fn ping(out: &mut Vec<u8>, ack: bool, payload: [u8; 8]) {
    frame_header(out, 8, kind::PING, if ack { flag::ACK } else { 0 }, 0);
    out.extend_from_slice(&payload);
}

/// `stream` 0 is the connection's window.
pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    frame_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & STREAM_MASK).to_be_bytes());
}

pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
    frame_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.0.to_be_bytes());
}

pub fn goaway(out: &mut Vec<u8>, last_stream: u32, code: ErrorCode, debug: &[u8]) {
    frame_header(out, len24(debug.len().saturating_add(8)), kind::GOAWAY, 0, 0);
    out.extend_from_slice(&(last_stream & STREAM_MASK).to_be_bytes());
    out.extend_from_slice(&code.0.to_be_bytes());
    out.extend_from_slice(debug);
}

/// HEADERS (+ CONTINUATION frames when `block` > max_frame_size), END_STREAM as asked.
pub fn headers(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    max_frame_size: u32,
) {
    let end_stream = if end_stream { flag::END_STREAM } else { 0 };
    header_block(out, kind::HEADERS, end_stream, stream, &[], block, max_frame_size);
}

/// PUSH_PROMISE (+ CONTINUATION frames when the block does not fit), as a server sends it.
pub fn push_promise(
    out: &mut Vec<u8>,
    stream: u32,
    promised: u32,
    block: &[u8],
    max_frame_size: u32,
) {
    let promised = (promised & STREAM_MASK).to_be_bytes();
    header_block(out, kind::PUSH_PROMISE, 0, stream, &promised, block, max_frame_size);
}

/// PRIORITY (deprecated, §5.3.2): a dependency and a weight, which HTTP/2 peers ignore.
pub fn priority(out: &mut Vec<u8>, stream: u32, depends_on: u32, exclusive: bool, weight: u8) {
    frame_header(out, 5, kind::PRIORITY, 0, stream);
    let e = if exclusive { 1 << 31 } else { 0 };
    out.extend_from_slice(&((depends_on & STREAM_MASK) | e).to_be_bytes());
    out.push(weight);
}

/// One DATA frame's header only (the engine writes the payload from its own buffer).
pub fn data_header(out: &mut Vec<u8>, stream: u32, len: u32, end_stream: bool) {
    frame_header(out, len, kind::DATA, if end_stream { flag::END_STREAM } else { 0 }, stream);
}

/// One DATA frame, header and payload.
pub fn data(out: &mut Vec<u8>, stream: u32, payload: &[u8], end_stream: bool) {
    data_header(out, stream, len24(payload.len()), end_stream);
    out.extend_from_slice(payload);
}

pub fn frame_header(out: &mut Vec<u8>, len: u32, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len < 1 << 24, "a frame length of {len} does not fit in 24 bits");
    let len = len.to_be_bytes();
    out.extend_from_slice(&[len[1], len[2], len[3], kind, flags]);
    out.extend_from_slice(&(stream & STREAM_MASK).to_be_bytes());
}

/// A header block in a HEADERS or PUSH_PROMISE frame (whose fixed fields are `fields`) and
/// as many CONTINUATION frames as `max_frame_size` requires; END_HEADERS on the last.
fn header_block(
    out: &mut Vec<u8>,
    kind: u8,
    flags: u8,
    stream: u32,
    fields: &[u8],
    block: &[u8],
    max_frame_size: u32,
) {
    // A frame always fits 16384 bytes (§4.2); a smaller limit is a test's choice.
    let max = max_frame_size.clamp(fields.len() as u32 + 1, super::MAX_MAX_FRAME_SIZE) as usize;
    let first = block.len().min(max - fields.len());
    let (head, mut rest) = block.split_at(first);
    let end = if rest.is_empty() { flag::END_HEADERS } else { 0 };
    frame_header(out, len24(fields.len() + head.len()), kind, flags | end, stream);
    out.extend_from_slice(fields);
    out.extend_from_slice(head);
    while !rest.is_empty() {
        let (piece, after) = rest.split_at(rest.len().min(max));
        rest = after;
        let end = if rest.is_empty() { flag::END_HEADERS } else { 0 };
        frame_header(out, len24(piece.len()), kind::CONTINUATION, end, stream);
        out.extend_from_slice(piece);
    }
}

fn len24(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}
