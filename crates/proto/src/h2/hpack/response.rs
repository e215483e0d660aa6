//! What the engine needs from a response's header block, and the checks RFC 9113 §8.3.2 (with
//! §8.2) asks of it: `:status` exactly once, three digits; pseudo-fields before regular ones
//! and no other pseudo-field; field names lowercase, without controls or spaces; no
//! connection-specific field; `content-length` decimal digits, equal if repeated.
//!
//! A malformed response is a stream error: the block is still decoded to its end, so the
//! dynamic table stays in step, and the first rule broken is the error.

use super::{Decoder, HpackError};

/// A response head, as the engine counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub content_length: Option<u64>,
    /// Fields in the block, `:status` included.
    pub fields: u32,
    /// The header list's size: name + value + 32 per field (RFC 9113 §6.5.2).
    pub list_size: u32,
}

impl Decoder {
    /// Decodes a response's header block and checks it as RFC 9113 §8.3.2 asks: `:status`
    /// once, three digits; pseudo-fields before regular ones; no other pseudo-field; names
    /// lowercase; content-length digits only (several equal values allowed). Malformed → a
    /// typed error.
    ///
    /// A block that repeats one seen lately, and referred to no dynamic entry, is not decoded
    /// again: its head is the one it gave and its insertions are replayed (block_memo.rs).
    pub fn decode_response(&mut self, block: &[u8]) -> Result<ResponseHead, HpackError> {
        if let Some(head) = self.replayed(block) {
            return Ok(head);
        }
        let mut check = Check::default();
        let pure = self.decode_noted(block, |name, value| check.field(name, value))?;
        let head = check.finish()?;
        if pure {
            self.remember(block, head);
        }
        Ok(head)
    }
}

#[derive(Default)]
struct Check {
    status: Option<u16>,
    content_length: Option<u64>,
    fields: u32,
    list_size: u32,
    regular_seen: bool,
    /// The first rule broken; later fields are only counted.
    error: Option<HpackError>,
}

impl Check {
    fn field(&mut self, name: &[u8], value: &[u8]) {
        self.fields += 1;
        // The decoder's list limit (a u32) bounds the sum.
        self.list_size = self.list_size.saturating_add((name.len() + value.len() + 32) as u32);
        if self.error.is_none() {
            if let Err(e) = self.check(name, value) {
                self.error = Some(e);
            }
        }
    }

