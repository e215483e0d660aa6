//! A whole non-DATA frame's payload, read into a [`Frame`]: the rules only the payload can
//! break (padding, PRIORITY's size as a stream error, SETTINGS values, a zero
//! WINDOW_UPDATE). The rules the header alone can break were checked before the payload
//! arrived (`decoder.rs`), including every minimum length read here; the reads are checked
//! all the same, so that a mistake there is an error rather than a panic.

use super::error::{FrameError, FrameRule};
use super::header::{be_u32, FrameHeader, FRAME_HEADER_LEN, STREAM_MASK};
use super::settings::Settings;
use super::{flag, kind, Frame};
use crate::h2::ErrorCode;

/// Reads a frame of a known type other than DATA; `payload` is exactly `h.len` bytes.
pub(crate) fn parse<'a>(h: &FrameHeader, payload: &'a [u8]) -> Result<Frame<'a>, FrameError> {
    let stream = h.stream;
    let end_headers = h.has(flag::END_HEADERS);
    Ok(match h.kind {
        kind::HEADERS => {
            let fixed = if h.has(flag::PRIORITY) { 5 } else { 0 };
            let block = fields(h, payload, fixed)?.get(fixed as usize..).ok_or_else(|| short(h))?;
            Frame::Headers { stream, end_stream: h.has(flag::END_STREAM), end_headers, block }
        }
        kind::PUSH_PROMISE => {
            let body = fields(h, payload, 4)?;
            let promised = be_u32(body, 0).ok_or_else(|| short(h))? & STREAM_MASK;
            let block = body.get(4..).ok_or_else(|| short(h))?;
            Frame::PushPromise { stream, promised, end_headers, block }
        }
        kind::CONTINUATION => Frame::Continuation { stream, end_headers, block: payload },
        kind::PRIORITY => {
            // The one size rule that is a stream error (§6.3): a bad PRIORITY harms nothing
            // but its stream, so it waits for the whole frame to be dropped by the caller.
            if h.len != 5 {
                let rule = FrameRule::Length { kind: kind::PRIORITY, len: h.len, expected: 5 };
                return Err(FrameError::stream(rule, stream, frame_len(h)));
            }
            Frame::Priority { stream }
        }
        kind::RST_STREAM => {
            let code = be_u32(payload, 0).ok_or_else(|| short(h))?;
            Frame::RstStream { stream, code: ErrorCode(code) }
        }
        kind::SETTINGS => {
            let ack = h.has(flag::ACK);
            let settings = if ack { Settings::default() } else { Settings::parse(payload)? };
            Frame::Settings { ack, settings }
        }
        kind::PING => {
            let payload: [u8; 8] = payload.try_into().map_err(|_| short(h))?;
            Frame::Ping { ack: h.has(flag::ACK), payload }
        }
        kind::GOAWAY => {
            let last_stream = be_u32(payload, 0).ok_or_else(|| short(h))? & STREAM_MASK;
            let code = ErrorCode(be_u32(payload, 4).ok_or_else(|| short(h))?);
            let debug = payload.get(8..).ok_or_else(|| short(h))?;
            Frame::GoAway { last_stream, code, debug }
        }
        kind::WINDOW_UPDATE => {
            let increment = be_u32(payload, 0).ok_or_else(|| short(h))? & STREAM_MASK;
            if increment == 0 {
                // On a stream it ends only that stream; on the connection, the connection.
                let rule = FrameRule::ZeroIncrement { stream };
                return Err(match stream {
                    0 => FrameError::connection(rule),
                    _ => FrameError::stream(rule, stream, frame_len(h)),
                });
            }
            Frame::WindowUpdate { stream, increment }
        }
        _ => Frame::Unknown { kind: h.kind, stream },
    })
}

/// The payload without its pad-length byte and padding (when PADDED), checking that the
/// padding leaves room for `fixed` bytes of fields (§6.1, §6.2, §6.6).
pub(crate) fn fields<'a>(
    h: &FrameHeader,
    payload: &'a [u8],
    fixed: u32,
) -> Result<&'a [u8], FrameError> {
    if !h.has(flag::PADDED) {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or_else(|| short(h))?;
    check_padding(h, pad, fixed)?;
    let end = rest.len().saturating_sub(usize::from(pad));
    Ok(rest.get(..end).unwrap_or_default())
}

/// Padding of `pad` bytes must fit in the payload after the pad-length byte and `fixed`
/// bytes of fields. (For DATA, `fixed` is 0: "padding the length of the payload or greater"
/// is the error, §6.1.)
pub(crate) fn check_padding(h: &FrameHeader, pad: u8, fixed: u32) -> Result<(), FrameError> {
    if u32::from(pad) > h.len.saturating_sub(1 + fixed) {
        return Err(FrameError::connection(FrameRule::Padding { kind: h.kind, len: h.len, pad }));
    }
    Ok(())
}

/// The minimum payload length of a frame's mandatory fields, for the header check: the
/// pad-length byte when PADDED, plus priority fields or the promised stream id.
pub(crate) fn min_len(h: &FrameHeader) -> u32 {
    let pad = u32::from(
        h.has(flag::PADDED) && matches!(h.kind, kind::DATA | kind::HEADERS | kind::PUSH_PROMISE),
    );
    match h.kind {
        kind::HEADERS if h.has(flag::PRIORITY) => pad + 5,
        kind::PUSH_PROMISE => pad + 4,
        kind::GOAWAY => 8,
        _ => pad,
    }
}

/// A payload shorter than its mandatory fields. The header check reports it before the
/// payload is read; this is the same error should a read here come up short all the same.
fn short(h: &FrameHeader) -> FrameError {
    FrameError::connection(FrameRule::TooShort { kind: h.kind, len: h.len, min: min_len(h) })
}

/// The bytes a whole frame takes in the input.
fn frame_len(h: &FrameHeader) -> usize {
    FRAME_HEADER_LEN.saturating_add(usize::try_from(h.len).unwrap_or(usize::MAX))
}
