//! A request body as it arrives: delimited by Content-Length or by chunked framing, decoded in
//! whatever pieces the socket delivers, and either discarded (a handler that does not read it,
//! so the connection can carry the next request) or re-emitted into the output (`/echo`): as
//! is when the length was announced, re-chunked when it was not. Nothing is buffered here: each
//! call consumes all the input it is given that belongs to the body. Does not read sockets or
//! decide which handler reads a body (conn.rs and router.rs do).
//!
//! The chunked decoder is the server's own rather than herd-proto's client decoder because it
//! must hand out the data, not only count it, and because a server must be stricter about what
//! it accepts (RFC 9112 §7.1): sizes of at most 16 hex digits, optional whitespace before a
//! chunk extension, extensions and trailers skipped but bounded. A bare LF is accepted where
//! CRLF is expected, as for heads.

use std::io::Write as _;

/// Longest chunk-size line (digits, whitespace, extensions) accepted.
const MAX_SIZE_LINE: usize = 4096;

/// Longest trailer section accepted; trailers are header fields and get the head's bound.
const MAX_TRAILERS: usize = 64 * 1024;

/// Where decoded body bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Sink {
    /// Dropped.
    #[default]
    Discard,
    /// Appended to the output as they are (the response announced the same Content-Length).
    Echo,
    /// Appended to the output as chunks, then the last chunk (the response is chunked).
    EchoChunked,
}

/// The body framing is broken: the connection cannot continue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadChunk;

/// One request body being read.
#[derive(Debug)]
pub(crate) struct RequestBody {
    framing: Framing,
    sink: Sink,
}

#[derive(Debug)]
enum Framing {
    /// Bytes still to come.
    Length(u64),
    Chunked(Chunked),
}

impl RequestBody {
    pub(crate) fn with_length(n: u64, sink: Sink) -> RequestBody {
        RequestBody { framing: Framing::Length(n), sink }
    }

    pub(crate) fn chunked(sink: Sink) -> RequestBody {
        RequestBody { framing: Framing::Chunked(Chunked::default()), sink }
    }

    /// Takes what belongs to the body from the front of `input`, writing data to `out` as the
    /// sink says. Returns the bytes consumed and whether the body is complete.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(usize, bool), BadChunk> {
        let sink = self.sink;
        match &mut self.framing {
            Framing::Length(remaining) => {
                let n = usize::try_from(*remaining).map_or(input.len(), |r| r.min(input.len()));
                if sink != Sink::Discard {
                    out.extend_from_slice(&input[..n]);
                }
                *remaining -= n as u64;
                Ok((n, *remaining == 0))
            }
            Framing::Chunked(decoder) => {
                let (n, done) = decoder.decode(input, |data| emit(sink, data, out))?;
                if done && sink == Sink::EchoChunked {
                    out.extend_from_slice(b"0\r\n\r\n");
                }
                Ok((n, done))
            }
        }
    }
}

