//! The HTTP/2 frame corpus in `tests/data/h2-frames/` (also the seed corpus of the fuzz
//! target `h2_frames`): what nginx and h2o sent for three requests over h2c, hand-made
//! frames of every type, and one file per broken rule. Every file is decoded whole, split at
//! every byte (small files; the large captures in a few dozen splits) and byte by byte, and
//! must give the listed result; every file also goes through the fuzz entry point, and so do
//! many mutations of them (a small, deterministic stand-in for a fuzzer on stable Rust). Not
//! a test of single rules: those are table-driven in `src/h2/frame/tests.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use herd_proto::fuzzing::Split;
use herd_proto::h2::frame::fuzzing::{fuzz_frames, transcript, transcript_all_splits, Transcript};
use herd_proto::h2::DEFAULT_MAX_FRAME_SIZE;
use herd_testutil::corpus::{self, Rng};

/// File name, expected transcript summary.
const CASES: &[(&str, &str)] = &[
("bad-continuation-alone.h2", "err PROTOCOL_ERROR"),
("bad-continuation-interleaved.h2", "HEADERS s1 \"\\x88\"; err PROTOCOL_ERROR"),
("bad-continuation-other-stream.h2", "HEADERS s1 \"\\x88\"; err PROTOCOL_ERROR"),
("bad-data-padding.h2", "err PROTOCOL_ERROR"),
("bad-data-stream-0.h2", "err PROTOCOL_ERROR"),
("bad-goaway-short.h2", "err FRAME_SIZE_ERROR"),
("bad-headers-padding.h2", "err PROTOCOL_ERROR"),
("bad-ping-length.h2", "err FRAME_SIZE_ERROR"),
("bad-ping-stream.h2", "err PROTOCOL_ERROR"),
("bad-rst-length.h2", "err FRAME_SIZE_ERROR"),
("bad-settings-ack-payload.h2", "err FRAME_SIZE_ERROR"),
("bad-settings-enable-push.h2", "err PROTOCOL_ERROR"),
("bad-settings-frame-size.h2", "err PROTOCOL_ERROR"),
("bad-settings-length.h2", "err FRAME_SIZE_ERROR"),
("bad-settings-window.h2", "err FLOW_CONTROL_ERROR"),
("bad-too-long.h2", "err FRAME_SIZE_ERROR"),
("bad-window-update-zero.h2", "err PROTOCOL_ERROR"),
("ok-continuation.h2", "HEADERS s1 \"\\x88_\"; CONTINUATION s1 \"\\x87text\"; CONTINUATION s1 eh \"/x\"; DATA s1 \"ok\"; END s1 es flow2; HEADERS s3 es \"\\x88\"; CONTINUATION s3 eh \"\"; idle"),
("ok-every-type.h2", "SETTINGS MAX_CONCURRENT_STREAMS=100 INITIAL_WINDOW_SIZE=65535 MAX_FRAME_SIZE=16384 setting 0x99=7; SETTINGS ack; WINDOW_UPDATE s0 +1048576; HEADERS s1 eh \"\\x88\"; PUSH_PROMISE s1 p2 eh \"\\x82\\x84\"; DATA s1 \"hello\"; END s1 flow10; DATA s1 \"!\"; END s1 es flow1; PRIORITY s3; RST_STREAM s2 CANCEL; PING \"ping1234\"; PING ack \"pong1234\"; UNKNOWN 0xb s0; UNKNOWN 0x21 s5; WINDOW_UPDATE s1 +1000; GOAWAY last3 NO_ERROR \"bye\"; idle"),
("ok-h2o-2.2-h2c.h2", "SETTINGS MAX_CONCURRENT_STREAMS=100 INITIAL_WINDOW_SIZE=16777216; SETTINGS ack; HEADERS s1 eh <89 bytes>; HEADERS s3 eh <36 bytes>; HEADERS s5 eh \"\\x8d\\xc5\\xc4_\\x92I|\\xa5\\x8a\\xe8\\x19\\xaa\\xfbP\\x93\\x8e\\xc4\\x150Z\\x99V{\\x0f\\r\\x019\"; PING ack \"12345678\"; DATA s1 \"hello\\n\"; END s1 es flow6; DATA s3 <16384 bytes>; END s3 flow16384; DATA s5 \"not found\"; END s5 es flow9; DATA s3 <3616 bytes>; END s3 es flow3616; idle"),
("ok-nginx-1.22-h2c.h2", "SETTINGS MAX_CONCURRENT_STREAMS=128 INITIAL_WINDOW_SIZE=65536 MAX_FRAME_SIZE=16777215; WINDOW_UPDATE s0 +2147418112; SETTINGS ack; HEADERS s1 eh <104 bytes>; DATA s1 \"hello\\n\"; END s1 es flow6; HEADERS s3 eh <110 bytes>; DATA s3 <8192 bytes>; END s3 flow8192; DATA s3 <8192 bytes>; END s3 flow8192; DATA s3 <3616 bytes>; END s3 es flow3616; HEADERS s5 eh <50 bytes>; DATA s5 <153 bytes>; END s5 es flow153; PING ack \"12345678\"; idle"),
("ok-stream-errors.h2", "stream error s1 FRAME_SIZE_ERROR; stream error s3 PROTOCOL_ERROR; PING \"stillok!\"; idle"),
("partial-headers.h2", "partial 11"),
];

