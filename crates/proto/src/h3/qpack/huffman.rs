//! The Huffman code of QPACK string literals, which is HPACK's (RFC 7541 Appendix B).
//!
//! Not decoded yet: HPACK's decoder is being written for HTTP/2 and will be shared. Until
//! then a Huffman-coded literal is refused as undecodable.

use crate::h3::error::QpackError;

/// Appends the decoding of `code` to `out`.
pub(super) fn decode(code: &[u8], out: &mut Vec<u8>) -> Result<(), QpackError> {
    let _ = (code, out);
    Err(QpackError::Huffman)
}
