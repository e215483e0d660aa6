//! The codec's tests: every frame type through the encoders and back, every input decoded
//! whole, split at every byte and byte by byte (`fuzzing::transcript_all_splits`), and every
//! rule with its typed error, code and message.

use super::fuzzing::{transcript, transcript_all_splits, End, Transcript};
use super::*;
use crate::fuzzing::Split;

const MAX: u32 = DEFAULT_MAX_FRAME_SIZE;

/// A frame from its parts, for frames the encoders do not make (bad ones, padded ones).
fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode::frame_header(&mut out, payload.len() as u32, kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

/// Decodes `input` in every split (they must agree) and compares the one-line summary; see
/// `fuzzing::Transcript`'s `Display` for the format.
fn check(input: &[u8], expected: &str) {
    check_max(input, MAX, expected);
}

fn check_max(input: &[u8], max: u32, expected: &str) {
    let got = transcript_all_splits(input, max).to_string();
    assert_eq!(got, expected, "input {input:02x?}");
}

/// The connection error `input` ends in, the same in every split.
fn error(input: &[u8]) -> FrameError {
    error_max(input, MAX)
}

fn error_max(input: &[u8], max: u32) -> FrameError {
    match transcript_all_splits(input, max) {
        Transcript { end: End::Error(e), .. } => e,
        other => panic!("no connection error: {other}"),
    }
}

/// The one stream error `input` gives (decoding goes on after it).
fn stream_error(input: &[u8]) -> FrameError {
    let t = transcript_all_splits(input, MAX);
    assert_eq!(t.end, End::Idle, "{t}");
    match t.events.as_slice() {
        [fuzzing::Event::StreamError(e)] => *e,
        _ => panic!("not one stream error: {t}"),
    }
}

fn conn(rule: FrameRule) -> FrameError {
    FrameError::connection(rule)
}

// ---- every frame type round-trips ----

#[test]
fn client_frames_round_trip() {
    let mut out = Vec::new();
    encode::settings(
        &mut out,
        &[(SettingId::ENABLE_PUSH, 0), (SettingId::INITIAL_WINDOW_SIZE, 1 << 30)],
    );
    encode::settings_ack(&mut out);
    encode::ping(&mut out, false, *b"12345678");
    encode::ping(&mut out, true, *b"abcdefgh");
    encode::window_update(&mut out, 0, (1 << 31) - 1);
    encode::window_update(&mut out, 3, 1);
    encode::rst_stream(&mut out, 5, ErrorCode::CANCEL);
    encode::goaway(&mut out, 7, ErrorCode::NO_ERROR, b"bye");
    encode::headers(&mut out, 1, b"\x82\x86\x84", true, MAX);
    encode::data(&mut out, 3, b"body", true);
    encode::data_header(&mut out, 5, 0, false);
    check(
        &out,
        "SETTINGS ENABLE_PUSH=0 INITIAL_WINDOW_SIZE=1073741824; SETTINGS ack; \
         PING \"12345678\"; PING ack \"abcdefgh\"; WINDOW_UPDATE s0 +2147483647; \
         WINDOW_UPDATE s3 +1; RST_STREAM s5 CANCEL; GOAWAY last7 NO_ERROR \"bye\"; \
         HEADERS s1 es eh \"\\x82\\x86\\x84\"; DATA s3 \"body\"; END s3 es flow4; \
         END s5 flow0; idle",
    );
}

#[test]
fn server_frames_round_trip() {
    let mut out = Vec::new();
    encode::push_promise(&mut out, 1, 2, b"\x82", MAX);
    encode::priority(&mut out, 3, 1, true, 255);
    encode::headers(&mut out, 2, b"", false, MAX);
    encode::frame_header(&mut out, 3, 0xfa, 0xff, 9);
    out.extend_from_slice(b"xyz");
    encode::frame_header(&mut out, 0, 0x0b, 0, 0);
    check(
        &out,
        "PUSH_PROMISE s1 p2 eh \"\\x82\"; PRIORITY s3; HEADERS s2 eh \"\"; UNKNOWN 0xfa s9; \
         UNKNOWN 0xb s0; idle",
    );
}

#[test]
fn the_preface_comes_before_the_first_settings() {
    let mut out = Vec::new();
    encode::preface_and_settings(&mut out, &[(SettingId::MAX_CONCURRENT_STREAMS, 100)]);
    assert_eq!(&out[..24], PREFACE);
    check(&out[24..], "SETTINGS MAX_CONCURRENT_STREAMS=100; idle");
}

#[test]
fn a_long_header_block_goes_on_in_continuation_frames() {
    let block: Vec<u8> = (0..=255).cycle().take(40_000).collect();
    let mut out = Vec::new();
    encode::headers(&mut out, 1, &block, true, MAX);
    let t = transcript(&out, MAX, Split::Whole);
    let mut joined = Vec::new();
    let mut shape = Vec::new();
    for e in &t.events {
        match e {
            fuzzing::Event::Headers { stream: 1, end_stream: true, end_headers, block } => {
                shape.push(("HEADERS", *end_headers, block.len()));
                joined.extend_from_slice(block);
            }
            fuzzing::Event::Continuation { stream: 1, end_headers, block } => {
                shape.push(("CONTINUATION", *end_headers, block.len()));
                joined.extend_from_slice(block);
            }
            other => panic!("{other}"),
        }
    }
    assert_eq!(
        shape,
        [
            ("HEADERS", false, 16_384),
            ("CONTINUATION", false, 16_384),
            ("CONTINUATION", true, 7_232)
        ]
    );
    assert_eq!(joined, block);
    assert_eq!(t.end, End::Idle);
    // A smaller limit (a test's choice) splits smaller; the split tests run on this one.
    let mut out = Vec::new();
    encode::headers(&mut out, 3, b"abcdefg", false, 3);
    check(&out, "HEADERS s3 \"abc\"; CONTINUATION s3 \"def\"; CONTINUATION s3 eh \"g\"; idle");
    let mut out = Vec::new();
    encode::push_promise(&mut out, 3, 4, b"abcdefg", 6);
    check(&out, "PUSH_PROMISE s3 p4 \"ab\"; CONTINUATION s3 eh \"cdefg\"; idle");
}

// ---- DATA in pieces ----

#[test]
fn data_pieces_come_as_their_bytes_arrive() {
    let mut frame = Vec::new();
    encode::data(&mut frame, 1, b"hello world", true);
    let mut d = FrameDecoder::new(MAX);
    // The header alone is not a piece: nothing is used.
    assert_eq!(d.decode(&frame[..9]), Ok(None));
    assert!(d.is_between_frames());
    assert_eq!(d.decode(&frame[..14]), Ok(Some((Frame::Data { stream: 1, data: b"hello" }, 14))));
    assert!(!d.is_between_frames());
    assert_eq!(d.decode(&[]), Ok(None));
    assert_eq!(d.decode(&frame[14..]), Ok(Some((Frame::Data { stream: 1, data: b" world" }, 6))));
    // The last byte was used by the piece; the end uses nothing.
    assert_eq!(
        d.decode(&[]),
        Ok(Some((Frame::DataEnd { stream: 1, end_stream: true, flow: 11 }, 0)))
    );
    assert!(d.is_between_frames());
    assert_eq!(d.decode(&[]), Ok(None));
}

#[test]
fn padding_is_removed_and_counted_in_flow() {
    // Pad length 3, "abc", three bytes of padding: flow is the whole payload, 7.
    let frame = raw(kind::DATA, flag::PADDED | flag::END_STREAM, 1, b"\x03abc\0\0\0");
    check(&frame, "DATA s1 \"abc\"; END s1 es flow7; idle");
    let mut d = FrameDecoder::new(MAX);
    // Padding that arrives with the last data byte goes with it; the end then uses nothing.
    assert_eq!(d.decode(&frame), Ok(Some((Frame::Data { stream: 1, data: b"abc" }, 16))));
    assert_eq!(
        d.decode(&[]),
        Ok(Some((Frame::DataEnd { stream: 1, end_stream: true, flow: 7 }, 0)))
    );
    // Padding that trickles in is used as it comes, in empty pieces.
    let mut d = FrameDecoder::new(MAX);
    assert_eq!(d.decode(&frame[..13]), Ok(Some((Frame::Data { stream: 1, data: b"abc" }, 13))));
    assert_eq!(d.decode(&frame[13..14]), Ok(Some((Frame::Data { stream: 1, data: b"" }, 1))));
    assert_eq!(
        d.decode(&frame[14..]),
        Ok(Some((Frame::DataEnd { stream: 1, end_stream: true, flow: 7 }, 2)))
    );
    // Only padding, and none at all.
    check(&raw(kind::DATA, flag::PADDED, 3, b"\x02\0\0"), "END s3 flow3; idle");
    check(&raw(kind::DATA, flag::PADDED, 3, b"\x00"), "END s3 flow1; idle");
    check(&raw(kind::DATA, flag::PADDED, 3, b"\x00x"), "DATA s3 \"x\"; END s3 flow2; idle");
}

#[test]
fn headers_and_push_promise_lose_padding_and_priority_fields() {
    // PADDED and PRIORITY: pad length 2, dependency (exclusive, stream 1), weight, block, pad.
    let payload = b"\x02\x80\x00\x00\x01\x10blk\0\0";
    check(
        &raw(kind::HEADERS, flag::PADDED | flag::PRIORITY | flag::END_HEADERS, 3, payload),
        "HEADERS s3 eh \"blk\"; idle",
    );
    check(
        &raw(
            kind::HEADERS,
            flag::PRIORITY | flag::END_HEADERS | flag::END_STREAM,
            3,
            b"\0\0\0\x01\x10x",
        ),
        "HEADERS s3 es eh \"x\"; idle",
    );
    // Padding may take all the room the block had.
    check(
        &raw(kind::HEADERS, flag::PADDED | flag::END_HEADERS, 3, b"\x02\0\0"),
        "HEADERS s3 eh \"\"; idle",
    );
    // The promised stream's reserved bit is dropped.
    check(
        &raw(kind::PUSH_PROMISE, flag::PADDED | flag::END_HEADERS, 1, b"\x01\x80\0\0\x02ab\0"),
        "PUSH_PROMISE s1 p2 eh \"ab\"; idle",
    );
}

#[test]
fn reserved_bits_are_ignored() {
    let mut wu = raw(kind::WINDOW_UPDATE, 0, 0, &[0x80, 0, 0, 1]);
    wu[5] = 0x80; // the stream id's reserved bit
    check(&wu, "WINDOW_UPDATE s0 +1; idle");
    let goaway = raw(kind::GOAWAY, 0, 0, &[0x80, 0, 0, 9, 0, 0, 0, 0x0b]);
    check(&goaway, "GOAWAY last9 ENHANCE_YOUR_CALM \"\"; idle");
    let mut rst = raw(kind::RST_STREAM, 0, 0, &[0, 0, 0x12, 0x34]);
    rst[5..9].copy_from_slice(&[0x80, 0, 0, 5]);
    check(&rst, "RST_STREAM s5 unknown error code 0x1234; idle");
}

#[test]
fn unknown_flags_and_unknown_settings_are_kept_quiet() {
    check(
        &raw(kind::PING, 0xfe, 0, b"\0\0\0\0\0\0\0\0"),
        "PING \"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\"; idle",
    );
    check(
        &raw(kind::SETTINGS, 0, 0, b"\x00\x99\xff\xff\xff\xff"),
        "SETTINGS setting 0x99=4294967295; idle",
    );
}

#[test]
fn unknown_frames_are_skipped_in_pieces() {
    let mut input = raw(0x20, 0, 1, &[7; 100]);
    input.extend(raw(kind::PING, 0, 0, b"pingpong"));
    check(&input, "UNKNOWN 0x20 s1; PING \"pingpong\"; idle");
    let mut d = FrameDecoder::new(MAX);
    assert_eq!(d.decode(&input[..9]), Ok(None));
    assert_eq!(d.decode(&input[..50]), Ok(Some((Frame::Unknown { kind: 0x20, stream: 1 }, 50))));
    assert_eq!(d.decode(&input[50..60]), Ok(Some((Frame::Unknown { kind: 0x20, stream: 1 }, 10))));
    assert_eq!(d.decode(&input[60..109]), Ok(Some((Frame::Unknown { kind: 0x20, stream: 1 }, 49))));
    assert!(d.is_between_frames());
    // An unknown frame may be longer than a buffer would hold; never buffered whole.
    let big = raw(0x20, 0, 1, &[0; 16_000]);
    check_max(&big, 16_000, "UNKNOWN 0x20 s1; idle");
}

#[test]
fn truncated_input_ends_partial() {
    let mut out = Vec::new();
    encode::goaway(&mut out, 1, ErrorCode::NO_ERROR, b"debug");
    check(&out[..out.len() - 1], "partial 21");
    check(&out[..5], "partial 5");
    let mut out = Vec::new();
    encode::data(&mut out, 1, b"abc", false);
    check(&out[..11], "DATA s1 \"ab\"; partial 0");
    check(&out[..9], "partial 9");
}

// ---- the rules, each with its typed error ----

#[test]
fn a_frame_longer_than_the_limit_is_a_frame_size_error() {
    let mut out = Vec::new();
    encode::data(&mut out, 1, &[0; 101], false);
    let e = error_max(&out, 100);
    assert_eq!(e, conn(FrameRule::TooLong { kind: kind::DATA, len: 101, max: 100 }));
    assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
    // The header is enough to tell: nothing of the payload needs to arrive.
    assert_eq!(error_max(&out[..9], 100), e);
    // Also an unknown frame's.
    let e = error_max(&raw(0x33, 0, 0, &[0; 65]), 64);
    assert_eq!(e, conn(FrameRule::TooLong { kind: 0x33, len: 65, max: 64 }));
    // At the limit is fine.
    check_max(
        &raw(kind::GOAWAY, 0, 0, &[0; 64]),
        64,
        &format!("GOAWAY last0 NO_ERROR \"{}\"; idle", "\\x00".repeat(56)),
    );
}

#[test]
fn frames_of_a_stream_need_one() {
    for k in [kind::DATA, kind::HEADERS, kind::PRIORITY, kind::RST_STREAM, kind::PUSH_PROMISE] {
        let e = error(&raw(k, 0, 0, &[0; 5]));
        assert_eq!(e, conn(FrameRule::NoStream { kind: k }), "{}", kind::name(k).unwrap_or("?"));
        assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    }
    // CONTINUATION on stream 0 inside stream 1's block breaks the sequencing rule first.
    let mut input = raw(kind::HEADERS, 0, 1, b"");
    input.extend(raw(kind::CONTINUATION, flag::END_HEADERS, 0, b""));
    let e = error(&input);
    assert_eq!(
        e.rule,
        FrameRule::ContinuationExpected { stream: 1, kind: kind::CONTINUATION, got: 0 }
    );
}

#[test]
fn connection_frames_must_not_have_a_stream() {
    for (k, payload) in
        [(kind::SETTINGS, &b""[..]), (kind::PING, b"12345678"), (kind::GOAWAY, b"\0\0\0\0\0\0\0\0")]
    {
        let e = error(&raw(k, 0, 3, payload));
        assert_eq!(e, conn(FrameRule::OnStream { kind: k, stream: 3 }));
        assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    }
    // WINDOW_UPDATE and unknown frames may have either.
    check(&raw(kind::WINDOW_UPDATE, 0, 3, b"\0\0\0\x01"), "WINDOW_UPDATE s3 +1; idle");
}

#[test]
fn fixed_lengths_are_connection_frame_size_errors() {
    for (k, len, expected) in [
        (kind::RST_STREAM, 3, 4),
        (kind::RST_STREAM, 5, 4),
        (kind::PING, 7, 8),
        (kind::PING, 9, 8),
        (kind::WINDOW_UPDATE, 5, 4),
    ] {
        let stream = if k == kind::PING { 0 } else { 1 };
        let e = error(&raw(k, 0, stream, &vec![1; len as usize]));
        assert_eq!(e, conn(FrameRule::Length { kind: k, len, expected }));
        assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
    }
    let e = error(&raw(kind::SETTINGS, 0, 0, &[0; 7]));
    assert_eq!(e, conn(FrameRule::SettingsLength { len: 7 }));
    assert_eq!(
        e.to_string(),
        "FRAME_SIZE_ERROR: a SETTINGS frame of 7 bytes; its length must be a multiple of 6 (RFC 9113 §6.5)"
    );
    let e = error(&raw(kind::SETTINGS, flag::ACK, 0, &[0; 6]));
    assert_eq!(e, conn(FrameRule::SettingsAckLength { len: 6 }));
    assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
    let e = error(&raw(kind::GOAWAY, 0, 0, &[0; 7]));
    assert_eq!(e, conn(FrameRule::TooShort { kind: kind::GOAWAY, len: 7, min: 8 }));
    assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
}

#[test]
fn a_priority_frame_of_another_size_is_a_stream_error() {
    let mut input = raw(kind::PRIORITY, 0, 5, &[0; 4]);
    let e = stream_error(&input);
    assert_eq!(
        e,
        FrameError::stream(FrameRule::Length { kind: kind::PRIORITY, len: 4, expected: 5 }, 5, 13)
    );
    assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
    assert_eq!(e.stream, Some(5));
    assert_eq!(
        e.to_string(),
        "FRAME_SIZE_ERROR: a PRIORITY frame of 4 bytes; its length must be 5 (RFC 9113 §6.3)"
    );
    // Decoding goes on after it.
    input.extend(raw(kind::PRIORITY, 0, 5, &[0; 6]));
    encode::ping(&mut input, false, *b"stillok!");
    check(&input, "stream error s5 FRAME_SIZE_ERROR; stream error s5 FRAME_SIZE_ERROR; PING \"stillok!\"; idle");
}

#[test]
fn padding_must_fit() {
    // DATA: padding as long as the payload (pad length byte included) is too long; one
    // byte less is all padding.
    let e = error(&raw(kind::DATA, flag::PADDED, 1, b"\x04abc"));
    assert_eq!(e, conn(FrameRule::Padding { kind: kind::DATA, len: 4, pad: 4 }));
    assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    check(&raw(kind::DATA, flag::PADDED, 1, b"\x03abc"), "END s1 flow4; idle");
    // Known as soon as the pad length has arrived.
    assert_eq!(error(&raw(kind::DATA, flag::PADDED, 1, b"\x04abc")[..10]), e);
    let e = error(&raw(kind::DATA, flag::PADDED, 1, b""));
    assert_eq!(e, conn(FrameRule::TooShort { kind: kind::DATA, len: 0, min: 1 }));
    // HEADERS: the padding must leave room for the priority fields.
    let e = error(&raw(kind::HEADERS, flag::PADDED | flag::PRIORITY, 1, b"\x01\0\0\0\0\0"));
    assert_eq!(e, conn(FrameRule::Padding { kind: kind::HEADERS, len: 6, pad: 1 }));
    let e = error(&raw(kind::HEADERS, flag::PADDED | flag::PRIORITY, 1, b"\x00\0\0\0\0"));
    assert_eq!(e, conn(FrameRule::TooShort { kind: kind::HEADERS, len: 5, min: 6 }));
    let e = error(&raw(kind::HEADERS, flag::PRIORITY, 1, b"\0\0\0\0"));
    assert_eq!(e, conn(FrameRule::TooShort { kind: kind::HEADERS, len: 4, min: 5 }));
    let e = error(&raw(kind::HEADERS, flag::PADDED, 1, b"\x03ab"));
    assert_eq!(e, conn(FrameRule::Padding { kind: kind::HEADERS, len: 3, pad: 3 }));
    // PUSH_PROMISE: room for the promised stream id.
    let e = error(&raw(kind::PUSH_PROMISE, flag::PADDED, 1, b"\x01\0\0\0\x02"));
    assert_eq!(e, conn(FrameRule::Padding { kind: kind::PUSH_PROMISE, len: 5, pad: 1 }));
    let e = error(&raw(kind::PUSH_PROMISE, 0, 1, b"\0\0\x02"));
    assert_eq!(e, conn(FrameRule::TooShort { kind: kind::PUSH_PROMISE, len: 3, min: 4 }));
    assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
}

#[test]
fn a_window_update_of_zero_is_a_protocol_error() {
    let e = stream_error(&raw(kind::WINDOW_UPDATE, 0, 7, b"\0\0\0\0"));
    assert_eq!(e, FrameError::stream(FrameRule::ZeroIncrement { stream: 7 }, 7, 13));
    assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    // The reserved bit does not make it non-zero.
    let e = error(&raw(kind::WINDOW_UPDATE, 0, 0, b"\x80\0\0\0"));
    assert_eq!(e, conn(FrameRule::ZeroIncrement { stream: 0 }));
    assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    assert_eq!(e.stream, None);
}

#[test]
fn settings_values_out_of_range() {
    let settings = |id: SettingId, value: u32| {
        let mut out = Vec::new();
        encode::settings(&mut out, &[(SettingId::HEADER_TABLE_SIZE, 0), (id, value)]);
        out
    };
    check(&settings(SettingId::ENABLE_PUSH, 1), "SETTINGS HEADER_TABLE_SIZE=0 ENABLE_PUSH=1; idle");
    let e = error(&settings(SettingId::ENABLE_PUSH, 2));
    assert_eq!(e, conn(FrameRule::EnablePush { value: 2 }));
    assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    check(
        &settings(SettingId::INITIAL_WINDOW_SIZE, (1 << 31) - 1),
        "SETTINGS HEADER_TABLE_SIZE=0 INITIAL_WINDOW_SIZE=2147483647; idle",
    );
    let e = error(&settings(SettingId::INITIAL_WINDOW_SIZE, 1 << 31));
    assert_eq!(e, conn(FrameRule::InitialWindowSize { value: 1 << 31 }));
    assert_eq!(e.code, ErrorCode::FLOW_CONTROL_ERROR);
    for ok in [16_384, 16_777_215] {
        check(
            &settings(SettingId::MAX_FRAME_SIZE, ok),
            &format!("SETTINGS HEADER_TABLE_SIZE=0 MAX_FRAME_SIZE={ok}; idle"),
        );
    }
    for bad in [0, 16_383, 16_777_216] {
        let e = error(&settings(SettingId::MAX_FRAME_SIZE, bad));
        assert_eq!(e, conn(FrameRule::MaxFrameSize { value: bad }));
        assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    }
    assert_eq!(
        error(&settings(SettingId::INITIAL_WINDOW_SIZE, u32::MAX)).to_string(),
        "FLOW_CONTROL_ERROR: SETTINGS_INITIAL_WINDOW_SIZE of 4294967295; it must be at most 2147483647 (RFC 9113 §6.5.2)"
    );
}

#[test]
fn settings_are_read_in_order_and_the_last_value_wins() {
    let payload = [0, 4, 0, 0, 0, 1, 0, 9, 0, 0, 0, 2, 0, 4, 0, 0, 0, 3];
    let s = Settings::parse(&payload).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s.get(SettingId::INITIAL_WINDOW_SIZE), Some(3));
    assert_eq!(s.get(SettingId::MAX_FRAME_SIZE), None);
    assert_eq!(
        format!("{s:?}"),
        r#"{"INITIAL_WINDOW_SIZE": 1, "setting 0x9": 2, "INITIAL_WINDOW_SIZE": 3}"#
    );
}

