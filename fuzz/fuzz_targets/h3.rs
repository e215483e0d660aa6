//! Fuzz target: arbitrary bytes as one HTTP/3 stream, read as a response stream (to a GET
//! and to a HEAD, with the default and with small limits) and as a server's
//! unidirectional stream, whole, byte by byte and in data-derived splits (see
//! `herd_proto::h3::fuzzing`). It finds panics and results that depend on the split.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    herd_proto::h3::fuzzing::fuzz_h3(data);
});
