//! HTTP/3 frame types (RFC 9114 §7.2) and how to write the frames a client sends. Reading
//! them is [`crate::h3::FrameDecoder`]'s job.
//!
//! A frame is a varint type, a varint payload length, and the payload. herd writes HEADERS
//! (a request's field section, encoded once per run) and SETTINGS (on its control stream);
//! it never writes DATA (no request bodies yet), GOAWAY, MAX_PUSH_ID (so the server may
//! not push) or CANCEL_PUSH.

use super::varint;

/// Frame type codes.
pub mod kind {
    pub const DATA: u64 = 0x00;
    pub const HEADERS: u64 = 0x01;
    pub const CANCEL_PUSH: u64 = 0x03;
    pub const SETTINGS: u64 = 0x04;
    pub const PUSH_PROMISE: u64 = 0x05;
    pub const GOAWAY: u64 = 0x07;
    pub const MAX_PUSH_ID: u64 = 0x0d;
    /// HTTP/2's PRIORITY, PING, WINDOW_UPDATE and CONTINUATION: reserved, and an error to
    /// receive (RFC 9114 §7.2.8).
    pub const HTTP2_ONLY: [u64; 4] = [0x02, 0x06, 0x08, 0x09];
}

/// Setting identifiers (RFC 9114 §7.2.4.1, RFC 9204 §5).
pub mod setting {
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x07;
    /// HTTP/2's ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE and
    /// MAX_FRAME_SIZE: an error in HTTP/3 (RFC 9114 §7.2.4.1).
    pub const HTTP2_ONLY: [u64; 4] = [0x02, 0x03, 0x04, 0x05];
}

/// True for the reserved "grease" types `0x1f * N + 0x21` (RFC 9114 §7.2.9 and §6.2.3),
/// which a receiver ignores.
pub fn is_reserved(value: u64) -> bool {
    value >= 0x21 && (value - 0x21) % 0x1f == 0
}

/// Appends a frame header: its type and payload length.
pub fn encode_header(frame_type: u64, payload_len: u64, out: &mut Vec<u8>) {
    varint::encode(frame_type, out);
    varint::encode(payload_len, out);
}

/// Appends a whole frame.
pub fn encode(frame_type: u64, payload: &[u8], out: &mut Vec<u8>) {
    encode_header(frame_type, payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// Appends a SETTINGS frame with these (identifier, value) pairs.
pub fn encode_settings(pairs: &[(u64, u64)], out: &mut Vec<u8>) {
    let mut payload = Vec::new();
    for &(id, value) in pairs {
        varint::encode(id, &mut payload);
        varint::encode(value, &mut payload);
    }
    encode(kind::SETTINGS, &payload, out);
}

/// Appends a frame whose payload is one varint (GOAWAY, MAX_PUSH_ID, CANCEL_PUSH).
pub fn encode_varint_frame(frame_type: u64, value: u64, out: &mut Vec<u8>) {
    encode_header(frame_type, varint::encoded_len(value) as u64, out);
    varint::encode(value, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_types_are_recognised() {
        assert!(is_reserved(0x21));
        assert!(is_reserved(0x40));
        assert!(is_reserved(0x1f * 1000 + 0x21));
        assert!(!is_reserved(0x20));
        assert!(!is_reserved(0x22));
        assert!(!is_reserved(kind::HEADERS));
    }

    #[test]
    fn frames_are_type_length_payload() {
        let mut out = Vec::new();
        encode(kind::HEADERS, b"abc", &mut out);
        assert_eq!(out, [0x01, 0x03, b'a', b'b', b'c']);
        out.clear();
        encode_varint_frame(kind::GOAWAY, 16_384, &mut out);
        assert_eq!(out, [0x07, 0x04, 0x80, 0x00, 0x40, 0x00]);
        out.clear();
        encode_settings(&[(setting::MAX_FIELD_SECTION_SIZE, 100)], &mut out);
        assert_eq!(out, [0x04, 0x03, 0x06, 0x40, 0x64]);
    }
}
