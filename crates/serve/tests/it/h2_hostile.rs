//! Hostile HTTP/2 clients, raw bytes: each broken rule or abuse ends in GOAWAY with RFC 9113's
//! code and a close (or a reset stream, or a 431), in bounded time, and the server goes on
//! serving others.

use std::time::Duration;

use herd_proto::h2::frame::{flag, kind};
use herd_proto::h2::{encode, ErrorCode, SettingId, PREFACE};

use crate::h2_client::{frame_header, preface_and_settings, Got, H2Client, BIG_WINDOWS};
use crate::harness::{self, TestServer};

/// After each case: the server still answers a well-behaved client.
fn still_serves(server: &TestServer) {
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    assert_eq!(c.get(1, "/bytes/3").body, b"012");
}

fn goaway_after(server: &TestServer, bytes: &[u8]) -> (ErrorCode, String) {
    let mut c = H2Client::raw(server.addr());
    c.send(&preface_and_settings());
    c.send(bytes);
    c.expect_goaway_and_close()
}

#[test]
fn a_first_frame_other_than_settings() {
    let server = TestServer::start(None);
    let mut c = H2Client::raw(server.addr());
    let mut out = PREFACE.to_vec();
    encode::ping(&mut out, false, [1; 8]);
    c.send(&out);
    let (code, debug) = c.expect_goaway_and_close();
    assert_eq!(code, ErrorCode::PROTOCOL_ERROR);
    assert!(debug.contains("first frame must be SETTINGS"), "{debug}");
    still_serves(&server);
}

/// A preface with its last bytes wrong, after the preface's request line: `PRI *
/// HTTP/2.0` is no HTTP/1 request, and the client means HTTP/2, so it is HTTP/2's invalid
/// preface, a connection error PROTOCOL_ERROR (RFC 9113 §3.4), after the server's SETTINGS.
/// (Until h2spec was run, this was answered as HTTP/1 garbage, with 400.)
#[test]
fn a_preface_broken_after_its_request_line_is_a_protocol_error() {
    let server = TestServer::start(None);
    let mut c = H2Client::raw(server.addr());
    c.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n");
    let (code, debug) = c.expect_goaway_and_close();
    assert_eq!(code, ErrorCode::PROTOCOL_ERROR);
    assert!(debug.contains("preface"), "{debug}");
    still_serves(&server);
}

/// Bytes that are not the preface's request line are HTTP/1: on the plain port a line that
/// is not a request is refused with 400 and a close (RFC 9112 §2.2).
#[test]
fn other_garbage_is_http1_garbage() {
    let server = TestServer::start(None);
    let mut c = harness::Client::connect(server.addr());
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 400);
    assert!(c.is_closed());
    still_serves(&server);
}

#[test]
fn a_frame_larger_than_allowed() {
    let server = TestServer::start(None);
    let mut out = frame_header(20_000, kind::HEADERS, flag::END_HEADERS, 1);
    out.resize(out.len() + 20_000, 0);
    let (code, debug) = goaway_after(&server, &out);
    assert_eq!(code, ErrorCode::FRAME_SIZE_ERROR);
    assert!(debug.contains("20000"), "{debug}");
    still_serves(&server);
}

#[test]
fn hpack_garbage() {
    let server = TestServer::start(None);
    let mut out = Vec::new();
    encode::headers(&mut out, 1, &[0xff; 8], true, 16_384);
    let (code, _) = goaway_after(&server, &out);
    assert_eq!(code, ErrorCode::COMPRESSION_ERROR);
    // An index past both tables.
    let mut out = Vec::new();
    encode::headers(&mut out, 1, &[0xfe], true, 16_384);
    let (code, debug) = goaway_after(&server, &out);
    assert_eq!(code, ErrorCode::COMPRESSION_ERROR);
    assert!(debug.contains("index"), "{debug}");
    still_serves(&server);
}

/// CONTINUATION frames without end (CVE-2024-27316): bounded by bytes, and by count when
/// they are empty.
#[test]
fn endless_continuation() {
    let server = TestServer::start(None);
    for fragment in [1000usize, 0] {
        let mut c = H2Client::raw(server.addr());
        c.send(&preface_and_settings());
        let mut out = frame_header(0, kind::HEADERS, 0, 1);
        for _ in 0..1000 {
            out.extend(frame_header(fragment as u32, kind::CONTINUATION, 0, 1));
            out.resize(out.len() + fragment, b'a');
        }
        // The server stops reading once it has had enough: the rest may not go out.
        let _ = c.try_send(&out);
        let (code, debug) = c.expect_goaway_and_close();
        assert_eq!(code, ErrorCode::ENHANCE_YOUR_CALM, "{debug}");
    }
    still_serves(&server);
}

