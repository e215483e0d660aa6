//! One request, read whole, checked against what the workload must answer: status, length and
//! SHA-256 of the body. The lab does this after a server is ready and before it is measured
//! (a server that answers 404 fast is not fast), and uses the same request, on the readiness
//! file, to know a server is up.
//!
//! The answer is read by herd-proto's [`ResponseParser`], the parser herd's own client uses,
//! so it is framed as herd's load is: by Content-Length, chunked coding or the close, with the
//! same limits; a malformed answer is the parser's [`ProtoError`]. The request is HTTP/1.1
//! with `Connection: close`, one per connection.
//!
//! A cell of another protocol is verified in it ([`fetch_over`]): HTTP/1.1 over TLS, HTTP/2
//! over TLS (`tls.rs`, trusting only the CA made for the run's server) or in the clear
//! (`h2.rs`), HTTP/3 over QUIC (`h3.rs`, on the engine's QUIC connection), so the answer
//! checked is the one the protocol under test gives.
//!
//! Not here: retries (readiness polls [`fetch`] until its deadline) and what a failure means
//! for the run (the runner's `RunFailure`).

mod h2;
mod h3;
mod tls;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use herd_proto::{Limits, ProtoError, ResponseParser};
use herd_stats::Protocol;

use crate::docroot::{sha256_hex, Expected};

/// How a request reaches its server: the protocol, and for one over TLS the CA file that
/// signed the server's certificate (the only one trusted).
#[derive(Debug, Clone, Copy)]
pub struct Over<'a> {
    pub protocol: Protocol,
    pub ca_file: Option<&'a Path>,
}

/// An answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Why an answer could not be fetched, or is not the expected one. The messages say what
/// came back; the I/O error's text is part of the message (it is not a `source`, so a chain
/// printer shows it once).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("cannot connect to {addr}: {err}")]
    Connect { addr: SocketAddr, err: io::Error },
    #[error("cannot send the request to {addr}: {err}")]
    Send { addr: SocketAddr, err: io::Error },
    #[error("cannot read the answer from {addr}: {err}")]
    Receive { addr: SocketAddr, err: io::Error },
    #[error("{addr} took more than {limit:?} to answer")]
    TimedOut { addr: SocketAddr, limit: Duration },
    #[error("{addr} closed the connection without answering")]
    NoAnswer { addr: SocketAddr },
    #[error("{addr} sent a body of more than {limit} bytes")]
    TooLarge { addr: SocketAddr, limit: u64 },
    /// Not HTTP/1.x, or cut short: herd-proto's reason.
    #[error("{addr} sent a malformed answer: {err}")]
    Malformed { addr: SocketAddr, err: ProtoError },
    #[error("status {got} instead of {want} (body starts: \"{body_start}\")")]
    Status { got: u16, want: u16, body_start: String },
    #[error("{got} body bytes instead of {want} (body starts: \"{body_start}\")")]
    Length { got: u64, want: u64, body_start: String },
    /// The first 16 hex digits of each digest.
    #[error("the right length but other content (sha256 {got} instead of {want})")]
    Content { got: String, want: String },
    /// The TLS handshake failed (the certificate did not verify against the run's CA, …).
    #[error("TLS with {addr} failed: {why}")]
    Tls { addr: SocketAddr, why: String },
    /// The server chose another protocol by ALPN, or none: `chose` says which, and the one
    /// asked (`` `http/1.1` instead of `h2` ``).
    #[error("{addr} chose {chose} by ALPN")]
    Alpn { addr: SocketAddr, chose: String },
    /// The HTTP/2 exchange broke: a frame or header block herd cannot read, a reset stream,
    /// a GOAWAY before the answer.
    #[error("{addr} over HTTP/2: {why}")]
    Http2 { addr: SocketAddr, why: String },
    /// The HTTP/3 exchange (or its QUIC connection) broke.
    #[error("{addr} over HTTP/3: {why}")]
    Http3 { addr: SocketAddr, why: String },
}

/// Sends one request and reads the answer; a body longer than `max_body` bytes by more than
/// a head's worth is [`VerifyError::TooLarge`] (a longer body than expected is still read, so
/// that [`check`] can say how long it was).
pub fn fetch(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
    max_body: u64,
) -> Result<Answer, VerifyError> {
    let deadline = Instant::now() + timeout;
    let mut s = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|err| VerifyError::Connect { addr, err })?;
    let send = |err| VerifyError::Send { addr, err };
    // As the measured runs' sockets (herd-engine's socket.rs): a request written in two parts
    // (a head, then a body) must not wait for the server's delayed ACK.
    s.set_nodelay(true).map_err(send)?;
    s.set_read_timeout(Some(timeout)).map_err(send)?;
    s.set_write_timeout(Some(timeout)).map_err(send)?;
    exchange_h1(&mut s, addr, method, path, body, deadline, timeout, max_body)
}

/// One read of the answer, retried when interrupted; a read timeout (the socket's, set from
/// the verification's timeout) is [`VerifyError::TimedOut`]. HTTP/1's and HTTP/2's.
fn read_some(
    s: &mut impl Read,
    buf: &mut [u8],
    addr: SocketAddr,
    timeout: Duration,
) -> Result<usize, VerifyError> {
    loop {
        return match s.read(buf) {
            Ok(n) => Ok(n),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err)
                if matches!(err.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
            {
                Err(VerifyError::TimedOut { addr, limit: timeout })
            }
            Err(err) => Err(VerifyError::Receive { addr, err }),
        };
    }
}

