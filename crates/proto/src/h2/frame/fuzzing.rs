//! Drivers that run [`FrameDecoder`] over a byte stream in chosen splits, for the fuzz
//! target `h2_frames` and for the split tests: whatever the read sizes, a stream must decode
//! to the same [`Transcript`] (DATA pieces joined, padding-only pieces dropped).
//!
//! The driver is the engine's read loop in small: bytes are appended to a buffer, decoded
//! from its front until `Ok(None)`, and the used bytes dropped. It panics on purpose when
//! the decoder breaks a promise of its API (a result that depends on the split, consuming
//! more than it was given, asking to hold more than a frame, a whole frame returned in
//! part, a loop without progress, a connection error that does not stick). It never panics
//! because of what the bytes are.
//!
//! Not a stable API and not for the engine.

use std::fmt;

use super::{Frame, FrameDecoder, FrameError, DEFAULT_MAX_FRAME_SIZE, FRAME_HEADER_LEN};
use crate::fuzzing::{pieces, Split};
use crate::h2::ErrorCode;

/// Fuzz entry point: decodes `data` as what a peer sent on one connection (after the
/// preface), whole, byte by byte, split at one data-derived point and in data-derived
/// pseudo-random pieces, with the default frame size limit and with a 64-byte one, and
/// checks that all splits agree.
pub fn fuzz_frames(data: &[u8]) {
    let seed = data
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let at = usize::try_from(seed).unwrap_or(0) % data.len().saturating_add(1);
    for max in [DEFAULT_MAX_FRAME_SIZE, 64] {
        let whole = transcript(data, max, Split::Whole);
        for split in [Split::Bytewise, Split::At(at), Split::Seeded(seed)] {
            let other = transcript(data, max, split);
            assert_eq!(whole, other, "{split:?} disagrees with the whole input (max {max})");
        }
    }
}

/// Decodes `data` whole, split at every position, byte by byte and in a few pseudo-random
/// splits; panics unless all agree, and returns the common transcript. Quadratic in the
/// length: for test inputs of a few KiB at most.
pub fn transcript_all_splits(data: &[u8], max_frame_size: u32) -> Transcript {
    let whole = transcript(data, max_frame_size, Split::Whole);
    let splits =
        (0..=data.len()).map(Split::At).chain([Split::Bytewise]).chain((1..=8).map(Split::Seeded));
    for split in splits {
        let other = transcript(data, max_frame_size, split);
        assert_eq!(whole, other, "{split:?} disagrees with the whole input {data:02x?}");
    }
    whole
}

/// What decoding a stream produced: the frames and stream errors in order, then how it
/// ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    pub events: Vec<Event>,
    pub end: End,
}

/// A frame as the decoder returned it, with its bytes copied; a DATA frame's pieces joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Data {
        stream: u32,
        data: Vec<u8>,
    },
    DataEnd {
        stream: u32,
        end_stream: bool,
        flow: u32,
    },
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: Vec<u8>,
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        block: Vec<u8>,
    },
    Priority {
        stream: u32,
    },
    RstStream {
        stream: u32,
        code: ErrorCode,
    },
    Settings {
        ack: bool,
        settings: Vec<(u16, u32)>,
    },
    PushPromise {
        stream: u32,
        promised: u32,
        end_headers: bool,
        block: Vec<u8>,
    },
    Ping {
        ack: bool,
        payload: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: ErrorCode,
        debug: Vec<u8>,
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    /// One or more unknown frames, or pieces of them, in a row with this type and stream.
    Unknown {
        kind: u8,
        stream: u32,
    },
    /// A stream error; decoding went on after its frame.
    StreamError(FrameError),
}

/// How a stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Between frames, every byte used.
    Idle,
    /// Inside a frame: `buffered` bytes wait in the buffer for the rest of it.
    Partial { buffered: usize },
    /// A connection error; decoding stopped there.
    Error(FrameError),
}

