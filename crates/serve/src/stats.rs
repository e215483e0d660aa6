//! The server's counters: per-worker, exact, written by one thread only, and merged into
//! [`ServeStats`] when the server returns or when `/herd/stats` is asked: connections, requests,
//! bytes, responses by status class, by exact status and by route. This file does not decide
//! what counts as a request (conn.rs does).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::route::Route;

/// What a server did, summed over all workers. Exact once [`Server::run`](crate::Server::run)
/// has returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Connections accepted.
    pub n_connections: u64,
    /// Of those, connections over TLS.
    pub n_tls_connections: u64,
    /// Of those, connections that spoke HTTP/2 (h2c with prior knowledge, or h2 by ALPN).
    pub n_h2_connections: u64,
    /// Responses started, one per request, including error responses to malformed or oversized
    /// requests (HTTP/2 streams reset as malformed get no response and are not counted).
    /// Equals the sum of `n_responses_by_class`, of `by_status` and of `by_route`.
    pub n_requests: u64,
    /// Responses with status 400. A subset of `n_requests` and of `n_responses_by_class[3]`.
    pub n_bad_requests: u64,
    /// Bytes written to sockets: heads and bodies, and HTTP/2's frames. Over TLS, the
    /// plaintext handed to TLS (records add their own overhead).
    pub bytes_written: u64,
    /// Responses by status class: index 0 is 1xx, 1 is 2xx, …, 4 is 5xx.
    pub n_responses_by_class: [u64; 5],
    /// Responses by exact status code; codes never sent are absent.
    pub by_status: BTreeMap<u16, u64>,
    /// Responses by route (`static`, `/bytes`, `/9x9`, …, and `unrouted` for requests refused
    /// before a route was known); every route is present, also with 0.
    pub by_route: BTreeMap<&'static str, u64>,
}

impl ServeStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &ServeStats) {
        self.n_connections += other.n_connections;
        self.n_tls_connections += other.n_tls_connections;
        self.n_h2_connections += other.n_h2_connections;
        self.n_requests += other.n_requests;
        self.n_bad_requests += other.n_bad_requests;
        self.bytes_written += other.bytes_written;
        for (mine, theirs) in self.n_responses_by_class.iter_mut().zip(other.n_responses_by_class) {
            *mine += theirs;
        }
        for (code, n) in &other.by_status {
            *self.by_status.entry(*code).or_default() += n;
        }
        for (route, n) in &other.by_route {
            *self.by_route.entry(route).or_default() += n;
        }
    }

    /// The counters as one JSON object, the body of `/herd/stats` (format in docs/serve.md).
    /// Keys are fixed ASCII names and values integers, so no escaping is needed.
    pub fn to_json(&self) -> String {
        let [c1, c2, c3, c4, c5] = self.n_responses_by_class;
        let join = |pairs: Vec<String>| pairs.join(",");
        let status = join(self.by_status.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect());
        let routes = join(self.by_route.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect());
        format!(
            concat!(
                "{{\"connections\":{},\"tls_connections\":{},\"h2_connections\":{},",
                "\"requests\":{},\"bad_requests\":{},\"bytes_written\":{},",
                "\"responses\":{{\"1xx\":{},\"2xx\":{},\"3xx\":{},\"4xx\":{},\"5xx\":{}}},",
                "\"status\":{{{}}},\"routes\":{{{}}}}}\n"
            ),
            self.n_connections,
            self.n_tls_connections,
            self.n_h2_connections,
            self.n_requests,
            self.n_bad_requests,
            self.bytes_written,
            c1,
            c2,
            c3,
            c4,
            c5,
            status,
            routes
        )
    }
}

/// Status codes counted exactly: 100 to 599.
const FIRST_CODE: u16 = 100;
const N_CODES: usize = 500;

/// One worker's counters. Only that worker writes them, so an increment is a relaxed load and
/// store (a plain `mov`, no locked instruction); other threads may read them at any time for
/// `/herd/stats` and see each value whole. Aligned to 128 bytes so two workers never write the
/// same cache line (or adjacent-line prefetch pair).
#[repr(align(128))]
#[derive(Debug)]
pub(crate) struct WorkerCounters {
    n_connections: AtomicU64,
    n_tls_connections: AtomicU64,
    n_h2_connections: AtomicU64,
    n_requests: AtomicU64,
    n_bad_requests: AtomicU64,
    bytes_written: AtomicU64,
    n_responses_by_class: [AtomicU64; 5],
    by_route: [AtomicU64; Route::COUNT],
    by_status: [AtomicU64; N_CODES],
}

