//! HTTP/2 with prior knowledge (h2c) on the plain listener: real clients (h2load, curl, nghttp
//! with tiny windows) get the protocol, the statuses and the exact bytes HTTP/1 gets; a raw
//! client checks the frames (SETTINGS, PING, CONTINUATION, HPACK indexing, flow control,
//! RST_STREAM, request bodies, held responses, GOAWAY on shutdown) and the counters.

use std::time::{Duration, Instant};

use herd_fileset::expected;
use herd_proto::h2::frame::kind;
use herd_proto::h2::{encode, ErrorCode, SettingId};

use crate::h2_client::{Got, H2Client, BIG_WINDOWS};
use crate::harness::{numbered_bytes, TempDir, TestServer};
use crate::tools;

fn url(server: &TestServer, path: &str) -> String {
    format!("http://{}{path}", server.addr())
}

#[test]
fn h2load_gets_h2c_and_every_response() {
    let server = TestServer::start(None);
    let report = tools::h2load(&["-n", "1000", "-c", "4", "-m", "10", &url(&server, "/bytes/100")]);
    assert!(report.contains("Application protocol: h2c"), "{report}");
    assert_eq!(tools::h2load_requests(&report), (1000, 1000, 0, 0), "{report}");
    assert!(report.contains("status codes: 1000 2xx, 0 3xx, 0 4xx, 0 5xx"), "{report}");
    // 100 bytes of data per response, and nothing else.
    assert!(report.contains("(100000) data"), "{report}");
    let stats = server.stop();
    assert_eq!(stats.n_h2_connections, 4);
    assert_eq!(stats.n_connections, 4);
    assert_eq!(stats.n_requests, 1000);
    assert_eq!(stats.by_route["/bytes"], 1000);
}

#[test]
fn curl_gets_the_same_bytes_as_over_http1() {
    let root = TempDir::new();
    let small = numbered_bytes(5000);
    let large = numbered_bytes(400_000);
    root.write("small.bin", &small);
    root.write("dir/large.bin", &large);
    let server = TestServer::start(Some(root.path()));
    let get = |path: &str| tools::curl(&["--http2-prior-knowledge", &url(&server, path)]);
    assert_eq!(get("/bytes/100000"), expected::generated(100_000));
    assert_eq!(get("/bytes/0"), b"");
    assert_eq!(get("/9x9"), expected::nine_by_nine());
    assert_eq!(get("/small.bin"), small);
    assert_eq!(get("/dir/large.bin"), large);
    let ranged = tools::curl(&[
        "--http2-prior-knowledge",
        "-r",
        "1000-1999",
        &url(&server, "/dir/large.bin"),
    ]);
    assert_eq!(ranged, &large[1000..2000]);
    // Status, headers and HEAD, as curl sees them.
    let head = String::from_utf8(tools::curl(&[
        "--http2-prior-knowledge",
        "-I",
        &url(&server, "/small.bin"),
    ]))
    .unwrap();
    assert!(head.starts_with("HTTP/2 200 \r\n"), "{head}");
    assert!(head.contains("\r\ncontent-length: 5000\r\n"), "{head}");
    assert!(head.contains("\r\nserver: herd/"), "{head}");
    assert!(head.contains("\r\ndate: "), "{head}");
    let status = |path: &str| {
        String::from_utf8(tools::curl(&[
            "--http2-prior-knowledge",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{http_version}",
            &url(&server, path),
        ]))
        .unwrap()
    };
    assert_eq!(status("/nope"), "404 2");
    assert_eq!(status("/status/503"), "503 2");
    assert_eq!(status("/bytes/x"), "400 2");
    let echoed = tools::curl(&[
        "--http2-prior-knowledge",
        "--data-binary",
        "hello, h2",
        &url(&server, "/echo"),
    ]);
    assert_eq!(echoed, b"hello, h2");
    let stats = server.stop();
    assert_eq!(stats.n_h2_connections, stats.n_connections);
    assert_eq!(stats.n_requests, 11);
}

