//! A connection's input buffer: reads bytes, finds where each request head ends, and enforces the
//! request-line and head size limits while the head is still arriving. Does not parse the head
//! (request.rs) and never buffers more than the head limit, so a client cannot make a
//! connection hold more memory than `max_head_bytes`.
//!
//! The end of a head is searched for incrementally: each byte is scanned once, however the head
//! is split across reads. Re-parsing the whole buffer after every read would let a client
//! sending one byte at a time cost O(n²).

use std::io::{self, Read};

use memchr::memchr;

/// Where the buffer starts: enough for any ordinary request head (browsers send 0.5–2 KiB, ab
/// and wrk about 100 bytes) and a few pipelined ones. It grows, up to the head limit, only for a
/// larger head.
const INITIAL_BYTES: usize = 4096;

/// Size limits for one request head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_request_line: usize,
    pub(crate) max_head: usize,
}

/// The outcome of looking for a complete head at the front of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// No complete head yet, and no limit exceeded: read more.
    Partial,
    /// A head of this many bytes (through its blank line) is at the front.
    Complete(usize),
    /// The request line is over the limit (→ 414).
    LineTooLong,
    /// The head is over the limit (→ 431).
    HeadTooLarge,
}

/// The buffer. Bytes `start..end` of `buf` are unconsumed.
#[derive(Debug)]
pub(crate) struct ReadBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// How many bytes after `start` have been searched for the end of the head.
    scanned: usize,
    /// Whether the request line's end (its `\n`) has been seen.
    line_done: bool,
    /// The most the buffer grows to.
    max: usize,
    /// The last read returned less than it had room for, so the socket's receive queue was
    /// empty at that moment.
    drained: bool,
}

impl ReadBuf {
    pub(crate) fn new(limits: Limits) -> ReadBuf {
        let max = limits.max_head.max(1);
        ReadBuf {
            buf: vec![0; INITIAL_BYTES.min(max)],
            start: 0,
            end: 0,
            scanned: 0,
            line_done: false,
            max,
            drained: false,
        }
    }

    /// Reads once from `src` into free space. Returns the bytes read, 0 at end of stream.
    /// Call only after [`find_head`](Self::find_head) returned `Partial` (or while discarding a
    /// body): then there is always room.
    pub(crate) fn fill(&mut self, src: &mut impl Read) -> io::Result<usize> {
        if self.end == self.buf.len() {
            self.make_room()?;
        }
        let room = self.buf.len() - self.end;
        let n = src.read(&mut self.buf[self.end..])?;
        self.end += n;
        self.drained = n < room;
        Ok(n)
    }

    /// Whether the last read emptied the socket (a TCP read returns everything queued, up to
    /// the room given). Data may have arrived since; this only says none was left behind.
    pub(crate) fn drained(&self) -> bool {
        self.drained
    }

    /// Looks for a complete head at the front, scanning only bytes not scanned before.
    pub(crate) fn find_head(&mut self, limits: Limits) -> Scan {
        // RFC 9112 §2.2: a server should ignore empty lines before a request line (some clients
        // send an extra CRLF after a body).
        if self.scanned == 0 {
            while self.start < self.end && matches!(self.buf[self.start], b'\r' | b'\n') {
                self.start += 1;
            }
        }
        let data = &self.buf[self.start..self.end];
        while let Some(i) = memchr(b'\n', &data[self.scanned..]) {
            let lf = self.scanned + i;
            self.scanned = lf + 1;
            if !self.line_done {
                self.line_done = true;
                if lf > limits.max_request_line {
                    return Scan::LineTooLong;
                }
            }
            // A blank line ends the head: "\n\n" or "\n\r\n" (bare LF is accepted, as httparse
            // and nginx accept it).
            let blank = (lf >= 1 && data[lf - 1] == b'\n')
                || (lf >= 2 && data[lf - 1] == b'\r' && data[lf - 2] == b'\n');
            if blank {
                let len = lf + 1;
                return if len > limits.max_head {
                    Scan::HeadTooLarge
                } else {
                    Scan::Complete(len)
                };
            }
        }
        self.scanned = data.len();
        if !self.line_done && data.len() > limits.max_request_line {
            Scan::LineTooLong
        } else if data.len() >= limits.max_head.min(self.max) {
            Scan::HeadTooLarge
        } else {
            Scan::Partial
        }
    }