impl Default for WorkerCounters {
    fn default() -> Self {
        WorkerCounters {
            n_connections: AtomicU64::new(0),
            n_tls_connections: AtomicU64::new(0),
            n_h2_connections: AtomicU64::new(0),
            n_requests: AtomicU64::new(0),
            n_bad_requests: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            n_responses_by_class: Default::default(),
            by_route: Default::default(),
            by_status: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl WorkerCounters {
    pub(crate) fn add_connection(&self) {
        bump(&self.n_connections, 1);
    }

    pub(crate) fn add_tls_connection(&self) {
        bump(&self.n_tls_connections, 1);
    }

    pub(crate) fn add_h2_connection(&self) {
        bump(&self.n_h2_connections, 1);
    }

    pub(crate) fn add_response(&self, status: u16, route: Route) {
        bump(&self.n_requests, 1);
        if status == 400 {
            bump(&self.n_bad_requests, 1);
        }
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        bump(&self.n_responses_by_class[class], 1);
        bump(&self.by_route[route.index()], 1);
        if let Some(c) = self.by_status.get(usize::from(status.wrapping_sub(FIRST_CODE))) {
            bump(c, 1);
        }
    }

    pub(crate) fn add_bytes(&self, n: u64) {
        bump(&self.bytes_written, n);
    }

    pub(crate) fn snapshot(&self) -> ServeStats {
        let by_status = (FIRST_CODE..)
            .zip(&self.by_status)
            .map(|(code, c)| (code, c.load(Relaxed)))
            .filter(|&(_, n)| n > 0)
            .collect();
        let by_route =
            Route::ALL.iter().map(|r| (r.name(), self.by_route[r.index()].load(Relaxed))).collect();
        ServeStats {
            n_connections: self.n_connections.load(Relaxed),
            n_tls_connections: self.n_tls_connections.load(Relaxed),
            n_h2_connections: self.n_h2_connections.load(Relaxed),
            n_requests: self.n_requests.load(Relaxed),
            n_bad_requests: self.n_bad_requests.load(Relaxed),
            bytes_written: self.bytes_written.load(Relaxed),
            n_responses_by_class: self.n_responses_by_class.each_ref().map(|c| c.load(Relaxed)),
            by_status,
            by_route,
        }
    }
}

/// Sums the counters of all workers.
pub(crate) fn total(workers: &[WorkerCounters]) -> ServeStats {
    let mut stats = ServeStats::default();
    for worker in workers {
        stats.merge(&worker.snapshot());
    }
    stats
}

/// Single-writer increment; see [`WorkerCounters`].
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_counted_by_class_and_400_is_bad() {
        let c = WorkerCounters::default();
        for status in [200, 206, 304, 400, 404, 500] {
            c.add_response(status, Route::Static);
        }
        c.add_response(200, Route::NineByNine);
        c.add_connection();
        c.add_bytes(10);
        let s = total(std::slice::from_ref(&c));
        assert_eq!(s.n_requests, 7);
        assert_eq!(s.n_bad_requests, 1);
        assert_eq!(s.n_responses_by_class, [0, 3, 1, 2, 1]);
        assert_eq!(s.by_status.get(&200), Some(&2));
        assert_eq!(s.by_status.len(), 6);
        assert_eq!(s.by_route["static"], 6);
        assert_eq!(s.by_route["/9x9"], 1);
        assert_eq!(s.by_route["/echo"], 0);
        assert_eq!((s.n_connections, s.bytes_written), (1, 10));
    }

    #[test]
    fn json_names_every_counter() {
        let s = ServeStats {
            n_connections: 1,
            n_tls_connections: 11,
            n_h2_connections: 12,
            n_requests: 2,
            n_bad_requests: 3,
            bytes_written: 4,
            n_responses_by_class: [5, 6, 7, 8, 9],
            by_status: [(200, 6), (404, 8)].into(),
            by_route: [("static", 10), ("/9x9", 4)].into(),
        };
        assert_eq!(
            s.to_json(),
            "{\"connections\":1,\"tls_connections\":11,\"h2_connections\":12,\"requests\":2,\"bad_requests\":3,\"bytes_written\":4,\
             \"responses\":{\"1xx\":5,\"2xx\":6,\"3xx\":7,\"4xx\":8,\"5xx\":9},\
             \"status\":{\"200\":6,\"404\":8},\"routes\":{\"/9x9\":4,\"static\":10}}\n"
        );
    }
}
