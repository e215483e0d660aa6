//! QPACK's prefixed integers and string literals (RFC 9204 §4.1, which takes them from
//! HPACK, RFC 7541 §5): an integer fills the low bits of a byte it shares with flags, then
//! continues 7 bits per byte. Used on whole field sections, so "truncated" is an error.

use crate::h3::error::QpackError;

/// Decodes the integer whose first byte is `input[0]`, using its low `prefix_bits` bits:
/// the value and the bytes it took. Values past 2^62 are refused (as QUIC's are).
#[inline]
pub(super) fn decode(input: &[u8], prefix_bits: u8) -> Result<(u64, usize), QpackError> {
    let first = *input.first().ok_or(QpackError::Truncated)?;
    let mask = u8::MAX >> (8 - prefix_bits);
    let mut value = u64::from(first & mask);
    if value < u64::from(mask) {
        return Ok((value, 1));
    }
    let mut shift = 0u32;
    for (i, &b) in input.iter().enumerate().skip(1) {
        let add = u64::from(b & 0x7f).checked_shl(shift).ok_or(QpackError::IntegerOverflow)?;
        if shift > 56 || add >> shift != u64::from(b & 0x7f) {
            return Err(QpackError::IntegerOverflow);
        }
        value = value.checked_add(add).ok_or(QpackError::IntegerOverflow)?;
        if value > crate::h3::varint::MAX {
            return Err(QpackError::IntegerOverflow);
        }
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
        shift += 7;
    }
    Err(QpackError::Truncated)
}

/// Appends `value` with `flags` in the first byte's high bits (those above `prefix_bits`).
pub(super) fn encode(value: u64, prefix_bits: u8, flags: u8, out: &mut Vec<u8>) {
    let mask = u8::MAX >> (8 - prefix_bits);
    if value < u64::from(mask) {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask);
    let mut rest = value - u64::from(mask);
    while rest >= 0x80 {
        out.push(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// A string literal's bytes as they are on the wire, before any Huffman decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Literal<'a> {
    pub(super) huffman: bool,
    pub(super) bytes: &'a [u8],
}

/// Decodes a string literal whose first byte holds the H flag at bit `prefix_bits` and
/// the length in the bits below: the literal and the bytes it took.
#[inline]
pub(super) fn decode_literal(
    input: &[u8],
    prefix_bits: u8,
) -> Result<(Literal<'_>, usize), QpackError> {
    let first = *input.first().ok_or(QpackError::Truncated)?;
    let huffman = first & (1 << prefix_bits) != 0;
    let (len, n) = decode(input, prefix_bits)?;
    let len = usize::try_from(len).map_err(|_| QpackError::Truncated)?;
    let bytes = input.get(n..).and_then(|rest| rest.get(..len)).ok_or(QpackError::Truncated)?;
    Ok((Literal { huffman, bytes }, n + len))
}

/// Appends `bytes` as a literal without Huffman coding, its length in `prefix_bits` bits
/// under `flags`.
pub(super) fn encode_literal(bytes: &[u8], prefix_bits: u8, flags: u8, out: &mut Vec<u8>) {
    encode(bytes.len() as u64, prefix_bits, flags, out);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7541 §C.1: 10 and 1337 with a 5-bit prefix, 42 with an 8-bit one.
    #[test]
    fn rfc_7541_examples() {
        let cases: &[(u64, u8, &[u8])] =
            &[(10, 5, &[0x0a]), (1337, 5, &[0x1f, 0x9a, 0x0a]), (42, 8, &[0x2a])];
        for &(value, prefix, bytes) in cases {
            let mut out = Vec::new();
            encode(value, prefix, 0, &mut out);
            assert_eq!(out, bytes);
            assert_eq!(decode(bytes, prefix), Ok((value, bytes.len())));
            for cut in 0..bytes.len() {
                assert_eq!(decode(&bytes[..cut], prefix), Err(QpackError::Truncated));
            }
        }
    }

    #[test]
    fn flags_above_the_prefix_are_kept_and_ignored() {
        let mut out = Vec::new();
        encode(5, 6, 0xc0, &mut out);
        assert_eq!(out, [0xc5]);
        assert_eq!(decode(&out, 6), Ok((5, 1)));
        for value in [0, 62, 63, 64, 127, 128, 16_383, 1 << 40, crate::h3::varint::MAX] {
            for prefix in 1..=8 {
                out.clear();
                encode(value, prefix, 0, &mut out);
                assert_eq!(decode(&out, prefix), Ok((value, out.len())), "{value} /{prefix}");
            }
        }
    }

    #[test]
    fn overlong_integers_are_refused() {
        let mut long = vec![0xff];
        long.extend([0xff; 10]);
        long.push(0x01);
        assert_eq!(decode(&long, 8), Err(QpackError::IntegerOverflow));
        let mut out = Vec::new();
        encode(crate::h3::varint::MAX + 1, 8, 0, &mut out);
        assert_eq!(decode(&out, 8), Err(QpackError::IntegerOverflow));
    }

    #[test]
    fn literals_carry_their_huffman_flag() {
        assert_eq!(
            decode_literal(&[0x83, b'a', b'b', b'c', b'z'], 7),
            Ok((Literal { huffman: true, bytes: b"abc" }, 4))
        );
        assert_eq!(decode_literal(&[0x03, b'a'], 7), Err(QpackError::Truncated));
        let mut out = Vec::new();
        encode_literal(b"xy", 3, 0x20, &mut out);
        assert_eq!(out, [0x22, b'x', b'y']);
        assert_eq!(decode_literal(&out, 3), Ok((Literal { huffman: false, bytes: b"xy" }, 3)));
    }
}
