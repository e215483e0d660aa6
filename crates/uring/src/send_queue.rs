//! One connection's bytes on their way out through the ring: the buffer a send in flight
//! names, and the bytes given meanwhile, which go in the next send. The ring owns both, so a
//! caller's bytes are copied once, here, and no caller buffer has to outlive a call; and the
//! kernel reads a buffer that nothing writes until its send completes.
//!
//! It knows nothing of the ring: it says which bytes the next send entry names (a pointer
//! and a length, valid until that send's completion) and what follows a completion: the rest
//! after a short send, the bytes queued meanwhile, or done. The ring turns that into entries
//! and completions (ring.rs).

/// The most one send entry names (its length is a u32); more goes in the next entry.
const MAX_ENTRY: usize = 1 << 30;

/// A buffer larger than this is given back to the allocator once it is sent: one large
/// send does not hold its memory for the connection's life.
const KEEP: usize = 64 * 1024;

/// One token's outgoing bytes.
#[derive(Debug, Default)]
pub(super) struct SendQueue {
    /// The bytes the send in flight names, from `done` on. While `in_flight`, never written,
    /// moved out of or reallocated: the kernel may be reading it.
    out: Vec<u8>,
    /// Bytes of `out` already sent.
    done: usize,
    /// Bytes given while `out` is in flight: the next send's.
    next: Vec<u8>,
    in_flight: bool,
}

/// What follows a send's completion.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Send these bytes next (pointer, length; valid until that send completes); `short`
    /// when they are the rest of a send the kernel took only part of.
    More { chunk: (*const u8, u32), short: bool },
    /// Everything given so far went out.
    Done,
}

impl SendQueue {
    /// Where bytes given now go: behind the send in flight if there is one, else into the
    /// bytes the next [`SendQueue::start`] sends. Neither is read by the kernel now.
    pub(super) fn buffer(&mut self) -> &mut Vec<u8> {
        if self.in_flight {
            &mut self.next
        } else {
            &mut self.out
        }
    }

    /// Takes `bytes` (left empty): moved in whole where the bytes given now go is empty (the
    /// caller gets that buffer, and its room, in exchange), else copied behind what is there.
    pub(super) fn give(&mut self, bytes: &mut Vec<u8>) {
        let to = self.buffer();
        if to.is_empty() {
            std::mem::swap(to, bytes);
        } else {
            to.extend_from_slice(bytes);
        }
        bytes.clear();
    }

    /// Once everything went out: gives the caller's empty `into` the sent buffer's room, if
    /// it has more, so that one buffer goes back and forth between a connection and the
    /// ring instead of one on each side (10,000 idle connections: a request's worth each).
    pub(super) fn give_back(&mut self, into: &mut Vec<u8>) {
        if !self.in_flight && into.is_empty() && into.capacity() < self.out.capacity() {
            std::mem::swap(&mut self.out, into);
        }
    }

    /// The bytes a new send entry names, now in flight; None if a send is in flight already
    /// (what was given meanwhile follows its completion) or nothing waits.
    pub(super) fn start(&mut self) -> Option<(*const u8, u32)> {
        if self.in_flight || self.out.len() <= self.done {
            return None;
        }
        self.in_flight = true;
        Some(self.chunk())
    }

    pub(super) fn in_flight(&self) -> bool {
        self.in_flight
    }

    /// A send in flight completed with `n` bytes taken.
    pub(super) fn sent(&mut self, n: usize) -> Step {
        let asked = self.chunk().1 as usize;
        self.done += n.min(asked);
        if self.done < self.out.len() {
            return Step::More { chunk: self.chunk(), short: n < asked };
        }
        self.done = 0;
        self.out.clear();
        if !self.next.is_empty() {
            std::mem::swap(&mut self.out, &mut self.next);
            return Step::More { chunk: self.chunk(), short: false };
        }
        self.in_flight = false;
        if self.out.capacity() > KEEP {
            self.out.shrink_to(KEEP);
        }
        Step::Done
    }

    /// The send in flight failed: what was not sent is dropped (the connection is broken).
    pub(super) fn failed(&mut self) {
        self.out.clear();
        self.next.clear();
        self.done = 0;
        self.in_flight = false;
    }

    /// The connection is closed: everything unsent is dropped, and the buffer the kernel may
    /// still be reading, if a send is in flight, is handed out to be kept until that send's
    /// completion arrives.
    pub(super) fn close(&mut self) -> Option<Vec<u8>> {
        let in_flight = std::mem::take(&mut self.in_flight);
        self.next.clear();
        self.done = 0;
        if in_flight {
            Some(std::mem::take(&mut self.out))
        } else {
            self.out.clear();
            None
        }
    }

