//! One HTTP/2 request on a blocking connection (h2 over TLS, or h2c with prior knowledge),
//! read whole: the verifying request of a cell that speaks HTTP/2, so that the answer
//! checked is the one the protocol under test gives. herd-proto's frame codec and HPACK, the
//! same the engine uses; stream 1 only, server push off, windows large (replenished as DATA
//! arrives), a request body sent as the server's windows allow.
//!
//! Not here: the engine's multiplexing, retries, or any judgement of the answer (`check`).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use herd_proto::h2::hpack::{Decoder, Encoder};
use herd_proto::h2::{encode, ErrorCode, Frame, FrameDecoder, SettingId, DEFAULT_MAX_FRAME_SIZE};

use super::{Answer, VerifyError};

/// The one stream this client opens.
const STREAM: u32 = 1;
/// Windows this client announces: large, as herd's load does.
const WINDOW: u32 = (1 << 30) - 1;
/// HTTP/2's initial windows until SETTINGS and WINDOW_UPDATE say otherwise (§6.9.2).
const DEFAULT_WINDOW: i64 = 65_535;

/// What one request sends.
pub(super) struct Request<'a> {
    /// `https` or `http`.
    pub scheme: &'a str,
    pub authority: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub body: Option<&'a [u8]>,
}

/// Sends `req` on `s` (a fresh connection) and reads the answer; a body larger than `limit`
/// is [`VerifyError::TooLarge`].
pub(super) fn exchange<S: Read + Write>(
    s: &mut S,
    addr: SocketAddr,
    req: &Request<'_>,
    deadline: Instant,
    timeout: Duration,
    limit: u64,
) -> Result<Answer, VerifyError> {
    let mut c = Client::new(addr, req.body.unwrap_or_default(), limit);
    c.start(req);
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        c.send_body();
        if !c.out.is_empty() {
            s.write_all(&c.out).map_err(|err| VerifyError::Send { addr, err })?;
            s.flush().map_err(|err| VerifyError::Send { addr, err })?;
            c.out.clear();
        }
        if let Some(answer) = c.done.take() {
            return Ok(answer);
        }
        if Instant::now() > deadline {
            return Err(VerifyError::TimedOut { addr, limit: timeout });
        }
        let n = match super::read_some(s, &mut chunk, addr, timeout)? {
            0 => return Err(VerifyError::NoAnswer { addr }),
            n => n,
        };
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        let used = c.feed(&buf)?;
        buf.drain(..used);
    }
}

/// The connection's state between reads.
struct Client<'a> {
    addr: SocketAddr,
    frames: FrameDecoder,
    hpack: Decoder,
    /// Frames to write next.
    out: Vec<u8>,
    /// The request body not yet sent.
    body: &'a [u8],
    /// What the server lets this client send: on the connection, on the stream.
    send_window: (i64, i64),
    peer_max_frame: u32,
    /// The response's header block, across CONTINUATION frames.
    block: Vec<u8>,
    block_ends_stream: bool,
    status: Option<u16>,
    response: Vec<u8>,
    limit: u64,
    done: Option<Answer>,
}

impl<'a> Client<'a> {
    fn new(addr: SocketAddr, body: &'a [u8], limit: u64) -> Client<'a> {
        Client {
            addr,
            frames: FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE),
            hpack: Decoder::new(4096, 1 << 20),
            out: Vec::new(),
            body,
            send_window: (DEFAULT_WINDOW, DEFAULT_WINDOW),
            peer_max_frame: DEFAULT_MAX_FRAME_SIZE,
            block: Vec::new(),
            block_ends_stream: false,
            status: None,
            response: Vec::new(),
            limit,
            done: None,
        }
    }

    /// The preface, SETTINGS, the connection's window, and the request's HEADERS.
    fn start(&mut self, req: &Request<'_>) {
        encode::preface_and_settings(
            &mut self.out,
            &[(SettingId::ENABLE_PUSH, 0), (SettingId::INITIAL_WINDOW_SIZE, WINDOW)],
        );
        encode::window_update(&mut self.out, 0, WINDOW - DEFAULT_WINDOW as u32);
        let length = req.body.map(|b| b.len().to_string());
        let mut fields: Vec<(&[u8], &[u8])> = vec![
            (b":method", req.method.as_bytes()),
            (b":scheme", req.scheme.as_bytes()),
            (b":authority", req.authority.as_bytes()),
            (b":path", req.path.as_bytes()),
            (b"user-agent", b"herd-lab-verify"),
        ];
        if let Some(length) = &length {
            fields.push((b"content-type", b"application/octet-stream"));
            fields.push((b"content-length", length.as_bytes()));
        }
        let mut block = Vec::new();
        Encoder::new(4096).encode(&fields, |_| false, &mut block);
        encode::headers(&mut self.out, STREAM, &block, req.body.is_none(), DEFAULT_MAX_FRAME_SIZE);
    }

