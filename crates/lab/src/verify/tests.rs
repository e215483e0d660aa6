//! `fetch` against a one-shot loopback server that sends canned bytes, and `check` against
//! the expected answer: every framing herd-proto reads verifies, and a wrong status, length
//! or body, a malformed, truncated, oversized or silent answer each fail with their reason.
//! `fetch_over` h2c against a scripted HTTP/2 server: frames in pieces, an informational
//! head, a body under flow control, resets and GOAWAY. (Over TLS, the lab's protocol tests
//! verify against real servers with the run's CA.)

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

// HTTP/2 in the clear (h2c), against a scripted server that reads the client's frames with
// herd-proto's decoder and answers with frames made by its encoders.

use herd_proto::h2::hpack::Encoder;
use herd_proto::h2::{encode, ErrorCode, Frame, FrameDecoder, SettingId, PREFACE};

/// What the scripted server saw of the request.
#[derive(Debug, Default)]
struct Seen {
    /// Header blocks' bytes of stream 1, undecoded.
    headers: usize,
    body: Vec<u8>,
}

/// Accepts one h2c connection, checks the preface, reads the client's frames until its
/// request has ended (or `early` is set: answer after the HEADERS), giving the window
/// `grant` for its body, then writes `answer(&seen)`.
fn h2c_once(
    grant: u32,
    early: bool,
    answer: impl FnOnce(&Seen) -> Vec<u8> + Send + 'static,
) -> (SocketAddr, JoinHandle<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut preface = [0u8; 24];
        std::io::Read::read_exact(&mut conn, &mut preface).unwrap();
        assert_eq!(&preface, PREFACE);
        let mut out = Vec::new();
        encode::settings(&mut out, &[(SettingId::MAX_CONCURRENT_STREAMS, 100)]);
        if grant > 0 {
            encode::window_update(&mut out, 0, grant);
            encode::window_update(&mut out, 1, grant);
        }
        conn.write_all(&out).unwrap();
        let mut decoder = FrameDecoder::new(1 << 14);
        let (mut buf, mut seen, mut ended) = (Vec::new(), Seen::default(), false);
        while !ended {
            let mut chunk = [0u8; 16384];
            let n = std::io::Read::read(&mut conn, &mut chunk).unwrap();
            assert!(n > 0, "the client closed before its request ended");
            buf.extend_from_slice(&chunk[..n]);
            let mut at = 0;
            while let Some((frame, used)) = decoder.decode(&buf[at..]).unwrap() {
                match frame {
                    Frame::Headers { stream: 1, end_stream, block, .. } => {
                        seen.headers += block.len();
                        ended |= end_stream || early;
                    }
                    Frame::Data { stream: 1, data } => seen.body.extend_from_slice(data),
                    Frame::DataEnd { stream: 1, end_stream, .. } => ended |= end_stream,
                    _ => {}
                }
                at += used;
            }
            buf.drain(..at);
        }
        conn.write_all(&answer(&seen)).unwrap();
        // Keep the connection until the client has read the answer and left.
        let mut rest = [0u8; 1024];
        while matches!(std::io::Read::read(&mut conn, &mut rest), Ok(n) if n > 0) {}
        seen
    });
    (addr, handle)
}

/// A response head (`:status`, content-length) on stream 1.
fn head(out: &mut Vec<u8>, status: &str, length: Option<usize>, end_stream: bool) {
    let length = length.map(|l| l.to_string());
    let mut fields: Vec<(&[u8], &[u8])> = vec![(b":status", status.as_bytes())];
    if let Some(l) = &length {
        fields.push((b"content-length", l.as_bytes()));
    }
    let mut block = Vec::new();
    Encoder::new(4096).encode(&fields, |_| false, &mut block);
    encode::headers(out, 1, &block, end_stream, 1 << 14);
}

fn h2c(addr: SocketAddr, method: &str, body: Option<&[u8]>) -> Result<Answer, VerifyError> {
    let over = Over { protocol: Protocol::H2c, ca_file: None };
    fetch_over(addr, over, method, "/sizes/5.html", body, Duration::from_secs(10), 5)
}

#[test]
fn h2c_answers_are_read_across_frames_after_an_informational_head() {
    let (addr, server) = h2c_once(0, false, |_| {
        let mut out = Vec::new();
        encode::settings_ack(&mut out);
        encode::ping(&mut out, false, *b"12345678");
        head(&mut out, "103", None, false);
        head(&mut out, "200", Some(5), false);
        encode::data(&mut out, 1, b"hel", false);
        encode::data(&mut out, 1, b"lo", true);
        out
    });
    let a = h2c(addr, "GET", None).unwrap();
    assert_eq!((a.status, a.body.as_slice()), (200, &b"hello"[..]));
    check(&a, &hello()).unwrap();
    assert!(server.join().unwrap().headers > 0);
}

#[test]
fn an_h2c_post_body_flows_as_the_server_grants_window() {
    // Larger than HTTP/2's initial 64 KiB windows: the rest goes once the server grants more.
    let body = vec![b'x'; 100_000];
    let (addr, server) = h2c_once(50_000, false, |seen: &Seen| {
        let mut out = Vec::new();
        let got = seen.body.len().to_string();
        head(&mut out, "200", Some(got.len()), false);
        encode::data(&mut out, 1, got.as_bytes(), true);
        out
    });
    let over = Over { protocol: Protocol::H2c, ca_file: None };
    let a = fetch_over(addr, over, "POST", "/echo", Some(&body), Duration::from_secs(10), 6);
    let seen = server.join().unwrap();
    assert_eq!(seen.body.len(), body.len());
    let a = a.unwrap();
    assert_eq!((a.status, a.body.as_slice()), (200, &b"100000"[..]));
}

#[test]
fn h2c_resets_goaways_and_silence_fail_with_their_reason() {
    let (addr, server) = h2c_once(0, true, |_| {
        let mut out = Vec::new();
        encode::rst_stream(&mut out, 1, ErrorCode::REFUSED_STREAM);
        out
    });
    let e = h2c(addr, "GET", None).unwrap_err();
    server.join().unwrap();
    assert_eq!(
        e.to_string(),
        format!("{addr} over HTTP/2: the server reset the stream (REFUSED_STREAM)")
    );
    let (addr, server) = h2c_once(0, true, |_| {
        let mut out = Vec::new();
        encode::goaway(&mut out, 0, ErrorCode::NO_ERROR, b"bye");
        out
    });
    let e = h2c(addr, "GET", None).unwrap_err().to_string();
    server.join().unwrap();
    assert!(
        e.contains("the server ended the connection with GOAWAY (NO_ERROR) before answering"),
        "{e}"
    );
    // A server that speaks HTTP/1.1 only answers the preface with an error and closes.
    let (addr, server) = answer_once(Some(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec()));
    let e = h2c(addr, "GET", None).unwrap_err().to_string();
    let _ = server.join();
    assert!(e.starts_with(&format!("{addr} over HTTP/2: a frame herd cannot read")), "{e}");
}

#[test]
fn tls_and_quic_without_a_ca_are_refused_before_connecting() {
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    for protocol in [Protocol::H1Tls, Protocol::H2, Protocol::H3] {
        let over = Over { protocol, ca_file: None };
        let e = fetch_over(addr, over, "GET", "/", None, Duration::from_secs(1), 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("TLS with {addr} failed: no CA file to verify the server's certificate with")
        );
    }
}
