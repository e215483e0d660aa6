//! A memo of the response header blocks a connection's peer repeats, with what decoding them
//! did: the response head they gave and the entries they inserted into the dynamic table.
//!
//! nginx sends one header block for every response of the same file within a second (only
//! `date` changes, once a second): each field a literal, five of them inserted into the
//! dynamic table, none referring to it. A block that refers to no dynamic entry and updates
//! no table size decodes to the same fields whatever the table holds, and what it does to
//! the table is its insertions, in order. So when such a block comes again, the head kept
//! for it is its head, and replaying its insertions leaves the table exactly as decoding it
//! would: its strings are neither read nor Huffman-decoded again (that, the checks of every
//! field and the Huffman memo's lookups were about half of herd's user time per HTTP/2
//! request against nginx). Any other block is decoded every time, and only a block whose head
//! was accepted is kept, so a malformed one fails each time.
//!
//! Replaying can often be skipped as well. Insertion evicts the oldest entries until the new
//! one fits, so once anything has been evicted the table holds the longest run of the newest
//! entries that fits its maximum size. When the same block has been replayed again and again,
//! with nothing else in between, until its insertions outweigh the whole table, the table
//! holds the longest run of that block's entries, repeated, that fits; one more replay adds the
//! same entries at the new end and evicts the same at the old, and leaves the same table. So
//! from there on a replay changes nothing and is skipped (inserting those entries was a
//! quarter of herd's user-space instructions per HTTP/2 request against nginx, after the
//! rest of decoding was gone). Anything else the decoder does breaks the run.
//!
//! Two slots, the one used last kept (a run of two URLs alternates two blocks). Slots keep
//! their buffers: once a connection has seen its blocks, nothing more is allocated.

use super::table::{DynamicTable, ENTRY_OVERHEAD};
use super::ResponseHead;

/// Longer blocks are decoded every time (response heads that repeat are short).
const MAX_BLOCK: usize = 512;
/// Blocks whose insertions hold more bytes than this are not kept.
const MAX_INSERTED: usize = 2048;

#[derive(Debug, Clone, Default)]
pub(crate) struct BlockMemo {
    /// Most recently used first.
    slots: [Slot; 2],
}

#[derive(Debug, Clone, Default)]
struct Slot {
    block: Vec<u8>,
    head: Option<ResponseHead>,
    inserted: Insertions,
    /// The table size (RFC 7541 §4.1) of the block's insertions.
    size: usize,
    /// The size inserted by the replays of this block since the decoder last did anything
    /// else.
    run: usize,
}

/// What one block's decoding inserted into the dynamic table, in order: names and values one
/// after another in `bytes`, their lengths in `lens`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Insertions {
    bytes: Vec<u8>,
    lens: Vec<(u32, u32)>,
}

impl Insertions {
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.lens.clear();
    }

    /// Notes one insertion; false once the block holds too much to be kept.
    pub(crate) fn push(&mut self, name: &[u8], value: &[u8]) -> bool {
        if self.bytes.len() + name.len() + value.len() > MAX_INSERTED {
            return false;
        }
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        // Both fit in u32: together they are at most MAX_INSERTED.
        self.lens.push((name.len() as u32, value.len() as u32));
        true
    }

    /// The table size of the entries (RFC 7541 §4.1).
    fn size(&self) -> usize {
        self.lens.iter().map(|&(n, v)| n as usize + v as usize + ENTRY_OVERHEAD).sum()
    }

    /// Inserts the entries again, in the order decoding inserted them.
    fn replay(&self, table: &mut DynamicTable) {
        let mut at = 0;
        for &(n, v) in &self.lens {
            let (n, v) = (n as usize, v as usize);
            let (Some(name), Some(value)) =
                (self.bytes.get(at..at + n), self.bytes.get(at + n..at + n + v))
            else {
                return;
            };
            table.insert(name, value);
            at += n + v;
        }
    }
}

impl BlockMemo {
    /// The head of `block` if it was kept, after its insertions are replayed into `table`.
    #[inline]
    pub(crate) fn replay(
        &mut self,
        block: &[u8],
        table: &mut DynamicTable,
    ) -> Option<ResponseHead> {
        let [recent, older] = &mut self.slots;
        if older.block == block && older.head.is_some() {
            std::mem::swap(recent, older);
        }
        if recent.block != block {
            return None;
        }
        let head = recent.head?;
        older.run = 0;
        // Past a whole table of this block's entries, the table is the longest run of them
        // that fits, and a replay leaves it as it is. (An entry larger than the table empties
        // it: then what one replay leaves does not depend on the table before, and is again
        // what the next leaves.)
        if recent.run > table.max_size() {
            return Some(head);
        }
        recent.inserted.replay(table);
        recent.run = recent.run.saturating_add(recent.size);
        Some(head)
    }

