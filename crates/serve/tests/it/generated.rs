//! `/bytes/N`: lengths, content, HEAD, the maximum, and refused counts.

use herd_fileset::GENERATED_PATTERN;
use herd_serve::MAX_GENERATED_BYTES;

use crate::harness::TestServer;

fn pattern(n: usize) -> Vec<u8> {
    GENERATED_PATTERN.iter().copied().cycle().take(n).collect()
}

#[test]
fn small_and_empty_bodies() {
    let server = TestServer::start(None);
    for n in [0, 1, 63, 64, 65, 100, 16 * 1024] {
        let r = server.get(&format!("/bytes/{n}"));
        assert_eq!(r.status, 200);
        assert_eq!(r.header("Content-Type"), Some("application/octet-stream"));
        assert_eq!(r.body, pattern(n), "n = {n}");
    }
}

#[test]
fn large_body_is_streamed_intact() {
    let server = TestServer::start(None);
    let n = 3_000_017;
    let r = server.get(&format!("/bytes/{n}"));
    assert_eq!(r.header("Content-Length"), Some(n.to_string().as_str()));
    assert!(r.body == pattern(n), "body differs from the pattern");
}

#[test]
fn query_is_ignored() {
    let server = TestServer::start(None);
    assert_eq!(server.get("/bytes/10?x=1").body, pattern(10));
}

#[test]
fn head_of_the_maximum_has_its_length_only() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(format!("HEAD /bytes/{MAX_GENERATED_BYTES} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    let r = c.response(true);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Length"), Some(MAX_GENERATED_BYTES.to_string().as_str()));
    c.send(b"GET /bytes/5 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, pattern(5));
}

#[test]
fn bad_counts_are_400() {
    let server = TestServer::start(None);
    let too_big = MAX_GENERATED_BYTES + 1;
    for target in [
        format!("/bytes/{too_big}"),
        "/bytes/abc".into(),
        "/bytes/-1".into(),
        "/bytes/".into(),
        "/bytes/1/".into(),
        "/bytes/99999999999999999999999".into(),
    ] {
        assert_eq!(server.get(&target).status, 400, "{target}");
    }
}
