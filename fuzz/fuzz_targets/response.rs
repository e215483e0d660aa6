//! Fuzz target: arbitrary bytes as a stream of HTTP/1.x responses on one connection, fed
//! whole, byte by byte and in data-derived splits (see `herd_proto::fuzzing`). It finds
//! panics and results that depend on how the input was split; it does not check results
//! against another HTTP implementation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    herd_proto::fuzzing::fuzz_response(data);
});
