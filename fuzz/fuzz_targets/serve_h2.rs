//! Fuzz target: arbitrary bytes as a client's frames on an HTTP/2 connection to herd serve,
//! after the preface and SETTINGS, fed in pieces, the connection driven as a worker drives it
//! (see `herd_serve::fuzzing::fuzz_h2`). It finds panics; the integration tests check answers.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    herd_serve::fuzzing::fuzz_h2(data);
});
