//! Helpers shared by integration tests and examples.

pub(crate) mod nghttp2;
