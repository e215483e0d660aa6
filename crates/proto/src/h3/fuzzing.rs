//! Drivers that run the HTTP/3 readers over a stream's bytes in chosen splits, for the
//! fuzz target and the split-invariance tests: whatever the read sizes, a stream must read
//! to the same transcript.
//!
//! Not a stable API and not for the engine. These functions panic on purpose when a reader
//! breaks an invariant (results that depend on the split, a body handed out other than it
//! was counted); they never panic because of what the bytes are.

use crate::fuzzing::{fnv1a, pieces, Split};

use super::{H3Error, Limits, Part, Response, ResponseReader, ServerStreams, Settings, UniKind};

/// Fuzz entry point: `data` read as a response stream (to a GET and to a HEAD, with the
/// default limits and with small ones) and as a server's unidirectional stream, whole, byte
/// by byte, split at a data-derived point and in data-derived pieces; panics unless the
/// splits agree.
pub fn fuzz_h3(data: &[u8]) {
    let seed = fnv1a(data);
    let at = usize::try_from(seed).unwrap_or(0) % data.len().saturating_add(1);
    let splits = [Split::Bytewise, Split::At(at), Split::Seeded(seed)];
    let small = Limits { max_field_section_size: 200, max_settings_size: 16 };
    for limits in [Limits::default(), small] {
        for head in [false, true] {
            let whole = response_transcript(data, head, limits, Split::Whole);
            for split in splits {
                let other = response_transcript(data, head, limits, split);
                assert_eq!(whole, other, "response, {split:?}, head {head}, {limits:?}");
            }
        }
        let whole = uni_transcript(data, limits, Split::Whole);
        for split in splits {
            let other = uni_transcript(data, limits, split);
            assert_eq!(whole, other, "unidirectional, {split:?}, {limits:?}");
        }
    }
}

/// What reading a response stream produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseTranscript {
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    pub body: Vec<u8>,
    pub trailers: Vec<(Vec<u8>, Vec<u8>)>,
    /// `finish()`'s answer at the end of the data, or the first error.
    pub end: Result<Response, H3Error>,
}

/// Reads `data` as one request stream's bytes, cut as `split` says, then ends the stream.
pub fn response_transcript(
    data: &[u8],
    head_request: bool,
    limits: Limits,
    split: Split,
) -> ResponseTranscript {
    let mut reader = ResponseReader::new(limits);
    reader.reset(head_request);
    let mut t = ResponseTranscript {
        fields: Vec::new(),
        body: Vec::new(),
        trailers: Vec::new(),
        end: Err(H3Error::Truncated),
    };
    for piece in pieces(data, split) {
        let fed = reader.feed(piece, |part| match part {
            Part::Field(n, v) => t.fields.push((n.to_vec(), v.to_vec())),
            Part::Body(b) => {
                assert!(!b.is_empty(), "an empty body piece");
                t.body.extend_from_slice(b);
            }
            Part::Trailer(n, v) => t.trailers.push((n.to_vec(), v.to_vec())),
        });
        if let Err(e) = fed {
            t.end = Err(e);
            return t;
        }
        assert_eq!(reader.body_bytes(), t.body.len() as u64, "body counted other than handed out");
    }
    t.end = reader.finish();
    if let Ok(r) = &t.end {
        assert_eq!(r.body_bytes, t.body.len() as u64);
        assert_eq!(t.fields.first().map(|(n, _)| &n[..]), Some(&b":status"[..]));
    }
    t
}

/// Reads `data` as a response stream whole, split at every position, byte by byte and in a
/// few pseudo-random splits; panics unless all agree, and returns the common transcript.
/// Quadratic in the length: for test inputs of a few KiB at most.
pub fn response_all_splits(data: &[u8], head_request: bool, limits: Limits) -> ResponseTranscript {
    let whole = response_transcript(data, head_request, limits, Split::Whole);
    let splits =
        (0..=data.len()).map(Split::At).chain([Split::Bytewise]).chain((1..=8).map(Split::Seeded));
    for split in splits {
        let other = response_transcript(data, head_request, limits, split);
        assert_eq!(whole, other, "{split:?} disagrees with the whole input {data:02x?}");
    }
    whole
}

/// What reading a server's unidirectional stream produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniTranscript {
    /// What the stream was after the last piece (None: no data at all, or a type that
    /// was refused).
    pub kind: Option<UniKind>,
    pub settings: Option<Settings>,
    pub goaway: Option<u64>,
    /// The first error; then `on_finished`'s answer at the end of the data.
    pub end: Result<(), H3Error>,
}

/// Reads `data` as a server's unidirectional stream (its type first), cut as `split`
/// says, then ends the stream.
pub fn uni_transcript(data: &[u8], limits: Limits, split: Split) -> UniTranscript {
    let mut streams = ServerStreams::new(limits);
    let mut t = UniTranscript { kind: None, settings: None, goaway: None, end: Ok(()) };
    for piece in pieces(data, split).into_iter().filter(|p| !p.is_empty()) {
        match streams.on_data(3, piece) {
            Ok(kind) => assert_eq!(streams.kind(3), Some(kind)),
            Err(e) => {
                t.end = Err(e);
                break;
            }
        }
    }
    t.kind = streams.kind(3);
    t.settings = streams.settings();
    t.goaway = streams.goaway();
    if t.end.is_ok() {
        t.end = streams.on_finished(3);
    }
    t
}

/// Reads `data` as a unidirectional stream in every split, as [`response_all_splits`].
pub fn uni_all_splits(data: &[u8], limits: Limits) -> UniTranscript {
    let whole = uni_transcript(data, limits, Split::Whole);
    let splits =
        (0..=data.len()).map(Split::At).chain([Split::Bytewise]).chain((1..=8).map(Split::Seeded));
    for split in splits {
        let other = uni_transcript(data, limits, split);
        assert_eq!(whole, other, "{split:?} disagrees with the whole input {data:02x?}");
    }
    whole
}
