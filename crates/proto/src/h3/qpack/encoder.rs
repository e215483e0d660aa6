//! Encodes a request's field section (RFC 9204 §4.5) with the static table only, once per
//! request of a run: the engine copies the bytes for every request it sends, so nothing
//! here is on the hot path and nothing is clever. A field in the table is one byte or two;
//! a name in the table is referenced and its value written out; anything else is written
//! out whole. No Huffman coding (it would save a few bytes, once per run, at no gain in
//! load), and nothing ever refers to a dynamic table (the server's may be 0 too).

use super::integer;
use super::static_table::{find, Found};

/// Appends the field section for `fields` (names already lowercase, pseudo-headers
/// first, as HTTP/3 requires) to `out`.
pub fn encode_field_section<'f>(
    fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
    out: &mut Vec<u8>,
) {
    // Required Insert Count 0, Delta Base 0: no dynamic table.
    out.extend_from_slice(&[0x00, 0x00]);
    for (name, value) in fields {
        match find(name, value) {
            // Indexed field line, static: 1 1 index(6).
            Some(Found::Field(i)) => integer::encode(i as u64, 6, 0xc0, out),
            // Literal with a static name reference: 0 1 N=0 T=1 index(4), then the value.
            Some(Found::Name(i)) => {
                integer::encode(i as u64, 4, 0x50, out);
                integer::encode_literal(value, 7, 0x00, out);
            }
            // Literal name: 0 0 1 N=0 H=0 len(3), the name, then the value.
            None => {
                integer::encode_literal(name, 3, 0x20, out);
                integer::encode_literal(value, 7, 0x00, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h3::qpack::Decoder;

    fn encode(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_field_section(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut out);
        out
    }

    /// RFC 9204 §B.1's block, byte for byte.
    #[test]
    fn rfc_9204_b1() {
        assert_eq!(
            encode(&[(":path", "/index.html")]),
            [
                0x00, 0x00, 0x51, 0x0b, 0x2f, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x2e, 0x68, 0x74, 0x6d,
                0x6c
            ]
        );
    }

    #[test]
    fn fields_round_trip_through_the_decoder() {
        let long = "v".repeat(300);
        let fields = [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "127.0.0.1:4433"),
            (":path", "/"),
            ("x-frame-options", "sameorigin"),
            ("user-agent", "herd/0.1"),
            ("x-long-name-that-is-not-in-the-table", long.as_str()),
            ("accept", "*/*"),
        ];
        let block = encode(&fields);
        // Six entries of the table: one byte each for exact matches below index 63.
        assert_eq!(&block[..4], [0x00, 0x00, 0xd1, 0xd7]);
        let mut got = Vec::new();
        Decoder::new(1 << 16)
            .decode_lines(&block, |n, v| {
                got.push((n.to_vec(), v.to_vec()));
                Ok(())
            })
            .unwrap();
        let want: Vec<_> =
            fields.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec())).collect();
        assert_eq!(got, want);
    }
}