    fn check(&mut self, name: &[u8], value: &[u8]) -> Result<(), HpackError> {
        if let Some(pseudo) = name.strip_prefix(b":") {
            if self.regular_seen {
                return Err(HpackError::PseudoAfterRegular);
            }
            if pseudo != b"status" {
                return Err(HpackError::UnknownPseudoField);
            }
            if self.status.is_some() {
                return Err(HpackError::DuplicateStatus);
            }
            self.status = Some(status(value).ok_or(HpackError::InvalidStatus)?);
            return Ok(());
        }
        self.regular_seen = true;
        if name.is_empty() || !name.iter().all(|&b| NAME_OCTET[usize::from(b)]) {
            return Err(HpackError::InvalidFieldName);
        }
        if memchr::memchr3(b'\0', b'\r', b'\n', value).is_some() {
            return Err(HpackError::InvalidFieldValue);
        }
        match name {
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding"
            | b"upgrade" => Err(HpackError::ConnectionSpecificField),
            b"content-length" => {
                let n = decimal(value).ok_or(HpackError::InvalidContentLength)?;
                match self.content_length.replace(n) {
                    Some(earlier) if earlier != n => Err(HpackError::InvalidContentLength),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn finish(self) -> Result<ResponseHead, HpackError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        Ok(ResponseHead {
            status: self.status.ok_or(HpackError::MissingStatus)?,
            content_length: self.content_length,
            fields: self.fields,
            list_size: self.list_size,
        })
    }
}

/// The octets a field name may hold (RFC 9113 §8.2.1): visible ASCII but uppercase.
static NAME_OCTET: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x21;
    while b <= 0x7e {
        table[b] = !(b >= 0x41 && b <= 0x5a);
        b += 1;
    }
    table
};

fn status(value: &[u8]) -> Option<u16> {
    match value {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

/// Digits only (no sign, no space, not empty), within u64.
fn decimal(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::hpack::test_blocks::literal;

    /// A block with these fields, literal without indexing (no table involved).
    fn block(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut out = vec![];
        for (n, v) in fields {
            literal(&mut out, n.as_bytes(), v.as_bytes(), false);
        }
        out
    }

    fn decoded(fields: &[(&str, &str)]) -> Result<ResponseHead, HpackError> {
        Decoder::new(4096, 16 << 10).decode_response(&block(fields))
    }

    #[test]
    fn a_plain_response() {
        let head = decoded(&[(":status", "200"), ("content-length", "13"), ("server", "x")]);
        assert_eq!(
            head,
            Ok(ResponseHead {
                status: 200,
                content_length: Some(13),
                fields: 3,
                list_size: 7 + 3 + 32 + 14 + 2 + 32 + 6 + 1 + 32,
            })
        );
        let head = decoded(&[(":status", "304")]).unwrap();
        assert_eq!((head.status, head.content_length, head.fields), (304, None, 1));
        // Repeated, equal content-length values are one length.
        let head = decoded(&[(":status", "200"), ("content-length", "5"), ("content-length", "5")]);
        assert_eq!(head.map(|h| h.content_length), Ok(Some(5)));
    }

    #[test]
    fn each_rule_has_its_error() {
        use HpackError::*;
        let cases: &[(&[(&str, &str)], HpackError)] = &[
            (&[("server", "x")], MissingStatus),
            (&[(":status", "200"), (":status", "200")], DuplicateStatus),
            (&[(":status", "20")], InvalidStatus),
            (&[(":status", "2000")], InvalidStatus),
            (&[(":status", "099")], InvalidStatus),
            (&[(":status", "2x0")], InvalidStatus),
            (&[(":status", "200"), (":path", "/")], UnknownPseudoField),
            (&[(":method", "GET"), (":status", "200")], UnknownPseudoField),
            (&[("server", "x"), (":status", "200")], PseudoAfterRegular),
            (&[(":status", "200"), ("Server", "x")], InvalidFieldName),
            (&[(":status", "200"), ("my field", "x")], InvalidFieldName),
            (&[(":status", "200"), ("", "x")], InvalidFieldName),
            (&[(":status", "200"), ("x", "a\r\nb: c")], InvalidFieldValue),
            (&[(":status", "200"), ("transfer-encoding", "chunked")], ConnectionSpecificField),
            (&[(":status", "200"), ("connection", "close")], ConnectionSpecificField),
            (&[(":status", "200"), ("content-length", "")], InvalidContentLength),
            (&[(":status", "200"), ("content-length", "+5")], InvalidContentLength),
            (&[(":status", "200"), ("content-length", "5, 5")], InvalidContentLength),
            (
                &[(":status", "200"), ("content-length", "18446744073709551616")],
                InvalidContentLength,
            ),
            (
                &[(":status", "200"), ("content-length", "5"), ("content-length", "6")],
                InvalidContentLength,
            ),
        ];
        for (fields, error) in cases {
            assert_eq!(decoded(fields), Err(*error), "{fields:?}");
            assert!(!error.is_connection_error());
        }
    }

    #[test]
    fn a_malformed_block_still_keeps_the_table_in_step() {
        let mut dec = Decoder::new(4096, 16 << 10);
        let mut bad = vec![];
        literal(&mut bad, b"x-first", b"1", true);
        bad.push(0x88); // :status 200
        literal(&mut bad, b"x-second", b"2", true);
        assert_eq!(dec.decode_response(&bad), Err(HpackError::PseudoAfterRegular));
        // Both literals were inserted, after the malformation too: the next block indexes them.
        let head = dec.decode_response(&[0x88, 0xbe, 0xbf]).unwrap();
        assert_eq!(head.fields, 3);
        let table: Vec<_> = dec.dynamic_table().collect();
        assert_eq!(table, [(&b"x-second"[..], &b"2"[..]), (&b"x-first"[..], &b"1"[..])]);
    }
}
