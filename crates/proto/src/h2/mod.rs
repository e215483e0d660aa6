//! HTTP/2 on the client side, without I/O (RFC 9113, RFC 7541).
//!
//! - `frame`: the frame codec: an incremental decoder fed bytes in any split, and encoders
//!   for the frames a client sends.
//! - `hpack`: header compression: a decoder with the dynamic table and Huffman, and an
//!   encoder that makes a request's header block once per connection.
//! - [`ErrorCode`]: the codes of RFC 9113 §7 that both name their errors with.

mod error_code;
pub mod frame;
pub mod hpack;

pub use error_code::ErrorCode;
pub use frame::{
    encode, Frame, FrameDecoder, FrameError, FrameRule, SettingId, Settings,
    DEFAULT_MAX_FRAME_SIZE, FRAME_HEADER_LEN, PREFACE,
};
