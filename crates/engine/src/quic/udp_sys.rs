//! The system calls of batched UDP I/O, and all of the QUIC driver's `unsafe`: socket
//! options as integers, `sendmsg` with a `UDP_SEGMENT` control message (GSO: one call, many
//! datagrams of one size), `sendmmsg` (many datagrams, one call, no GSO), and `recvmmsg`
//! with the `UDP_GRO` control message (one message may hold many datagrams of one size).
//!
//! The options are set where the socket is opened, socket.rs (`connect_udp`), through
//! [`set_int`] and [`get_int`]: it keeps no `unsafe` of its own for them.
//!
//! Safe wrappers over raw fds; every buffer they take is a Rust slice (or a `BytesMut`'s
//! spare capacity), and every length passed to the kernel is the length of the memory
//! behind it.

use std::io;
use std::mem::{size_of, zeroed, MaybeUninit};
use std::os::fd::RawFd;

use bytes::BytesMut;

/// Not in the libc crate for glibc targets: linux/udp.h.
pub(crate) const UDP_SEGMENT: libc::c_int = 103;
pub(crate) const UDP_GRO: libc::c_int = 104;

/// The most messages one `sendmmsg`/`recvmmsg` call takes here.
pub(super) const MAX_BATCH: usize = 32;

/// Room for one control message holding a `c_int` (`CMSG_SPACE(sizeof(int))`, 8-aligned).
const CMSG_INT_SPACE: usize = 24;