#[test]
fn corpus_files_decode_as_expected_in_every_split() {
    for &(name, expected) in CASES {
        let data = fs::read(data_dir().join(name)).expect(name);
        assert_eq!(all_splits(&data).to_string(), expected, "{name}");
    }
}

#[test]
fn every_corpus_file_has_an_expectation() {
    for name in corpus::names(&data_dir(), 20) {
        assert!(CASES.iter().any(|c| c.0 == name), "{name} has no expected result in CASES");
    }
}

#[test]
fn corpus_through_the_fuzz_entry_point() {
    for path in corpus_files() {
        fuzz_frames(&fs::read(&path).unwrap());
    }
}

#[test]
fn mutated_corpus_never_panics_and_is_split_invariant() {
    let mutant = |data: &mut Vec<u8>, files: &[Vec<u8>], rng: &mut Rng| {
        // The captures are long; most mutations look at their first frames.
        if data.len() > 2048 && rng.below(4) != 0 {
            data.truncate(rng.below(2048));
        }
        for _ in 0..=rng.below(4) {
            mutate(data, files, rng);
        }
    };
    corpus::mutations(&data_dir(), 3000, mutant, fuzz_frames);
}

/// Every split for small files; for the captures, whole, byte by byte, in seeded pieces and
/// cut at every frame-header-sized step of the first 2 KiB.
fn all_splits(data: &[u8]) -> Transcript {
    if data.len() <= 4096 {
        return transcript_all_splits(data, DEFAULT_MAX_FRAME_SIZE);
    }
    let whole = transcript(data, DEFAULT_MAX_FRAME_SIZE, Split::Whole);
    let splits = (0..2048)
        .step_by(9)
        .map(Split::At)
        .chain([Split::Bytewise])
        .chain((1..=8).map(Split::Seeded));
    for split in splits {
        assert_eq!(transcript(data, DEFAULT_MAX_FRAME_SIZE, split), whole, "{split:?}");
    }
    whole
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h2-frames")
}

fn corpus_files() -> Vec<PathBuf> {
    corpus::files(&data_dir())
}

/// Byte-level mutations biased towards what frames are made of: lengths, types, flags,
/// stream ids, pad lengths, SETTINGS values, and whole frames spliced in.
fn mutate(data: &mut Vec<u8>, files: &[Vec<u8>], rng: &mut Rng) {
    const INTERESTING: &[&[u8]] = &[
        b"\0",
        b"\x01",
        b"\x04",
        b"\x05",
        b"\x08",
        b"\x09",
        b"\x20",
        b"\x80",
        b"\xff",
        b"\0\0\0\0",
        b"\x80\0\0\0",
        b"\x7f\xff\xff\xff",
        b"\0\x40\0",
        b"\0\x40\x01",
        // Whole frames: an empty CONTINUATION, a SETTINGS ACK, a PING, a padded DATA.
        b"\0\0\0\x09\x04\0\0\0\x01",
        b"\0\0\0\x04\x01\0\0\0\0",
        b"\0\0\x08\x06\0\0\0\0\0abcdefgh",
        b"\0\0\x03\0\x09\0\0\0\x01\x01x\0",
    ];
    let at = rng.below(data.len() + 1);
    match rng.below(6) {
        0 if !data.is_empty() => {
            let i = at.min(data.len() - 1);
            data[i] ^= 1 << rng.below(8);
        }
        1 => {
            let piece = INTERESTING[rng.below(INTERESTING.len())];
            data.splice(at..at, piece.iter().copied());
        }
        2 if !data.is_empty() => {
            // Overwrite rather than insert: keeps the frames around it aligned.
            let piece = INTERESTING[rng.below(INTERESTING.len())];
            for (i, &b) in piece.iter().enumerate() {
                if let Some(slot) = data.get_mut(at + i) {
                    *slot = b;
                }
            }
        }
        3 => {
            let end = (at + rng.below(16)).min(data.len());
            data.drain(at..end);
        }
        4 => {
            let other = &files[rng.below(files.len())];
            let from = rng.below(other.len().min(2048) + 1);
            let to = (from + rng.below(256)).min(other.len());
            data.splice(at..at, other[from..to].iter().copied());
        }
        _ => data.truncate(at),
    }
}
