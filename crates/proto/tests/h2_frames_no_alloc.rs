//! The HTTP/2 hot-path promise: in the steady state (a response's HEADERS and DATA, the
//! WINDOW_UPDATEs and PINGs between them, whole or split across reads) the frame decoder
//! allocates nothing, and neither do the encoders once the write buffer has grown. A
//! counting global allocator checks it; it counts only on the thread that asked, so the
//! test harness running beside it does not disturb the count. Nothing else is tested here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_testutil::alloc::allocations_in;

use herd_proto::h2::{encode, ErrorCode, Frame, FrameDecoder, SettingId, DEFAULT_MAX_FRAME_SIZE};

herd_testutil::counting_allocator!();

/// What a server sends for ten responses on streams 1, 3, ..., 19, with a PING and
/// WINDOW_UPDATEs between them.
fn server_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    encode::window_update(&mut out, 0, 1 << 20);
    for stream in (1..20).step_by(2) {
        encode::headers(&mut out, stream, b"\x88\x0f\x0d\x0213", false, DEFAULT_MAX_FRAME_SIZE);
        encode::data(&mut out, stream, b"hello world!\n", true);
        encode::window_update(&mut out, stream, 1000);
    }
    encode::ping(&mut out, false, *b"pingpong");
    out
}

/// Decodes `input` fed in reads of `read` bytes, as the engine does: append, decode from
/// the front until `Ok(None)`, drop what was used. Returns the DATA bytes and frames seen.
fn decode_all(
    d: &mut FrameDecoder,
    buf: &mut Vec<u8>,
    input: &[u8],
    read: usize,
) -> (usize, usize) {
    let (mut data, mut frames) = (0, 0);
    for piece in input.chunks(read) {
        buf.extend_from_slice(piece);
        let mut start = 0;
        while let Some((frame, used)) = d.decode(&buf[start..]).unwrap() {
            start += used;
            match frame {
                Frame::Data { data: bytes, .. } => data += bytes.len(),
                Frame::Ping { .. } | Frame::WindowUpdate { .. } | Frame::Headers { .. } => {
                    frames += 1
                }
                Frame::DataEnd { .. } => frames += 1,
                other => panic!("unexpected {other:?}"),
            }
        }
        buf.drain(..start);
    }
    (data, frames)
}

#[test]
fn steady_state_decoding_allocates_nothing() {
    let input = server_bytes();
    let mut d = FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE);
    let mut buf = Vec::with_capacity(input.len());
    for read in [input.len(), 7, 1] {
        // Warm up (nothing is expected to allocate even here, but that is not promised).
        assert_eq!(decode_all(&mut d, &mut buf, &input, read), (130, 32));
        let n = allocations_in(|| {
            for _ in 0..20 {
                assert_eq!(decode_all(&mut d, &mut buf, &input, read), (130, 32));
            }
        });
        assert_eq!(n, 0, "reads of {read} bytes");
    }
}

#[test]
fn encoding_into_a_grown_buffer_allocates_nothing() {
    let mut out = Vec::new();
    let run = |out: &mut Vec<u8>| {
        out.clear();
        encode::preface_and_settings(out, &[(SettingId::ENABLE_PUSH, 0)]);
        for stream in (1..200).step_by(2) {
            encode::headers(out, stream, b"\x82\x86\x84\xbe", true, DEFAULT_MAX_FRAME_SIZE);
            encode::window_update(out, 0, 1 << 16);
        }
        encode::ping(out, true, [0; 8]);
        encode::settings_ack(out);
        encode::rst_stream(out, 1, ErrorCode::CANCEL);
        encode::data_header(out, 3, 5, true);
    };
    run(&mut out);
    assert_eq!(allocations_in(|| run(&mut out)), 0);
}
