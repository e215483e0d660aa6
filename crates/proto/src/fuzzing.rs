//! Drivers that run [`ResponseParser`] over a byte stream in chosen splits, for the fuzz
//! target and for the split-invariance tests (hyper's "all async cases" idea): whatever the
//! read sizes, a stream must parse to the same [`Transcript`].
//!
//! Not a stable API and not for the engine. These functions panic on purpose when the
//! parser breaks an invariant (results that depend on the split, a complete response
//! without a head, a body count that disagrees with the framing): that is how a fuzzer or a
//! test notices. They never panic because of what the bytes are.

use std::fmt;

use crate::{Framing, Head, Limits, ProtoError, ResponseParser, Version};

/// Fuzz entry point: parses `data` as a stream of responses on one connection, whole, byte
/// by byte and in pseudo-random splits derived from the data, under two option sets (plain;
/// HEAD requests with `Server` capture and a small head limit), and checks that all splits
/// agree, through `feed` and through `feed_body`. Also ends every stream with `finish()`.
pub fn fuzz_response(data: &[u8]) {
    let seed = fnv1a(data);
    let small = Options {
        head_request: true,
        capture_server: true,
        limits: Limits { max_head_bytes: 128 },
        hand_out_body: false,
    };
    for options in [Options::default(), small] {
        let whole = transcript(data, &options, Split::Whole);
        let at = usize::try_from(seed).unwrap_or(0) % data.len().saturating_add(1);
        let body = Options { hand_out_body: true, ..options };
        for split in [Split::Bytewise, Split::At(at), Split::Seeded(seed)] {
            let other = transcript(data, &options, split);
            assert_eq!(whole, other, "{split:?} disagrees with the whole input ({options:?})");
        }
        for split in [Split::Whole, Split::Bytewise, Split::At(at), Split::Seeded(seed)] {
            let other = transcript(data, &body, split);
            assert_eq!(whole, other, "feed_body, {split:?}, disagrees with feed ({options:?})");
        }
    }
}

/// How a stream is parsed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Every request on the connection was HEAD.
    pub head_request: bool,
    pub capture_server: bool,
    pub limits: Limits,
    /// Feed through [`ResponseParser::feed_body`], checking that it hands out exactly the
    /// body bytes it counts.
    pub hand_out_body: bool,
}

/// How a stream is cut into `feed` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// One call with everything.
    Whole,
    /// Two calls, the first with this many bytes (clamped to the length).
    At(usize),
    /// One call per byte.
    Bytewise,
    /// Pieces of 1 to 300 bytes, mostly small, from a pseudo-random sequence.
    Seeded(u64),
}

/// What parsing a stream produced: the completed responses in order, then how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    pub responses: Vec<Response>,
    pub end: End,
}

/// One completed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub head: Head,
    pub body_bytes: u64,
    /// Stream bytes that belonged to it (heads, framing, body).
    pub consumed: usize,
    /// The captured `Server` value, when capture was on.
    pub server: Option<Vec<u8>>,
}

/// How a stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// End of stream between responses: `finish()` returned `Ok(false)`.
    Idle,
    /// End of stream completed a close-delimited response (the last one listed).
    Closed,
    /// `feed` or `finish` failed; parsing stopped there.
    Error(ProtoError),
}

/// Parses `data` as consecutive responses on one connection, cut as `split` says, and
/// calls `finish()` at the end of the data.
pub fn transcript(data: &[u8], options: &Options, split: Split) -> Transcript {
    let mut p = ResponseParser::new(options.limits);
    p.capture_server(options.capture_server);
    p.reset(options.head_request);
    let mut responses = Vec::new();
    let mut consumed = 0usize;
    // Body bytes handed out by feed_body in the current response.
    let mut handed = 0u64;
    for piece in pieces(data, split) {
        let mut piece = piece;
        loop {
            let fed = if options.hand_out_body {
                p.feed_body(piece, &mut |b| {
                    handed = handed.saturating_add(u64::try_from(b.len()).unwrap_or(u64::MAX));
                })
            } else {
                p.feed(piece)
            };
            let feed = match fed {
                Ok(feed) => feed,
                Err(e) => return Transcript { responses, end: End::Error(e) },
            };
            if options.hand_out_body {
                assert_eq!(handed, p.body_bytes(), "feed_body handed out other than it counted");
            }
            assert!(feed.consumed <= piece.len(), "consumed more than was fed");
            consumed += feed.consumed;
            if !feed.complete {
                assert_eq!(feed.consumed, piece.len(), "an incomplete response left input");
                break;
            }
            assert!(feed.consumed > 0 || piece.is_empty(), "completed on no input");
            responses.push(record(&p, consumed, options));
            consumed = 0;
            handed = 0;
            p.reset(options.head_request);
            piece = piece.get(feed.consumed..).unwrap_or(&[]);
            if piece.is_empty() {
                break;
            }
        }
    }
    let end = match p.finish() {
        Ok(true) => {
            responses.push(record(&p, consumed, options));
            End::Closed
        }
        Ok(false) => {
            assert_eq!(consumed, 0, "idle after consuming bytes");
            End::Idle
        }
        Err(e) => End::Error(e),
    };
    Transcript { responses, end }
}