    /// The unsent rest of `out`, at most what one entry names.
    fn chunk(&self) -> (*const u8, u32) {
        let rest = &self.out[self.done.min(self.out.len())..];
        // The cast cannot truncate: the length is at most MAX_ENTRY, 2^30.
        (rest.as_ptr(), rest.len().min(MAX_ENTRY) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a chunk names, read back as the kernel would.
    fn bytes(chunk: (*const u8, u32)) -> Vec<u8> {
        // SAFETY: the chunk names bytes of the queue's `out`, which the test does not touch
        // between taking the chunk and reading it.
        unsafe { std::slice::from_raw_parts(chunk.0, chunk.1 as usize) }.to_vec()
    }

    #[test]
    fn a_short_send_continues_with_the_rest_and_done_comes_once() {
        let mut q = SendQueue::default();
        assert_eq!(q.start(), None, "nothing to send");
        q.buffer().extend_from_slice(b"hello world");
        let first = q.start().unwrap();
        assert_eq!(bytes(first), b"hello world");
        assert_eq!(q.start(), None, "one send in flight at a time");
        let Step::More { chunk, short } = q.sent(6) else { panic!("five bytes left") };
        assert!(short);
        assert_eq!(bytes(chunk), b"world");
        assert_eq!(q.sent(5), Step::Done);
        assert!(!q.in_flight());
        assert_eq!(q.start(), None, "all of it went");
    }

    #[test]
    fn bytes_given_during_a_send_go_in_the_next_one_together() {
        let mut q = SendQueue::default();
        q.buffer().extend_from_slice(b"one");
        let first = q.start().unwrap();
        q.buffer().extend_from_slice(b"two");
        q.buffer().extend_from_slice(b"three");
        assert_eq!(bytes(first), b"one", "the send in flight is untouched");
        let Step::More { chunk, short } = q.sent(3) else { panic!("the queued bytes follow") };
        assert!(!short);
        assert_eq!(bytes(chunk), b"twothree");
        assert_eq!(q.sent(8), Step::Done);
    }

    /// One buffer goes back and forth: given whole when nothing waits (no copy), copied
    /// behind bytes already waiting, and its room given back once all went out, never while
    /// the kernel may read it.
    #[test]
    fn a_buffer_is_moved_in_and_its_room_given_back_after_the_send() {
        let mut q = SendQueue::default();
        let mut link = Vec::with_capacity(256);
        link.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        let at = link.as_ptr();
        q.give(&mut link);
        assert!(link.is_empty() && link.capacity() == 0, "moved, not copied");
        let first = q.start().unwrap();
        assert_eq!(first.0, at, "the send names the link's own buffer");
        q.give_back(&mut link);
        assert_eq!(link.capacity(), 0, "in flight: the kernel may read it");
        // Given while the first is in flight: moved into the next send's place.
        let mut more = b"two".to_vec();
        q.give(&mut more);
        // And more behind it: copied, the caller keeps its buffer.
        let mut third = Vec::with_capacity(64);
        third.extend_from_slice(b"three");
        q.give(&mut third);
        assert!(third.is_empty() && third.capacity() == 64);
        let Step::More { chunk, .. } = q.sent(first.1 as usize) else { panic!("two follows") };
        assert_eq!(bytes(chunk), b"twothree");
        assert_eq!(q.sent(8), Step::Done);
        q.give_back(&mut link);
        assert!(link.is_empty() && link.capacity() >= 8, "the room comes back, empty");
        // A caller that has more room already keeps its own.
        let mut big = Vec::with_capacity(4096);
        q.give_back(&mut big);
        assert_eq!(big.capacity(), 4096);
    }

    #[test]
    fn a_failure_or_a_close_drops_what_is_unsent() {
        let mut q = SendQueue::default();
        q.buffer().extend_from_slice(b"abc");
        q.start().unwrap();
        q.buffer().extend_from_slice(b"def");
        q.failed();
        assert!(!q.in_flight());
        assert_eq!(q.start(), None);
        q.buffer().extend_from_slice(b"ghi");
        assert_eq!(q.close(), None, "nothing in flight: nothing to keep");
        q.buffer().extend_from_slice(b"jkl");
        q.start().unwrap();
        assert_eq!(q.close().as_deref(), Some(&b"jkl"[..]), "in flight: kept until it ends");
        assert!(!q.in_flight());
        assert_eq!(q.start(), None);
    }
}
