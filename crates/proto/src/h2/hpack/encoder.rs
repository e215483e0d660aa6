//! The HPACK encoder, for a load client's requests: a field already in a table is indexed,
//! any other is a literal, inserted into the dynamic table unless the caller says it should
//! not be. The first block of a request inserts its fields; the next one of the same request
//! is all indexes (RFC 9113's example: `82 86 bf 84 be`), and the engine reuses that block
//! for as long as the table's generation stays the same.
//!
//! Not on the hot path: the tables are searched linearly, once per new block. Strings are
//! Huffman-coded where that is shorter, which only makes the first block smaller.

use super::decoder::DEFAULT_TABLE_SIZE;
use super::huffman;
use super::integer;
use super::static_table;
use super::table::{DynamicTable, ENTRY_OVERHEAD};

/// The largest dynamic table herd's encoder keeps, whatever the peer allows: a request's
/// fields fit, and a connection's table costs 8 KiB at most.
const MAX_ENCODER_TABLE_SIZE: u32 = DEFAULT_TABLE_SIZE;

/// Encodes the header blocks of one connection, in the order they are sent.
#[derive(Debug, Clone)]
pub struct Encoder {
    table: DynamicTable,
    /// The table's size, as the peer's decoder knows it once the owed updates are sent.
    size: u32,
    /// Size updates owed at the start of the next block: the smallest size since the last
    /// block (the peer must evict to it), then the final one (RFC 7541 §4.2).
    owed_updates: Option<(u32, u32)>,
    generation: u64,
    huffman: bool,
}

impl Encoder {
    /// `peer_max_table_size`: the peer's SETTINGS_HEADER_TABLE_SIZE (4096 until it says).
    pub fn new(peer_max_table_size: u32) -> Self {
        let mut encoder = Encoder {
            table: DynamicTable::new(MAX_ENCODER_TABLE_SIZE as usize),
            size: DEFAULT_TABLE_SIZE,
            owed_updates: None,
            generation: 0,
            huffman: true,
        };
        encoder.set_peer_max_table_size(peer_max_table_size);
        encoder.generation = 0;
        encoder
    }

    /// The peer changed SETTINGS_HEADER_TABLE_SIZE: the next block starts with the size
    /// update.
    ///
    /// The update is sent even when herd's size stays the same (a peer allowing more than
    /// herd uses): a decoder that took the new setting as its table's size, rather than
    /// waiting for an update as RFC 7541 §4.2 says, would otherwise evict at another size
    /// than herd and the indexes would part.
    pub fn set_peer_max_table_size(&mut self, size: u32) {
        if size == self.size {
            return;
        }
        let size = size.min(MAX_ENCODER_TABLE_SIZE);
        let smallest = match self.owed_updates {
            Some((smallest, _)) => smallest.min(size),
            None => self.size.min(size),
        };
        self.owed_updates = Some((smallest, size));
        self.size = size;
        // A cached block no longer fits: the next one must carry the update.
        self.generation += 1;
    }

    /// Sends Huffman-coded strings where shorter (the default), or never (to measure what
    /// Huffman coding saves).
    pub fn set_huffman(&mut self, on: bool) {
        self.huffman = on;
    }

    /// Appends the header block for `fields` to `out`. A field found in the static or
    /// dynamic table is indexed; otherwise a literal: with incremental indexing (inserted)
    /// unless `never_index(i)` says field i must not be inserted (e.g. `:path` of a workload
    /// with many URLs) → literal without indexing. A field larger than the whole table is
    /// not inserted either (it would only empty the table). Returns whether the dynamic table
    /// changed (the engine caches a block and reuses it only while the table generation is
    /// unchanged).
    pub fn encode(
        &mut self,
        fields: &[(&[u8], &[u8])],
        never_index: impl Fn(usize) -> bool,
        out: &mut Vec<u8>,
    ) -> bool {
        let mut changed = false;
        if let Some((smallest, last)) = self.owed_updates.take() {
            if smallest < last {
                integer::encode(smallest, 5, 0x20, out);
                self.table.set_max_size(smallest as usize);
            }
            integer::encode(last, 5, 0x20, out);
            self.table.set_max_size(last as usize);
            changed = true;
        }
        for (i, &(name, value)) in fields.iter().enumerate() {
            let (index, full) = self.find(name, value);
            if full {
                integer::encode(index, 7, 0x80, out);
                continue;
            }
            let entry_size = name.len() + value.len() + ENTRY_OVERHEAD;
            let insert = !never_index(i) && entry_size <= self.table.max_size();
            if insert {
                integer::encode(index, 6, 0x40, out);
            } else {
                integer::encode(index, 4, 0x00, out);
            }
            if index == 0 {
                self.string(name, out);
            }
            self.string(value, out);
            if insert {
                self.table.insert(name, value);
                changed = true;
            }
        }
        if changed {
            self.generation += 1;
        }
        changed
    }

