//! HTTP/3 on the client side, without I/O (RFC 9114, RFC 9204): what goes on QUIC streams,
//! not QUIC itself (the engine's QUIC driver moves these bytes).
//!
//! - [`varint`]: QUIC's variable-length integers, the integer of every frame header.
//! - [`frame`]: frame types and the encoders for the frames a client sends;
//!   [`FrameDecoder`] reads any stream's frames incrementally, in pieces of any size.
//! - [`ResponseReader`]: one request stream's response: HEADERS (interim ones skipped),
//!   DATA counted and handed out, trailers; checked by HTTP's rules when the stream ends.
//! - [`ServerStreams`]: the server's unidirectional streams (control read, QPACK drained,
//!   push refused, unknown ignored); [`client_control_stream`] is herd's own.
//! - [`qpack`]: field sections with the static table only (herd advertises a dynamic
//!   table of capacity 0); [`encode_request`] makes a request's stream bytes once.
//! - [`H3Error`]: every way a server's bytes can be wrong, each with its RFC error code.
//!
//! Server bytes never cause a panic, and nothing allocates per response once the buffers
//! kept between responses have grown.

mod control;
mod error;
pub mod frame;
mod frame_decoder;
// Public only for the fuzz target and the tests; the engine has no use for it.
#[doc(hidden)]
pub mod fuzzing;
pub mod qpack;
mod request;
mod response;
mod uni;
pub mod varint;

pub use control::client_control_stream;
pub use error::{code, H3Error, MessageError, QpackError, StreamKind};
pub use frame_decoder::{Decoded, Frame, FrameDecoder, Limits, Settings};
pub use request::{encode_request, RequestError};
pub use response::{Part, Response, ResponseReader};
pub use uni::{stream_type, ServerStreams, UniKind};