    /// The decoder did something else than a replay: every run is broken.
    #[inline]
    pub(crate) fn interrupt(&mut self) {
        for slot in &mut self.slots {
            slot.run = 0;
        }
    }

    /// Keeps `block`, which referred to no dynamic entry, set no table size, gave `head` and
    /// inserted `inserted`, in the slot used least lately.
    pub(crate) fn keep(&mut self, block: &[u8], head: ResponseHead, inserted: &Insertions) {
        if block.len() > MAX_BLOCK {
            return;
        }
        let [recent, older] = &mut self.slots;
        std::mem::swap(recent, older);
        recent.block.clear();
        recent.block.extend_from_slice(block);
        recent.head = Some(head);
        recent.inserted.clear();
        recent.inserted.bytes.extend_from_slice(&inserted.bytes);
        recent.inserted.lens.extend_from_slice(&inserted.lens);
        recent.size = recent.inserted.size();
        recent.run = 0;
    }
}

#[cfg(test)]
mod tests {
    use crate::h2::hpack::test_blocks::{hex, literal};
    use crate::h2::hpack::{Decoder, HpackError, ResponseHead};
    use proptest::prelude::*;

    /// A response block of nginx 1.22 (`:status 200`, then server, date, content-type,
    /// content-length and last-modified as Huffman literals inserted into the table, and
    /// accept-ranges as a literal not inserted), as captured.
    const NGINX: &str = "88 76 89 aa 63 55 e5 80 ae 21 2e 1f 61 96 dc 34 fd 28 27 94 d2 7e ea 08
        02 71 40 33 71 b6 ee 36 25 31 68 df 5f 87 49 7c a5 89 d3 4d 1f 5c 04 36 33 39 37 6c 96 dc 34
        fd 28 27 94 d2 7e ea 08 02 71 40 33 71 b6 ee 36 25 31 68 df 00 89 19 08 5a d2 b5 83 aa 62 a3
        84 8f d2 4a 8f";

    fn table(d: &Decoder) -> Vec<(Vec<u8>, Vec<u8>)> {
        d.dynamic_table().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
    }

    /// Decodes `blocks` in turn with a decoder that keeps blocks and one that decodes each
    /// (it forgets before every block): same heads, same tables, after each.
    fn in_step(max_table: u32, max_list: u32, blocks: &[Vec<u8>]) {
        let mut kept = Decoder::new(max_table, max_list);
        let mut fresh = kept.clone();
        for (i, block) in blocks.iter().enumerate() {
            fresh.forget_blocks();
            let want = fresh.decode_response(block);
            assert_eq!(kept.decode_response(block), want, "block {i}");
            assert_eq!(table(&kept), table(&fresh), "table after block {i}");
            if want.is_err_and(HpackError::is_connection_error) {
                return;
            }
        }
    }

    fn content_length(n: &str) -> Vec<u8> {
        let mut b = vec![0x88];
        literal(&mut b, b"content-length", n.as_bytes(), true);
        b
    }

    #[test]
    fn nginx_blocks_again_and_again_give_what_decoding_gives() {
        // 200 responses: the table (4096 bytes, 292 per block) fills and evicts many times.
        let block = hex(NGINX);
        let mut d = Decoder::new(4096, 16 << 10);
        let head = d.decode_response(&block).unwrap();
        assert_eq!((head.status, head.content_length, head.fields), (200, Some(6397), 7));
        let blocks = vec![block; 200];
        in_step(4096, 16 << 10, &blocks);
        let mut d = Decoder::new(4096, 16 << 10);
        for _ in 0..200 {
            assert_eq!(d.decode_response(&blocks[0]), Ok(head));
        }
        let t = table(&d);
        assert_eq!(t.len(), 70, "14 blocks of five entries fit 4096 bytes");
        assert_eq!(t[0].0, b"last-modified");
        assert_eq!(t[4], (b"server".to_vec(), b"nginx/1.22.1".to_vec()));
    }

