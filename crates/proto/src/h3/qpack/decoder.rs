//! Decodes a response's field section (RFC 9204 §4.5) with the static table only: herd
//! advertises a dynamic table of capacity 0, so a reference to it, or a Required Insert
//! Count other than 0, is [`QpackError::DynamicReference`].
//!
//! Each field goes to the caller's callback as it is decoded; `:status` and
//! `content-length` are also read on the way ([`FieldSection`]) and checked by HTTP's
//! rules. Static-table fields are handed out from the table, literals from the block
//! itself, and only Huffman-coded literals are decoded (HPACK's code, h2's decoder), into two
//! scratch buffers kept between sections, which never grow past the section size limit: no
//! allocation per response once they have grown.

use super::huffman;
use super::integer::{self, Literal};
use super::static_table::STATIC_TABLE;
use crate::h3::error::{H3Error, MessageError, QpackError};

/// What herd reads from a response's field section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FieldSection {
    /// `:status`; None when the section had none (trailers).
    pub status: Option<u16>,
    pub content_length: Option<u64>,
}

/// A static-table QPACK decoder; one per connection (or per stream), reused.
#[derive(Debug)]
pub struct Decoder {
    /// The largest decoded section accepted (RFC 9114 §4.2.2's size), which herd
    /// advertises as SETTINGS_MAX_FIELD_SECTION_SIZE.
    max_size: u64,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    pub fn new(max_field_section_size: u64) -> Decoder {
        Decoder { max_size: max_field_section_size, name: Vec::new(), value: Vec::new() }
    }

    /// Decodes `block`, a whole HEADERS payload of a response, calling `on_field(name,
    /// value)` for every field in order (pseudo-headers included) once HTTP's rules for it
    /// have been checked.
    pub fn decode<F>(&mut self, block: &[u8], mut on_field: F) -> Result<FieldSection, H3Error>
    where
        F: FnMut(&[u8], &[u8]),
    {
        let mut section = FieldSection::default();
        let mut regular_seen = false;
        self.decode_lines(block, |name, value| {
            read_field(name, value, &mut section, &mut regular_seen)?;
            on_field(name, value);
            Ok(())
        })?;
        Ok(section)
    }

    /// Decodes `block`'s field lines, whatever they mean, into `(name, value)` calls; the
    /// first error `on_line` returns ends the decoding. Checks only what is QPACK's (and the
    /// size and lowercase names every field section must have).
    pub fn decode_lines<F>(&mut self, block: &[u8], mut on_line: F) -> Result<(), H3Error>
    where
        F: FnMut(&[u8], &[u8]) -> Result<(), H3Error>,
    {
        // The prefix: Required Insert Count, then the sign and Delta Base. With no dynamic
        // table the count must be 0, and the base is then meaningless.
        let (insert_count, n) = integer::decode(block, 8)?;
        if insert_count != 0 {
            return Err(QpackError::DynamicReference.into());
        }
        let (_delta_base, m) = integer::decode(&block[n..], 7)?;
        let mut rest = &block[n + m..];
        let mut size = 0u64;
        while let Some(&first) = rest.first() {
            let (name, value, used): (&[u8], &[u8], usize) = if first & 0x80 != 0 {
                // Indexed field line: 1 T index(6).
                if first & 0x40 == 0 {
                    return Err(QpackError::DynamicReference.into());
                }
                let (index, n) = integer::decode(rest, 6)?;
                let (name, value) = static_entry(index)?;
                (name, value, n)
            } else if first & 0x40 != 0 {
                // Literal field line with name reference: 0 1 N T index(4), value.
                if first & 0x10 == 0 {
                    return Err(QpackError::DynamicReference.into());
                }
                let (index, n) = integer::decode(rest, 4)?;
                let (name, _) = static_entry(index)?;
                let (literal, m) = integer::decode_literal(&rest[n..], 7)?;
                let value = text(literal, &mut self.value, self.max_size)?;
                (name, value, n + m)
            } else if first & 0x20 != 0 {
                // Literal field line with literal name: 0 0 1 N H len(3), name, value.
                let (literal, n) = integer::decode_literal(rest, 3)?;
                let name = text(literal, &mut self.name, self.max_size)?;
                // The static table's names are lowercase; a literal one must be too (RFC
                // 9114 §4.2), and be a name.
                if name.is_empty() || name.iter().any(u8::is_ascii_uppercase) {
                    return Err(MessageError::FieldName.into());
                }
                let (literal, m) = integer::decode_literal(&rest[n..], 7)?;
                let value = text(literal, &mut self.value, self.max_size)?;
                (name, value, n + m)
            } else {
                // Post-base indexed (0001) and post-base name reference (0000): both refer to
                // the dynamic table.
                return Err(QpackError::DynamicReference.into());
            };
            rest = &rest[used..];
            size = size.saturating_add((name.len() + value.len() + 32) as u64);
            if size > self.max_size {
                return Err(H3Error::FieldSectionTooLarge { limit: self.max_size });
            }
            on_line(name, value)?;
        }
        Ok(())
    }
}

