//! A provided-buffer ring (io_uring's `IORING_REGISTER_PBUF_RING`, kernel 5.19 on): receive
//! buffers the kernel takes one at a time as receives complete, instead of a buffer held by
//! every armed receive. With it a worker keeps a multishot receive armed on each connection
//! at no memory cost per connection: the ring is sized to what one loop turn's completions
//! hold, not to the connection count. A completion names the buffer it filled; the worker
//! reads it and gives it back ([`BufRing::recycle`]) before the turn ends.
//!
//! Memory: the entries (16 bytes each, the first page aligned, as the kernel requires) and
//! the buffers are anonymous mappings, so buffers never touched cost no resident memory.
//! The kernel reads the entries and writes the buffers until the group is unregistered, so
//! the mappings are freed only after [`BufRing::unregister`]; a ring dropped while still
//! registered leaks them rather than free memory the kernel may write.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::Submitter;

pub(crate) struct BufRing {
    entries: Mapping,
    bufs: Mapping,
    /// Buffers in the ring, a power of two.
    count: u16,
    buf_len: u32,
    /// Where the next buffer given back goes (the kernel's view is the shared tail).
    tail: u16,
    bgid: u16,
    registered: bool,
}

/// An anonymous private mapping, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn anonymous(len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh anonymous mapping: no address is given, no file, no existing memory
        // is touched; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        match NonNull::new(p.cast::<u8>()) {
            Some(ptr) => Ok(Mapping { ptr, len }),
            None => Err(io::ErrorKind::OutOfMemory.into()),
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` are this mapping's own, mapped once and unmapped once here;
        // BufRing drops a mapping only when the kernel no longer uses it (see BufRing's drop).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

impl BufRing {
    /// `count` buffers (a power of two, at most 32,768) of `buf_len` bytes each, for buffer
    /// group `bgid`, all of them in the ring. Not registered yet.
    pub(crate) fn new(count: u16, buf_len: u32, bgid: u16) -> io::Result<BufRing> {
        if !count.is_power_of_two() || count > 1 << 15 || buf_len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a buffer ring holds a power of two of buffers, at most 32,768, none empty",
            ));
        }
        let entries = Mapping::anonymous(usize::from(count) * size_of::<BufRingEntry>())?;
        let bufs = Mapping::anonymous(usize::from(count) * buf_len as usize)?;
        let mut ring = BufRing { entries, bufs, count, buf_len, tail: 0, bgid, registered: false };
        for bid in 0..count {
            ring.put(bid);
        }
        ring.publish();
        Ok(ring)
    }

    /// Hands the ring to the kernel as buffer group `bgid`.
    ///
    /// # Safety
    /// Until [`BufRing::unregister`] returns (or the io_uring is gone and no receive of it
    /// can still run), `self` must not be dropped: the kernel reads its entries and writes
    /// its buffers. (Dropping it registered leaks the memory instead of freeing it, so a
    /// mistake costs memory, not soundness; the contract is for the buffers' contents.)
    pub(crate) unsafe fn register(&mut self, submitter: &Submitter<'_>) -> io::Result<()> {
        let addr = self.entries.ptr.as_ptr() as u64;
        // SAFETY: the entries mapping is page aligned (mmap), holds `count` entries and
        // outlives the registration (the caller's contract, and the leak on drop).
        unsafe { submitter.register_buf_ring_with_flags(addr, self.count, self.bgid, 0)? };
        self.registered = true;
        Ok(())
    }

    /// Takes the ring back from the kernel. Call it once no receive using the group can
    /// still complete (each ended with a completion without `IORING_CQE_F_MORE`).
    pub(crate) fn unregister(&mut self, submitter: &Submitter<'_>) -> io::Result<()> {
        if self.registered {
            submitter.unregister_buf_ring(self.bgid)?;
            self.registered = false;
        }
        Ok(())
    }

    /// The `len` bytes a completion put in buffer `bid`; None if the completion's figures
    /// cannot be this ring's (a buffer it does not have, more bytes than a buffer holds).
    #[inline]
    pub(crate) fn buffer(&self, bid: u16, len: usize) -> Option<&[u8]> {
        if bid >= self.count || len > self.buf_len as usize {
            return None;
        }
        let offset = usize::from(bid) * self.buf_len as usize;
        // SAFETY: buffer `bid` lies within the buffers mapping (bid < count, len ≤ buf_len).
        // The kernel wrote its `len` bytes before posting the completion that named it, and
        // writes it again only after it is given back (`recycle`, which takes `&mut self`, so
        // not while this borrow lives). The other buffers, which the kernel may be writing,
        // are not part of this slice.
        Some(unsafe { std::slice::from_raw_parts(self.bufs.ptr.as_ptr().add(offset), len) })
    }

    /// Gives buffer `bid` back to the kernel, once its bytes have been read.
    #[inline]
    pub(crate) fn recycle(&mut self, bid: u16) {
        if bid < self.count {
            self.put(bid);
            self.publish();
        }
    }

    /// Gives buffer `bid` back without telling the kernel yet: a loop turn gives back every
    /// buffer its completions filled and then publishes them once ([`BufRing::publish`]),
    /// one release store a turn instead of one a buffer.
    #[inline]
    pub(crate) fn give_back(&mut self, bid: u16) {
        if bid < self.count {
            self.put(bid);
        }
    }

    /// Writes buffer `bid` into the entry at the local tail.
    fn put(&mut self, bid: u16) {
        let mask = self.count - 1;
        let base = self.entries.ptr.as_ptr().cast::<BufRingEntry>();
        let addr = self.bufs.ptr.as_ptr() as u64 + u64::from(bid) * u64::from(self.buf_len);
        // SAFETY: `tail & mask` < count, so the entry lies within the entries mapping. The
        // kernel reads only the entries between its head and the published tail, and this
        // one is past the published tail. The setters write the address, length and id
        // fields, never the `resv` field of entry 0, which is the shared tail.
        unsafe {
            let entry = &mut *base.add(usize::from(self.tail & mask));
            entry.set_addr(addr);
            entry.set_len(self.buf_len);
            entry.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes the entries written so far visible to the kernel.
    pub(crate) fn publish(&self) {
        let base = self.entries.ptr.as_ptr().cast::<BufRingEntry>();
        // SAFETY: `BufRingEntry::tail` points at entry 0's `resv` field, a u16 inside the
        // entries mapping, aligned as a u16 and shared with the kernel, which reads it
        // atomically: a release store orders the entries written before it.
        unsafe {
            let tail = BufRingEntry::tail(base).cast_mut();
            (*tail.cast::<AtomicU16>()).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        if self.registered {
            // The kernel may still write the buffers: never unmap them under it.
            let entries = std::mem::replace(&mut self.entries, dangling());
            let bufs = std::mem::replace(&mut self.bufs, dangling());
            std::mem::forget(entries);
            std::mem::forget(bufs);
        }
    }
}

/// A mapping of nothing, unmapped as nothing (munmap of length 0 fails harmlessly: EINVAL).
fn dangling() -> Mapping {
    Mapping { ptr: NonNull::dangling(), len: 0 }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    use io_uring::{cqueue, opcode, types, IoUring};

    use super::*;

    const RECV: u64 = 1;
    const CANCEL: u64 = 2;

    fn ring() -> IoUring {
        IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(16).unwrap()
    }

    /// Submits what is queued and waits (at most a second) for one completion or more.
    fn turn(ring: &mut IoUring) -> Vec<cqueue::Entry> {
        let ts = types::Timespec::from(Duration::from_secs(1));
        let args = types::SubmitArgs::new().timespec(&ts);
        match ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
            Err(e) => panic!("io_uring_enter: {e}"),
        }
        let got: Vec<_> = ring.completion().collect();
        assert!(!got.is_empty(), "no completion within a second");
        got
    }

    fn arm(ring: &mut IoUring, fd: i32, bgid: u16) {
        let recv = opcode::RecvMulti::new(types::Fd(fd), bgid).build().user_data(RECV);
        // SAFETY: the entry names only an fd that outlives the ring's use of it and a buffer
        // group the test keeps registered; no user memory is referenced by the entry itself.
        unsafe { ring.submission().push(&recv).unwrap() };
    }

    #[test]
    fn only_a_power_of_two_of_buffers_makes_a_ring() {
        assert!(BufRing::new(3, 64, 0).is_err());
        assert!(BufRing::new(4, 0, 0).is_err());
        let r = BufRing::new(4, 64, 7).unwrap();
        assert!(r.buffer(3, 64).is_some());
        assert!(r.buffer(4, 1).is_none(), "a buffer it does not have");
        assert!(r.buffer(0, 65).is_none(), "more than a buffer holds");
    }

    /// Two buffers of 64 bytes for 3,000 bytes: the multishot receive runs out of buffers
    /// (ENOBUFS, and no F_MORE: it has ended), the bytes wait in the socket, and a receive
    /// armed again once the buffers are back gets every one of them, in order.
    #[test]
    fn a_multishot_receive_that_runs_out_of_buffers_loses_no_byte() {
        let mut ring = ring();
        let mut bufs = BufRing::new(2, 64, 1).unwrap();
        // SAFETY: `bufs` outlives the registration: it is unregistered below.
        unsafe { bufs.register(&ring.submitter()).unwrap() };
        let (mut peer, ours) = UnixStream::pair().unwrap();
        let sent: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        peer.write_all(&sent).unwrap();
        arm(&mut ring, ours.as_raw_fd(), 1);
        let (mut got, mut starved, mut held) = (Vec::new(), 0, Vec::new());
        for _ in 0..1000 {
            if got.len() == sent.len() {
                break;
            }
            for cqe in turn(&mut ring) {
                assert_eq!(cqe.user_data(), RECV);
                if cqe.result() > 0 {
                    let bid = cqueue::buffer_select(cqe.flags()).expect("a buffer named");
                    got.extend_from_slice(bufs.buffer(bid, cqe.result() as usize).unwrap());
                    held.push(bid); // given back only when the receive has ended
                }
                if !cqueue::more(cqe.flags()) {
                    assert_eq!(cqe.result(), -libc::ENOBUFS, "it ended for want of buffers");
                    starved += 1;
                    for bid in held.drain(..) {
                        bufs.recycle(bid);
                    }
                    arm(&mut ring, ours.as_raw_fd(), 1);
                }
            }
        }
        assert_eq!(got, sent);
        assert!(starved > 0, "two buffers never ran out");
        // Cancelled, it ends with one last completion; then the group can go.
        let cancel = opcode::AsyncCancel::new(RECV).build().user_data(CANCEL);
        // SAFETY: a cancel entry references no memory.
        unsafe { ring.submission().push(&cancel).unwrap() };
        let mut ended = false;
        for _ in 0..10 {
            for cqe in turn(&mut ring) {
                if cqe.user_data() == RECV && !cqueue::more(cqe.flags()) {
                    ended = true;
                }
            }
            if ended {
                break;
            }
        }
        assert!(ended, "the cancelled receive never ended");
        bufs.unregister(&ring.submitter()).unwrap();
    }
}