#[test]
fn continuation_must_follow_an_unfinished_block_and_nothing_else_may() {
    // A block in three frames, then another frame.
    let mut input = raw(kind::HEADERS, flag::END_STREAM, 1, b"a");
    input.extend(raw(kind::CONTINUATION, 0, 1, b"b"));
    input.extend(raw(kind::CONTINUATION, flag::END_HEADERS, 1, b"c"));
    input.extend(raw(kind::PING, 0, 0, b"........"));
    check(&input, "HEADERS s1 es \"a\"; CONTINUATION s1 \"b\"; CONTINUATION s1 eh \"c\"; PING \"........\"; idle");
    // A CONTINUATION after the block ended.
    let mut more = input.clone();
    more.extend(raw(kind::CONTINUATION, flag::END_HEADERS, 1, b"d"));
    let e = error(&more);
    assert_eq!(e, conn(FrameRule::UnexpectedContinuation { stream: 1 }));
    assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    // Inside a block: another type, another stream, an unknown type, DATA.
    let open = raw(kind::PUSH_PROMISE, 0, 1, b"\0\0\0\x02a");
    for (next, k, got) in [
        (raw(kind::PING, 0, 0, b"........"), kind::PING, 0),
        (raw(kind::CONTINUATION, flag::END_HEADERS, 3, b""), kind::CONTINUATION, 3),
        (raw(0x42, 0, 1, b""), 0x42, 1),
        (raw(kind::DATA, 0, 1, b"x"), kind::DATA, 1),
    ] {
        let mut input = open.clone();
        input.extend(next);
        let e = error(&input);
        assert_eq!(e, conn(FrameRule::ContinuationExpected { stream: 1, kind: k, got }));
        assert_eq!(e.code, ErrorCode::PROTOCOL_ERROR);
    }
}

