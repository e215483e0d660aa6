//! The HPACK decoder (RFC 7541 §3, §6): one complete header block in, each field out to a
//! callback, the dynamic table kept in step with the peer's encoder.
//!
//! Fields are handed out borrowed: a name or value is a slice of the block (a plain literal),
//! of a table (an indexed one), or of one of two scratch buffers (a Huffman literal), so no
//! field is copied unless it is inserted into the dynamic table. The scratch buffers keep
//! their capacity from block to block, so a decoder that has seen its largest field
//! allocates nothing more.
//!
//! Limits, so that neither memory nor a callback's work grows with what a peer can make a
//! small block expand to (the "HPACK bomb": one large entry, indexed a thousand times):
//! - the header list (name + value + 32 per field, RFC 9113 §6.5.2) may not pass
//!   `max_list_size`; past it no more fields are handed out, the block is still decoded to
//!   its end (so the table stays in step) and the result is
//!   [`HpackError::HeaderListTooLarge`];
//! - a Huffman string is decoded into scratch only up to `max(max_list_size,
//!   max_table_size)` bytes: a longer one can neither be handed out nor fit the table, so
//!   only its length is counted.

use super::block_memo::{BlockMemo, Insertions};
use super::integer;
use super::memo::HuffmanMemo;
use super::static_table;
use super::table::{DynamicTable, ENTRY_OVERHEAD};
use super::{HpackError, ResponseHead};

/// The dynamic table's size before any SETTINGS (RFC 9113 §6.5.2).
pub(crate) const DEFAULT_TABLE_SIZE: u32 = 4096;

/// Decodes the header blocks of one connection, in the order they arrived.
#[derive(Debug, Clone)]
pub struct Decoder {
    table: DynamicTable,
    /// The SETTINGS_HEADER_TABLE_SIZE this endpoint announced: the largest size update the
    /// peer may send.
    max_table_size: u32,
    max_list_size: u32,
    /// The announced size is below the table's initial 4096 bytes, and the peer has not yet
    /// said so with a size update: the next block must start with one (RFC 7541 §4.2).
    update_owed: bool,
    name_scratch: Vec<u8>,
    value_scratch: Vec<u8>,
    /// Huffman strings seen lately, decoded (see memo.rs).
    memo: HuffmanMemo,
    /// Response blocks seen lately, with their heads and insertions (see block_memo.rs).
    blocks: BlockMemo,
    /// While `decode_noted` runs: the block so far refers to no dynamic entry and sets no
    /// table size, and `inserted` holds what it inserted.
    noting: bool,
    pure: bool,
    inserted: Insertions,
}

impl Decoder {
    /// `max_table_size`: the SETTINGS_HEADER_TABLE_SIZE this endpoint announced (4096
    /// default); `max_list_size`: the header list limit (name + value + 32 per field; a block
    /// that expands past it is [`HpackError::HeaderListTooLarge`], the HPACK bomb case;
    /// memory stays bounded by it).
    ///
    /// The table starts at the protocol's 4096 bytes (or the announced size, if smaller, with
    /// a size update owed); it grows past that only when the peer sends a size update, so a
    /// large announced size costs memory only once the peer uses it.
    pub fn new(max_table_size: u32, max_list_size: u32) -> Self {
        let initial = max_table_size.min(DEFAULT_TABLE_SIZE);
        Decoder {
            table: DynamicTable::new(initial as usize),
            max_table_size,
            max_list_size,
            update_owed: max_table_size < DEFAULT_TABLE_SIZE,
            name_scratch: Vec::new(),
            value_scratch: Vec::new(),
            memo: HuffmanMemo::default(),
            blocks: BlockMemo::default(),
            noting: false,
            pure: false,
            inserted: Insertions::default(),
        }
    }

