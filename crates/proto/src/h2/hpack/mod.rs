//! HPACK, HTTP/2's header compression (RFC 7541), for a client.
//!
//! - [`Decoder`] decodes the peer's header blocks (the dynamic table, Huffman, limits against
//!   blocks that expand without bound), handing out each field or, for a response,
//!   [`ResponseHead`] after the checks of RFC 9113 §8.3.2.
//! - [`Encoder`] makes a request's header block: literals inserted into the dynamic table the
//!   first time, all indexes after, and a generation that says when a cached block is stale.
//! - What can be wrong is one [`HpackError`], which says whether the connection or only the
//!   stream is lost.
//!
//! Inside: `integer` and `huffman` (with its code table, `huffman_codes`) are the primitive
//! encodings of §5 (`memo` keeps the Huffman strings a peer repeats, decoded; `block_memo` the response
//! blocks it repeats, with their heads and insertions); `static_table` and `table` (the dynamic table) the two index spaces of
//! §2.3; `decoder` and `encoder` the representations of §6; `response` the response checks.

mod block_memo;
mod decoder;
mod encoder;
mod error;
// Public only for the fuzz target and the integration tests; the engine has no use for it.
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod huffman;
mod huffman_codes;
mod integer;
mod memo;
mod response;
mod static_table;
mod table;

pub use decoder::Decoder;
pub use encoder::Encoder;
pub use error::HpackError;
pub use response::ResponseHead;

/// Builders of header blocks by hand, for the tests of this module.
#[cfg(test)]
pub(crate) mod test_blocks {
    use super::integer;

    /// Appends a literal field with a literal name, not Huffman-coded: with incremental
    /// indexing if `insert`, else without indexing.
    pub(crate) fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8], insert: bool) {
        if insert {
            out.push(0x40);
        } else {
            out.push(0x00);
        }
        for s in [name, value] {
            integer::encode(s.len() as u32, 7, 0, out);
            out.extend_from_slice(s);
        }
    }

    /// Hex digits, whitespace ignored.
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }
}
