//! The HTTP/2 frame codec (RFC 9113 §4–§6), without I/O.
//!
//! Brief overview:
//! - [`FrameDecoder`] takes the bytes a peer sent, in pieces of any size, and hands out one
//!   [`Frame`] at a time, borrowed from the caller's buffer. It checks every rule of §4–§6 a
//!   frame can break on its own and says which in a [`FrameError`]. DATA payloads and
//!   unknown frames go through in pieces as they arrive; other frames are returned whole.
//! - [`encode`] appends the frames a client sends to a `Vec<u8>`.
//! - [`Settings`] is a SETTINGS payload whose values have been checked; [`SettingId`] names
//!   its parameters.
//! - [`priority::dependency`] reads the deprecated priority field a [`Frame`] drops, for the
//!   one rule left about it (a stream cannot depend on itself, §5.3.1).
//!
//! What it does not do: judge stream states (idle, open, closed) or flow-control windows,
//! bound the number of CONTINUATION frames, or decode header blocks (HPACK). The engine's
//! session does those; the decoder remembers only where a frame ends and whether a header
//! block is unfinished.

mod decoder;
pub mod encode;
mod error;
pub mod flag;
// Public only for the fuzz target and the tests; the engine has no use for it.
#[doc(hidden)]
pub mod fuzzing;
mod header;
pub mod kind;
mod payload;
pub mod priority;
mod settings;

pub use decoder::FrameDecoder;
pub use error::{FrameError, FrameRule};
pub use header::FRAME_HEADER_LEN;
pub use settings::{SettingId, Settings, MAX_MAX_FRAME_SIZE, MAX_WINDOW_SIZE};

use super::ErrorCode;

/// What a client sends first on every HTTP/2 connection, before its SETTINGS (§3.4).
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The largest frame payload every endpoint accepts until it announces otherwise (§4.2).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 16_384;

/// One decoded frame, or one piece of a DATA or unknown frame. Slices borrow the buffer
/// given to [`FrameDecoder::decode`]. Stream ids have the reserved bit cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A piece of a DATA frame's payload, padding removed. A frame's payload may come in
    /// several pieces (as bytes arrive); the decoder never holds DATA bytes. A piece may be
    /// empty when only padding arrived.
    Data {
        stream: u32,
        data: &'a [u8],
    },
    /// The end of a DATA frame. `flow` = the frame's whole payload length incl. padding and the
    /// pad-length byte: what counts against flow-control windows (RFC 9113 §6.9.1).
    DataEnd {
        stream: u32,
        end_stream: bool,
        flow: u32,
    },
    /// `block` = the header block fragment, padding and priority fields removed.
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: &'a [u8],
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    /// Priority signals are deprecated (§5.3.2); only the stream is kept.
    Priority {
        stream: u32,
    },
    RstStream {
        stream: u32,
        code: ErrorCode,
    },
    /// `settings` is empty when `ack` is set.
    Settings {
        ack: bool,
        settings: Settings<'a>,
    },
    PushPromise {
        stream: u32,
        promised: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    Ping {
        ack: bool,
        payload: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: ErrorCode,
        debug: &'a [u8],
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    /// A frame of a type this codec does not know: skipped, as RFC 9113 §4.1 requires. One
    /// is returned for each piece of it that is skipped (a frame split across reads may give
    /// several); there is nothing in them to act on.
    Unknown {
        kind: u8,
        stream: u32,
    },
}

#[cfg(test)]
mod tests;
