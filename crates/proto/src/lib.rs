//! HTTP on the client side, without I/O: HTTP/1.x at the crate's root (encode requests, parse
//! responses incrementally), HTTP/2 in [`h2`] (the frame codec and HPACK), HTTP/3 in [`h3`]
//! (frames, the response reader, QPACK with the static table; QUIC itself is the engine's).
//!
//! Brief overview of HTTP/1.x:
//! - [`ResponseParser`] consumes response bytes as they arrive, in pieces of any size, and
//!   says when a response is complete. It keeps only a small head buffer (bounded by
//!   [`Limits::max_head_bytes`]); body bytes are counted, never stored.
//! - [`Head`] is what the engine needs from a response head: status, framing, and whether
//!   the connection may be reused (by HTTP's rules).
//! - [`Request`] encodes a request once, up front, into the bytes the engine writes.
//!
//! Server bytes never cause a panic: every malformation is a [`ProtoError`], and
//! "not enough bytes yet" is ordinary control flow (`Feed { complete: false, .. }`).

mod chunked;
// Public only for the fuzz target and the integration tests; the engine has no use for it.
#[doc(hidden)]
pub mod fuzzing;
pub mod h2;
pub mod h3;
mod request;
mod response;

pub use request::Request;
pub use response::{Feed, Framing, Head, Limits, ProtoError, ResponseParser, Version};
