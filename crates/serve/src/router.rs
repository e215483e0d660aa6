//! Decides which handler answers a parsed request: `/herd/stats`, `/bytes/N`, or a file under the
//! root; 405 for methods other than GET and HEAD, 400 for targets that are not a path, 404 when
//! there is no root. The generated pages are matched before the root, so a file named
//! `bytes/10` under the root is never served. Does not parse, read or write sockets.

use memchr::memchr;

use crate::generated;
use crate::path;
use crate::request::{Method, RequestHead};
use crate::response::{Reply, Responder, Status};
use crate::server::Shared;
use crate::static_files;
use crate::stats;

/// Answers `req` into `r`.
pub(crate) fn respond(req: &RequestHead<'_>, shared: &Shared, r: &mut Responder<'_>) -> Reply {
    if req.method == Method::Other {
        return r.error(Status::MethodNotAllowed, &[("Allow", b"GET, HEAD")]);
    }
    let Some(path) = target_path(req.target) else {
        return r.error(Status::BadRequest, &[]);
    };
    if path == b"/herd/stats" {
        let json = stats::total(&shared.counters).to_json();
        return r.body(Status::Ok, b"application/json", json.as_bytes());
    }
    if let Some(n) = path.strip_prefix(b"/bytes/") {
        return generated::serve_bytes(n, r);
    }
    let Some(root) = &shared.root else {
        return r.error(Status::NotFound, &[]);
    };
    match path::sanitize(path) {
        Ok(safe) => static_files::serve(root, &safe, req, r),
        Err(_) => r.error(Status::BadRequest, &[]),
    }
}

/// The path of a request target, without the query: origin-form `/p?q`, or absolute-form
/// `http://host/p?q`, which servers must accept (RFC 9112 §3.2.2). `None` for anything else
/// (`*`, authority-form, other schemes).
pub(crate) fn target_path(target: &[u8]) -> Option<&[u8]> {
    let path_and_query = if target.starts_with(b"/") {
        target
    } else {
        let rest = strip_prefix_ignore_case(target, b"http://")
            .or_else(|| strip_prefix_ignore_case(target, b"https://"))?;
        match memchr(b'/', rest) {
            Some(i) => &rest[i..],
            None => b"/",
        }
    };
    let end = memchr(b'?', path_and_query).unwrap_or(path_and_query.len());
    Some(&path_and_query[..end])
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(target: &str, expect: Option<&str>) {
        assert_eq!(target_path(target.as_bytes()), expect.map(str::as_bytes), "{target}");
    }

    #[test]
    fn targets() {
        check("/", Some("/"));
        check("/a/b?c=d?e", Some("/a/b"));
        check("/?x", Some("/"));
        check("http://example.com/a?b", Some("/a"));
        check("HTTP://example.com:8080/a", Some("/a"));
        check("https://example.com", Some("/"));
        check("http://example.com/../x", Some("/../x"));
        check("*", None);
        check("example.com:443", None);
        check("ftp://example.com/a", None);
        check("", None);
    }
}
