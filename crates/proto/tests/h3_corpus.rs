//! HTTP/3's hostile corpus in `tests/data_h3/` (also the seed corpus of the `h3` fuzz
//! target): every file is read as a response stream and as a server's unidirectional
//! stream, whole, split at every byte and byte by byte, and must give the listed result;
//! every file also goes through the fuzz entry point, and so do many mutations of them (a
//! small, deterministic stand-in for a fuzzer on stable Rust).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use herd_proto::h3::fuzzing::{fuzz_h3, response_all_splits, uni_all_splits};
use herd_proto::h3::Limits;
use herd_testutil::corpus::{self, rounds, Rng};

/// File name, then what it reads to as a response stream (`finish()` or the first error)
/// and as a unidirectional stream (what it was, then how it ended).
const CASES: &[(&str, &str, &str)] = &[
    (
        "ok-200-two-data.h3",
        "Ok(Response { status: 200, content_length: Some(13), body_bytes: 13 })",
        "Some(Pending) Err(PushRefused)",
    ),
    (
        "ok-interim-trailers.h3",
        "Ok(Response { status: 200, content_length: None, body_bytes: 3 })",
        "Some(Pending) Err(PushRefused)",
    ),
    (
        "ok-304.h3",
        "Ok(Response { status: 304, content_length: None, body_bytes: 0 })",
        "Some(Pending) Err(PushRefused)",
    ),
    (
        "ok-huffman-server.h3",
        "Ok(Response { status: 200, content_length: None, body_bytes: 0 })",
        "Some(Pending) Err(PushRefused)",
    ),
    ("bad-dynamic.h3", "Err(Qpack(DynamicReference))", "Some(Pending) Err(PushRefused)"),
    (
        "bad-data-first.h3",
        "Err(FrameUnexpected { frame_type: 0, stream: Request })",
        "Some(Control) Err(MissingSettings)",
    ),
    ("bad-push-promise.h3", "Err(PushRefused)", "Some(Ignored(5)) Ok(())"),
    (
        "control-settings-goaway.h3",
        "Err(FrameUnexpected { frame_type: 0, stream: Request })",
        "Some(Control) Err(ClosedCriticalStream)",
    ),
    (
        "control-goaway-first.h3",
        "Err(FrameUnexpected { frame_type: 0, stream: Request })",
        "Some(Control) Err(MissingSettings)",
    ),
    (
        "qpack-encoder-stream.h3",
        "Err(FrameUnexpected { frame_type: 2, stream: Request })",
        "Some(Qpack) Err(ClosedCriticalStream)",
    ),
    ("push-stream.h3", "Err(Qpack(Truncated))", "Some(Pending) Err(PushRefused)"),
    ("grease-uni.h3", "Err(Truncated)", "Some(Ignored(188)) Ok(())"),
];

#[test]
fn corpus_files_read_as_expected_in_every_split() {
    for &(name, response, uni) in CASES {
        let data = fs::read(data_dir().join(name)).expect(name);
        let t = response_all_splits(&data, false, Limits::default());
        assert_eq!(format!("{:?}", t.end), response, "{name} as a response");
        let t = uni_all_splits(&data, Limits::default());
        let got = format!("{:?} {:?}", t.kind, t.end);
        assert_eq!(got, uni, "{name} as a unidirectional stream");
    }
}

#[test]
fn every_corpus_file_has_an_expectation_and_is_a_fuzz_seed() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/h3");
    for name in corpus::names(&data_dir(), 12) {
        assert!(CASES.iter().any(|c| c.0 == name), "{name} has no expected result in CASES");
        let seed = fs::read(seeds.join(&name)).expect("copied to fuzz/corpus/h3");
        assert_eq!(
            seed,
            fs::read(data_dir().join(&name)).unwrap(),
            "fuzz/corpus/h3/{name} differs"
        );
    }
}

#[test]
fn mutated_corpus_never_panics_and_is_split_invariant() {
    let files: Vec<Vec<u8>> = corpus_files().iter().map(|p| fs::read(p).unwrap()).collect();
    for data in &files {
        fuzz_h3(data);
    }
    let interesting = |d: &mut Vec<u8>, f: &[Vec<u8>], r: &mut Rng| rounds(d, f, r, INTERESTING);
    corpus::mutations(&data_dir(), 3000, interesting, fuzz_h3);
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data_h3")
}

fn corpus_files() -> Vec<PathBuf> {
    corpus::files(&data_dir())
}

/// What the mutations insert: what HTTP/3 framing is made of (varint length prefixes, frame
/// types, QPACK's first bytes).
const INTERESTING: &[&[u8]] = &[
    &[0x00],
    &[0x01],
    &[0x04],
    &[0x07],
    &[0x21],
    &[0x3f],
    &[0x40],
    &[0x7f, 0xff],
    &[0x80, 0x00, 0x00, 0x00],
    &[0xc0, 0, 0, 0, 0, 0, 0, 0],
    &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    &[0xd9],
    &[0x5f],
    &[0x80],
    &[0x10],
    &[0x01, 0x03, 0x00, 0x00, 0xd9],
    &[0x00, 0x01, b'x'],
];
