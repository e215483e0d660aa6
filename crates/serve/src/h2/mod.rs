//! HTTP/2 in herd serve (RFC 9113), over TCP with prior knowledge (h2c: the connection's first
//! bytes are the preface) and over TLS (ALPN `h2`). An HTTP/1 connection (conn.rs) becomes an
//! [`H2Conn`] when it sees the preface or ALPN says `h2`; the same router and handlers answer,
//! through a [`Responder`](crate::response::Responder) that collects the head's fields in a
//! [`FieldList`]. Frames and HPACK come from herd-proto (`herd_proto::h2`).
//!
//! - `conn`: the connection's drive loop: write, read frames, answer, send DATA; its end
//!   (GOAWAY, a graceful drain, the lingering close).
//! - `frames`: what each frame from the client does, and the connection errors.
//! - `respond`: a complete request head → the router → the response's HEADERS; held
//!   responses.
//! - `send`: DATA within the client's flow-control windows, round-robin over the streams;
//!   WINDOW_UPDATEs for what the client sent.
//! - `stream`: one stream's two sides, and the connection's set of them.
//! - `closed`: how the last streams closed, for the frames that still come on them.
//! - `request`: decoded request fields → the router's `RequestHead`, malformed requests.
//! - `encoder`: response header blocks (HPACK), the last one kept while it stays valid.
//! - `fields`: a header field list in one reused buffer.
//!
//! Bounds, against clients that do not play fair: at most [`MAX_CONCURRENT_STREAMS`] streams
//! (more are refused), a header block of at most `max_head_bytes` in at most
//! [`MAX_CONTINUATIONS`] frames, a decoded header list of at most `max_head_bytes` (else 431),
//! at most 64 KiB of output before reading stops (a client that sends PINGs or requests
//! without reading cannot make the server buffer more), request DATA within the windows
//! announced, and client resets limited as nghttp2 limits them ([`RESET_BURST`],
//! [`RESETS_PER_SECOND`]). Each broken rule ends the connection with GOAWAY and the code of
//! RFC 9113, or the stream with RST_STREAM; nothing panics.

mod closed;
mod conn;
mod encoder;
mod fields;
mod frames;
mod request;
mod respond;
mod send;
mod stream;
#[cfg(test)]
mod tests;

pub(crate) use conn::H2Conn;
pub(crate) use fields::FieldList;

/// Streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS): nginx's and
/// h2o's 128.
pub(crate) const MAX_CONCURRENT_STREAMS: u32 = 128;

/// The window each stream's request body starts with (SETTINGS_INITIAL_WINDOW_SIZE), 1 MiB:
/// an upload is not held back by round trips, and an echoed body buffers at most this much
/// per stream before the client must wait for its echo to be read.
pub(crate) const INITIAL_WINDOW_SIZE: u32 = 1 << 20;

/// The connection's receive window, raised from RFC 9113's 65,535 with a WINDOW_UPDATE at
/// once: what all streams together may send ahead, and so the most an echo buffers.
pub(crate) const CONNECTION_WINDOW: u32 = 4 << 20;

/// CONTINUATION frames one header block may take; a legitimate block of 64 KiB needs four.
pub(crate) const MAX_CONTINUATIONS: u32 = 64;

/// RST_STREAMs a client may send in a burst, and how many more a second it earns back
/// (nghttp2's defaults against "rapid reset", CVE-2023-44487): past them, GOAWAY
/// ENHANCE_YOUR_CALM.
pub(crate) const RESET_BURST: f64 = 1000.0;
pub(crate) const RESETS_PER_SECOND: f64 = 33.0;
