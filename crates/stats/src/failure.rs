//! The failure taxonomy: every way a request can fail, counted in a fixed array.
//!
//! A failure is data, not an error: the engine counts it and goes on. Kinds name what
//! went wrong on the wire, not how a particular report (ab's, herd run's) groups them.

use std::ops::AddAssign;

/// Why a request did not produce a complete, well-formed response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// The TCP connection could not be established (refused, unreachable, reset during
    /// the handshake, or no answer within the timeout while connecting).
    Connect,
    /// The TLS handshake or a TLS record failed.
    Tls,
    /// Writing the request failed (EPIPE, ECONNRESET while sending).
    Write,
    /// Reading the response failed with an error other than end of stream (ECONNRESET).
    Receive,
    /// No complete response within the request timeout; the request was aborted.
    Timeout,
    /// The server closed the connection before the response was complete: no status line
    /// at all, a truncated head, or a body shorter than its Content-Length or chunking.
    Closed,
    /// The response is not valid HTTP/1.x: a malformed status line, header or chunk size,
    /// or a contradictory Content-Length.
    Malformed,
    /// The response head exceeded the head size limit.
    HeadTooLarge,
    /// The server sent bytes after a complete, framed response that nobody asked for
    /// (a body longer than its Content-Length).
    Overrun,
}

impl FailureKind {
    /// Every kind, in a stable order (the order reports list them in).
    pub const ALL: [FailureKind; 9] = [
        FailureKind::Connect,
        FailureKind::Tls,
        FailureKind::Write,
        FailureKind::Receive,
        FailureKind::Timeout,
        FailureKind::Closed,
        FailureKind::Malformed,
        FailureKind::HeadTooLarge,
        FailureKind::Overrun,
    ];

    /// A short, stable, lowercase name (used in JSON and tables): its [`crate::Failure`]'s.
    pub fn name(self) -> &'static str {
        crate::Failure::from(self).as_str()
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Exact failure counts by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Failures {
    counts: [u64; FailureKind::ALL.len()],
}

impl Failures {
    pub fn add(&mut self, kind: FailureKind) {
        self.counts[kind.index()] += 1;
    }

    pub fn get(&self, kind: FailureKind) -> u64 {
        self.counts[kind.index()]
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Non-zero kinds, in [`FailureKind::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (FailureKind, u64)> + '_ {
        FailureKind::ALL.iter().map(|&k| (k, self.get(k))).filter(|&(_, n)| n > 0)
    }
}

impl AddAssign<&Failures> for Failures {
    fn add_assign(&mut self, other: &Failures) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_merges() {
        let mut a = Failures::default();
        a.add(FailureKind::Connect);
        a.add(FailureKind::Connect);
        let mut b = Failures::default();
        b.add(FailureKind::Overrun);
        a += &b;
        assert_eq!(a.get(FailureKind::Connect), 2);
        assert_eq!(a.get(FailureKind::Overrun), 1);
        assert_eq!(a.total(), 3);
        let listed: Vec<_> = a.iter().collect();
        assert_eq!(listed, vec![(FailureKind::Connect, 2), (FailureKind::Overrun, 1)]);
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = FailureKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FailureKind::ALL.len());
    }
}
