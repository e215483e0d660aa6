//! [`FrameError`]: a rule of RFC 9113 that a peer's frame broke, with the code to answer it
//! with and whether the connection or only one stream must end (§5.4). [`FrameRule`] names
//! the rule with the numbers that broke it; the message quotes both and the section.
//!
//! Everything here is `Copy` (codes, numbers, static names): an error is built on the hot
//! path and may be kept by the decoder without allocating.

use std::fmt;

use thiserror::Error;

use super::kind;
use super::settings::MAX_WINDOW_SIZE;
use crate::h2::ErrorCode;

/// A broken rule of RFC 9113: which code to send, and whether only a stream dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{code}: {rule}")]
pub struct FrameError {
    pub code: ErrorCode,
    /// `Some(stream)`: a stream error (§5.4.2): send RST_STREAM on that stream with `code`
    /// and go on. `None`: a connection error (§5.4.1): send GOAWAY with `code` and close.
    pub stream: Option<u32>,
    pub rule: FrameRule,
    /// For a stream error, the bytes of the input the bad frame took (header included): drop
    /// them and call the decoder again. 0 for a connection error, after which the decoder
    /// returns the same error for good.
    pub used: usize,
}

/// Which rule was broken, with the numbers that broke it. `kind` fields are frame type
/// codes ([`kind`](super::kind)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameRule {
    /// A frame longer than the SETTINGS_MAX_FRAME_SIZE this endpoint announced (§4.2).
    TooLong { kind: u8, len: u32, max: u32 },
    /// A frame that belongs to a stream, on stream 0.
    NoStream { kind: u8 },
    /// A connection-level frame (SETTINGS, PING, GOAWAY) on a stream.
    OnStream { kind: u8, stream: u32 },
    /// A frame of a fixed size (PRIORITY, RST_STREAM, PING, WINDOW_UPDATE) of another size.
    Length { kind: u8, len: u32, expected: u32 },
    /// A SETTINGS payload that is not a whole number of six-byte parameters.
    SettingsLength { len: u32 },
    /// A SETTINGS ACK with a payload.
    SettingsAckLength { len: u32 },
    /// A frame too short for its mandatory fields (pad length, priority, promised stream,
    /// GOAWAY's last stream and code).
    TooShort { kind: u8, len: u32, min: u32 },
    /// More padding than the payload has room for after its fixed fields.
    Padding { kind: u8, len: u32, pad: u8 },
    /// A WINDOW_UPDATE of 0 (on `stream`, or on the connection when `stream` is 0).
    ZeroIncrement { stream: u32 },
    /// SETTINGS_ENABLE_PUSH other than 0 or 1.
    EnablePush { value: u32 },
    /// SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1.
    InitialWindowSize { value: u32 },
    /// SETTINGS_MAX_FRAME_SIZE outside 16384..=16777215.
    MaxFrameSize { value: u32 },
    /// A frame other than a CONTINUATION of `stream` while its header block is unfinished.
    ContinuationExpected { stream: u32, kind: u8, got: u32 },
    /// A CONTINUATION that follows no unfinished header block.
    UnexpectedContinuation { stream: u32 },
}

impl FrameRule {
    /// The code RFC 9113 gives for breaking this rule.
    pub fn code(&self) -> ErrorCode {
        match self {
            FrameRule::TooLong { .. }
            | FrameRule::Length { .. }
            | FrameRule::SettingsLength { .. }
            | FrameRule::SettingsAckLength { .. }
            | FrameRule::TooShort { .. } => ErrorCode::FRAME_SIZE_ERROR,
            FrameRule::InitialWindowSize { .. } => ErrorCode::FLOW_CONTROL_ERROR,
            FrameRule::NoStream { .. }
            | FrameRule::OnStream { .. }
            | FrameRule::Padding { .. }
            | FrameRule::ZeroIncrement { .. }
            | FrameRule::EnablePush { .. }
            | FrameRule::MaxFrameSize { .. }
            | FrameRule::ContinuationExpected { .. }
            | FrameRule::UnexpectedContinuation { .. } => ErrorCode::PROTOCOL_ERROR,
        }
    }
}

