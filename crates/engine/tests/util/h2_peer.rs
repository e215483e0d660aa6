//! A scripted HTTP/2 server for the engine's tests: it reads the client's preface and
//! frames with herd-proto's own decoder, and writes whatever a test tells it to — a
//! well-behaved answer, or the hostile bytes a test is about.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::TcpStream;

use herd_proto::h2::{encode, hpack, Frame, FrameDecoder, SettingId, PREFACE};

/// One connection, server side.
pub struct Peer {
    pub s: TcpStream,
    dec: FrameDecoder,
    buf: Vec<u8>,
    enc: hpack::Encoder,
    pub out: Vec<u8>,
}

/// A frame the client sent, as much as the tests need of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    Headers { stream: u32, end_stream: bool },
    Data { stream: u32, len: usize, end_stream: bool },
    WindowUpdate { stream: u32, increment: u32 },
    RstStream { stream: u32, code: u32 },
    GoAway { code: u32 },
    Settings { ack: bool },
    Ping { ack: bool },
    Other,
}

impl Peer {
    /// Reads the client's preface; None if the bytes are not one.
    pub fn accept(mut s: TcpStream) -> Option<Peer> {
        let mut preface = [0u8; 24];
        s.read_exact(&mut preface).ok()?;
        if &preface != PREFACE {
            return None;
        }
        Some(Peer {
            s,
            dec: FrameDecoder::new(1 << 20),
            buf: Vec::new(),
            enc: hpack::Encoder::new(4096),
            out: Vec::new(),
        })
    }

    /// The client's next frame (DATA as one `Got::Data` when its end arrives); None at the
    /// end of the stream, a read timeout or a frame the decoder refuses.
    pub fn next(&mut self) -> Option<Got> {
        let mut data_len = 0usize;
        loop {
            match self.dec.decode(&self.buf) {
                Ok(Some((frame, used))) => {
                    let got = match frame {
                        Frame::Headers { stream, end_stream, .. } => {
                            Some(Got::Headers { stream, end_stream })
                        }
                        Frame::Data { data, .. } => {
                            data_len += data.len();
                            None
                        }
                        Frame::DataEnd { stream, end_stream, .. } => {
                            Some(Got::Data { stream, len: data_len, end_stream })
                        }
                        Frame::WindowUpdate { stream, increment } => {
                            Some(Got::WindowUpdate { stream, increment })
                        }
                        Frame::RstStream { stream, code } => {
                            Some(Got::RstStream { stream, code: code.0 })
                        }
                        Frame::GoAway { code, .. } => Some(Got::GoAway { code: code.0 }),
                        Frame::Settings { ack, .. } => Some(Got::Settings { ack }),
                        Frame::Ping { ack, .. } => Some(Got::Ping { ack }),
                        _ => Some(Got::Other),
                    };
                    self.buf.drain(..used);
                    if let Some(g) = got {
                        return Some(g);
                    }
                }
                Ok(None) => {
                    let mut chunk = [0u8; 16384];
                    match self.s.read(&mut chunk) {
                        Ok(0) | Err(_) => return None,
                        Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// The next request's stream id, skipping other frames.
    pub fn next_request(&mut self) -> Option<u32> {
        loop {
            if let Got::Headers { stream, .. } = self.next()? {
                return Some(stream);
            }
        }
    }

    pub fn settings(&mut self, settings: &[(SettingId, u32)]) -> &mut Peer {
        encode::settings(&mut self.out, settings);
        self
    }

    pub fn headers(
        &mut self,
        stream: u32,
        fields: &[(&[u8], &[u8])],
        end_stream: bool,
    ) -> &mut Peer {
        let mut block = Vec::new();
        self.enc.encode(fields, |_| false, &mut block);
        encode::headers(&mut self.out, stream, &block, end_stream, 16_384);
        self
    }

    /// A 200 response with `body` and its content-length.
    pub fn respond(&mut self, stream: u32, body: &[u8]) -> &mut Peer {
        let len = body.len().to_string();
        self.headers(stream, &[(b":status", b"200"), (b"content-length", len.as_bytes())], false);
        encode::data(&mut self.out, stream, body, true);
        self
    }

    pub fn raw(&mut self, bytes: &[u8]) -> &mut Peer {
        self.out.extend_from_slice(bytes);
        self
    }

    /// Writes what is queued; false when the client is gone.
    pub fn flush(&mut self) -> bool {
        let ok = self.s.write_all(&self.out).is_ok();
        self.out.clear();
        ok
    }
}

/// A well-behaved server: SETTINGS, then `body` for every request until the client leaves.
pub fn serve(s: TcpStream, settings: &[(SettingId, u32)], body: &[u8]) {
    let Some(p) = Peer::accept(s) else { return };
    serve_accepted(p, settings, body);
}

/// [`serve`] once the client's preface has been read.
pub fn serve_accepted(mut p: Peer, settings: &[(SettingId, u32)], body: &[u8]) {
    p.settings(settings);
    if !p.flush() {
        return;
    }
    loop {
        match p.next() {
            Some(Got::Headers { stream, .. }) => {
                p.respond(stream, body);
                if !p.flush() {
                    return;
                }
            }
            Some(Got::Settings { ack: false }) => {
                encode::settings_ack(&mut p.out);
                if !p.flush() {
                    return;
                }
            }
            Some(_) => {}
            None => return,
        }
    }
}
