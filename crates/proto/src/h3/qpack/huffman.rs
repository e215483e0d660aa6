//! The Huffman code of QPACK string literals, which is HPACK's (RFC 9204 §4.1.2 refers to
//! RFC 7541 Appendix B): HPACK's table-driven decoder, shared with the h2 codec.

use crate::h2::hpack::huffman;
use crate::h3::error::QpackError;

/// Appends the decoding of `code` to `out`, which grows to no more than `cap` bytes; a
/// longer string is [`QpackError::TooLong`] (its bytes are not needed: the section it is
/// in is over the size limit).
pub(super) fn decode(code: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), QpackError> {
    let len = huffman::decode(code, out, cap).map_err(|_| QpackError::Huffman)?;
    if len > cap {
        return Err(QpackError::TooLong);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7541 §C.4.1's `www.example.com`, and the EOS padding rules.
    #[test]
    fn decodes_hpack_huffman() {
        let code = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let mut out = Vec::new();
        assert_eq!(decode(&code, &mut out, 100), Ok(()));
        assert_eq!(out, b"www.example.com");
        out.clear();
        assert_eq!(decode(&code, &mut out, 10), Err(QpackError::TooLong));
        assert!(out.len() <= 10);
        // Padding of 0 bits is not EOS's prefix.
        assert_eq!(decode(&[0xf0], &mut Vec::new(), 100), Err(QpackError::Huffman));
        // Eight bits of padding are too many.
        assert_eq!(decode(&[0xff], &mut Vec::new(), 100), Err(QpackError::Huffman));
    }
}
