//! Fuzz target: arbitrary bytes as the HPACK header blocks of one connection, decoded by two
//! decoders in step (fields and response checks), each valid block also cut short and
//! re-encoded (see `herd_proto::h2::hpack::fuzzing`). It finds panics, unbounded fields past
//! the list limit, and disagreements between the decoder's paths and the encoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    herd_proto::h2::hpack::fuzzing::fuzz_decode(data);
});