/// "Rapid reset" (CVE-2023-44487): requests opened and reset at once, thousands of times.
#[test]
fn a_reset_flood() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let mut writer = c.tcp().try_clone().unwrap();
    let block = c.block("GET", "/bytes/1", &[]);
    // After the first request the block is all indexes; send that one from now on.
    let block_again = c.block("GET", "/bytes/1", &[]);
    let flood = std::thread::spawn(move || {
        use std::io::Write;
        for i in 0..5000u32 {
            let id = 1 + 2 * i;
            let mut out = Vec::new();
            encode::headers(&mut out, id, if i == 0 { &block } else { &block_again }, true, 16_384);
            encode::rst_stream(&mut out, id, ErrorCode::CANCEL);
            if writer.write_all(&out).is_err() {
                return i;
            }
        }
        5000
    });
    let (code, debug) = c.expect_goaway_and_close();
    assert_eq!(code, ErrorCode::ENHANCE_YOUR_CALM, "{debug}");
    let sent = flood.join().unwrap();
    assert!(sent > 1000, "GOAWAY after only {sent} resets");
    still_serves(&server);
}

/// An HPACK bomb: one large field inserted once, referenced until the list passes the limit
/// (64 KiB): the request gets 431, and the connection (whose table is intact) goes on.
#[test]
fn a_header_list_past_the_limit_gets_431() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let big = "b".repeat(3000);
    let mut fields = vec![(":method", "GET"), (":scheme", "http"), (":path", "/bytes/1")];
    fields.extend(std::iter::repeat_n(("x-bomb", big.as_str()), 30));
    let block = c.encode(&fields);
    assert!(block.len() < 4000, "the bomb is small: {} bytes", block.len());
    let mut out = Vec::new();
    encode::headers(&mut out, 1, &block, true, 16_384);
    c.send(&out);
    assert_eq!(c.response(1).status(), 431);
    assert_eq!(c.get(3, "/bytes/2").body, b"01");
}

#[test]
fn stream_ids_and_states_a_client_cannot_use() {
    let server = TestServer::start(None);
    // An even stream.
    let mut c = H2Client::connect(server.addr(), &[]);
    c.request(2, "GET", "/", true);
    assert_eq!(c.expect_goaway_and_close().0, ErrorCode::PROTOCOL_ERROR);
    // DATA on a stream never opened.
    let mut out = Vec::new();
    encode::data(&mut out, 7, b"x", true);
    assert_eq!(goaway_after(&server, &out).0, ErrorCode::PROTOCOL_ERROR);
    // PUSH_PROMISE from a client.
    let mut out = Vec::new();
    encode::push_promise(&mut out, 1, 2, &[0x82], 16_384);
    assert_eq!(goaway_after(&server, &out).0, ErrorCode::PROTOCOL_ERROR);
    // A WINDOW_UPDATE past 2^31-1 on the connection.
    let mut out = Vec::new();
    encode::window_update(&mut out, 0, (1 << 31) - 1);
    assert_eq!(goaway_after(&server, &out).0, ErrorCode::FLOW_CONTROL_ERROR);
    still_serves(&server);
}

/// DATA past the window the server gave: an echo the client does not read cannot make the
/// server buffer more than a stream's window (1 MiB): the stream is reset.
#[test]
fn data_beyond_the_window_resets_the_stream() {
    let server = TestServer::start(None);
    let mut c = H2Client::connect(server.addr(), &[(SettingId::INITIAL_WINDOW_SIZE, 0)]);
    c.request(1, "POST", "/echo", false);
    let chunk = vec![b'e'; 16_384];
    let mut out = Vec::new();
    for _ in 0..(1 << 20) / 16_384 + 1 {
        encode::data(&mut out, 1, &chunk, false);
    }
    c.send(&out);
    let got = c.next_matching(|g| matches!(g, Got::RstStream { .. }));
    assert_eq!(got, Got::RstStream { stream: 1, code: ErrorCode::FLOW_CONTROL_ERROR });
}

/// A client that never replenishes its window stalls its response: the idle timeout closes
/// the connection, as it closes an idle HTTP/1 one.
#[test]
fn a_window_never_replenished_ends_at_the_idle_timeout() {
    let mut config = harness::config(None);
    config.idle_timeout = Duration::from_millis(500);
    let server = TestServer::start_with(config);
    let mut c = H2Client::connect(server.addr(), &[(SettingId::INITIAL_WINDOW_SIZE, 0)]);
    c.request(1, "GET", "/bytes/100", true);
    let started = std::time::Instant::now();
    assert!(c.closes_within(Duration::from_secs(5)));
    assert!(started.elapsed() >= Duration::from_millis(400), "{:?}", started.elapsed());
}
