//! What a run sends: one prebuilt request, or several with weights (a URL list, a
//! SPECweb99-like file mix). Every request's bytes are built once by the caller; a worker
//! picks one per request with its own generator ([`Rng`]) and an inverse-CDF lookup, so
//! choosing costs a few nanoseconds and no allocation.

use thiserror::Error;

use crate::rng::Rng;

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
        Workload { requests: vec![request], cdf: Vec::new() }
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
        Ok(Workload { requests, cdf })
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

#[cfg(test)]
mod tests {
    use super::*;

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