/// nghttp with 255-byte windows (stream and connection): every byte still comes, in order,
/// over thousands of WINDOW_UPDATEs, on several streams at once.
#[test]
fn tiny_windows_still_get_every_byte() {
    let root = TempDir::new();
    let file = numbered_bytes(100_000);
    root.write("f.bin", &file);
    let server = TestServer::start(Some(root.path()));
    let body = tools::nghttp(&["-w", "8", "-W", "8", &url(&server, "/bytes/300000")]);
    assert!(body == expected::generated(300_000), "{} bytes, not the pattern", body.len());
    let body = tools::nghttp(&["-w", "8", "-W", "8", &url(&server, "/f.bin")]);
    assert!(body == file, "{} bytes, not the file", body.len());
    // Three streams on one connection, sharing a 511-byte connection window: nghttp prints
    // DATA as it comes, the streams interleaved, so compare what came byte value by value.
    let bodies = tools::nghttp(&["-w", "10", "-W", "9", "-m", "3", &url(&server, "/bytes/50000")]);
    let count = |bytes: &[u8]| {
        let mut n = [0usize; 256];
        bytes.iter().for_each(|&b| n[b as usize] += 1);
        n
    };
    let one = count(&expected::generated(50_000));
    assert_eq!(count(&bodies), one.map(|n| 3 * n));
    let stats = server.stop();
    assert_eq!(stats.n_h2_connections, 3);
}

#[test]
fn settings_ping_and_an_all_indexed_second_response() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    // The server's SETTINGS come first, then its connection WINDOW_UPDATE and the ACK of ours.
    match c.next() {
        Got::Settings { ack: false, values } => {
            assert!(values.contains(&(SettingId::MAX_CONCURRENT_STREAMS.0, 128)), "{values:?}");
            assert!(values.iter().any(|&(id, _)| id == SettingId::INITIAL_WINDOW_SIZE.0));
        }
        other => panic!("first frame {other:?}"),
    }
    assert!(matches!(c.next(), Got::WindowUpdate { stream: 0, .. }));
    assert_eq!(c.next(), Got::Settings { ack: true, values: vec![] });
    let mut ping = Vec::new();
    encode::ping(&mut ping, false, *b"herd-h2!");
    c.send(&ping);
    assert_eq!(c.next(), Got::Ping { ack: true, payload: *b"herd-h2!" });

    let first = c.get(1, "/bytes/100");
    assert_eq!((first.status(), first.body.as_slice()), (200, &expected::generated(100)[..]));
    assert_eq!(first.field("content-length"), Some("100"));
    assert_eq!(first.field("content-type"), Some("application/octet-stream"));
    let second = c.get(3, "/bytes/100");
    assert_eq!(second.fields, first.fields);
    // :status 200 from the static table, the other four fields from the dynamic one: one
    // byte each (a Date that ticked over in between costs a literal, hence the third try).
    let third = c.get(5, "/bytes/100");
    assert!(
        second.block_len == 5 || third.block_len == 5,
        "blocks of {}, {} and {} bytes",
        first.block_len,
        second.block_len,
        third.block_len
    );
    assert!(first.block_len > 20, "the first block carries literals: {}", first.block_len);
}

/// A header block in HEADERS and two CONTINUATION frames, and trailers after a body.
#[test]
fn continuation_frames_and_trailers() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let long = "v".repeat(3000);
    let block = c.block("GET", "/bytes/7", &[("x-long", &long)]);
    let (a, rest) = block.split_at(10);
    let (b, d) = rest.split_at(rest.len() / 2);
    let mut out = crate::h2_client::frame_header(a.len() as u32, kind::HEADERS, 0x1, 1);
    out.extend_from_slice(a);
    out.extend(crate::h2_client::frame_header(b.len() as u32, kind::CONTINUATION, 0, 1));
    out.extend_from_slice(b);
    out.extend(crate::h2_client::frame_header(d.len() as u32, kind::CONTINUATION, 0x4, 1));
    out.extend_from_slice(d);
    c.send(&out);
    assert_eq!(c.response(1).body, b"0123456");

    // A POST with a body and trailers; the discarded body does not matter to /bytes.
    c.request_with(3, "POST", "/echo", &[("content-length", "5")], false);
    let mut out = Vec::new();
    encode::data(&mut out, 3, b"hello", false);
    let trailers = c.encode(&[("x-checksum", "1")]);
    encode::headers(&mut out, 3, &trailers, true, 16_384);
    c.send(&out);
    let r = c.response(3);
    assert_eq!((r.status(), r.body.as_slice()), (200, &b"hello"[..]));
    // Trailers with a pseudo-field are malformed: the stream is reset.
    c.request_with(5, "POST", "/echo", &[], false);
    let trailers = c.encode(&[(":path", "/x")]);
    let mut out = Vec::new();
    encode::headers(&mut out, 5, &trailers, true, 16_384);
    c.send(&out);
    let got = c.next_matching(|g| matches!(g, Got::RstStream { .. }));
    assert_eq!(got, Got::RstStream { stream: 5, code: ErrorCode::PROTOCOL_ERROR });
}

