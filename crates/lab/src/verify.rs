//! One request, read whole, checked against what the workload must answer: status, length and
//! SHA-256 of the body. The lab does this after a server is ready and before it is measured
//! (a server that answers 404 fast is not fast), and uses the same request, on the readiness
//! file, to know a server is up. HTTP/1.0 with `Connection: close`, so the answer is framed by
//! Content-Length or by the close, never chunked.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::docroot::{sha256_hex, Expected};

/// An answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Sends one request and reads the answer (at most `max_body` body bytes).
pub fn fetch(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
    max_body: u64,
) -> Result<Answer, String> {
    let mut s = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    s.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let mut req = format!("{method} {path} HTTP/1.0\r\nHost: {addr}\r\nUser-Agent: herd-lab-verify\r\nConnection: close\r\n");
    if let Some(b) = body {
        req.push_str(&format!(
            "Content-Type: application/octet-stream\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).map_err(|e| format!("sending to {addr}: {e}"))?;
    if let Some(b) = body {
        s.write_all(b).map_err(|e| format!("sending the body to {addr}: {e}"))?;
    }
    let cap = max_body.saturating_add(64 * 1024);
    let mut buf = Vec::new();
    let started = Instant::now();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(format!("reading from {addr}: {e}")),
        }
        if buf.len() as u64 > cap {
            return Err(format!("{addr} sent more than {cap} bytes for {path}"));
        }
        if started.elapsed() > timeout {
            return Err(format!("{addr} took more than {timeout:?} to answer {path}"));
        }
    }
    parse(&buf).map_err(|e| format!("{addr} answered {path} with {e}"))
}

/// Checks `a` against `e`; the error says what differed, with the start of the body.
pub fn check(a: &Answer, e: &Expected) -> Result<(), String> {
    let preview = || {
        let n = a.body.len().min(160);
        String::from_utf8_lossy(&a.body[..n]).replace('\n', "\\n")
    };
    if a.status != e.status {
        return Err(format!(
            "status {} instead of {} (body starts: \"{}\")",
            a.status,
            e.status,
            preview()
        ));
    }
    if a.body.len() as u64 != e.body_bytes {
        return Err(format!(
            "{} body bytes instead of {} (body starts: \"{}\")",
            a.body.len(),
            e.body_bytes,
            preview()
        ));
    }
    let got = sha256_hex(&a.body);
    if got != e.sha256 {
        return Err(format!(
            "the right length but other content (sha256 {} instead of {})",
            &got[..16],
            &e.sha256[..16]
        ));
    }
    Ok(())
}

fn parse(buf: &[u8]) -> Result<Answer, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    let head_len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(format!("an incomplete head ({} bytes, then close)", buf.len()))
        }
        Err(e) => return Err(format!("a malformed head: {e}")),
    };
    let status = resp.code.unwrap_or(0);
    let mut length: Option<usize> = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("chunked encoding to an HTTP/1.0 request".to_string());
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse().ok());
        }
    }
    let mut body = buf[head_len..].to_vec();
    if let Some(len) = length {
        if body.len() < len {
            return Err(format!(
                "{} body bytes of the {len} its Content-Length announced",
                body.len()
            ));
        }
        body.truncate(len);
    }
    Ok(Answer { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let a = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef").unwrap();
        assert_eq!(a.body, b"abc");
        let e = Expected { path: None, status: 200, body_bytes: 3, sha256: sha256_hex(b"abc") };
        assert!(check(&a, &e).is_ok());
        let e404 = parse(b"HTTP/1.1 404 Not Found\r\n\r\nnope").unwrap();
        assert_eq!(
            check(&e404, &e).unwrap_err(),
            "status 404 instead of 200 (body starts: \"nope\")"
        );
        let other = parse(b"HTTP/1.0 200 OK\r\n\r\nabd").unwrap();
        assert!(check(&other, &e).unwrap_err().starts_with("the right length but other content"));
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc").is_err());
        assert!(parse(b"garbage\r\n\r\n").is_err());
    }
}