impl FrameError {
    pub(crate) fn connection(rule: FrameRule) -> FrameError {
        FrameError { code: rule.code(), stream: None, rule, used: 0 }
    }

    pub(crate) fn stream(rule: FrameRule, stream: u32, used: usize) -> FrameError {
        FrameError { code: rule.code(), stream: Some(stream), rule, used }
    }
}

impl fmt::Display for FrameRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FrameRule::TooLong { kind, len, max } => write!(
                f,
                "a {} of {len} bytes; longer than the {max} this endpoint accepts \
                 (SETTINGS_MAX_FRAME_SIZE, RFC 9113 §4.2)",
                Kind(kind)
            ),
            FrameRule::NoStream { kind } => write!(
                f,
                "a {} on stream 0; it must be on a stream (RFC 9113 {})",
                Kind(kind),
                kind::section(kind)
            ),
            FrameRule::OnStream { kind, stream } => write!(
                f,
                "a {} on stream {stream}; it must be on stream 0 (RFC 9113 {})",
                Kind(kind),
                kind::section(kind)
            ),
            FrameRule::Length { kind, len, expected } => write!(
                f,
                "a {} of {len} bytes; its length must be {expected} (RFC 9113 {})",
                Kind(kind),
                kind::section(kind)
            ),
            FrameRule::SettingsLength { len } => write!(
                f,
                "a SETTINGS frame of {len} bytes; its length must be a multiple of 6 \
                 (RFC 9113 §6.5)"
            ),
            FrameRule::SettingsAckLength { len } => {
                write!(f, "a SETTINGS ACK of {len} bytes; it must be empty (RFC 9113 §6.5)")
            }
            FrameRule::TooShort { kind, len, min } => write!(
                f,
                "a {} of {len} bytes; its fixed fields need at least {min} (RFC 9113 {})",
                Kind(kind),
                kind::section(kind)
            ),
            FrameRule::Padding { kind, len, pad } => write!(
                f,
                "a {} of {len} bytes with {pad} bytes of padding; the padding must fit in the \
                 payload after the pad length and fixed fields (RFC 9113 {})",
                Kind(kind),
                kind::section(kind)
            ),
            FrameRule::ZeroIncrement { stream: 0 } => write!(
                f,
                "a WINDOW_UPDATE frame with an increment of 0 on the connection; the increment must be \
                 1 to {MAX_WINDOW_SIZE} (RFC 9113 §6.9)"
            ),
            FrameRule::ZeroIncrement { stream } => write!(
                f,
                "a WINDOW_UPDATE frame with an increment of 0 on stream {stream}; the increment must be \
                 1 to {MAX_WINDOW_SIZE} (RFC 9113 §6.9)"
            ),
            FrameRule::EnablePush { value } => {
                write!(f, "SETTINGS_ENABLE_PUSH of {value}; it must be 0 or 1 (RFC 9113 §6.5.2)")
            }
            FrameRule::InitialWindowSize { value } => write!(
                f,
                "SETTINGS_INITIAL_WINDOW_SIZE of {value}; it must be at most {MAX_WINDOW_SIZE} \
                 (RFC 9113 §6.5.2)"
            ),
            FrameRule::MaxFrameSize { value } => write!(
                f,
                "SETTINGS_MAX_FRAME_SIZE of {value}; it must be 16384 to 16777215 \
                 (RFC 9113 §6.5.2)"
            ),
            FrameRule::ContinuationExpected { stream, kind, got } => write!(
                f,
                "a {} on stream {got} inside stream {stream}'s unfinished header block; only \
                 CONTINUATION frames of stream {stream} may come until END_HEADERS \
                 (RFC 9113 §6.10)",
                Kind(kind)
            ),
            FrameRule::UnexpectedContinuation { stream } => write!(
                f,
                "a CONTINUATION frame on stream {stream} that continues no unfinished header \
                 block (RFC 9113 §6.10)"
            ),
        }
    }
}

/// "DATA frame", or "frame of type 0xc" for an extension type.
struct Kind(u8);

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match kind::name(self.0) {
            Some(name) => write!(f, "{name} frame"),
            None => write!(f, "frame of type {:#x}", self.0),
        }
    }
}