pub(crate) fn set_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` is a c_int that lives across the call, and its size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            std::ptr::addr_of!(value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(crate) fn get_int(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid for writes of the sizes the kernel is told.
    let rc = unsafe {
        libc::getsockopt(fd, level, name, std::ptr::addr_of_mut!(value).cast(), &mut len)
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A control message buffer with the alignment `cmsghdr` needs.
#[repr(C, align(8))]
struct Cmsg([u8; CMSG_INT_SPACE]);

/// Sends `buf` on a connected socket as one datagram, or, with `segment`, as datagrams of
/// `segment` bytes each (the last may be shorter) through GSO. Returns the bytes sent.
pub(super) fn send(fd: RawFd, buf: &[u8], segment: Option<u16>) -> io::Result<usize> {
    let mut iov = libc::iovec { iov_base: buf.as_ptr() as *mut libc::c_void, iov_len: buf.len() };
    let mut cmsg = Cmsg([0; CMSG_INT_SPACE]);
    // SAFETY: a zeroed msghdr is a valid "no name, no iov, no control" header.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(size) = segment {
        msg.msg_control = cmsg.0.as_mut_ptr().cast();
        msg.msg_controllen = CMSG_INT_SPACE as _;
        // SAFETY: msg_control points at CMSG_INT_SPACE bytes, room for one cmsghdr with a
        // c_int (u16 for UDP_SEGMENT, written as the kernel reads it) after it.
        unsafe {
            let hdr = libc::CMSG_FIRSTHDR(&msg);
            (*hdr).cmsg_level = libc::SOL_UDP;
            (*hdr).cmsg_type = UDP_SEGMENT;
            (*hdr).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(hdr).cast::<u16>(), size);
            msg.msg_controllen = libc::CMSG_SPACE(size_of::<u16>() as u32) as _;
        }
    }
    // SAFETY: msg points at live iovec and control buffers of the lengths given.
    let n = unsafe { libc::sendmsg(fd, &msg, 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Sends each of `datagrams` (at most [`MAX_BATCH`]) on a connected socket in one
/// `sendmmsg`. Returns how many were sent (they go in order).
pub(super) fn send_batch(fd: RawFd, datagrams: &[&[u8]]) -> io::Result<usize> {
    let n = datagrams.len().min(MAX_BATCH);
    // SAFETY: zeroed iovec and mmsghdr are valid empty values.
    let mut iovs: [libc::iovec; MAX_BATCH] = unsafe { zeroed() };
    let mut msgs: [libc::mmsghdr; MAX_BATCH] = unsafe { zeroed() };
    for i in 0..n {
        iovs[i] = libc::iovec {
            iov_base: datagrams[i].as_ptr() as *mut libc::c_void,
            iov_len: datagrams[i].len(),
        };
        msgs[i].msg_hdr.msg_iov = &mut iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: the first n headers point at live iovecs over the callers' slices.
    let sent = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), n as libc::c_uint, 0) };
    if sent < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(sent as usize)
    }
}

/// One received message: its length, and the size of the datagrams in it when GRO
/// coalesced several (None: one datagram).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Received {
    len: usize,
    segment: Option<usize>,
    /// The datagram was longer than its slot and was cut: it is dropped.
    truncated: bool,
}

/// What one [`recv`] took from the socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Batch {
    /// Messages the kernel returned (0: nothing was waiting).
    pub(super) messages: usize,
    /// Datagrams handed out (more than messages when GRO coalesced some).
    pub(super) datagrams: usize,
    /// Datagrams dropped for being longer than a slot.
    pub(super) truncated: usize,
}

/// Receives up to `batch` messages (at most [`MAX_BATCH`]) from a connected socket in one
/// `recvmmsg`, each into a `slot`-byte piece of `pool`'s spare capacity, and appends each
/// datagram to `out` as its own `BytesMut` split off `pool` (GRO's coalesced messages cut
/// at their segment size). No copy and, once `pool` has been reclaimed (every piece of
/// the previous batch dropped), no allocation.
///
/// `pool` must be empty; it is empty again after the call.
pub(super) fn recv(
    fd: RawFd,
    pool: &mut BytesMut,
    slot: usize,
    batch: usize,
    out: &mut Vec<BytesMut>,
) -> io::Result<Batch> {
    debug_assert!(pool.is_empty());
    pool.clear();
    let n = batch.clamp(1, MAX_BATCH);
    // Reclaims the whole buffer when the previous batch's pieces are all gone.
    pool.reserve(n * slot);
    let mut received = [Received::default(); MAX_BATCH];
    let got = {
        let spare = pool.spare_capacity_mut();
        recv_raw(fd, &mut spare[..n * slot], slot, &mut received[..n])?
    };
    let mut batch = Batch { messages: got, ..Batch::default() };
    for r in &received[..got] {
        // The slot as a handle of its own, cut at its capacity: the part of it the kernel
        // did not write is never claimed as bytes, so it needs no initializing.
        let rest = pool.split_off(slot);
        let mut message = std::mem::replace(pool, rest);
        let len = if r.truncated { 0 } else { r.len.min(slot) };
        batch.truncated += usize::from(r.truncated);
        // SAFETY: `message` starts where the kernel put this message, and it wrote its
        // first `len` bytes (`len <= slot`, the handle's capacity).
        unsafe { message.set_len(len) };
        if let Some(size) = r.segment {
            while message.len() > size {
                out.push(message.split_to(size));
                batch.datagrams += 1;
            }
        }
        if !message.is_empty() {
            out.push(message);
            batch.datagrams += 1;
        }
    }
    Ok(batch)
}

/// `recvmmsg` of up to `out.len()` messages, message `i` into `buf[i * slot..][..slot]`.
fn recv_raw(
    fd: RawFd,
    buf: &mut [MaybeUninit<u8>],
    slot: usize,
    out: &mut [Received],
) -> io::Result<usize> {
    let n = out.len().min(MAX_BATCH).min(buf.len() / slot.max(1));
    if n == 0 {
        return Ok(0);
    }
    // SAFETY: zeroed iovec and mmsghdr are valid empty values.
    let mut iovs: [libc::iovec; MAX_BATCH] = unsafe { zeroed() };
    let mut msgs: [libc::mmsghdr; MAX_BATCH] = unsafe { zeroed() };
    let mut cmsgs: [Cmsg; MAX_BATCH] = std::array::from_fn(|_| Cmsg([0; CMSG_INT_SPACE]));
    let base = buf.as_mut_ptr();
    for i in 0..n {
        // SAFETY: (i + 1) * slot <= buf.len(), by the choice of n.
        iovs[i] = libc::iovec { iov_base: unsafe { base.add(i * slot) }.cast(), iov_len: slot };
        msgs[i].msg_hdr.msg_iov = &mut iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_control = cmsgs[i].0.as_mut_ptr().cast();
        msgs[i].msg_hdr.msg_controllen = CMSG_INT_SPACE as _;
    }
    // SAFETY: the first n headers point at disjoint slots of `buf` and at their own control
    // buffers; the kernel writes at most iov_len and msg_controllen bytes into them.
    let got = unsafe {
        libc::recvmmsg(
            fd,
            msgs.as_mut_ptr(),
            n as libc::c_uint,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
        )
    };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    let got = got as usize;
    for i in 0..got {
        let hdr = &msgs[i].msg_hdr;
        let mut segment = None;
        // SAFETY: the kernel filled msg_control up to msg_controllen; CMSG_FIRSTHDR and
        // CMSG_NXTHDR stay inside it, and a UDP_GRO message's data is a c_int.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                    let size = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
                    segment = usize::try_from(size).ok().filter(|&s| s > 0);
                }
                c = libc::CMSG_NXTHDR(hdr, c);
            }
        }
        out[i] = Received {
            len: msgs[i].msg_len as usize,
            segment,
            truncated: hdr.msg_flags & libc::MSG_TRUNC != 0,
        };
    }
    Ok(got)
}
