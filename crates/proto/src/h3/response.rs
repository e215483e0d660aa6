//! One request stream's response (RFC 9114 §4.1): HEADERS, any number of interim (1xx)
//! HEADERS before them, DATA, and optional trailing HEADERS, then the end of the stream.
//! The response ends with its stream (FIN), not with a length: [`ResponseReader::finish`]
//! is where it is judged whole.
//!
//! The reader checks what HTTP/3 makes the message's rules: the frame order (DATA before
//! HEADERS, anything after trailers: H3_FRAME_UNEXPECTED), a `:status` on every head and
//! none in trailers, and the body against `content-length` (none at all for HEAD, 204 and
//! 304). Fields and body pieces go to the caller's callback as [`Part`]s; the body is
//! counted, never kept. What it hands out does not depend on how the stream's bytes are
//! split: a body longer than its length is cut at the length, then refused.

use super::error::{H3Error, MessageError, StreamKind};
use super::frame::kind;
use super::frame_decoder::{Frame, FrameDecoder, Limits};
use super::qpack::Decoder;

/// How many interim responses herd reads before it calls the server's behaviour abuse.
const MAX_INTERIM: u32 = 16;

/// A piece of a response, as it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// A field of the final response's head, `:status` included (an interim response's
    /// fields are not handed out).
    Field(&'a [u8], &'a [u8]),
    /// The next piece of the body (never empty).
    Body(&'a [u8]),
    /// A trailer field.
    Trailer(&'a [u8], &'a [u8]),
}

/// A whole response, as [`ResponseReader::finish`] judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub content_length: Option<u64>,
    pub body_bytes: u64,
}

/// Reads the response on one request stream; [`ResponseReader::reset`] makes it ready
/// for the next stream, keeping its buffers.
#[derive(Debug)]
pub struct ResponseReader {
    frames: FrameDecoder,
    qpack: Decoder,
    message: Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the final response's HEADERS.
    Head,
    Body,
    /// Trailers have been read: nothing but unknown frames may follow.
    Trailers,
}

/// Where the response is, apart from its frames.
#[derive(Debug, Clone, Copy)]
struct Message {
    phase: Phase,
    head_request: bool,
    interim: u32,
    status: Option<u16>,
    content_length: Option<u64>,
    body_bytes: u64,
}

impl ResponseReader {
    pub fn new(limits: Limits) -> ResponseReader {
        ResponseReader {
            frames: FrameDecoder::new(StreamKind::Request, limits),
            qpack: Decoder::new(limits.max_field_section_size),
            message: Message::new(false),
        }
    }

    /// Ready for the response to a new request; `head_request`: it was a HEAD, so the
    /// response has no body whatever its `content-length`.
    pub fn reset(&mut self, head_request: bool) {
        self.frames.reset();
        self.message = Message::new(head_request);
    }

    /// The final response's status, once its HEADERS have been read.
    pub fn status(&self) -> Option<u16> {
        self.message.status
    }

    /// Body bytes read so far.
    pub fn body_bytes(&self) -> u64 {
        self.message.body_bytes
    }

    /// Reads all of `input`, handing each field and body piece to `on`. After an error the
    /// stream (or the connection: [`H3Error::is_stream_error`]) is to be closed; the reader
    /// is only good for [`ResponseReader::reset`].
    pub fn feed<F>(&mut self, mut input: &[u8], mut on: F) -> Result<(), H3Error>
    where
        F: FnMut(Part<'_>),
    {
        let ResponseReader { frames, qpack, message } = self;
        while !input.is_empty() {
            let decoded = frames.decode(input)?;
            input = &input[decoded.consumed..];
            match decoded.frame {
                None => break,
                Some(Frame::Headers(block)) => message.on_headers(qpack, block, &mut on)?,
                Some(Frame::Data(piece)) => message.on_data(piece, &mut on)?,
                // The frame decoder refuses these on a request stream by their type.
                Some(Frame::Settings(_)) => return Err(unexpected(kind::SETTINGS)),
                Some(Frame::Goaway(_)) => return Err(unexpected(kind::GOAWAY)),
            }
        }
        Ok(())
    }

    /// The stream ended (FIN): the response, or what was wrong with it.
    pub fn finish(&self) -> Result<Response, H3Error> {
        self.frames.finish()?;
        let m = &self.message;
        let Some(status) = m.status else { return Err(MessageError::NoHeaders.into()) };
        if let Some(want) = m.body_length() {
            if m.body_bytes != want {
                return Err(MessageError::BodyShort { want, got: m.body_bytes }.into());
            }
        }
        Ok(Response { status, content_length: m.content_length, body_bytes: m.body_bytes })
    }
}

impl Message {
    fn new(head_request: bool) -> Message {
        Message {
            phase: Phase::Head,
            head_request,
            interim: 0,
            status: None,
            content_length: None,
            body_bytes: 0,
        }
    }

