//! The hot-path promise: once a parser has warmed up, keep-alive responses that arrive in
//! one read (Content-Length or chunked, `Server` capture off) allocate nothing. A counting
//! global allocator checks it; it counts only on the thread that asked, so the test harness
//! running beside it does not disturb the count. Nothing else is tested here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_testutil::alloc::allocations_in;

use herd_proto::{Feed, Limits, ResponseParser};

herd_testutil::counting_allocator!();

#[test]
fn steady_state_keep_alive_allocates_nothing() {
    let length = b"HTTP/1.1 200 OK\r\nServer: herd-test\r\nKeep-Alive: timeout=5\r\n\
        Content-Length: 11\r\n\r\nhello world";
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n";
    let interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
    let mut p = ResponseParser::new(Limits::default());
    let run = |p: &mut ResponseParser| {
        for _ in 0..100 {
            for response in [&length[..], &chunked[..], &interim[..]] {
                p.reset(false);
                let feed = p.feed(response).unwrap();
                assert_eq!(feed, Feed { consumed: response.len(), complete: true });
            }
        }
    };
    // Warm up (nothing is expected to allocate even here, but that is not promised).
    run(&mut p);
    assert_eq!(allocations_in(|| run(&mut p)), 0);
}

#[test]
fn split_heads_reuse_the_buffer() {
    let response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let mut p = ResponseParser::new(Limits::default());
    let run = |p: &mut ResponseParser| {
        for cut in 1..response.len() {
            p.reset(false);
            let first = p.feed(&response[..cut]).unwrap();
            assert!(!first.complete);
            assert!(p.feed(&response[cut..]).unwrap().complete);
        }
    };
    run(&mut p);
    assert_eq!(allocations_in(|| run(&mut p)), 0);
}
