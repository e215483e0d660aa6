//! Fuzz target: arbitrary bytes as what an HTTP/2 peer sent on one connection (after the
//! preface), through `herd_proto::h2::FrameDecoder` whole, byte by byte and in data-derived
//! splits, with the default and a 64-byte frame size limit (see
//! `herd_proto::h2::frame::fuzzing`). It finds panics, results that depend on how the input
//! was split, and broken promises of the decoder's API; it does not check results against
//! another HTTP/2 implementation (`crates/proto/tests/h2_frames_nghttp2.rs` does).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    herd_proto::h2::frame::fuzzing::fuzz_frames(data);
});
