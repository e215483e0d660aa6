//! A raw HTTP/2 client for the tests that need to see frames (or send broken ones): the
//! preface and SETTINGS it is told to send, requests encoded with herd-proto's HPACK encoder,
//! and the server's frames decoded one at a time into owned values. It checks nothing about
//! the server itself; the tests do.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use herd_proto::h2::hpack::{Decoder, Encoder};
use herd_proto::h2::{encode, ErrorCode, Frame, FrameDecoder, SettingId, PREFACE};

use crate::harness::{ReadWrite, IO_TIMEOUT};

/// A frame from the server, owned; DATA pieces joined into one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Got {
    Headers { stream: u32, end_stream: bool, fields: Vec<(String, String)>, block_len: usize },
    Data { stream: u32, data: Vec<u8>, end_stream: bool },
    Settings { ack: bool, values: Vec<(u16, u32)> },
    Ping { ack: bool, payload: [u8; 8] },
    GoAway { last_stream: u32, code: ErrorCode, debug: String },
    WindowUpdate { stream: u32, increment: u32 },
    RstStream { stream: u32, code: ErrorCode },
    Other,
}

/// A response as the tests compare it.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) fields: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// Length of its header block as sent (HPACK-encoded).
    pub(crate) block_len: usize,
}

impl Response {
    pub(crate) fn status(&self) -> u16 {
        self.field(":status").and_then(|s| s.parse().ok()).unwrap_or(0)
    }

    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub(crate) struct H2Client {
    /// TCP, or TLS over `tcp`.
    stream: Box<dyn ReadWrite>,
    tcp: TcpStream,
    frames: FrameDecoder,
    buf: Vec<u8>,
    hpack_in: Decoder,
    hpack_out: Encoder,
    /// DATA pieces of the frame being read.
    data: Vec<u8>,
    /// A header block arriving in CONTINUATION frames: (stream, end_stream, fragments).
    block: Option<(u32, bool, Vec<u8>)>,
    /// Frames read but not yet asked for.
    pending: std::collections::VecDeque<Got>,
}

/// SETTINGS a client that wants everything at once sends: large windows.
pub(crate) const BIG_WINDOWS: &[(SettingId, u32)] = &[(SettingId::INITIAL_WINDOW_SIZE, 1 << 30)];

impl H2Client {
    /// Connects and sends the preface and SETTINGS `settings` (see `start`).
    pub(crate) fn connect(addr: SocketAddr, settings: &[(SettingId, u32)]) -> H2Client {
        let mut c = H2Client::raw(addr);
        c.start(settings);
        c
    }

    /// Connects and sends nothing.
    pub(crate) fn raw(addr: SocketAddr) -> H2Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        let tcp = stream.try_clone().unwrap();
        H2Client::over(Box::new(stream), tcp)
    }

    /// A client over `stream` (TLS, its handshake done) on the socket `tcp`; sends nothing.
    pub(crate) fn over(stream: Box<dyn ReadWrite>, tcp: TcpStream) -> H2Client {
        H2Client {
            stream,
            tcp,
            frames: FrameDecoder::new(16_384),
            buf: Vec::new(),
            hpack_in: Decoder::new(4096, 1 << 20),
            hpack_out: Encoder::new(4096),
            data: Vec::new(),
            block: None,
            pending: Default::default(),
        }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        self.try_send(bytes).expect("send");
    }