/// Decodes `data` as consecutive frames, fed to the decoder as `split` cuts them.
pub fn transcript(data: &[u8], max_frame_size: u32, split: Split) -> Transcript {
    let mut decoder = FrameDecoder::new(max_frame_size);
    let mut events = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    // Inside a DATA or unknown frame whose header has been used.
    let mut inside = false;
    for piece in pieces(data, split) {
        buf.extend_from_slice(piece);
        let mut start = 0;
        // A DataEnd may use nothing; two results in a row that use nothing would loop.
        let mut idle_steps = 0;
        loop {
            let rest = &buf[start..];
            match decoder.decode(rest) {
                Ok(Some((frame, used))) => {
                    assert!(used <= rest.len(), "used {used} of {} bytes", rest.len());
                    check_frame(&frame, used, inside, max_frame_size);
                    inside = !decoder.is_between_frames();
                    idle_steps = if used == 0 { idle_steps + 1 } else { 0 };
                    assert!(idle_steps < 2, "two results in a row used no bytes");
                    record(&mut events, frame);
                    start += used;
                }
                Ok(None) => {
                    assert!(
                        rest.len() < FRAME_HEADER_LEN + max_frame_size as usize,
                        "asked for more than a frame: {} bytes buffered",
                        rest.len()
                    );
                    break;
                }
                Err(e) if e.stream.is_some() => {
                    assert!(!inside, "a stream error inside a DATA or unknown frame");
                    assert!(
                        (FRAME_HEADER_LEN..=rest.len()).contains(&e.used),
                        "a stream error that used {} of {} bytes",
                        e.used,
                        rest.len()
                    );
                    assert_eq!(e.code, e.rule.code(), "a code other than its rule's");
                    events.push(Event::StreamError(e));
                    start += e.used;
                }
                Err(e) => {
                    assert_eq!(e.code, e.rule.code(), "a code other than its rule's");
                    assert_eq!(decoder.decode(&[]), Err(e), "a connection error did not stick");
                    return Transcript { events, end: End::Error(e) };
                }
            }
        }
        buf.drain(..start);
    }
    let end =
        if buf.is_empty() && !inside { End::Idle } else { End::Partial { buffered: buf.len() } };
    Transcript { events, end }
}

/// What every frame must satisfy whatever the bytes were.
fn check_frame(frame: &Frame<'_>, used: usize, inside: bool, max: u32) {
    let max = max as usize;
    match *frame {
        Frame::Data { data, .. } => assert!(data.len() <= used && data.len() <= max),
        Frame::DataEnd { flow, .. } => assert!(flow as usize <= max),
        Frame::Unknown { .. } => assert!(used <= FRAME_HEADER_LEN + max),
        _ => {
            assert!(!inside, "a frame inside a DATA or unknown frame");
            assert!((FRAME_HEADER_LEN..=FRAME_HEADER_LEN + max).contains(&used), "used {used}");
        }
    }
    if let Frame::Headers { stream, .. }
    | Frame::Continuation { stream, .. }
    | Frame::PushPromise { stream, .. }
    | Frame::Data { stream, .. }
    | Frame::DataEnd { stream, .. }
    | Frame::Priority { stream }
    | Frame::RstStream { stream, .. } = *frame
    {
        assert!(stream != 0 && stream < 1 << 31, "stream {stream}");
    }
}

