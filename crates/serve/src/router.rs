//! Decides which handler answers a parsed request (route.rs names the routes): the generated
//! and dynamic pages (pages/, generated.rs, `/herd/stats`) first, then a file under the root;
//! 405 for a method the route does not take, 400 for targets that are not a path, 404 when there
//! is no root. The pages are matched before the root, so a file named `bytes/10` under the root
//! is never served. Every request first spends the configured `spend_per_request` (`--spend-us`,
//! a test knob; nothing by default). Does not parse, read or write sockets.

use std::time::{Duration, Instant};

use memchr::memchr;

use crate::file_cache::FileCache;
use crate::generated;
use crate::pages::{cpu, delay, echo, include, nine_by_nine, status};
use crate::request::RequestHead;
use crate::response::{Reply, Responder, Status};
use crate::route::Route;
use crate::server::Shared;
use crate::static_files;
use crate::stats;

/// Answers `req` into `r`; returns the route it took, for the counters.
pub(crate) fn respond(
    req: &RequestHead<'_>,
    shared: &Shared,
    cache: &mut FileCache,
    r: &mut Responder<'_>,
) -> (Route, Reply) {
    let Some((path, query)) = split_target(req.target) else {
        return (Route::Unrouted, r.error(Status::BadRequest, &[]));
    };
    spend(shared.config.spend_per_request);
    let route = Route::of(path);
    if !route.accepts(req.method) {
        return (route, r.error(Status::MethodNotAllowed, &[("Allow", route.allow())]));
    }
    let reply = match route {
        Route::NineByNine => nine_by_nine::serve(r),
        Route::Include => include::serve(&shared.include, r),
        Route::Cpu => cpu::serve(query, r),
        Route::Sleep => delay::sleep(query, r),
        Route::Stall => delay::stall(query, &shared.stall_count, r),
        Route::Echo => echo::serve(req, r),
        Route::Stats => {
            let json = stats::total(&shared.counters).to_json();
            r.body(Status::Ok, b"application/json", json.as_bytes())
        }
        Route::Bytes => generated::serve_bytes(&path[b"/bytes/".len()..], r),
        Route::Status => status::serve(&path[b"/status/".len()..], r),
        Route::Static => match &shared.root {
            None => r.error(Status::NotFound, &[]),
            Some(root) => static_files::serve(root, cache, (path, query), req, r),
        },
        Route::Unrouted => r.error(Status::BadRequest, &[]),
    };
    (route, reply)
}

/// Busies the worker's thread for `d` (`--spend-us`): a slower server, as a regression makes
/// one. The clock is read between spins, so the time is spent whatever the CPU's speed.
fn spend(d: Duration) {
    if d.is_zero() {
        return;
    }
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// The path and the query of a request target: origin-form `/p?q`, or absolute-form
/// `http://host/p?q`, which servers must accept (RFC 9112 §3.2.2). `None` for anything else
/// (`*`, authority-form, other schemes).
pub(crate) fn split_target(target: &[u8]) -> Option<(&[u8], &[u8])> {
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
    Some(match memchr(b'?', path_and_query) {
        Some(i) => (&path_and_query[..i], &path_and_query[i + 1..]),
        None => (path_and_query, &b""[..]),
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(target: &str, expect: Option<&str>) {
        let path = split_target(target.as_bytes()).map(|(path, _)| path);
        assert_eq!(path, expect.map(str::as_bytes), "{target}");
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

    #[test]
    fn queries() {
        assert_eq!(split_target(b"/a?b=1&c"), Some((&b"/a"[..], &b"b=1&c"[..])));
        assert_eq!(split_target(b"/a"), Some((&b"/a"[..], &b""[..])));
        assert_eq!(split_target(b"http://h/cpu?n=1"), Some((&b"/cpu"[..], &b"n=1"[..])));
    }

    #[test]
    fn spend_takes_at_least_the_time_asked_and_nothing_by_default() {
        let start = Instant::now();
        spend(Duration::from_micros(300));
        assert!(start.elapsed() >= Duration::from_micros(300));
        let start = Instant::now();
        spend(Duration::ZERO);
        assert!(start.elapsed() < Duration::from_millis(50));
    }
}
