//! Property test: any sequence of frames herd's encoders make (plus padded DATA and HEADERS
//! and unknown frames, made by hand, their stream ids' reserved bit sometimes set) decodes
//! to what was encoded, in any split: stream ids without the reserved bit, header blocks
//! joined over CONTINUATION frames, DATA payloads joined and padding gone, flow counting it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_proto::fuzzing::Split;
use herd_proto::h2::frame::fuzzing::{transcript, End, Event};
use herd_proto::h2::frame::{flag, kind};
use herd_proto::h2::{encode, ErrorCode, SettingId, DEFAULT_MAX_FRAME_SIZE};
use proptest::prelude::*;

/// One frame (or header block) to encode.
#[derive(Debug, Clone)]
enum Op {
    Settings(Vec<(u16, u32)>),
    SettingsAck,
    Ping(bool, [u8; 8]),
    WindowUpdate(u32, u32),
    RstStream(u32, u32),
    GoAway(u32, u32, Vec<u8>),
    /// Stream, block, END_STREAM, the frame size limit to encode with.
    Headers(u32, Vec<u8>, bool, u32),
    PushPromise(u32, u32, Vec<u8>, u32),
    Data(u32, Vec<u8>, bool),
    /// Stream, data, padding, END_STREAM.
    PaddedData(u32, Vec<u8>, u8, bool),
    /// Stream, block, padding, priority fields.
    PaddedHeaders(u32, Vec<u8>, u8, bool),
    Priority(u32, u32, bool, u8),
    Unknown(u8, u8, u32, Vec<u8>),
}

/// What a receiver reads, with header blocks and DATA payloads joined.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Read {
    Settings { ack: bool, settings: Vec<(u16, u32)> },
    Ping { ack: bool, payload: [u8; 8] },
    WindowUpdate { stream: u32, increment: u32 },
    RstStream { stream: u32, code: u32 },
    GoAway { last_stream: u32, code: u32, debug: Vec<u8> },
    Block { kind: u8, stream: u32, promised: u32, end_stream: bool, block: Vec<u8> },
    Data { stream: u32, end_stream: bool, flow: u32, data: Vec<u8> },
    Priority { stream: u32 },
    Unknown { kind: u8, stream: u32 },
}

const MASK: u32 = 0x7fff_ffff;

fn stream() -> impl Strategy<Value = u32> {
    // A stream id, sometimes with the reserved bit set (which must be ignored).
    (1..=MASK, any::<bool>()).prop_map(|(s, r)| s | if r { 1 << 31 } else { 0 })
}

