//! The rules of RFC 9113 a client can break, each sent to a real [`H2Conn`] over a loopback
//! socket as frames built byte by byte, and the answer read back frame by frame: the stream
//! or connection error and its code, or nothing when the RFC says to ignore the frame. A
//! PING after the frame under test proves it was handled (its ACK comes after any answer),
//! so no test waits for something not to happen.

use std::io::{self, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime};

use super::H2Conn;
use crate::access_log::AccessLog;
use crate::config::ServeConfig;
use crate::conn::Drive;
use crate::date::DateCache;
use crate::file_cache::FileCache;
use crate::server::Server;
use crate::transport::Transport;
use crate::worker::Ctx;

// Frame types and flags (RFC 9113 §6), and the error codes (§7).
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const PRIORITY: u8 = 0x2;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PRIORITY_FLAG: u8 = 0x20;
const PROTOCOL_ERROR: u32 = 0x1;
const STREAM_CLOSED: u32 = 0x5;

/// A frame: the nine header bytes (§4.1) and the payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A GET of `path` as an HPACK block of literals that leave the dynamic table alone:
/// `:method GET` (static 2), `:scheme http` (static 6), `:path` and `:authority` literal
/// without indexing, their names static 4 and 1.
fn get(path: &str) -> Vec<u8> {
    let mut b = vec![0x82, 0x86, 0x04, path.len() as u8];
    b.extend_from_slice(path.as_bytes());
    b.extend_from_slice(&[0x01, 9]);
    b.extend_from_slice(b"localhost");
    b
}

/// HEADERS with END_HEADERS (and END_STREAM when `end`) carrying `block`.
fn headers(stream: u32, end: bool, block: &[u8]) -> Vec<u8> {
    let flags = END_HEADERS | if end { END_STREAM } else { 0 };
    frame(HEADERS, flags, stream, block)
}

/// A stream held open by its response (`/sleep`), its request ended or not.
fn held(stream: u32, end: bool) -> Vec<u8> {
    headers(stream, end, &get("/sleep?ms=60000"))
}

fn rst_stream(stream: u32, code: u32) -> Vec<u8> {
    frame(RST_STREAM, 0, stream, &code.to_be_bytes())
}

fn ping() -> Vec<u8> {
    frame(PING, 0, 0, b"herd-h2!")
}

/// One frame the server sent: type, flags, stream and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sent {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

impl Sent {
    /// The error code of a RST_STREAM or GOAWAY.
    fn code(&self) -> u32 {
        let at = if self.kind == GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().unwrap())
    }
}

/// A server's shared state, once for all tests (the connections are each test's own).
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        Server::bind(ServeConfig { listen: loopback, threads: 1, ..ServeConfig::default() })
            .unwrap()
    })
}

/// A client's socket and the server's HTTP/2 connection on the other end, driven by hand.
struct Peer {
    conn: H2Conn,
    client: TcpStream,
    date: DateCache,
    log: AccessLog,
    files: FileCache,
    closed: bool,
}

