//! The core every recorder embeds (herd ab's and herd run's): exact counters and the
//! histograms both keep, merged with `+=` after the run. Each recorder adds its own figures
//! beside it (ab: its samples, waiting times and body lengths; herd run: latency from the
//! send, first byte, queueing, per-group counts) and merges them the same way.

use std::ops::AddAssign;

use crate::{FailureKind, Failures, LatencyHistogram, StatusCounts};

/// One worker's counts of a run, or all workers' merged.
/// It travels between processes as JSON (transfer.rs): the agents of a spread run send theirs.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// Responses on connections that had not carried one before (each a new connection).
    pub connections: u64,
    /// Responses received on a connection that had already carried a response.
    pub reused: u64,
    /// Connect (+ TLS handshake) time of requests that opened a connection.
    pub connect: LatencyHistogram,
    /// From the request's intended send (in a closed loop: its start) to its last byte.
    pub total: LatencyHistogram,
}

impl RunStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one complete response (the histograms are the recorder's to fill: each
    /// records what it reports).
    #[inline]
    pub fn count_response(
        &mut self,
        status: u16,
        read: u64,
        written: u64,
        body: u64,
        reused: bool,
    ) {
        self.responses += 1;
        self.statuses.add(status);
        self.bytes_read += read;
        self.bytes_written += written;
        self.body_bytes += body;
        if reused {
            self.reused += 1;
        } else {
            self.connections += 1;
        }
    }

    /// Counts one failed request.
    #[inline]
    pub fn count_failure(&mut self, kind: FailureKind, read: u64, written: u64) {
        self.failures.add(kind);
        self.bytes_read += read;
        self.bytes_written += written;
    }

    /// Attempts that ended, whether in a response or a failure.
    pub fn attempts(&self) -> u64 {
        self.responses + self.failures.total()
    }
}

impl AddAssign<&RunStats> for RunStats {
    fn add_assign(&mut self, o: &RunStats) {
        // Destructured without `..`: a field added to RunStats does not compile until it is
        // merged here.
        let RunStats {
            responses,
            failures,
            statuses,
            bytes_read,
            bytes_written,
            body_bytes,
            connections,
            reused,
            connect,
            total,
        } = o;
        self.responses += responses;
        self.failures += failures;
        self.statuses += statuses;
        self.bytes_read += bytes_read;
        self.bytes_written += bytes_written;
        self.body_bytes += body_bytes;
        self.connections += connections;
        self.reused += reused;
        self.connect += connect;
        self.total += total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with every field set, each to something different.
    fn full() -> RunStats {
        let mut s = RunStats::new();
        s.count_response(200, 100, 40, 60, false);
        s.count_response(404, 90, 40, 50, true);
        s.count_failure(FailureKind::Timeout, 7, 40);
        s.connect.record_micros(30);
        s.total.record_micros(500);
        s.total.record_micros(900);
        s
    }

    #[test]
    fn merging_a_record_into_itself_doubles_every_field() {
        let one = full();
        let mut two = full();
        two += &one;
        // Destructured without `..`, so a new field fails to compile here until this test
        // checks that it is merged.
        let RunStats {
            responses,
            failures,
            statuses,
            bytes_read,
            bytes_written,
            body_bytes,
            connections,
            reused,
            connect,
            total,
        } = &two;
        assert_eq!(*responses, 2 * one.responses);
        assert_eq!(failures.total(), 2 * one.failures.total());
        assert_eq!(statuses.total(), 2 * one.statuses.total());
        assert_eq!(statuses.get(404), 2);
        assert_eq!(*bytes_read, 2 * one.bytes_read);
        assert_eq!(*bytes_written, 2 * one.bytes_written);
        assert_eq!(*body_bytes, 2 * one.body_bytes);
        assert_eq!(*connections, 2 * one.connections);
        assert_eq!(*reused, 2 * one.reused);
        assert_eq!(connect.len(), 2 * one.connect.len());
        assert_eq!(total.len(), 2 * one.total.len());
        assert_ne!(two, one);
        assert_eq!(two.attempts(), 6);
    }

    #[test]
    fn counts_responses_and_failures() {
        let s = full();
        assert_eq!((s.responses, s.connections, s.reused), (2, 1, 1));
        assert_eq!((s.bytes_read, s.bytes_written, s.body_bytes), (197, 120, 110));
        assert_eq!(s.failures.get(FailureKind::Timeout), 1);
        assert_eq!(s.attempts(), 3);
    }
}
