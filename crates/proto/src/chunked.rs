//! Chunked transfer decoding as a state machine that survives any split of its input:
//! inside the size line, inside chunk data, between CR and LF, inside the trailer section.
//!
//! It counts decoded body bytes and stores nothing: chunk extensions are skipped and
//! trailer fields are only delimited, not parsed or kept. It does not look at the response
//! head; the caller decides that the body is chunked.
//!
//! Leniency and limits, chosen to match what load-generator users expect from real servers:
//! - a bare LF is accepted wherever CRLF is expected (the head parser accepts it too);
//! - optional whitespace (SP/HTAB) is allowed between the size and `;` or the line end;
//! - the size is 1 to 16 hex digits (leading zeros count), so it never overflows a `u64`;
//! - a size line (digits, whitespace, extensions) longer than `max_head_bytes` is
//!   [`ProtoError::InvalidChunk`]; a trailer section (all trailer lines plus the final empty
//!   line) longer than `max_head_bytes` is [`ProtoError::HeadTooLarge`], because trailers are
//!   header fields and share the head's bound.

use crate::response::ProtoError;

/// Decoder for one chunked body; [`ChunkedDecoder::reset`] makes it ready for the next.
#[derive(Debug, Clone)]
pub(crate) struct ChunkedDecoder {
    state: State,
    /// Size of the chunk being read (while in `Size`), then bytes of it still to come.
    remaining: u64,
    /// Hex digits seen in the current size line.
    digits: u8,
    /// Bytes of the current size line so far, bounded by `limit`.
    line_len: usize,
    /// Bytes of the trailer section so far, bounded by `limit`.
    trailer_len: usize,
    limit: usize,
}

impl ChunkedDecoder {
    pub(crate) fn new(limit: usize) -> Self {
        ChunkedDecoder {
            state: State::Size,
            remaining: 0,
            digits: 0,
            line_len: 0,
            trailer_len: 0,
            limit,
        }
    }

    pub(crate) fn reset(&mut self) {
        *self = ChunkedDecoder::new(self.limit);
    }

    /// Bytes of chunk data that come next, before any framing: Some while inside a chunk's
    /// data. A caller that wants the data itself feeds them apart (`feed_body`).
    pub(crate) fn data_ahead(&self) -> Option<u64> {
        (self.state == State::Data && self.remaining > 0).then_some(self.remaining)
    }

    /// Decodes as much of `input` as belongs to the body. Returns the bytes consumed and
    /// whether the body (last chunk and trailers) is complete; decoded data bytes are added
    /// to `body`. After completion nothing more is consumed.
    pub(crate) fn decode(
        &mut self,
        input: &[u8],
        body: &mut u64,
    ) -> Result<(usize, bool), ProtoError> {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Done {
                return Ok((i, true));
            }
            if self.state == State::Data {
                // Bulk path: data is only counted, so skip it in one step.
                let avail = input.len().saturating_sub(i);
                let take = usize::try_from(self.remaining).map_or(avail, |r| r.min(avail));
                i = i.saturating_add(take);
                let take64 = u64::try_from(take).unwrap_or(u64::MAX);
                self.remaining = self.remaining.saturating_sub(take64);
                *body = body.saturating_add(take64);
                if self.remaining == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            if self.state == State::TrailerLine {
                // Trailer fields are skipped whole lines; only their length matters.
                let rest = input.get(i..).unwrap_or(&[]);
                let (take, line_done) = match memchr::memchr(b'\n', rest) {
                    Some(p) => (p.saturating_add(1), true),
                    None => (rest.len(), false),
                };
                self.add_trailer(take)?;
                i = i.saturating_add(take);
                if line_done {
                    self.state = State::TrailerStart;
                }
                continue;
            }
            let Some(&b) = input.get(i) else { break };
            i += 1;
            self.step(b)?;
        }
        Ok((i, self.state == State::Done))
    }

