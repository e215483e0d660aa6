//! W3C Trace Context on every request (`--trace-context`): a `traceparent` field
//! `00-<trace id>-<span id>-<flags>`, one trace id for the run and a fresh span id for each
//! request, so that a server's traces and logs can be joined to the run that caused them.
//!
//! A request's bytes are built once, with the field in them and a span id of zeros; where
//! the span id is in them is found once (by the value's prefix, `00-<trace id>-`, unique in a
//! request), and each request's copy is stamped there with its own span id. HTTP/1 and HTTP/3 (QPACK without
//! Huffman coding) carry the value as it is; HTTP/2 appends the field as a literal that is
//! never indexed and not Huffman-coded ([`TraceContext::hpack_literal`]), since HPACK would
//! otherwise code it or put it in the dynamic table, where the next request would find the
//! last one's span id.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::rng::Rng;

/// The field's name, as HTTP/2 and HTTP/3 send it (lowercase) and HTTP/1 too.
pub const FIELD: &str = "traceparent";

/// The value's length: `00-` 32 hex `-` 16 hex `-` 2 hex.
pub const VALUE_LEN: usize = 55;

/// Where the span id starts in the value.
const SPAN_AT: usize = 36;

/// A run's trace context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: [u8; 16],
    sampled: bool,
}

impl TraceContext {
    /// A context for trace `trace_id` (never all zeros: W3C calls that invalid, so a zero id
    /// gets its last bit set).
    pub fn new(mut trace_id: [u8; 16], sampled: bool) -> TraceContext {
        if trace_id == [0; 16] {
            trace_id[15] = 1;
        }
        TraceContext { trace_id, sampled }
    }

    /// A new random trace id (the standard library's OS-seeded hasher keys).
    pub fn random(sampled: bool) -> TraceContext {
        let (hi, lo) = (os_random(), os_random());
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&hi.to_be_bytes());
        id[8..].copy_from_slice(&lo.to_be_bytes());
        TraceContext::new(id, sampled)
    }

    /// The trace id as 32 lowercase hex digits (what the JSON and the store record).
    pub fn trace_id(&self) -> String {
        hex(&self.trace_id)
    }

    pub fn sampled(&self) -> bool {
        self.sampled
    }

    /// The field's value with a span id of zeros, to be stamped per request.
    pub fn template(&self) -> String {
        format!("00-{}-0000000000000000-{:02x}", self.trace_id(), u8::from(self.sampled))
    }

    /// `00-<trace id>-`: what finds the value in a request's bytes.
    pub(crate) fn prefix(&self) -> Vec<u8> {
        format!("00-{}-", self.trace_id()).into_bytes()
    }

    /// The field as an HPACK literal never indexed, with a literal name, neither string
    /// Huffman-coded (RFC 7541 §6.2.3): 1 + 1 + 11 + 1 + 55 bytes; and where its span id is
    /// in it (known by construction, not searched for).
    pub(crate) fn hpack_literal(&self) -> (Vec<u8>, usize) {
        let mut out = Vec::with_capacity(2 + FIELD.len() + 1 + VALUE_LEN);
        out.push(0x10);
        out.push(FIELD.len() as u8);
        out.extend_from_slice(FIELD.as_bytes());
        out.push(VALUE_LEN as u8);
        let span_at = out.len() + SPAN_AT;
        out.extend_from_slice(self.template().as_bytes());
        (out, span_at)
    }
}

/// Span ids for one connection: the engine's splitmix64 from a seed no other connection of
/// the process has (an OS-random base for the process, and a counter), never zero.
#[derive(Debug)]
pub(crate) struct Spans(Rng);

/// Connections' seeds so far, in this process.
static NEXT: AtomicU64 = AtomicU64::new(0);

impl Spans {
    pub(crate) fn new() -> Spans {
        static BASE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let base = *BASE.get_or_init(os_random);
        // Seeds 2^32 apart (each connection sends far fewer requests): no two connections'
        // sequences overlap.
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Spans(Rng::new(base.wrapping_add(n << 32)))
    }

