//! The HPACK fuzz entry point on stable Rust: random bytes and random well-formed blocks
//! (from nghttp2's deflater, then damaged) through `fuzz_decode`, a deterministic stand-in
//! for `cargo fuzz run hpack` (fuzz/README.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use herd_proto::h2::hpack::fuzzing::fuzz_decode;
use proptest::prelude::*;

use support::nghttp2::Deflater;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
        fuzz_decode(&data);
    }

    #[test]
    fn damaged_blocks_of_one_connection(
        config in any::<u8>(),
        blocks in prop::collection::vec(
            (
                prop::collection::vec(("[a-z:-]{1,12}", "[ -~]{0,30}", any::<bool>()), 0..8),
                prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..2),
            ),
            1..5,
        ),
    ) {
        let mut deflater = Deflater::new(4096);
        let mut data = vec![config];
        for (fields, flips) in &blocks {
            let nv: Vec<_> = fields.iter().map(|(n, v, x)| (n.as_bytes(), v.as_bytes(), *x)).collect();
            let mut block = vec![];
            deflater.deflate(&nv, &mut block);
            for (at, x) in flips {
                if !block.is_empty() {
                    let i = at.index(block.len());
                    block[i] ^= x;
                }
            }
            data.push(block.len().min(254) as u8);
            data.extend_from_slice(&block[..block.len().min(254)]);
        }
        fuzz_decode(&data);
    }
}
