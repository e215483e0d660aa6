//! Response heads and the built-in error pages: the status table, a writer that appends header
//! lines straight into the connection's output buffer (no allocation per response), how
//! persistence is announced, and the [`Responder`] handlers answer through. Does not choose
//! statuses or bodies (router.rs and the handlers do) and does not touch sockets
//! (write_queue.rs).
//!
//! The same handlers answer HTTP/2: a [`Responder`] made with [`Responder::h2`] collects the
//! head's fields in a [`FieldList`] (HPACK-encoded when the HTTP/2 connection sends them)
//! instead of writing header lines, and the body lands in the write queue as for HTTP/1.

use std::fmt;
use std::io::Write as _;
use std::time::Duration;

use crate::date::DateCache;
use crate::h2::FieldList;
use crate::request_body::Sink;
use crate::write_queue::WriteQueue;

/// The statuses this server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    PartialContent,
    MovedPermanently,
    NotModified,
    BadRequest,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    PreconditionFailed,
    UriTooLong,
    RangeNotSatisfiable,
    HeaderFieldsTooLarge,
    InternalServerError,
    NotImplemented,
    ServiceUnavailable,
    /// Any other code from 200 to 599, as `/status/N` asks.
    Other(u16),
}

impl Status {
    pub(crate) fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::PartialContent => 206,
            Status::MovedPermanently => 301,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::Forbidden => 403,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::PreconditionFailed => 412,
            Status::UriTooLong => 414,
            Status::RangeNotSatisfiable => 416,
            Status::HeaderFieldsTooLarge => 431,
            Status::InternalServerError => 500,
            Status::NotImplemented => 501,
            Status::ServiceUnavailable => 503,
            Status::Other(code) => code,
        }
    }

    /// The status for `code`, a named one where there is one.
    pub(crate) fn from_code(code: u16) -> Status {
        [
            Status::Ok,
            Status::PartialContent,
            Status::MovedPermanently,
            Status::NotModified,
            Status::BadRequest,
            Status::Forbidden,
            Status::NotFound,
            Status::MethodNotAllowed,
            Status::PreconditionFailed,
            Status::UriTooLong,
            Status::RangeNotSatisfiable,
            Status::HeaderFieldsTooLarge,
            Status::InternalServerError,
            Status::NotImplemented,
            Status::ServiceUnavailable,
        ]
        .into_iter()
        .find(|s| s.code() == code)
        .unwrap_or(Status::Other(code))
    }

    /// Appends the status line.
    fn write_line(self, buf: &mut Vec<u8>) {
        match self.line() {
            Some(line) => buf.extend_from_slice(line),
            None => {
                let code = self.code();
                // Writing into a Vec cannot fail.
                let _ = write!(buf, "HTTP/1.1 {code} {}\r\n", reason_phrase(code));
            }
        }
    }

    /// The status line, with its CRLF. Always `HTTP/1.1`, also to HTTP/1.0 clients: a server
    /// announces the highest version it supports (RFC 9110 §6.2), as nginx and Apache do.
    fn line(self) -> Option<&'static [u8]> {
        Some(match self {
            Status::Ok => b"HTTP/1.1 200 OK\r\n",
            Status::PartialContent => b"HTTP/1.1 206 Partial Content\r\n",
            Status::MovedPermanently => b"HTTP/1.1 301 Moved Permanently\r\n",
            Status::NotModified => b"HTTP/1.1 304 Not Modified\r\n",
            Status::BadRequest => b"HTTP/1.1 400 Bad Request\r\n",
            Status::Forbidden => b"HTTP/1.1 403 Forbidden\r\n",
            Status::NotFound => b"HTTP/1.1 404 Not Found\r\n",
            Status::MethodNotAllowed => b"HTTP/1.1 405 Method Not Allowed\r\n",
            Status::PreconditionFailed => b"HTTP/1.1 412 Precondition Failed\r\n",
            Status::UriTooLong => b"HTTP/1.1 414 URI Too Long\r\n",
            Status::RangeNotSatisfiable => b"HTTP/1.1 416 Range Not Satisfiable\r\n",
            Status::HeaderFieldsTooLarge => b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            Status::InternalServerError => b"HTTP/1.1 500 Internal Server Error\r\n",
            Status::NotImplemented => b"HTTP/1.1 501 Not Implemented\r\n",
            Status::ServiceUnavailable => b"HTTP/1.1 503 Service Unavailable\r\n",
            Status::Other(_) => return None,
        })
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
            Status::MovedPermanently => page!("301 Moved Permanently"),
            Status::NotModified => page!("304 Not Modified"),
            Status::BadRequest => page!("400 Bad Request"),
            Status::Forbidden => page!("403 Forbidden"),
            Status::NotFound => page!("404 Not Found"),
            Status::MethodNotAllowed => page!("405 Method Not Allowed"),
            Status::PreconditionFailed => page!("412 Precondition Failed"),
            Status::UriTooLong => page!("414 URI Too Long"),
            Status::RangeNotSatisfiable => page!("416 Range Not Satisfiable"),
            Status::HeaderFieldsTooLarge => page!("431 Request Header Fields Too Large"),
            Status::InternalServerError => page!("500 Internal Server Error"),
            Status::NotImplemented => page!("501 Not Implemented"),
            Status::ServiceUnavailable => page!("503 Service Unavailable"),
            Status::Other(_) => page!("herd"),
        }
    }
}