    /// Decodes one complete header block; each field goes to `on_field(name, value)`
    /// (borrowed from the block, a table or the decoder's scratch; valid only during the
    /// call). No allocation per block in the steady state (scratch buffers reused).
    ///
    /// Any error but [`HpackError::HeaderListTooLarge`] leaves the table out of step with the
    /// peer's: the connection must go (see [`HpackError::is_connection_error`]).
    pub fn decode(
        &mut self,
        block: &[u8],
        mut on_field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        // Whatever this block does to the table, it is not a replay (see block_memo.rs).
        self.blocks.interrupt();
        let list_limit = u64::from(self.max_list_size);
        let mut list_size = 0u64;
        let mut too_large = false;
        let mut fields_seen = false;
        let mut pos = 0;
        while let Some(&first) = block.get(pos) {
            let rest = &block[pos..];
            if first & 0xe0 == 0x20 {
                self.pure = false;
                pos += self.size_update(rest, fields_seen)?;
                continue;
            }
            if self.update_owed {
                return Err(HpackError::MissingTableSizeUpdate { max: self.max_table_size });
            }
            fields_seen = true;
            let field = if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let (index, n) = integer::decode(rest, 7)?;
                pos += n;
                let (name, value) = self.lookup(index)?;
                if let Str::Dynamic { .. } = name {
                    self.pure = false;
                }
                Field { name, value, insert: false }
            } else {
                // A literal (§6.2): with incremental indexing (01), or without indexing (0000)
                // or never indexed (0001), which differ only for intermediaries.
                let insert = first & 0xc0 == 0x40;
                let (index, n) = integer::decode(rest, if insert { 6 } else { 4 })?;
                pos += n;
                let cap = self.scratch_cap();
                let name = if index == 0 {
                    read_string(block, &mut pos, &mut self.name_scratch, cap, &mut self.memo)?
                        .or_scratch(Str::NameScratch)
                } else {
                    let name = self.lookup(index)?.0;
                    if let Str::Dynamic { .. } = name {
                        self.pure = false;
                    }
                    match name {
                        Str::Dynamic { index: i, .. } if insert => {
                            // The insertion may evict the very entry the name is in: copy it.
                            self.name_scratch.clear();
                            if let Some((name, _)) = self.table.get(i) {
                                self.name_scratch.extend_from_slice(name);
                            }
                            Str::NameScratch
                        }
                        name => name,
                    }
                };
                let value =
                    read_string(block, &mut pos, &mut self.value_scratch, cap, &mut self.memo)?
                        .or_scratch(Str::ValueScratch);
                Field { name, value, insert }
            };
            match (self.resolve(block, field.name), self.resolve(block, field.value)) {
                (Some(name), Some(value)) => {
                    list_size += (name.len() + value.len() + ENTRY_OVERHEAD) as u64;
                    too_large |= list_size > list_limit;
                    if !too_large {
                        on_field(name, value);
                    }
                }
                // Longer than both limits: cannot be handed out.
                _ => too_large = true,
            }
            if field.insert {
                self.insert(block, field.name, field.value);
            }
        }
        if too_large {
            return Err(HpackError::HeaderListTooLarge { limit: self.max_list_size });
        }
        Ok(())
    }

    /// A dynamic table size update (§6.3) at `rest`; returns the octets it took.
    fn size_update(&mut self, rest: &[u8], fields_seen: bool) -> Result<usize, HpackError> {
        if fields_seen {
            return Err(HpackError::LateTableSizeUpdate);
        }
        let (size, n) = integer::decode(rest, 5)?;
        if size > self.max_table_size {
            return Err(HpackError::TableSizeTooLarge { size, max: self.max_table_size });
        }
        // Grows the buffers only up to the announced size, which this endpoint chose.
        self.table.reserve_for(size as usize);
        self.table.set_max_size(size as usize);
        self.update_owed = false;
        Ok(n)
    }

    /// How much of a Huffman string is kept: anything longer fits neither the list nor the
    /// table.
    fn scratch_cap(&self) -> usize {
        self.max_list_size.max(self.max_table_size) as usize
    }

    /// The entry at `index` in the static table followed by the dynamic one (§2.3.3), as
    /// its name and value.
    fn lookup(&self, index: u32) -> Result<(Str, Str), HpackError> {
        let n_static = static_table::STATIC_TABLE.len();
        let i = index as usize;
        if let Some((name, value)) = static_table::get(i) {
            return Ok((Str::Static(name), Str::Static(value)));
        }
        match i.checked_sub(n_static + 1) {
            Some(d) if d < self.table.len() => Ok((
                Str::Dynamic { index: d, value: false },
                Str::Dynamic { index: d, value: true },
            )),
            _ => Err(HpackError::InvalidIndex { index, dynamic: self.table.len() as u32 }),
        }
    }

    fn resolve<'a>(&'a self, block: &'a [u8], s: Str) -> Option<&'a [u8]> {
        match s {
            Str::Static(bytes) => Some(bytes),
            Str::Dynamic { index, value } => {
                self.table.get(index).map(|(n, v)| if value { v } else { n })
            }
            Str::Block(start, end) => block.get(start..end),
            Str::NameScratch => Some(&self.name_scratch),
            Str::ValueScratch => Some(&self.value_scratch),
            Str::Scratch | Str::TooLong => None,
        }
    }

    /// Inserts a literal's field. A name from the dynamic table was copied to scratch first
    /// (see `decode`), so nothing inserted borrows from the table.
    fn insert(&mut self, block: &[u8], name: Str, value: Str) {
        let name = match name {
            Str::Static(bytes) => Some(bytes),
            Str::Block(start, end) => block.get(start..end),
            Str::NameScratch => Some(&self.name_scratch[..]),
            _ => None,
        };
        let value = match value {
            Str::Block(start, end) => block.get(start..end),
            Str::ValueScratch => Some(&self.value_scratch[..]),
            _ => None,
        };
        match (name, value) {
            (Some(name), Some(value)) => {
                if self.noting && self.pure && !self.inserted.push(name, value) {
                    self.pure = false;
                }
                self.table.insert(name, value)
            }
            // Longer than the table's maximum: such an entry empties the table (§4.4).
            _ => {
                self.pure = false;
                self.table.clear()
            }
        }
    }

    /// A block decoded before that needs no decoding again (see block_memo.rs): its head, its
    /// insertions replayed into the table.
    #[inline]
    pub(super) fn replayed(&mut self, block: &[u8]) -> Option<ResponseHead> {
        if self.update_owed {
            // The block must begin with a size update, and a kept one has none.
            return None;
        }
        self.blocks.replay(block, &mut self.table)
    }

    /// [`Decoder::decode`], noting whether the block may be kept: true if it referred to no
    /// dynamic entry and set no table size (its insertions are noted meanwhile).
    pub(super) fn decode_noted(
        &mut self,
        block: &[u8],
        on_field: impl FnMut(&[u8], &[u8]),
    ) -> Result<bool, HpackError> {
        self.noting = true;
        self.pure = true;
        self.inserted.clear();
        let decoded = self.decode(block, on_field);
        self.noting = false;
        decoded.map(|()| self.pure)
    }

    /// Keeps a block `decode_noted` found pure, with the head it gave.
    pub(super) fn remember(&mut self, block: &[u8], head: ResponseHead) {
        self.blocks.keep(block, head, &self.inserted);
    }

    /// Forgets the blocks kept (for the fuzz target and tests, which compare with a decoder
    /// that decodes every block).
    pub(super) fn forget_blocks(&mut self) {
        self.blocks = BlockMemo::default();
    }

    /// The dynamic table's entries, newest first (for tests comparing tables).
    #[doc(hidden)]
    pub fn dynamic_table(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        (0..self.table.len()).filter_map(|i| self.table.get(i))
    }

    /// The dynamic table's size by RFC 7541 §4.1 and its current maximum.
    #[doc(hidden)]
    pub fn table_size(&self) -> (usize, usize) {
        (self.table.size(), self.table.max_size())
    }
}

