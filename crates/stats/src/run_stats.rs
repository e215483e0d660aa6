//! One worker's record of a run, and the merge of all workers' records.

use std::ops::AddAssign;

use crate::{Failures, LatencyHistogram, LengthTally, StatusCounts};

/// Everything a worker counts. Exact counters plus histograms; no per-request storage.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Complete responses of any status.
    pub responses: u64,
    pub failures: Failures,
    pub statuses: StatusCounts,
    /// Every byte read from sockets (heads, bodies, chunk framing; after TLS decryption).
    pub bytes_read: u64,
    /// Every byte of request written (after TLS: plaintext bytes).
    pub bytes_written: u64,
    /// Decoded body bytes of complete responses.
    pub body_bytes: u64,
    pub lengths: LengthTally,
    /// TCP connections that completed their handshake.
    pub connections: u64,
    /// Responses received on a connection that had already carried a response.
    pub reused: u64,
    /// Connect (+ TLS handshake) time of requests that opened a connection.
    pub connect: LatencyHistogram,
    /// From the request fully written to the first response byte.
    pub waiting: LatencyHistogram,
    /// From the start of the request (connect, or previous response on keep-alive) to the
    /// last response byte.
    pub total: LatencyHistogram,
}

impl RunStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Attempts that ended, whether in a response or a failure.
    pub fn attempts(&self) -> u64 {
        self.responses + self.failures.total()
    }
}

impl AddAssign<&RunStats> for RunStats {
    fn add_assign(&mut self, o: &RunStats) {
        self.responses += o.responses;
        self.failures += &o.failures;
        self.statuses += &o.statuses;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.body_bytes += o.body_bytes;
        self.lengths += &o.lengths;
        self.connections += o.connections;
        self.reused += o.reused;
        self.connect += &o.connect;
        self.waiting += &o.waiting;
        self.total += &o.total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FailureKind;

    #[test]
    fn merges_every_field() {
        let mut a = RunStats::new();
        a.responses = 2;
        a.bytes_read = 100;
        a.total.record_micros(10);
        let mut b = RunStats::new();
        b.responses = 3;
        b.failures.add(FailureKind::Timeout);
        b.bytes_read = 50;
        b.total.record_micros(20);
        a += &b;
        assert_eq!(a.responses, 5);
        assert_eq!(a.attempts(), 6);
        assert_eq!(a.bytes_read, 150);
        assert_eq!(a.total.len(), 2);
    }
}