    /// As much of the request body as the windows allow, the last piece ending the stream.
    fn send_body(&mut self) {
        while !self.body.is_empty() {
            let room =
                self.send_window.0.min(self.send_window.1).min(i64::from(self.peer_max_frame));
            if room <= 0 {
                return;
            }
            let n = (room as usize).min(self.body.len());
            let (piece, rest) = self.body.split_at(n);
            encode::data(&mut self.out, STREAM, piece, rest.is_empty());
            self.send_window.0 -= n as i64;
            self.send_window.1 -= n as i64;
            self.body = rest;
        }
    }

    /// Handles the frames at the front of `buf`; returns the bytes used.
    fn feed(&mut self, buf: &[u8]) -> Result<usize, VerifyError> {
        let mut at = 0;
        while self.done.is_none() {
            let rest = buf.get(at..).unwrap_or_default();
            let Some((frame, used)) = self.frames.decode(rest).map_err(|e| self.broken(e))? else {
                break;
            };
            self.frame(frame)?;
            at += used;
        }
        Ok(at)
    }

    fn frame(&mut self, frame: Frame<'_>) -> Result<(), VerifyError> {
        match frame {
            Frame::Settings { ack: false, settings } => {
                if let Some(w) = settings.get(SettingId::INITIAL_WINDOW_SIZE) {
                    // Applies to the stream's window as a difference (§6.9.2).
                    self.send_window.1 += i64::from(w) - DEFAULT_WINDOW;
                }
                if let Some(size) = settings.get(SettingId::MAX_FRAME_SIZE) {
                    self.peer_max_frame = size;
                }
                encode::settings_ack(&mut self.out);
            }
            Frame::Ping { ack: false, payload } => encode::ping(&mut self.out, true, payload),
            Frame::WindowUpdate { stream: 0, increment } => {
                self.send_window.0 += i64::from(increment)
            }
            Frame::WindowUpdate { stream: STREAM, increment } => {
                self.send_window.1 += i64::from(increment)
            }
            Frame::Headers { stream: STREAM, end_stream, end_headers, block } => {
                self.block.clear();
                self.block.extend_from_slice(block);
                self.block_ends_stream = end_stream;
                if end_headers {
                    self.head()?;
                }
            }
            Frame::Continuation { stream: STREAM, end_headers, block } => {
                self.block.extend_from_slice(block);
                if end_headers {
                    self.head()?;
                }
            }
            Frame::Data { stream: STREAM, data } => {
                if self.response.len().saturating_add(data.len()) as u64 > self.limit {
                    return Err(VerifyError::TooLarge { addr: self.addr, limit: self.limit });
                }
                self.response.extend_from_slice(data);
            }
            Frame::DataEnd { stream: STREAM, end_stream, flow } => {
                // Give back what the DATA used, so a body of any size flows.
                if flow > 0 && !end_stream {
                    encode::window_update(&mut self.out, 0, flow);
                    encode::window_update(&mut self.out, STREAM, flow);
                }
                if end_stream {
                    self.finish()?;
                }
            }
            Frame::RstStream { stream: STREAM, code } => {
                return Err(self.protocol(format!("the server reset the stream ({code})")))
            }
            Frame::GoAway { last_stream, code, .. }
                if last_stream < STREAM || code != ErrorCode::NO_ERROR =>
            {
                return Err(self.protocol(format!(
                    "the server ended the connection with GOAWAY ({code}) before answering"
                )))
            }
            Frame::PushPromise { .. } => {
                return Err(self.protocol("the server pushed a stream although push is off".into()))
            }
            _ => {}
        }
        Ok(())
    }

    /// A whole header block: the final status, or an informational one to skip.
    fn head(&mut self) -> Result<(), VerifyError> {
        let head = self
            .hpack
            .decode_response(&self.block)
            .map_err(|e| self.protocol(format!("a header block herd cannot read: {e}")))?;
        if (100..200).contains(&head.status) {
            return Ok(());
        }
        self.status = Some(head.status);
        if self.block_ends_stream {
            self.finish()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), VerifyError> {
        let Some(status) = self.status else {
            return Err(self.protocol("the stream ended without a response head".into()));
        };
        self.done = Some(Answer { status, body: std::mem::take(&mut self.response) });
        Ok(())
    }

    fn broken(&self, e: herd_proto::h2::FrameError) -> VerifyError {
        self.protocol(format!("a frame herd cannot read: {e}"))
    }

    fn protocol(&self, why: String) -> VerifyError {
        VerifyError::Http2 { addr: self.addr, why }
    }
}
