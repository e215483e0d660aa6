//! Response heads and the built-in error pages: the status table, a writer that appends header
//! lines straight into the connection's output buffer (no allocation per response), how
//! persistence is announced, and the [`Responder`] handlers answer through. Does not choose
//! statuses or bodies (router.rs and the handlers do) and does not touch sockets
//! (write_queue.rs).

use std::fmt;
use std::io::Write as _;

use crate::date::DateCache;
use crate::write_queue::WriteQueue;

/// The statuses this server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    PartialContent,
    NotModified,
    BadRequest,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    UriTooLong,
    RangeNotSatisfiable,
    HeaderFieldsTooLarge,
    InternalServerError,
    NotImplemented,
    ServiceUnavailable,
}

impl Status {
    pub(crate) fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::PartialContent => 206,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::Forbidden => 403,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::UriTooLong => 414,
            Status::RangeNotSatisfiable => 416,
            Status::HeaderFieldsTooLarge => 431,
            Status::InternalServerError => 500,
            Status::NotImplemented => 501,
            Status::ServiceUnavailable => 503,
        }
    }

    /// The status line, with its CRLF. Always `HTTP/1.1`, also to HTTP/1.0 clients: a server
    /// announces the highest version it supports (RFC 9110 §6.2), as nginx and Apache do.
    fn line(self) -> &'static [u8] {
        match self {
            Status::Ok => b"HTTP/1.1 200 OK\r\n",
            Status::PartialContent => b"HTTP/1.1 206 Partial Content\r\n",
            Status::NotModified => b"HTTP/1.1 304 Not Modified\r\n",
            Status::BadRequest => b"HTTP/1.1 400 Bad Request\r\n",
            Status::Forbidden => b"HTTP/1.1 403 Forbidden\r\n",
            Status::NotFound => b"HTTP/1.1 404 Not Found\r\n",
            Status::MethodNotAllowed => b"HTTP/1.1 405 Method Not Allowed\r\n",
            Status::UriTooLong => b"HTTP/1.1 414 URI Too Long\r\n",
            Status::RangeNotSatisfiable => b"HTTP/1.1 416 Range Not Satisfiable\r\n",
            Status::HeaderFieldsTooLarge => b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            Status::InternalServerError => b"HTTP/1.1 500 Internal Server Error\r\n",
            Status::NotImplemented => b"HTTP/1.1 501 Not Implemented\r\n",
            Status::ServiceUnavailable => b"HTTP/1.1 503 Service Unavailable\r\n",
        }
    }

    /// A small HTML page naming the status, the body of every error response.
    fn page(self) -> &'static [u8] {
        macro_rules! page {
            ($title:literal) => {
                concat!(
                    "<html><head><title>",
                    $title,
                    "</title></head><body><h1>",
                    $title,
                    "</h1><hr>herd</body></html>\n"
                )
                .as_bytes()
            };
        }
        match self {
            Status::Ok => page!("200 OK"),
            Status::PartialContent => page!("206 Partial Content"),
            Status::NotModified => page!("304 Not Modified"),
            Status::BadRequest => page!("400 Bad Request"),
            Status::Forbidden => page!("403 Forbidden"),
            Status::NotFound => page!("404 Not Found"),
            Status::MethodNotAllowed => page!("405 Method Not Allowed"),
            Status::UriTooLong => page!("414 URI Too Long"),
            Status::RangeNotSatisfiable => page!("416 Range Not Satisfiable"),
            Status::HeaderFieldsTooLarge => page!("431 Request Header Fields Too Large"),
            Status::InternalServerError => page!("500 Internal Server Error"),
            Status::NotImplemented => page!("501 Not Implemented"),
            Status::ServiceUnavailable => page!("503 Service Unavailable"),
        }
    }
}

/// What the response says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Persist {
    /// HTTP/1.1 default: stays open, nothing to announce.
    KeepAlive,
    /// HTTP/1.0 client that asked for keep-alive: it must be echoed, or the client closes.
    /// (ApacheBench `-k` looks for "Keep-Alive"/"keep-alive" in the response head.)
    KeepAliveEcho,
    /// The server closes after this response: `Connection: close`.
    Close,
}

/// What was answered, for the counters and the access log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) status: Status,
    /// Body bytes the response carries (0 for HEAD and 304).
    pub(crate) body_bytes: u64,
}

/// `Server: herd/<version>`, the same in every response.
const SERVER: &[u8] = concat!("Server: herd/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes();

/// Appends one response head to an output buffer.
pub(crate) struct Head<'a> {
    buf: &'a mut Vec<u8>,
    persist: Persist,
}

