//! Reads HTTP/3 frames from one stream's bytes as they arrive, in pieces of any size.
//!
//! What it hands out ([`Frame`]): a HEADERS frame's whole payload (a field section, for
//! QPACK), each piece of a DATA payload as it arrives (counted, never gathered), SETTINGS
//! parsed, GOAWAY's stream id. Reserved and unknown frame types are skipped, whatever
//! their length, without storing them. A frame not allowed on its stream is an error the
//! moment its type is read, before its payload: PUSH_PROMISE (herd allows no push),
//! HTTP/2's frame types, control frames on a request stream, a control stream that does
//! not open with SETTINGS.
//!
//! Only a HEADERS or SETTINGS payload split across pieces is gathered, in a buffer kept
//! between frames (its capacity reused: no allocation once warm), and only up to
//! [`Limits`]: a longer one is refused as soon as its length is read. Results do not depend
//! on how the input is split.
//!
//! It does not check the order of a response's frames (HEADERS before DATA): that is the
//! message's rule, [`crate::h3::ResponseReader`]'s.

use super::error::{H3Error, StreamKind};
use super::frame::{kind, setting};
use super::varint;

/// How much a server may make the decoder gather.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest HEADERS payload accepted (herd advertises it as
    /// SETTINGS_MAX_FIELD_SECTION_SIZE, which bounds the decoded size; the encoded one is
    /// never larger in practice).
    pub max_field_section_size: u64,
    /// The largest SETTINGS payload accepted.
    pub max_settings_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_field_section_size: 64 * 1024, max_settings_size: 4096 }
    }
}

/// A frame, or a piece of one, read from a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A HEADERS frame's payload, whole: an encoded field section.
    Headers(&'a [u8]),
    /// The next piece of a DATA frame's payload; empty only for a DATA frame of length 0.
    Data(&'a [u8]),
    /// The control stream's SETTINGS.
    Settings(Settings),
    /// The server will not process requests on this stream id or later.
    Goaway(u64),
}

/// The server's settings that herd looks at; every other identifier is ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    pub qpack_max_table_capacity: u64,
    pub qpack_blocked_streams: u64,
    /// The largest request field section the server accepts; None: unlimited.
    pub max_field_section_size: Option<u64>,
}

/// What one call to [`FrameDecoder::decode`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// Bytes of the input taken. When `frame` is None, all of them.
    pub consumed: usize,
    pub frame: Option<Frame<'a>>,
}

/// An incremental frame reader for one stream.
#[derive(Debug)]
pub struct FrameDecoder {
    stream: StreamKind,
    limits: Limits,
    state: State,
    partial: varint::Partial,
    /// A HEADERS, SETTINGS or one-varint payload split across pieces.
    buf: Vec<u8>,
    /// Control stream: the first frame (SETTINGS) has been read.
    settings_seen: bool,
    /// Control stream: the last GOAWAY's id.
    goaway: Option<u64>,
    data_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Type,
    Length {
        frame_type: u64,
    },
    /// Gathering a payload that is handed out whole.
    Payload {
        frame_type: u64,
        len: u64,
    },
    Data {
        remaining: u64,
    },
    Skip {
        remaining: u64,
    },
}

impl FrameDecoder {
    pub fn new(stream: StreamKind, limits: Limits) -> FrameDecoder {
        FrameDecoder {
            stream,
            limits,
            state: State::Type,
            partial: varint::Partial::default(),
            buf: Vec::new(),
            settings_seen: false,
            goaway: None,
            data_bytes: 0,
        }
    }

    /// Ready for a new stream of the same kind; keeps the buffer's capacity.
    pub fn reset(&mut self) {
        self.state = State::Type;
        self.partial = varint::Partial::default();
        self.buf.clear();
        self.settings_seen = false;
        self.goaway = None;
        self.data_bytes = 0;
    }

