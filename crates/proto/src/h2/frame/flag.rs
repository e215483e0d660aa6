//! The flag bits of RFC 9113 §6 that this codec reads or writes. Which bits mean something
//! depends on the frame type; the decoder ignores bits a type does not define (§4.1).

/// DATA, HEADERS: the last frame the sender sends on this stream.
pub const END_STREAM: u8 = 0x1;
/// SETTINGS, PING: this frame acknowledges the peer's.
pub const ACK: u8 = 0x1;
/// HEADERS, PUSH_PROMISE, CONTINUATION: the header block ends with this frame.
pub const END_HEADERS: u8 = 0x4;
/// DATA, HEADERS, PUSH_PROMISE: a pad-length byte leads the payload and padding ends it.
pub const PADDED: u8 = 0x8;
/// HEADERS: five bytes of (deprecated) priority fields follow the pad length.
pub const PRIORITY: u8 = 0x20;
