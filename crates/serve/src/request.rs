//! Parses one complete request head into the few facts the server acts on: method, target,
//! version, Host, persistence, body framing and the conditional and range headers. Built on httparse,
//! which does the syntax; this file adds HTTP/1.1's semantic checks (Host, Content-Length,
//! Transfer-Encoding). It does not find where a head ends or enforce size limits (read_buf.rs)
//! and does not decide the answer (router.rs). Everything it returns borrows from the head bytes.

/// Most header lines accepted in one head; more → 431. Apache's `LimitRequestFields` default.
pub(crate) const MAX_HEADERS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Post,
    Put,
    /// Anything else: answered 405.
    Other,
}

/// How the request body, if any, is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    None,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: …, chunked`.
    Chunked,
}

/// A parsed head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead<'b> {
    pub(crate) method: Method,
    /// The request target as sent: origin-form `/p?q` or absolute-form `http://h/p?q`.
    pub(crate) target: &'b [u8],
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub(crate) minor_version: u8,
    /// Whether the client wants the connection kept open: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    pub(crate) keep_alive: bool,
    pub(crate) body: BodyFraming,
    /// The authority the client addressed: Host in HTTP/1, `:authority` (else `host`) in
    /// HTTP/2. A redirect's Location names it.
    pub(crate) host: Option<&'b [u8]>,
    /// The request came over TLS: the scheme a redirect's Location names is `https`. Set by
    /// the connection, which knows; a parser cannot.
    pub(crate) tls: bool,
    pub(crate) if_match: Option<&'b [u8]>,
    pub(crate) if_unmodified_since: Option<&'b [u8]>,
    pub(crate) if_none_match: Option<&'b [u8]>,
    pub(crate) if_modified_since: Option<&'b [u8]>,
    pub(crate) if_range: Option<&'b [u8]>,
    pub(crate) range: Option<&'b [u8]>,
    /// The body's media type, echoed by `/echo`.
    pub(crate) content_type: Option<&'b [u8]>,
    /// `Expect: 100-continue`: the client waits for `100 Continue` before sending its body.
    pub(crate) expect_continue: bool,
}

/// Why a head was refused. Every one closes the connection, since the server can no longer be
/// sure where the next request starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// Not HTTP/1.x syntax (bad request line, bad header line, unknown version, …).
    Malformed,
    /// More than [`MAX_HEADERS`] header lines (→ 431).
    TooManyHeaders,
    /// HTTP/1.1 without a Host header, or with several (RFC 9112 §3.2).
    BadHost,
    /// Content-Length not a number, or several different ones.
    BadContentLength,
    /// Transfer-Encoding together with Content-Length, not ending in `chunked`, or in an
    /// HTTP/1.0 request (RFC 9112 §6.1, the request-smuggling rules; nginx answers 400 too).
    BadTransferEncoding,
}

