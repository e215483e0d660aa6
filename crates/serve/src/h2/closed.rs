//! The streams a connection closed lately, and how: RFC 9113 answers a frame on a closed
//! stream by the way it closed (§5.1). After the server sent RST_STREAM, the client may still
//! have frames on their way, and they MUST be ignored; after the client ended or reset the
//! stream, anything but WINDOW_UPDATE, RST_STREAM and PRIORITY is its mistake, answered with
//! STREAM_CLOSED (§5.1, §6.1). A stream id at or below the highest one opened that was never
//! opened (skipped, and so closed, §5.1.1) is not a closed stream the client may speak of:
//! HEADERS on it is a PROTOCOL_ERROR.
//!
//! Only the last [`REMEMBERED`] closes are kept, in a ring that allocates once: §5.1 lets an
//! endpoint limit how long it ignores frames after its RST_STREAM, and a client that speaks of
//! a stream closed hundreds of streams ago is treated as one that never opened it.

use std::collections::VecDeque;

/// Closed streams remembered: twice the streams a client may have open at once
/// (`MAX_CONCURRENT_STREAMS`), so that every stream of the last full window is there.
pub(super) const REMEMBERED: usize = 2 * super::MAX_CONCURRENT_STREAMS as usize;

/// How a stream closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Closed {
    /// The server sent RST_STREAM (refusing the stream, or ending it), or left it
    /// unprocessed after its GOAWAY: the client's later frames on it are ignored.
    ResetHere,
    /// The client ended it (END_STREAM both ways) or reset it: its later frames are errors.
    ByClient,
}

/// The last [`REMEMBERED`] closed streams, oldest first.
#[derive(Debug, Default)]
pub(super) struct ClosedStreams {
    ring: VecDeque<(u32, Closed)>,
}

impl ClosedStreams {
    /// Notes that stream `id`, which may have closed before (refused, or reset again after
    /// it ended), closed; it keeps its latest way (after a reset here, frames are ignored).
    pub(super) fn note(&mut self, id: u32, how: Closed) {
        if let Some(entry) = self.ring.iter_mut().rev().find(|(s, _)| *s == id) {
            entry.1 = how;
            return;
        }
        self.push(id, how);
    }

    /// Notes that stream `id`, open until now, closed: it cannot be in the ring (a stream id
    /// opens once), so nothing is searched on the way every request ends. The oldest is
    /// forgotten when the ring is full.
    pub(super) fn push(&mut self, id: u32, how: Closed) {
        debug_assert!(self.get(id).is_none(), "stream {id} closed twice");
        if self.ring.len() == REMEMBERED {
            self.ring.pop_front();
        }
        if self.ring.capacity() == 0 {
            self.ring.reserve_exact(REMEMBERED);
        }
        self.ring.push_back((id, how));
    }

    /// How stream `id` closed, if it closed lately.
    pub(super) fn get(&self, id: u32) -> Option<Closed> {
        self.ring.iter().rev().find(|(s, _)| *s == id).map(|&(_, how)| how)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_how_each_stream_closed() {
        let mut c = ClosedStreams::default();
        c.note(1, Closed::ByClient);
        c.note(3, Closed::ResetHere);
        assert_eq!(c.get(1), Some(Closed::ByClient));
        assert_eq!(c.get(3), Some(Closed::ResetHere));
        assert_eq!(c.get(5), None, "never closed");
        // A reset after the end: the client's late frames are ignored from now on.
        c.note(1, Closed::ResetHere);
        assert_eq!(c.get(1), Some(Closed::ResetHere));
    }

    #[test]
    fn forgets_the_oldest_past_its_bound() {
        let mut c = ClosedStreams::default();
        c.note(1, Closed::ByClient);
        let capacity = c.ring.capacity();
        for i in 1..REMEMBERED as u32 + 1 {
            c.push(2 * i + 1, Closed::ByClient);
        }
        assert_eq!(c.ring.len(), REMEMBERED);
        assert_eq!(c.get(1), None, "the oldest is forgotten");
        assert_eq!(c.get(3), Some(Closed::ByClient));
        assert_eq!(c.get(2 * REMEMBERED as u32 + 1), Some(Closed::ByClient));
        assert_eq!(c.ring.capacity(), capacity, "allocated once");
    }
}
