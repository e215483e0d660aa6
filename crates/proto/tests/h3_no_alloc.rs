//! HTTP/3's hot-path promise: once a [`ResponseReader`] has warmed up, reading a response
//! (HEADERS with literals and Huffman-coded ones, DATA, trailers; whole or split anywhere,
//! so that HEADERS is gathered) allocates nothing. A counting global allocator checks it, on the asking thread
//! only. A test binary of its own, since the allocator is global.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_testutil::alloc::allocations_in;

use herd_proto::h3::frame::{self, kind};
use herd_proto::h3::qpack::encode_field_section;
use herd_proto::h3::{Limits, Part, ResponseReader};

herd_testutil::counting_allocator!();

fn response() -> Vec<u8> {
    let fields: [(&[u8], &[u8]); 5] = [
        (b":status", b"200"),
        (b"content-length", b"11"),
        (b"server", b"ngtcp2 server"),
        (b"x-herd-test", b"a literal name"),
        (b"content-type", b"text/plain"),
    ];
    let mut block = Vec::new();
    encode_field_section(fields, &mut block);
    // Huffman-coded, as ngtcp2 and caddy send them: `server: ngtcp2 server` and a literal
    // name `x-huff: yes`, decoded into the reader's scratch buffers.
    block.extend_from_slice(&[
        0x5f, 0x4d, 0x8a, 0xaa, 0x64, 0x92, 0xb1, 0x28, 0x82, 0xd9, 0xdc, 0xb6, 0x7f, 0x2d, 0xf2,
        0xb4, 0xf6, 0xcb, 0x2f, 0x83, 0xf4, 0x54, 0x7f,
    ]);
    let mut out = Vec::new();
    frame::encode(kind::HEADERS, &block, &mut out);
    frame::encode(kind::DATA, b"hello", &mut out);
    frame::encode(0x21, b"grease", &mut out);
    frame::encode(kind::DATA, b" world", &mut out);
    let mut trailers = Vec::new();
    encode_field_section([(&b"x-trailer"[..], &b"1"[..])], &mut trailers);
    frame::encode(kind::HEADERS, &trailers, &mut out);
    out
}

#[test]
fn reading_responses_allocates_nothing_once_warm() {
    let bytes = response();
    let mut reader = ResponseReader::new(Limits::default());
    let run = |reader: &mut ResponseReader| {
        let mut seen = 0usize;
        for cut in 0..=bytes.len() {
            reader.reset(false);
            for piece in [&bytes[..cut], &bytes[cut..]] {
                reader
                    .feed(piece, |part| {
                        seen += match part {
                            Part::Field(n, v) | Part::Trailer(n, v) => n.len() + v.len(),
                            Part::Body(b) => b.len(),
                        }
                    })
                    .unwrap();
            }
            let r = reader.finish().unwrap();
            assert_eq!((r.status, r.body_bytes), (200, 11));
        }
        std::hint::black_box(seen);
    };
    let mut fields = 0;
    reader.reset(false);
    reader
        .feed(&bytes, |part| fields += usize::from(matches!(part, Part::Field(b"x-huff", b"yes"))))
        .unwrap();
    assert_eq!(fields, 1, "the Huffman-coded field was decoded");
    // Warm up: the HEADERS buffer grows to the largest section split across pieces.
    run(&mut reader);
    assert_eq!(allocations_in(|| run(&mut reader)), 0);
}
