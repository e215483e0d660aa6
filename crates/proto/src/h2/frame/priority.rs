//! The stream a HEADERS or PRIORITY frame says its stream depends on (RFC 9113 §5.3.1, §6.2,
//! §6.3), read from the frame's own bytes. Priority signals are deprecated and [`Frame`]
//! drops them, but one rule about them still stands: a stream cannot depend on itself, a
//! stream error of type PROTOCOL_ERROR. A HEADERS frame that breaks it still carries a field
//! block the receiver must decode (§4.3: the HPACK state belongs to the connection), so the
//! decoder does not turn it into an error; a server that enforces the rule asks here, with
//! the bytes the decoder took for the frame.
//!
//! [`Frame`]: super::Frame

use super::header::{be_u32, FrameHeader, FRAME_HEADER_LEN, STREAM_MASK};
use super::{flag, kind};

/// The stream dependency of the whole HEADERS or PRIORITY frame at the front of `frame`
/// (header included), with the exclusive bit cleared; `None` for a HEADERS frame without
/// the PRIORITY flag, any other type, or bytes too short for the field.
pub fn dependency(frame: &[u8]) -> Option<u32> {
    let h = FrameHeader::parse(frame)?;
    let at = match h.kind {
        kind::PRIORITY => FRAME_HEADER_LEN,
        kind::HEADERS if h.has(flag::PRIORITY) => {
            FRAME_HEADER_LEN + usize::from(h.has(flag::PADDED))
        }
        _ => return None,
    };
    if h.len < (at - FRAME_HEADER_LEN) as u32 + 4 {
        return None;
    }
    Some(be_u32(frame, at)? & STREAM_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_priority_frame_s_dependency_without_the_exclusive_bit() {
        // PRIORITY on stream 3: exclusive, depends on 1, weight 16.
        let f = [0, 0, 5, 0x2, 0, 0, 0, 0, 3, 0x80, 0, 0, 1, 15];
        assert_eq!(dependency(&f), Some(1));
        assert_eq!(dependency(&f[..12]), None, "cut short");
    }

    #[test]
    fn a_headers_frame_s_dependency_after_its_pad_length() {
        // HEADERS on stream 1, END_HEADERS | PRIORITY, depends on 1, weight 256, block 0x82.
        let plain = [0, 0, 6, 0x1, 0x24, 0, 0, 0, 1, 0, 0, 0, 1, 255, 0x82];
        assert_eq!(dependency(&plain), Some(1));
        // The same, PADDED with 2 bytes: the pad length comes first.
        let padded = [0, 0, 9, 0x1, 0x2c, 0, 0, 0, 1, 2, 0, 0, 0, 7, 255, 0x82, 0, 0];
        assert_eq!(dependency(&padded), Some(7));
        // Without the PRIORITY flag there is no dependency, whatever the bytes.
        let none = [0, 0, 5, 0x1, 0x04, 0, 0, 0, 1, 0, 0, 0, 1, 255];
        assert_eq!(dependency(&none), None);
        // A frame of another type.
        assert_eq!(dependency(&[0, 0, 4, 0x3, 0, 0, 0, 0, 1, 0, 0, 0, 1]), None);
        // A PRIORITY flag with a payload too short for the field.
        assert_eq!(dependency(&[0, 0, 3, 0x1, 0x20, 0, 0, 0, 1, 0, 0, 0]), None);
    }
}
