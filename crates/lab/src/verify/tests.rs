//! `fetch` against a one-shot loopback server that sends canned bytes, and `check` against
//! the expected answer: every framing herd-proto reads verifies, and a wrong status, length
//! or body, a malformed, truncated, oversized or silent answer each fail with their reason.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::thread::JoinHandle;

use super::*;

/// Accepts one connection, reads the request head, writes `answer`, closes. `None`: accepts
/// and answers nothing until the client gives up. The handle gives back the request head.
fn answer_once(answer: Option<Vec<u8>>) -> (SocketAddr, JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        match answer {
            Some(bytes) => {
                // The client may have hung up already (an answer it refused unread).
                let _ = conn.write_all(&bytes);
            }
            None => {
                // Silent: wait until the client closes.
                let mut rest = Vec::new();
                let _ = reader.read_to_end(&mut rest);
            }
        }
        head
    });
    (addr, handle)
}

fn get(answer: &[u8], max_body: u64) -> Result<Answer, VerifyError> {
    let (addr, server) = answer_once(Some(answer.to_vec()));
    let got = fetch(addr, "GET", "/sizes/5.html", None, Duration::from_secs(10), max_body);
    server.join().unwrap();
    got
}

fn hello() -> Expected {
    Expected { path: None, status: 200, body_bytes: 5, sha256: sha256_hex(b"hello") }
}

#[test]
fn every_framing_herd_reads_verifies() {
    for answer in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3;ext=1\r\nllo\r\n0\r\nX-Trailer: t\r\n\r\n",
        b"HTTP/1.0 200 OK\r\n\r\nhello",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    ] {
        let a = get(answer, 5).unwrap_or_else(|e| panic!("{e}: {answer:?}"));
        assert_eq!((a.status, a.body.as_slice()), (200, &b"hello"[..]));
        check(&a, &hello()).unwrap();
    }
}

#[test]
fn the_request_is_one_http_1_1_request_on_its_own_connection() {
    let (addr, server) =
        answer_once(Some(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec()));
    fetch(addr, "GET", "/ready", None, Duration::from_secs(10), 0).unwrap();
    let head = server.join().unwrap();
    assert!(head.starts_with("GET /ready HTTP/1.1\r\n"), "{head}");
    assert!(head.contains(&format!("\r\nHost: {addr}\r\n")), "{head}");
    assert!(head.contains("\r\nConnection: close\r\n"), "{head}");
}

#[test]
fn a_wrong_status_length_or_body_fails_saying_what_came() {
    let a = get(b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope", 5).unwrap();
    assert_eq!(
        check(&a, &hello()).unwrap_err().to_string(),
        "status 404 instead of 200 (body starts: \"nope\")"
    );
    let a = get(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n", 5)
        .unwrap();
    assert_eq!(
        check(&a, &hello()).unwrap_err().to_string(),
        "3 body bytes instead of 5 (body starts: \"hel\")"
    );
    let a = get(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\njello", 5).unwrap();
    let err = check(&a, &hello()).unwrap_err();
    assert!(matches!(err, VerifyError::Content { .. }), "{err:?}");
    let want =
        format!("sha256 {} instead of {}", &sha256_hex(b"jello")[..16], &hello().sha256[..16]);
    assert_eq!(err.to_string(), format!("the right length but other content ({want})"));
}

#[test]
fn a_malformed_or_cut_answer_is_herd_protos_reason() {
    let reason = |answer: &[u8]| match get(answer, 5) {
        Err(VerifyError::Malformed { err, .. }) => err,
        other => panic!("{answer:?}: {other:?}"),
    };
    assert_eq!(reason(b"garbage\r\n\r\n"), ProtoError::InvalidStatusLine);
    assert_eq!(reason(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello"), ProtoError::Truncated);
    assert_eq!(
        reason(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
        ProtoError::InvalidContentLength
    );
    assert_eq!(
        reason(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello"),
        ProtoError::InvalidChunk
    );
    let err = get(b"garbage\r\n\r\n", 5).unwrap_err().to_string();
    assert!(err.ends_with(" sent a malformed answer: invalid status line"), "{err}");
}

#[test]
fn a_body_far_over_the_expected_size_is_refused_unread() {
    let mut answer = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
    answer.extend(std::iter::repeat_n(b'x', 200 * 1024));
    match get(&answer, 5) {
        Err(VerifyError::TooLarge { limit, .. }) => assert_eq!(limit, 5 + SLACK),
        other => panic!("{other:?}"),
    }
    // A little over is read, so that the check can say how long it was.
    let a = get(b"HTTP/1.1 200 OK\r\n\r\nhello, world", 5).unwrap();
    assert!(check(&a, &hello()).unwrap_err().to_string().starts_with("12 body bytes instead of 5"));
}

#[test]
fn silence_and_a_close_without_an_answer_fail() {
    let (addr, server) = answer_once(Some(Vec::new()));
    let err = fetch(addr, "GET", "/", None, Duration::from_secs(10), 5).unwrap_err();
    server.join().unwrap();
    assert!(matches!(err, VerifyError::NoAnswer { .. }), "{err:?}");
    assert_eq!(err.to_string(), format!("{addr} closed the connection without answering"));

    let (addr, server) = answer_once(None);
    let err = fetch(addr, "GET", "/", None, Duration::from_millis(300), 5).unwrap_err();
    server.join().unwrap();
    assert_eq!(err.to_string(), format!("{addr} took more than 300ms to answer"));

    // Nothing listens on a port just released.
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let err = fetch(addr, "GET", "/", None, Duration::from_secs(2), 5).unwrap_err();
    assert!(err.to_string().starts_with(&format!("cannot connect to {addr}: ")), "{err}");
}
