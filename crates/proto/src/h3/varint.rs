//! QUIC variable-length integers (RFC 9000 §16), the integer of every HTTP/3 frame header,
//! SETTINGS pair and unidirectional stream type: the two top bits of the first byte say
//! whether 1, 2, 4 or 8 bytes follow, the rest is the value, big-endian.
//!
//! [`decode`] reads one from a slice that may end early ("not enough bytes yet" is `None`,
//! never an error: every byte pattern is some varint). [`Partial`] gathers one across
//! reads, for the incremental decoders. Nothing here allocates.

/// The largest value a varint can hold, 2^62 - 1.
pub const MAX: u64 = (1 << 62) - 1;

/// Decodes the varint at the start of `input`: its value and length, or `None` when
/// `input` holds only part of it.
#[inline]
pub fn decode(input: &[u8]) -> Option<(u64, usize)> {
    let first = *input.first()?;
    let len = encoded_len_from_first(first);
    let bytes = input.get(..len)?;
    let mut value = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        value = (value << 8) | u64::from(b);
    }
    Some((value, len))
}

/// The length in bytes of the varint whose first byte is `first`.
#[inline]
pub fn encoded_len_from_first(first: u8) -> usize {
    1 << (first >> 6)
}

/// The shortest encoding's length for `value` (values above [`MAX`] are clamped to it).
#[inline]
pub fn encoded_len(value: u64) -> usize {
    match value {
        0..=63 => 1,
        64..=16_383 => 2,
        16_384..=1_073_741_823 => 4,
        _ => 8,
    }
}

/// Appends the shortest encoding of `value` (clamped to [`MAX`]).
pub fn encode(value: u64, out: &mut Vec<u8>) {
    let value = value.min(MAX);
    match encoded_len(value) {
        1 => out.push(value as u8),
        2 => out.extend_from_slice(&(value as u16 | 0x4000).to_be_bytes()),
        4 => out.extend_from_slice(&(value as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(value | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// A varint being read across pieces of input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Partial {
    buf: [u8; 8],
    have: u8,
}

impl Partial {
    /// Takes bytes of `input` until the varint is whole: how many it took, and the value
    /// once it is whole (the `Partial` is then empty again).
    #[inline]
    pub fn feed(&mut self, input: &[u8]) -> (usize, Option<u64>) {
        if self.have == 0 {
            // The usual case: the whole varint is in this piece.
            if let Some((value, len)) = decode(input) {
                return (len, Some(value));
            }
        }
        let Some(&first) = self.buf.first().filter(|_| self.have > 0).or(input.first()) else {
            return (0, None);
        };
        let need = encoded_len_from_first(first);
        let have = usize::from(self.have);
        let take = (need - have).min(input.len());
        self.buf[have..have + take].copy_from_slice(&input[..take]);
        let have = have + take;
        if have < need {
            self.have = have as u8;
            return (take, None);
        }
        self.have = 0;
        (take, decode(&self.buf[..need]).map(|(v, _)| v))
    }

    /// True when part of a varint has been taken.
    #[inline]
    pub fn is_started(&self) -> bool {
        self.have > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9000 §A.1's examples, including the non-shortest two-byte 37.
    #[test]
    fn rfc_9000_examples() {
        let cases: &[(&[u8], u64)] = &[
            (&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c], 151_288_809_941_952_652),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
            (&[0x40, 0x25], 37),
        ];
        for &(bytes, value) in cases {
            assert_eq!(decode(bytes), Some((value, bytes.len())), "{bytes:02x?}");
            for cut in 0..bytes.len() {
                assert_eq!(decode(&bytes[..cut]), None);
            }
        }
        let mut out = Vec::new();
        encode(151_288_809_941_952_652, &mut out);
        assert_eq!(out, cases[0].0);
    }

    #[test]
    fn every_length_round_trips_at_its_bounds() {
        for value in [0, 63, 64, 16_383, 16_384, 1_073_741_823, 1_073_741_824, MAX] {
            let mut out = Vec::new();
            encode(value, &mut out);
            assert_eq!(out.len(), encoded_len(value));
            assert_eq!(decode(&out), Some((value, out.len())));
        }
        let mut out = Vec::new();
        encode(u64::MAX, &mut out);
        assert_eq!(decode(&out), Some((MAX, 8)), "clamped");
    }

    #[test]
    fn partial_gathers_a_varint_split_anywhere() {
        let bytes = [0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c, 0x99];
        for cut in 0..8 {
            let mut p = Partial::default();
            let (a, first) = p.feed(&bytes[..cut]);
            assert_eq!((a, first), (cut, None));
            assert_eq!(p.is_started(), cut > 0);
            let (b, second) = p.feed(&bytes[cut..]);
            assert_eq!(a + b, 8, "stops after the varint");
            assert_eq!(second, Some(151_288_809_941_952_652));
            assert!(!p.is_started());
        }
        let mut p = Partial::default();
        for (i, b) in bytes[..8].iter().enumerate() {
            let (n, v) = p.feed(std::slice::from_ref(b));
            assert_eq!(n, 1);
            assert_eq!(v.is_some(), i == 7);
        }
    }
}
