//! Fuzz target: arbitrary bytes as a client's stream of requests to herd serve: heads found
//! with the server's limits, parsed, their targets, queries, conditional and range headers run
//! through their parsers, and their bodies (by length or chunked) decoded and re-chunked (see
//! `herd_serve::fuzzing`). It finds panics; the unit tests beside each parser check results.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    herd_serve::fuzzing::fuzz_request(data);
});
