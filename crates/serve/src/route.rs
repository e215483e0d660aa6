//! The server's routes: which handler a request path goes to, which methods each accepts, and
//! the names `/herd/stats` counts requests under. A small closed set, so that counting by route
//! is an array index and the counters cannot grow with the number of distinct URLs.

use crate::request::Method;

/// Where a request went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// A file under the root (or 404 without one).
    Static,
    Bytes,
    NineByNine,
    Include,
    Cpu,
    Sleep,
    Stall,
    Status,
    Echo,
    Stats,
    /// Refused before a route was known: malformed head, size limits, a target that is not a
    /// path.
    Unrouted,
}

impl Route {
    pub(crate) const COUNT: usize = 11;

    pub(crate) const ALL: [Route; Route::COUNT] = [
        Route::Static,
        Route::Bytes,
        Route::NineByNine,
        Route::Include,
        Route::Cpu,
        Route::Sleep,
        Route::Stall,
        Route::Status,
        Route::Echo,
        Route::Stats,
        Route::Unrouted,
    ];

    /// The route of a request path (without its query).
    pub(crate) fn of(path: &[u8]) -> Route {
        match path {
            b"/9x9" => Route::NineByNine,
            b"/include" => Route::Include,
            b"/cpu" => Route::Cpu,
            b"/sleep" => Route::Sleep,
            b"/stall" => Route::Stall,
            b"/echo" => Route::Echo,
            b"/herd/stats" => Route::Stats,
            _ if path.starts_with(b"/bytes/") => Route::Bytes,
            _ if path.starts_with(b"/status/") => Route::Status,
            _ => Route::Static,
        }
    }

    /// The key in `/herd/stats`'s `routes` object.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Route::Static => "static",
            Route::Bytes => "/bytes",
            Route::NineByNine => "/9x9",
            Route::Include => "/include",
            Route::Cpu => "/cpu",
            Route::Sleep => "/sleep",
            Route::Stall => "/stall",
            Route::Status => "/status",
            Route::Echo => "/echo",
            Route::Stats => "/herd/stats",
            Route::Unrouted => "unrouted",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Whether the route answers `method`; otherwise 405 with [`Route::allow`].
    pub(crate) fn accepts(self, method: Method) -> bool {
        match method {
            Method::Get | Method::Head => true,
            Method::Post | Method::Put => self == Route::Echo,
            Method::Other => false,
        }
    }

    /// The Allow header of a 405.
    pub(crate) fn allow(self) -> &'static [u8] {
        if self == Route::Echo {
            b"GET, HEAD, POST, PUT"
        } else {
            b"GET, HEAD"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_follow_all() {
        for (i, route) in Route::ALL.iter().enumerate() {
            assert_eq!(route.index(), i);
        }
    }

    #[test]
    fn paths() {
        assert_eq!(Route::of(b"/9x9"), Route::NineByNine);
        assert_eq!(Route::of(b"/9x9/"), Route::Static);
        assert_eq!(Route::of(b"/bytes/10"), Route::Bytes);
        assert_eq!(Route::of(b"/bytes"), Route::Static);
        assert_eq!(Route::of(b"/status/404"), Route::Status);
        assert_eq!(Route::of(b"/index.html"), Route::Static);
    }
}