/// [`fetch`] in the protocol `over` says: HTTP/1.1 in the clear or over TLS, HTTP/2 over TLS
/// (ALPN `h2`) or in the clear with prior knowledge, HTTP/3 over QUIC. A TLS handshake trusts
/// `over.ca_file` only and checks the certificate names `addr`.
pub fn fetch_over(
    addr: SocketAddr,
    over: Over<'_>,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
    max_body: u64,
) -> Result<Answer, VerifyError> {
    let limit = max_body.saturating_add(SLACK);
    // Over TLS or QUIC, the CA first: without it nothing is asked.
    let no_ca = || VerifyError::Tls {
        addr,
        why: "no CA file to verify the server's certificate with".to_owned(),
    };
    let ca = match (over.protocol.is_encrypted(), over.ca_file) {
        (false, _) => None,
        (true, Some(ca)) => Some(ca),
        (true, None) => return Err(no_ca()),
    };
    let deadline = Instant::now() + timeout;
    let tcp = || -> Result<TcpStream, VerifyError> {
        let s = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|err| VerifyError::Connect { addr, err })?;
        let send = |err| VerifyError::Send { addr, err };
        s.set_nodelay(true).map_err(send)?;
        s.set_read_timeout(Some(timeout)).map_err(send)?;
        s.set_write_timeout(Some(timeout)).map_err(send)?;
        Ok(s)
    };
    let authority = addr.to_string();
    let request = |scheme| h2::Request { scheme, authority: &authority, method, path, body };
    match (over.protocol, ca) {
        (Protocol::H1, _) => fetch(addr, method, path, body, timeout, max_body),
        (Protocol::H1Tls, Some(ca)) => {
            let mut tls = tls::connect(addr, tcp()?, ca, b"http/1.1")?;
            exchange_h1(&mut tls, addr, method, path, body, deadline, timeout, max_body)
        }
        (Protocol::H2, Some(ca)) => {
            let mut tls = tls::connect(addr, tcp()?, ca, b"h2")?;
            h2::exchange(&mut tls, addr, &request("https"), deadline, timeout, limit)
        }
        (Protocol::H2c, _) => {
            h2::exchange(&mut tcp()?, addr, &request("http"), deadline, timeout, limit)
        }
        (Protocol::H3, Some(ca)) => h3::exchange(addr, ca, method, path, body, timeout, limit),
        (Protocol::H1Tls | Protocol::H2 | Protocol::H3, None) => Err(no_ca()),
    }
}

/// One HTTP/1.1 request with `Connection: close` on `s`, and its answer read whole.
#[allow(clippy::too_many_arguments)]
fn exchange_h1(
    s: &mut (impl Read + Write),
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    deadline: Instant,
    timeout: Duration,
    max_body: u64,
) -> Result<Answer, VerifyError> {
    let send = |err| VerifyError::Send { addr, err };
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: herd-lab-verify\r\nConnection: close\r\n"
    );
    if let Some(b) = body {
        req.push_str(&format!(
            "Content-Type: application/octet-stream\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).map_err(send)?;
    if let Some(b) = body {
        s.write_all(b).map_err(send)?;
    }
    s.flush().map_err(send)?;
    read_answer(s, addr, deadline, timeout, max_body.saturating_add(SLACK))
}

impl VerifyError {
    /// An answer came, and it is not the expected one (rather than no answer at all).
    pub fn is_wrong_answer(&self) -> bool {
        matches!(
            self,
            VerifyError::Status { .. } | VerifyError::Length { .. } | VerifyError::Content { .. }
        )
    }
}

/// Checks `a` against `e`; the error says what differed, with the start of the body.
pub fn check(a: &Answer, e: &Expected) -> Result<(), VerifyError> {
    let body_start = || {
        let n = a.body.len().min(160);
        String::from_utf8_lossy(&a.body[..n]).replace('\n', "\\n")
    };
    if a.status != e.status {
        return Err(VerifyError::Status {
            got: a.status,
            want: e.status,
            body_start: body_start(),
        });
    }
    let got = a.body.len() as u64;
    if got != e.body_bytes {
        return Err(VerifyError::Length { got, want: e.body_bytes, body_start: body_start() });
    }
    let digest = sha256_hex(&a.body);
    if digest != e.sha256 {
        let short = |d: &str| d.get(..16).unwrap_or(d).to_owned();
        return Err(VerifyError::Content { got: short(&digest), want: short(&e.sha256) });
    }
    Ok(())
}

/// Bytes a body may run over the size asked for before it is refused unread.
const SLACK: u64 = 64 * 1024;

fn read_answer(
    s: &mut impl Read,
    addr: SocketAddr,
    deadline: Instant,
    timeout: Duration,
    limit: u64,
) -> Result<Answer, VerifyError> {
    let mut parser = ResponseParser::new(Limits::default());
    let mut body = Vec::new();
    let mut over = false;
    let mut buf = vec![0u8; 64 * 1024];
    let malformed = |err| VerifyError::Malformed { addr, err };
    loop {
        let n = read_some(s, &mut buf, addr, timeout)?;
        if n == 0 {
            match parser.finish() {
                Ok(true) => break,
                Ok(false) => return Err(VerifyError::NoAnswer { addr }),
                Err(err) => return Err(malformed(err)),
            }
        }
        let piece = buf.get(..n).unwrap_or(&[]);
        let feed = parser
            .feed_body(piece, &mut |b| {
                if body.len().saturating_add(b.len()) as u64 > limit {
                    over = true;
                } else {
                    body.extend_from_slice(b);
                }
            })
            .map_err(malformed)?;
        if over {
            return Err(VerifyError::TooLarge { addr, limit });
        }
        if feed.complete {
            break;
        }
        if Instant::now() > deadline {
            return Err(VerifyError::TimedOut { addr, limit: timeout });
        }
    }
    // A complete response always has its final head.
    let status = parser.head().map_or(0, |h| h.status);
    Ok(Answer { status, body })
}

#[cfg(test)]
mod tests;
