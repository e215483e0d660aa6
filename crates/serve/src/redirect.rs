//! The answer to a directory asked without its trailing slash: 301 Moved Permanently to the same
//! path with the slash, its query kept, as nginx and Apache answer. Served as it was asked, the
//! directory's `index.html` would have its relative links (`a.png`) resolved by a browser
//! against the parent (`/a.png`, not `/dir/a.png`).
//!
//! The Location is an absolute URI, because that is what both send by default (nginx's
//! `absolute_redirect on`, Apache's mod_dir), so a client sees the same bytes from herd serve
//! as from them: `http` or `https` by the connection, then the authority the request named (an
//! absolute-form target's, else Host in HTTP/1 or `:authority` in HTTP/2), its host lowercased
//! and its port as sent. The port is Apache's rule (`UseCanonicalName Off`); nginx writes its
//! listening socket's port instead, which is the wrong one for a client that reached the server
//! through a port-mapping NAT or proxy, as on the lab's `nat-*` paths. Where the request names
//! no usable authority (HTTP/1.0 without Host; a Host that is not `host[:port]`), the Location
//! is the path alone: RFC 9110 §10.2.2 allows a relative reference, and the client resolves it
//! against the URI it asked for, which is right by construction.
//!
//! The path is the one the server understood, the decoded segments with the empty and `.` ones
//! gone, percent-encoded again where a URI needs it (as nginx and Apache escape theirs), so
//! `//dir` cannot become a Location starting with `//`, which would name another host. The
//! query is copied as sent, bytes a URI may not hold escaped. Does not decide when to redirect
//! (static_files.rs does).

use crate::path::SafePath;
use crate::request::RequestHead;
use crate::response::{Reply, Responder, Status};

/// Answers 301 with the Location of `path`'s directory (the request's path and `query`).
pub(crate) fn to_directory(
    path: &SafePath,
    query: &[u8],
    req: &RequestHead<'_>,
    r: &mut Responder<'_>,
) -> Reply {
    let location = location(path, query, req);
    r.error(Status::MovedPermanently, &[("Location", &location)])
}

/// The Location of `path`'s directory, with `query` if not empty.
pub(crate) fn location(path: &SafePath, query: &[u8], req: &RequestHead<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    if let Some((host, port)) = authority(req).and_then(split_authority) {
        out.extend_from_slice(if req.tls { b"https://" } else { b"http://" });
        out.extend(host.iter().map(u8::to_ascii_lowercase));
        out.extend_from_slice(port);
    }
    for segment in path.segments() {
        out.push(b'/');
        escape(segment, &mut out, is_pchar);
    }
    out.push(b'/');
    if !query.is_empty() {
        out.push(b'?');
        escape(query, &mut out, |b| is_pchar(b) || matches!(b, b'/' | b'?' | b'%'));
    }
    out
}

/// The authority of an absolute-form target (RFC 9112 §3.2.2: it wins over Host), else the
/// request's Host or `:authority`.
fn authority<'b>(req: &RequestHead<'b>) -> Option<&'b [u8]> {
    let target = req.target;
    let scheme_end = target.windows(3).position(|w| w == b"://");
    match scheme_end {
        Some(i) if !target.starts_with(b"/") => {
            let rest = &target[i + 3..];
            let end = rest.iter().position(|&b| matches!(b, b'/' | b'?' | b'#'));
            Some(&rest[..end.unwrap_or(rest.len())])
        }
        _ => req.host,
    }
}

/// `host[:port]` split into the host and `:port` (or nothing), if it is one (RFC 3986 §3.2.2:
/// a reg-name or a bracketed IP literal, no user information).
fn split_authority(a: &[u8]) -> Option<(&[u8], &[u8])> {
    let host_end = if a.starts_with(b"[") {
        let close = a.iter().position(|&b| b == b']')?;
        let literal = &a[1..close];
        if literal.is_empty()
            || !literal.iter().all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return None;
        }
        close + 1
    } else {
        let end = a.iter().position(|&b| b == b':').unwrap_or(a.len());
        let reg_name = &a[..end];
        if reg_name.is_empty() || !reg_name.iter().all(|&b| is_unreserved(b) || is_sub_delim(b)) {
            return None;
        }
        end
    };
    let (host, port) = a.split_at(host_end);
    let digits = match port.strip_prefix(b":") {
        Some(digits) => digits,
        None if port.is_empty() => b"",
        None => return None,
    };
    if digits.len() > 5 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // An empty port is written without its colon (RFC 3986 §6.2.3).
    Some((host, if digits.is_empty() { b"" } else { port }))
}

