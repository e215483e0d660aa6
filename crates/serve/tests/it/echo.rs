//! `/echo`: bodies by length and chunked, large ones streamed both ways, Expect:
//! 100-continue, and broken uploads.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;

use crate::harness::{TestServer, IO_TIMEOUT};

#[test]
fn echoes_a_body_with_its_type() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/csv\r\nContent-Length: 11\r\n\r\na,b\r\n1,2\r\n.");
    let r = c.response(false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("text/csv"));
    assert_eq!(r.body, b"a,b\r\n1,2\r\n.");

    c.send(b"PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nxyz");
    let r = c.response(false);
    assert_eq!(r.header("Content-Type"), Some("application/octet-stream"));
    assert_eq!(r.body, b"xyz");

    c.send(b"GET /echo HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"");

    // HEAD: the head only, and the body that came with it is skipped.
    c.send(b"HEAD /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nskipGET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(true).header("Content-Length"), Some("4"));
    assert_eq!(c.response(false).body, b"012");
}

/// A closing request (HTTP/1.0, or `Connection: close`) still gets its body echoed: the
/// connection closes after the body, not after the head. Found by the lab's ab POST cells.
#[test]
fn a_closing_request_gets_its_whole_echo() {
    let server = TestServer::start(None);
    for (head, body) in [
        (&b"POST /echo HTTP/1.0\r\nContent-Length: 15\r\n\r\n"[..], &b"hello world 123"[..]),
        (
            &b"POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 5\r\n\r\n"[..],
            &b"hello"[..],
        ),
    ] {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        s.write_all(head).unwrap();
        // The body arrives after the head was answered, as from ab and curl.
        thread::sleep(std::time::Duration::from_millis(50));
        s.write_all(body).unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        assert!(got.ends_with(body), "{}", String::from_utf8_lossy(&got));
    }
}

#[test]
fn chunked_uploads_are_echoed_chunked() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    c.send(b"5;note=x\r\nhello\r\n");
    c.send(b"6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.header("Transfer-Encoding"), Some("chunked"));
    assert_eq!(r.header("Content-Length"), None);
    assert_eq!(r.body, b"hello world");
    // The connection carries on after the last chunk.
    c.send(b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"01");
}

#[test]
fn large_bodies_stream_both_ways() {
    let server = TestServer::start(None);
    let n = 8 << 20;
    let body: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
    let stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let upload = body.clone();
    // Send from one thread while this one reads: the server must stream, not buffer 8 MiB,
    // and neither side may deadlock on full socket buffers.
    let sender = thread::spawn(move || {
        writer.write_all(
            format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {n}\r\n\r\n").as_bytes(),
        )?;
        writer.write_all(&upload)
    });
    let mut reader = stream;
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        reader.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.contains(&format!("Content-Length: {n}\r\n")), "{head}");
    let mut echoed = vec![0u8; n];
    reader.read_exact(&mut echoed).unwrap();
    sender.join().unwrap().unwrap();
    assert!(echoed == body, "the echoed body differs");
}

#[test]
fn expect_100_continue_is_answered() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
    let interim = c.response(false);
    assert_eq!(interim.status, 100);
    c.send(b"ok");
    assert_eq!(c.response(false).body, b"ok");
}

#[test]
fn broken_uploads_end_the_connection() {
    let server = TestServer::start(None);
    // A bad chunk size after the response started: the response ends where it was and the
    // connection closes, so the client knows the upload was not taken whole.
    let mut c = server.client();
    c.send(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\nzz\r\n",
    );
    let all = c.read_all();
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\n2\r\nab\r\n"), "{text}");

    // Chunked in HTTP/1.0 is refused, as nginx does (request smuggling).
    let mut c = server.client();
    c.send(b"POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("Connection")), (400, Some("close")));
    assert!(c.is_closed());
}

#[test]
fn an_uploader_that_does_not_read_blocks_nobody() {
    let server = TestServer::start_with(herd_serve::ServeConfig {
        threads: 1,
        ..crate::harness::config(None)
    });
    let stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_write_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    // Upload 64 MiB to /echo and never read the echo: the server stops reading once its output
    // is full, the upload stalls on TCP flow control, and the worker goes on serving others.
    let uploader = thread::spawn(move || {
        let n = 64 << 20;
        let _ = writer.write_all(
            format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {n}\r\n\r\n").as_bytes(),
        );
        let block = vec![b'u'; 1 << 16];
        let mut sent = 0usize;
        while sent < n {
            match writer.write(&block) {
                Ok(k) => sent += k,
                Err(_) => break, // the write timeout: flow control stopped us, as it should
            }
        }
        sent
    });
    let sent = uploader.join().unwrap();
    assert!(sent < 64 << 20, "the server took everything without anyone reading: {sent}");
    for _ in 0..10 {
        assert_eq!(server.get("/bytes/3").body, b"012");
    }
    drop(stream);
}
