//! Request encoding: a request is built once into bytes that the engine writes as they are.
//!
//! Encoding adds nothing and checks nothing: no `Host`, `Content-Length` or other header is
//! invented, and names and values are written as given (the caller builds valid ones).

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
        let headers: usize = self.headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
        let len = self.method.len()
            + self.target.len()
            + self.version.len()
            + 4
            + headers
            + 2
            + self.body.len();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.target.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.version.as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, headers: &[(&str, &str)], body: &[u8]) -> Request {
        Request {
            method: method.to_owned(),
            target: "/index.html?x=1".to_owned(),
            version: "HTTP/1.1",
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: body.to_vec(),
        }
    }

    #[test]
    fn get_without_headers() {
        let bytes = request("GET", &[], b"").encode();
        assert_eq!(bytes, b"GET /index.html?x=1 HTTP/1.1\r\n\r\n");
    }

    #[test]
    fn headers_in_order_then_body() {
        let r = request(
            "POST",
            &[("Host", "example.com"), ("Content-Length", "5"), ("Accept", "*/*")],
            b"hello",
        );
        let want: &[u8] = b"POST /index.html?x=1 HTTP/1.1\r\nHost: example.com\r\n\
            Content-Length: 5\r\nAccept: */*\r\n\r\nhello";
        assert_eq!(r.encode(), want);
    }

    #[test]
    fn http10_absolute_target() {
        let mut r = request("HEAD", &[("User-Agent", "herd")], b"");
        r.target = "http://example.com/".to_owned();
        r.version = "HTTP/1.0";
        assert_eq!(r.encode(), b"HEAD http://example.com/ HTTP/1.0\r\nUser-Agent: herd\r\n\r\n");
    }
}
