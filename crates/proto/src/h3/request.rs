//! A request as the bytes of its HTTP/3 stream (RFC 9114 §4.1, §4.3.1): one HEADERS frame
//! (QPACK, static table only), then a DATA frame when it has a body. Built once per run
//! from the same [`Request`] HTTP/1 writes; the engine copies the bytes for every request
//! and finishes the stream after them.
//!
//! HTTP/1's request line and `Host` become pseudo-headers; header names are lowercased; the
//! headers that describe an HTTP/1 connection (`Connection`, `Keep-Alive`,
//! `Proxy-Connection`, `Upgrade`, and `TE` other than `trailers`) are left out, since
//! HTTP/3 has no such connection and forbids them (RFC 9114 §4.2). `Transfer-Encoding` is
//! refused rather than dropped: the body would no longer mean what it says.

use thiserror::Error;

use super::frame::{self, kind};
use super::qpack::encode_field_section;
use crate::Request;

/// A request HTTP/3 cannot carry as given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RequestError {
    #[error(
        "HTTP/3 sends a path (starting with '/') or '*', not the request target {0:?}; \
         give the URL's path"
    )]
    Target(String),
    #[error(
        "HTTP/3 has no Transfer-Encoding (DATA frames carry the body); \
         drop the header and send the body as it is"
    )]
    TransferEncoding,
}

/// Appends the stream bytes of `request`: HEADERS (and DATA). `scheme` is `https` for
/// HTTP/3; `authority` is the target's `host[:port]`, used unless the request has a `Host`
/// header.
pub fn encode_request(
    request: &Request,
    scheme: &str,
    authority: &str,
    out: &mut Vec<u8>,
) -> Result<(), RequestError> {
    let path = request.target.as_str();
    if !(path.starts_with('/') || (path == "*" && request.method == "OPTIONS")) {
        return Err(RequestError::Target(path.to_string()));
    }
    let host = request
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("host"))
        .map_or(authority, |(_, value)| value.as_str());
    let mut lowered = Vec::with_capacity(request.headers.len());
    for (name, value) in &request.headers {
        let name = name.to_ascii_lowercase();
        match name.as_str() {
            "transfer-encoding" => return Err(RequestError::TransferEncoding),
            "host" | "connection" | "keep-alive" | "proxy-connection" | "upgrade" => continue,
            "te" if !value.eq_ignore_ascii_case("trailers") => continue,
            _ => lowered.push((name, value.as_bytes())),
        }
    }
    let pseudo: [(&[u8], &[u8]); 4] = [
        (b":method", request.method.as_bytes()),
        (b":scheme", scheme.as_bytes()),
        (b":authority", host.as_bytes()),
        (b":path", path.as_bytes()),
    ];
    let mut block = Vec::new();
    encode_field_section(
        pseudo.into_iter().chain(lowered.iter().map(|(n, v)| (n.as_bytes(), *v))),
        &mut block,
    );
    frame::encode(kind::HEADERS, &block, out);
    if !request.body.is_empty() {
        frame::encode(kind::DATA, &request.body, out);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h3::{Frame, FrameDecoder, Limits, StreamKind};

    fn request(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Request {
        Request {
            method: method.to_string(),
            target: target.to_string(),
            version: "HTTP/1.1",
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
            body: body.to_vec(),
        }
    }

    /// The frames of `bytes` as the server would read them, HEADERS decoded to fields.
    fn read_back(bytes: &[u8]) -> (Vec<(String, String)>, Vec<u8>) {
        let mut frames = FrameDecoder::new(StreamKind::Request, Limits::default());
        let mut fields = Vec::new();
        let mut body = Vec::new();
        let mut input = bytes;
        while !input.is_empty() {
            let d = frames.decode(input).unwrap();
            input = &input[d.consumed..];
            match d.frame {
                Some(Frame::Headers(block)) => {
                    let mut qpack = crate::h3::qpack::Decoder::new(4096);
                    qpack
                        .decode_lines(block, |n, v| {
                            let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                            fields.push((text(n), text(v)));
                            Ok(())
                        })
                        .unwrap();
                }
                Some(Frame::Data(piece)) => body.extend_from_slice(piece),
                other => panic!("{other:?}"),
            }
        }
        frames.finish().unwrap();
        (fields, body)
    }

    #[test]
    fn a_get_is_four_pseudo_headers_then_its_fields() {
        let r = request(
            "GET",
            "/index.html?x=1",
            &[("Host", "example.com:8443"), ("User-Agent", "herd"), ("Accept", "*/*")],
            b"",
        );
        let mut out = Vec::new();
        encode_request(&r, "https", "127.0.0.1:4433", &mut out).unwrap();
        // The static table: :method GET (17), :scheme https (23), accept */* (29); names
        // :authority (0), :path (1), user-agent (95).
        assert_eq!(&out[..5], [0x01, out[1], 0x00, 0x00, 0xd1]);
        let (fields, body) = read_back(&out);
        let want = [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "example.com:8443"),
            (":path", "/index.html?x=1"),
            ("user-agent", "herd"),
            ("accept", "*/*"),
        ];
        let want: Vec<_> = want.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        assert_eq!(fields, want);
        assert!(body.is_empty());
    }

    #[test]
    fn connection_headers_are_left_out_and_the_body_is_a_data_frame() {
        let r = request(
            "POST",
            "/echo",
            &[
                ("Connection", "close"),
                ("Keep-Alive", "5"),
                ("TE", "gzip"),
                ("te", "trailers"),
                ("Content-Length", "5"),
                ("X-Herd", "A"),
            ],
            b"hello",
        );
        let mut out = Vec::new();
        encode_request(&r, "https", "h:1", &mut out).unwrap();
        let (fields, body) = read_back(&out);
        let names: Vec<_> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [":method", ":scheme", ":authority", ":path", "te", "content-length", "x-herd"]
        );
        assert_eq!(fields[2].1, "h:1");
        assert_eq!(fields[6].1, "A", "values are kept as given");
        assert_eq!(body, b"hello");
    }

    #[test]
    fn what_http3_cannot_carry_is_refused() {
        let mut out = Vec::new();
        let proxy = request("GET", "http://example.com/", &[], b"");
        assert_eq!(
            encode_request(&proxy, "https", "h", &mut out),
            Err(RequestError::Target("http://example.com/".into()))
        );
        let chunked = request("POST", "/", &[("Transfer-Encoding", "chunked")], b"0\r\n\r\n");
        assert_eq!(
            encode_request(&chunked, "https", "h", &mut out),
            Err(RequestError::TransferEncoding)
        );
        assert!(out.is_empty(), "nothing written on a refusal");
        encode_request(&request("OPTIONS", "*", &[], b""), "https", "h", &mut out).unwrap();
        assert!(encode_request(&request("GET", "*", &[], b""), "https", "h", &mut out).is_err());
    }
}
