//! What HPACK costs per request in the steady state of one connection, herd's codec next to
//! nghttp2's (the one h2load uses): encode the request's header block, decode the response's.
//! A figure to read, not a test (see BENCHMARKS.md): the thread's CPU time per request, best
//! of 3 runs of 500,000. Run:
//!
//! ```sh
//! cargo run --release -p herd-proto --example hpack_bench
//! ```
//!
//! Two response shapes, both made by nghttp2's deflater as a server's encoder would:
//! - `indexed`: fields inserted on the first response, every later one all indexes (h2o,
//!   Apache mod_http2, nghttp2-based servers);
//! - `literal`: fields never inserted, values Huffman-coded every time (nginx).
//!
//! The request is encoded each time (herd's engine reuses the block instead, so its real
//! cost is below what is shown).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/nghttp2.rs"]
mod nghttp2;

use std::hint::black_box;

use herd_proto::h2::hpack::{Decoder, Encoder};
use libnghttp2_sys as sys;

const REQUEST: [(&[u8], &[u8]); 5] = [
    (b":method", b"GET"),
    (b":scheme", b"http"),
    (b":authority", b"127.0.0.1:8080"),
    (b":path", b"/index.html"),
    (b"user-agent", b"herd/0.1"),
];

const RESPONSE: [(&[u8], &[u8]); 8] = [
    (b":status", b"200"),
    (b"server", b"nginx/1.22.1"),
    (b"date", b"Thu, 27 Nov 2026 08:44:02 GMT"),
    (b"content-type", b"text/html"),
    (b"content-length", b"13"),
    (b"last-modified", b"Wed, 26 Nov 2026 10:00:00 GMT"),
    (b"etag", b"\"6925d0e0-d\""),
    (b"accept-ranges", b"bytes"),
];

const REQUESTS: u32 = 500_000;

fn main() {
    let mut first = Vec::new();
    Encoder::new(4096).encode(&REQUEST, |_| false, &mut first);
    let mut plain = Encoder::new(4096);
    plain.set_huffman(false);
    let mut first_plain = Vec::new();
    plain.encode(&REQUEST, |_| false, &mut first_plain);
    println!(
        "first request block: {} bytes with Huffman, {} without; later blocks: 5 bytes",
        first.len(),
        first_plain.len()
    );
    for (shape, never_index) in [("indexed", false), ("literal", true)] {
        let blocks = response_blocks(never_index);
        println!("response block ({shape}): {} bytes in the steady state", blocks[1].len());
        for (what, encode, decode) in
            [("encode + decode", true, true), ("encode", true, false), ("decode", false, true)]
        {
            let ours = best_of_3(|| ours(&blocks, encode, decode));
            let theirs = best_of_3(|| theirs(&blocks, encode, decode));
            println!(
                "  {what:>15}: herd {ours:6.0} ns, nghttp2 {theirs:6.0} ns per request ({:.1}x)",
                theirs / ours
            );
        }
    }
}

/// The server's first and second response blocks.
fn response_blocks(never_index: bool) -> [Vec<u8>; 2] {
    let mut server = nghttp2::Deflater::new(4096);
    let fields: Vec<_> = RESPONSE.iter().map(|&(n, v)| (n, v, never_index)).collect();
    let mut blocks = [Vec::new(), Vec::new()];
    for block in &mut blocks {
        server.deflate(&fields, block);
    }
    blocks
}

/// This thread's CPU time: on a shared machine the wall clock also counts other work.
fn cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid out-pointer.
    let rv = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rv, 0, "clock_gettime");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn best_of_3(mut run: impl FnMut() -> f64) -> f64 {
    (0..3).map(|_| run()).fold(f64::INFINITY, f64::min)
}

/// ns per request through herd's encoder and decoder.
fn ours(blocks: &[Vec<u8>; 2], encode: bool, decode: bool) -> f64 {
    let mut enc = Encoder::new(4096);
    let mut dec = Decoder::new(4096, 64 << 10);
    let mut out = Vec::with_capacity(256);
    enc.encode(&REQUEST, |_| false, &mut out);
    dec.decode_response(&blocks[0]).unwrap();
    let start = cpu_ns();
    for _ in 0..REQUESTS {
        if encode {
            out.clear();
            enc.encode(black_box(&REQUEST), |_| false, &mut out);
            black_box(&out);
        }
        if decode {
            let head = dec.decode_response(black_box(&blocks[1])).unwrap();
            black_box(head);
        }
    }
    (cpu_ns() - start) as f64 / f64::from(REQUESTS)
}

/// ns per request through nghttp2's deflater and inflater, fields handed to a callback as
/// h2load's `on_header` sees them.
fn theirs(blocks: &[Vec<u8>; 2], encode: bool, decode: bool) -> f64 {
    let mut deflater = nghttp2::Deflater::new(4096);
    let mut inflater = nghttp2::Inflater::new();
    let nva: Vec<sys::nghttp2_nv> = REQUEST
        .iter()
        .map(|&(n, v)| sys::nghttp2_nv {
            name: n.as_ptr().cast_mut(),
            value: v.as_ptr().cast_mut(),
            namelen: n.len(),
            valuelen: v.len(),
            flags: (sys::NGHTTP2_NV_FLAG_NO_COPY_NAME | sys::NGHTTP2_NV_FLAG_NO_COPY_VALUE) as u8,
        })
        .collect();
    let mut out = Vec::with_capacity(256);
    deflater.deflate_nv(&nva, &mut out);
    inflater.inflate_with(&blocks[0], |_, _| {}).unwrap();
    let start = cpu_ns();
    for _ in 0..REQUESTS {
        if encode {
            out.clear();
            deflater.deflate_nv(black_box(&nva), &mut out);
            black_box(&out);
        }
        if decode {
            let mut status = 0usize;
            inflater
                .inflate_with(black_box(&blocks[1]), |n, v| {
                    if n == b":status" {
                        status = v.len();
                    }
                })
                .unwrap();
            black_box(status);
        }
    }
    (cpu_ns() - start) as f64 / f64::from(REQUESTS)
}