    fn next(&mut self) -> u64 {
        loop {
            // splitmix64 is a bijection of its counter: within 2^64 steps no value repeats.
            let z = self.0.next_u64();
            if z != 0 {
                return z;
            }
        }
    }

    /// Writes a new span id into `bytes` at `at` (where a template's 16 zeros are); false
    /// if the bytes are too short. On every traced request's path: a table lookup per digit,
    /// no formatting and no search (callgrind: `fmt` and a searcher per request cost 5,700
    /// instructions a request, this under a hundred).
    #[inline]
    pub(crate) fn stamp_at(&mut self, bytes: &mut [u8], at: usize) -> bool {
        let Some(span) = bytes.get_mut(at..at + 16) else { return false };
        hex_into(span, &self.next().to_be_bytes());
        true
    }
}

/// Where the span id of the value that `prefix` starts is in `bytes`, found once per
/// request of the workload (not per request sent).
pub(crate) fn span_offset(bytes: &[u8], prefix: &[u8]) -> Option<usize> {
    memchr::memmem::find(bytes, prefix).map(|at| at + prefix.len())
}

/// Lowercase hex of `bytes` into `out` (twice as long).
#[inline]
fn hex_into(out: &mut [u8], bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0xf)];
    }
}

/// 64 bits from the OS (the standard library's hasher keys, which it draws from getrandom).
fn os_random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(NEXT.load(Ordering::Relaxed));
    h.finish()
}

fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; bytes.len() * 2];
    hex_into(&mut out, bytes);
    String::from_utf8(out).unwrap_or_default()
}

/// The span id the value at the start of `value` carries (for tests and checks).
pub fn span_of(value: &str) -> Option<&str> {
    value.get(SPAN_AT..SPAN_AT + 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_is_w3c_s_shape() {
        let t = TraceContext::new([0xab; 16], true);
        let v = t.template();
        assert_eq!(v.len(), VALUE_LEN);
        assert_eq!(v, format!("00-{}-0000000000000000-01", "ab".repeat(16)));
        assert_eq!(TraceContext::new([1; 16], false).template().get(53..), Some("00"));
        assert_eq!(TraceContext::new([0; 16], true).trace_id(), format!("{}01", "0".repeat(30)));
        assert_eq!(span_of(&v), Some("0000000000000000"));
    }

    #[test]
    fn stamps_are_fresh_nonzero_and_only_where_the_value_is() {
        let t = TraceContext::new([7; 16], true);
        let request = format!("GET / HTTP/1.1\r\ntraceparent: {}\r\n\r\n", t.template());
        let mut spans = Spans::new();
        let mut other = Spans::new();
        let mut seen = std::collections::HashSet::new();
        for s in [&mut spans, &mut other] {
            for _ in 0..1000 {
                let mut copy = request.clone().into_bytes();
                let at = span_offset(&copy, &t.prefix()).unwrap();
                assert!(s.stamp_at(&mut copy, at));
                let text = String::from_utf8(copy).unwrap();
                let value = text.split("traceparent: ").nth(1).unwrap();
                let span = span_of(value).unwrap();
                assert_ne!(span, "0000000000000000");
                assert!(span.bytes().all(|b| b.is_ascii_hexdigit()));
                assert!(seen.insert(span.to_owned()), "span {span} twice");
                assert!(text.starts_with("GET / HTTP/1.1\r\ntraceparent: 00-0707"));
                assert!(text.ends_with("-01\r\n\r\n"));
            }
        }
        assert_eq!(span_offset(b"GET / HTTP/1.1\r\n\r\n", &t.prefix()), None);
        assert!(!spans.stamp_at(&mut [0u8; 20], 10), "too short");
    }

    #[test]
    fn the_hpack_literal_decodes_to_the_field() {
        let t = TraceContext::new([9; 16], false);
        let (block, span_at) = t.hpack_literal();
        assert_eq!(&block[span_at - 1..span_at + 17], b"-0000000000000000-");
        let mut got = Vec::new();
        herd_proto::h2::hpack::Decoder::new(4096, 100)
            .decode(&block, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        assert_eq!(got, [(FIELD.as_bytes().to_vec(), t.template().into_bytes())]);
    }
}
