//! What agents and the coordinator say to each other: one JSON object a line over one TCP
//! connection per agent, named by its one key (`{"ping":{"t1":…}}`, `"done"`): serde's
//! external tagging, the one form it reads without buffering (an internally tagged frame
//! loses the numeric map keys of a status count on the way). JSON because every part of it is already serde
//! (the recorder, histograms in herd's one encoding, the agent's own report), it is readable
//! in a packet capture, and a frame a second is far from any cost that matters.
//!
//! The conversation (docs/cluster.md):
//! agent `hello` → coordinator `welcome` (or `refused`) → agent `ping` ×8 ↔ coordinator
//! `pong` (clock offset and RTT) → agent `armed` → coordinator `start` (one instant, to
//! all) → agent `second` per second and `step` per step → agent `done` (or `failed`).
//! The coordinator may send `abort` at any time (Ctrl-C, another agent failed).

use std::io::{self, BufRead, Read, Write};

use serde::{Deserialize, Serialize};

use crate::report::StepReport;
use crate::run_info::RunInfo;
use herd_record::Interval;
use herd_record::RunRecorder;

/// The conversation's version: an agent and a coordinator of different versions refuse each
/// other at `hello`. 3: a second carries its failures by kind.
pub(crate) const PROTOCOL: u32 = 3;

/// No frame is longer: a recorder with every histogram full and a per-connection rate for
/// 50,000 connections is a few MiB. A longer line is a broken or hostile peer.
pub(crate) const MAX_FRAME: u64 = 64 << 20;

/// The histogram configuration every agent records with, said at `hello`: only histograms of
/// one configuration add up exactly.
pub(crate) const HISTOGRAM: &str = "1us..3600s/3 digits";

/// An agent's frames.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FromAgent {
    Hello {
        protocol: u32,
        /// herd's version: agents of different builds would count differently.
        herd: String,
        index: u32,
        count: u32,
        /// The run's settings, hashed (`config_hash`): every agent must run the same.
        config: String,
        histogram: String,
    },
    /// The agent's wall clock, in nanoseconds since the Unix epoch.
    Ping {
        t1: i64,
    },
    /// Ready: the plan is prepared and the kept-alive connections open, waiting for the
    /// start; the clock as measured.
    Armed {
        offset_ns: i64,
        rtt_ns: i64,
        /// Connections open before the start, those that could not be (opened with their
        /// first request instead), and how long opening took.
        opened: u64,
        not_opened: u64,
        opening_ns: u64,
    },
    /// One second of one step, as the agent's own run merged it over its workers. The last
    /// second of a step says so (`last`) and where the agent's step ended (`end_ns` after
    /// the step's start).
    Second(Box<SecondFrame>),
    /// A step is over: the agent's whole recorder and run facts, and its own report.
    Step(Box<StepFrame>),
    Done,
    /// The agent could not run: the sentence says why.
    Failed {
        error: String,
    },
}

