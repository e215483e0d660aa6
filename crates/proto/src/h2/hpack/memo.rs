//! A memo of the Huffman strings a connection's peer sent lately, and what they decode to.
//!
//! Servers that never index response fields (nginx codes every field of every response as a
//! Huffman literal without indexing) send the same few strings again and again: `date` (new
//! once a second), `content-type`, `last-modified`, `etag`, `server`. Decoding them was a
//! third of herd's user time per HTTP/2 request against nginx; finding them here costs a hash
//! and a comparison of about twenty bytes. Decoding is a pure function of the bytes, so a hit
//! gives exactly what decoding would; an invalid string is never kept, so it fails each time.
//!
//! Two-way set-associative: a string has a set of two slots, and the two strings of that set
//! used last keep them (a direct-mapped memo of 16 slots lost two of nginx's six strings to a
//! shared slot, decoding each of them on every response). Slots keep their buffers, so a
//! connection whose strings have been seen once allocates nothing more.

use super::huffman;
use super::HpackError;

/// Sets of two slots per decoder (a power of two: the hash's top bits pick one).
const SETS: usize = 16;
/// Longer strings are decoded every time: headers that repeat are short.
const MAX_ENCODED: usize = 64;

#[derive(Debug, Clone, Default)]
pub(crate) struct HuffmanMemo {
    slots: Vec<Slot>,
}

#[derive(Debug, Clone, Default)]
struct Slot {
    encoded: Vec<u8>,
    decoded: Vec<u8>,
}

impl HuffmanMemo {
    /// As [`huffman::decode`] into an emptied `out`: `encoded`'s decoding, no more than `cap`
    /// bytes of it, and its full length.
    pub(crate) fn decode(
        &mut self,
        encoded: &[u8],
        out: &mut Vec<u8>,
        cap: usize,
    ) -> Result<usize, HpackError> {
        out.clear();
        if encoded.len() > MAX_ENCODED {
            return huffman::decode(encoded, out, cap);
        }
        if self.slots.is_empty() {
            self.slots.resize_with(2 * SETS, Slot::default);
        }
        let first = 2 * set_of(encoded);
        let Some([recent, older]) = self.slots.get_mut(first..first + 2) else {
            return huffman::decode(encoded, out, cap);
        };
        if older.encoded == encoded {
            // The older way becomes the recent one.
            std::mem::swap(recent, older);
        }
        if recent.encoded == encoded && recent.decoded.len() <= cap {
            out.extend_from_slice(&recent.decoded);
            return Ok(recent.decoded.len());
        }
        let len = huffman::decode(encoded, out, cap)?;
        // A new string takes the older way's slot, which becomes the recent one.
        std::mem::swap(recent, older);
        let slot = recent;
        if len <= cap {
            slot.encoded.clear();
            slot.encoded.extend_from_slice(encoded);
            slot.decoded.clear();
            slot.decoded.extend_from_slice(out);
        }
        Ok(len)
    }
}

/// The set of `bytes`: a multiplicative hash of its length and 8-byte words (strings that
/// differ only in their last characters, as two dates do, land apart).
fn set_of(bytes: &[u8]) -> usize {
    let mut h = bytes.len() as u64;
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    (h >> (64 - SETS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        huffman::encode(s.as_bytes(), &mut out);
        out
    }

    fn plain(bytes: &[u8]) -> Result<Vec<u8>, HpackError> {
        let mut out = Vec::new();
        huffman::decode(bytes, &mut out, usize::MAX)?;
        Ok(out)
    }

    #[test]
    fn a_hit_gives_what_decoding_gives() {
        let mut memo = HuffmanMemo::default();
        let mut out = Vec::new();
        for s in ["Fri, 27 Nov 2026 12:00:00 GMT", "nginx/1.22.1", "text/html", "\"6925c1b0-18fd\""]
        {
            let e = encoded(s);
            for _ in 0..3 {
                assert_eq!(memo.decode(&e, &mut out, 4096).unwrap(), s.len());
                assert_eq!(out, s.as_bytes());
            }
        }
    }

    #[test]
    fn strings_that_share_a_slot_each_decode_right() {
        // Every second of a day: far more strings than slots, so slots are taken over.
        let mut memo = HuffmanMemo::default();
        let mut out = vec![b'x'; 7];
        for round in 0..2 {
            for t in 0..3_600 {
                let s = format!(
                    "Fri, 27 Nov 2026 {:02}:{:02}:{:02} GMT",
                    t / 3600,
                    t / 60 % 60,
                    t % 60
                );
                let e = encoded(&s);
                assert_eq!(memo.decode(&e, &mut out, 4096).unwrap(), s.len(), "round {round}");
                assert_eq!(out, s.as_bytes(), "round {round}");
            }
        }
    }

    #[test]
    fn every_octet_and_every_short_string_agrees_with_the_decoder() {
        let mut memo = HuffmanMemo::default();
        let mut out = Vec::new();
        for b in 0..=255u8 {
            for len in [1, 2, 5, 8, 9, 40, 64, 65, 100] {
                let e = encoded(&String::from_utf8_lossy(&vec![b; len]));
                let want = plain(&e).unwrap();
                for _ in 0..2 {
                    assert_eq!(memo.decode(&e, &mut out, 4096).unwrap(), want.len());
                    assert_eq!(out, want);
                }
            }
        }
    }

    #[test]
    fn an_invalid_string_fails_every_time_and_is_not_kept() {
        let mut memo = HuffmanMemo::default();
        let mut out = Vec::new();
        // Padding of zeros, not the 1s of EOS (RFC 7541 §5.2).
        let bad = [0x00];
        for _ in 0..3 {
            assert!(matches!(memo.decode(&bad, &mut out, 4096), Err(HpackError::InvalidHuffman)));
        }
        // The slot it would have had still serves a valid string that lands there.
        let good = encoded("ok");
        assert_eq!(memo.decode(&good, &mut out, 4096).unwrap(), 2);
        assert_eq!(out, b"ok");
    }

    #[test]
    fn the_cap_holds_on_a_hit_as_on_a_miss() {
        let mut memo = HuffmanMemo::default();
        let mut out = Vec::new();
        let e = encoded("a value of thirty-one characters");
        assert_eq!(memo.decode(&e, &mut out, 4096).unwrap(), 32);
        // Past a smaller cap: the length is said, the bytes are not all kept.
        assert_eq!(memo.decode(&e, &mut out, 10).unwrap(), 32);
        assert!(out.len() <= 10);
    }
}