    /// One byte of framing (size line, CRLF after data, trailer line starts).
    fn step(&mut self, b: u8) -> Result<(), ProtoError> {
        match self.state {
            State::Size => {
                self.add_line(1)?;
                if let Some(v) = hex_value(b) {
                    if self.digits >= MAX_DIGITS {
                        return Err(ProtoError::InvalidChunk);
                    }
                    self.digits += 1;
                    // 16 digits at most, so this shift never loses bits.
                    self.remaining = (self.remaining << 4) | u64::from(v);
                    return Ok(());
                }
                if self.digits == 0 {
                    return Err(ProtoError::InvalidChunk);
                }
                self.after_size(b)
            }
            State::SizeWs => {
                self.add_line(1)?;
                self.after_size(b)
            }
            State::Ext => {
                self.add_line(1)?;
                match b {
                    b'\r' => self.state = State::SizeLf,
                    b'\n' => self.end_size_line(),
                    b'\t' => {}
                    0..=0x1f | 0x7f => return Err(ProtoError::InvalidChunk),
                    _ => {}
                }
                Ok(())
            }
            State::SizeLf => {
                if b != b'\n' {
                    return Err(ProtoError::InvalidChunk);
                }
                self.end_size_line();
                Ok(())
            }
            State::DataCr => {
                match b {
                    b'\r' => self.state = State::DataLf,
                    b'\n' => self.start_size_line(),
                    _ => return Err(ProtoError::InvalidChunk),
                }
                Ok(())
            }
            State::DataLf => {
                if b != b'\n' {
                    return Err(ProtoError::InvalidChunk);
                }
                self.start_size_line();
                Ok(())
            }
            State::TrailerStart => {
                self.add_trailer(1)?;
                match b {
                    b'\r' => self.state = State::EndLf,
                    b'\n' => self.state = State::Done,
                    // A field line cannot start with whitespace (that was obsolete folding).
                    b' ' | b'\t' => return Err(ProtoError::InvalidChunk),
                    _ => self.state = State::TrailerLine,
                }
                Ok(())
            }
            State::EndLf => {
                self.add_trailer(1)?;
                if b != b'\n' {
                    return Err(ProtoError::InvalidChunk);
                }
                self.state = State::Done;
                Ok(())
            }
            // Handled in bulk by `decode`; reaching here would be a logic slip, not bad
            // input, and it must not panic either.
            State::Data | State::TrailerLine | State::Done => Ok(()),
        }
    }

    /// After the size digits: optional whitespace, then extensions or the line end.
    fn after_size(&mut self, b: u8) -> Result<(), ProtoError> {
        match b {
            b' ' | b'\t' => self.state = State::SizeWs,
            b';' => self.state = State::Ext,
            b'\r' => self.state = State::SizeLf,
            b'\n' => self.end_size_line(),
            _ => return Err(ProtoError::InvalidChunk),
        }
        Ok(())
    }

    fn end_size_line(&mut self) {
        if self.remaining == 0 {
            self.state = State::TrailerStart;
        } else {
            self.state = State::Data;
        }
    }

    fn start_size_line(&mut self) {
        self.state = State::Size;
        self.remaining = 0;
        self.digits = 0;
        self.line_len = 0;
    }

    fn add_line(&mut self, n: usize) -> Result<(), ProtoError> {
        self.line_len = self.line_len.saturating_add(n);
        if self.line_len > self.limit {
            return Err(ProtoError::InvalidChunk);
        }
        Ok(())
    }

    fn add_trailer(&mut self, n: usize) -> Result<(), ProtoError> {
        self.trailer_len = self.trailer_len.saturating_add(n);
        if self.trailer_len > self.limit {
            return Err(ProtoError::HeadTooLarge { limit: self.limit });
        }
        Ok(())
    }
}

/// More hex digits than this could overflow a `u64` (or are padding nobody needs).
const MAX_DIGITS: u8 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading hex digits of the size.
    Size,
    /// Whitespace after the size digits.
    SizeWs,
    /// Inside `;name=value` extensions, skipped up to the line end.
    Ext,
    /// Saw CR ending the size line.
    SizeLf,
    /// Inside chunk data.
    Data,
    /// Expecting CR (or bare LF) after chunk data.
    DataCr,
    /// Saw CR after chunk data.
    DataLf,
    /// At the start of a trailer line or the final empty line.
    TrailerStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR of the final empty line.
    EndLf,
    /// Last chunk and trailers complete.
    Done,
}

