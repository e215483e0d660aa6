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
    /// The response is not valid HTTP: a malformed HTTP/1 status line, header or chunk
    /// size, a contradictory Content-Length, or an HTTP/2 or HTTP/3 frame or header block
    /// that breaks its protocol.
    Malformed,
    /// The response head exceeded the head size limit (for HTTP/2 and HTTP/3: the decoded
    /// header block, however compressed, or a header block without end).
    HeadTooLarge,
    /// The server sent bytes after a complete, framed response that nobody asked for
    /// (a body longer than its Content-Length).
    Overrun,
    /// The server reset the request's stream (HTTP/2's RST_STREAM, HTTP/3's RESET_STREAM)
    /// with an error, not the refusal that makes herd send the request again.
    Reset,
    /// The server ended the connection with GOAWAY and an error, or with a GOAWAY that
    /// refused the request on a connection that had not answered any (a server that says
    /// "go away" at once would otherwise be retried without end).
    GoAway,
    /// The server sent control frames (SETTINGS, PING, empty frames, CONTINUATION)
    /// far beyond what the requests needed; herd closed the connection, as nghttp2 does
    /// against such floods.
    Flood,
}

impl FailureKind {
    /// Every kind, in a stable order (the order reports list them in).
    pub const ALL: [FailureKind; 12] = [
        FailureKind::Connect,
        FailureKind::Tls,
        FailureKind::Write,
        FailureKind::Receive,
        FailureKind::Timeout,
        FailureKind::Closed,
        FailureKind::Malformed,
        FailureKind::HeadTooLarge,
        FailureKind::Overrun,
        FailureKind::Reset,
        FailureKind::GoAway,
        FailureKind::Flood,
    ];

    /// The kinds an HTTP/1 run can meet (the first nine of [`FailureKind::ALL`]): what herd
    /// ab, which speaks HTTP/1 only as ab does, lists in its JSON.
    pub const HTTP1: &'static [FailureKind] = FailureKind::ALL.split_at(9).0;

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

    /// `n` failures of `kind` at once (counts received from another process).
    pub fn add_n(&mut self, kind: FailureKind, n: u64) {
        let c = &mut self.counts[kind.index()];
        *c = c.saturating_add(n);
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

    #[test]
    fn http1_kinds_end_before_http2_s_own() {
        assert_eq!(FailureKind::HTTP1.last(), Some(&FailureKind::Overrun));
        assert!(!FailureKind::HTTP1.contains(&FailureKind::Reset));
    }

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