fn static_entry(index: u64) -> Result<(&'static [u8], &'static [u8]), QpackError> {
    usize::try_from(index)
        .ok()
        .and_then(|i| STATIC_TABLE.get(i))
        .copied()
        .ok_or(QpackError::StaticIndex(index))
}

/// A literal's text: its own bytes, or its Huffman decoding in `scratch`, which grows to
/// no more than `cap` bytes.
fn text<'a>(
    literal: Literal<'a>,
    scratch: &'a mut Vec<u8>,
    cap: u64,
) -> Result<&'a [u8], QpackError> {
    if !literal.huffman {
        return Ok(literal.bytes);
    }
    scratch.clear();
    huffman::decode(literal.bytes, scratch, usize::try_from(cap).unwrap_or(usize::MAX))?;
    Ok(scratch)
}

/// Checks one field by HTTP's rules (RFC 9114 §4.3) and reads the ones herd uses.
fn read_field(
    name: &[u8],
    value: &[u8],
    section: &mut FieldSection,
    regular_seen: &mut bool,
) -> Result<(), MessageError> {
    if name.first() == Some(&b':') {
        if name != b":status" || *regular_seen || section.status.is_some() {
            return Err(MessageError::PseudoHeader);
        }
        section.status = Some(parse_status(value)?);
        return Ok(());
    }
    *regular_seen = true;
    if name == b"content-length" {
        let length = parse_length(value)?;
        if section.content_length.is_some_and(|l| l != length) {
            return Err(MessageError::InvalidContentLength);
        }
        section.content_length = Some(length);
    }
    Ok(())
}

