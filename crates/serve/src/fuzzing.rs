//! Entry points for fuzz targets (`fuzz/`, outside the workspace). Each runs arbitrary bytes
//! through the same code the server runs on client input and must never panic. They do no I/O
//! and do not check results: the unit tests beside each parser do that.

use crate::config::{DEFAULT_MAX_HEAD_BYTES, DEFAULT_MAX_REQUEST_LINE_BYTES};
use crate::pages::query;
use crate::read_buf::{Limits, ReadBuf, Scan};
use crate::request::BodyFraming;
use crate::request_body::{RequestBody, Sink};
use crate::route::Route;
use crate::{date, path, range, request, router};

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

/// Runs a head's parts through their parsers; returns the reader for its body, if any.
fn exercise(head: &[u8]) -> Option<RequestBody> {
    let req = request::parse_head(head).ok()?;
    if let Some((p, query)) = router::split_target(req.target) {
        let _ = path::sanitize(p);
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
    for value in [req.if_modified_since, req.if_range].into_iter().flatten() {
        let _ = date::parse_http_date(value);
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
}
