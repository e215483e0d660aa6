//! `request::build` on its own: ab's header order and spellings, byte for byte, from a
//! `RequestSpec` (the differential test against the real ab is request_bytes.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_ab::request::{build, Credential, Overrides, RequestSpec};

fn spec() -> RequestSpec {
    RequestSpec {
        method: b"GET".to_vec(),
        target: b"/".to_vec(),
        host: b"h:8080".to_vec(),
        ..RequestSpec::default()
    }
}

fn text(spec: &RequestSpec) -> String {
    let (bytes, head_len) = build(spec);
    assert!(head_len <= bytes.len());
    String::from_utf8(bytes).unwrap()
}

#[test]
fn plain_get() {
    assert_eq!(
        text(&spec()),
        "GET / HTTP/1.0\r\nHost: h:8080\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
    );
}

#[test]
fn every_part_in_ab_order_without_body() {
    let s = RequestSpec {
        keepalive: true,
        cookie: Some(b"c=1".to_vec()),
        credentials: vec![Credential::Www(b"a:b".to_vec()), Credential::Proxy(b"c:d".to_vec())],
        headers: vec![b"X-1: a".to_vec(), b"X-2: b".to_vec()],
        ..spec()
    };
    assert_eq!(
        text(&s),
        "GET / HTTP/1.0\r\n\
         Connection: Keep-Alive\r\n\
         Cookie: c=1\r\n\
         Authorization: Basic YTpi\r\n\
         Proxy-Authorization: Basic Yzpk\r\n\
         X-1: a\r\n\
         X-2: b\r\n\
         Host: h:8080\r\n\
         User-Agent: ApacheBench/2.3\r\n\
         Accept: */*\r\n\
         \r\n"
    );
}

#[test]
fn body_lines_come_after_auth_and_before_headers() {
    let s = RequestSpec {
        method: b"POST".to_vec(),
        keepalive: true,
        cookie: Some(b"c=1".to_vec()),
        credentials: vec![Credential::Www(b"a:b".to_vec())],
        headers: vec![b"X-1: a".to_vec()],
        body: Some((b"hello".to_vec(), b"text/plain".to_vec())),
        ..spec()
    };
    let (bytes, head_len) = build(&s);
    assert_eq!(
        String::from_utf8(bytes.clone()).unwrap(),
        "POST / HTTP/1.0\r\n\
         Connection: Keep-Alive\r\n\
         Cookie: c=1\r\n\
         Authorization: Basic YTpi\r\n\
         Content-length: 5\r\n\
         Content-type: text/plain\r\n\
         X-1: a\r\n\
         Host: h:8080\r\n\
         User-Agent: ApacheBench/2.3\r\n\
         Accept: */*\r\n\
         \r\n\
         hello"
    );
    assert_eq!(head_len, bytes.len() - 5);
}

#[test]
fn overrides_drop_defaults_but_keep_the_lines() {
    let s = RequestSpec {
        headers: vec![b"accept: a".to_vec(), b"HOST: x".to_vec(), b"user-agent: u".to_vec()],
        ..spec()
    };
    assert_eq!(text(&s), "GET / HTTP/1.0\r\naccept: a\r\nHOST: x\r\nuser-agent: u\r\n\r\n");
}

#[test]
fn override_needs_the_colon() {
    let o = Overrides::scan(&[b"Hostname: x".to_vec(), b"Accept-Encoding: gzip".to_vec()]);
    // "Hostname:" does not start with "Host:"; "Accept-Encoding" does not with "Accept:".
    assert_eq!(o, Overrides::default());
}

#[test]
fn binary_body_is_sent_as_is() {
    let s = RequestSpec { body: Some((vec![0, 255, 13, 10], b"x/y".to_vec())), ..spec() };
    let (bytes, head_len) = build(&s);
    assert_eq!(&bytes[head_len..], &[0, 255, 13, 10]);
}

#[test]
fn non_utf8_header_bytes_are_kept() {
    let s = RequestSpec { headers: vec![b"X: \xff".to_vec()], ..spec() };
    let (bytes, _) = build(&s);
    assert!(bytes.windows(5).any(|w| w == b"X: \xff\r"));
}

#[test]
fn base64_padding() {
    let s = RequestSpec { credentials: vec![Credential::Www(b"ab".to_vec())], ..spec() };
    assert!(text(&s).contains("Authorization: Basic YWI=\r\n"));
}
