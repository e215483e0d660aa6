//! Entry points for fuzz targets (`fuzz/`, outside the workspace). Each runs arbitrary bytes
//! through the same code the server runs on client input and must never panic. They do not
//! check results: the unit tests beside each parser do that. `fuzz_request` does no I/O;
//! `fuzz_h2` drives a real HTTP/2 connection over a loopback socket, since the connection is
//! what judges frames.

use std::io::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime};

use crate::access_log::AccessLog;
use crate::config::{ServeConfig, DEFAULT_MAX_HEAD_BYTES, DEFAULT_MAX_REQUEST_LINE_BYTES};
use crate::conn::Drive;
use crate::date::DateCache;
use crate::file_cache::FileCache;
use crate::h2::H2Conn;
use crate::pages::query;
use crate::read_buf::{Limits, ReadBuf, Scan};
use crate::request::BodyFraming;
use crate::request_body::{RequestBody, Sink};
use crate::route::Route;
use crate::server::Server;
use crate::transport::Transport;
use crate::worker::Ctx;
use crate::{http_date, path, range, redirect, request, router};

/// Feeds `data` as a client's byte stream: finds each head with the server's limits, parses
/// it, runs its target, query, conditional and range headers through their parsers, and reads
/// the body that follows (by Content-Length or chunked) as the server would.
pub fn fuzz_request(data: &[u8]) {
    let limits = Limits {
        max_request_line: DEFAULT_MAX_REQUEST_LINE_BYTES,
        max_head: DEFAULT_MAX_HEAD_BYTES,
    };
    let mut buf = ReadBuf::new(limits);
    let mut src = data;
    let mut body: Option<RequestBody> = None;
    let mut out = Vec::new();
    loop {
        if let Some(reading) = &mut body {
            out.clear();
            let Ok((n, done)) = reading.feed(buf.unconsumed(), &mut out) else {
                return;
            };
            buf.consume(n);
            if done {
                body = None;
                continue;
            }
            match buf.fill(&mut src) {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
        match buf.find_head(limits) {
            Scan::Complete(len) => {
                body = exercise(buf.head(len));
                buf.consume(len);
            }
            Scan::Partial => match buf.fill(&mut src) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            },
            Scan::LineTooLong | Scan::HeadTooLarge => return,
        }
    }
}

/// Feeds `data` to an HTTP/2 connection as a client's bytes: after the preface and an empty
/// SETTINGS unless the first byte is odd, in pieces of `1 + first byte / 2` bytes (the
/// decoder's every split), the connection driven after each. It answers through the real
/// router (no root) to a client that never reads, so its output limits are met too. Frames,
/// HPACK, streams, flow control, holds and every rule's GOAWAY or reset run as they do live.
pub fn fuzz_h2(data: &[u8]) {
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    let Some((server, listener)) = fuzz_server() else {
        return;
    };
    let Ok(mut client) = listener.local_addr().and_then(TcpStream::connect) else {
        return;
    };
    let Ok((accepted, peer)) = listener.accept() else {
        return;
    };
    if accepted.set_nonblocking(true).is_err() || client.set_nonblocking(true).is_err() {
        return;
    }
    let shared = &server.shared;
    let now = Instant::now();
    let io = Transport::Plain(mio::net::TcpStream::from_std(accepted));
    let mut conn = H2Conn::new(io, peer, &[], shared.limits(), now);
    let date = DateCache::new(SystemTime::UNIX_EPOCH);
    let mut log = AccessLog::new(false);
    let mut files = FileCache::default();
    let mut ctx = Ctx {
        shared,
        counters: &shared.counters[0],
        date: &date,
        log: &mut log,
        files: &mut files,
        now,
    };
    if first % 2 == 0 {
        let mut start = herd_proto::h2::PREFACE.to_vec();
        herd_proto::h2::encode::settings(&mut start, &[]);
        let _ = client.write_all(&start);
    }
    let piece = 1 + usize::from(first / 2);
    for chunk in data.chunks(piece) {
        // The server stops reading when its output is full: what does not fit is dropped.
        let _ = client.write_all(chunk);
        conn.readable_event(false);
        for _ in 0..64 {
            match conn.drive(&mut ctx) {
                Drive::Yield => {}
                Drive::Close => return,
                Drive::Wait | Drive::Sleep(_) | Drive::Upgrade => break,
            }
        }
    }
}

/// A server bound once (for its shared state: configuration, counters, pages) and a listener
/// the fuzzed connections come from.
fn fuzz_server() -> Option<&'static (Server, TcpListener)> {
    static SERVER: OnceLock<Option<(Server, TcpListener)>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
            let config = ServeConfig { listen: loopback, threads: 1, ..ServeConfig::default() };
            let server = Server::bind(config).ok()?;
            let listener = TcpListener::bind(loopback).ok()?;
            Some((server, listener))
        })
        .as_ref()
}

