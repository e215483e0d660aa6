//! The streams of one HTTP/2 connection: a slab of at most `--streams` slots, reused, so
//! that opening a stream allocates nothing once the connection has carried its first full
//! set.
//!
//! Frames name their stream by id; a connection has few streams open (h2load's `-m`: 1 to
//! 100 in practice), and frames for one stream come in runs (HEADERS, then its DATA), so the
//! lookup checks the slot it found last and then scans the open ones: cheaper than hashing at
//! these sizes.

use crate::session::Exchange;

/// Where a stream stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The slot is free.
    Free,
    /// Request sent or being sent; response awaited or arriving.
    Open,
    /// Its outcome is decided and waits for the worker to record it; frames for its id are
    /// ignored from now on.
    Ended,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Stream {
    pub(crate) id: u32,
    pub(crate) phase: Phase,
    pub(crate) ex: Exchange,
    /// The connection's first stream: it alone carries the connect (and TLS) time.
    pub(crate) first: bool,
    /// A HEAD request: no body may come.
    pub(crate) head: bool,
    /// The final response head has arrived (later HEADERS are trailers).
    pub(crate) headers_done: bool,
    pub(crate) status: u16,
    pub(crate) content_length: Option<u64>,
    pub(crate) body: u64,
    pub(crate) bytes_written: u64,
    /// What the peer lets us send on it (request bodies).
    pub(crate) send_window: i64,
    /// What we still let the peer send on it.
    pub(crate) recv_window: i64,
    /// Bytes received on it not yet given back with WINDOW_UPDATE.
    pub(crate) unacked: u32,
    /// Request body bytes sent so far.
    pub(crate) body_sent: usize,
    /// The peer has closed its side (END_STREAM or RST_STREAM): no RST_STREAM owed.
    pub(crate) peer_closed: bool,
}

impl Stream {
    pub(crate) fn new(id: u32, ex: Exchange, first: bool, head: bool) -> Stream {
        Stream {
            id,
            phase: Phase::Open,
            ex,
            first,
            head,
            headers_done: false,
            status: 0,
            content_length: None,
            body: 0,
            bytes_written: 0,
            send_window: 0,
            recv_window: 0,
            unacked: 0,
            body_sent: 0,
            peer_closed: false,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Streams {
    slots: Vec<Stream>,
    free: Vec<usize>,
    open: usize,
    /// The slot the last lookup found.
    last: usize,
}

impl Streams {
    /// Streams open (request in flight, outcome not decided).
    #[inline]
    pub(crate) fn open(&self) -> usize {
        self.open
    }

    pub(crate) fn insert(&mut self, s: Stream) -> usize {
        self.open += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = s;
                self.last = i;
                i
            }
            None => {
                self.slots.push(s);
                self.last = self.slots.len() - 1;
                self.last
            }
        }
    }

    /// The open stream with this id.
    #[inline]
    pub(crate) fn find(&mut self, id: u32) -> Option<usize> {
        if let Some(s) = self.slots.get(self.last) {
            if s.id == id && s.phase == Phase::Open {
                return Some(self.last);
            }
        }
        let i = self.slots.iter().position(|s| s.id == id && s.phase == Phase::Open)?;
        self.last = i;
        Some(i)
    }

    #[inline]
    pub(crate) fn get(&self, slot: usize) -> Option<&Stream> {
        self.slots.get(slot)
    }

    /// Its outcome is decided: no more frames for it.
    #[inline]
    pub(crate) fn end(&mut self, slot: usize) {
        if let Some(s) = self.slots.get_mut(slot) {
            if s.phase == Phase::Open {
                s.phase = Phase::Ended;
                self.open -= 1;
            }
        }
    }

    /// Its outcome is recorded: the slot is free again.
    #[inline]
    pub(crate) fn release(&mut self, slot: usize) {
        self.end(slot);
        if let Some(s) = self.slots.get_mut(slot) {
            if s.phase == Phase::Ended {
                s.phase = Phase::Free;
                s.id = 0;
                self.free.push(slot);
            }
        }
    }

    /// Slots of the open streams.
    #[cfg(test)]
    pub(crate) fn open_slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots.iter().enumerate().filter(|(_, s)| s.phase == Phase::Open).map(|(i, _)| i)
    }

    /// Slots in use or not: every slot index is below this.
    #[inline]
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The open stream in `slot`, if it is one.
    #[inline]
    pub(crate) fn open_mut(&mut self, slot: usize) -> Option<&mut Stream> {
        self.slots.get_mut(slot).filter(|s| s.phase == Phase::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn stream(id: u32) -> Stream {
        Stream::new(id, Exchange::new(0, false, Instant::now()), false, false)
    }

    #[test]
    fn slots_are_reused_and_ended_streams_are_not_found() {
        let mut s = Streams::default();
        let a = s.insert(stream(1));
        let b = s.insert(stream(3));
        assert_eq!((s.find(1), s.find(3), s.find(5)), (Some(a), Some(b), None));
        assert_eq!(s.open(), 2);
        s.end(a);
        assert_eq!(s.find(1), None, "an ended stream takes no more frames");
        assert_eq!(s.open(), 1);
        s.release(a);
        let c = s.insert(stream(5));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(s.open_slots().collect::<Vec<_>>(), vec![a, b]);
        s.release(b);
        s.release(b);
        assert_eq!(s.open(), 1, "releasing twice changes nothing");
    }
}