    /// Like `send`, but a failure (the server closed) is the caller's to judge.
    pub(crate) fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).and_then(|()| self.stream.flush())
    }

    /// The TCP socket (for a second writer on a plain connection).
    pub(crate) fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// Sends the preface and SETTINGS `settings`; a stream window above the default gets a
    /// connection window as large (a WINDOW_UPDATE), as h2load does.
    pub(crate) fn start(&mut self, settings: &[(SettingId, u32)]) {
        let mut out = Vec::new();
        encode::preface_and_settings(&mut out, settings);
        for &(id, value) in settings {
            if id == SettingId::INITIAL_WINDOW_SIZE && value > 65_535 {
                encode::window_update(&mut out, 0, value - 65_535);
            }
        }
        self.send(&out);
    }

    /// Frames read elsewhere, to be returned by `next` and `response` first.
    pub(crate) fn keep(&mut self, frames: Vec<Got>) {
        self.pending.extend(frames);
    }

    /// A header block of exactly `fields`, encoded.
    pub(crate) fn encode(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let fields: Vec<(&[u8], &[u8])> =
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect();
        let mut block = Vec::new();
        self.hpack_out.encode(&fields, |_| false, &mut block);
        block
    }

    /// The header block of a request, encoded.
    pub(crate) fn block(&mut self, method: &str, path: &str, extra: &[(&str, &str)]) -> Vec<u8> {
        let mut fields: Vec<(&[u8], &[u8])> = vec![
            (b":method", method.as_bytes()),
            (b":scheme", b"http"),
            (b":authority", b"t"),
            (b":path", path.as_bytes()),
        ];
        fields.extend(extra.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())));
        let mut block = Vec::new();
        self.hpack_out.encode(&fields, |_| false, &mut block);
        block
    }

    /// Sends a request's HEADERS on `stream`.
    pub(crate) fn request(&mut self, stream: u32, method: &str, path: &str, end_stream: bool) {
        self.request_with(stream, method, path, &[], end_stream);
    }

    pub(crate) fn request_with(
        &mut self,
        stream: u32,
        method: &str,
        path: &str,
        extra: &[(&str, &str)],
        end_stream: bool,
    ) {
        let block = self.block(method, path, extra);
        let mut out = Vec::new();
        encode::headers(&mut out, stream, &block, end_stream, 16_384);
        self.send(&out);
    }

    /// A GET on `stream`, and its response (other frames read meanwhile are kept).
    pub(crate) fn get(&mut self, stream: u32, path: &str) -> Response {
        self.request(stream, "GET", path, true);
        self.response(stream)
    }

    /// Reads until the response on `stream` has ended; frames of other streams and the
    /// connection are kept for `next`.
    pub(crate) fn response(&mut self, stream: u32) -> Response {
        let mut response = Response { fields: Vec::new(), body: Vec::new(), block_len: 0 };
        let mut kept = Vec::new();
        let mut earlier = std::mem::take(&mut self.pending);
        loop {
            let got = match earlier.pop_front() {
                Some(got) => got,
                None => self.next_from_socket(),
            };
            match got {
                Got::Headers { stream: s, end_stream, fields, block_len } if s == stream => {
                    response.fields = fields;
                    response.block_len = block_len;
                    if end_stream {
                        break;
                    }
                }
                Got::Data { stream: s, data, end_stream } if s == stream => {
                    response.body.extend_from_slice(&data);
                    if end_stream {
                        break;
                    }
                }
                Got::RstStream { stream: s, code } if s == stream => {
                    panic!("stream {stream} reset: {code}")
                }
                Got::GoAway { .. } => panic!("GOAWAY while reading stream {stream}: {got:?}"),
                other => kept.push(other),
            }
        }
        kept.extend(earlier);
        self.pending.extend(kept);
        response
    }

    /// The next frame (one kept earlier first).
    pub(crate) fn next(&mut self) -> Got {
        match self.pending.pop_front() {
            Some(got) => got,
            None => self.next_from_socket(),
        }
    }

    /// Reads frames until one `pred` accepts; panics if the connection ends first.
    pub(crate) fn next_matching(&mut self, mut pred: impl FnMut(&Got) -> bool) -> Got {
        loop {
            let got = self.next();
            if pred(&got) {
                return got;
            }
        }
    }

    /// Reads frames until GOAWAY, and then until the server closes; returns the GOAWAY's code
    /// and debug text. Panics if the server does not end the connection within the timeout.
    pub(crate) fn expect_goaway_and_close(&mut self) -> (ErrorCode, String) {
        let deadline = Instant::now() + IO_TIMEOUT;
        let goaway = loop {
            assert!(Instant::now() < deadline, "no GOAWAY in {IO_TIMEOUT:?}");
            match self.try_next() {
                Some(Got::GoAway { code, debug, .. }) => break (code, debug),
                Some(_) => {}
                None => panic!("connection closed without GOAWAY"),
            }
        };
        assert!(self.closes_within(IO_TIMEOUT), "the server kept the connection open");
        goaway
    }

    /// Whether the server closes (EOF or reset) within `limit`, dropping what it sends.
    pub(crate) fn closes_within(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut scratch = [0u8; 16 * 1024];
        while Instant::now() < deadline {
            match self.stream.read(&mut scratch) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return true,
            }
        }
        false
    }

    /// The next frame from the socket; panics at the end of the connection.
    fn next_from_socket(&mut self) -> Got {
        self.try_next().expect("the server closed the connection")
    }

    /// The next frame from the socket, `None` at the end of the connection (or a reset).
    pub(crate) fn try_next(&mut self) -> Option<Got> {
        loop {
            let buf = std::mem::take(&mut self.buf);
            let decoded = self.frames.decode(&buf);
            let step = match decoded {
                Ok(Some((frame, used))) => Ok(Some((self.own(frame), used))),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            };
            self.buf = buf;
            match step {
                Ok(Some((got, used))) => {
                    self.buf.drain(..used);
                    if let Some(got) = got {
                        return Some(got);
                    }
                }
                Ok(None) => {
                    let mut chunk = [0u8; 32 * 1024];
                    match self.stream.read(&mut chunk) {
                        Ok(0) => return None,
                        Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
                        Err(e) => panic!("reading from the server: {e}"),
                    }
                }
                Err(e) => panic!("the server sent a bad frame: {e}"),
            }
        }
    }

    fn own(&mut self, frame: Frame<'_>) -> Option<Got> {
        Some(match frame {
            Frame::Data { data, .. } => {
                self.data.extend_from_slice(data);
                return None;
            }
            Frame::DataEnd { stream, end_stream, .. } => {
                Got::Data { stream, data: std::mem::take(&mut self.data), end_stream }
            }
            Frame::Headers { stream, end_stream, end_headers, block } => {
                if !end_headers {
                    self.block = Some((stream, end_stream, block.to_vec()));
                    return None;
                }
                self.headers(stream, end_stream, block)
            }
            Frame::Continuation { end_headers, block, .. } => {
                let (stream, end_stream, mut all) = self.block.take().expect("CONTINUATION");
                all.extend_from_slice(block);
                if !end_headers {
                    self.block = Some((stream, end_stream, all));
                    return None;
                }
                self.headers(stream, end_stream, &all)
            }
            Frame::Settings { ack, settings } => {
                Got::Settings { ack, values: settings.iter().map(|(id, v)| (id.0, v)).collect() }
            }
            Frame::Ping { ack, payload } => Got::Ping { ack, payload },
            Frame::GoAway { last_stream, code, debug } => Got::GoAway {
                last_stream,
                code,
                debug: String::from_utf8_lossy(debug).into_owned(),
            },
            Frame::WindowUpdate { stream, increment } => Got::WindowUpdate { stream, increment },
            Frame::RstStream { stream, code } => Got::RstStream { stream, code },
            _ => Got::Other,
        })
    }

    fn headers(&mut self, stream: u32, end_stream: bool, block: &[u8]) -> Got {
        let mut fields = Vec::new();
        self.hpack_in
            .decode(block, |n, v| {
                fields.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ))
            })
            .expect("the server's header block decodes");
        Got::Headers { stream, end_stream, fields, block_len: block.len() }
    }
}

/// The bytes of a frame header.
pub(crate) fn frame_header(len: u32, kind: u8, flags: u8, stream: u32) -> Vec<u8> {
    let mut out = Vec::new();
    encode::frame_header(&mut out, len, kind, flags, stream);
    out
}

/// The preface and an empty SETTINGS, as bytes.
pub(crate) fn preface_and_settings() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    encode::settings(&mut out, &[]);
    out
}
