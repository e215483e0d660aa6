//! One HTTP/3 request over QUIC, read whole: the verifying request of a cell that speaks h3,
//! on the engine's own QUIC connection (`herd_engine::quic::H3Conn`, quinn-proto and
//! herd-proto's h3) driven here from a small mio loop until the answer ends or the deadline
//! passes. The certificate is checked against the run's CA, for the address asked.
//!
//! Not here: the engine's multiplexing, GSO tuning, retries, or any judgement of the answer.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use herd_engine::quic::{H3Conn, H3Event, IoBuffers, QuicClient, QuicSettings};
use herd_engine::{TlsSettings, TlsVersions};
use herd_proto::h3::{encode_request, Part};
use herd_proto::Request;
use mio::{Events, Interest, Poll, Token};

use super::{Answer, VerifyError};

/// Sends `method path` (with `body`) to `addr` over HTTP/3, trusting `ca_file` only, and
/// reads the answer; a body over `limit` bytes is [`VerifyError::TooLarge`].
pub(super) fn exchange(
    addr: SocketAddr,
    ca_file: &Path,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
    limit: u64,
) -> Result<Answer, VerifyError> {
    let broken = |why: String| VerifyError::Http3 { addr, why };
    let tls = TlsSettings {
        versions: TlsVersions::Tls13,
        cipher_suites: None,
        client_cert: None,
        ca_file: Some(ca_file.to_path_buf()),
        sni: None,
        alpn: Vec::new(),
        resume: false,
    };
    let mut settings = QuicSettings::new(tls);
    settings.handshake_timeout = timeout;
    settings.idle_timeout = timeout;
    let client = QuicClient::new(&settings, &addr.ip().to_string())
        .map_err(|e| VerifyError::Tls { addr, why: e.to_string() })?;
    let mut headers = vec![("User-Agent".to_owned(), "herd-lab-verify".to_owned())];
    if body.is_some() {
        headers.push(("Content-Type".to_owned(), "application/octet-stream".to_owned()));
    }
    let request = Request {
        method: method.to_owned(),
        target: path.to_owned(),
        version: "HTTP/1.1",
        headers,
        body: body.map(<[u8]>::to_vec).unwrap_or_default(),
    };
    let mut encoded = Vec::new();
    encode_request(&request, "https", &addr.to_string(), &mut encoded)
        .map_err(|e| broken(format!("the request cannot be encoded: {e}")))?;
    let encoded = Bytes::from(encoded);

    let start = Instant::now();
    let deadline = start + timeout;
    let mut conn = H3Conn::connect(&client, addr, 1, start)
        .map_err(|e| broken(format!("cannot start the connection: {e}")))?;
    let mut poll = Poll::new().map_err(|e| broken(format!("cannot poll: {e}")))?;
    poll.registry()
        .register(conn.quic().socket(), Token(0), Interest::READABLE | Interest::WRITABLE)
        .map_err(|e| broken(format!("cannot poll its socket: {e}")))?;
    let mut events = Events::with_capacity(8);
    let mut io = IoBuffers::new();
    let mut answer = Answer { status: 0, body: Vec::new() };
    let mut submitted = false;
    // None: waiting; Some(Ok(())): the answer ended; Some(Err(why)).
    let mut ended: Option<Result<(), VerifyError>> = None;
    conn.flush(start, &mut io);
    loop {
        if !submitted && conn.can_submit() {
            conn.submit(&encoded, method == "HEAD", 0)
                .map_err(|e| broken(format!("the request was not taken: {e:?}")))?;
            submitted = true;
        }
        conn.flush(Instant::now(), &mut io);
        if let Some(result) = ended.take() {
            conn.close(Instant::now(), &mut io, |_| {});
            return result.map(|()| answer);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(VerifyError::TimedOut { addr, limit: timeout });
        }
        let wake = conn.poll_timeout().unwrap_or(deadline).min(deadline);
        poll.poll(&mut events, Some(wake.saturating_duration_since(now)))
            .map_err(|e| broken(format!("cannot poll: {e}")))?;
        let now = Instant::now();
        let mut on = |event: H3Event<'_>| match event {
            H3Event::Part { part: Part::Field(name, value), .. } if name == b":status" => {
                answer.status =
                    std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
            }
            H3Event::Part { part: Part::Body(piece), .. } => {
                if answer.body.len().saturating_add(piece.len()) as u64 > limit {
                    ended.get_or_insert(Err(VerifyError::TooLarge { addr, limit }));
                } else {
                    answer.body.extend_from_slice(piece);
                }
            }
            H3Event::Response { result: Ok(_), .. } => {
                ended.get_or_insert(Ok(()));
            }
            H3Event::Response { result: Err(e), .. } => {
                ended.get_or_insert(Err(broken(e.to_string())));
            }
            H3Event::Closed(e) => {
                ended.get_or_insert(Err(broken(format!("the connection ended: {e}"))));
            }
            _ => {}
        };
        for event in events.iter() {
            // A socket error (an ICMP port unreachable) is read by a receive.
            if event.is_readable() || event.is_error() {
                conn.on_readable(now, &mut io, &mut on);
            }
            if event.is_writable() {
                conn.on_writable(now, &mut io);
            }
        }
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.on_timeout(now, &mut io, &mut on);
        }
    }
}
