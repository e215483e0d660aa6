//! What a run sends: one prebuilt request, or several with weights (a URL list, a
//! SPECweb99-like file mix). Every request's bytes are built once by the caller; a worker
//! picks one per request with its own generator ([`Rng`]) and an inverse-CDF lookup, so
//! choosing costs a few nanoseconds and no allocation.

use thiserror::Error;

use crate::rng::Rng;
use crate::trace_context::{self, span_offset, TraceContext};

/// One request, exactly as written on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// Head and body.
    pub bytes: Vec<u8>,
    /// The same request asking the server to close (`Connection: close`), sent when it is
    /// the last one its connection will carry, so that the server closes first and
    /// TIME_WAIT stays on its side, as with a real client. None: `bytes` either way.
    pub closing: Option<Vec<u8>>,
    /// The request is HEAD: responses carry no body whatever their headers say.
    pub head: bool,
}

impl Prepared {
    pub fn new(bytes: Vec<u8>, head: bool) -> Prepared {
        Prepared { bytes, closing: None, head }
    }

    /// The bytes to send, `last` when no further request will follow on the connection.
    pub(crate) fn wire(&self, last: bool) -> &[u8] {
        match (&self.closing, last) {
            (Some(c), true) => c,
            _ => &self.bytes,
        }
    }
}

/// The requests of a run and how often each is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    requests: Vec<Prepared>,
    /// Cumulative weights, the last exactly 1; empty for a single request.
    cdf: Vec<f64>,
    /// `--trace-context`: every request carries a `traceparent`; its value's prefix; and
    /// where each request's span id is in its bytes and in its closing bytes, for each copy
    /// to be stamped there (trace_context.rs).
    trace: Option<Traced>,
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorkloadError {
    #[error("a workload needs at least one request")]
    Empty,
    #[error("request {index}'s weight {weight} is not a finite number ≥ 0")]
    BadWeight { index: usize, weight: f64 },
    #[error("the weights add up to {sum}; at least one must be more than 0")]
    NoWeight { sum: f64 },
}

impl Workload {
    /// Always the same request.
    pub fn single(request: Prepared) -> Workload {
        Workload { requests: vec![request], cdf: Vec::new(), trace: None }
    }

    /// Each request sent in proportion to its weight (weights need not add up to 1).
    pub fn weighted(entries: Vec<(Prepared, f64)>) -> Result<Workload, WorkloadError> {
        if entries.is_empty() {
            return Err(WorkloadError::Empty);
        }
        for (index, (_, w)) in entries.iter().enumerate() {
            if !w.is_finite() || *w < 0.0 {
                return Err(WorkloadError::BadWeight { index, weight: *w });
            }
        }
        let sum: f64 = entries.iter().map(|(_, w)| w).sum();
        if sum <= 0.0 || !sum.is_finite() {
            return Err(WorkloadError::NoWeight { sum });
        }
        let mut entries = entries;
        if entries.len() == 1 {
            let (only, _) = entries.remove(0);
            return Ok(Workload::single(only));
        }
        let mut acc = 0.0;
        let mut cdf = Vec::with_capacity(entries.len());
        let mut requests = Vec::with_capacity(entries.len());
        for (p, w) in entries {
            acc += w / sum;
            cdf.push(acc);
            requests.push(p);
        }
        // Rounding may leave the last a hair below 1; a draw of 0.99999… must still land.
        if let Some(last) = cdf.last_mut() {
            *last = 1.0;
        }
        Ok(Workload { requests, cdf, trace: None })
    }

    /// The same requests, each with a `traceparent` field for `trace` (its span id zeros,
    /// stamped per request), put last in its head.
    pub fn traced(mut self, trace: TraceContext) -> Workload {
        let line = format!("{}: {}\r\n", trace_context::FIELD, trace.template());
        for p in &mut self.requests {
            insert_field(&mut p.bytes, line.as_bytes());
            if let Some(c) = &mut p.closing {
                insert_field(c, line.as_bytes());
            }
        }
        let prefix = trace.prefix();
        let at = self
            .requests
            .iter()
            .map(|p| {
                let closing = p.closing.as_deref().and_then(|c| span_offset(c, &prefix));
                (span_offset(&p.bytes, &prefix), closing)
            })
            .collect();
        self.trace = Some(Traced { context: trace, prefix, at });
        self
    }

    /// The trace context every request carries, if any.
    pub fn trace(&self) -> Option<&TraceContext> {
        self.trace.as_ref().map(|t| &t.context)
    }

    /// What finds a request's `traceparent` value in its bytes, when there is one.
    pub(crate) fn trace_prefix(&self) -> Option<&[u8]> {
        self.trace.as_ref().map(|t| t.prefix.as_slice())
    }

    /// Where request `i`'s span id is in [`Prepared::wire`]`(last)`, when traced.
    #[inline]
    pub(crate) fn span_at(&self, i: usize, last: bool) -> Option<usize> {
        let (bytes, closing) = *self.trace.as_ref()?.at.get(i)?;
        match (last, closing) {
            (true, Some(c)) => Some(c),
            _ => bytes,
        }
    }

    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Prepared> {
        self.requests.get(i)
    }

    pub fn requests(&self) -> &[Prepared] {
        &self.requests
    }

