//! herd serve's HTTP/2 against h2spec, a conformance suite written by others (RFC 9113 and
//! HPACK's RFC 7541, with `--strict`): h2c with prior knowledge and h2 over TLS, every case
//! passing but the one that does not apply to a port that also speaks HTTP/1 (below).
//! scripts/build-h2spec.sh builds the pinned h2spec into the target directory's peers/bin
//! (scripts/test.sh runs it); HERD_H2SPEC names another binary. Without one the test fails
//! and says how to get it. Each run takes well under a second: a case that fails waits out
//! h2spec's timeout, cut to one second here.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // the test runs the suite it checks

use crate::util;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use util::{tempdir, text, Serve};

/// The h2spec binary: HERD_H2SPEC, else where scripts/build-h2spec.sh puts it beside herd.
fn h2spec() -> PathBuf {
    if let Some(path) = std::env::var_os("HERD_H2SPEC") {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "HERD_H2SPEC={} is not a file", path.display());
        return path;
    }
    let herd = Path::new(env!("CARGO_BIN_EXE_herd"));
    let beside = herd.parent().unwrap().join("../peers/bin/h2spec");
    assert!(
        beside.is_file(),
        "h2spec is missing (looked for {}): build it with scripts/build-h2spec.sh (needs Go \
         1.19 or later: apt-get install golang-go; scripts/test.sh does both), or set \
         HERD_H2SPEC to an h2spec binary",
        beside.display()
    );
    beside
}

/// What one h2spec run said: each case's id (`http2/5.1/11`) and description, whether it
/// passed, and the summary line's counts.
#[derive(Debug)]
struct Outcome {
    cases: Vec<(String, bool)>,
    tests: usize,
    passed: usize,
    skipped: usize,
    failed: usize,
    output: String,
}

impl Outcome {
    fn failed_cases(&self) -> Vec<&str> {
        self.cases.iter().filter(|(_, ok)| !ok).map(|(name, _)| name.as_str()).collect()
    }
}

/// Runs h2spec (all cases, strict ones too) against 127.0.0.1:`port`.
fn run_h2spec(port: u16, tls: bool) -> Outcome {
    let mut cmd = Command::new(h2spec());
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string(), "--strict", "-o", "1"]);
    if tls {
        cmd.args(["-t", "-k"]);
    }
    let out = cmd.output().unwrap();
    let output = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let outcome = parse(&output);
    // h2spec exits 1 when a case failed, and with another code when it could not run.
    let code = out.status.code();
    assert!(
        code == Some(0) && outcome.failed == 0 || code == Some(1) && outcome.failed > 0,
        "h2spec exited with {code:?} after {} failures:\n{output}",
        outcome.failed
    );
    outcome
}

/// Reads h2spec's report: spec headings at the margin, sections indented under them, and a
/// case per line (`✔ 2: …` or `× 2: …`, after the line it printed as the case started)
/// under its section, until the list of failures.
fn parse(output: &str) -> Outcome {
    let mut cases = Vec::new();
    let (mut spec, mut section) = ("?", String::new());
    let mut summary = None;
    for line in output.lines() {
        // A case is printed as it starts, then overwritten after a carriage return with
        // its result.
        let line = line.rsplit('\r').next().unwrap_or(line);
        if line.starts_with("Failures:") {
            // The failures again, grouped: counted already.
            spec = "";
        }
        let trimmed = line.trim_start();
        if !line.starts_with(' ') && !trimmed.is_empty() && !spec.is_empty() {
            spec = if line.starts_with("Generic") {
                "generic"
            } else if line.starts_with("Hypertext") {
                "http2"
            } else if line.starts_with("HPACK") {
                "hpack"
            } else {
                spec
            };
        }
        if let Some(counts) = trimmed.strip_suffix(" failed") {
            summary = Some(counts.to_owned());
        }
        if spec.is_empty() {
            continue;
        }
        let (ok, rest) = match trimmed.split_once(' ') {
            Some(("✔", rest)) => (true, rest),
            Some(("×", rest)) => (false, rest),
            _ => {
                // "5.1. Stream States" or "5.1.1. Stream Identifiers": a section.
                if let Some((number, _)) = trimmed.split_once(". ") {
                    if number.chars().all(|c| c.is_ascii_digit() || c == '.') {
                        section = number.to_owned();
                    }
                }
                continue;
            }
        };
        let (n, desc) = rest.split_once(": ").unwrap_or((rest, ""));
        cases.push((format!("{spec}/{section}/{n} ({desc})"), ok));
    }
    let summary = summary.unwrap_or_else(|| panic!("no summary line from h2spec:\n{output}"));
    // "146 tests, 145 passed, 0 skipped, 1" (the " failed" cut off above).
    let counts: Vec<usize> =
        summary.split(", ").map(|part| part.split(' ').next().unwrap().parse().unwrap()).collect();
    let [tests, passed, skipped, failed] = counts[..] else {
        panic!("h2spec's summary is not tests, passed, skipped, failed: {summary}")
    };
    Outcome { cases, tests, passed, skipped, failed, output: output.to_owned() }
}

/// A herd serve whose `/` has a body (h2spec asks for `/`; some cases need DATA to come).
fn serve(tls: bool) -> (Serve, u16) {
    let root = tempdir("h2spec");
    std::fs::write(root.join("index.html"), "h2spec\n".repeat(150)).unwrap();
    let root = root.to_str().unwrap().to_owned();
    let mut args = vec!["--threads", "1", "--root", &root];
    if tls {
        args.push("--tls-self-signed");
    }
    let serve = Serve::start(&args);
    let port = serve.addr.rsplit_once(':').unwrap().1.parse().unwrap();
    (serve, port)
}