/// Request bodies: discarded by a page that does not read them (and credited back, so a large
/// upload does not stall), echoed by /echo with or without a content-length.
#[test]
fn request_bodies_are_read() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    // 6 MiB to /status/200: more than the connection window (4 MiB) and a stream's (1 MiB).
    c.request(1, "POST", "/status/200", false);
    let chunk = vec![b'x'; 16_384];
    let mut credit: i64 = 65_535;
    let mut stream_credit: i64 = 65_535;
    let mut sent = 0;
    let mut kept = Vec::new();
    while sent < 6 << 20 {
        while credit < 16_384 || stream_credit < 16_384 {
            match c.next() {
                Got::WindowUpdate { stream: 0, increment } => credit += i64::from(increment),
                Got::WindowUpdate { stream: 1, increment } => stream_credit += i64::from(increment),
                Got::Settings { ack: false, values } => {
                    for (id, v) in values {
                        if id == SettingId::INITIAL_WINDOW_SIZE.0 {
                            stream_credit += i64::from(v) - 65_535;
                        }
                    }
                }
                other => kept.push(other),
            }
        }
        let mut out = Vec::new();
        encode::data(&mut out, 1, &chunk, false);
        c.send(&out);
        credit -= 16_384;
        stream_credit -= 16_384;
        sent += 16_384;
    }
    let mut out = Vec::new();
    encode::data(&mut out, 1, b"", true);
    c.send(&out);
    // The answer (405: /status takes no POST; the body is read and dropped) came at once.
    c.keep(kept);
    assert_eq!(c.response(1).status(), 405);

    let body = numbered_bytes(200_000);
    for (stream, length) in [(3, Some("200000")), (5, None)] {
        let extra: Vec<(&str, &str)> = length.map(|l| ("content-length", l)).into_iter().collect();
        c.request_with(stream, "PUT", "/echo", &extra, false);
        for piece in body.chunks(10_000) {
            let mut out = Vec::new();
            encode::data(&mut out, stream, piece, false);
            c.send(&out);
        }
        let mut out = Vec::new();
        encode::data(&mut out, stream, b"", true);
        c.send(&out);
        let r = c.response(stream);
        assert_eq!(r.status(), 200);
        assert_eq!(r.field("content-length"), length);
        assert!(r.field("transfer-encoding").is_none());
        assert_eq!(r.body, body);
    }
}

/// A body shorter or longer than its content-length is malformed: the stream is reset, the
/// connection goes on.
#[test]
fn a_body_that_contradicts_its_length_resets_the_stream() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    for (stream, body) in [(1, &b"abc"[..]), (3, b"abcdefgh")] {
        c.request_with(stream, "POST", "/echo", &[("content-length", "5")], false);
        let mut out = Vec::new();
        encode::data(&mut out, stream, body, true);
        c.send(&out);
        let got = c.next_matching(|g| matches!(g, Got::RstStream { .. }));
        assert_eq!(got, Got::RstStream { stream, code: ErrorCode::PROTOCOL_ERROR });
    }
    assert_eq!(c.get(5, "/bytes/3").body, b"012");
}

/// RST_STREAM from the client stops that stream's DATA; the others go on.
#[test]
fn a_reset_stream_gets_no_more_data() {
    let server = TestServer::start(None);
    // 64 KiB windows: the server must wait for WINDOW_UPDATEs that never come.
    let mut c = H2Client::connect(server.addr(), &[]);
    c.request(1, "GET", "/bytes/100000000", true);
    let mut got = 0;
    while got < 65_535 {
        if let Got::Data { stream: 1, data, .. } = c.next() {
            got += data.len();
        }
    }
    let mut out = Vec::new();
    encode::rst_stream(&mut out, 1, ErrorCode::CANCEL);
    // Credit that, if stream 1 were still alive, it would use at once.
    encode::window_update(&mut out, 0, 1 << 20);
    encode::window_update(&mut out, 1, 1 << 20);
    encode::ping(&mut out, false, *b"after-rs");
    c.send(&out);
    loop {
        match c.next() {
            Got::Ping { ack: true, .. } => break,
            Got::Data { stream: 1, .. } => panic!("DATA on a reset stream"),
            _ => {}
        }
    }
    let r = c.get(3, "/bytes/10");
    assert_eq!(r.body, b"0123456789");
}