    /// DATA payload bytes handed out so far.
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Reads `input` up to the next frame (or piece of DATA). Call again with the rest of
    /// the input after a frame; `Decoded { frame: None, .. }` means every byte was taken
    /// and more are needed.
    pub fn decode<'a>(&'a mut self, input: &'a [u8]) -> Result<Decoded<'a>, H3Error> {
        let mut pos = 0;
        loop {
            let rest = &input[pos..];
            match self.state {
                State::Type | State::Length { .. } => {
                    if rest.is_empty() {
                        return Ok(Decoded { consumed: pos, frame: None });
                    }
                    let (n, value) = self.partial.feed(rest);
                    pos += n;
                    let Some(value) = value else { continue };
                    match self.state {
                        State::Length { frame_type: kind::DATA } if value == 0 => {
                            // Handed out all the same: an empty DATA frame before HEADERS
                            // breaks the response's frame order as much as any other.
                            self.state = State::Type;
                            return Ok(Decoded { consumed: pos, frame: Some(Frame::Data(&[])) });
                        }
                        State::Length { frame_type } => {
                            self.state = self.on_length(frame_type, value)?;
                            // A payload that is all in this piece is handed out from it.
                            if let State::Payload { frame_type, len } = self.state {
                                let len = usize::try_from(len).unwrap_or(usize::MAX);
                                if let Some(payload) = input[pos..].get(..len) {
                                    pos += len;
                                    self.state = State::Type;
                                    let frame = self.complete(frame_type, payload)?;
                                    return Ok(Decoded { consumed: pos, frame: Some(frame) });
                                }
                                self.buf.clear();
                            }
                        }
                        _ => {
                            self.check_type(value)?;
                            self.state = State::Length { frame_type: value };
                        }
                    }
                }
                State::Payload { frame_type, len } => {
                    if rest.is_empty() {
                        return Ok(Decoded { consumed: pos, frame: None });
                    }
                    let want = usize::try_from(len).unwrap_or(usize::MAX) - self.buf.len();
                    let take = want.min(rest.len());
                    self.buf.extend_from_slice(&rest[..take]);
                    pos += take;
                    if take == want {
                        self.state = State::Type;
                        let buf = std::mem::take(&mut self.buf);
                        let frame = self.complete_owned(frame_type, &buf);
                        self.buf = buf;
                        let frame = match frame? {
                            Some(frame) => frame,
                            None => Frame::Headers(&self.buf),
                        };
                        return Ok(Decoded { consumed: pos, frame: Some(frame) });
                    }
                }
                State::Data { remaining } => {
                    if rest.is_empty() {
                        return Ok(Decoded { consumed: pos, frame: None });
                    }
                    let take = usize::try_from(remaining).unwrap_or(usize::MAX).min(rest.len());
                    self.state = match remaining - take as u64 {
                        0 => State::Type,
                        remaining => State::Data { remaining },
                    };
                    self.data_bytes += take as u64;
                    let piece = &rest[..take];
                    return Ok(Decoded { consumed: pos + take, frame: Some(Frame::Data(piece)) });
                }
                State::Skip { remaining } => {
                    if rest.is_empty() {
                        return Ok(Decoded { consumed: pos, frame: None });
                    }
                    let take = usize::try_from(remaining).unwrap_or(usize::MAX).min(rest.len());
                    pos += take;
                    self.state = match remaining - take as u64 {
                        0 => State::Type,
                        remaining => State::Skip { remaining },
                    };
                }
            }
        }
    }

    /// The stream ended (FIN): an error when it ended inside a frame.
    pub fn finish(&self) -> Result<(), H3Error> {
        if self.state == State::Type && !self.partial.is_started() {
            Ok(())
        } else {
            Err(H3Error::Truncated)
        }
    }

    /// Refuses a frame type that may not come next on this stream.
    fn check_type(&mut self, frame_type: u64) -> Result<(), H3Error> {
        let unexpected = Err(H3Error::FrameUnexpected { frame_type, stream: self.stream });
        if kind::HTTP2_ONLY.contains(&frame_type) {
            return unexpected;
        }
        match self.stream {
            StreamKind::Request => match frame_type {
                kind::DATA | kind::HEADERS => Ok(()),
                kind::PUSH_PROMISE => Err(H3Error::PushRefused),
                kind::SETTINGS | kind::GOAWAY | kind::MAX_PUSH_ID | kind::CANCEL_PUSH => unexpected,
                _ => Ok(()),
            },
            StreamKind::Control => {
                if !self.settings_seen {
                    if frame_type != kind::SETTINGS {
                        return Err(H3Error::MissingSettings);
                    }
                    self.settings_seen = true;
                    return Ok(());
                }
                match frame_type {
                    kind::GOAWAY => Ok(()),
                    kind::CANCEL_PUSH => Err(H3Error::PushRefused),
                    kind::SETTINGS
                    | kind::DATA
                    | kind::HEADERS
                    | kind::PUSH_PROMISE
                    | kind::MAX_PUSH_ID => unexpected,
                    _ => Ok(()),
                }
            }
        }
    }