fn setting() -> impl Strategy<Value = (u16, u32)> {
    prop_oneof![
        (0..=1u32).prop_map(|v| (2, v)),
        (0..=MASK).prop_map(|v| (4, v)),
        (16_384..=16_777_215u32).prop_map(|v| (5, v)),
        (prop_oneof![Just(1u16), Just(3), Just(6), 7..=u16::MAX], any::<u32>()),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let bytes = |n: usize| proptest::collection::vec(any::<u8>(), 0..n);
    prop_oneof![
        proptest::collection::vec(setting(), 0..8).prop_map(Op::Settings),
        Just(Op::SettingsAck),
        (any::<bool>(), any::<[u8; 8]>()).prop_map(|(a, p)| Op::Ping(a, p)),
        (any::<u32>(), 1..=MASK).prop_map(|(s, i)| Op::WindowUpdate(s, i)),
        (stream(), any::<u32>()).prop_map(|(s, c)| Op::RstStream(s, c)),
        (any::<u32>(), any::<u32>(), bytes(64)).prop_map(|(l, c, d)| Op::GoAway(l, c, d)),
        (
            stream(),
            bytes(1500),
            any::<bool>(),
            prop_oneof![1..600u32, Just(DEFAULT_MAX_FRAME_SIZE)]
        )
            .prop_map(|(s, b, e, m)| Op::Headers(s, b, e, m)),
        (stream(), stream(), bytes(1500), prop_oneof![5..600u32, Just(DEFAULT_MAX_FRAME_SIZE)])
            .prop_map(|(s, p, b, m)| Op::PushPromise(s, p, b, m)),
        (stream(), bytes(2000), any::<bool>()).prop_map(|(s, d, e)| Op::Data(s, d, e)),
        (stream(), bytes(300), any::<u8>(), any::<bool>())
            .prop_map(|(s, d, p, e)| Op::PaddedData(s, d, p, e)),
        (stream(), bytes(300), any::<u8>(), any::<bool>())
            .prop_map(|(s, b, p, pri)| Op::PaddedHeaders(s, b, p, pri)),
        (stream(), any::<u32>(), any::<bool>(), any::<u8>())
            .prop_map(|(s, d, e, w)| Op::Priority(s, d, e, w)),
        (10..=255u8, any::<u8>(), any::<u32>(), bytes(100))
            .prop_map(|(k, f, s, p)| Op::Unknown(k, f, s, p)),
    ]
}

/// Encodes `op` and says what a receiver must read.
fn encode_op(out: &mut Vec<u8>, op: &Op) -> Read {
    match op.clone() {
        Op::Settings(s) => {
            let typed: Vec<_> = s.iter().map(|&(id, v)| (SettingId(id), v)).collect();
            encode::settings(out, &typed);
            Read::Settings { ack: false, settings: s }
        }
        Op::SettingsAck => {
            encode::settings_ack(out);
            Read::Settings { ack: true, settings: vec![] }
        }
        Op::Ping(ack, payload) => {
            encode::ping(out, ack, payload);
            Read::Ping { ack, payload }
        }
        Op::WindowUpdate(s, i) => {
            encode::window_update(out, s, i);
            Read::WindowUpdate { stream: s & MASK, increment: i }
        }
        Op::RstStream(s, c) => {
            encode::rst_stream(out, s, ErrorCode(c));
            Read::RstStream { stream: s & MASK, code: c }
        }
        Op::GoAway(l, c, d) => {
            encode::goaway(out, l, ErrorCode(c), &d);
            Read::GoAway { last_stream: l & MASK, code: c, debug: d }
        }
        Op::Headers(s, b, e, m) => {
            encode::headers(out, s, &b, e, m);
            Read::Block {
                kind: kind::HEADERS,
                stream: s & MASK,
                promised: 0,
                end_stream: e,
                block: b,
            }
        }
        Op::PushPromise(s, p, b, m) => {
            encode::push_promise(out, s, p, &b, m);
            Read::Block {
                kind: kind::PUSH_PROMISE,
                stream: s & MASK,
                promised: p & MASK,
                end_stream: false,
                block: b,
            }
        }
        Op::Data(s, d, e) => {
            encode::data(out, s, &d, e);
            Read::Data { stream: s & MASK, end_stream: e, flow: d.len() as u32, data: d }
        }
        Op::PaddedData(s, d, p, e) => {
            let len = 1 + d.len() + usize::from(p);
            let flags = flag::PADDED | if e { flag::END_STREAM } else { 0 };
            raw_header(out, len as u32, kind::DATA, flags, s);
            out.push(p);
            out.extend_from_slice(&d);
            out.extend(std::iter::repeat_n(0, usize::from(p)));
            Read::Data { stream: s & MASK, end_stream: e, flow: len as u32, data: d }
        }
        Op::PaddedHeaders(s, b, p, pri) => {
            let fixed = if pri { 5 } else { 0 };
            let len = 1 + fixed + b.len() + usize::from(p);
            let flags = flag::PADDED | flag::END_HEADERS | if pri { flag::PRIORITY } else { 0 };
            raw_header(out, len as u32, kind::HEADERS, flags, s);
            out.push(p);
            out.extend(std::iter::repeat_n(0x55, fixed));
            out.extend_from_slice(&b);
            out.extend(std::iter::repeat_n(0, usize::from(p)));
            Read::Block {
                kind: kind::HEADERS,
                stream: s & MASK,
                promised: 0,
                end_stream: false,
                block: b,
            }
        }
        Op::Priority(s, d, e, w) => {
            encode::priority(out, s, d, e, w);
            Read::Priority { stream: s & MASK }
        }
        Op::Unknown(k, f, s, p) => {
            raw_header(out, p.len() as u32, k, f, s);
            out.extend_from_slice(&p);
            Read::Unknown { kind: k, stream: s & MASK }
        }
    }
}

/// A frame header with the stream id as given, reserved bit and all (`encode` clears it).
fn raw_header(out: &mut Vec<u8>, len: u32, k: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.extend_from_slice(&[k, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Reads a transcript back into `Read`s: blocks and payloads joined.
fn reads(events: &[Event]) -> Vec<Read> {
    let mut out: Vec<Read> = Vec::new();
    let mut data = Vec::new();
    for e in events {
        let read = match e.clone() {
            Event::Data { data: piece, .. } => {
                data.extend_from_slice(&piece);
                continue;
            }
            Event::DataEnd { stream, end_stream, flow } => {
                Read::Data { stream, end_stream, flow, data: std::mem::take(&mut data) }
            }
            Event::Headers { stream, end_stream, block, .. } => {
                Read::Block { kind: kind::HEADERS, stream, promised: 0, end_stream, block }
            }
            Event::PushPromise { stream, promised, block, .. } => {
                Read::Block { kind: kind::PUSH_PROMISE, stream, promised, end_stream: false, block }
            }
            Event::Continuation { block, .. } => {
                let Some(Read::Block { block: joined, .. }) = out.last_mut() else {
                    panic!("a CONTINUATION after {:?}", out.last());
                };
                joined.extend_from_slice(&block);
                continue;
            }
            Event::Settings { ack, settings } => Read::Settings { ack, settings },
            Event::Ping { ack, payload } => Read::Ping { ack, payload },
            Event::WindowUpdate { stream, increment } => Read::WindowUpdate { stream, increment },
            Event::RstStream { stream, code } => Read::RstStream { stream, code: code.0 },
            Event::GoAway { last_stream, code, debug } => {
                Read::GoAway { last_stream, code: code.0, debug }
            }
            Event::Priority { stream } => Read::Priority { stream },
            Event::Unknown { kind, stream } => Read::Unknown { kind, stream },
            Event::StreamError(e) => panic!("{e}"),
        };
        out.push(read);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn what_is_encoded_decodes_the_same_in_any_split(
        ops in proptest::collection::vec(op(), 0..12),
        at in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let mut bytes = Vec::new();
        let mut expected: Vec<Read> = Vec::new();
        for op in &ops {
            let read = encode_op(&mut bytes, op);
            // The transcript joins unknown frames in a row with the same type and stream.
            if matches!(read, Read::Unknown { .. }) && expected.last() == Some(&read) {
                continue;
            }
            expected.push(read);
        }
        let whole = transcript(&bytes, DEFAULT_MAX_FRAME_SIZE, Split::Whole);
        prop_assert_eq!(&whole.end, &End::Idle);
        prop_assert_eq!(reads(&whole.events), expected);
        for split in [Split::Bytewise, Split::At(at % (bytes.len() + 1)), Split::Seeded(seed)] {
            prop_assert_eq!(&transcript(&bytes, DEFAULT_MAX_FRAME_SIZE, split), &whole, "{:?}", split);
        }
    }
}