#[test]
fn a_connection_error_sticks() {
    let mut d = FrameDecoder::new(MAX);
    let bad = raw(kind::PING, 0, 1, b"12345678");
    let e = d.decode(&bad).unwrap_err();
    let mut good = Vec::new();
    encode::ping(&mut good, false, *b"12345678");
    assert_eq!(d.decode(&good), Err(e));
}

#[test]
fn messages_name_the_rule_and_the_section() {
    let cases = [
        (
            conn(FrameRule::TooLong { kind: 0x21, len: 20_000, max: 16_384 }),
            "FRAME_SIZE_ERROR: a frame of type 0x21 of 20000 bytes; longer than the 16384 this \
             endpoint accepts (SETTINGS_MAX_FRAME_SIZE, RFC 9113 §4.2)",
        ),
        (
            conn(FrameRule::NoStream { kind: kind::HEADERS }),
            "PROTOCOL_ERROR: a HEADERS frame on stream 0; it must be on a stream (RFC 9113 §6.2)",
        ),
        (
            conn(FrameRule::OnStream { kind: kind::GOAWAY, stream: 1 }),
            "PROTOCOL_ERROR: a GOAWAY frame on stream 1; it must be on stream 0 (RFC 9113 §6.8)",
        ),
        (
            conn(FrameRule::Padding { kind: kind::DATA, len: 4, pad: 4 }),
            "PROTOCOL_ERROR: a DATA frame of 4 bytes with 4 bytes of padding; the padding must fit \
             in the payload after the pad length and fixed fields (RFC 9113 §6.1)",
        ),
        (
            FrameError::stream(FrameRule::ZeroIncrement { stream: 3 }, 3, 13),
            "PROTOCOL_ERROR: a WINDOW_UPDATE frame with an increment of 0 on stream 3; the \
             increment must be 1 to 2147483647 (RFC 9113 §6.9)",
        ),
        (
            conn(FrameRule::ContinuationExpected { stream: 1, kind: kind::DATA, got: 1 }),
            "PROTOCOL_ERROR: a DATA frame on stream 1 inside stream 1's unfinished header block; \
             only CONTINUATION frames of stream 1 may come until END_HEADERS (RFC 9113 §6.10)",
        ),
        (
            conn(FrameRule::UnexpectedContinuation { stream: 5 }),
            "PROTOCOL_ERROR: a CONTINUATION frame on stream 5 that continues no unfinished \
             header block (RFC 9113 §6.10)",
        ),
        (
            conn(FrameRule::MaxFrameSize { value: 5 }),
            "PROTOCOL_ERROR: SETTINGS_MAX_FRAME_SIZE of 5; it must be 16384 to 16777215 (RFC 9113 §6.5.2)",
        ),
    ];
    for (e, expected) in cases {
        assert_eq!(e.to_string(), expected);
    }
}