    /// The share of requests that go to request `i`.
    pub fn weight(&self, i: usize) -> f64 {
        match (i, self.cdf.is_empty()) {
            (0, true) => 1.0,
            (_, true) => 0.0,
            (0, false) => self.cdf[0],
            (_, false) => match (self.cdf.get(i - 1), self.cdf.get(i)) {
                (Some(lo), Some(hi)) => hi - lo,
                _ => 0.0,
            },
        }
    }

    /// The request a draw lands on; no draw is taken for a single request.
    pub(crate) fn pick(&self, rng: &mut Rng) -> usize {
        if self.cdf.is_empty() {
            return 0;
        }
        let u = rng.unit();
        self.cdf.partition_point(|&c| c <= u).min(self.cdf.len() - 1)
    }
}

/// A traced workload's trace, and where each request's span id goes.
#[derive(Debug, Clone, PartialEq)]
struct Traced {
    context: TraceContext,
    prefix: Vec<u8>,
    /// Per request: in its bytes, in its closing bytes.
    at: Vec<(Option<usize>, Option<usize>)>,
}

/// Puts a header line (with its CRLF) last in an HTTP/1 request's head; nothing if the bytes
/// have no head's end.
fn insert_field(bytes: &mut Vec<u8>, line: &[u8]) {
    if let Some(end) = memchr::memmem::find(bytes, b"\r\n\r\n") {
        let at = end + 2;
        bytes.splice(at..at, line.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traced_workload_carries_the_field_last_in_every_head() {
        let mut closing = p("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        closing.closing = Some(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".to_vec());
        let t = TraceContext::new([0x11; 16], true);
        let w = Workload::single(closing).traced(t);
        let want = format!("traceparent: {}\r\n\r\n", t.template());
        let r = w.get(0).unwrap();
        assert!(r.wire(false).starts_with(b"GET / HTTP/1.1\r\nHost: a\r\ntraceparent: 00-1111"));
        assert!(r.wire(false).ends_with(want.as_bytes()));
        assert!(r.wire(true).ends_with(want.as_bytes()));
        assert!(String::from_utf8_lossy(r.wire(true)).contains("Connection: close\r\ntraceparent"));
        assert_eq!(w.trace(), Some(&t));
        assert_eq!(w.trace_prefix(), Some(t.prefix().as_slice()));
        for last in [false, true] {
            let at = w.span_at(0, last).unwrap();
            assert_eq!(&r.wire(last)[at - 1..at + 17], b"-0000000000000000-");
        }
    }

    fn p(s: &str) -> Prepared {
        Prepared::new(s.as_bytes().to_vec(), false)
    }

    #[test]
    fn weighted_draws_follow_weights() {
        let w =
            Workload::weighted(vec![(p("a"), 1.0), (p("b"), 3.0), (p("c"), 0.0), (p("d"), 6.0)])
                .unwrap();
        assert!((w.weight(0) - 0.1).abs() < 1e-12);
        assert!((w.weight(1) - 0.3).abs() < 1e-12);
        assert_eq!(w.weight(2), 0.0);
        assert!((w.weight(3) - 0.6).abs() < 1e-12);
        let mut rng = Rng::new(7);
        let mut counts = [0u32; 4];
        let n = 200_000;
        for _ in 0..n {
            counts[w.pick(&mut rng)] += 1;
        }
        assert_eq!(counts[2], 0, "a zero weight is never drawn");
        for (i, want) in [(0, 0.1), (1, 0.3), (3, 0.6)] {
            let got = f64::from(counts[i]) / f64::from(n);
            // 4 standard deviations of a binomial share at n = 200,000.
            let sd = (want * (1.0 - want) / f64::from(n)).sqrt();
            assert!((got - want).abs() < 4.0 * sd, "request {i}: {got} vs {want}");
        }
    }

    #[test]
    fn bad_weights_are_refused() {
        assert_eq!(Workload::weighted(vec![]), Err(WorkloadError::Empty));
        assert!(matches!(
            Workload::weighted(vec![(p("a"), f64::NAN)]),
            Err(WorkloadError::BadWeight { index: 0, .. })
        ));
        assert!(matches!(
            Workload::weighted(vec![(p("a"), 1.0), (p("b"), -1.0)]),
            Err(WorkloadError::BadWeight { index: 1, .. })
        ));
        assert!(matches!(
            Workload::weighted(vec![(p("a"), 0.0)]),
            Err(WorkloadError::NoWeight { .. })
        ));
    }

    #[test]
    fn single_needs_no_draw() {
        let w = Workload::single(p("a"));
        let mut rng = Rng::new(1);
        let before = rng.clone().next_u64();
        assert_eq!(w.pick(&mut rng), 0);
        assert_eq!(rng.next_u64(), before, "no number was drawn");
        assert_eq!(w.weight(0), 1.0);
    }

    #[test]
    fn closing_variant_only_for_the_last() {
        let mut r = p("GET / HTTP/1.1\r\n\r\n");
        r.closing = Some(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n".to_vec());
        assert_eq!(r.wire(false), b"GET / HTTP/1.1\r\n\r\n");
        assert!(r.wire(true).ends_with(b"close\r\n\r\n"));
    }
}
