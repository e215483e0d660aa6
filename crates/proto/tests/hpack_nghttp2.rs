//! HPACK against nghttp2 (the engine h2load uses), both ways, on random header lists over
//! several blocks of one connection: nghttp2's deflater encodes and our decoder must yield
//! the same fields and the same dynamic table; our encoder encodes and nghttp2's inflater
//! must yield the same fields. Size changes between blocks are part of the random script.
//! And on arbitrary bytes the two decoders must agree on what is a valid block.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use herd_proto::h2::hpack::{Decoder, Encoder, HpackError};
use proptest::prelude::*;

use support::nghttp2::{Deflater, Inflater};

type Owned = Vec<(Vec<u8>, Vec<u8>)>;
/// Name, value, never indexed.
type Fields = Vec<(Vec<u8>, Vec<u8>, bool)>;

/// Names: static-table ones (with and without static values), a few custom ones that
/// repeat (so the dynamic table is used), and random ones.
fn name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::sample::select(vec![
            ":method", ":path", ":authority", ":scheme", ":status", "content-length",
            "content-type", "user-agent", "accept-encoding", "cache-control", "date", "server",
            "x-custom", "x-trace-id", "set-cookie",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::collection::vec(b'a'..=b'z', 1..20),
    ]
}

/// Values: static-table ones, a few that repeat, text, arbitrary octets (for Huffman's long
/// codes), and now and then a long one (for eviction).
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => prop::sample::select(vec!["GET", "/", "200", "404", "gzip, deflate", "http", "abc", ""])
            .prop_map(|s| s.as_bytes().to_vec()),
        2 => "[ -~]{0,40}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..40),
        1 => prop::collection::vec(b'v'..=b'z', 200..1500),
    ]
}

fn fields() -> impl Strategy<Value = Fields> {
    prop::collection::vec((name(), value(), prop::bool::weighted(0.2)), 0..12)
}

/// Blocks of one connection, each with a table size the peer may change to just before it.
fn script() -> impl Strategy<Value = Vec<(Option<u32>, Fields)>> {
    let size = prop::option::weighted(0.15, prop::sample::select(vec![0u32, 64, 256, 4096, 8192]));
    prop::collection::vec((size, fields()), 1..8)
}

fn plain(fields: &[(Vec<u8>, Vec<u8>, bool)]) -> Owned {
    fields.iter().map(|(n, v, _)| (n.clone(), v.clone())).collect()
}

fn decoded(d: &mut Decoder, block: &[u8]) -> Result<Owned, HpackError> {
    let mut fields = vec![];
    d.decode(block, |n, v| fields.push((n.to_vec(), v.to_vec()))).map(|()| fields)
}

fn our_table(d: &Decoder) -> Owned {
    d.dynamic_table().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn nghttp2_encodes_and_we_decode_the_same(
        deflate_max in prop::sample::select(vec![0usize, 100, 256, 4096, 16384]),
        script in script(),
    ) {
        let mut deflater = Deflater::new(deflate_max);
        let mut ours = Decoder::new(8192, 1 << 20);
        let mut block = vec![];
        for (size, fields) in &script {
            if let Some(size) = size {
                deflater.change_table_size(*size as usize);
            }
            let nv: Vec<_> = fields.iter().map(|(n, v, x)| (&n[..], &v[..], *x)).collect();
            block.clear();
            deflater.deflate(&nv, &mut block);
            prop_assert_eq!(decoded(&mut ours, &block).unwrap(), plain(fields));
            prop_assert_eq!(our_table(&ours), deflater.table());
            prop_assert_eq!(ours.table_size().0, deflater.table_size());
        }
    }

    #[test]
    fn we_encode_and_nghttp2_decodes_the_same(
        peer_size in prop::sample::select(vec![0u32, 100, 256, 4096, 65536]),
        script in script(),
    ) {
        let mut inflater = Inflater::new();
        inflater.change_table_size(peer_size as usize);
        let mut ours = Encoder::new(peer_size);
        // Our decoder as well, announcing a size large enough for every update.
        let mut our_decoder = Decoder::new(65536, 1 << 20);
        let mut block = vec![];
        for (size, fields) in &script {
            if let Some(size) = size {
                inflater.change_table_size(*size as usize);
                ours.set_peer_max_table_size(*size);
            }
            let list: Vec<(&[u8], &[u8])> = fields.iter().map(|(n, v, _)| (&n[..], &v[..])).collect();
            block.clear();
            let before = ours.generation();
            let changed = ours.encode(&list, |i| fields[i].2, &mut block);
            prop_assert_eq!(changed, ours.generation() != before);
            prop_assert_eq!(inflater.inflate(&block).unwrap(), plain(fields));
            prop_assert_eq!(decoded(&mut our_decoder, &block).unwrap(), plain(fields));
            prop_assert_eq!(our_table(&our_decoder), inflater.table());
        }
    }

    #[test]
    fn both_decoders_agree_on_arbitrary_bytes(
        prefix in fields(),
        noise in prop::collection::vec(any::<u8>(), 0..64),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        // A valid block from nghttp2, then noise, then a few octets changed: mostly
        // well-formed up to a point, so the checks past the first octet are reached.
        let mut block = vec![];
        let nv: Vec<_> = prefix.iter().map(|(n, v, x)| (&n[..], &v[..], *x)).collect();
        Deflater::new(4096).deflate(&nv, &mut block);
        block.extend_from_slice(&noise);
        for (at, x) in &flips {
            if !block.is_empty() {
                let i = at.index(block.len());
                block[i] ^= x;
            }
        }
        agree(&block)?;
    }

    #[test]
    fn both_decoders_agree_on_random_representations(items in prop::collection::vec(item(), 0..12)) {
        // Representations assembled from random parts: indexes around the tables' ends,
        // size updates anywhere, strings whose Huffman flag, length and bytes may disagree.
        agree(&items.concat())?;
    }
}