/// Parses `data` whole, split at every position, byte by byte and in a few pseudo-random
/// splits, and in three of those through `feed_body`; panics unless all agree, and returns
/// the common transcript. Quadratic in the
/// length: meant for test inputs of a few KiB at most.
pub fn transcript_all_splits(data: &[u8], options: &Options) -> Transcript {
    let whole = transcript(data, options, Split::Whole);
    let splits =
        (0..=data.len()).map(Split::At).chain([Split::Bytewise]).chain((1..=8).map(Split::Seeded));
    let body = Options { hand_out_body: true, ..*options };
    let with_body = [Split::Whole, Split::Bytewise, Split::Seeded(1)].map(|s| (s, &body));
    for (split, options) in splits.map(|s| (s, options)).chain(with_body) {
        let other = transcript(data, options, split);
        assert_eq!(
            whole,
            other,
            "{split:?} disagrees with the whole input {:?}",
            String::from_utf8_lossy(data)
        );
    }
    whole
}

impl fmt::Display for Transcript {
    /// A one-line summary for table-driven tests, e.g.
    /// `1.1 200 len5 reuse h38 b5; idle`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.responses {
            write!(f, "{r}; ")?;
        }
        match &self.end {
            End::Idle => f.write_str("idle"),
            End::Closed => f.write_str("closed"),
            End::Error(e) => write!(f, "err {e:?}"),
        }
    }
}

impl fmt::Display for Response {
    /// `version status framing reuse|close [ka] h<head bytes> b<body bytes> [srv=<server>]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.head;
        let version = match h.version {
            Version::Http10 => "1.0",
            Version::Http11 => "1.1",
        };
        write!(f, "{version} {} ", h.status)?;
        match h.framing {
            Framing::Empty => f.write_str("empty")?,
            Framing::Length(n) => write!(f, "len{n}")?,
            Framing::Chunked => f.write_str("chunked")?,
            Framing::UntilClose => f.write_str("eof")?,
        }
        f.write_str(if h.reusable { " reuse" } else { " close" })?;
        write!(f, " h{} b{}", h.head_bytes, self.body_bytes)?;
        if let Some(s) = &self.server {
            write!(f, " srv={}", String::from_utf8_lossy(s))?;
        }
        Ok(())
    }
}

/// Checks what a completed response must satisfy whatever the bytes were, and takes it down.
fn record(p: &ResponseParser, consumed: usize, options: &Options) -> Response {
    let Some(head) = p.head().cloned() else {
        panic!("a complete response without a head");
    };
    assert!(p.started(), "complete but not started");
    let body = p.body_bytes();
    let head_and_body = u64::try_from(head.head_bytes).unwrap_or(u64::MAX).saturating_add(body);
    let consumed64 = u64::try_from(consumed).unwrap_or(u64::MAX);
    match head.framing {
        Framing::Empty => assert_eq!(body, 0, "body bytes without a body"),
        Framing::Length(n) => assert_eq!(body, n, "body differs from Content-Length"),
        Framing::Chunked => {}
        Framing::UntilClose => assert!(!head.reusable, "reusable after a close-delimited body"),
    }
    if head.framing == Framing::Chunked {
        assert!(consumed64 > head_and_body, "chunk framing takes bytes");
    } else {
        assert_eq!(consumed64, head_and_body, "consumed differs from head plus body");
    }
    if options.head_request {
        assert_eq!(head.framing, Framing::Empty, "a HEAD response with a body");
    }
    assert!((100..=999).contains(&head.status), "status out of range");
    let server = if options.capture_server { p.server().map(<[u8]>::to_vec) } else { None };
    if let Some(s) = &server {
        assert!(s.len() <= 1023 && s.iter().all(|&b| b > 0x20), "bad server capture");
    }
    Response { head, body_bytes: body, consumed, server }
}

pub(crate) fn pieces(data: &[u8], split: Split) -> Vec<&[u8]> {
    match split {
        Split::Whole => vec![data],
        Split::At(n) => {
            let (a, b) = data.split_at(n.min(data.len()));
            vec![a, b]
        }
        Split::Bytewise => data.chunks(1).collect(),
        Split::Seeded(seed) => {
            let mut state = seed | 1;
            let mut out = Vec::new();
            let mut rest = data;
            while !rest.is_empty() {
                // xorshift64*: cheap, and good enough to vary read sizes.
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
                let range = if r & 3 == 0 { 300 } else { 7 };
                let n = usize::try_from((r >> 8) % range).unwrap_or(0) + 1;
                let (a, b) = rest.split_at(n.min(rest.len()));
                out.push(a);
                rest = b;
            }
            out
        }
    }
}

pub(crate) fn fnv1a(data: &[u8]) -> u64 {
    data.iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