impl Peer {
    /// A connection that has read `first` as its first bytes (as the HTTP/1 side hands them
    /// over), with nothing sent yet.
    fn raw(first: &[u8]) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, addr) = listener.accept().unwrap();
        accepted.set_nonblocking(true).unwrap();
        // As the worker sets it: what the server sends unasked (a GOAWAY) leaves at once.
        accepted.set_nodelay(true).unwrap();
        client.set_nonblocking(true).unwrap();
        let io = Transport::Plain(mio::net::TcpStream::from_std(accepted));
        let conn = H2Conn::new(io, addr, first, server().shared.limits(), Instant::now());
        Peer {
            conn,
            client,
            date: DateCache::new(SystemTime::UNIX_EPOCH),
            log: AccessLog::new(false),
            files: FileCache::default(),
            closed: false,
        }
    }

    /// A connection past the preface and the client's SETTINGS, the server's first frames
    /// read.
    fn new() -> Peer {
        let mut p = Peer::raw(b"");
        let mut start = herd_proto::h2::PREFACE.to_vec();
        start.extend(frame(SETTINGS, 0, 0, &[]));
        let first = p.send(&start);
        assert!(first.iter().any(|f| f.kind == SETTINGS && f.flags == 0), "{first:?}");
        p
    }

    /// Sends `bytes`, drives the connection until it waits, and returns what it sent.
    fn send(&mut self, bytes: &[u8]) -> Vec<Sent> {
        self.client.write_all(bytes).unwrap();
        self.drive();
        self.read()
    }

    /// Sends `bytes` and then a PING, and returns what the server sent before the PING's
    /// ACK (so, all its answers to `bytes`), or all it sent if it ended the connection.
    fn answer(&mut self, bytes: &[u8]) -> Vec<Sent> {
        let mut all = bytes.to_vec();
        all.extend(ping());
        let mut sent = self.send(&all);
        let ack = sent.iter().position(|f| f.kind == PING && f.flags == 1);
        if let Some(i) = ack {
            sent.truncate(i);
        }
        let ended = self.closed || self.conn.only_lingering();
        assert!(ack.is_some() || ended, "no PING ACK and no close: {sent:?}");
        sent
    }

    fn drive(&mut self) {
        let shared = &server().shared;
        for _ in 0..64 {
            let mut ctx = Ctx {
                shared,
                counters: &shared.counters[0],
                date: &self.date,
                log: &mut self.log,
                files: &mut self.files,
                now: Instant::now(),
            };
            self.conn.readable_event(false);
            match self.conn.drive(&mut ctx) {
                Drive::Yield => {}
                Drive::Close => {
                    self.closed = true;
                    return;
                }
                Drive::Wait | Drive::Sleep(_) | Drive::Upgrade => return,
            }
        }
    }

    /// The frames the server has sent since the last read.
    fn read(&mut self) -> Vec<Sent> {
        let mut bytes = Vec::new();
        let mut buf = [0; 16384];
        loop {
            match self.client.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        let mut frames = Vec::new();
        let mut rest = &bytes[..];
        while rest.len() >= 9 {
            let len = u32::from_be_bytes([0, rest[0], rest[1], rest[2]]) as usize;
            let stream = u32::from_be_bytes(rest[5..9].try_into().unwrap());
            frames.push(Sent {
                kind: rest[3],
                flags: rest[4],
                stream,
                payload: rest[9..9 + len].to_vec(),
            });
            rest = &rest[9 + len..];
        }
        assert!(rest.is_empty(), "a frame cut short: {rest:02x?}");
        frames
    }
}

/// The one frame of `kind` in `sent`.
fn only(sent: &[Sent], kind: u8) -> Sent {
    let of_kind: Vec<&Sent> = sent.iter().filter(|f| f.kind == kind).collect();
    assert_eq!(of_kind.len(), 1, "one frame of type {kind} in {sent:?}");
    of_kind[0].clone()
}

/// Asserts `sent` is exactly RST_STREAM on `stream` with `code`, and the connection is open.
fn assert_reset(p: &Peer, sent: &[Sent], stream: u32, code: u32) {
    let rst = only(sent, RST_STREAM);
    assert_eq!((rst.stream, rst.code()), (stream, code), "{sent:?}");
    assert!(sent.iter().all(|f| f.kind != GOAWAY), "{sent:?}");
    assert!(!p.closed, "a stream error closed the connection");
}

/// Asserts `sent` ends the connection with GOAWAY `code` naming `last` as the last stream,
/// and the connection closes.
fn assert_goaway(p: &mut Peer, sent: &[Sent], last: u32, code: u32) {
    let goaway = only(sent, GOAWAY);
    let named = u32::from_be_bytes(goaway.payload[..4].try_into().unwrap());
    assert_eq!((named, goaway.code()), (last, code), "{sent:?}");
    // Nothing else is served: the connection closes (lingering once the GOAWAY is out).
    for _ in 0..10 {
        if p.closed || p.conn.only_lingering() {
            return;
        }
        p.drive();
    }
    panic!("the connection did not close after GOAWAY");
}

// ---- half-closed (remote): §5.1 ----

#[test]
fn data_on_a_half_closed_remote_stream_is_stream_closed() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, true)), []);
    let sent = p.answer(&frame(DATA, END_STREAM, 1, b"late"));
    assert_reset(&p, &sent, 1, STREAM_CLOSED);
}

#[test]
fn headers_on_a_half_closed_remote_stream_is_stream_closed() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, true)), []);
    // Trailers after END_STREAM: STREAM_CLOSED, not the PROTOCOL_ERROR of bad trailers.
    let sent = p.answer(&headers(1, true, &[0x40, 1, b'x', 1, b'y']));
    assert_reset(&p, &sent, 1, STREAM_CLOSED);
}

#[test]
fn an_empty_data_frame_on_a_half_closed_remote_stream_is_stream_closed() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, true)), []);
    let sent = p.answer(&frame(DATA, 0, 1, b""));
    assert_reset(&p, &sent, 1, STREAM_CLOSED);
}