fn agree(block: &[u8]) -> Result<(), TestCaseError> {
    let theirs = Inflater::new().inflate(block);
    let mut decoder = Decoder::new(4096, u32::MAX);
    let ours = decoded(&mut decoder, block);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => prop_assert!(false, "ours {:?}, nghttp2 {:?}, block {:02x?}", ours, theirs, block),
    }
    Ok(())
}

/// One representation, possibly broken.
fn item() -> impl Strategy<Value = Vec<u8>> {
    let index = prop_oneof![0u32..=3, 55u32..=70, 0u32..=200];
    prop_oneof![
        index.clone().prop_map(|i| int(i, 7, 0x80)),
        (0u32..=5000).prop_map(|size| int(size, 5, 0x20)),
        (
            prop::sample::select(vec![(6u8, 0x40u8), (4, 0x00), (4, 0x10)]),
            index,
            string(),
            string()
        )
            .prop_map(|((prefix, flags), i, name, value)| {
                let mut out = int(i, prefix, flags);
                if i == 0 {
                    out.extend_from_slice(&name);
                }
                out.extend_from_slice(&value);
                out
            }),
    ]
}

/// A string literal: raw or Huffman bytes (valid, or with the last octet changed), with its
/// true length or one off.
fn string() -> impl Strategy<Value = Vec<u8>> {
    let text = prop_oneof![
        prop::collection::vec(b'a'..=b'z', 0..12),
        prop::collection::vec(any::<u8>(), 0..12),
    ];
    (text, any::<bool>(), 0u8..4, any::<u8>()).prop_map(|(text, huffman, how, x)| {
        // Flagged Huffman: the text's code (valid or with its last octet changed), or the
        // raw text taken for a code.
        let mut bytes = if huffman && how < 2 { huffman_coded(&text) } else { text };
        if huffman && how == 1 {
            if let Some(last) = bytes.last_mut() {
                *last ^= x;
            }
        }
        let len = match how {
            3 => bytes.len() as u32 + 1,
            _ => bytes.len() as u32,
        };
        let mut out = int(len, 7, if huffman { 0x80 } else { 0 });
        out.extend_from_slice(&bytes);
        out
    })
}

/// `text` Huffman-coded, taken from the block nghttp2 makes for a field with that value
/// (which it codes when that is shorter; else `text` as it is).
fn huffman_coded(text: &[u8]) -> Vec<u8> {
    let mut block = vec![];
    Deflater::new(4096).deflate(&[(b"x-a", text, true)], &mut block);
    // 0x10 (never indexed, new name), the name "x-a" in 4 octets, then the value.
    match block.get(5..) {
        Some([len, code @ ..]) if len & 0x80 != 0 && code.len() < 127 => code.to_vec(),
        _ => text.to_vec(),
    }
}

/// An HPACK integer with a `prefix`-bit prefix under `flags`.
fn int(value: u32, prefix: u8, flags: u8) -> Vec<u8> {
    let max = (1u32 << prefix) - 1;
    if value < max {
        return vec![flags | value as u8];
    }
    let mut out = vec![flags | max as u8];
    let mut rest = value - max;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
    out
}