impl Head<'_> {
    pub(crate) fn header(&mut self, name: &str, value: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b": ");
        self.buf.extend_from_slice(value);
        self.buf.extend_from_slice(b"\r\n");
        self
    }

    pub(crate) fn header_u64(&mut self, name: &str, value: u64) -> &mut Self {
        self.header_fmt(name, format_args!("{value}"))
    }

    pub(crate) fn header_fmt(&mut self, name: &str, value: fmt::Arguments<'_>) -> &mut Self {
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b": ");
        // Writing into a Vec cannot fail.
        let _ = self.buf.write_fmt(value);
        self.buf.extend_from_slice(b"\r\n");
        self
    }

    /// Adds the Connection header the persistence needs and the blank line.
    pub(crate) fn finish(self) {
        match self.persist {
            Persist::KeepAlive => {}
            Persist::KeepAliveEcho => self.buf.extend_from_slice(b"Connection: keep-alive\r\n"),
            Persist::Close => self.buf.extend_from_slice(b"Connection: close\r\n"),
        }
        self.buf.extend_from_slice(b"\r\n");
    }
}

/// Everything a handler needs to answer one request.
pub(crate) struct Responder<'a> {
    pub(crate) wq: &'a mut WriteQueue,
    pub(crate) date: &'a DateCache,
    pub(crate) persist: Persist,
    /// HEAD: send the head a GET would get, without the body.
    pub(crate) head_only: bool,
}

impl Responder<'_> {
    /// Starts a head: status line, Server and Date. Add headers, then [`Head::finish`].
    pub(crate) fn head(&mut self, status: Status) -> Head<'_> {
        let buf = self.wq.buf_mut();
        buf.extend_from_slice(status.line());
        buf.extend_from_slice(SERVER);
        buf.extend_from_slice(b"Date: ");
        buf.extend_from_slice(self.date.http());
        buf.extend_from_slice(b"\r\n");
        Head { buf, persist: self.persist }
    }

    /// Answers with a body computed for this request, which caches must not keep.
    pub(crate) fn body(&mut self, status: Status, content_type: &[u8], body: &[u8]) -> Reply {
        self.head(status)
            .header("Content-Type", content_type)
            .header_u64("Content-Length", body.len() as u64)
            .header("Cache-Control", b"no-store");
        self.finish_with(status, body)
    }

    /// Answers with the status's error page and any `extra` headers (Allow, Content-Range).
    pub(crate) fn error(&mut self, status: Status, extra: &[(&str, &[u8])]) -> Reply {
        let page = status.page();
        let mut head = self.head(status);
        head.header("Content-Type", b"text/html").header_u64("Content-Length", page.len() as u64);
        for (name, value) in extra {
            head.header(name, value);
        }
        self.finish_with(status, page)
    }

    /// Finishes the head started last and appends `body` unless this is a HEAD request.
    fn finish_with(&mut self, status: Status, body: &[u8]) -> Reply {
        let persist = self.persist;
        Head { buf: self.wq.buf_mut(), persist }.finish();
        if self.head_only {
            return Reply { status, body_bytes: 0 };
        }
        self.wq.buf_mut().extend_from_slice(body);
        Reply { status, body_bytes: body.len() as u64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn render(persist: Persist, head_only: bool, status: Status) -> String {
        let mut wq = WriteQueue::new();
        let date = DateCache::new(UNIX_EPOCH + Duration::from_secs(784_111_777));
        let mut r = Responder { wq: &mut wq, date: &date, persist, head_only };
        r.error(status, &[("Allow", b"GET, HEAD")]);
        String::from_utf8(wq.buf_mut().clone()).unwrap()
    }

    #[test]
    fn error_page_head_and_body() {
        let page = "<html><head><title>405 Method Not Allowed</title></head><body>\
                    <h1>405 Method Not Allowed</h1><hr>herd</body></html>\n";
        let expect = format!(
            "HTTP/1.1 405 Method Not Allowed\r\nServer: herd/{}\r\n\
             Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/html\r\n\
             Content-Length: {}\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n{page}",
            env!("CARGO_PKG_VERSION"),
            page.len()
        );
        assert_eq!(render(Persist::Close, false, Status::MethodNotAllowed), expect);
    }

    #[test]
    fn persistence_headers() {
        assert!(!render(Persist::KeepAlive, true, Status::NotFound).contains("Connection"));
        assert!(render(Persist::KeepAliveEcho, true, Status::NotFound)
            .contains("\r\nConnection: keep-alive\r\n"));
    }

    #[test]
    fn head_only_has_length_but_no_body() {
        let s = render(Persist::KeepAlive, true, Status::NotFound);
        assert!(s.ends_with("\r\n\r\n"), "{s}");
        let length = format!("Content-Length: {}\r\n", Status::NotFound.page().len());
        assert!(s.contains(&length), "{s}");
    }
}
