//! An HTTP/2 request's decoded fields as the [`RequestHead`] the router and handlers take,
//! after the checks of RFC 9113 §8.1.1, §8.2 and §8.3.1; a request that fails them is
//! malformed and its stream is reset with PROTOCOL_ERROR (conn.rs). The head borrows the field
//! list, which the connection reuses from request to request.

use crate::h2::FieldList;
use crate::request::{decimal, BodyFraming, Method, RequestHead};

/// Why a request is malformed (RFC 9113 §8.1.1); only tests read the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Malformed(#[allow(dead_code)] pub(super) &'static str);

/// The head of the request whose fields are `fields`; `end_stream`: its HEADERS ended the
/// stream (no body). Also returns the content-length, which the DATA must then add up to.
pub(super) fn head(
    fields: &FieldList,
    end_stream: bool,
) -> Result<(RequestHead<'_>, Option<u64>), Malformed> {
    let mut method: Option<&[u8]> = None;
    let mut path: Option<&[u8]> = None;
    let mut scheme = false;
    let mut authority: Option<&[u8]> = None;
    let mut host: Option<&[u8]> = None;
    let mut regular_seen = false;
    let mut content_length: Option<u64> = None;
    let mut head = RequestHead {
        method: Method::Other,
        target: b"",
        minor_version: 1,
        keep_alive: true,
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
    for (name, value) in fields.iter() {
        if value.iter().any(|&b| matches!(b, 0 | b'\r' | b'\n'))
            || value.first().is_some_and(|&b| b == b' ' || b == b'\t')
            || value.last().is_some_and(|&b| b == b' ' || b == b'\t')
        {
            return Err(Malformed("a field value with NUL, CR, LF or surrounding whitespace"));
        }
        if let Some(pseudo) = name.strip_prefix(b":") {
            if regular_seen {
                return Err(Malformed("a pseudo-header field after a regular field"));
            }
            let slot = match pseudo {
                b"method" => &mut method,
                b"path" => &mut path,
                b"scheme" if !scheme => {
                    scheme = true;
                    continue;
                }
                b"authority" if authority.is_none() => {
                    authority = Some(value);
                    continue;
                }
                b"scheme" | b"authority" => return Err(Malformed("a repeated pseudo-header")),
                _ => return Err(Malformed("an unknown pseudo-header field")),
            };
            if slot.replace(value).is_some() {
                return Err(Malformed("a repeated pseudo-header"));
            }
            continue;
        }
        regular_seen = true;
        if name.is_empty()
            || name.iter().any(|&b| b <= 0x20 || b.is_ascii_uppercase() || b >= 0x7f || b == b':')
        {
            return Err(Malformed("a field name that is empty, not lowercase or not a token"));
        }
        match name {
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding"
            | b"upgrade" => return Err(Malformed("a connection-specific field")),
            b"te" if value != b"trailers" => return Err(Malformed("te other than trailers")),
            b"content-length" => {
                let n = decimal(value).ok_or(Malformed("a content-length that is not a number"))?;
                if content_length.is_some_and(|m| m != n) {
                    return Err(Malformed("content-length values that differ"));
                }
                content_length = Some(n);
            }
            b"host" => drop(host.get_or_insert(value)),
            b"if-match" => drop(head.if_match.get_or_insert(value)),
            b"if-unmodified-since" => drop(head.if_unmodified_since.get_or_insert(value)),
            b"if-none-match" => drop(head.if_none_match.get_or_insert(value)),
            b"if-modified-since" => drop(head.if_modified_since.get_or_insert(value)),
            b"if-range" => drop(head.if_range.get_or_insert(value)),
            b"range" => drop(head.range.get_or_insert(value)),
            b"content-type" => drop(head.content_type.get_or_insert(value)),
            _ => {}
        }
    }
    let (Some(method), Some(path)) = (method, path) else {
        return Err(Malformed("no :method or no :path"));
    };
    if !scheme || path.is_empty() {
        return Err(Malformed("no :scheme, or an empty :path"));
    }
    head.method = match method {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        b"POST" => Method::Post,
        b"PUT" => Method::Put,
        _ => Method::Other,
    };
    head.target = path;
    // RFC 9113 §8.3.1: `:authority`, or failing it the host field, names the target's host.
    head.host = authority.or(host);
    head.body = match (end_stream, content_length) {
        (true, Some(n)) if n > 0 => {
            return Err(Malformed("content-length above 0 on a request without a body"))
        }
        (true, _) => BodyFraming::None,
        (false, Some(n)) => BodyFraming::Length(n),
        // The length is known only when END_STREAM comes, as with a chunked HTTP/1 body.
        (false, None) => BodyFraming::Chunked,
    };
    Ok((head, content_length))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(list: &[(&str, &str)]) -> FieldList {
        let mut f = FieldList::default();
        for (n, v) in list {
            f.push_raw(n.as_bytes(), v.as_bytes());
        }
        f
    }

    const GET: [(&str, &str); 4] =
        [(":method", "GET"), (":scheme", "https"), (":authority", "h"), (":path", "/a?b")];

    #[test]
    fn a_get_and_its_conditional_fields() {
        let mut list = GET.to_vec();
        list.extend([("if-none-match", "\"x\""), ("range", "bytes=0-1"), ("te", "trailers")]);
        list.extend([("if-match", "\"m\""), ("if-unmodified-since", "d"), ("host", "other")]);
        let f = fields(&list);
        let (head, len) = head(&f, true).unwrap();
        assert_eq!((head.method, head.target, len), (Method::Get, &b"/a?b"[..], None));
        assert_eq!(head.if_none_match, Some(&b"\"x\""[..]));
        assert_eq!(head.if_match, Some(&b"\"m\""[..]));
        assert_eq!(head.if_unmodified_since, Some(&b"d"[..]));
        // :authority wins over host; without it, host names the authority.
        assert_eq!(head.host, Some(&b"h"[..]));
        let f = fields(&[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("host", "o")]);
        assert_eq!(super::head(&f, true).unwrap().0.host, Some(&b"o"[..]));
        assert_eq!(head.range, Some(&b"bytes=0-1"[..]));
        assert_eq!(head.body, BodyFraming::None);
    }

    #[test]
    fn bodies_by_length_or_until_end_stream() {
        let mut list = vec![(":method", "POST"), (":scheme", "http"), (":path", "/echo")];
        let f = fields(&list);
        assert_eq!(head(&f, false).unwrap().0.body, BodyFraming::Chunked);
        list.push(("content-length", "5"));
        let f = fields(&list);
        assert_eq!(head(&f, false).unwrap().1, Some(5));
        assert_eq!(head(&f, false).unwrap().0.body, BodyFraming::Length(5));
        assert!(head(&f, true).is_err(), "a length promised but END_STREAM at once");
    }

    #[test]
    fn malformed_requests() {
        let cases: &[&[(&str, &str)]] = &[
            &[(":method", "GET"), (":scheme", "http")],
            &[(":method", "GET"), (":path", "/")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "")],
            &[(":method", "GET"), (":method", "GET"), (":scheme", "http"), (":path", "/")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), (":status", "200")],
            &[(":method", "GET"), (":scheme", "http"), ("x", "y"), (":path", "/")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("Host", "h")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("connection", "close")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("te", "gzip")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("x", "a\nb")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("x", " a")],
            &[(":method", "GET"), (":scheme", "http"), (":path", "/"), ("", "a")],
            &[
                (":method", "POST"),
                (":scheme", "http"),
                (":path", "/"),
                ("content-length", "1"),
                ("content-length", "2"),
            ],
            &[(":method", "POST"), (":scheme", "http"), (":path", "/"), ("content-length", "x")],
        ];
        for case in cases {
            assert!(head(&fields(case), false).is_err(), "{case:?}");
        }
    }
}