    /// Bumped whenever the dynamic table changes (insertion, eviction, size update).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The index to send for `(name, value)`, and whether it is the whole field (else the
    /// name only, or 0 for none). A whole match anywhere beats a name match; among equals
    /// the static table, whose entries never move, wins.
    fn find(&self, name: &[u8], value: &[u8]) -> (u32, bool) {
        let n_static = static_table::STATIC_TABLE.len();
        let in_static = static_table::find(name, value);
        if let Some((index, true)) = in_static {
            return (index as u32, true);
        }
        let in_dynamic = self.table.find(name, value);
        // Table indexes are below 2^27 (4096 bytes of entries of 32 or more), so fit u32.
        let dynamic_index = |i: usize| (n_static + 1 + i) as u32;
        match (in_static, in_dynamic) {
            (_, Some((i, true))) => (dynamic_index(i), true),
            (Some((index, _)), _) => (index as u32, false),
            (None, Some((i, _))) => (dynamic_index(i), false),
            (None, None) => (0, false),
        }
    }

    fn string(&self, s: &[u8], out: &mut Vec<u8>) {
        // Lengths are a request's own fields, far below u32::MAX; saturating all the same.
        let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let coded_len = huffman::encoded_len(s);
        if self.huffman && coded_len < s.len() {
            integer::encode(len(coded_len), 7, 0x80, out);
            huffman::encode(s, out);
        } else {
            integer::encode(len(s.len()), 7, 0x00, out);
            out.extend_from_slice(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::hpack::test_blocks::hex;
    use crate::h2::hpack::{Decoder, HpackError};

    type Field<'a> = (&'a [u8], &'a [u8]);
    type Owned = Vec<(Vec<u8>, Vec<u8>)>;

    const REQUEST: [Field<'static>; 5] = [
        (b":method", b"GET"),
        (b":scheme", b"http"),
        (b":authority", b"www.example.com"),
        (b":path", b"/"),
        (b"user-agent", b"herd"),
    ];

    fn decoded(d: &mut Decoder, block: &[u8]) -> Result<Owned, HpackError> {
        let mut fields = vec![];
        d.decode(block, |n, v| fields.push((n.to_vec(), v.to_vec()))).map(|()| fields)
    }

    fn owned(fields: &[Field<'_>]) -> Owned {
        fields.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn the_second_block_of_a_request_is_all_indexes() {
        let mut enc = Encoder::new(4096);
        let mut dec = Decoder::new(4096, 1 << 16);
        let mut first = vec![];
        assert!(enc.encode(&REQUEST, |_| false, &mut first));
        assert_eq!(enc.generation(), 1);
        assert_eq!(decoded(&mut dec, &first).unwrap(), owned(&REQUEST));
        let mut second = vec![];
        assert!(!enc.encode(&REQUEST, |_| false, &mut second));
        // :method GET, :scheme http, :authority (62 + 1), :path /, user-agent (62).
        assert_eq!(second, [0x82, 0x86, 0xbf, 0x84, 0xbe]);
        assert_eq!(enc.generation(), 1);
        assert_eq!(decoded(&mut dec, &second).unwrap(), owned(&REQUEST));
    }

    #[test]
    fn rfc_7541_c3_and_c4_requests_encode_to_the_rfcs_bytes() {
        let requests: [&[Field<'_>]; 3] = [
            &[
                (b":method", b"GET"),
                (b":scheme", b"http"),
                (b":path", b"/"),
                (b":authority", b"www.example.com"),
            ],
            &[
                (b":method", b"GET"),
                (b":scheme", b"http"),
                (b":path", b"/"),
                (b":authority", b"www.example.com"),
                (b"cache-control", b"no-cache"),
            ],
            &[
                (b":method", b"GET"),
                (b":scheme", b"https"),
                (b":path", b"/index.html"),
                (b":authority", b"www.example.com"),
                (b"custom-key", b"custom-value"),
            ],
        ];
        let plain = [
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ];
        let coded = [
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ];
        for (huffman, expected) in [(false, plain), (true, coded)] {
            let mut enc = Encoder::new(4096);
            enc.set_huffman(huffman);
            for (fields, block) in requests.iter().zip(expected) {
                let mut out = vec![];
                assert!(enc.encode(fields, |_| false, &mut out));
                assert_eq!(out, hex(block), "huffman {huffman}");
            }
            let table: Vec<_> = (0..enc.table.len()).filter_map(|i| enc.table.get(i)).collect();
            assert_eq!(table[0], (&b"custom-key"[..], &b"custom-value"[..]));
            assert_eq!(enc.table.size(), 164);
        }
    }

    #[test]
    fn never_indexed_fields_stay_out_of_the_table() {
        let mut enc = Encoder::new(4096);
        let mut dec = Decoder::new(4096, 1 << 16);
        let path = |i: usize| i == 3;
        for _ in 0..2 {
            let mut out = vec![];
            enc.encode(&REQUEST, path, &mut out);
            assert_eq!(decoded(&mut dec, &out).unwrap(), owned(&REQUEST));
        }
        // ":path /" is in the static table and indexed anyway; another path is a literal
        // without indexing, with :path's static name.
        let mut fields = REQUEST;
        fields[3].1 = b"/a/b";
        let before = enc.generation();
        let mut out = vec![];
        assert!(!enc.encode(&fields, path, &mut out));
        assert_eq!(enc.generation(), before);
        assert_eq!(out[..3], [0x82, 0x86, 0xbf]);
        assert_eq!(out[3], 0x04);
        assert_eq!(decoded(&mut dec, &out).unwrap(), owned(&fields));
        assert_eq!(enc.table.len(), 2);
    }

    #[test]
    fn a_field_larger_than_the_table_is_not_inserted() {
        let mut enc = Encoder::new(4096);
        let mut dec = Decoder::new(4096, 1 << 16);
        let big = [(&b"cookie"[..], &[b'c'; 5000][..]), (&b"x"[..], &b"y"[..])];
        let mut out = vec![];
        enc.encode(&big, |_| false, &mut out);
        assert_eq!(out[0], 0x0f, "cookie: without indexing, static name 32");
        assert_eq!(enc.table.len(), 1);
        assert_eq!(decoded(&mut dec, &out).unwrap(), owned(&big));
    }

    #[test]
    fn a_peer_size_change_is_sent_first_and_bumps_the_generation() {
        let mut enc = Encoder::new(4096);
        let mut dec = Decoder::new(4096, 1 << 16);
        let mut out = vec![];
        enc.encode(&REQUEST, |_| false, &mut out);
        decoded(&mut dec, &out).unwrap();
        let cached = enc.generation();
        // The peer shrinks, then grows its table before the next block: the block carries
        // the smallest size (the peer evicts to it), then the final one, capped at 4096.
        enc.set_peer_max_table_size(0);
        enc.set_peer_max_table_size(65536);
        assert_ne!(enc.generation(), cached);
        out.clear();
        assert!(enc.encode(&REQUEST, |_| false, &mut out));
        assert_eq!(out[..4], [0x20, 0x3f, 0xe1, 0x1f]);
        let mut dec = Decoder::new(65536, 1 << 16);
        decoded(&mut dec, &out).unwrap();
        assert_eq!(decoded(&mut dec, &out[4..]).unwrap(), owned(&REQUEST));
        // A peer that allows no table at all: every field a literal, nothing inserted.
        let mut enc = Encoder::new(0);
        let mut dec = Decoder::new(0, 1 << 16);
        for expect_update in [true, false] {
            out.clear();
            assert_eq!(enc.encode(&REQUEST, |_| false, &mut out), expect_update);
            assert_eq!(out[0] == 0x20, expect_update);
            assert_eq!(decoded(&mut dec, &out).unwrap(), owned(&REQUEST));
        }
    }

    #[test]
    fn same_settings_owe_nothing() {
        let mut enc = Encoder::new(4096);
        enc.set_peer_max_table_size(4096);
        let mut out = vec![];
        enc.encode(&[(b":method", b"GET")], |_| false, &mut out);
        assert_eq!(out, [0x82]);
        assert_eq!(enc.generation(), 0);
    }
}
