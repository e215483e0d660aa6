//! The nine bytes that start every frame (RFC 9113 §4.1): a 24-bit length, the type, the
//! flags and a 31-bit stream id whose reserved high bit is ignored.

/// The frame header's size in bytes.
pub const FRAME_HEADER_LEN: usize = 9;

/// A parsed frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    /// The payload's length (the header not included).
    pub(crate) len: u32,
    pub(crate) kind: u8,
    pub(crate) flags: u8,
    /// The stream id with the reserved bit cleared.
    pub(crate) stream: u32,
}

/// The stream-id bits of a 32-bit field; the high bit is reserved (§4.1, §6.6, §6.8, §6.9).
pub(crate) const STREAM_MASK: u32 = 0x7fff_ffff;

impl FrameHeader {
    /// The header at the front of `buf`, or `None` if fewer than nine bytes are there.
    pub(crate) fn parse(buf: &[u8]) -> Option<FrameHeader> {
        let &[l0, l1, l2, kind, flags, s0, s1, s2, s3, ..] = buf else {
            return None;
        };
        Some(FrameHeader {
            len: u32::from_be_bytes([0, l0, l1, l2]),
            kind,
            flags,
            stream: u32::from_be_bytes([s0, s1, s2, s3]) & STREAM_MASK,
        })
    }

    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// The big-endian u32 at `at`, or `None` past the end of `bytes`.
pub(crate) fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(b.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_length_type_flags_and_drops_the_reserved_bit() {
        let h = FrameHeader::parse(&[0x01, 0x02, 0x03, 0x9, 0x25, 0x80, 0, 0, 0x07, 0xaa]);
        assert_eq!(h, Some(FrameHeader { len: 0x010203, kind: 9, flags: 0x25, stream: 7 }));
        assert_eq!(FrameHeader::parse(&[0; 8]), None);
    }
}