/// Every case h2spec ran, with nothing skipped, and its counts agreeing with its list.
fn check_counts(o: &Outcome) {
    assert!(o.tests >= 146, "h2spec v2.2.1 has 146 cases with --strict; ran {}", o.tests);
    assert_eq!(o.cases.len(), o.tests, "cases listed vs counted:\n{}", o.output);
    assert_eq!(o.passed + o.skipped + o.failed, o.tests, "{}", o.output);
    assert_eq!(o.skipped, 0, "skipped cases:\n{}", o.output);
    assert_eq!(o.failed_cases().len(), o.failed, "{}", o.output);
}

#[test]
fn h2_over_tls_passes_every_case() {
    let (_serve, port) = serve(true);
    let o = run_h2spec(port, true);
    check_counts(&o);
    assert!(o.failed_cases().is_empty(), "failed: {:#?}\n{}", o.failed_cases(), o.output);
}

/// On a plain port herd serve speaks HTTP/1 and h2c with prior knowledge: a connection is
/// HTTP/2 when it starts with the preface's request line, `PRI * HTTP/2.0` (and then a
/// preface that goes wrong gets GOAWAY PROTOCOL_ERROR, RFC 9113 §3.4). h2spec's
/// http2/3.5/2 sends `INVALID CONNECTION PREFACE\r\n\r\n` and wants the connection closed
/// with nothing sent; on this port those bytes are an HTTP/1 request line that is not valid,
/// and RFC 9112 §2.2 says to answer it with 400 and close, which herd does (h2spec reads the
/// 400 as a frame and reports an unexpected EOF). Over TLS, where ALPN says h2, the case
/// passes (above). Every other case passes here too.
#[test]
fn h2c_passes_every_case_that_applies_to_a_port_that_also_speaks_http1() {
    let (serve, port) = serve(false);
    let o = run_h2spec(port, false);
    check_counts(&o);
    let failed = o.failed_cases();
    assert_eq!(
        failed,
        ["http2/3.5/2 (Sends invalid connection preface)"],
        "failed cases (only the HTTP/1 one is expected):\n{}",
        o.output
    );
    // What herd does there: HTTP/1's 400, then the close.
    let mut s = TcpStream::connect(&serve.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"INVALID CONNECTION PREFACE\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let answer = text(&answer);
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
    // And a preface that breaks after `PRI * HTTP/2.0` is HTTP/2's error, GOAWAY
    // PROTOCOL_ERROR (code 1) after the server's SETTINGS, then the close.
    let mut s = TcpStream::connect(&serve.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let goaway = frames(&answer).into_iter().find(|f| f.0 == 0x7);
    let (_, _, payload) = goaway.unwrap_or_else(|| panic!("no GOAWAY in {answer:02x?}"));
    assert_eq!(payload[4..8], [0, 0, 0, 1], "GOAWAY's code: {payload:02x?}");
}

/// (type, stream, payload) of each whole frame in `bytes`.
fn frames(mut bytes: &[u8]) -> Vec<(u8, u32, Vec<u8>)> {
    let mut out = Vec::new();
    while bytes.len() >= 9 {
        let len = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
        let stream = u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) & 0x7fff_ffff;
        let Some(payload) = bytes.get(9..9 + len) else { break };
        out.push((bytes[3], stream, payload.to_vec()));
        bytes = &bytes[9 + len..];
    }
    out
}

#[test]
fn the_report_is_read_case_by_case() {
    // A cut of h2spec's own output, as the parser must read it.
    let output = "\
Generic tests for HTTP/2 server
  1. Starting HTTP/2
      1: Sends a client connection preface\r    ✔ 1: Sends a client connection preface

Hypertext Transfer Protocol Version 2 (HTTP/2)
  3. Starting HTTP/2
    3.5. HTTP/2 Connection Preface
      ✔ 1: Sends client connection preface
      × 2: Sends invalid connection preface
        -> The endpoint MUST terminate the TCP connection.
           Expected: Connection closed
             Actual: Error: unexpected EOF
  5. Streams and Multiplexing
    5.1. Stream States
      5.1.1. Stream Identifiers
        ✔ 2: Sends stream identifier that is numerically smaller than previous

HPACK: Header Compression for HTTP/2
  2. Compression Process Overview
    2.3. Indexing Tables
      2.3.3. Index Address Space
        ✔ 1: Sends a indexed header field representation with invalid index

Failures: 

Hypertext Transfer Protocol Version 2 (HTTP/2)
  3. Starting HTTP/2
    3.5. HTTP/2 Connection Preface
      × 2: Sends invalid connection preface

Finished in 0.1 seconds
5 tests, 4 passed, 0 skipped, 1 failed
";
    let o = parse(output);
    let names: Vec<(&str, bool)> = o.cases.iter().map(|(n, ok)| (n.as_str(), *ok)).collect();
    assert_eq!(
        names,
        [
            ("generic/1/1 (Sends a client connection preface)", true),
            ("http2/3.5/1 (Sends client connection preface)", true),
            ("http2/3.5/2 (Sends invalid connection preface)", false),
            (
                "http2/5.1.1/2 (Sends stream identifier that is numerically smaller than \
                 previous)",
                true
            ),
            (
                "hpack/2.3.3/1 (Sends a indexed header field representation with invalid index)",
                true
            ),
        ]
    );
    assert_eq!((o.tests, o.passed, o.skipped, o.failed), (5, 4, 0, 1));
}
