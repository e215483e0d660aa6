//! Request encoding: a request is built once into bytes that the engine writes as they are.

/// A request to encode. Header order is kept as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target: a path with query (`/index.html?x=1`), or an absolute URL for proxies.
    pub target: String,
    /// `HTTP/1.0` or `HTTP/1.1` as it appears on the request line.
    pub version: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The bytes to write: request line, headers in order, blank line, body.
    pub fn encode(&self) -> Vec<u8> {
        todo!()
    }
}
