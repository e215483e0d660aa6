//! Incremental HTTP/1.x response parsing: status line, headers, and body framing by
//! Content-Length, chunked transfer coding (with trailers) or connection close; the HEAD,
//! 1xx, 204 and 304 rules. Interim 1xx responses (other than 101) are skipped.

use thiserror::Error;

/// Bounds on what a server may make the parser hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest response head (status line + headers + blank line) accepted, in bytes.
    pub max_head_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_head_bytes: 64 * 1024 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

/// How the end of the body is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body at all (HEAD request, 1xx, 204, 304).
    Empty,
    /// Exactly this many body bytes follow the head.
    Length(u64),
    /// Chunked transfer coding; ends at the last chunk and its trailers.
    Chunked,
    /// The body runs until the server closes the connection.
    UntilClose,
}

/// The parts of a final (non-1xx) response head that the engine and reports use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub version: Version,
    pub status: u16,
    pub framing: Framing,
    /// The server allows this connection to carry another request, by HTTP rules:
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    /// Always false with [`Framing::UntilClose`].
    pub reusable: bool,
    /// ab's rule: the text "Keep-Alive" (any case) appears anywhere in the head.
    pub keep_alive_token: bool,
    /// Bytes of this head, plus those of any interim 1xx heads before it.
    pub head_bytes: usize,
}

/// What one call to [`ResponseParser::feed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feed {
    /// Bytes of the input that belong to this response. When `complete` is true, any
    /// remaining input is not part of it (a pipelined response or stray bytes).
    pub consumed: usize,
    /// The response is complete.
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtoError {
    #[error("invalid status line")]
    InvalidStatusLine,
    #[error("invalid header")]
    InvalidHeader,
    #[error("response head larger than {limit} bytes")]
    HeadTooLarge { limit: usize },
    #[error("invalid Content-Length")]
    InvalidContentLength,
    #[error("invalid chunk")]
    InvalidChunk,
    #[error("connection closed before the response was complete")]
    Truncated,
}

/// An incremental response parser; one per connection, reused for every response on it.
#[derive(Debug)]
pub struct ResponseParser {
    _todo: (),
}

impl ResponseParser {
    pub fn new(limits: Limits) -> Self {
        let _ = limits;
        todo!("implemented in herd-proto")
    }

    /// Prepares for the next response. `head_request`: the request was HEAD, so the
    /// response has no body whatever its headers say.
    pub fn reset(&mut self, head_request: bool) {
        let _ = head_request;
        todo!()
    }

    /// Asks the parser to keep the value of the next head's `Server` header (ab reports the
    /// first response's). Off by default, so the hot path copies nothing.
    pub fn capture_server(&mut self, on: bool) {
        let _ = on;
        todo!()
    }

    /// The captured `Server` value: ab's rule, the bytes after `Server:` and its white
    /// space up to the first byte <= 0x20. `None` if not captured or absent.
    pub fn server(&self) -> Option<&[u8]> {
        todo!()
    }

    /// Consumes bytes of the response. Call again with more bytes while `complete` is false.
    pub fn feed(&mut self, input: &[u8]) -> Result<Feed, ProtoError> {
        let _ = input;
        todo!()
    }

    /// The connection reached end of stream. `Ok(true)` when that completes the response
    /// (a close-delimited body); `Err(Truncated)` if the response was cut short;
    /// `Ok(false)` if no byte of a response had arrived (an idle keep-alive connection
    /// closed by the server).
    pub fn finish(&mut self) -> Result<bool, ProtoError> {
        todo!()
    }

    /// The final head, once parsed.
    pub fn head(&self) -> Option<&Head> {
        todo!()
    }

    /// Decoded body bytes so far (chunk framing and trailers excluded).
    pub fn body_bytes(&self) -> u64 {
        todo!()
    }

    /// True once any byte of the current response has been fed.
    pub fn started(&self) -> bool {
        todo!()
    }
}
