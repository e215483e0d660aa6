//! HPACK's hot-path promise: once a connection's decoder and encoder have warmed up, decoding
//! a response block (indexed fields, a Huffman literal, a new entry evicting an old one) and
//! encoding a request block allocate nothing. A counting global allocator checks it, as in
//! no_alloc.rs (a test binary of its own, so that each has one allocator); it counts only on
//! the thread that asked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_testutil::alloc::allocations_in;

use herd_proto::h2::hpack::{Decoder, Encoder};

herd_testutil::counting_allocator!();

/// Response blocks as a server's encoder makes them: the first inserts, later ones index,
/// and a `date` that changes every block is a new entry each time (so the table evicts and
/// wraps its buffer).
fn response_blocks() -> Vec<Vec<u8>> {
    let mut server = Encoder::new(4096);
    (0..200)
        .map(|i| {
            let date = format!("Thu, 27 Nov 2026 08:{:02}:{:02} GMT", i / 60, i % 60);
            let fields: [(&[u8], &[u8]); 5] = [
                (b":status", b"200"),
                (b"server", b"nginx/1.22.1"),
                (b"date", date.as_bytes()),
                (b"content-type", b"text/html"),
                (b"content-length", b"13"),
            ];
            let mut block = vec![];
            server.encode(&fields, |_| false, &mut block);
            block
        })
        .collect()
}

#[test]
fn steady_state_decoding_allocates_nothing() {
    let blocks = response_blocks();
    // One decoder through decode_response, one through decode with a callback.
    let mut d = Decoder::new(4096, 64 << 10);
    let mut raw = Decoder::new(4096, 64 << 10);
    // Warm up on the first half: scratch buffers reach their size.
    for block in &blocks[..100] {
        d.decode_response(block).unwrap();
        raw.decode(block, |_, _| {}).unwrap();
    }
    let mut value_bytes = 0;
    let n = allocations_in(|| {
        for block in &blocks[100..] {
            let head = d.decode_response(block).unwrap();
            assert_eq!((head.status, head.content_length, head.fields), (200, Some(13), 5));
            raw.decode(block, |_, v| value_bytes += v.len()).unwrap();
        }
    });
    assert_eq!(n, 0);
    assert_eq!(value_bytes, 100 * (3 + 12 + 29 + 9 + 2));
}

#[test]
fn steady_state_encoding_allocates_nothing() {
    let mut enc = Encoder::new(4096);
    let request: [(&[u8], &[u8]); 5] = [
        (b":method", b"GET"),
        (b":scheme", b"http"),
        (b":authority", b"127.0.0.1:8080"),
        (b":path", b"/index.html"),
        (b"user-agent", b"herd"),
    ];
    let mut out = Vec::with_capacity(256);
    enc.encode(&request, |_| false, &mut out);
    let n = allocations_in(|| {
        for _ in 0..1000 {
            out.clear();
            assert!(!enc.encode(&request, |_| false, &mut out));
        }
    });
    assert_eq!(n, 0);
    assert_eq!(out, [0x82, 0x86, 0xbf, 0x85, 0xbe]);
}