/// A stream's window of 0 holds its DATA back; each WINDOW_UPDATE lets exactly that much go.
#[test]
fn data_waits_for_the_clients_window() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), &[(SettingId::INITIAL_WINDOW_SIZE, 0)]);
    c.request(1, "GET", "/bytes/10", true);
    let headers = c.next_matching(|g| matches!(g, Got::Headers { .. }));
    assert!(matches!(headers, Got::Headers { stream: 1, end_stream: false, .. }));
    let mut out = Vec::new();
    encode::window_update(&mut out, 1, 4);
    encode::ping(&mut out, false, [0; 8]);
    c.send(&out);
    assert_eq!(
        c.next_matching(|g| matches!(g, Got::Data { .. })),
        Got::Data { stream: 1, data: b"0123".to_vec(), end_stream: false }
    );
    let mut out = Vec::new();
    encode::window_update(&mut out, 1, 100);
    c.send(&out);
    assert_eq!(
        c.next_matching(|g| matches!(g, Got::Data { .. })),
        Got::Data { stream: 1, data: b"456789".to_vec(), end_stream: true }
    );
}

/// Held responses: the stream waits, the others do not; the counters count each once.
#[test]
fn a_held_response_does_not_hold_the_connection() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let start = Instant::now();
    // Long enough that a busy machine cannot make the quick answer look held.
    c.request(1, "GET", "/sleep?ms=1500", true);
    let quick = c.get(3, "/bytes/2");
    assert_eq!(quick.body, b"01");
    assert!(start.elapsed() < Duration::from_millis(1500), "{:?}", start.elapsed());
    let slow = c.response(1);
    assert_eq!((slow.status(), slow.body.as_slice()), (200, &b"ok\n"[..]));
    assert!(start.elapsed() >= Duration::from_millis(1500));
    let stats = server.stop();
    assert_eq!(stats.by_route["/sleep"], 1);
    assert_eq!(stats.by_route["/bytes"], 1);
}

/// Stopping the server: GOAWAY NO_ERROR naming the last stream, the stream in flight still
/// answered, then the close; `run` returns.
#[test]
fn shutdown_sends_goaway_and_finishes_the_streams_in_flight() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    c.request(1, "GET", "/sleep?ms=300", true);
    // The request has been read once its stream is counted.
    assert_eq!(c.get(3, "/bytes/1").body, b"0");
    let stopping = std::thread::spawn(move || server.stop());
    let goaway = c.next_matching(|g| matches!(g, Got::GoAway { .. }));
    assert_eq!(
        goaway,
        Got::GoAway { last_stream: 3, code: ErrorCode::NO_ERROR, debug: String::new() }
    );
    let slow = c.response(1);
    assert_eq!(slow.body, b"ok\n");
    assert!(c.closes_within(Duration::from_secs(5)));
    let stats = stopping.join().unwrap();
    assert_eq!(stats.n_requests, 2);
}

/// Streams past MAX_CONCURRENT_STREAMS are refused, the others answered.
#[test]
fn streams_beyond_the_limit_are_refused() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let mut out = Vec::new();
    for i in 0..130u32 {
        let block = c.block("GET", "/sleep?ms=200", &[]);
        encode::headers(&mut out, 1 + 2 * i, &block, true, 16_384);
    }
    c.send(&out);
    let refused: Vec<u32> = (0..2)
        .map(|_| match c.next_matching(|g| matches!(g, Got::RstStream { .. })) {
            Got::RstStream { stream, code } => {
                assert_eq!(code, ErrorCode::REFUSED_STREAM);
                stream
            }
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(refused, [257, 259]);
    for i in 0..128u32 {
        assert_eq!(c.response(1 + 2 * i).status(), 200);
    }
}

/// HTTP/1 and h2c on the same port, and a preface-like HTTP/1 request line is HTTP/1.
#[test]
fn http1_still_works_beside_h2c() {
    let server = TestServer::start(None);
    assert_eq!(server.get("/bytes/5").body, b"01234");
    let mut c = crate::harness::Client::connect(server.addr());
    c.send(b"PRI /x HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).status, 405);
    let stats = server.stop();
    assert_eq!(stats.n_h2_connections, 0);
}

/// Stopping with idle HTTP/2 clients that keep their connections open does not wait for them.
#[test]
fn stopping_does_not_wait_for_idle_clients() {
    let server = TestServer::start(None);
    let mut clients: Vec<H2Client> =
        (0..3).map(|_| H2Client::connect(server.addr(), BIG_WINDOWS)).collect();
    for c in &mut clients {
        assert_eq!(c.get(1, "/bytes/1").body, b"0");
    }
    let start = Instant::now();
    let stats = server.stop();
    assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
    assert_eq!(stats.n_h2_connections, 3);
    for c in &mut clients {
        let goaway = c.next_matching(|g| matches!(g, Got::GoAway { .. }));
        assert!(matches!(goaway, Got::GoAway { code: ErrorCode::NO_ERROR, .. }));
        assert!(c.closes_within(Duration::from_secs(1)));
    }
}
