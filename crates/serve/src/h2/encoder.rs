//! Response header blocks: herd-proto's HPACK encoder over a [`FieldList`], with the last
//! block kept. A field is a literal the first time a connection sends it, inserted into the
//! dynamic table, and an index after; so from the second response of a kind on, the block is
//! all indexes and the same bytes every time, until the Date changes (once a second) or another
//! response inserts something. The kept block is then sent again without encoding: the
//! encoder's generation says whether the table is still the one it was encoded against.

use herd_proto::h2::hpack::Encoder;

use crate::h2::FieldList;

/// Fields encoded per call to the encoder, which takes a slice of pairs.
const BATCH: usize = 16;

#[derive(Debug)]
pub(super) struct ResponseEncoder {
    encoder: Encoder,
    /// The fields of the kept block, and the generation it is valid for (`None`: no block
    /// kept).
    kept_fields: FieldList,
    kept_generation: Option<u64>,
    kept_block: Vec<u8>,
}

impl ResponseEncoder {
    /// `peer_table_size`: the client's SETTINGS_HEADER_TABLE_SIZE.
    pub(super) fn new(peer_table_size: u32) -> ResponseEncoder {
        ResponseEncoder {
            encoder: Encoder::new(peer_table_size),
            kept_fields: FieldList::default(),
            kept_generation: None,
            kept_block: Vec::new(),
        }
    }

    pub(super) fn set_peer_table_size(&mut self, size: u32) {
        self.encoder.set_peer_max_table_size(size);
    }

    /// Appends the header block of `fields` to `out`.
    pub(super) fn encode(&mut self, fields: &FieldList, out: &mut Vec<u8>) {
        if self.kept_generation == Some(self.encoder.generation()) && *fields == self.kept_fields {
            out.extend_from_slice(&self.kept_block);
            return;
        }
        let start = out.len();
        let mut changed = false;
        let mut batch: [(&[u8], &[u8]); BATCH] = [(&[], &[]); BATCH];
        let mut n = 0;
        for field in fields.iter() {
            batch[n] = field;
            n += 1;
            if n == BATCH {
                changed |= self.encoder.encode(&batch, |_| false, out);
                n = 0;
            }
        }
        if n > 0 {
            changed |= self.encoder.encode(&batch[..n], |_| false, out);
        }
        // A block that changed the table is not what the same fields encode to next time;
        // one that did not is, for as long as the table stays as it is.
        if changed {
            self.kept_generation = None;
        } else {
            self.kept_generation = Some(self.encoder.generation());
            self.kept_fields.clone_from(fields);
            self.kept_block.clear();
            self.kept_block.extend_from_slice(&out[start..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_proto::h2::hpack::Decoder;

    fn response(status: u16, date: &str, len: &str) -> FieldList {
        let mut f = FieldList::default();
        f.start_response(status);
        f.push("server", b"herd/0.1.0");
        f.push("date", date.as_bytes());
        f.push("content-length", len.as_bytes());
        f
    }

    fn decode(d: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut got = Vec::new();
        d.decode(block, |n, v| got.push((n.to_vec(), v.to_vec()))).unwrap();
        got
    }

    fn owned(f: &FieldList) -> Vec<(Vec<u8>, Vec<u8>)> {
        f.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn the_second_block_is_all_indexes_and_then_kept() {
        let mut enc = ResponseEncoder::new(4096);
        let mut dec = Decoder::new(4096, 1 << 16);
        let a = response(200, "Sun, 06 Nov 1994 08:49:37 GMT", "100");
        let mut blocks = Vec::new();
        for f in [&a, &a, &a] {
            let mut out = Vec::new();
            enc.encode(f, &mut out);
            assert_eq!(decode(&mut dec, &out), owned(f));
            blocks.push(out);
        }
        // :status 200 is static index 8; server, date, content-length the dynamic 64, 63, 62.
        assert_eq!(blocks[1], [0x88, 0xc0, 0xbf, 0xbe]);
        assert_eq!(blocks[2], blocks[1]);
        assert!(blocks[0].len() > 30);
        // A new Date is a literal again, and the block after it indexes it.
        let b = response(200, "Sun, 06 Nov 1994 08:49:38 GMT", "100");
        for _ in 0..2 {
            let mut out = Vec::new();
            enc.encode(&b, &mut out);
            assert_eq!(decode(&mut dec, &out), owned(&b));
        }
        let mut out = Vec::new();
        enc.encode(&a, &mut out);
        assert_eq!(decode(&mut dec, &out), owned(&a));
    }

    #[test]
    fn more_fields_than_a_batch() {
        let mut enc = ResponseEncoder::new(4096);
        let mut dec = Decoder::new(4096, 1 << 16);
        let mut f = response(404, "d", "0");
        for i in 0..40 {
            f.push_fmt("x-field", format_args!("{i}"));
        }
        let mut out = Vec::new();
        enc.encode(&f, &mut out);
        assert_eq!(decode(&mut dec, &out), owned(&f));
    }
}