    #[test]
    fn a_block_that_refers_to_the_table_is_decoded_each_time() {
        // 0xbe: the newest dynamic entry, whatever it holds now.
        let refers = vec![0x88, 0xbe];
        let d = &mut Decoder::new(4096, 16 << 10);
        let cl = |d: &mut Decoder, b: &[u8]| d.decode_response(b).map(|h| h.content_length);
        assert_eq!(cl(d, &content_length("5")), Ok(Some(5)));
        assert_eq!(cl(d, &refers), Ok(Some(5)));
        assert_eq!(cl(d, &content_length("7")), Ok(Some(7)));
        assert_eq!(cl(d, &refers), Ok(Some(7)), "not the head kept from before");
        // A literal whose name is a dynamic entry's (0x7e: index 62, inserted) likewise.
        let mut named = vec![0x88, 0x7e];
        named.extend_from_slice(b"\x019");
        assert_eq!(cl(d, &named), Ok(Some(9)));
        assert_eq!(cl(d, &refers), Ok(Some(9)));
        in_step(
            4096,
            16 << 10,
            &[
                content_length("5"),
                refers.clone(),
                named.clone(),
                content_length("7"),
                named,
                refers,
            ],
        );
    }

    #[test]
    fn a_block_that_sets_the_table_size_is_decoded_each_time() {
        // Size 0 (the table empties), then back to 4096, then :status 200.
        let resize = hex("20 3f e1 1f 88");
        let d = &mut Decoder::new(4096, 16 << 10);
        for _ in 0..2 {
            d.decode_response(&content_length("5")).unwrap();
            assert_eq!(d.dynamic_table().count(), 1);
            d.decode_response(&resize).unwrap();
            assert_eq!(d.dynamic_table().count(), 0, "the update is not skipped");
        }
    }

    #[test]
    fn a_run_that_fills_the_table_leaves_it_as_replaying_would() {
        // Table sizes where the run's entries fill it exactly, leave room, or where one
        // entry is larger than the table (it empties the table each time).
        for size in [0u32, 40, 47, 94, 100, 128, 141, 4096] {
            let mut resize = vec![];
            super::super::integer::encode(size, 5, 0x20, &mut resize);
            resize.push(0x88);
            let mut two = content_length("5");
            literal(&mut two, b"x-a", b"1", true);
            let mut blocks = vec![resize.clone()];
            blocks.extend(std::iter::repeat_n(content_length("5"), 12));
            blocks.push(content_length("7"));
            blocks.extend(std::iter::repeat_n(content_length("5"), 12));
            blocks.push(resize);
            blocks.extend(std::iter::repeat_n(two, 12));
            in_step(4096, 16 << 10, &blocks);
        }
    }

    #[test]
    fn a_malformed_block_fails_each_time() {
        let mut bad = vec![];
        literal(&mut bad, b"x-first", b"1", true);
        bad.push(0x88); // :status after a regular field
        let d = &mut Decoder::new(4096, 16 << 10);
        for _ in 0..3 {
            assert_eq!(d.decode_response(&bad), Err(HpackError::PseudoAfterRegular));
        }
        assert_eq!(d.dynamic_table().count(), 3, "inserted each time all the same");
    }

    #[test]
    fn two_blocks_in_turn_both_stay_kept() {
        let (a, b) = (content_length("5"), content_length("6"));
        let d = &mut Decoder::new(4096, 16 << 10);
        let heads: Vec<Option<u64>> = [&a, &b, &a, &b, &a]
            .iter()
            .map(|blk| d.decode_response(blk).map(|h: ResponseHead| h.content_length).unwrap())
            .collect();
        assert_eq!(heads, [Some(5), Some(6), Some(5), Some(6), Some(5)]);
        assert!(d.replayed(&a).is_some() && d.replayed(&b).is_some(), "both kept");
        in_step(4096, 16 << 10, &[a.clone(), b.clone(), a, b]);
    }

    /// Blocks from a small pool, some pure, some referring to the table, some setting its
    /// size, in any order: a decoder that keeps blocks stays in step with one that does not.
    fn pool() -> Vec<Vec<u8>> {
        let mut p = vec![hex(NGINX), content_length("5"), content_length("12"), vec![0x88, 0xbe]];
        p.push(vec![0x88, 0xbf, 0xc0]);
        p.push(hex("20 3f e1 1f 88"));
        p.push(hex("3f 61 88")); // size 128
        p.push(hex("3f e1 01 88")); // size 256
        let mut big = vec![0x88];
        literal(&mut big, b"x-big", &[b'v'; 300], true);
        p.push(big);
        let mut bad = vec![];
        literal(&mut bad, b"x", b"1", true);
        bad.push(0x88);
        p.push(bad);
        p
    }

    proptest! {
        #[test]
        fn kept_blocks_stay_in_step(picks in proptest::collection::vec((0usize..10, 1usize..8), 1..40),
                                    small in any::<bool>()) {
            let pool = pool();
            let blocks: Vec<Vec<u8>> =
                picks.iter().flat_map(|&(i, n)| vec![pool[i].clone(); n]).collect();
            in_step(4096, if small { 200 } else { 16 << 10 }, &blocks);
        }
    }
}