/// One field representation, before its strings are looked at.
#[derive(Clone, Copy)]
struct Field {
    name: Str,
    value: Str,
    insert: bool,
}

/// Where a string of the field being decoded is. Positions, not borrows, so that the
/// decoder's table can be changed once the field has been handed out.
#[derive(Clone, Copy)]
enum Str {
    Static(&'static [u8]),
    /// The name or value of the dynamic table's entry `index` (0 is the newest).
    Dynamic {
        index: usize,
        value: bool,
    },
    /// A plain literal, `block[start..end]`.
    Block(usize, usize),
    /// A Huffman literal decoded into the scratch buffer `read_string` was given.
    Scratch,
    NameScratch,
    ValueScratch,
    /// A Huffman literal longer than the scratch cap.
    TooLong,
}

impl Str {
    /// Says which scratch buffer [`Str::Scratch`] was.
    fn or_scratch(self, which: Str) -> Str {
        match self {
            Str::Scratch => which,
            other => other,
        }
    }
}

/// Reads a string literal (§5.2) at `*pos`, moving `*pos` past it. A Huffman string is
/// decoded into `scratch` (through the memo of recent ones), at most `cap` bytes of it.
fn read_string(
    block: &[u8],
    pos: &mut usize,
    scratch: &mut Vec<u8>,
    cap: usize,
    memo: &mut HuffmanMemo,
) -> Result<Str, HpackError> {
    let rest = block.get(*pos..).unwrap_or(&[]);
    let huffman = rest.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let (len, n) = integer::decode(rest, 7)?;
    let start = *pos + n;
    let end = start.checked_add(len as usize).ok_or(HpackError::Truncated)?;
    let bytes = block.get(start..end).ok_or(HpackError::Truncated)?;
    *pos = end;
    if !huffman {
        return Ok(Str::Block(start, end));
    }
    if memo.decode(bytes, scratch, cap)? > cap {
        return Ok(Str::TooLong);
    }
    Ok(Str::Scratch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::hpack::huffman;
    use crate::h2::hpack::test_blocks::{hex, literal};

    type Fields = Vec<(String, String)>;

    fn text(b: &[u8]) -> String {
        String::from_utf8_lossy(b).into_owned()
    }

    fn decode(d: &mut Decoder, block: &[u8]) -> Result<Fields, HpackError> {
        let mut fields = vec![];
        d.decode(block, |n, v| fields.push((text(n), text(v)))).map(|()| fields)
    }

    fn table(d: &Decoder) -> Vec<(String, String)> {
        d.dynamic_table().map(|(n, v)| (text(n), text(v))).collect()
    }

    fn pairs(fields: &[(&str, &str)]) -> Fields {
        fields.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    /// A block in hex, its fields, the dynamic table after it (newest first) and its size.
    type Step<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [(&'a str, &'a str)], usize);

    /// Decodes `blocks` in turn on one decoder, checking the fields, the dynamic table
    /// (newest first) and its size after each, as RFC 7541 Appendix C lists them.
    fn appendix(max_table: u32, blocks: &[Step<'_>]) {
        let mut d = Decoder::new(4096, 64 << 10);
        if max_table != 4096 {
            // The RFC's decoder starts with this size; ours learns it from an update.
            let mut update = vec![];
            integer::encode(max_table, 5, 0x20, &mut update);
            decode(&mut d, &update).unwrap();
        }
        for (i, (block, fields, entries, size)) in blocks.iter().enumerate() {
            assert_eq!(decode(&mut d, &hex(block)).unwrap(), pairs(fields), "block {i}");
            assert_eq!(table(&d), pairs(entries), "table after block {i}");
            assert_eq!(d.table_size(), (*size, max_table as usize), "size after block {i}");
        }
    }

    #[test]
    fn rfc_7541_c2_literal_and_indexed_fields() {
        let kv = [("custom-key", "custom-header")];
        appendix(
            4096,
            &[("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572", &kv, &kv, 55)],
        );
        appendix(
            4096,
            &[("040c 2f73 616d 706c 652f 7061 7468", &[(":path", "/sample/path")], &[], 0)],
        );
        appendix(
            4096,
            &[("1008 7061 7373 776f 7264 0673 6563 7265 74", &[("password", "secret")], &[], 0)],
        );
        appendix(4096, &[("82", &[(":method", "GET")], &[], 0)]);
    }

    const C3_FIELDS: [&[(&str, &str)]; 3] = [
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ],
    ];
    const C3_TABLES: [&[(&str, &str)]; 3] = [
        &[(":authority", "www.example.com")],
        &[("cache-control", "no-cache"), (":authority", "www.example.com")],
        &[
            ("custom-key", "custom-value"),
            ("cache-control", "no-cache"),
            (":authority", "www.example.com"),
        ],
    ];

    #[test]
    fn rfc_7541_c3_requests_without_huffman() {
        appendix(
            4096,
            &[
                (
                    "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                    C3_FIELDS[0],
                    C3_TABLES[0],
                    57,
                ),
                ("8286 84be 5808 6e6f 2d63 6163 6865", C3_FIELDS[1], C3_TABLES[1], 110),
                (
                    "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
                    C3_FIELDS[2],
                    C3_TABLES[2],
                    164,
                ),
            ],
        );
    }

    #[test]
    fn rfc_7541_c4_requests_with_huffman() {
        appendix(
            4096,
            &[
                ("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", C3_FIELDS[0], C3_TABLES[0], 57),
                ("8286 84be 5886 a8eb 1064 9cbf", C3_FIELDS[1], C3_TABLES[1], 110),
                (
                    "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
                    C3_FIELDS[2],
                    C3_TABLES[2],
                    164,
                ),
            ],
        );
    }

    const DATE1: &str = "Mon, 21 Oct 2013 20:13:21 GMT";
    const DATE2: &str = "Mon, 21 Oct 2013 20:13:22 GMT";
    const LOCATION: &str = "https://www.example.com";
    const COOKIE: &str = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";

    fn c5_expected() -> [(Fields, Fields, usize); 3] {
        [
            (
                pairs(&[
                    (":status", "302"),
                    ("cache-control", "private"),
                    ("date", DATE1),
                    ("location", LOCATION),
                ]),
                pairs(&[
                    ("location", LOCATION),
                    ("date", DATE1),
                    ("cache-control", "private"),
                    (":status", "302"),
                ]),
                222,
            ),
            (
                pairs(&[
                    (":status", "307"),
                    ("cache-control", "private"),
                    ("date", DATE1),
                    ("location", LOCATION),
                ]),
                pairs(&[
                    (":status", "307"),
                    ("location", LOCATION),
                    ("date", DATE1),
                    ("cache-control", "private"),
                ]),
                222,
            ),
            (
                pairs(&[
                    (":status", "200"),
                    ("cache-control", "private"),
                    ("date", DATE2),
                    ("location", LOCATION),
                    ("content-encoding", "gzip"),
                    ("set-cookie", COOKIE),
                ]),
                pairs(&[("set-cookie", COOKIE), ("content-encoding", "gzip"), ("date", DATE2)]),
                215,
            ),
        ]
    }

    fn responses(blocks: [&str; 3]) {
        let mut d = Decoder::new(256, 64 << 10);
        // 256 < 4096: the first block owes the size update, which the RFC's examples (made
        // for a decoder already at 256) lack.
        assert_eq!(
            decode(&mut d, &hex(blocks[0])),
            Err(HpackError::MissingTableSizeUpdate { max: 256 })
        );
        let mut d = Decoder::new(256, 64 << 10);
        decode(&mut d, &[0x3f, 0xe1, 0x01]).unwrap(); // size update to 256
        for (i, (block, (fields, entries, size))) in blocks.iter().zip(c5_expected()).enumerate() {
            assert_eq!(decode(&mut d, &hex(block)).unwrap(), fields, "block {i}");
            assert_eq!(table(&d), entries, "table after block {i}");
            assert_eq!(d.table_size(), (size, 256), "size after block {i}");
        }
    }

    #[test]
    fn rfc_7541_c5_responses_without_huffman() {
        responses([
            "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
             2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
             6c65 2e63 6f6d",
            "4803 3330 37c1 c0bf",
            "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
             54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
             5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
             3d31",
        ]);
    }

    #[test]
    fn rfc_7541_c6_responses_with_huffman() {
        responses([
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
            "4883 640e ffc1 c0bf",
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
             77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
             9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ]);
    }

    #[test]
    fn every_truncation_is_a_prefix_of_fields_or_truncated() {
        let block = hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf");
        let mut warm = Decoder::new(4096, 64 << 10);
        decode(&mut warm, &hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")).unwrap();
        decode(&mut warm, &hex("8286 84be 5886 a8eb 1064 9cbf")).unwrap();
        let whole = decode(&mut warm.clone(), &block).unwrap();
        // Field boundaries: after 82, 87, 85, bf, and the end.
        let boundaries = [0, 1, 2, 3, 4, block.len()];
        for cut in 0..=block.len() {
            match decode(&mut warm.clone(), &block[..cut]) {
                Ok(fields) => {
                    assert!(boundaries.contains(&cut), "cut {cut} decoded");
                    assert_eq!(fields[..], whole[..fields.len()]);
                }
                Err(e) => {
                    assert!(!boundaries.contains(&cut), "cut {cut}: {e}");
                    assert_eq!(e, HpackError::Truncated, "cut {cut}");
                }
            }
        }
    }

    #[test]
    fn truncated_integers_and_strings() {
        let mut d = Decoder::new(4096, 1 << 16);
        for block in [&[0xff][..], &[0xff, 0x80], &[0x40], &[0x40, 0x03, b'a'], &[0x00, 0x01, b'a']]
        {
            assert_eq!(decode(&mut d, block), Err(HpackError::Truncated), "{block:02x?}");
        }
        // A Huffman string cut inside a symbol is also invalid padding.
        assert_eq!(decode(&mut d, &[0x00, 0x81, 0x00]), Err(HpackError::InvalidHuffman));
    }

    #[test]
    fn malformed_blocks_and_their_errors() {
        let cases: &[(&[u8], HpackError)] = &[
            (&[0x80], HpackError::InvalidIndex { index: 0, dynamic: 0 }),
            (&[0xbe], HpackError::InvalidIndex { index: 62, dynamic: 0 }),
            (&[0x7f, 0x00, 0x00, 0x00], HpackError::InvalidIndex { index: 63, dynamic: 0 }),
            (&[0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], HpackError::IntegerOverflow),
            (&[0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], HpackError::IntegerOverflow),
            // Name "a" with an all-ones octet after it: padding of 8 bits.
            (&[0x00, 0x82, 0x1f, 0xff, 0x00], HpackError::InvalidHuffman),
            (&[0x3f, 0xe2, 0x1f], HpackError::TableSizeTooLarge { size: 4097, max: 4096 }),
            (&[0x82, 0x20], HpackError::LateTableSizeUpdate),
        ];
        for &(block, error) in cases {
            let mut d = Decoder::new(4096, 1 << 16);
            assert_eq!(decode(&mut d, block), Err(error), "{block:02x?}");
            assert!(error.is_connection_error());
            assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn size_updates_open_the_block_and_evict() {
        let mut d = Decoder::new(4096, 1 << 16);
        let mut block = vec![];
        literal(&mut block, b"a", b"1", true);
        literal(&mut block, b"b", b"2", true);
        decode(&mut d, &block).unwrap();
        assert_eq!(d.table_size(), (68, 4096));
        // Two updates in a row (the smallest, then the final one), then a field.
        let fields = decode(&mut d, &[0x20, 0x3f, 0x11, 0x82]).unwrap();
        assert_eq!(fields, pairs(&[(":method", "GET")]));
        assert_eq!(d.table_size(), (0, 48));
        // An empty block may be all update.
        decode(&mut d, &[0x3f, 0xe1, 0x1f]).unwrap();
        assert_eq!(d.table_size(), (0, 4096));
    }

    #[test]
    fn a_larger_announced_size_takes_effect_by_update_only() {
        let mut d = Decoder::new(65536, 1 << 20);
        assert_eq!(d.table_size(), (0, 4096));
        let mut block = vec![];
        literal(&mut block, b"x", &[b'v'; 5000], true);
        // 5033 bytes do not fit 4096: the table empties.
        decode(&mut d, &block).unwrap();
        assert_eq!(d.table_size(), (0, 4096));
        let mut grown = vec![];
        integer::encode(65536, 5, 0x20, &mut grown);
        grown.extend_from_slice(&block);
        decode(&mut d, &grown).unwrap();
        assert_eq!(d.table_size(), (5033, 65536));
        assert_eq!(decode(&mut d, &[0xbe]).unwrap()[0].1.len(), 5000);
    }

    #[test]
    fn a_smaller_announced_size_is_owed_an_update() {
        let mut d = Decoder::new(100, 1 << 16);
        assert_eq!(decode(&mut d, &[0x82]), Err(HpackError::MissingTableSizeUpdate { max: 100 }));
        let mut d = Decoder::new(100, 1 << 16);
        // An empty block owes nothing yet.
        decode(&mut d, &[]).unwrap();
        assert_eq!(decode(&mut d, &[0x3f, 0x45, 0x82]).unwrap(), pairs(&[(":method", "GET")]));
        assert_eq!(d.table_size(), (0, 100));
        assert_eq!(decode(&mut d, &[0x82]).unwrap().len(), 1);
        assert_eq!(
            decode(&mut d, &[0x3f, 0x46]),
            Err(HpackError::TableSizeTooLarge { size: 101, max: 100 })
        );
    }

    #[test]
    fn an_indexed_name_from_the_table_survives_its_own_eviction() {
        // A table that holds one entry: inserting a new value under the entry's name evicts
        // the entry the name came from.
        let mut d = Decoder::new(4096, 1 << 16);
        let mut block = vec![0x3f, 0x1b]; // size update to 58
        literal(&mut block, b"name-xyz", b"value-123", true); // 8 + 9 + 32 = 49
        block.extend_from_slice(&[0x7e, 0x03, b'v', b'-', b'2']); // name of 62, new value
        assert_eq!(
            decode(&mut d, &block).unwrap(),
            pairs(&[("name-xyz", "value-123"), ("name-xyz", "v-2")])
        );
        assert_eq!(table(&d), pairs(&[("name-xyz", "v-2")]));
    }

    #[test]
    fn the_hpack_bomb_stops_at_the_list_limit_in_bounded_memory() {
        // One 4000-byte entry, then indexed 10,000 times: a 10 kB block that expands to 40 MB.
        let mut block = vec![];
        literal(&mut block, b"x", &[b'a'; 4000], true);
        block.extend(std::iter::repeat_n(0xbe, 10_000));
        let mut d = Decoder::new(4096, 64 << 10);
        let (mut fields, mut bytes) = (0usize, 0usize);
        let result = d.decode(&block, |n, v| {
            fields += 1;
            bytes += n.len() + v.len() + 32;
        });
        assert_eq!(result, Err(HpackError::HeaderListTooLarge { limit: 64 << 10 }));
        assert!(!result.unwrap_err().is_connection_error());
        assert_eq!(fields, (64 << 10) / 4033);
        assert!(bytes <= 64 << 10);
        // The decoder copied nothing but the one inserted entry.
        assert!(d.name_scratch.capacity() == 0 && d.value_scratch.capacity() == 0);
        // And its table is in step: the next block may index the entry.
        assert_eq!(decode(&mut d, &[0xbe]).unwrap()[0].1.len(), 4000);
    }

    #[test]
    fn a_huffman_string_past_both_limits_is_counted_not_kept() {
        // A value of 3000 Huffman-coded '0's (5 bits each), with a list limit of 1000 and a
        // table of 4096: refused for the list, inserted in the table.
        let value = vec![b'0'; 3000];
        let mut coded = vec![];
        huffman::encode(&value, &mut coded);
        let mut block = vec![0x41]; // with incremental indexing, name :authority
        integer::encode(coded.len() as u32, 7, 0x80, &mut block);
        block.extend_from_slice(&coded);
        let mut d = Decoder::new(4096, 1000);
        assert_eq!(decode(&mut d, &block), Err(HpackError::HeaderListTooLarge { limit: 1000 }));
        assert_eq!(d.table_size().0, 10 + 3000 + 32);
        // With a table of 2000 bytes, 3000 bytes are past both: kept only up to 2000.
        let mut d = Decoder::new(2000, 1000);
        let mut sized = vec![];
        integer::encode(2000, 5, 0x20, &mut sized);
        sized.extend_from_slice(&block);
        let mut prefix = vec![];
        literal(&mut prefix, b"k", b"v", true);
        decode(&mut d, &[&sized[..sized.len() - block.len()], &prefix].concat()).unwrap();
        assert_eq!(d.table_size(), (34, 2000));
        assert_eq!(decode(&mut d, &block), Err(HpackError::HeaderListTooLarge { limit: 1000 }));
        assert_eq!(d.table_size(), (0, 2000), "an oversized entry empties the table");
        assert!(d.value_scratch.capacity() < 3000);
    }

    #[test]
    fn fields_past_the_limit_are_not_handed_out() {
        let mut d = Decoder::new(4096, 100);
        let mut block = vec![];
        literal(&mut block, b"a", b"1", false); // 34
        literal(&mut block, b"b", b"2", false); // 68
        literal(&mut block, b"c", b"3", true); // 102: past
        literal(&mut block, b"d", b"", false); // 135
        let mut seen = vec![];
        let result = d.decode(&block, |n, _| seen.push(n.to_vec()));
        assert_eq!(result, Err(HpackError::HeaderListTooLarge { limit: 100 }));
        assert_eq!(seen, [b"a".to_vec(), b"b".to_vec()]);
        // "c" was inserted all the same.
        assert_eq!(table(&d), pairs(&[("c", "3")]));
        // A list of exactly the limit is fine.
        let mut d = Decoder::new(4096, 68);
        assert_eq!(decode(&mut d, &block[..10]).unwrap().len(), 2);
    }
}