// ---- closed: §5.1, §6.1 ----

#[test]
fn frames_after_the_server_s_reset_are_ignored() {
    let mut p = Peer::new();
    // An uppercase field name: a malformed request, reset PROTOCOL_ERROR (§8.2.1).
    let mut bad = get("/");
    bad.extend_from_slice(&[0x00, 1, b'X', 1, b'y']);
    let sent = p.answer(&headers(1, false, &bad));
    assert_reset(&p, &sent, 1, PROTOCOL_ERROR);
    // What the client had in flight on it is dropped without an answer (§5.1 closed).
    let mut late = frame(DATA, 0, 1, b"body");
    late.extend(headers(1, true, &[0x40, 1, b'x', 1, b'y']));
    late.extend(frame(WINDOW_UPDATE, 0, 1, &[0, 0, 1, 0]));
    late.extend(rst_stream(1, 0x8));
    assert_eq!(p.answer(&late), []);
}

#[test]
fn data_after_the_client_s_reset_is_stream_closed() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, false)), []);
    assert_eq!(p.answer(&rst_stream(1, 0x8)), []);
    let sent = p.answer(&frame(DATA, END_STREAM, 1, b"late"));
    assert_reset(&p, &sent, 1, STREAM_CLOSED);
    // Having answered it, the server ignores what else comes on it.
    assert_eq!(p.answer(&frame(DATA, 0, 1, b"later")), []);
}

#[test]
fn headers_after_the_client_s_reset_end_the_connection_with_stream_closed() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, false)), []);
    assert_eq!(p.answer(&rst_stream(1, 0x8)), []);
    let sent = p.answer(&held(1, true));
    assert_goaway(&mut p, &sent, 1, STREAM_CLOSED);
}

#[test]
fn frames_on_a_stream_both_sides_ended_are_answered() {
    let mut p = Peer::new();
    let sent = p.answer(&headers(1, true, &get("/status/204")));
    let head = only(&sent, HEADERS);
    assert_eq!((head.stream, head.flags & END_STREAM), (1, END_STREAM));
    // WINDOW_UPDATE, RST_STREAM and PRIORITY may still come (§5.1): ignored.
    let mut allowed = frame(WINDOW_UPDATE, 0, 1, &[0, 0, 1, 0]);
    allowed.extend(frame(PRIORITY, 0, 1, &[0, 0, 0, 0, 15]));
    allowed.extend(rst_stream(1, 0x8));
    assert_eq!(p.answer(&allowed), []);
    // DATA is a stream error (§6.1).
    let sent = p.answer(&frame(DATA, END_STREAM, 1, b"late"));
    assert_reset(&p, &sent, 1, STREAM_CLOSED);

    let mut p = Peer::new();
    p.answer(&headers(1, true, &get("/status/204")));
    // HEADERS again on it: the connection ends with STREAM_CLOSED (§5.1).
    let sent = p.answer(&headers(1, true, &get("/status/204")));
    assert_goaway(&mut p, &sent, 1, STREAM_CLOSED);
}

// ---- stream identifiers: §5.1, §5.1.1 ----

#[test]
fn stream_ids_that_go_backwards_are_a_protocol_error() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(5, true)), []);
    // Stream 3 was never opened: using it now is not a new stream (§5.1.1).
    let sent = p.answer(&held(3, true));
    assert_goaway(&mut p, &sent, 5, PROTOCOL_ERROR);
}

#[test]
fn even_stream_ids_from_the_client_are_a_protocol_error() {
    let mut p = Peer::new();
    let sent = p.answer(&held(2, true));
    assert_goaway(&mut p, &sent, 0, PROTOCOL_ERROR);

    // Below the last stream opened, an even stream is still idle: the server opens none.
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(3, false)), []);
    let sent = p.answer(&frame(DATA, 0, 2, b"x"));
    assert_goaway(&mut p, &sent, 3, PROTOCOL_ERROR);
}

#[test]
fn frames_on_idle_streams_are_a_protocol_error() {
    for bytes in
        [frame(DATA, 0, 1, b"x"), rst_stream(1, 0x8), frame(WINDOW_UPDATE, 0, 1, &[0, 0, 1, 0])]
    {
        let mut p = Peer::new();
        let sent = p.answer(&bytes);
        assert_goaway(&mut p, &sent, 0, PROTOCOL_ERROR);
    }
    // PRIORITY may come on an idle stream, and leaves it idle (§5.1).
    let mut p = Peer::new();
    assert_eq!(p.answer(&frame(PRIORITY, 0, 7, &[0, 0, 0, 1, 15])), []);
    assert_eq!(p.answer(&held(1, true)), [], "stream 1 is still new after 7's PRIORITY");
}

