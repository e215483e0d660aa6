//! The server's counters: per-worker, exact, written by one thread only, and merged into
//! [`ServeStats`] when the server returns or when `/herd/stats` is asked. Counters by path come
//! later; this file does not decide what counts as a request (conn.rs does).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a server did, summed over all workers. Exact once [`Server::run`](crate::Server::run)
/// has returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Connections accepted.
    pub n_connections: u64,
    /// Responses started, one per request, including error responses to malformed or oversized
    /// requests. Equals the sum of `n_responses_by_class`.
    pub n_requests: u64,
    /// Responses with status 400. A subset of `n_requests` and of `n_responses_by_class[3]`.
    pub n_bad_requests: u64,
    /// Bytes written to sockets: heads and bodies.
    pub bytes_written: u64,
    /// Responses by status class: index 0 is 1xx, 1 is 2xx, …, 4 is 5xx.
    pub n_responses_by_class: [u64; 5],
}

impl ServeStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &ServeStats) {
        self.n_connections += other.n_connections;
        self.n_requests += other.n_requests;
        self.n_bad_requests += other.n_bad_requests;
        self.bytes_written += other.bytes_written;
        for (mine, theirs) in self.n_responses_by_class.iter_mut().zip(other.n_responses_by_class) {
            *mine += theirs;
        }
    }

    /// The counters as one JSON object, the body of `/herd/stats`.
    pub(crate) fn to_json(self) -> String {
        let [c1, c2, c3, c4, c5] = self.n_responses_by_class;
        format!(
            concat!(
                "{{\"connections\":{},\"requests\":{},\"bad_requests\":{},\"bytes_written\":{},",
                "\"responses\":{{\"1xx\":{},\"2xx\":{},\"3xx\":{},\"4xx\":{},\"5xx\":{}}}}}\n"
            ),
            self.n_connections,
            self.n_requests,
            self.n_bad_requests,
            self.bytes_written,
            c1,
            c2,
            c3,
            c4,
            c5
        )
    }
}

/// One worker's counters. Only that worker writes them, so an increment is a relaxed load and
/// store (a plain `mov`, no locked instruction); other threads may read them at any time for
/// `/herd/stats` and see each value whole. Aligned to 128 bytes so two workers never write the
/// same cache line (or adjacent-line prefetch pair).
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct WorkerCounters {
    n_connections: AtomicU64,
    n_requests: AtomicU64,
    n_bad_requests: AtomicU64,
    bytes_written: AtomicU64,
    n_responses_by_class: [AtomicU64; 5],
}

impl WorkerCounters {
    pub(crate) fn add_connection(&self) {
        bump(&self.n_connections, 1);
    }

    pub(crate) fn add_response(&self, status: u16) {
        bump(&self.n_requests, 1);
        if status == 400 {
            bump(&self.n_bad_requests, 1);
        }
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        bump(&self.n_responses_by_class[class], 1);
    }

    pub(crate) fn add_bytes(&self, n: u64) {
        bump(&self.bytes_written, n);
    }

    pub(crate) fn snapshot(&self) -> ServeStats {
        ServeStats {
            n_connections: self.n_connections.load(Relaxed),
            n_requests: self.n_requests.load(Relaxed),
            n_bad_requests: self.n_bad_requests.load(Relaxed),
            bytes_written: self.bytes_written.load(Relaxed),
            n_responses_by_class: self.n_responses_by_class.each_ref().map(|c| c.load(Relaxed)),
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
            c.add_response(status);
        }
        c.add_connection();
        c.add_bytes(10);
        let s = total(std::slice::from_ref(&c));
        assert_eq!(s.n_requests, 6);
        assert_eq!(s.n_bad_requests, 1);
        assert_eq!(s.n_responses_by_class, [0, 2, 1, 2, 1]);
        assert_eq!((s.n_connections, s.bytes_written), (1, 10));
    }

    #[test]
    fn json_names_every_counter() {
        let s = ServeStats {
            n_connections: 1,
            n_requests: 2,
            n_bad_requests: 3,
            bytes_written: 4,
            n_responses_by_class: [5, 6, 7, 8, 9],
        };
        assert_eq!(
            s.to_json(),
            "{\"connections\":1,\"requests\":2,\"bad_requests\":3,\"bytes_written\":4,\
             \"responses\":{\"1xx\":5,\"2xx\":6,\"3xx\":7,\"4xx\":8,\"5xx\":9}}\n"
        );
    }
}