/// Appends a frame, joining DATA pieces and runs of unknown ones.
fn record(events: &mut Vec<Event>, frame: Frame<'_>) {
    let event = match frame {
        Frame::Data { stream, data } => {
            if let Some(Event::Data { stream: s, data: joined }) = events.last_mut() {
                if *s == stream {
                    joined.extend_from_slice(data);
                    return;
                }
            }
            if data.is_empty() {
                return;
            }
            Event::Data { stream, data: data.to_vec() }
        }
        Frame::DataEnd { stream, end_stream, flow } => Event::DataEnd { stream, end_stream, flow },
        Frame::Headers { stream, end_stream, end_headers, block } => {
            Event::Headers { stream, end_stream, end_headers, block: block.to_vec() }
        }
        Frame::Continuation { stream, end_headers, block } => {
            Event::Continuation { stream, end_headers, block: block.to_vec() }
        }
        Frame::Priority { stream } => Event::Priority { stream },
        Frame::RstStream { stream, code } => Event::RstStream { stream, code },
        Frame::Settings { ack, settings } => {
            assert!(!ack || settings.is_empty(), "an ACK with settings");
            Event::Settings { ack, settings: settings.iter().map(|(id, v)| (id.0, v)).collect() }
        }
        Frame::PushPromise { stream, promised, end_headers, block } => {
            Event::PushPromise { stream, promised, end_headers, block: block.to_vec() }
        }
        Frame::Ping { ack, payload } => Event::Ping { ack, payload },
        Frame::GoAway { last_stream, code, debug } => {
            Event::GoAway { last_stream, code, debug: debug.to_vec() }
        }
        Frame::WindowUpdate { stream, increment } => Event::WindowUpdate { stream, increment },
        Frame::Unknown { kind, stream } => {
            if events.last() == Some(&Event::Unknown { kind, stream }) {
                return;
            }
            Event::Unknown { kind, stream }
        }
    };
    events.push(event);
}

impl fmt::Display for Transcript {
    /// A one-line summary for table-driven tests, e.g.
    /// `HEADERS s1 eh "\x88"; DATA s1 "hi"; END s1 es flow2; idle`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.events {
            write!(f, "{e}; ")?;
        }
        match &self.end {
            End::Idle => f.write_str("idle"),
            End::Partial { buffered } => write!(f, "partial {buffered}"),
            End::Error(e) => write!(f, "err {}", e.code),
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = |on: bool, name: &'static str| if on { name } else { "" };
        match self {
            Event::Data { stream, data } => write!(f, "DATA s{stream} \"{}\"", data.escape_ascii()),
            Event::DataEnd { stream, end_stream, flow } => {
                write!(f, "END s{stream}{} flow{flow}", flag(*end_stream, " es"))
            }
            Event::Headers { stream, end_stream, end_headers, block } => write!(
                f,
                "HEADERS s{stream}{}{} \"{}\"",
                flag(*end_stream, " es"),
                flag(*end_headers, " eh"),
                block.escape_ascii()
            ),
            Event::Continuation { stream, end_headers, block } => write!(
                f,
                "CONTINUATION s{stream}{} \"{}\"",
                flag(*end_headers, " eh"),
                block.escape_ascii()
            ),
            Event::Priority { stream } => write!(f, "PRIORITY s{stream}"),
            Event::RstStream { stream, code } => write!(f, "RST_STREAM s{stream} {code}"),
            Event::Settings { ack, settings } => {
                f.write_str(if *ack { "SETTINGS ack" } else { "SETTINGS" })?;
                for (id, value) in settings {
                    write!(f, " {}={value}", super::SettingId(*id))?;
                }
                Ok(())
            }
            Event::PushPromise { stream, promised, end_headers, block } => write!(
                f,
                "PUSH_PROMISE s{stream} p{promised}{} \"{}\"",
                flag(*end_headers, " eh"),
                block.escape_ascii()
            ),
            Event::Ping { ack, payload } => {
                write!(f, "PING{} \"{}\"", flag(*ack, " ack"), payload.escape_ascii())
            }
            Event::GoAway { last_stream, code, debug } => {
                write!(f, "GOAWAY last{last_stream} {code} \"{}\"", debug.escape_ascii())
            }
            Event::WindowUpdate { stream, increment } => {
                write!(f, "WINDOW_UPDATE s{stream} +{increment}")
            }
            Event::Unknown { kind, stream } => write!(f, "UNKNOWN {kind:#x} s{stream}"),
            Event::StreamError(e) => {
                write!(f, "stream error s{} {}", e.stream.unwrap_or(0), e.code)
            }
        }
    }
}