    /// The first `len` unconsumed bytes (a head found by [`find_head`](Self::find_head)).
    pub(crate) fn head(&self, len: usize) -> &[u8] {
        &self.buf[self.start..self.start + len.min(self.end - self.start)]
    }

    /// The unconsumed bytes.
    pub(crate) fn unconsumed(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Drops the first `n` unconsumed bytes (a head just answered).
    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n.min(self.end - self.start);
        self.scanned = 0;
        self.line_done = false;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Moves unconsumed bytes to the front and, if that frees nothing, grows up to `max`.
    fn make_room(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= self.max {
                return Err(io::Error::new(io::ErrorKind::OutOfMemory, "request head buffer full"));
            }
            let len = (self.buf.len() * 2).min(self.max);
            self.buf.resize(len, 0);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { max_request_line: 64, max_head: 256 };

    /// Feeds `input` whole and split at every byte, and returns the heads found, or the first
    /// limit hit, which must be the same for every split.
    fn check(input: &[u8], expect: &[Scan], heads: &[&str]) {
        for split in 0..=input.len() {
            let mut buf = ReadBuf::new(LIMITS);
            let mut got = Vec::new();
            let mut got_heads = Vec::new();
            let mut pieces = [&input[..split], &input[split..]].into_iter();
            let mut src: &[u8] = pieces.next().unwrap_or_default();
            loop {
                match buf.find_head(LIMITS) {
                    Scan::Complete(len) => {
                        got_heads.push(String::from_utf8_lossy(buf.head(len)).into_owned());
                        got.push(Scan::Complete(len));
                        buf.consume(len);
                    }
                    Scan::Partial => match buf.fill(&mut src) {
                        Ok(0) => match pieces.next() {
                            Some(next) => src = next,
                            None => break,
                        },
                        Ok(_) => {}
                        Err(e) => panic!("{e}"),
                    },
                    limit => {
                        got.push(limit);
                        break;
                    }
                }
            }
            assert_eq!(got, expect, "split at {split}");
            assert_eq!(got_heads, heads, "split at {split}");
        }
    }

    #[test]
    fn one_head() {
        let h = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        check(h.as_bytes(), &[Scan::Complete(h.len())], &[h]);
    }

    #[test]
    fn pipelined_heads_and_leading_blank_lines() {
        let a = "GET /a HTTP/1.1\r\n\r\n";
        let b = "HEAD /b HTTP/1.0\n\n";
        let input = format!("\r\n{a}\r\n\r\n{b}GET /partial");
        check(input.as_bytes(), &[Scan::Complete(a.len()), Scan::Complete(b.len())], &[a, b]);
    }

    #[test]
    fn request_line_limit() {
        let line = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(64));
        check(line.as_bytes(), &[Scan::LineTooLong], &[]);
        // No newline at all yet, but already longer than a request line may be.
        check("x".repeat(65).as_bytes(), &[Scan::LineTooLong], &[]);
        // Exactly at the limit is fine.
        let ok = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(64 - 15));
        check(ok.as_bytes(), &[Scan::Complete(ok.len())], &[&ok]);
    }

    #[test]
    fn head_limit() {
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(250));
        check(big.as_bytes(), &[Scan::HeadTooLarge], &[]);
        let unfinished = format!("GET / HTTP/1.1\r\nX: {}", "a".repeat(300));
        check(unfinished.as_bytes(), &[Scan::HeadTooLarge], &[]);
        let exact = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(256 - 23));
        assert_eq!(exact.len(), 256);
        check(exact.as_bytes(), &[Scan::Complete(256)], &[&exact]);
    }
}