// ---- a stream that depends on itself: §5.3.1 ----

#[test]
fn headers_that_depend_on_their_own_stream_are_a_stream_error() {
    let mut p = Peer::new();
    // PRIORITY flag: exclusive bit clear, dependency 1 (itself), weight 16; then a block
    // whose :authority enters the dynamic table (literal with incremental indexing, 0x41).
    let mut payload = vec![0, 0, 0, 1, 15, 0x82, 0x86, 0x84, 0x41, 9];
    payload.extend_from_slice(b"localhost");
    let bytes = frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, &payload);
    let sent = p.answer(&bytes);
    assert_reset(&p, &sent, 1, PROTOCOL_ERROR);
    // The block was decoded all the same: the next request's :authority is that table
    // entry (index 62, 0xbe), and it is served, not a COMPRESSION_ERROR.
    let sent = p.answer(&headers(3, true, &[0x82, 0x86, 0x84, 0xbe]));
    assert_eq!(only(&sent, HEADERS).stream, 3, "{sent:?}");
    assert!(sent.iter().all(|f| f.kind != GOAWAY && f.kind != RST_STREAM), "{sent:?}");
}

#[test]
fn headers_that_depend_on_another_stream_are_served() {
    let mut p = Peer::new();
    let mut payload = vec![0x80, 0, 0, 0, 255];
    payload.extend(get("/status/204"));
    let sent = p.answer(&frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, &payload));
    assert_eq!(only(&sent, HEADERS).stream, 1, "{sent:?}");
}

#[test]
fn priority_that_makes_a_stream_depend_on_itself_is_a_stream_error() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, true)), []);
    let sent = p.answer(&frame(PRIORITY, 0, 1, &[0, 0, 0, 1, 15]));
    assert_reset(&p, &sent, 1, PROTOCOL_ERROR);
    // On a closed stream as well (PRIORITY may come on any stream, the rule still holds).
    let sent = p.answer(&frame(PRIORITY, 0, 1, &[0x80, 0, 0, 1, 15]));
    assert_reset(&p, &sent, 1, PROTOCOL_ERROR);
}

#[test]
fn priority_that_makes_an_idle_stream_depend_on_itself_ends_the_connection() {
    // RST_STREAM may not be sent on an idle stream (§6.4): a connection error instead.
    let mut p = Peer::new();
    let sent = p.answer(&frame(PRIORITY, 0, 3, &[0, 0, 0, 3, 15]));
    assert_goaway(&mut p, &sent, 0, PROTOCOL_ERROR);
}

// ---- the preface: §3.4 ----

#[test]
fn an_invalid_preface_is_a_protocol_error_then_the_close() {
    // The HTTP/1 side hands over a connection on the preface's request line (conn.rs).
    let mut p = Peer::raw(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n");
    p.drive();
    let sent = p.read();
    assert_eq!(sent.iter().filter(|f| f.kind == SETTINGS).count(), 1, "{sent:?}");
    assert_goaway(&mut p, &sent, 0, PROTOCOL_ERROR);
}

#[test]
fn a_first_frame_other_than_settings_is_a_protocol_error() {
    let mut p = Peer::raw(b"");
    let mut bytes = herd_proto::h2::PREFACE.to_vec();
    bytes.extend(ping());
    let sent = p.send(&bytes);
    assert_goaway(&mut p, &sent, 0, PROTOCOL_ERROR);
}

// ---- after the server's GOAWAY: §6.8 ----

#[test]
fn streams_opened_after_the_server_s_goaway_are_ignored_and_never_named() {
    let mut p = Peer::new();
    assert_eq!(p.answer(&held(1, false)), []);
    // The server begins to stop: GOAWAY NO_ERROR naming stream 1.
    p.conn.go_away();
    p.drive();
    let goaway = only(&p.read(), GOAWAY);
    assert_eq!(goaway.payload[..8], [0, 0, 0, 1, 0, 0, 0, 0]);
    // A stream the client opens after it is not processed, nor are its frames answered.
    assert_eq!(p.answer(&held(3, false)), []);
    assert_eq!(p.answer(&frame(DATA, 0, 3, b"x")), []);
    // A connection error now still names stream 1, not 3: the last stream id of a GOAWAY
    // may not grow.
    let sent = p.answer(&frame(DATA, 0, 9, b"x"));
    assert_goaway(&mut p, &sent, 1, PROTOCOL_ERROR);
}
