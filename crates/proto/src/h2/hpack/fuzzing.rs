//! The fuzz entry point for HPACK: arbitrary bytes as the header blocks of one connection.
//!
//! Not a stable API and not for the engine. It panics on purpose when the codec breaks an
//! invariant (that is how a fuzzer notices); never because of what the bytes are.

use super::{Decoder, Encoder, HpackError};

type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// Fuzz entry point. The first octet picks the limits (announced table size, list size) and
/// whether each block comes twice; the rest is blocks, each behind a one-octet length (255:
/// all that is left). Every block goes to three decoders in step, one through
/// [`Decoder::decode`] and two through [`Decoder::decode_response`], one of which forgets
/// the blocks it kept before each (block_memo.rs), and the following must hold:
/// - fields handed out stay within the list limit;
/// - the decoders fail alike on an encoding error, and otherwise keep the same table;
/// - a kept block gives what decoding it gives;
/// - a block that decodes is also a valid block cut short anywhere: a prefix of its fields,
///   or [`HpackError::Truncated`];
/// - its fields, encoded by [`Encoder`] (with and without Huffman) and decoded again, are
///   the same fields.
pub fn fuzz_decode(data: &[u8]) {
    let Some((&config, mut rest)) = data.split_first() else { return };
    let max_table = [0, 256, 4096, 65536][usize::from(config & 3)];
    let max_list = [0, 100, 4096, 1 << 16][usize::from((config >> 2) & 3)];
    let twice = config & 0x10 != 0;
    let mut plain = Decoder::new(max_table, max_list);
    let mut response = plain.clone();
    let mut fresh = plain.clone();
    let mut again = None;
    loop {
        let block = match again.take() {
            Some(block) => block,
            None => {
                let Some((&len, tail)) = rest.split_first() else { break };
                let len = if len == 255 { tail.len() } else { usize::from(len).min(tail.len()) };
                let (block, next) = tail.split_at(len);
                rest = next;
                if twice {
                    again = Some(block);
                }
                block
            }
        };
        let before = plain.clone();
        let mut fields = Fields::new();
        let mut list = 0usize;
        let result = plain.decode(block, |n, v| {
            list += n.len() + v.len() + 32;
            fields.push((n.to_vec(), v.to_vec()));
        });
        assert!(list <= max_list as usize, "{list} bytes handed out past a limit of {max_list}");
        let head = response.decode_response(block);
        fresh.forget_blocks();
        assert_eq!(fresh.decode_response(block), head, "a kept block gave another head");
        assert!(fresh.dynamic_table().eq(response.dynamic_table()), "a kept block's insertions");
        match (result, head) {
            (Err(e), other) if e.is_connection_error() => {
                assert_eq!(other, Err(e), "decode_response disagrees with decode");
                return;
            }
            (_, Err(e)) if e.is_connection_error() => {
                panic!("decode_response failed with {e:?}, decode did not");
            }
            (Ok(()), Ok(head)) => assert_eq!(head.fields as usize, fields.len()),
            (Err(HpackError::HeaderListTooLarge { .. }), other) => {
                assert!(matches!(other, Err(HpackError::HeaderListTooLarge { .. })), "{other:?}")
            }
            _ => {}
        }
        assert!(plain.dynamic_table().eq(response.dynamic_table()), "tables parted");
        if result.is_ok() {
            cut_short(&before, block, &fields);
            round_trip(&fields);
        }
    }
}

fn cut_short(before: &Decoder, block: &[u8], whole: &Fields) {
    // Every cut of a short block; a few of a long one.
    let step = (block.len() / 64).max(1);
    for cut in (0..block.len()).step_by(step) {
        let mut d = before.clone();
        let mut fields = Fields::new();
        match d.decode(&block[..cut], |n, v| fields.push((n.to_vec(), v.to_vec()))) {
            Ok(()) => assert_eq!(fields[..], whole[..fields.len()], "cut at {cut}"),
            Err(e) => assert_eq!(e, HpackError::Truncated, "cut at {cut}"),
        }
    }
}

fn round_trip(fields: &Fields) {
    let list: Vec<(&[u8], &[u8])> = fields.iter().map(|(n, v)| (&n[..], &v[..])).collect();
    for huffman in [true, false] {
        let mut enc = Encoder::new(4096);
        enc.set_huffman(huffman);
        let mut dec = Decoder::new(4096, u32::MAX);
        for round in 0..2 {
            let mut block = Vec::new();
            enc.encode(&list, |i| i % 3 == 2, &mut block);
            let mut again = Fields::new();
            let decoded = dec.decode(&block, |n, v| again.push((n.to_vec(), v.to_vec())));
            assert_eq!(decoded, Ok(()), "our own block, round {round}");
            assert_eq!(&again, fields, "round trip, round {round}, huffman {huffman}");
        }
    }
}