/// The coordinator's frames.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FromCoordinator {
    Welcome,
    Refused {
        reason: String,
    },
    /// Times on the coordinator's wall clock: `t2` when the ping arrived, `t3` when the pong
    /// left.
    Pong {
        t1: i64,
        t2: i64,
        t3: i64,
    },
    /// Start at this instant of the coordinator's wall clock (ns since the Unix epoch).
    Start {
        at: i64,
    },
    Abort {
        reason: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SecondFrame {
    /// The step (from 1) of a stepped run.
    pub(crate) step: Option<usize>,
    pub(crate) second: u64,
    pub(crate) last: bool,
    /// For the last second: when the agent's step ended, after the measurement start.
    pub(crate) end_ns: u64,
    pub(crate) completed: u64,
    pub(crate) failed: u64,
    /// The failed requests by kind, in `FailureKind::ALL`'s order (the live view's and the
    /// metrics' errors by kind, merged across agents).
    pub(crate) failures: Vec<u64>,
    pub(crate) bytes_read: u64,
    pub(crate) latency: herd_stats::LatencyHistogram,
    /// Sends late behind their schedule (`Interval::late_sends`).
    #[serde(default)]
    pub(crate) late_sends: u64,
    /// Connections open at the second's end (`Interval::open_connections`).
    #[serde(default)]
    pub(crate) open_connections: u64,
}

impl SecondFrame {
    pub(crate) fn interval(self) -> Interval {
        let mut failures = herd_stats::Failures::default();
        for (kind, n) in herd_stats::FailureKind::ALL.iter().zip(&self.failures) {
            failures.add_n(*kind, *n);
        }
        Interval {
            completed: self.completed,
            failed: self.failed,
            failures,
            bytes_read: self.bytes_read,
            latency: self.latency,
            late_sends: self.late_sends,
            open_connections: self.open_connections,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StepFrame {
    /// From 1.
    pub(crate) step: usize,
    pub(crate) recorder: RunRecorder,
    pub(crate) info: RunInfo,
    /// The agent's own figures and verdict.
    pub(crate) report: StepReport,
}

/// Writes one frame and flushes it.
pub(crate) fn send<T: Serialize>(out: &mut impl Write, frame: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(frame).map_err(io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error("the connection closed")]
    Closed,
    #[error("a frame longer than {} MiB", MAX_FRAME >> 20)]
    TooLong,
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not a frame of herd's ({0})")]
    Malformed(String),
}

/// Reads the next frame: one line of at most [`MAX_FRAME`] bytes.
pub(crate) fn receive<T: for<'de> Deserialize<'de>, R: BufRead>(
    input: &mut R,
    line: &mut Vec<u8>,
) -> Result<T, ReadError> {
    line.clear();
    let n = Read::take(&mut *input, MAX_FRAME + 1).read_until(b'\n', line)?;
    if n == 0 {
        return Err(ReadError::Closed);
    }
    if line.last() != Some(&b'\n') {
        return Err(if n as u64 > MAX_FRAME { ReadError::TooLong } else { ReadError::Closed });
    }
    serde_json::from_slice(line).map_err(|e| ReadError::Malformed(e.to_string()))
}

/// The run's settings as one short text every agent computes alike: FNV-1a over `herd run`'s
/// canonical arguments (outputs left out: only the coordinator writes them).
pub(crate) fn config_hash(args: &[std::ffi::OsString]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for arg in args {
        for &b in arg.as_encoded_bytes().iter().chain(&[0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_go_and_come_back() {
        let mut buf = Vec::new();
        send(&mut buf, &FromCoordinator::Start { at: 1_700_000_000_123_456_789 }).unwrap();
        send(&mut buf, &FromAgent::Ping { t1: 5 }).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert_eq!(text, "{\"start\":{\"at\":1700000000123456789}}\n{\"ping\":{\"t1\":5}}\n");
        let mut input = &buf[..];
        let mut line = Vec::new();
        let start: FromCoordinator = receive(&mut input, &mut line).unwrap();
        assert!(matches!(start, FromCoordinator::Start { at: 1_700_000_000_123_456_789 }));
        let ping: FromAgent = receive(&mut input, &mut line).unwrap();
        assert!(matches!(ping, FromAgent::Ping { t1: 5 }));
        assert!(matches!(receive::<FromAgent, _>(&mut input, &mut line), Err(ReadError::Closed)));
    }

    #[test]
    fn broken_and_hostile_frames_are_named() {
        let mut line = Vec::new();
        for (bytes, want) in [
            (&b"{\"ping\":{}}\n"[..], "not a frame of herd's (missing field `t1`"),
            (&b"{\"explode\":1}\n"[..], "not a frame of herd's (unknown variant `explode`"),
            (&b"\xff\xfe\n"[..], "not a frame of herd's"),
            (&b"\"done\""[..], "the connection closed"),
        ] {
            let e = receive::<FromAgent, _>(&mut &bytes[..], &mut line).unwrap_err().to_string();
            assert!(e.starts_with(want), "{bytes:?}: {e}");
        }
        // An endless line stops at the bound instead of filling memory.
        let endless = std::io::repeat(b'x');
        let mut input = std::io::BufReader::new(endless);
        let e = receive::<FromAgent, _>(&mut input, &mut line).unwrap_err();
        assert!(matches!(e, ReadError::TooLong), "{e}");
        assert!(line.len() as u64 <= MAX_FRAME + 1);
    }

    #[test]
    fn the_config_hash_tells_settings_apart() {
        let a = |v: &[&str]| config_hash(&v.iter().map(Into::into).collect::<Vec<_>>());
        assert_eq!(
            a(&["http://127.0.0.1/", "--rate=100"]),
            a(&["http://127.0.0.1/", "--rate=100"])
        );
        assert_ne!(
            a(&["http://127.0.0.1/", "--rate=100"]),
            a(&["http://127.0.0.1/", "--rate=1000"])
        );
        // Argument boundaries count: "ab","c" is not "a","bc".
        assert_ne!(a(&["ab", "c"]), a(&["a", "bc"]));
    }
}
