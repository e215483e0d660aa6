//! One QUIC connection's UDP socket: connected to the server (so the kernel filters other
//! senders and no connection-ID demultiplexing is needed), non-blocking, in the worker's
//! mio loop, with the kernel's batching where it has it. It is opened, bound and set up where
//! every connection's socket is, socket.rs (`connect_udp`); this is its I/O.
//!
//! GSO (`UDP_SEGMENT`, Linux 4.18) sends up to [`MAX_GSO_SEGMENTS`] datagrams of one size in
//! one `sendmsg`; GRO (`UDP_GRO`, Linux 5.0) hands several received datagrams of one size
//! over in one message. Both are asked for and detected when the socket opens (socket.rs):
//! GSO by reading the option back, GRO by setting it. Receives are `recvmmsg` batches either
//! way: up to 8 messages of up to 64 KiB with GRO, up to 32 datagrams without. A send that GSO
//! fails with EIO (a device without checksum offload) turns GSO off for the socket and is
//! retried datagram by datagram, as quinn-udp does. Without GSO, queued datagrams leave in one
//! `sendmmsg`.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

use bytes::BytesMut;
use mio::event::Source;
use mio::{Interest, Registry, Token};

use super::udp_sys::{self, Batch, MAX_BATCH};

/// The most datagrams one GSO send carries here (the kernel's limit is 64, and 64 KiB).
pub(crate) const MAX_GSO_SEGMENTS: usize = 32;

/// A receive slot without GRO: a datagram (quinn advertises 1472 bytes as its largest).
const SLOT: usize = 2048;

/// A receive slot with GRO: the largest coalesced message.
const GRO_SLOT: usize = 64 * 1024;

/// Messages one `recvmmsg` takes with GRO: 512 KiB of a worker's pool. A server that
/// sends with GSO fills a message with many datagrams; one that does not sends one a
/// message, and then the batch is what saves system calls.
const GRO_BATCH: usize = 8;

/// Which of the kernel's UDP offloads to use when it has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offload {
    pub gso: bool,
    pub gro: bool,
}

impl Default for Offload {
    fn default() -> Self {
        Offload { gso: true, gro: true }
    }
}

pub(crate) struct UdpSocket {
    socket: mio::net::UdpSocket,
    /// The server's address: the one the socket is connected to.
    peer: SocketAddr,
    /// GSO in use (asked for, the kernel has it, and no send has failed with it).
    gso: bool,
    gro: bool,
    /// Path MTU discovery may run: the socket sets the don't-fragment bit.
    mtud: bool,
}

/// What a send did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Everything went.
    All,
    /// The socket's buffer is full: `n` datagrams went (the first ones); wait for writable.
    Blocked(usize),
}

impl UdpSocket {
    /// A socket that socket.rs opened, connected to `peer` and set up: `offload`, the
    /// offloads it found the kernel to have (of those asked for); `mtud`, whether the
    /// don't-fragment bit is set.
    pub(crate) fn new(
        socket: mio::net::UdpSocket,
        peer: SocketAddr,
        offload: Offload,
        mtud: bool,
    ) -> UdpSocket {
        UdpSocket { socket, peer, gso: offload.gso, gro: offload.gro, mtud }
    }

    pub(crate) fn peer(&self) -> SocketAddr {
        self.peer
    }

    pub(crate) fn gso(&self) -> bool {
        self.gso
    }

    pub(crate) fn gro(&self) -> bool {
        self.gro
    }

    pub(crate) fn mtud(&self) -> bool {
        self.mtud
    }

    #[cfg(test)]
    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Sends `buf` as datagrams of `segment` bytes each (the last may be shorter), or as
    /// one datagram: through GSO in one `sendmsg` when it is on, else through `sendmmsg`.
    pub(crate) fn send_segments(&mut self, buf: &[u8], segment: Option<usize>) -> io::Result<Sent> {
        let size = segment.filter(|&s| s > 0 && s < buf.len()).unwrap_or(buf.len().max(1));
        if size < buf.len() && self.gso {
            let size16 =
                u16::try_from(size).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            match udp_sys::send(self.fd(), buf, Some(size16)) {
                Ok(_) => return Ok(Sent::All),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Sent::Blocked(0)),
                // EIO: the device cannot segment (no checksum offload); EINVAL: a kernel
                // that refuses this size. Off for good, and sent one by one.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL)) => {
                    self.gso = false;
                }
                Err(e) => return Err(e),
            }
        }
        let mut sent = 0;
        let mut chunks = buf.chunks(size).peekable();
        while chunks.peek().is_some() {
            let mut batch: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
            let mut n = 0;
            for (slot, chunk) in batch.iter_mut().zip(chunks.by_ref()) {
                *slot = chunk;
                n += 1;
            }
            match self.send_batch(&batch[..n])? {
                Sent::All => sent += n,
                Sent::Blocked(k) => return Ok(Sent::Blocked(sent + k)),
            }
        }
        Ok(Sent::All)
    }

    /// Sends each of `datagrams` (at most 32) in one `sendmmsg`.
    pub(crate) fn send_batch(&mut self, datagrams: &[&[u8]]) -> io::Result<Sent> {
        let n = datagrams.len().min(MAX_BATCH);
        let mut sent = 0;
        while sent < n {
            match udp_sys::send_batch(self.fd(), &datagrams[sent..n]) {
                Ok(0) => return Ok(Sent::Blocked(sent)),
                Ok(k) => sent += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Sent::Blocked(sent)),
                Err(e) => return Err(e),
            }
        }
        Ok(Sent::All)
    }

    /// Receives what is waiting, up to one batch, into `pool` (see `udp_sys::recv`);
    /// each datagram is appended to `out`. `Batch::messages == 0`: nothing was waiting.
    pub(crate) fn recv(
        &mut self,
        pool: &mut BytesMut,
        out: &mut Vec<BytesMut>,
    ) -> io::Result<Batch> {
        let (slot, batch) = if self.gro { (GRO_SLOT, GRO_BATCH) } else { (SLOT, MAX_BATCH) };
        match udp_sys::recv(self.fd(), pool, slot, batch, out) {
            Ok(b) => Ok(b),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Batch::default()),
            Err(e) => Err(e),
        }
    }
}

