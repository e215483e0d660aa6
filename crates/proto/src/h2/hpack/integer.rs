//! HPACK's prefixed integers (RFC 7541 §5.1): a value that fits the low N bits of the first
//! octet sits there; a larger one fills them with 1s and continues 7 bits per octet, least
//! significant group first. Values are limited to 32 bits, so a hostile run of continuation
//! octets is an error after five of them, not a loop.

use super::HpackError;

/// Decodes the integer whose first octet is `input[0]`, with a `prefix_bits`-bit prefix (1
/// to 8); returns the value and the octets it took.
pub(crate) fn decode(input: &[u8], prefix_bits: u8) -> Result<(u32, usize), HpackError> {
    let mask = u8::MAX >> (8 - prefix_bits);
    let first = input.first().ok_or(HpackError::Truncated)? & mask;
    if first < mask {
        return Ok((u32::from(first), 1));
    }
    let mut value = u64::from(mask);
    // 32 bits need at most five 7-bit groups; a sixth octet means a longer integer (or
    // zero padding, which RFC 7541 allows but no encoder sends: refused as overlong).
    for (i, &b) in input.iter().enumerate().skip(1).take(5) {
        let shift = 7 * (i - 1);
        value += u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            let value = u32::try_from(value).map_err(|_| HpackError::IntegerOverflow)?;
            return Ok((value, i + 1));
        }
    }
    if input.len() >= 6 {
        // Five continuation octets, all saying "more": at least 36 bits.
        Err(HpackError::IntegerOverflow)
    } else {
        Err(HpackError::Truncated)
    }
}

/// Appends `value` with a `prefix_bits`-bit prefix; `flags` are the first octet's bits
/// above the prefix (the representation's pattern).
pub(crate) fn encode(value: u32, prefix_bits: u8, flags: u8, buf: &mut Vec<u8>) {
    let mask = u8::MAX >> (8 - prefix_bits);
    if value < u32::from(mask) {
        // Fits the prefix: the cast cannot truncate.
        buf.push(flags | value as u8);
        return;
    }
    buf.push(flags | mask);
    let mut rest = value - u32::from(mask);
    while rest >= 0x80 {
        buf.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    buf.push(rest as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7541_c1_examples() {
        // C.1.1: 10 with a 5-bit prefix.
        assert_eq!(decode(&[0b0000_1010], 5), Ok((10, 1)));
        // C.1.2: 1337 with a 5-bit prefix.
        assert_eq!(decode(&[0b0001_1111, 0b1001_1010, 0b0000_1010], 5), Ok((1337, 3)));
        // C.1.3: 42 starting at an octet boundary.
        assert_eq!(decode(&[0b0010_1010], 8), Ok((42, 1)));
        let mut buf = Vec::new();
        encode(1337, 5, 0b1110_0000, &mut buf);
        assert_eq!(buf, [0b1111_1111, 0b1001_1010, 0b0000_1010]);
    }

    #[test]
    fn the_prefix_bits_above_are_ignored() {
        assert_eq!(decode(&[0b1110_1010], 5), Ok((10, 1)));
    }

    #[test]
    fn round_trips_at_every_prefix_and_edge() {
        let values = [0, 1, 14, 15, 16, 30, 31, 126, 127, 128, 254, 255, 256, 1 << 14, u32::MAX];
        for prefix in 1..=8u8 {
            for &v in &values {
                let mut buf = vec![];
                encode(v, prefix, 0, &mut buf);
                assert_eq!(decode(&buf, prefix), Ok((v, buf.len())), "{v} with {prefix} bits");
            }
        }
    }

    #[test]
    fn limits() {
        // u32::MAX + 1 with a 7-bit prefix: in range for u64, out of range for u32.
        assert_eq!(
            decode(&[0x7f, 0x81, 0xff, 0xff, 0xff, 0x0f], 7),
            Err(HpackError::IntegerOverflow)
        );
        // Six continuation octets.
        assert_eq!(
            decode(&[0x7f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], 7),
            Err(HpackError::IntegerOverflow)
        );
        assert_eq!(decode(&[0x7f, 0x80, 0x80], 7), Err(HpackError::Truncated));
        assert_eq!(decode(&[], 7), Err(HpackError::Truncated));
    }
}
