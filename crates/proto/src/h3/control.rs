//! The bytes of herd's own control stream (RFC 9114 §6.2.1): its stream type, then
//! SETTINGS that give the server no QPACK dynamic table (capacity 0, no blocked streams)
//! and say how large a response field section herd accepts. herd opens no QPACK encoder
//! or decoder stream: with capacity 0 neither side has anything to say on them (RFC 9204
//! §4.2 allows leaving them out).

use super::frame::{self, setting};
use super::uni::stream_type;
use super::varint;

/// What a client's control stream carries, start to end (it is never closed).
pub fn client_control_stream(max_field_section_size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    varint::encode(stream_type::CONTROL, &mut out);
    frame::encode_settings(
        &[
            (setting::QPACK_MAX_TABLE_CAPACITY, 0),
            (setting::QPACK_BLOCKED_STREAMS, 0),
            (setting::MAX_FIELD_SECTION_SIZE, max_field_section_size),
        ],
        &mut out,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_stream_is_type_then_settings() {
        assert_eq!(
            client_control_stream(65_536),
            [0x00, 0x04, 0x09, 0x01, 0x00, 0x07, 0x00, 0x06, 0x80, 0x01, 0x00, 0x00]
        );
    }
}