    /// What follows a frame header: its payload, handed out whole, in pieces, or skipped.
    fn on_length(&self, frame_type: u64, len: u64) -> Result<State, H3Error> {
        let limit = match frame_type {
            // (A DATA frame of length 0 never gets here.)
            kind::DATA => return Ok(State::Data { remaining: len }),
            kind::HEADERS => self.limits.max_field_section_size,
            kind::SETTINGS => self.limits.max_settings_size,
            kind::GOAWAY => {
                if len == 0 || len > 8 {
                    return Err(H3Error::FrameMalformed { frame_type });
                }
                8
            }
            // Reserved and unknown types (the ones refused were refused by their type).
            _ => return Ok(if len == 0 { State::Type } else { State::Skip { remaining: len } }),
        };
        if len > limit {
            return Err(H3Error::FrameTooLarge { frame_type, len, limit });
        }
        Ok(State::Payload { frame_type, len })
    }

    fn complete<'a>(&mut self, frame_type: u64, payload: &'a [u8]) -> Result<Frame<'a>, H3Error> {
        Ok(self.complete_owned(frame_type, payload)?.unwrap_or(Frame::Headers(payload)))
    }

    /// A whole payload of a frame handed out whole: None for HEADERS (the caller hands out
    /// the payload itself), the parsed frame otherwise.
    fn complete_owned(
        &mut self,
        frame_type: u64,
        payload: &[u8],
    ) -> Result<Option<Frame<'static>>, H3Error> {
        match frame_type {
            kind::SETTINGS => parse_settings(payload).map(|s| Some(Frame::Settings(s))),
            kind::GOAWAY => {
                let id = match varint::decode(payload) {
                    Some((id, n)) if n == payload.len() => id,
                    _ => return Err(H3Error::FrameMalformed { frame_type }),
                };
                // A server's GOAWAY names a client-initiated bidirectional stream, and may
                // only lower it (RFC 9114 §5.2).
                if id % 4 != 0 || self.goaway.is_some_and(|last| id > last) {
                    return Err(H3Error::GoawayId { id });
                }
                self.goaway = Some(id);
                Ok(Some(Frame::Goaway(id)))
            }
            _ => Ok(None),
        }
    }
}

