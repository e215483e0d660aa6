//! Entry points for fuzz targets (`fuzz/`, outside the workspace). Each runs arbitrary bytes
//! through the same code the server runs on client input and must never panic. They do no I/O
//! and do not check results: the unit tests beside each parser do that.

use crate::config::{DEFAULT_MAX_HEAD_BYTES, DEFAULT_MAX_REQUEST_LINE_BYTES};
use crate::read_buf::{Limits, ReadBuf, Scan};
use crate::{date, path, range, request, router};

/// Feeds `data` as a client's byte stream: finds each head with the server's limits, parses
/// it, and runs its target, conditional and range headers through their parsers.
pub fn fuzz_request(data: &[u8]) {
    let limits = Limits {
        max_request_line: DEFAULT_MAX_REQUEST_LINE_BYTES,
        max_head: DEFAULT_MAX_HEAD_BYTES,
    };
    let mut buf = ReadBuf::new(limits);
    let mut src = data;
    loop {
        match buf.find_head(limits) {
            Scan::Complete(len) => {
                exercise(buf.head(len));
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

fn exercise(head: &[u8]) {
    let Ok(req) = request::parse_head(head) else {
        return;
    };
    if let Some(p) = router::target_path(req.target) {
        let _ = path::sanitize(p);
    }
    for size in [0, 1, 10, u64::MAX] {
        if let Some(r) = req.range {
            let _ = range::resolve(r, size);
        }
    }
    for value in [req.if_modified_since, req.if_range].into_iter().flatten() {
        let _ = date::parse_http_date(value);
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