/// Runs a head's parts through their parsers; returns the reader for its body, if any.
fn exercise(head: &[u8]) -> Option<RequestBody> {
    let req = request::parse_head(head).ok()?;
    if let Some((p, query)) = router::split_target(req.target) {
        if let Ok(safe) = path::sanitize(p) {
            let _ = redirect::location(&safe, query, &req);
        }
        let _ = Route::of(p);
        for name in [&b"n"[..], b"ms", b"every"] {
            let _ = query::number(query, name, 0, u64::MAX);
        }
    }
    for size in [0, 1, 10, u64::MAX] {
        if let Some(r) = req.range {
            let _ = range::resolve(r, size);
        }
    }
    let dates = [req.if_modified_since, req.if_unmodified_since, req.if_range];
    for value in dates.into_iter().flatten() {
        for now in [0, 1_780_272_000, u64::MAX] {
            let _ = http_date::parse(value, now);
        }
    }
    match req.body {
        BodyFraming::None => None,
        BodyFraming::Length(n) => Some(RequestBody::with_length(n, Sink::Echo)),
        BodyFraming::Chunked => Some(RequestBody::chunked(Sink::EchoChunked)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_inputs_do_not_panic() {
        let corpus: &[&[u8]] = &[
            b"",
            b"\r\n\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nRange: bytes=-0\r\nIf-Range: W/\r\n\r\n",
            b"GET /%2 HTTP/1.1\r\nHost: x\r\n\r\nGET /%252e%252e HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET http:// HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sun, 99 Xxx 9999 99:99:99 GMT\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n",
            b"\xff\xfe\x00\n\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.0\r\n\r\n",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /cpu?n=1&n=2 HTTP/1.0\r\n\r\n",
            b"GET /\x00 HTTP/1.0\n\n",
            b"GET http://[::1:80/a%2520b?q=\xff HTTP/1.1\r\nHost: [\r\nIf-Match: W/\"\r\n\
              If-Unmodified-Since: Sunday, 29-Feb-99 23:59:60 GMT\r\n\r\n",
            b"GET //.%252f/ HTTP/1.1\r\nHost: A:99999\r\nIf-Range: Sun Feb 29 99:99:99 0000\r\n\r\n",
        ];
        for input in corpus {
            for split in 0..input.len() {
                fuzz_request(&input[..split]);
            }
            fuzz_request(input);
        }
        fuzz_request(&vec![b'a'; 100_000]);
        fuzz_request("GET / HTTP/1.1\r\nX: y\r\n".repeat(5000).as_bytes());
    }

    /// Frames a fuzzer would take long to find, whole and in small pieces.
    #[test]
    fn hostile_frames_do_not_panic() {
        use herd_proto::h2::encode;
        let mut get = Vec::new();
        // :method GET, :scheme http, :path /, then literal :path /bytes/100000 and /sleep?ms=5.
        let block = [0x82, 0x86, 0x84];
        encode::headers(&mut get, 1, &block, true, 16_384);
        let mut path = vec![0x82, 0x86, 0x04, 12];
        path.extend_from_slice(b"/bytes/99999");
        encode::headers(&mut get, 3, &path, true, 16_384);
        let mut sleep = vec![0x82, 0x86, 0x04, 12];
        sleep.extend_from_slice(b"/sleep?ms=50");
        encode::headers(&mut get, 5, &sleep, false, 16_384);
        encode::data(&mut get, 5, b"body", true);
        encode::window_update(&mut get, 0, 1 << 30);
        encode::rst_stream(&mut get, 3, herd_proto::h2::ErrorCode::CANCEL);
        encode::settings(&mut get, &[(herd_proto::h2::SettingId::INITIAL_WINDOW_SIZE, 0)]);
        encode::ping(&mut get, false, [7; 8]);
        encode::goaway(&mut get, 0, herd_proto::h2::ErrorCode::NO_ERROR, b"bye");
        let mut inputs: Vec<Vec<u8>> = vec![get];
        let mut garbage = Vec::new();
        encode::headers(&mut garbage, 1, &[0xff; 9], true, 16_384);
        inputs.push(garbage);
        let mut endless = Vec::new();
        encode::frame_header(&mut endless, 0, 0x1, 0, 1);
        for _ in 0..100 {
            encode::frame_header(&mut endless, 0, 0x9, 0, 1);
        }
        inputs.push(endless);
        inputs.push((0..=255).collect());
        for input in &inputs {
            for first in [0u8, 2, 30, 255, 1] {
                let mut data = vec![first];
                data.extend_from_slice(input);
                fuzz_h2(&data);
            }
        }
    }
}