/// SETTINGS' (identifier, value) pairs. A repeated identifier is detected among those
/// herd knows (a bit each); an unknown one is ignored however often it comes.
fn parse_settings(mut payload: &[u8]) -> Result<Settings, H3Error> {
    let malformed = H3Error::FrameMalformed { frame_type: kind::SETTINGS };
    let mut settings = Settings::default();
    let mut seen = 0u64;
    while !payload.is_empty() {
        let (id, a) = varint::decode(payload).ok_or(malformed)?;
        let (value, b) = varint::decode(&payload[a..]).ok_or(malformed)?;
        payload = &payload[a + b..];
        if setting::HTTP2_ONLY.contains(&id) {
            return Err(H3Error::Settings { id });
        }
        if id < 64 {
            if seen & (1 << id) != 0 {
                return Err(H3Error::Settings { id });
            }
            seen |= 1 << id;
        }
        match id {
            setting::QPACK_MAX_TABLE_CAPACITY => settings.qpack_max_table_capacity = value,
            setting::QPACK_BLOCKED_STREAMS => settings.qpack_blocked_streams = value,
            setting::MAX_FIELD_SECTION_SIZE => settings.max_field_section_size = Some(value),
            _ => {}
        }
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::{pieces, Split};
    use crate::h3::code;
    use crate::h3::frame;

    /// A frame as a test compares it: DATA pieces joined into one.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Owned {
        Headers(Vec<u8>),
        Data(Vec<u8>),
        Settings(Settings),
        Goaway(u64),
    }

    fn read_split(
        stream: StreamKind,
        limits: Limits,
        bytes: &[u8],
        split: Split,
    ) -> (Vec<Owned>, Result<(), H3Error>) {
        let mut d = FrameDecoder::new(stream, limits);
        let mut out: Vec<Owned> = Vec::new();
        for piece in pieces(bytes, split) {
            let mut input = piece;
            loop {
                let decoded = match d.decode(input) {
                    Ok(decoded) => decoded,
                    Err(e) => return (out, Err(e)),
                };
                assert!(decoded.consumed <= input.len());
                input = &input[decoded.consumed..];
                let Some(frame) = decoded.frame else {
                    assert!(input.is_empty(), "no frame, yet bytes left");
                    break;
                };
                match (frame, out.last_mut()) {
                    // Pieces of DATA in a row are joined: where one frame ends is nothing
                    // a reader needs (and the decoder does not say).
                    (Frame::Data(p), Some(Owned::Data(b))) => b.extend_from_slice(p),
                    (Frame::Data(p), _) => out.push(Owned::Data(p.to_vec())),
                    (Frame::Headers(p), _) => out.push(Owned::Headers(p.to_vec())),
                    (Frame::Settings(s), _) => out.push(Owned::Settings(s)),
                    (Frame::Goaway(id), _) => out.push(Owned::Goaway(id)),
                }
            }
        }
        (out, d.finish())
    }

    /// Reads `bytes` whole and in every split; all must agree.
    fn read(stream: StreamKind, limits: Limits, bytes: &[u8]) -> (Vec<Owned>, Result<(), H3Error>) {
        let whole = read_split(stream, limits, bytes, Split::Whole);
        let splits = (0..=bytes.len())
            .map(Split::At)
            .chain([Split::Bytewise])
            .chain((1..=8).map(Split::Seeded));
        for split in splits {
            assert_eq!(read_split(stream, limits, bytes, split), whole, "{split:?}");
        }
        whole
    }

    fn request(bytes: &[u8]) -> (Vec<Owned>, Result<(), H3Error>) {
        read(StreamKind::Request, Limits::default(), bytes)
    }

    fn control(bytes: &[u8]) -> (Vec<Owned>, Result<(), H3Error>) {
        read(StreamKind::Control, Limits::default(), bytes)
    }

    fn settings_frame(pairs: &[(u64, u64)]) -> Vec<u8> {
        let mut out = Vec::new();
        frame::encode_settings(pairs, &mut out);
        out
    }

    #[test]
    fn every_frame_round_trips_split_anywhere() {
        let mut bytes = Vec::new();
        frame::encode(kind::HEADERS, &[0x00, 0x00, 0xd9], &mut bytes);
        frame::encode(kind::DATA, b"hello", &mut bytes);
        frame::encode(kind::DATA, &[], &mut bytes);
        frame::encode(kind::DATA, &[7; 70], &mut bytes);
        frame::encode(kind::HEADERS, &[], &mut bytes);
        let (frames, end) = request(&bytes);
        assert_eq!(
            frames,
            [
                Owned::Headers(vec![0x00, 0x00, 0xd9]),
                Owned::Data([&b"hello"[..], &[7; 70]].concat()),
                Owned::Headers(Vec::new()),
            ]
        );
        assert_eq!(end, Ok(()));

        let mut bytes = settings_frame(&[
            (setting::QPACK_MAX_TABLE_CAPACITY, 4096),
            (setting::QPACK_BLOCKED_STREAMS, 100),
            (setting::MAX_FIELD_SECTION_SIZE, 1 << 40),
            (0x21, 1),
            (0x33, 5),
        ]);
        frame::encode_varint_frame(kind::GOAWAY, 1 << 20, &mut bytes);
        frame::encode_varint_frame(kind::GOAWAY, 1 << 20, &mut bytes);
        frame::encode_varint_frame(kind::GOAWAY, 0, &mut bytes);
        let want = Settings {
            qpack_max_table_capacity: 4096,
            qpack_blocked_streams: 100,
            max_field_section_size: Some(1 << 40),
        };
        let (frames, end) = control(&bytes);
        assert_eq!(
            frames,
            [
                Owned::Settings(want),
                Owned::Goaway(1 << 20),
                Owned::Goaway(1 << 20),
                Owned::Goaway(0)
            ]
        );
        assert_eq!(end, Ok(()));
    }

    #[test]
    fn unknown_and_reserved_frames_are_skipped_unstored() {
        let mut bytes = Vec::new();
        frame::encode(0x21, &[1; 500], &mut bytes);
        frame::encode(0x1f * 3 + 0x21, &[], &mut bytes);
        frame::encode(0x7fff_ffff, &[2; 3], &mut bytes);
        frame::encode(kind::DATA, b"x", &mut bytes);
        assert_eq!(request(&bytes), (vec![Owned::Data(b"x".to_vec())], Ok(())));
        let mut control_bytes = settings_frame(&[]);
        control_bytes.extend_from_slice(&bytes[..bytes.len() - 3]);
        let (frames, end) = control(&control_bytes);
        assert_eq!((frames.len(), end), (1, Ok(())));
        // A skipped frame's length may be anything, without memory: a 2^60-byte one.
        let mut d = FrameDecoder::new(StreamKind::Request, Limits::default());
        let mut huge = Vec::new();
        frame::encode_header(0x21, 1 << 60, &mut huge);
        huge.extend_from_slice(&[0; 4096]);
        assert_eq!(d.decode(&huge), Ok(Decoded { consumed: huge.len(), frame: None }));
        assert_eq!(d.finish(), Err(H3Error::Truncated));
    }

    #[test]
    fn data_is_handed_out_as_it_comes_and_never_gathered() {
        let mut d = FrameDecoder::new(StreamKind::Request, Limits::default());
        let mut header = Vec::new();
        frame::encode_header(kind::DATA, 1 << 40, &mut header);
        let got = d.decode(&header).unwrap();
        assert_eq!(got, Decoded { consumed: header.len(), frame: None });
        let piece = [9u8; 10_000];
        for _ in 0..10 {
            let got = d.decode(&piece).unwrap();
            assert_eq!(got, Decoded { consumed: piece.len(), frame: Some(Frame::Data(&piece)) });
        }
        assert_eq!(d.data_bytes(), 100_000);
        assert_eq!(d.buf.capacity(), 0, "nothing gathered");
        assert_eq!(d.finish(), Err(H3Error::Truncated));
    }

    #[test]
    fn frames_not_allowed_on_their_stream_are_refused_by_type() {
        let unexpected = |frame_type, stream| Err(H3Error::FrameUnexpected { frame_type, stream });
        let mut huge = Vec::new();
        // Refused before its (absurd) length is even read.
        frame::encode_header(kind::PUSH_PROMISE, 1 << 61, &mut huge);
        assert_eq!(request(&huge).1, Err(H3Error::PushRefused));
        for frame_type in [kind::SETTINGS, kind::GOAWAY, kind::MAX_PUSH_ID, kind::CANCEL_PUSH] {
            let mut bytes = Vec::new();
            frame::encode_varint_frame(frame_type, 4, &mut bytes);
            assert_eq!(request(&bytes).1, unexpected(frame_type, StreamKind::Request));
        }
        for frame_type in kind::HTTP2_ONLY {
            let mut bytes = Vec::new();
            frame::encode(frame_type, &[], &mut bytes);
            assert_eq!(request(&bytes).1, unexpected(frame_type, StreamKind::Request));
            let mut on_control = settings_frame(&[]);
            on_control.extend_from_slice(&bytes);
            assert_eq!(control(&on_control).1, unexpected(frame_type, StreamKind::Control));
        }
        for frame_type in [kind::DATA, kind::HEADERS, kind::SETTINGS, kind::MAX_PUSH_ID, 0x05] {
            let mut bytes = settings_frame(&[]);
            frame::encode(frame_type, &[], &mut bytes);
            assert_eq!(control(&bytes).1, unexpected(frame_type, StreamKind::Control));
        }
        let mut cancel = settings_frame(&[]);
        frame::encode_varint_frame(kind::CANCEL_PUSH, 0, &mut cancel);
        assert_eq!(control(&cancel).1, Err(H3Error::PushRefused));
        let mut goaway_first = Vec::new();
        frame::encode_varint_frame(kind::GOAWAY, 0, &mut goaway_first);
        let err = control(&goaway_first).1.unwrap_err();
        assert_eq!((err, err.code()), (H3Error::MissingSettings, code::H3_MISSING_SETTINGS));
    }

    #[test]
    fn payloads_past_their_limits_are_refused_when_their_length_is_read() {
        let limits = Limits { max_field_section_size: 10, max_settings_size: 4 };
        let mut bytes = Vec::new();
        frame::encode_header(kind::HEADERS, 11, &mut bytes);
        let want = H3Error::FrameTooLarge { frame_type: kind::HEADERS, len: 11, limit: 10 };
        assert_eq!(read(StreamKind::Request, limits, &bytes).1, Err(want));
        assert_eq!(want.code(), code::H3_EXCESSIVE_LOAD);
        let mut bytes = Vec::new();
        frame::encode(kind::HEADERS, &[0; 10], &mut bytes);
        assert_eq!(read(StreamKind::Request, limits, &bytes).1, Ok(()));
        let settings = settings_frame(&[(0x21, 0), (0x22, 0), (0x23, 0)]);
        let want = H3Error::FrameTooLarge { frame_type: kind::SETTINGS, len: 6, limit: 4 };
        assert_eq!(read(StreamKind::Control, limits, &settings).1, Err(want));
    }

    #[test]
    fn malformed_payloads_are_frame_errors() {
        let malformed = |frame_type| Err(H3Error::FrameMalformed { frame_type });
        for payload in [&[][..], &[0x40], &[0x04, 0x00], &[0; 9]] {
            let mut bytes = settings_frame(&[]);
            frame::encode(kind::GOAWAY, payload, &mut bytes);
            let end = control(&bytes).1;
            assert_eq!(end, malformed(kind::GOAWAY), "{payload:02x?}");
            assert_eq!(end.unwrap_err().code(), code::H3_FRAME_ERROR);
        }
        // A pair cut short; a value missing.
        for payload in [&[0x06][..], &[0x06, 0x40], &[0x01, 0x00, 0x06]] {
            let mut bytes = Vec::new();
            frame::encode(kind::SETTINGS, payload, &mut bytes);
            assert_eq!(control(&bytes).1, malformed(kind::SETTINGS), "{payload:02x?}");
        }
        let err = request(&[0x00, 0x05, b'a']).1.unwrap_err();
        assert_eq!((err, err.code()), (H3Error::Truncated, code::H3_FRAME_ERROR));
        assert_eq!(request(&[0x40]).1, Err(H3Error::Truncated), "inside a type");
    }

    #[test]
    fn settings_and_goaway_follow_their_rules() {
        for id in setting::HTTP2_ONLY {
            let bytes = settings_frame(&[(id, 0)]);
            let err = control(&bytes).1.unwrap_err();
            assert_eq!((err, err.code()), (H3Error::Settings { id }, code::H3_SETTINGS_ERROR));
        }
        let twice = settings_frame(&[(setting::MAX_FIELD_SECTION_SIZE, 1), (0x21, 0), (0x06, 2)]);
        assert_eq!(control(&twice).1, Err(H3Error::Settings { id: 0x06 }));
        let unknown_twice = settings_frame(&[(0x4242, 1), (0x4242, 2)]);
        assert_eq!(control(&unknown_twice).1, Ok(()), "unknown identifiers are ignored");
        for (ids, bad) in [(&[3u64][..], 3), (&[8, 12], 12), (&[8, 4, 4], 0)] {
            let mut bytes = settings_frame(&[]);
            for &id in ids {
                frame::encode_varint_frame(kind::GOAWAY, id, &mut bytes);
            }
            let end = control(&bytes).1;
            if bad == 0 {
                assert_eq!(end, Ok(()), "{ids:?}");
            } else {
                assert_eq!(end, Err(H3Error::GoawayId { id: bad }), "{ids:?}");
            }
        }
    }

    #[test]
    fn reset_keeps_the_buffer() {
        let mut d = FrameDecoder::new(StreamKind::Request, Limits::default());
        let mut bytes = Vec::new();
        frame::encode(kind::HEADERS, &[1; 100], &mut bytes);
        let (a, b) = bytes.split_at(50);
        assert_eq!(d.decode(a).unwrap().frame, None);
        assert_eq!(d.decode(b).unwrap().frame, Some(Frame::Headers(&[1; 100])));
        let capacity = d.buf.capacity();
        d.reset();
        assert_eq!(d.finish(), Ok(()));
        assert_eq!(d.buf.capacity(), capacity);
    }
}
