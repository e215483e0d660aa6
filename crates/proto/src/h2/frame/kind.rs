//! The frame type codes of RFC 9113 §6 and their names, for the encoders' `kind` argument
//! and for error messages. A code not listed here is an extension frame type, which the
//! decoder skips (§4.1, §5.5).

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// The RFC's name of a frame type, or `None` for a type it does not define.
pub fn name(kind: u8) -> Option<&'static str> {
    Some(match kind {
        DATA => "DATA",
        HEADERS => "HEADERS",
        PRIORITY => "PRIORITY",
        RST_STREAM => "RST_STREAM",
        SETTINGS => "SETTINGS",
        PUSH_PROMISE => "PUSH_PROMISE",
        PING => "PING",
        GOAWAY => "GOAWAY",
        WINDOW_UPDATE => "WINDOW_UPDATE",
        CONTINUATION => "CONTINUATION",
        _ => return None,
    })
}

/// The section of RFC 9113 that defines a frame type, for error messages.
pub(crate) fn section(kind: u8) -> &'static str {
    match kind {
        DATA => "§6.1",
        HEADERS => "§6.2",
        PRIORITY => "§6.3",
        RST_STREAM => "§6.4",
        SETTINGS => "§6.5",
        PUSH_PROMISE => "§6.6",
        PING => "§6.7",
        GOAWAY => "§6.8",
        WINDOW_UPDATE => "§6.9",
        CONTINUATION => "§6.10",
        _ => "§5.5",
    }
}
