//! What can be wrong with what an HTTP/3 server sends, each case a variant, and the
//! application error code (RFC 9114 §8.1, RFC 9204 §6) the connection or stream is closed
//! with for it. The engine counts these as failures and closes with [`H3Error::code`]; it
//! never needs the text on the hot path.

use thiserror::Error;

/// HTTP/3 and QPACK application error codes (RFC 9114 §8.1, RFC 9204 §6).
pub mod code {
    pub const H3_NO_ERROR: u64 = 0x100;
    pub const H3_GENERAL_PROTOCOL_ERROR: u64 = 0x101;
    pub const H3_INTERNAL_ERROR: u64 = 0x102;
    pub const H3_STREAM_CREATION_ERROR: u64 = 0x103;
    pub const H3_CLOSED_CRITICAL_STREAM: u64 = 0x104;
    pub const H3_FRAME_UNEXPECTED: u64 = 0x105;
    pub const H3_FRAME_ERROR: u64 = 0x106;
    pub const H3_EXCESSIVE_LOAD: u64 = 0x107;
    pub const H3_ID_ERROR: u64 = 0x108;
    pub const H3_SETTINGS_ERROR: u64 = 0x109;
    pub const H3_MISSING_SETTINGS: u64 = 0x10a;
    pub const H3_REQUEST_REJECTED: u64 = 0x10b;
    pub const H3_REQUEST_CANCELLED: u64 = 0x10c;
    pub const H3_REQUEST_INCOMPLETE: u64 = 0x10d;
    pub const H3_MESSAGE_ERROR: u64 = 0x10e;
    pub const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
}

/// Which kind of stream a frame arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// A request stream: the response's frames.
    Request,
    /// The server's control stream.
    Control,
}

/// Something the server sent that HTTP/3 does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum H3Error {
    /// A frame longer than herd accepts for its type.
    #[error("frame type {frame_type:#x} of {len} bytes, more than the {limit} accepted")]
    FrameTooLarge { frame_type: u64, len: u64, limit: u64 },
    /// A frame whose payload does not hold what its type says (a GOAWAY that is not one
    /// varint, SETTINGS that end inside a pair).
    #[error("frame type {frame_type:#x}: payload does not match its length")]
    FrameMalformed { frame_type: u64 },
    /// A stream ended inside a frame.
    #[error("stream ended inside a frame")]
    Truncated,
    /// A frame type not allowed on this stream or at this point (RFC 9114 §7.2).
    #[error("frame type {frame_type:#x} not allowed on a {stream:?} stream here")]
    FrameUnexpected { frame_type: u64, stream: StreamKind },
    /// The control stream did not start with SETTINGS.
    #[error("the control stream did not start with SETTINGS")]
    MissingSettings,
    /// A setting sent twice, or one of HTTP/2's that HTTP/3 forbids.
    #[error("setting {id:#x} is invalid or repeated")]
    Settings { id: u64 },
    /// Server push, which herd never allows (it sends no MAX_PUSH_ID): a PUSH_PROMISE, a
    /// CANCEL_PUSH or a push stream.
    #[error("server push, which herd never allowed")]
    PushRefused,
    /// A GOAWAY whose stream id grew, or is not a client bidirectional stream.
    #[error("GOAWAY with invalid stream id {id}")]
    GoawayId { id: u64 },
    /// A second control stream, QPACK encoder stream or decoder stream.
    #[error("a second critical stream of type {stream_type:#x}")]
    DuplicateStream { stream_type: u64 },
    /// The control stream or a QPACK stream ended.
    #[error("a critical stream closed")]
    ClosedCriticalStream,
    /// A response that breaks HTTP's rules (no or a bad `:status`, a body other than its
    /// `content-length`, no HEADERS at all).
    #[error("malformed response: {0}")]
    Message(MessageError),
    /// A field section whose decoded size (RFC 9114 §4.2.2: names, values and 32 bytes a
    /// field) is past the limit herd advertised as SETTINGS_MAX_FIELD_SECTION_SIZE.
    #[error("a field section larger than the {limit} bytes herd accepts")]
    FieldSectionTooLarge { limit: u64 },
    /// A field section herd cannot decode.
    #[error("QPACK: {0}")]
    Qpack(QpackError),
}

