//! [`FrameDecoder`]: where the next frame starts, the rules a frame header alone can break,
//! and DATA and unknown frames handed out or skipped in pieces as their bytes arrive.
//!
//! The caller keeps the bytes; the decoder keeps only what it must to go on where the
//! previous call stopped (the rest of a DATA or unknown frame, an unfinished header block).
//! Rules are checked in a fixed order, header first, so the error a byte stream gives does
//! not depend on how it was split into reads (the split tests and the fuzz target check it).

use super::error::{FrameError, FrameRule};
use super::header::{FrameHeader, FRAME_HEADER_LEN};
use super::{flag, kind, payload, Frame};

/// An incremental frame decoder; one per connection.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    max_frame_size: u32,
    state: State,
    /// The stream whose header block (HEADERS or PUSH_PROMISE without END_HEADERS) is
    /// unfinished: only CONTINUATION frames of that stream may come next (§6.10).
    header_block: Option<u32>,
    /// A connection error, returned again by every later call.
    failed: Option<FrameError>,
}

#[derive(Clone, Copy, Debug)]
enum State {
    /// The next byte starts a frame.
    Header,
    /// Inside a DATA frame whose header has been consumed.
    Data(DataRest),
    /// Inside an unknown frame whose header has been consumed: `left` bytes to skip.
    Skip { kind: u8, stream: u32, left: u32 },
}

/// What is left of a DATA frame.
#[derive(Clone, Copy, Debug)]
struct DataRest {
    stream: u32,
    end_stream: bool,
    flow: u32,
    data_left: u32,
    pad_left: u32,
}

impl FrameDecoder {
    /// `max_frame_size`: the SETTINGS_MAX_FRAME_SIZE this endpoint announced; a longer frame is
    /// a FRAME_SIZE_ERROR.
    pub fn new(max_frame_size: u32) -> Self {
        FrameDecoder { max_frame_size, state: State::Header, header_block: None, failed: None }
    }

    /// The limit on a frame's payload, as given to `new` or `set_max_frame_size`.
    pub fn max_frame_size(&self) -> u32 {
        self.max_frame_size
    }

    /// Changes the limit, once the peer has acknowledged a new SETTINGS_MAX_FRAME_SIZE.
    pub fn set_max_frame_size(&mut self, max_frame_size: u32) {
        self.max_frame_size = max_frame_size;
    }

    /// True unless the decoder is inside a DATA or unknown frame whose header it has used
    /// (what is left of it comes next) or owes the [`Frame::DataEnd`] of one. A peer that
    /// closes the connection while this is false, or while bytes wait in the caller's
    /// buffer, cut a frame short.
    pub fn is_between_frames(&self) -> bool {
        matches!(self.state, State::Header)
    }

