//! HTTP/1.1 pipelining on one connection ([`crate::Schedule::Pipelined`]): the bytes of a
//! batch of requests written at once, and the requests queued behind the one whose response
//! is being read. Responses come back in request order, so the queue is first in, first out.
//!
//! Knows nothing of the quota or the schedule: the worker decides how many requests join a
//! batch, the HTTP/1 session (session/http1.rs) moves through it. The buffers keep their
//! capacity from batch to batch: no allocation once they have grown.

use std::collections::VecDeque;

#[derive(Debug, Default)]
pub(crate) struct Pipeline {
    /// The requests behind the current one: (index in the workload, the last its connection
    /// carries).
    queued: VecDeque<(usize, bool)>,
    /// The bytes of the whole batch, the current request's first. Empty when not pipelining.
    batch: Vec<u8>,
}

impl Pipeline {
    /// Starts a batch with the current request's bytes.
    #[inline]
    pub(crate) fn start(&mut self, first: &[u8]) {
        self.queued.clear();
        self.batch.clear();
        self.batch.extend_from_slice(first);
    }

    /// Adds a request behind the others.
    #[inline]
    pub(crate) fn push(&mut self, req: usize, last: bool, wire: &[u8]) {
        self.batch.extend_from_slice(wire);
        self.queued.push_back((req, last));
    }

    /// The next request whose response follows.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(usize, bool)> {
        self.queued.pop_front()
    }

    /// Requests still queued behind the current one.
    #[inline]
    pub(crate) fn queued(&self) -> usize {
        self.queued.len()
    }

    /// The batch's bytes; empty when the connection is not pipelining.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.batch
    }

    /// The batch's bytes from `from` on, to stamp a request's copy (trace_context.rs).
    #[inline]
    pub(crate) fn bytes_mut_from(&mut self, from: usize) -> &mut [u8] {
        self.batch.get_mut(from..).unwrap_or_default()
    }

    #[inline]
    pub(crate) fn clear(&mut self) {
        self.queued.clear();
        self.batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_its_requests_in_order() {
        let mut p = Pipeline::default();
        p.start(b"A");
        p.push(1, false, b"B");
        p.push(2, true, b"C");
        assert_eq!(p.bytes(), b"ABC");
        assert_eq!(p.queued(), 2);
        assert_eq!(p.pop(), Some((1, false)));
        assert_eq!(p.pop(), Some((2, true)));
        assert_eq!(p.pop(), None);
        p.start(b"D");
        assert_eq!((p.bytes(), p.queued()), (&b"D"[..], 0));
        p.clear();
        assert!(p.bytes().is_empty());
    }
}