impl std::os::fd::AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.socket.as_raw_fd()
    }
}

impl Source for UdpSocket {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        self.socket.register(r, t, i)
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        self.socket.reregister(r, t, i)
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        self.socket.deregister(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quic::udp_sys::UDP_GRO;
    use crate::socket::{connect_udp, Datagram};

    fn open(peer: SocketAddr, offload: Offload) -> UdpSocket {
        connect_udp(peer, None, Datagram { offload, buffer_size: None }).unwrap()
    }

    /// Two connected sockets on loopback, datagrams both ways, with and without the
    /// offloads: what goes in comes out, datagram for datagram.
    #[test]
    fn datagrams_cross_with_and_without_offload() {
        for offload in [Offload { gso: false, gro: false }, Offload::default()] {
            let server = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let mut client = open(server.local_addr().unwrap(), offload);
            server.connect(client.local_addr().unwrap()).unwrap();
            // 10 datagrams of 1200 bytes and a last one of 7, in one send.
            let mut buf = Vec::new();
            for i in 0..10u8 {
                buf.extend(std::iter::repeat_n(i, 1200));
            }
            buf.extend_from_slice(b"the end");
            assert_eq!(client.send_segments(&buf, Some(1200)).unwrap(), Sent::All);
            let mut got = vec![0u8; 2048];
            for i in 0..11usize {
                let n = server.recv(&mut got).unwrap();
                let want = if i == 10 { &b"the end"[..] } else { &buf[i * 1200..][..1200] };
                assert_eq!(&got[..n], want, "datagram {i} with {offload:?}");
            }
            // Back: five datagrams, received into the pool.
            for i in 0..5u8 {
                server.send(&vec![i; 1000 + usize::from(i)]).unwrap();
            }
            let mut pool = BytesMut::new();
            let mut out = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while out.len() < 5 && std::time::Instant::now() < deadline {
                client.recv(&mut pool, &mut out).unwrap();
            }
            let lens: Vec<_> = out.iter().map(|d| d.len()).collect();
            assert_eq!(lens, [1000, 1001, 1002, 1003, 1004], "{offload:?}");
            for (i, d) in out.iter().enumerate() {
                assert!(d.iter().all(|&b| usize::from(b) == i));
            }
        }
    }

    /// GSO out, GRO in: five datagrams leave in one `sendmsg` and arrive as one message,
    /// cut back into five datagrams of the pool.
    #[test]
    fn gso_batches_arrive_as_one_gro_message() {
        let receiver = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut sender = open(receiver.local_addr().unwrap(), Offload::default());
        receiver.connect(sender.local_addr().unwrap()).unwrap();
        let fd = receiver.as_raw_fd();
        udp_sys::set_int(fd, libc::SOL_UDP, UDP_GRO, 1).unwrap();
        let buf: Vec<u8> = (0..5 * 1000).map(|i| (i / 1000) as u8).collect();
        assert_eq!(sender.send_segments(&buf, Some(1000)).unwrap(), Sent::All);
        let mut pool = BytesMut::new();
        let mut out = Vec::new();
        let batch = udp_sys::recv(fd, &mut pool, GRO_SLOT, 1, &mut out).unwrap();
        assert_eq!(batch, Batch { messages: 1, datagrams: 5, truncated: 0 });
        for (i, d) in out.iter().enumerate() {
            assert_eq!(&d[..], &buf[i * 1000..][..1000]);
        }
        // The pool is reclaimed, not replaced, once the datagrams are gone.
        let start = out[0].as_ptr();
        out.clear();
        assert_eq!(sender.send_segments(&buf[..2000], Some(1000)).unwrap(), Sent::All);
        udp_sys::recv(fd, &mut pool, GRO_SLOT, 1, &mut out).unwrap();
        assert_eq!(out[0].as_ptr(), start, "the same memory again");
    }
}
