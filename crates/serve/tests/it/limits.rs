//! Limits and malformed requests: 414 for a long request line, 431 for a large head or too many
//! headers, 400 for garbage, each followed by a close, and the server serving others afterwards.

use crate::harness::{config, Client, TestServer};

/// Sends `request`, expects `status` with `Connection: close`, then the close.
fn check(server: &TestServer, request: &[u8], status: u16) {
    let mut c = Client::connect(server.addr());
    c.send(request);
    let r = c.response(false);
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&request[..request.len().min(60)]));
    assert_eq!(r.header("Connection"), Some("close"));
    assert!(c.is_closed());
}

#[test]
fn request_line_over_8_kib_is_414() {
    let server = TestServer::start(None);
    let long = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000));
    check(&server, long.as_bytes(), 414);
    // Still unfinished, but already too long.
    check(&server, "a".repeat(8200).as_bytes(), 414);
    // Just under the limit is served (a 404: no such file).
    assert_eq!(server.get(&format!("/{}", "a".repeat(8000))).status, 404);
}

#[test]
fn head_over_the_limit_is_431() {
    let server = TestServer::start(None);
    let mut big = String::from("GET / HTTP/1.1\r\nHost: t\r\n");
    for i in 0..10 {
        big.push_str(&format!("X-{i}: {}\r\n", "v".repeat(7000)));
    }
    big.push_str("\r\n");
    assert!(big.len() > 64 * 1024);
    check(&server, big.as_bytes(), 431);
}

#[test]
fn configured_head_limit_is_enforced() {
    let mut cfg = config(None);
    cfg.max_head_bytes = 2048;
    let server = TestServer::start_with(cfg);
    let head = format!("GET /bytes/1 HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n", "v".repeat(3000));
    check(&server, head.as_bytes(), 431);
    let fits = format!("GET /bytes/1 HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n", "v".repeat(1500));
    let mut c = Client::connect(server.addr());
    c.send(fits.as_bytes());
    assert_eq!(c.response(false).status, 200);
}

#[test]
fn too_many_headers_is_431() {
    let server = TestServer::start(None);
    let mut head = String::from("GET / HTTP/1.1\r\nHost: t\r\n");
    for i in 0..100 {
        head.push_str(&format!("X-{i}: v\r\n"));
    }
    head.push_str("\r\n");
    check(&server, head.as_bytes(), 431);
}

#[test]
fn malformed_requests_are_400_and_close() {
    let server = TestServer::start(None);
    for bad in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        b"GET /\0 HTTP/1.1\r\nHost: t\r\n\r\n",
    ] {
        check(&server, bad, 400);
    }
    let stats = server.stop();
    assert_eq!(stats.n_bad_requests, 8);
    assert_eq!(stats.n_requests, 8);
}

#[test]
fn the_server_keeps_serving_after_abuse() {
    let server = TestServer::start(None);
    check(&server, b"GARBAGE\r\n\r\n", 400);
    check(&server, "a".repeat(70_000).as_bytes(), 414);
    let mut c = Client::connect(server.addr());
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\n");
    drop(c); // gone mid-head
    assert_eq!(server.get("/bytes/3").body, b"012");
}
