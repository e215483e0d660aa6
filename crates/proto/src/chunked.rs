//! Chunked transfer decoding as a byte-at-a-time-safe state machine (implemented in herd-proto).