/// Appends `bytes`, percent-encoding (uppercase hex, RFC 3986 §2.1) every byte `keep` refuses.
fn escape(bytes: &[u8], out: &mut Vec<u8>, keep: impl Fn(u8) -> bool) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in bytes {
        if keep(b) {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
}

/// A byte a path segment may hold as it is (RFC 3986 §3.3 `pchar`, less `%`: a decoded
/// segment's `%` is a character of the name and must be escaped).
fn is_pchar(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || b == b':' || b == b'@'
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::sanitize;
    use crate::request::{BodyFraming, Method};

    fn req<'a>(target: &'a str, host: Option<&'a str>, tls: bool) -> RequestHead<'a> {
        RequestHead {
            method: Method::Get,
            target: target.as_bytes(),
            minor_version: 1,
            keep_alive: true,
            body: BodyFraming::None,
            host: host.map(str::as_bytes),
            tls,
            if_match: None,
            if_unmodified_since: None,
            if_none_match: None,
            if_modified_since: None,
            if_range: None,
            range: None,
            content_type: None,
            expect_continue: false,
        }
    }

    /// The Location for a request of `path` (no query) with Host `host`.
    fn check(path: &str, query: &str, host: Option<&str>, tls: bool, expect: &str) {
        let safe = sanitize(path.as_bytes()).unwrap();
        let got = location(&safe, query.as_bytes(), &req(path, host, tls));
        assert_eq!(String::from_utf8_lossy(&got), expect, "{path}?{query} Host: {host:?}");
    }

    #[test]
    fn absolute_with_the_hosts_authority() {
        check("/d", "", Some("t"), false, "http://t/d/");
        check("/d", "", Some("t"), true, "https://t/d/");
        check(
            "/a/b",
            "x=1&y",
            Some("Example.COM:8080"),
            false,
            "http://example.com:8080/a/b/?x=1&y",
        );
        check("/d", "", Some("[::1]:81"), false, "http://[::1]:81/d/");
        check("/d", "", Some("[::FFFF:127.0.0.1]"), false, "http://[::ffff:127.0.0.1]/d/");
        check("/d", "", Some("127.0.0.1:0"), false, "http://127.0.0.1:0/d/");
        check("/d", "", Some("h:"), false, "http://h/d/");
    }

    #[test]
    fn relative_without_a_usable_authority() {
        for host in [
            None,
            Some(""),
            Some("a/b"),
            Some("user@h"),
            Some("h:port"),
            Some("h:123456"),
            Some("[::1"),
            Some("[]"),
            Some("[::1]x"),
            Some("h h"),
            Some("h\u{e9}"),
            Some(":80"),
        ] {
            check("/d", "q", host, false, "/d/?q");
        }
    }

    #[test]
    fn an_absolute_form_target_names_the_authority() {
        let safe = sanitize(b"/d").unwrap();
        let r = req("http://Other:81/d?q", Some("t"), false);
        assert_eq!(location(&safe, b"q", &r), b"http://other:81/d/?q");
        let r = req("https://o", Some("t"), true);
        assert_eq!(location(&safe, b"", &r), b"https://o/d/");
    }

    #[test]
    fn the_path_as_understood_escaped_again() {
        check("//d", "", Some("t"), false, "http://t/d/");
        check("/./a//b/.", "", Some("t"), false, "http://t/a/b/");
        check("/sp%20ace", "", Some("t"), false, "http://t/sp%20ace/");
        check("/%7e%41", "", Some("t"), false, "http://t/~A/");
        check("/a%2520b", "", Some("t"), false, "http://t/a%2520b/");
        check("/q%3Fx%23y", "", Some("t"), false, "http://t/q%3Fx%23y/");
        check("/caf%C3%A9", "", Some("t"), false, "http://t/caf%C3%A9/");
        check("/", "", None, false, "/");
        // The query as sent, only what a URI cannot hold escaped.
        check("/d", "a=%20b&c=d/e?f", None, false, "/d/?a=%20b&c=d/e?f");
        check("/d", "a b\"<#>", None, false, "/d/?a%20b%22%3C%23%3E");
    }
}