fn emit(sink: Sink, data: &[u8], out: &mut Vec<u8>) {
    match sink {
        Sink::Discard => {}
        Sink::Echo => out.extend_from_slice(data),
        Sink::EchoChunked => {
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{:x}\r\n", data.len());
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Chunked framing decoder; survives any split of its input.
#[derive(Debug, Default)]
struct Chunked {
    state: State,
    /// The chunk size being read, then the bytes of the chunk still to come.
    size: u64,
    digits: u8,
    /// Bytes of the current size line, or of the trailer section.
    line_len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Reading hex digits.
    #[default]
    Size,
    /// After the digits: whitespace, then `;` extensions or the line end.
    SizeRest,
    /// Inside a chunk extension, up to the line end.
    Extension,
    /// Saw CR at the end of the size line.
    SizeLf,
    Data,
    /// After the data: CRLF.
    DataCr,
    DataLf,
    /// At the start of a trailer line, or the final empty line.
    TrailerStart,
    /// Inside a trailer line.
    Trailer,
    /// Saw CR of the final empty line.
    FinalLf,
    Done,
}

impl Chunked {
    fn decode(
        &mut self,
        input: &[u8],
        mut data: impl FnMut(&[u8]),
    ) -> Result<(usize, bool), BadChunk> {
        let mut i = 0;
        while i < input.len() && self.state != State::Done {
            if self.state == State::Data {
                let n =
                    usize::try_from(self.size).map_or(input.len() - i, |s| s.min(input.len() - i));
                data(&input[i..i + n]);
                i += n;
                self.size -= n as u64;
                if self.size == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            let b = input[i];
            i += 1;
            self.state = self.step(b)?;
        }
        Ok((i, self.state == State::Done))
    }

    /// One byte outside chunk data.
    fn step(&mut self, b: u8) -> Result<State, BadChunk> {
        use State::*;
        if matches!(self.state, Size | SizeRest | Extension | SizeLf) {
            self.line_len += 1;
            if self.line_len > MAX_SIZE_LINE {
                return Err(BadChunk);
            }
        }
        if matches!(self.state, TrailerStart | Trailer | FinalLf) {
            self.line_len += 1;
            if self.line_len > MAX_TRAILERS {
                return Err(BadChunk);
            }
        }
        Ok(match (self.state, b) {
            (Size, _) if b.is_ascii_hexdigit() => {
                if self.digits == 16 {
                    return Err(BadChunk);
                }
                self.digits += 1;
                // Cannot overflow: at most 16 hex digits.
                self.size = self.size << 4 | u64::from(hex_value(b));
                Size
            }
            (Size, _) if self.digits == 0 => return Err(BadChunk),
            (Size | SizeRest, b' ' | b'\t') => SizeRest,
            (Size | SizeRest, b';') => Extension,
            (Size | SizeRest | Extension, b'\r') => SizeLf,
            (Size | SizeRest | Extension | SizeLf, b'\n') => self.end_size_line(),
            (Extension, _) => Extension,
            (DataCr, b'\r') => DataLf,
            (DataCr | DataLf, b'\n') => {
                self.line_len = 0;
                self.digits = 0;
                self.size = 0;
                Size
            }
            (TrailerStart, b'\r') => FinalLf,
            (TrailerStart | FinalLf, b'\n') => Done,
            (Trailer, b'\n') => TrailerStart,
            (TrailerStart | Trailer, _) => Trailer,
            _ => return Err(BadChunk),
        })
    }

    fn end_size_line(&mut self) -> State {
        if self.size == 0 {
            // The last chunk: the trailer section follows.
            self.line_len = 0;
            State::TrailerStart
        } else {
            State::Data
        }
    }
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `step` bytes; returns (consumed, done, output).
    fn run(body: &mut RequestBody, input: &[u8], step: usize) -> (usize, bool, Vec<u8>) {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < input.len() {
            let end = (pos + step).min(input.len());
            let (n, done) = body.feed(&input[pos..end], &mut out).expect("valid body");
            pos += n;
            if done {
                return (pos, true, out);
            }
            assert_eq!(pos, end, "everything offered is consumed until done");
        }
        (pos, false, out)
    }

    const CHUNKED: &[u8] =
        b"5\r\nhello\r\n1;ext=\"x\"\r\n \r\nA \r\n0123456789\r\n0\r\nTrailer: t\r\n\r\nNEXT";

    #[test]
    fn chunked_echo_every_split() {
        for step in 1..=CHUNKED.len() {
            let mut body = RequestBody::chunked(Sink::Echo);
            let (n, done, out) = run(&mut body, CHUNKED, step);
            assert!(done);
            assert_eq!(&CHUNKED[n..], b"NEXT", "step {step}");
            assert_eq!(out, b"hello 0123456789");
        }
    }

    #[test]
    fn chunked_rechunks() {
        let mut body = RequestBody::chunked(Sink::EchoChunked);
        let (_, done, out) = run(&mut body, CHUNKED, CHUNKED.len());
        assert!(done);
        assert_eq!(out, b"5\r\nhello\r\n1\r\n \r\na\r\n0123456789\r\n0\r\n\r\n");
    }

    #[test]
    fn bare_lf_and_discard() {
        let mut body = RequestBody::chunked(Sink::Discard);
        let (n, done, out) = run(&mut body, b"3\nabc\n0\n\nX", 1);
        assert!(done);
        assert_eq!(n, 9);
        assert!(out.is_empty());
    }

    #[test]
    fn length_bodies() {
        let mut body = RequestBody::with_length(5, Sink::Echo);
        let mut out = Vec::new();
        assert_eq!(body.feed(b"abc", &mut out), Ok((3, false)));
        assert_eq!(body.feed(b"defgh", &mut out), Ok((2, true)));
        assert_eq!(out, b"abcde");
    }

    #[test]
    fn broken_chunking() {
        let long_ext = format!("1;{}\r\n", "x".repeat(MAX_SIZE_LINE));
        for bad in [
            &b"\r\n"[..],
            b"g\r\n",
            b"-1\r\n",
            b"12345678901234567\r\n",
            b"1\r\nab\r\n",
            b"1\r\na\rX",
            b"1 2\r\n",
            long_ext.as_bytes(),
        ] {
            let mut body = RequestBody::chunked(Sink::Discard);
            assert_eq!(
                body.feed(bad, &mut Vec::new()),
                Err(BadChunk),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut body = RequestBody::chunked(Sink::Discard);
        let mut trailers = b"0\r\n".to_vec();
        trailers.extend(std::iter::repeat_n(b'x', MAX_TRAILERS + 1));
        assert_eq!(body.feed(&trailers, &mut Vec::new()), Err(BadChunk));
    }

    #[test]
    fn largest_size_does_not_overflow() {
        let mut body = RequestBody::chunked(Sink::Discard);
        assert_eq!(body.feed(b"ffffffffffffffff\r\nab", &mut Vec::new()), Ok((20, false)));
    }
}
