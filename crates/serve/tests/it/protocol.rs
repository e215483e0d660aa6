//! HTTP/1.x connection rules: keep-alive for 1.1 and 1.0, Connection: close, pipelining in order,
//! half-closed clients, Host, absolute-form targets, heads split across writes, /herd/stats.

use std::time::Duration;

use crate::harness::{Client, TestServer};

#[test]
fn http11_keeps_the_connection_by_default() {
    let server = TestServer::start(None);
    let mut c = server.client();
    for _ in 0..3 {
        c.send(b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n");
        let r = c.response(false);
        assert_eq!((r.status, r.body.as_slice()), (200, &b"01"[..]));
        assert_eq!(r.header("Connection"), None);
    }
}

#[test]
fn http11_connection_close_closes() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.header("Connection"), Some("close"));
    assert!(c.is_closed());
}

#[test]
fn http10_closes_by_default() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"GET /bytes/2 HTTP/1.0\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Connection"), Some("close"));
    assert!(c.is_closed());
}

#[test]
fn http10_keep_alive_is_echoed_and_honoured() {
    let server = TestServer::start(None);
    let mut c = server.client();
    for _ in 0..3 {
        // ApacheBench -k sends exactly this and looks for "Keep-Alive" or "keep-alive".
        c.send(b"GET /bytes/2 HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: t\r\n\r\n");
        let r = c.response(false);
        assert_eq!(r.header("Connection"), Some("keep-alive"));
    }
    c.send(b"GET /bytes/2 HTTP/1.0\r\n\r\n");
    c.response(false);
    assert!(c.is_closed());
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = TestServer::start(None);
    let mut c = server.client();
    // A streamed body in the middle must not let later answers overtake it.
    c.send(
        b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n\
          GET /bytes/200000 HTTP/1.1\r\nHost: t\r\n\r\n\
          HEAD /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n\
          GET /nope HTTP/1.1\r\nHost: t\r\n\r\n\
          GET /bytes/4 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(c.response(false).body, b"0");
    assert_eq!(c.response(false).body.len(), 200_000);
    assert_eq!(c.response(true).header("Content-Length"), Some("3"));
    assert_eq!(c.response(false).status, 404);
    assert_eq!(c.response(false).body, b"0123");
    assert!(c.is_closed());
}

#[test]
fn a_long_pipeline_is_answered_completely() {
    let server = TestServer::start(None);
    let mut c = server.client();
    let n = 500;
    let mut burst = Vec::new();
    for i in 0..n {
        burst.extend_from_slice(
            format!("GET /bytes/{} HTTP/1.1\r\nHost: t\r\n\r\n", i % 50).as_bytes(),
        );
    }
    c.send(&burst);
    for i in 0..n {
        assert_eq!(c.response(false).body.len(), i % 50, "response {i}");
    }
}

#[test]
fn a_half_closed_client_still_gets_its_answers() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n");
    c.shutdown_write();
    assert_eq!(c.response(false).body, b"0");
    assert_eq!(c.response(false).body, b"01");
    assert!(c.is_closed());
}

#[test]
fn http11_requires_host() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"GET /bytes/1 HTTP/1.1\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("Connection")), (400, Some("close")));
    assert!(c.is_closed());
}

#[test]
fn absolute_form_targets_are_accepted() {
    let server = TestServer::start(None);
    let r = server.get("http://example.com/bytes/3?q");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"012"[..]));
}

#[test]
fn a_head_split_across_many_writes_is_assembled() {
    let server = TestServer::start(None);
    let mut c = server.client();
    for &b in b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n" {
        c.send(&[b]);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(c.response(false).body, b"01");
}

#[test]
fn extra_blank_lines_between_requests_are_skipped() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"\r\nGET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n\r\n\r\nGET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).status, 200);
    assert_eq!(c.response(false).status, 200);
}

#[test]
fn stats_page_agrees_with_the_client() {
    let mut config = crate::harness::config(None);
    config.threads = 3;
    let server = TestServer::start_with(config);
    for _ in 0..5 {
        assert_eq!(server.get("/bytes/10").status, 200);
    }
    assert_eq!(server.get("/nope").status, 404);
    let mut c = Client::connect(server.addr());
    c.send(b"GARBAGE\r\n\r\n");
    assert_eq!(c.response(false).status, 400);
    let r = server.get("/herd/stats");
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    let json = r.text();
    // The stats request itself is counted after its answer is built.
    for expect in
        ["\"connections\":8", "\"requests\":7", "\"bad_requests\":1", "\"2xx\":5", "\"4xx\":2"]
    {
        assert!(json.contains(expect), "{expect} in {json}");
    }
    let stats = server.stop();
    assert_eq!(stats.n_connections, 8);
    assert_eq!(stats.n_requests, 8);
    assert_eq!(stats.n_bad_requests, 1);
    assert_eq!(stats.n_responses_by_class, [0, 6, 0, 2, 0]);
    assert!(stats.bytes_written > 5 * 10);
}