/// The reason phrase of RFC 9110 §15 for `code`; empty for codes it does not define, which
/// the status-line grammar allows.
fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        426 => "Upgrade Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "",
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

/// The Server field's value, for HTTP/2.
const SERVER_VALUE: &[u8] = concat!("herd/", env!("CARGO_PKG_VERSION")).as_bytes();

/// Appends one response head to an output buffer, or to an HTTP/2 field list.
pub(crate) struct Head<'a> {
    out: HeadOut<'a>,
    persist: Persist,
}

enum HeadOut<'a> {
    Http1(&'a mut Vec<u8>),
    Http2(&'a mut FieldList),
}

impl Head<'_> {
    pub(crate) fn header(&mut self, name: &str, value: &[u8]) -> &mut Self {
        match &mut self.out {
            HeadOut::Http1(buf) => {
                buf.extend_from_slice(name.as_bytes());
                buf.extend_from_slice(b": ");
                buf.extend_from_slice(value);
                buf.extend_from_slice(b"\r\n");
            }
            HeadOut::Http2(fields) => fields.push(name, value),
        }
        self
    }

    pub(crate) fn header_u64(&mut self, name: &str, value: u64) -> &mut Self {
        self.header_fmt(name, format_args!("{value}"))
    }

    pub(crate) fn header_fmt(&mut self, name: &str, value: fmt::Arguments<'_>) -> &mut Self {
        match &mut self.out {
            HeadOut::Http1(buf) => {
                buf.extend_from_slice(name.as_bytes());
                buf.extend_from_slice(b": ");
                // Writing into a Vec cannot fail.
                let _ = buf.write_fmt(value);
                buf.extend_from_slice(b"\r\n");
            }
            HeadOut::Http2(fields) => fields.push_fmt(name, value),
        }
        self
    }

    /// Adds the Connection header the persistence needs and the blank line (HTTP/1; an
    /// HTTP/2 head is complete as it is).
    pub(crate) fn finish(self) {
        let HeadOut::Http1(buf) = self.out else { return };
        match self.persist {
            Persist::KeepAlive => {}
            Persist::KeepAliveEcho => buf.extend_from_slice(b"Connection: keep-alive\r\n"),
            Persist::Close => buf.extend_from_slice(b"Connection: close\r\n"),
        }
        buf.extend_from_slice(b"\r\n");
    }
}