/// How a response broke HTTP's message rules (H3_MESSAGE_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MessageError {
    #[error("no :status")]
    NoStatus,
    #[error("invalid :status")]
    InvalidStatus,
    #[error("invalid content-length")]
    InvalidContentLength,
    #[error("a pseudo-header other than :status, or after a regular field")]
    PseudoHeader,
    #[error("an empty field name, or one with an uppercase letter")]
    FieldName,
    /// More body than `content-length` said (or any body where there is none: a response
    /// to HEAD, a 204 or a 304).
    #[error("body longer than the {want} bytes its length said")]
    BodyPastLength { want: u64 },
    #[error("body of {got} bytes, its length said {want}")]
    BodyShort { want: u64, got: u64 },
    #[error("stream ended before the response's HEADERS")]
    NoHeaders,
    /// More interim (1xx) responses before the final one than herd waits through.
    #[error("more than {0} interim responses")]
    TooManyInterim(u32),
}

/// Why a field section could not be decoded (QPACK_DECOMPRESSION_FAILED).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum QpackError {
    /// A reference to the dynamic table, which herd advertises with capacity 0.
    #[error("reference to the dynamic table, whose capacity is 0")]
    DynamicReference,
    #[error("static table index {0} out of range")]
    StaticIndex(u64),
    #[error("field section ends inside a field line")]
    Truncated,
    #[error("integer overflow")]
    IntegerOverflow,
    #[error("invalid Huffman code")]
    Huffman,
    /// A Huffman-coded string that decodes past the field section size limit.
    #[error("a Huffman-coded string longer than the field section size limit")]
    TooLong,
}

impl H3Error {
    /// The application error code to close the connection (or reset the stream) with.
    pub fn code(&self) -> u64 {
        match self {
            H3Error::FrameTooLarge { .. } | H3Error::FieldSectionTooLarge { .. } => {
                code::H3_EXCESSIVE_LOAD
            }
            H3Error::FrameMalformed { .. } | H3Error::Truncated => code::H3_FRAME_ERROR,
            H3Error::FrameUnexpected { .. } => code::H3_FRAME_UNEXPECTED,
            H3Error::MissingSettings => code::H3_MISSING_SETTINGS,
            H3Error::Settings { .. } => code::H3_SETTINGS_ERROR,
            H3Error::PushRefused | H3Error::GoawayId { .. } => code::H3_ID_ERROR,
            H3Error::DuplicateStream { .. } => code::H3_STREAM_CREATION_ERROR,
            H3Error::ClosedCriticalStream => code::H3_CLOSED_CRITICAL_STREAM,
            H3Error::Message(_) => code::H3_MESSAGE_ERROR,
            H3Error::Qpack(_) => code::QPACK_DECOMPRESSION_FAILED,
        }
    }

    /// True when only the request's stream is affected: a malformed response (RFC 9114
    /// §4.1.2). Every other error is the connection's and ends every stream on it (RFC 9204
    /// §2.2 makes a decompression failure a connection error too).
    pub fn is_stream_error(&self) -> bool {
        matches!(self, H3Error::Message(_))
    }
}

impl From<QpackError> for H3Error {
    fn from(e: QpackError) -> H3Error {
        H3Error::Qpack(e)
    }
}

impl From<MessageError> for H3Error {
    fn from(e: MessageError) -> H3Error {
        H3Error::Message(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_maps_to_its_rfc_code() {
        let cases = [
            (H3Error::FrameTooLarge { frame_type: 1, len: 9, limit: 8 }, 0x107),
            (H3Error::FrameMalformed { frame_type: 7 }, 0x106),
            (H3Error::Truncated, 0x106),
            (H3Error::FrameUnexpected { frame_type: 0, stream: StreamKind::Control }, 0x105),
            (H3Error::MissingSettings, 0x10a),
            (H3Error::Settings { id: 2 }, 0x109),
            (H3Error::PushRefused, 0x108),
            (H3Error::GoawayId { id: 3 }, 0x108),
            (H3Error::DuplicateStream { stream_type: 0 }, 0x103),
            (H3Error::ClosedCriticalStream, 0x104),
            (H3Error::FieldSectionTooLarge { limit: 9 }, 0x107),
            (H3Error::Message(MessageError::NoStatus), 0x10e),
            (H3Error::Qpack(QpackError::DynamicReference), 0x200),
        ];
        for (e, want) in cases {
            assert_eq!(e.code(), want, "{e}");
            assert_eq!(e.is_stream_error(), want == 0x10e, "{e}");
        }
    }
}