fn hex_value(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `input` whole, split at every position and byte by byte; all must agree.
    /// Returns (consumed, done, body) or the error.
    fn run(input: &[u8], limit: usize) -> Result<(usize, bool, u64), ProtoError> {
        let whole = run_pieces(input, limit, &[input.len()]);
        for cut in 0..=input.len() {
            let split = run_pieces(input, limit, &[cut, input.len() - cut]);
            assert_eq!(whole, split, "split at {cut} of {:?}", String::from_utf8_lossy(input));
        }
        let ones = vec![1; input.len()];
        assert_eq!(whole, run_pieces(input, limit, &ones), "byte by byte");
        whole
    }

    fn run_pieces(
        input: &[u8],
        limit: usize,
        sizes: &[usize],
    ) -> Result<(usize, bool, u64), ProtoError> {
        let mut d = ChunkedDecoder::new(limit);
        let mut body = 0;
        let mut pos = 0;
        for &n in sizes {
            let piece = &input[pos..pos + n];
            let (used, done) = d.decode(piece, &mut body)?;
            assert!(used <= n);
            pos += used;
            if done {
                return Ok((pos, true, body));
            }
            assert_eq!(used, n, "an unfinished decoder consumes everything");
        }
        Ok((pos, false, body))
    }

    fn ok(input: &str, consumed: usize, body: u64) {
        assert_eq!(run(input.as_bytes(), 1024), Ok((consumed, true, body)), "{input:?}");
    }

    fn partial(input: &str, body: u64) {
        let n = input.len();
        assert_eq!(run(input.as_bytes(), 1024), Ok((n, false, body)), "{input:?}");
    }

    fn err(input: &str, e: ProtoError) {
        assert_eq!(run(input.as_bytes(), 64), Err(e), "{input:?}");
    }

    #[test]
    fn valid_bodies() {
        ok("0\r\n\r\n", 5, 0);
        ok("5\r\nhello\r\n0\r\n\r\n", 15, 5);
        ok("5\r\nhello\r\n0\r\n\r\nNEXT", 15, 5);
        ok("A\r\n0123456789\r\n1\r\nx\r\n0\r\n\r\n", 26, 11);
        ok("a;name=value;x\r\n0123456789\r\n0;last\r\n\r\n", 38, 10);
        ok("3 \t;ext\r\nabc\r\n0\r\n\r\n", 19, 3);
        ok("0000000000000003\r\nabc\r\n0\r\n\r\n", 28, 3);
        ok("3\nabc\n0\n\n", 9, 3);
        ok("3\r\nabc\r\n0\r\nExpires: never\r\nX-Sum: 1\r\n\r\n", 39, 3);
        ok("0\r\nA: b\n\n", 9, 0);
    }

    #[test]
    fn incomplete_bodies() {
        partial("", 0);
        partial("5", 0);
        partial("5\r\nhel", 3);
        partial("5\r\nhello\r", 5);
        partial("5\r\nhello\r\n0\r\n", 5);
        partial("5\r\nhello\r\n0\r\nTrailer: x\r\n", 5);
        partial("0\r\n\r", 0);
    }

    #[test]
    fn invalid_chunks() {
        err("x\r\n", ProtoError::InvalidChunk);
        err("\r\n", ProtoError::InvalidChunk);
        err("-1\r\n", ProtoError::InvalidChunk);
        err("5x\r\n", ProtoError::InvalidChunk);
        err("0x5\r\n", ProtoError::InvalidChunk);
        err("10000000000000000\r\n", ProtoError::InvalidChunk);
        err("fffffffffffffffff\r\n", ProtoError::InvalidChunk);
        err("5\rx", ProtoError::InvalidChunk);
        err("3\r\nabcd\r\n", ProtoError::InvalidChunk);
        err("3\r\nabc\rx", ProtoError::InvalidChunk);
        err("3;a\0b\r\n", ProtoError::InvalidChunk);
        err("0\r\n\rx", ProtoError::InvalidChunk);
        err("0\r\n folded: no\r\n\r\n", ProtoError::InvalidChunk);
    }

    #[test]
    fn limits() {
        let long_ext = format!("1;{}\r\nx\r\n0\r\n\r\n", "e".repeat(100));
        err(&long_ext, ProtoError::InvalidChunk);
        let long_trailer = format!("0\r\nX: {}\r\n\r\n", "t".repeat(100));
        err(&long_trailer, ProtoError::HeadTooLarge { limit: 64 });
        // Exactly at the bound is fine: 62 bytes of trailer line plus the final CRLF.
        let at_limit = format!("0\r\nX: {}\r\n\r\n", "t".repeat(57));
        assert_eq!(run(at_limit.as_bytes(), 64), Ok((at_limit.len(), true, 0)));
    }

    #[test]
    fn largest_size_does_not_overflow() {
        partial("ffffffffffffffff\r\nabc", 3);
    }
}