    /// The body's length where HTTP fixes it.
    fn body_length(&self) -> Option<u64> {
        if self.head_request || matches!(self.status, Some(204 | 304)) {
            return Some(0);
        }
        self.content_length
    }

    fn on_headers<F>(
        &mut self,
        qpack: &mut Decoder,
        block: &[u8],
        on: &mut F,
    ) -> Result<(), H3Error>
    where
        F: FnMut(Part<'_>),
    {
        match self.phase {
            Phase::Head => {
                // `:status` comes first (the decoder refuses it after a regular field), so
                // an interim response is known before any of its fields would be handed out.
                let mut interim = false;
                let section = qpack.decode(block, |name, value| {
                    if name == b":status" {
                        interim = value.first() == Some(&b'1');
                    }
                    if !interim {
                        on(Part::Field(name, value));
                    }
                })?;
                let status = section.status.ok_or(MessageError::NoStatus)?;
                if status < 200 {
                    self.interim += 1;
                    if self.interim > MAX_INTERIM {
                        return Err(MessageError::TooManyInterim(MAX_INTERIM).into());
                    }
                    return Ok(());
                }
                self.status = Some(status);
                self.content_length = section.content_length;
                self.phase = Phase::Body;
            }
            Phase::Body => {
                let section = qpack.decode(block, |name, value| on(Part::Trailer(name, value)))?;
                if section.status.is_some() {
                    return Err(MessageError::PseudoHeader.into());
                }
                self.phase = Phase::Trailers;
            }
            Phase::Trailers => return Err(unexpected(kind::HEADERS)),
        }
        Ok(())
    }

    fn on_data<F>(&mut self, piece: &[u8], on: &mut F) -> Result<(), H3Error>
    where
        F: FnMut(Part<'_>),
    {
        if self.phase != Phase::Body {
            return Err(unexpected(kind::DATA));
        }
        let len = piece.len() as u64;
        if let Some(want) = self.body_length() {
            let room = want.saturating_sub(self.body_bytes);
            if len > room {
                // What fits first, so that the bytes handed out do not depend on the split.
                let fits = &piece[..usize::try_from(room).unwrap_or(piece.len())];
                if !fits.is_empty() {
                    on(Part::Body(fits));
                }
                self.body_bytes = want;
                return Err(MessageError::BodyPastLength { want }.into());
            }
        }
        self.body_bytes += len;
        if !piece.is_empty() {
            on(Part::Body(piece));
        }
        Ok(())
    }
}

fn unexpected(frame_type: u64) -> H3Error {
    H3Error::FrameUnexpected { frame_type, stream: StreamKind::Request }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h3::frame::{self, kind};
    use crate::h3::fuzzing::response_all_splits;
    use crate::h3::qpack::encode_field_section;
    use crate::h3::{code, QpackError};

    fn headers(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut block = Vec::new();
        encode_field_section(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut block);
        let mut out = Vec::new();
        frame::encode(kind::HEADERS, &block, &mut out);
        out
    }

    fn data(body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        frame::encode(kind::DATA, body, &mut out);
        out
    }

    fn stream(frames: &[Vec<u8>]) -> Vec<u8> {
        frames.concat()
    }

    fn ok(status: u16, content_length: Option<u64>, body_bytes: u64) -> Result<Response, H3Error> {
        Ok(Response { status, content_length, body_bytes })
    }

    fn read(bytes: &[u8]) -> crate::h3::fuzzing::ResponseTranscript {
        response_all_splits(bytes, false, Limits::default())
    }

    #[test]
    fn a_response_with_its_length_and_body_in_two_data_frames() {
        let bytes = stream(&[
            headers(&[(":status", "200"), ("content-length", "13"), ("server", "caddy")]),
            data(b"hello "),
            data(b"world!\n"),
        ]);
        let t = read(&bytes);
        assert_eq!(t.end, ok(200, Some(13), 13));
        assert_eq!(t.body, b"hello world!\n");
        let fields: Vec<_> = t.fields.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        assert_eq!(
            fields,
            [(&b":status"[..], &b"200"[..]), (b"content-length", b"13"), (b"server", b"caddy")]
        );
        assert!(t.trailers.is_empty());
    }

    #[test]
    fn interim_responses_are_skipped_and_trailers_handed_out() {
        let bytes = stream(&[
            headers(&[(":status", "100")]),
            headers(&[(":status", "103"), ("link", "</s.css>; rel=preload")]),
            headers(&[(":status", "200")]),
            data(b"abc"),
            headers(&[("x-checksum", "1")]),
        ]);
        let t = read(&bytes);
        assert_eq!(t.end, ok(200, None, 3));
        assert_eq!(t.fields, [(b":status".to_vec(), b"200".to_vec())]);
        assert_eq!(t.trailers, [(b"x-checksum".to_vec(), b"1".to_vec())]);
    }

    #[test]
    fn unknown_and_reserved_frames_are_skipped_anywhere() {
        let mut grease = Vec::new();
        frame::encode(0x21, b"ignored", &mut grease);
        frame::encode(0x1f * 7 + 0x21, &[], &mut grease);
        frame::encode(0x3fff, &[0xff; 300], &mut grease);
        let bytes = stream(&[
            grease.clone(),
            headers(&[(":status", "404"), ("content-length", "2")]),
            grease.clone(),
            data(b"no"),
            grease.clone(),
            data(b""),
            headers(&[("a", "b")]),
            grease,
        ]);
        assert_eq!(read(&bytes).end, ok(404, Some(2), 2));
    }

    #[test]
    fn no_body_for_head_204_and_304() {
        let head = headers(&[(":status", "200"), ("content-length", "1000")]);
        let t = response_all_splits(&head, true, Limits::default());
        assert_eq!(t.end, ok(200, Some(1000), 0));
        let with_body = stream(&[head, data(b"x")]);
        let t = response_all_splits(&with_body, true, Limits::default());
        assert_eq!(t.end, Err(MessageError::BodyPastLength { want: 0 }.into()));
        assert!(t.body.is_empty());
        for status in ["204", "304"] {
            let bytes = stream(&[headers(&[(":status", status)]), data(b"x")]);
            let t = read(&bytes);
            assert_eq!(t.end, Err(MessageError::BodyPastLength { want: 0 }.into()), "{status}");
        }
    }

    #[test]
    fn a_body_past_its_length_is_cut_there_and_refused() {
        let bytes = stream(&[
            headers(&[(":status", "200"), ("content-length", "4")]),
            data(b"abc"),
            data(b"defgh"),
        ]);
        let t = read(&bytes);
        assert_eq!(t.body, b"abcd", "the same bytes whatever the split");
        let err = t.end.unwrap_err();
        assert_eq!(err, MessageError::BodyPastLength { want: 4 }.into());
        assert_eq!(err.code(), code::H3_MESSAGE_ERROR);
        assert!(err.is_stream_error());
    }

    #[test]
    fn a_short_body_or_a_missing_head_is_found_when_the_stream_ends() {
        let bytes = stream(&[headers(&[(":status", "200"), ("content-length", "4")]), data(b"ab")]);
        assert_eq!(read(&bytes).end, Err(MessageError::BodyShort { want: 4, got: 2 }.into()));
        assert_eq!(read(&[]).end, Err(MessageError::NoHeaders.into()));
        let interim_only = headers(&[(":status", "103")]);
        assert_eq!(read(&interim_only).end, Err(MessageError::NoHeaders.into()));
        // Ends inside a frame: its header, or its payload.
        let whole = stream(&[headers(&[(":status", "200")]), data(b"abc")]);
        for cut in [whole.len() - 1, whole.len() - 4, 1] {
            assert_eq!(read(&whole[..cut]).end, Err(H3Error::Truncated), "cut at {cut}");
        }
    }

    #[test]
    fn frames_out_of_order_are_unexpected() {
        let unexpected =
            |frame_type| Err(H3Error::FrameUnexpected { frame_type, stream: StreamKind::Request });
        let status = headers(&[(":status", "200")]);
        assert_eq!(read(&data(b"x")).end, unexpected(kind::DATA));
        assert_eq!(read(&data(b"")).end, unexpected(kind::DATA), "even an empty one");
        let after_trailers = stream(&[status.clone(), headers(&[("t", "1")]), data(b"x")]);
        assert_eq!(read(&after_trailers).end, unexpected(kind::DATA));
        let twice = stream(&[status.clone(), headers(&[("t", "1")]), headers(&[("t", "2")])]);
        assert_eq!(read(&twice).end, unexpected(kind::HEADERS));
        for control in [kind::SETTINGS, kind::GOAWAY, kind::MAX_PUSH_ID, kind::CANCEL_PUSH, 0x02] {
            let mut bytes = status.clone();
            frame::encode_varint_frame(control, 0, &mut bytes);
            let err = read(&bytes).end.unwrap_err();
            assert_eq!(err, unexpected(control).unwrap_err());
            assert_eq!(err.code(), code::H3_FRAME_UNEXPECTED);
        }
        let mut push = Vec::new();
        frame::encode_varint_frame(kind::PUSH_PROMISE, 0, &mut push);
        assert_eq!(read(&push).end, Err(H3Error::PushRefused));
    }

    #[test]
    fn heads_that_break_http_rules_are_malformed() {
        let cases: &[(&[(&str, &str)], MessageError)] = &[
            (&[("server", "x")], MessageError::NoStatus),
            (&[(":status", "2000")], MessageError::InvalidStatus),
            (&[(":status", "099")], MessageError::InvalidStatus),
            (&[(":status", "20x")], MessageError::InvalidStatus),
            (&[("server", "x"), (":status", "200")], MessageError::PseudoHeader),
            (&[(":status", "200"), (":status", "200")], MessageError::PseudoHeader),
            (&[(":status", "200"), (":path", "/")], MessageError::PseudoHeader),
            (&[(":status", "200"), ("content-length", "-1")], MessageError::InvalidContentLength),
            (&[(":status", "200"), ("content-length", "")], MessageError::InvalidContentLength),
            (
                &[(":status", "200"), ("content-length", "1"), ("content-length", "2")],
                MessageError::InvalidContentLength,
            ),
            (&[(":status", "200"), ("Server", "x")], MessageError::FieldName),
        ];
        for (fields, want) in cases {
            let t = read(&headers(fields));
            assert_eq!(t.end, Err(H3Error::Message(*want)), "{fields:?}");
        }
        // A repeated equal length is one length.
        let same = headers(&[(":status", "200"), ("content-length", "0"), ("content-length", "0")]);
        assert_eq!(read(&same).end, ok(200, Some(0), 0));
        let trailer_status =
            stream(&[headers(&[(":status", "200")]), headers(&[(":status", "200")])]);
        assert_eq!(read(&trailer_status).end, Err(MessageError::PseudoHeader.into()));
    }

    #[test]
    fn limits_are_typed_errors() {
        let many = vec![headers(&[(":status", "100")]); 17];
        assert_eq!(read(&many.concat()).end, Err(MessageError::TooManyInterim(16).into()));
        assert_eq!(read(&many[..16].concat()).end, Err(MessageError::NoHeaders.into()));

        let small = Limits { max_field_section_size: 100, max_settings_size: 16 };
        let value = "v".repeat(40);
        // 7 + 3 + 32 and 6 + 40 + 32: 120 bytes decoded, from 48 encoded.
        let big = headers(&[(":status", "200"), ("server", &value)]);
        let t = response_all_splits(&big, false, small);
        assert_eq!(t.end, Err(H3Error::FieldSectionTooLarge { limit: 100 }));
        assert!(big.len() < 100, "under the limit encoded");
        let bigger = headers(&[(":status", "200"), ("server", &"v".repeat(120))]);
        let t = response_all_splits(&bigger, false, small);
        // 2 bytes of prefix, 1 for :status, 2 for the name's index, 1 for the length.
        let want = H3Error::FrameTooLarge { frame_type: kind::HEADERS, len: 126, limit: 100 };
        assert_eq!(t.end, Err(want));
        assert_eq!(want.code(), code::H3_EXCESSIVE_LOAD);
    }

    #[test]
    fn qpack_failures_close_the_connection() {
        // RFC 9204 §B.2's second section: Required Insert Count 3, refers to the dynamic
        // table herd said it does not have.
        let mut dynamic = Vec::new();
        frame::encode(kind::HEADERS, &[0x03, 0x81, 0x10, 0x11], &mut dynamic);
        let err = read(&dynamic).end.unwrap_err();
        assert_eq!(err, H3Error::Qpack(QpackError::DynamicReference));
        assert_eq!(err.code(), code::QPACK_DECOMPRESSION_FAILED);
        assert!(!err.is_stream_error());
    }

    #[test]
    fn the_reader_is_reused_across_streams() {
        let mut r = ResponseReader::new(Limits::default());
        let first = stream(&[headers(&[(":status", "200"), ("content-length", "1")]), data(b"a")]);
        let second = headers(&[(":status", "304")]);
        r.reset(false);
        r.feed(&first[..3], |_| {}).unwrap();
        assert_eq!(r.status(), None);
        r.feed(&first[3..], |_| {}).unwrap();
        assert_eq!((r.status(), r.body_bytes()), (Some(200), 1));
        assert_eq!(r.finish(), ok(200, Some(1), 1));
        r.reset(false);
        r.feed(&second, |_| {}).unwrap();
        assert_eq!(r.finish(), ok(304, None, 0));
    }
}