/// Parses `head`, which ends with its blank line.
pub(crate) fn parse_head(head: &[u8]) -> Result<RequestHead<'_>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(HeadError::Malformed),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
        Err(_) => return Err(HeadError::Malformed),
    }
    let (Some(method), Some(path), Some(minor_version)) = (req.method, req.path, req.version)
    else {
        return Err(HeadError::Malformed);
    };
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        _ => Method::Other,
    };

    let mut out = RequestHead {
        method,
        target: path.as_bytes(),
        minor_version,
        keep_alive: false,
        body: BodyFraming::None,
        host: None,
        tls: false,
        if_match: None,
        if_unmodified_since: None,
        if_none_match: None,
        if_modified_since: None,
        if_range: None,
        range: None,
        content_type: None,
        expect_continue: false,
    };
    let (mut n_host, mut close, mut keep_alive) = (0, false, false);
    let mut content_length: Option<u64> = None;
    let mut transfer_encoding: Option<bool> = None; // Some(last coding is chunked)
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        let value = h.value.trim_ascii();
        if name.eq_ignore_ascii_case(b"host") {
            n_host += 1;
            out.host.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let n = decimal(value).ok_or(HeadError::BadContentLength)?;
            if content_length.is_some_and(|m| m != n) {
                return Err(HeadError::BadContentLength);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            let last = value.rsplit(|&b| b == b',').next().unwrap_or_default().trim_ascii();
            transfer_encoding = Some(last.eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case(b"if-match") {
            out.if_match.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"if-unmodified-since") {
            out.if_unmodified_since.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"if-none-match") {
            out.if_none_match.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"if-modified-since") {
            out.if_modified_since.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"if-range") {
            out.if_range.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"range") {
            out.range.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"content-type") {
            out.content_type.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"expect") {
            out.expect_continue |= value.eq_ignore_ascii_case(b"100-continue");
        }
    }

    if n_host > 1 || (minor_version == 1 && n_host == 0) {
        return Err(HeadError::BadHost);
    }
    out.body = match (transfer_encoding, content_length) {
        (Some(_), _) if minor_version == 0 => return Err(HeadError::BadTransferEncoding),
        (Some(_), Some(_)) | (Some(false), None) => return Err(HeadError::BadTransferEncoding),
        (Some(true), None) => BodyFraming::Chunked,
        (None, Some(0) | None) => BodyFraming::None,
        (None, Some(n)) => BodyFraming::Length(n),
    };
    out.keep_alive = !close && (minor_version == 1 || keep_alive);
    Ok(out)
}

/// A Content-Length value: digits only (no sign, no list), fitting in u64.
pub(crate) fn decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(head: &str) -> Result<RequestHead<'_>, HeadError> {
        parse_head(head.as_bytes())
    }

    #[test]
    fn simple_get() {
        let r = parse("GET /a?b HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.target, b"/a?b");
        assert_eq!(r.minor_version, 1);
        assert!(r.keep_alive);
        assert_eq!(r.body, BodyFraming::None);
    }

    #[test]
    fn persistence_rules() {
        let ka = |h: &str| parse(h).unwrap().keep_alive;
        assert!(ka("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, CLOSE\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.0\r\n\r\n"));
        assert!(ka("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"));
    }

    #[test]
    fn methods() {
        assert_eq!(parse("HEAD / HTTP/1.0\r\n\r\n").unwrap().method, Method::Head);
        assert_eq!(parse("POST / HTTP/1.0\r\n\r\n").unwrap().method, Method::Post);
        assert_eq!(parse("PUT / HTTP/1.0\r\n\r\n").unwrap().method, Method::Put);
        assert_eq!(parse("DELETE / HTTP/1.0\r\n\r\n").unwrap().method, Method::Other);
        assert_eq!(parse("get / HTTP/1.0\r\n\r\n").unwrap().method, Method::Other);
    }

    #[test]
    fn conditional_and_range_headers_first_wins() {
        let r = parse(
            "GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\"\r\n\
             If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\nRange:  bytes=0-1 \r\n\
             If-Range: \"a\"\r\nIf-Match: \"m\"\r\nIf-Match: \"n\"\r\n\
             If-Unmodified-Since: Sunday, 06-Nov-94 08:49:37 GMT\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.if_match, Some(&b"\"m\""[..]));
        assert_eq!(r.if_unmodified_since, Some(&b"Sunday, 06-Nov-94 08:49:37 GMT"[..]));
        assert_eq!((r.host, r.tls), (Some(&b"x"[..]), false));
        assert_eq!(r.if_none_match, Some(&b"\"a\""[..]));
        assert_eq!(r.if_modified_since, Some(&b"Sun, 06 Nov 1994 08:49:37 GMT"[..]));
        assert_eq!(r.range, Some(&b"bytes=0-1"[..]));
        assert_eq!(r.if_range, Some(&b"\"a\""[..]));
    }

    #[test]
    fn body_framing() {
        let body = |h: &str| parse(h).map(|r| r.body);
        assert_eq!(
            body("POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n"),
            Ok(BodyFraming::Length(5))
        );
        assert_eq!(
            body("POST / HTTP/1.0\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"),
            Ok(BodyFraming::Length(5))
        );
        assert_eq!(body("GET / HTTP/1.0\r\nContent-Length: 0\r\n\r\n"), Ok(BodyFraming::None));
        assert_eq!(
            body("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
            Ok(BodyFraming::Chunked)
        );
        for bad in [
            "POST / HTTP/1.0\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST / HTTP/1.0\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.0\r\nContent-Length: 5, 5\r\n\r\n",
            "POST / HTTP/1.0\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "POST / HTTP/1.0\r\nContent-Length:\r\n\r\n",
        ] {
            assert_eq!(body(bad), Err(HeadError::BadContentLength), "{bad}");
        }
        for bad in [
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert_eq!(body(bad), Err(HeadError::BadTransferEncoding), "{bad}");
        }
    }

    #[test]
    fn content_type_and_expect() {
        let r = parse(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nExpect: 100-Continue\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.content_type, Some(&b"text/plain"[..]));
        assert!(r.expect_continue);
        assert!(
            !parse("GET / HTTP/1.1\r\nHost: x\r\nExpect: other\r\n\r\n").unwrap().expect_continue
        );
    }

    #[test]
    fn host_rules() {
        assert_eq!(parse("GET / HTTP/1.1\r\n\r\n"), Err(HeadError::BadHost));
        assert_eq!(parse("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), Err(HeadError::BadHost));
        assert!(parse("GET / HTTP/1.0\r\n\r\n").is_ok());
    }

    #[test]
    fn malformed() {
        for bad in [
            "GARBAGE\r\n\r\n",
            "GET / HTTP/2.0\r\n\r\n",
            "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
            "GET / HTTP/1.1\r\n Host: x\r\n\r\n",
            "GET /\r\n\r\n",
            "GET  HTTP/1.1\r\n\r\n",
            "\u{0}\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n",
        ] {
            assert_eq!(parse(bad), Err(HeadError::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn too_many_headers() {
        let mut h = String::from("GET / HTTP/1.1\r\nHost: x\r\n");
        for i in 0..MAX_HEADERS {
            h.push_str(&format!("X-{i}: y\r\n"));
        }
        h.push_str("\r\n");
        assert_eq!(parse(&h), Err(HeadError::TooManyHeaders));
    }
}
