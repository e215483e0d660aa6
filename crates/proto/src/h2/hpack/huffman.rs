//! HPACK's Huffman code (RFC 7541 §5.2, Appendix B): a table-driven decoder and an encoder.
//!
//! The decoder is a finite-state machine that eats four bits at a time: a state is an
//! internal node of the code tree (256 of them), and `DECODE[state][nibble]` says which node
//! the four bits lead to, whether they completed a symbol (at most one: the shortest code
//! has 5 bits) and whether the bits read so far may end the string there. The table is
//! computed at compile time from the code table (huffman_codes.rs), so the only hand-kept
//! data is the RFC's own. Decoding allocates nothing: it appends to a buffer the caller
//! keeps.
//!
//! The encoder is for the request blocks herd sends once per connection; it is not on the
//! hot path.

use super::huffman_codes::CODES;
use super::HpackError;

/// Appends the decoding of `input` to `out`, but no more than `cap` bytes of it, and returns
/// the decoded length (which may be more than `cap`: the caller refuses such a string, whose
/// bytes it does not need, so a peer cannot make the buffer grow past `cap`).
///
/// Fails on the EOS symbol inside the string, and on padding that is longer than 7 bits
/// or not made of the most significant bits of EOS (all 1s) (RFC 7541 §5.2).
pub(crate) fn decode(input: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<usize, HpackError> {
    // At least 5 bits per symbol: this is enough room, so no push below reallocates.
    out.reserve((input.len() * 8 / 5 + 1).min(cap));
    let mut len = 0usize;
    let mut state = 0usize;
    let mut accept = true;
    for &b in input {
        for nibble in [b >> 4, b & 0x0f] {
            let step = DECODE[state][usize::from(nibble)];
            if step & FAIL != 0 {
                return Err(HpackError::InvalidHuffman);
            }
            if step & EMIT != 0 {
                if len < cap {
                    out.push((step >> 8) as u8);
                }
                len += 1;
            }
            state = usize::from(step as u8);
            accept = step & ACCEPT != 0;
        }
    }
    if accept {
        Ok(len)
    } else {
        Err(HpackError::InvalidHuffman)
    }
}

/// The length `input` would have once encoded.
pub(crate) fn encoded_len(input: &[u8]) -> usize {
    let bits: usize = input.iter().map(|&b| usize::from(CODES[usize::from(b)].1)).sum();
    bits.div_ceil(8)
}

/// Appends the encoding of `input`, padded with the 1 bits of EOS.
pub(crate) fn encode(input: &[u8], out: &mut Vec<u8>) {
    let mut acc = 0u64;
    let mut n_bits = 0u32;
    for &b in input {
        let (code, len) = CODES[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        n_bits += u32::from(len);
        while n_bits >= 8 {
            n_bits -= 8;
            out.push((acc >> n_bits) as u8);
        }
    }
    if n_bits > 0 {
        let pad = 8 - n_bits;
        out.push(((acc << pad) | ((1 << pad) - 1)) as u8);
    }
}

// A DECODE entry, in a u32: bits 0-7 the next state, 8-15 the symbol, then the flags.
const EMIT: u32 = 1 << 16;
const ACCEPT: u32 = 1 << 17;
const FAIL: u32 = 1 << 18;

/// Children of the tree's internal nodes, which are numbered 0 (the root) to 255: another
/// internal node, or `LEAF | symbol`.
const LEAF: u16 = 0x8000;

const TREE: [[u16; 2]; 256] = build_tree();

static DECODE: [[u32; 16]; 256] = build_decode();

const fn build_tree() -> [[u16; 2]; 256] {
    // 0 marks "no child yet": the root is nobody's child.
    let mut tree = [[0u16; 2]; 256];
    let mut n_nodes = 1u16;
    let mut sym = 0;
    while sym < CODES.len() {
        let (code, len) = CODES[sym];
        let mut node = 0usize;
        let mut bit = len;
        while bit > 1 {
            bit -= 1;
            let b = ((code >> bit) & 1) as usize;
            if tree[node][b] == 0 {
                tree[node][b] = n_nodes;
                n_nodes += 1;
            }
            node = tree[node][b] as usize;
        }
        tree[node][(code & 1) as usize] = LEAF | sym as u16;
        sym += 1;
    }
    // The code is complete (Kraft sum 1): 257 leaves need exactly 256 internal nodes.
    assert!(n_nodes == 256);
    tree
}

const fn build_decode() -> [[u32; 16]; 256] {
    // A node may end a string if the path to it is at most 7 bits, all 1s: the start of EOS.
    let mut accepting = [false; 256];
    let mut node = 0usize;
    let mut depth = 0;
    while depth <= 7 {
        accepting[node] = true;
        let next = TREE[node][1];
        if next & LEAF != 0 {
            break;
        }
        node = next as usize;
        depth += 1;
    }
    let mut table = [[0u32; 16]; 256];
    let mut state = 0;
    while state < 256 {
        let mut nibble = 0;
        while nibble < 16 {
            let mut node = state;
            let mut entry = 0u32;
            let mut bit = 4;
            while bit > 0 {
                bit -= 1;
                let child = TREE[node][(nibble >> bit) & 1];
                if child & LEAF == 0 {
                    node = child as usize;
                } else if child & !LEAF == 256 {
                    entry |= FAIL;
                    break;
                } else {
                    entry |= EMIT | (((child & 0xff) as u32) << 8);
                    node = 0;
                }
            }
            if accepting[node] {
                entry |= ACCEPT;
            }
            table[state][nibble] = entry | node as u32;
            nibble += 1;
        }
        state += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(input: &[u8]) -> Result<Vec<u8>, HpackError> {
        let mut out = vec![];
        decode(input, &mut out, usize::MAX).map(|len| {
            assert_eq!(len, out.len());
            out
        })
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn the_code_table_is_the_rfcs() {
        assert_eq!(CODES[usize::from(b' ')], (0x14, 6));
        assert_eq!(CODES[usize::from(b'a')], (0x3, 5));
        assert_eq!(CODES[usize::from(b'0')], (0x0, 5));
        assert_eq!(CODES[0], (0x1ff8, 13));
        assert_eq!(CODES[255], (0x3ffffee, 26));
        assert_eq!(CODES[256], (0x3fff_ffff, 30));
    }

    #[test]
    fn rfc_7541_c4_strings() {
        assert_eq!(decoded(&hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff")).unwrap(), b"www.example.com");
        assert_eq!(decoded(&hex("a8eb 1064 9cbf")).unwrap(), b"no-cache");
        assert_eq!(decoded(&hex("25a8 49e9 5ba9 7d7f")).unwrap(), b"custom-key");
        assert_eq!(decoded(&hex("25a8 49e9 5bb8 e8b4 bf")).unwrap(), b"custom-value");
        let mut out = vec![];
        encode(b"www.example.com", &mut out);
        assert_eq!(out, hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"));
        assert_eq!(encoded_len(b"www.example.com"), 12);
    }

    #[test]
    fn every_octet_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        for len in [0, 1, 2, 7, 256] {
            let input: Vec<u8> = all.iter().cycle().skip(len * 3).take(len).copied().collect();
            let mut enc = vec![];
            encode(&input, &mut enc);
            assert_eq!(enc.len(), encoded_len(&input));
            assert_eq!(decoded(&enc).unwrap(), input);
        }
        let mut enc = vec![];
        encode(&all, &mut enc);
        assert_eq!(decoded(&enc).unwrap(), all);
    }

    #[test]
    fn a_cap_keeps_the_buffer_small_and_counts_the_rest() {
        let mut enc = vec![];
        encode(b"www.example.com", &mut enc);
        let mut out = vec![];
        assert_eq!(decode(&enc, &mut out, 3), Ok(15));
        assert_eq!(out, b"www");
        out.clear();
        assert_eq!(decode(&enc, &mut out, 15), Ok(15));
        assert_eq!(out, b"www.example.com");
        // Errors still found past the cap.
        enc.push(0xff);
        assert_eq!(decode(&enc, &mut out, 3), Err(HpackError::InvalidHuffman));
    }

    #[test]
    fn padding_and_eos_rules() {
        // 'a' is 00011 (5 bits): padded with 111 is valid.
        assert_eq!(decoded(&[0b0001_1111]).unwrap(), b"a");
        // Padding with a 0 bit is not EOS's prefix.
        assert_eq!(decoded(&[0b0001_1110]), Err(HpackError::InvalidHuffman));
        // 'a' then a whole octet of 1s: padding longer than 7 bits.
        assert_eq!(decoded(&[0b0001_1111, 0xff]), Err(HpackError::InvalidHuffman));
        // EOS itself (30 1 bits) and then padding.
        assert_eq!(decoded(&[0xff, 0xff, 0xff, 0xff]), Err(HpackError::InvalidHuffman));
        // An octet of padding alone is 8 bits of it.
        assert_eq!(decoded(&[0xff]), Err(HpackError::InvalidHuffman));
        assert_eq!(decoded(&[]).unwrap(), b"");
    }
}