/// Everything a handler needs to answer one request.
pub(crate) struct Responder<'a> {
    pub(crate) wq: &'a mut WriteQueue,
    pub(crate) date: &'a DateCache,
    pub(crate) persist: Persist,
    /// HEAD: send the head a GET would get, without the body.
    pub(crate) head_only: bool,
    /// Set by a handler whose response must wait (`/sleep`, `/stall`): the connection holds
    /// it back this long, without blocking the worker.
    pub(crate) hold: Option<Duration>,
    /// Set by a handler that reads the request body (`/echo`): where its bytes go.
    pub(crate) body_sink: Sink,
    /// HTTP/2: where the head's fields go (the body still goes to `wq`).
    fields: Option<&'a mut FieldList>,
}

impl<'a> Responder<'a> {
    pub(crate) fn new(
        wq: &'a mut WriteQueue,
        date: &'a DateCache,
        persist: Persist,
        head_only: bool,
    ) -> Responder<'a> {
        Responder {
            wq,
            date,
            persist,
            head_only,
            hold: None,
            body_sink: Sink::Discard,
            fields: None,
        }
    }

    /// A responder for an HTTP/2 stream: the head goes to `fields`, the body to `wq`.
    pub(crate) fn h2(
        wq: &'a mut WriteQueue,
        date: &'a DateCache,
        fields: &'a mut FieldList,
        head_only: bool,
    ) -> Responder<'a> {
        Responder {
            wq,
            date,
            persist: Persist::KeepAlive,
            head_only,
            hold: None,
            body_sink: Sink::Discard,
            fields: Some(fields),
        }
    }

    /// Starts a head: status line, Server and Date. Add headers, then [`Head::finish`]. A new
    /// head replaces an HTTP/2 head started before (a handler that changes its mind).
    pub(crate) fn head(&mut self, status: Status) -> Head<'_> {
        if let Some(fields) = self.fields.as_deref_mut() {
            fields.start_response(status.code());
            fields.push("server", SERVER_VALUE);
            fields.push("date", self.date.http());
            return Head { out: HeadOut::Http2(fields), persist: self.persist };
        }
        let buf = self.wq.buf_mut();
        status.write_line(buf);
        buf.extend_from_slice(SERVER);
        buf.extend_from_slice(b"Date: ");
        buf.extend_from_slice(self.date.http());
        buf.extend_from_slice(b"\r\n");
        Head { out: HeadOut::Http1(buf), persist: self.persist }
    }

    /// The head started last, to go on with.
    fn head_again(&mut self) -> Head<'_> {
        let out = match self.fields.as_deref_mut() {
            Some(fields) => HeadOut::Http2(fields),
            None => HeadOut::Http1(self.wq.buf_mut()),
        };
        Head { out, persist: self.persist }
    }

    /// Answers with a body computed for this request, which caches must not keep.
    pub(crate) fn body(&mut self, status: Status, content_type: &[u8], body: &[u8]) -> Reply {
        self.head(status)
            .header("Content-Type", content_type)
            .header_u64("Content-Length", body.len() as u64)
            .header("Cache-Control", b"no-store");
        self.finish_with(status, body)
    }

    /// Answers with a body `render` appends, computed for this request. The body is rendered
    /// first, straight into the output buffer, and the head (which needs its length) is then
    /// rotated in front of it: no scratch buffer and no second copy of the body.
    pub(crate) fn body_with(
        &mut self,
        status: Status,
        content_type: &[u8],
        render: impl FnOnce(&mut Vec<u8>),
    ) -> Reply {
        let start = self.wq.mark();
        render(self.wq.buf_mut());
        let body_len = self.wq.mark() - start;
        let mut head = self.head(status);
        head.header("Content-Type", content_type)
            .header_u64("Content-Length", body_len as u64)
            .header("Cache-Control", b"no-store");
        head.finish();
        let buf = self.wq.buf_mut();
        let head_len = buf.len() - start - body_len;
        buf[start..].rotate_right(head_len);
        if self.head_only {
            buf.truncate(start + head_len);
            return Reply { status, body_bytes: 0 };
        }
        Reply { status, body_bytes: body_len as u64 }
    }

    /// Answers with a plain-text message, for requests whose parameters are wrong: the
    /// message says what was expected.
    pub(crate) fn text(&mut self, status: Status, message: &str) -> Reply {
        self.body(status, b"text/plain; charset=utf-8", message.as_bytes())
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
        self.head_again().finish();
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
        let mut r = Responder::new(&mut wq, &date, persist, head_only);
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
    fn other_statuses() {
        let mut buf = Vec::new();
        Status::from_code(418).write_line(&mut buf);
        Status::from_code(201).write_line(&mut buf);
        Status::from_code(404).write_line(&mut buf);
        assert_eq!(buf, b"HTTP/1.1 418 \r\nHTTP/1.1 201 Created\r\nHTTP/1.1 404 Not Found\r\n");
        assert_eq!(Status::from_code(404), Status::NotFound);
        assert_eq!(Status::from_code(301), Status::MovedPermanently);
        assert_eq!(Status::from_code(412), Status::PreconditionFailed);
        let mut buf = Vec::new();
        Status::MovedPermanently.write_line(&mut buf);
        Status::PreconditionFailed.write_line(&mut buf);
        assert_eq!(buf, b"HTTP/1.1 301 Moved Permanently\r\nHTTP/1.1 412 Precondition Failed\r\n");
    }

    #[test]
    fn rendered_bodies_get_their_head_in_front() {
        let mut wq = WriteQueue::new();
        wq.buf_mut().extend_from_slice(b"EARLIER");
        let date = DateCache::new(UNIX_EPOCH);
        let mut r = Responder::new(&mut wq, &date, Persist::KeepAlive, false);
        let reply = r.body_with(Status::Ok, b"text/plain", |b| b.extend_from_slice(b"hello"));
        assert_eq!(reply.body_bytes, 5);
        let s = String::from_utf8(wq.buf_mut().clone()).unwrap();
        assert!(s.starts_with("EARLIERHTTP/1.1 200 OK\r\n"), "{s}");
        assert!(s.ends_with("Content-Length: 5\r\nCache-Control: no-store\r\n\r\nhello"), "{s}");
    }

    #[test]
    fn an_http2_head_goes_to_the_field_list_and_the_body_to_the_queue() {
        let mut wq = WriteQueue::new();
        let mut fields = FieldList::default();
        let date = DateCache::new(UNIX_EPOCH + Duration::from_secs(784_111_777));
        let mut r = Responder::h2(&mut wq, &date, &mut fields, false);
        let reply = r.body_with(Status::Ok, b"text/plain", |b| b.extend_from_slice(b"hello"));
        assert_eq!(reply.body_bytes, 5);
        assert_eq!(wq.buf_mut().as_slice(), b"hello");
        let got: Vec<(&[u8], &[u8])> = fields.iter().collect();
        let server = format!("herd/{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            got,
            [
                (&b":status"[..], &b"200"[..]),
                (b"server", server.as_bytes()),
                (b"date", b"Sun, 06 Nov 1994 08:49:37 GMT"),
                (b"content-type", b"text/plain"),
                (b"content-length", b"5"),
                (b"cache-control", b"no-store"),
            ]
        );
        // An error page after all: the first head is replaced, not added to.
        let mut wq = WriteQueue::new();
        let mut r = Responder::h2(&mut wq, &date, &mut fields, true);
        r.head(Status::Ok).header("X", b"y");
        r.error(Status::NotFound, &[]);
        assert_eq!(fields.iter().next(), Some((&b":status"[..], &b"404"[..])));
        assert!(!fields.iter().any(|(n, _)| n == b"x"));
        assert!(wq.buf_mut().is_empty(), "HEAD: no body");
    }

    #[test]
    fn head_only_has_length_but_no_body() {
        let s = render(Persist::KeepAlive, true, Status::NotFound);
        assert!(s.ends_with("\r\n\r\n"), "{s}");
        let length = format!("Content-Length: {}\r\n", Status::NotFound.page().len());
        assert!(s.contains(&length), "{s}");
    }
}
