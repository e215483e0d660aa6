//! The hostile corpus in `tests/data/` (also the fuzz seed corpus): every file is parsed
//! whole, split at every byte and byte by byte, and must give the listed result; every file
//! also goes through the fuzz entry point, and so do many mutations of them (a small,
//! deterministic stand-in for a fuzzer on stable Rust). Not a test of single parser rules:
//! those are table-driven in `src/response.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use herd_proto::fuzzing::{fuzz_response, transcript_all_splits, Options};
use herd_proto::Limits;
use herd_testutil::corpus::{self, rounds, Rng};

/// File name, options, expected transcript summary.
const CASES: &[(&str, Opt, &str)] = &[
    ("ok-content-length.http", Opt::Plain, "1.1 200 len13 reuse h101 b13; idle"),
    ("ok-pipelined.http", Opt::Plain, "1.1 200 len2 reuse h38 b2; 1.1 404 len9 close h64 b9; idle"),
    ("ok-chunked-trailers.http", Opt::Plain, "1.1 200 chunked reuse h68 b23; idle"),
    ("ok-100-continue.http", Opt::Plain, "1.1 201 len0 reuse h82 b0; idle"),
    ("ok-103-early-hints.http", Opt::Plain, "1.1 200 len4 reuse h109 b4; idle"),
    ("ok-http10-until-close.http", Opt::Plain, "1.0 200 eof close h81 b38; closed"),
    (
        "ok-http10-until-close.http",
        Opt::Capture,
        "1.0 200 eof close h81 b38 srv=SimpleHTTP/0.6; closed",
    ),
    ("ok-204-304.http", Opt::Plain, "1.1 204 empty reuse h47 b0; 1.1 304 empty reuse h68 b0; idle"),
    (
        "ok-101-then-websocket.http",
        Opt::Plain,
        "1.1 101 empty close h129 b0; err InvalidStatusLine",
    ),
    ("ok-bare-lf.http", Opt::Plain, "1.1 200 len3 reuse h57 b3; idle"),
    ("ok-apache-keepalive.http", Opt::Plain, "1.1 200 len5 reuse h126 b5; idle"),
    (
        "ok-apache-keepalive.http",
        Opt::Capture,
        "1.1 200 len5 reuse h126 b5 srv=Apache/2.4.41; idle",
    ),
    ("ok-apache-keepalive.http", Opt::Head, "1.1 200 empty reuse h126 b0; err InvalidStatusLine"),
    ("ok-many-headers.http", Opt::Plain, "1.1 200 len1 reuse h2428 b1; idle"),
    ("bad-status-http2-frame.http", Opt::Plain, "err InvalidStatusLine"),
    ("bad-status-garbage.http", Opt::Plain, "err InvalidStatusLine"),
    ("bad-status-code.http", Opt::Plain, "err InvalidStatusLine"),
    ("bad-header-space-in-name.http", Opt::Plain, "err InvalidHeader"),
    ("bad-content-length-conflict.http", Opt::Plain, "err InvalidContentLength"),
    ("bad-content-length-negative.http", Opt::Plain, "err InvalidContentLength"),
    ("bad-chunk-size.http", Opt::Plain, "err InvalidChunk"),
    ("bad-chunk-missing-crlf.http", Opt::Plain, "err InvalidChunk"),
    ("bad-chunk-size-overflow.http", Opt::Plain, "err InvalidChunk"),
    ("bad-head-too-large.http", Opt::Small, "err HeadTooLarge { limit: 256 }"),
    ("bad-head-too-large.http", Opt::Plain, "1.1 200 len0 reuse h647 b0; idle"),
    ("truncated-body.http", Opt::Plain, "err Truncated"),
    ("truncated-chunked.http", Opt::Plain, "err Truncated"),
];

#[derive(Debug, Clone, Copy)]
enum Opt {
    Plain,
    Capture,
    Head,
    /// `max_head_bytes` of 256.
    Small,
}

#[test]
fn corpus_files_parse_as_expected_in_every_split() {
    for &(name, opt, expected) in CASES {
        let data = fs::read(data_dir().join(name)).expect(name);
        let got = transcript_all_splits(&data, &options(opt)).to_string();
        assert_eq!(got, expected, "{name} with {opt:?}");
    }
}

#[test]
fn every_corpus_file_has_an_expectation() {
    for name in corpus::names(&data_dir(), 12) {
        assert!(CASES.iter().any(|c| c.0 == name), "{name} has no expected result in CASES");
    }
}

#[test]
fn corpus_through_the_fuzz_entry_point() {
    for path in corpus_files() {
        fuzz_response(&fs::read(&path).unwrap());
    }
}

#[test]
fn mutated_corpus_never_panics_and_is_split_invariant() {
    let interesting = |d: &mut Vec<u8>, f: &[Vec<u8>], r: &mut Rng| rounds(d, f, r, INTERESTING);
    corpus::mutations(&data_dir(), 3000, interesting, fuzz_response);
}

fn options(opt: Opt) -> Options {
    match opt {
        Opt::Plain => Options::default(),
        Opt::Capture => Options { capture_server: true, ..Options::default() },
        Opt::Head => Options { head_request: true, ..Options::default() },
        Opt::Small => Options { limits: Limits { max_head_bytes: 256 }, ..Options::default() },
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn corpus_files() -> Vec<PathBuf> {
    corpus::files(&data_dir())
}

/// What the mutations insert: HTTP framing characters, where the bugs live.
const INTERESTING: &[&[u8]] = &[
    b"\r",
    b"\n",
    b"\r\n",
    b"\r\n\r\n",
    b"\n\n",
    b" ",
    b"\t",
    b":",
    b";",
    b",",
    b"0",
    b"9",
    b"f",
    b"\0",
    b"\xff",
    b"HTTP/1.1 100 Continue\r\n\r\n",
    b"Content-Length: 3\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Connection: close\r\n",
    b"ffffffffffffffff",
    b"18446744073709551616",
];