fn parse_status(value: &[u8]) -> Result<u16, MessageError> {
    match *value {
        [a @ b'1'..=b'9', b, c] if b.is_ascii_digit() && c.is_ascii_digit() => {
            Ok(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => Err(MessageError::InvalidStatus),
    }
}

fn parse_length(value: &[u8]) -> Result<u64, MessageError> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return Err(MessageError::InvalidContentLength);
    }
    Ok(value.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Lines = Vec<(Vec<u8>, Vec<u8>)>;

    fn lines(block: &[u8]) -> Result<Lines, H3Error> {
        let mut out = Vec::new();
        Decoder::new(1 << 16).decode_lines(block, |n, v| {
            out.push((n.to_vec(), v.to_vec()));
            Ok(())
        })?;
        Ok(out)
    }

    fn line(name: &str, value: &str) -> (Vec<u8>, Vec<u8>) {
        (name.as_bytes().to_vec(), value.as_bytes().to_vec())
    }

    /// RFC 9204 §B.1: a literal with a static name reference.
    #[test]
    fn rfc_9204_b1() {
        let block = [
            0x00, 0x00, 0x51, 0x0b, 0x2f, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x2e, 0x68, 0x74, 0x6d,
            0x6c,
        ];
        assert_eq!(lines(&block), Ok(vec![line(":path", "/index.html")]));
        // In a response, :path is not allowed.
        let err = Decoder::new(1 << 16).decode(&block, |_, _| {});
        assert_eq!(err, Err(MessageError::PseudoHeader.into()));
    }

    #[test]
    fn every_static_representation_decodes() {
        let block = [
            &[0x00, 0x00][..],
            // Indexed, static: :status 200 (25), and the last entry (98) on two bytes.
            &[0xd9, 0xff, 0x23],
            // Name reference, static, with and without the N bit: content-length (4).
            &[0x54, 0x02, b'4', b'2', 0x74, 0x00],
            // Literal name, with and without the N bit.
            &[0x23, b'x', b'-', b'a', 0x01, b'b', 0x31, b'y', 0x00],
        ]
        .concat();
        assert_eq!(
            lines(&block),
            Ok(vec![
                line(":status", "200"),
                line("x-frame-options", "sameorigin"),
                line("content-length", "42"),
                line("content-length", ""),
                line("x-a", "b"),
                line("y", ""),
            ])
        );
        let section = Decoder::new(1 << 16).decode(&block[..9], |_, _| {});
        assert_eq!(section, Ok(FieldSection { status: Some(200), content_length: Some(42) }));
    }

    /// Huffman-coded value and name (the corpus's ok-huffman-server.h3), as ngtcp2 and
    /// caddy send them; and a Huffman string past the size limit.
    #[test]
    fn huffman_literals_decode() {
        let block = [
            0x00, 0x00, 0xd9, 0x5f, 0x4d, 0x8a, 0xaa, 0x64, 0x92, 0xb1, 0x28, 0x82, 0xd9, 0xdc,
            0xb6, 0x7f, 0x2d, 0xf2, 0xb4, 0xf6, 0xcb, 0x2f, 0x83, 0xf4, 0x54, 0x7f,
        ];
        assert_eq!(
            lines(&block),
            Ok(vec![
                line(":status", "200"),
                line("server", "ngtcp2 server"),
                line("x-huff", "yes")
            ])
        );
        // The server field alone, under a 10-byte limit: its 13 bytes are never written
        // past the 10th.
        let server = [&[0x00, 0x00][..], &block[3..16]].concat();
        let mut small = Decoder::new(10);
        let err = small.decode_lines(&server, |_, _| Ok(()));
        assert_eq!(err, Err(H3Error::Qpack(QpackError::TooLong)));
        assert!(small.value.len() <= 10, "the scratch buffer stayed within the limit");
        let err = Decoder::new(50).decode_lines(&block, |_, _| Ok(()));
        assert_eq!(err, Err(H3Error::FieldSectionTooLarge { limit: 50 }));
        let mut bad = block;
        bad[15] = 0x00; // the last byte of the value: padding of 0 bits is not EOS
        assert_eq!(lines(&bad), Err(H3Error::Qpack(QpackError::Huffman)));
    }

    #[test]
    fn references_to_the_dynamic_table_are_refused() {
        let dynamic = Err(H3Error::Qpack(QpackError::DynamicReference));
        for block in [
            &[0x01, 0x00][..],         // Required Insert Count 1
            &[0x00, 0x00, 0x80],       // indexed, dynamic
            &[0x00, 0x00, 0x40, 0x00], // name reference, dynamic
            &[0x00, 0x00, 0x10],       // post-base indexed
            &[0x00, 0x00, 0x00, 0x00], // post-base name reference
        ] {
            assert_eq!(lines(block), dynamic, "{block:02x?}");
        }
        // A sign bit and Delta Base with a count of 0 mean nothing, and are not refused.
        assert_eq!(lines(&[0x00, 0x85, 0xd9]), Ok(vec![line(":status", "200")]));
    }

    #[test]
    fn broken_blocks_are_typed_errors() {
        let qpack = |e| Err(H3Error::Qpack(e));
        assert_eq!(lines(&[]), qpack(QpackError::Truncated));
        assert_eq!(lines(&[0x00]), qpack(QpackError::Truncated));
        assert_eq!(lines(&[0x00, 0x00, 0xff, 0x24]), qpack(QpackError::StaticIndex(99)));
        assert_eq!(lines(&[0x00, 0x00, 0x5f, 0x7f, 0x00]), qpack(QpackError::StaticIndex(142)));
        assert_eq!(lines(&[0x00, 0x00, 0x54, 0x05, b'1']), qpack(QpackError::Truncated));
        assert_eq!(lines(&[0x00, 0x00, 0x27, 0x80]), qpack(QpackError::Truncated));
        let empty_name = Err(H3Error::Message(MessageError::FieldName));
        assert_eq!(lines(&[0x00, 0x00, 0x20, 0x00]), empty_name);
        let mut overflow = vec![0x00, 0x00, 0xff];
        overflow.extend([0xff; 9]);
        overflow.push(0x7f);
        assert_eq!(lines(&overflow), qpack(QpackError::IntegerOverflow));
    }

    #[test]
    fn the_decoded_size_is_bounded() {
        // :status 200 is 7 + 3 + 32 = 42 bytes.
        let block = [0x00, 0x00, 0xd9, 0xd9];
        let mut d = Decoder::new(84);
        assert_eq!(d.decode_lines(&block, |_, _| Ok(())), Ok(()));
        let mut d = Decoder::new(83);
        let err = d.decode_lines(&block, |_, _| Ok(())).unwrap_err();
        assert_eq!(err, H3Error::FieldSectionTooLarge { limit: 83 });
    }

    #[test]
    fn the_callback_stops_the_decoding() {
        let block = [0x00, 0x00, 0xd9, 0xd9];
        let mut calls = 0;
        let err = Decoder::new(1 << 16).decode_lines(&block, |_, _| {
            calls += 1;
            Err(H3Error::Truncated)
        });
        assert_eq!((err, calls), (Err(H3Error::Truncated), 1));
    }
}