    /// Decodes one frame (or one piece of a DATA frame) from the front of `buf`.
    /// Ok(Some((frame, used))): the caller drops `used` bytes from its buffer.
    /// Ok(None): not enough bytes; nothing consumed; read more and call again with the same
    /// bytes at the front. A non-DATA frame is returned only whole (the caller's buffer holds
    /// at least FRAME_HEADER_LEN + max_frame_size bytes). DATA pieces are handed out as soon as
    /// any payload byte is there; padding is skipped as it arrives. Unknown frames likewise are
    /// skipped piecewise (no need to buffer them whole).
    ///
    /// `used` is 0 only for a [`Frame::DataEnd`] whose last bytes an earlier piece took; so
    /// call until `Ok(None)`, even with an empty `buf`, to see every frame's end.
    ///
    /// Err: see [`FrameError`]. After a stream error, drop its `used` bytes and go on; after a
    /// connection error every call returns it again.
    pub fn decode<'a>(&mut self, buf: &'a [u8]) -> Result<Option<(Frame<'a>, usize)>, FrameError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let result = match self.state {
            State::Header => self.start(buf),
            State::Data(rest) => Ok(self.data(rest, buf)),
            State::Skip { kind, stream, left } => Ok(self.skip(kind, stream, left, buf, 0)),
        };
        if let Err(e) = result {
            if e.stream.is_none() {
                self.failed = Some(e);
            }
        }
        result
    }

    /// A frame starts at the front of `buf`.
    fn start<'a>(&mut self, buf: &'a [u8]) -> Result<Option<(Frame<'a>, usize)>, FrameError> {
        let Some(h) = FrameHeader::parse(buf) else {
            return Ok(None);
        };
        self.check_header(&h)?;
        let after = buf.get(FRAME_HEADER_LEN..).unwrap_or_default();
        match h.kind {
            kind::DATA => {
                let (pad, pad_byte) = if h.has(flag::PADDED) {
                    let Some(&pad) = after.first() else {
                        return Ok(None);
                    };
                    payload::check_padding(&h, pad, 0)?;
                    (u32::from(pad), 1)
                } else {
                    (0, 0)
                };
                let rest = DataRest {
                    stream: h.stream,
                    end_stream: h.has(flag::END_STREAM),
                    flow: h.len,
                    data_left: h.len - pad_byte - pad,
                    pad_left: pad,
                };
                let data = after.get(pad_byte as usize..).unwrap_or_default();
                let prefix = FRAME_HEADER_LEN + pad_byte as usize;
                Ok(self.data(rest, data).map(|(frame, used)| (frame, prefix + used)))
            }
            kind::HEADERS
            | kind::PRIORITY
            | kind::RST_STREAM
            | kind::SETTINGS
            | kind::PUSH_PROMISE
            | kind::PING
            | kind::GOAWAY
            | kind::WINDOW_UPDATE
            | kind::CONTINUATION => {
                let len = h.len as usize;
                let Some(payload) = after.get(..len) else {
                    return Ok(None);
                };
                let frame = payload::parse(&h, payload)?;
                match frame {
                    Frame::Headers { end_headers: false, .. }
                    | Frame::PushPromise { end_headers: false, .. } => {
                        self.header_block = Some(h.stream);
                    }
                    Frame::Continuation { end_headers: true, .. } => self.header_block = None,
                    _ => {}
                }
                Ok(Some((frame, FRAME_HEADER_LEN + len)))
            }
            _ => Ok(self.skip(h.kind, h.stream, h.len, after, FRAME_HEADER_LEN)),
        }
    }

    /// The rules a frame header alone can break, in a fixed order: size, header-block
    /// sequencing, stream id, then the lengths each type requires (§4.2, §6).
    fn check_header(&self, h: &FrameHeader) -> Result<(), FrameError> {
        let rule = if h.len > self.max_frame_size {
            FrameRule::TooLong { kind: h.kind, len: h.len, max: self.max_frame_size }
        } else if let Some(rule) = self.sequence(h) {
            rule
        } else if let Some(rule) = stream_rule(h) {
            rule
        } else if let Some(rule) = length_rule(h) {
            rule
        } else {
            return Ok(());
        };
        Err(FrameError::connection(rule))
    }

    /// §6.10: inside a header block only its CONTINUATION frames; outside, none.
    fn sequence(&self, h: &FrameHeader) -> Option<FrameRule> {
        match self.header_block {
            Some(stream) if h.kind != kind::CONTINUATION || h.stream != stream => {
                Some(FrameRule::ContinuationExpected { stream, kind: h.kind, got: h.stream })
            }
            None if h.kind == kind::CONTINUATION => {
                Some(FrameRule::UnexpectedContinuation { stream: h.stream })
            }
            _ => None,
        }
    }

    /// The next piece of a DATA frame from `buf` (which starts inside its payload): data
    /// bytes, then padding, then its end. `None` when `buf` has none of what comes next.
    fn data<'a>(&mut self, mut rest: DataRest, buf: &'a [u8]) -> Option<(Frame<'a>, usize)> {
        let stream = rest.stream;
        let mut used = 0;
        if rest.data_left > 0 {
            let n = buf.len().min(rest.data_left as usize);
            if n == 0 {
                return None;
            }
            // Padding that has arrived with the last data bytes goes with them.
            rest.data_left -= n as u32;
            used = n;
            if rest.data_left == 0 {
                let pad = (buf.len() - n).min(rest.pad_left as usize);
                rest.pad_left -= pad as u32;
                used += pad;
            }
            self.state = State::Data(rest);
            return Some((Frame::Data { stream, data: &buf[..n] }, used));
        }
        if rest.pad_left > 0 {
            let pad = buf.len().min(rest.pad_left as usize);
            if pad == 0 {
                return None;
            }
            rest.pad_left -= pad as u32;
            if rest.pad_left > 0 {
                self.state = State::Data(rest);
                return Some((Frame::Data { stream, data: &[] }, pad));
            }
            used = pad;
        }
        self.state = State::Header;
        Some((Frame::DataEnd { stream, end_stream: rest.end_stream, flow: rest.flow }, used))
    }

    /// Skips what `buf` holds of an unknown frame with `left` bytes to go, after `prefix`
    /// bytes of its header. `None` when there is something to skip but nothing in `buf`.
    fn skip<'a>(
        &mut self,
        kind: u8,
        stream: u32,
        left: u32,
        buf: &[u8],
        prefix: usize,
    ) -> Option<(Frame<'a>, usize)> {
        let n = buf.len().min(left as usize);
        if n == 0 && left > 0 {
            return None;
        }
        let left = left - n as u32;
        self.state = if left > 0 { State::Skip { kind, stream, left } } else { State::Header };
        Some((Frame::Unknown { kind, stream }, prefix + n))
    }
}

/// Which frames need a stream and which must not have one (§6.1–§6.10).
fn stream_rule(h: &FrameHeader) -> Option<FrameRule> {
    match (h.kind, h.stream) {
        (
            kind::DATA
            | kind::HEADERS
            | kind::PRIORITY
            | kind::RST_STREAM
            | kind::PUSH_PROMISE
            | kind::CONTINUATION,
            0,
        ) => Some(FrameRule::NoStream { kind: h.kind }),
        (kind::SETTINGS | kind::PING | kind::GOAWAY, stream) if stream != 0 => {
            Some(FrameRule::OnStream { kind: h.kind, stream })
        }
        _ => None,
    }
}

/// The sizes that are connection errors (§6.4, §6.5, §6.7, §6.8, §6.9) and the minimum
/// sizes of frames with mandatory fields. PRIORITY's size is a stream error and waits for
/// the whole frame (`payload.rs`).
fn length_rule(h: &FrameHeader) -> Option<FrameRule> {
    let fixed = match h.kind {
        kind::RST_STREAM | kind::WINDOW_UPDATE => Some(4),
        kind::PING => Some(8),
        kind::SETTINGS if h.has(flag::ACK) => {
            return (h.len != 0).then_some(FrameRule::SettingsAckLength { len: h.len });
        }
        kind::SETTINGS => {
            return (h.len % 6 != 0).then_some(FrameRule::SettingsLength { len: h.len });
        }
        _ => None,
    };
    if let Some(expected) = fixed {
        return (h.len != expected).then_some(FrameRule::Length {
            kind: h.kind,
            len: h.len,
            expected,
        });
    }
    let min = payload::min_len(h);
    (h.len < min).then_some(FrameRule::TooShort { kind: h.kind, len: h.len, min })
}
