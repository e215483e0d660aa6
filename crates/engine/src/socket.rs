//! A connection's socket, and how one is opened: TCP, or a Unix-domain stream for servers that
//! listen on a path (`--unix-socket`), for HTTP/1 and HTTP/2; connected UDP for HTTP/3's QUIC.
//! Streams are read and written with raw read(2)/write(2) through their fd (transport.rs),
//! registered with epoll the same way, and fed to rustls as `Read + Write`; a UDP socket is
//! the QUIC driver's (quic/udp.rs: batched sends and receives).
//!
//! [`connect`] is the one way a run's connections open, whatever they carry ([`Carrier`]):
//! HTTP/1's worker, the multiplexed worker's HTTP/2 and HTTP/3 connections, and the
//! connections opened ahead (warm.rs). Connection k gets the target's address and, with
//! `--bind`, the source addresses taken round robin (k mod their count): one choice, made here
//! for every protocol, cannot drift (before, HTTP/3 opened its own socket, chose its own
//! address and bound the wildcard, ignoring `--bind`). Every TCP socket sets `TCP_NODELAY`, so
//! that no write waits for Nagle's algorithm (docs/socket-options.md), and binds with
//! `IP_BIND_ADDRESS_NO_PORT`. A UDP socket binds port 0 of its source address, connects (so the
//! kernel filters other senders; the connect completes at once, no packet leaves), and asks for
//! what QUIC needs of the kernel ([`connect_udp`]: path MTU probing, GSO, GRO).

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use socket2::{Domain, Protocol, Type};

use crate::quic::udp::UdpSocket;
use crate::quic::udp_sys::{self, UDP_GRO, UDP_SEGMENT};
use crate::quic::Offload;
use crate::throttle::Throttle;
use crate::RunSpec;

pub(crate) enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Socket::Tcp(s) => s.take_error(),
            Socket::Unix(s) => s.take_error(),
        }
    }
}

impl From<Socket> for std::os::fd::OwnedFd {
    fn from(s: Socket) -> std::os::fd::OwnedFd {
        match s {
            Socket::Tcp(s) => s.into(),
            Socket::Unix(s) => s.into(),
        }
    }
}

impl AsFd for Socket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Socket::Tcp(s) => s.as_fd(),
            Socket::Unix(s) => s.as_fd(),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }

    /// One writev(2) for what rustls has queued: a handshake flight (ChangeCipherSpec and
    /// Finished) or several records leave in one call, as OpenSSL's do. Without it, std's
    /// default wrote the first buffer only, one system call and one small segment per record.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write_vectored(bufs),
            Socket::Unix(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Source for Socket {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.register(r, t, i),
            Socket::Unix(s) => s.register(r, t, i),
        }
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.reregister(r, t, i),
            Socket::Unix(s) => s.reregister(r, t, i),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.deregister(r),
            Socket::Unix(s) => s.deregister(r),
        }
    }
}

/// What a connection's socket carries, and so how it opens and what opening it gives: a type
/// per carrier rather than an enum, so that each caller gets the socket it can use, with no
/// arm for the other kind.
pub(crate) trait Carrier {
    /// What [`connect`] hands back.
    type Opened;
    /// Opens toward the Unix socket at `path`.
    fn unix(self, path: &Path) -> io::Result<Self::Opened>;
    /// Opens toward `to` from `from` (None: the kernel chooses).
    fn ip(self, spec: &RunSpec, to: &SocketAddr, from: Option<IpAddr>) -> io::Result<Self::Opened>;
}

/// A byte stream: TCP (plain or TLS), or a Unix-domain stream. Opens as `(socket, true while
/// the connect is still in progress)`.
pub(crate) struct Stream;

impl Carrier for Stream {
    type Opened = (Socket, bool);

    fn unix(self, path: &Path) -> io::Result<(Socket, bool)> {
        connect_unix(path)
    }

    // Inlined, with connect, connect_tcp and tcp_socket: a connection per request opens one
    // each time, and the calls' set-up was 1-2 % of that path's instructions
    // (bench/instructions.sh).
    #[inline(always)]
    fn ip(
        self,
        spec: &RunSpec,
        to: &SocketAddr,
        from: Option<IpAddr>,
    ) -> io::Result<(Socket, bool)> {
        connect_tcp(to, spec, from)
    }
}

/// A stream for io_uring's connect: the socket made, optioned and bound as [`Stream`]'s, left
/// unconnected, with the address the ring is to connect it to. A Unix socket connects at once
/// here (a local connect does not wait) and has no address to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RingStream;

impl Carrier for RingStream {
    type Opened = (Socket, Option<SocketAddr>);

    fn unix(self, path: &Path) -> io::Result<(Socket, Option<SocketAddr>)> {
        Ok((connect_unix(path)?.0, None))
    }

    fn ip(
        self,
        spec: &RunSpec,
        to: &SocketAddr,
        from: Option<IpAddr>,
    ) -> io::Result<(Socket, Option<SocketAddr>)> {
        let sock = tcp_socket(to, spec, from)?;
        let std_stream: std::net::TcpStream = sock.into();
        Ok((Socket::Tcp(TcpStream::from_std(std_stream)), Some(*to)))
    }
}

/// Datagrams: a connected UDP socket for QUIC, with what QUIC's configuration asks of it.
/// Opens connected (a UDP connect completes at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Datagram {
    /// The kernel's offloads to use where it has them.
    pub(crate) offload: Offload,
    /// SO_SNDBUF and SO_RCVBUF (`QuicSettings::buffer_size`).
    pub(crate) buffer_size: Option<u32>,
}

impl Carrier for Datagram {
    type Opened = UdpSocket;

    /// RunSpec::check refuses HTTP/3 to a Unix socket; this is never reached by a run.
    fn unix(self, _path: &Path) -> io::Result<UdpSocket> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "QUIC does not run over a Unix socket"))
    }

    fn ip(self, _spec: &RunSpec, to: &SocketAddr, from: Option<IpAddr>) -> io::Result<UdpSocket> {
        connect_udp(*to, from, self)
    }
}

/// Opens run-wide connection `conn` to the run's target: its Unix socket, or its resolved
/// address `addr` (the last one past the end of the list), from the connection's source
/// address (`--bind`, taken in turn). A stream's connect may still be in progress; a
/// datagram socket's is done.
#[inline(always)]
pub(crate) fn connect<C: Carrier>(
    spec: &RunSpec,
    addr: usize,
    conn: usize,
    carrier: C,
) -> io::Result<C::Opened> {
    if let Some(path) = &spec.target.unix {
        return carrier.unix(path);
    }
    // Where run-wide connection `conn` goes: the target's resolved address `addr` (the last
    // one past the end of the list), lent rather than copied; run_all refused an empty list.
    let addrs = &spec.target.addrs;
    let Some(to) = addrs.get(addr).or(addrs.last()) else {
        return Err(io::Error::from(io::ErrorKind::AddrNotAvailable));
    };
    // From its source address (`--bind`, taken in turn; None: the kernel chooses).
    carrier.ip(spec, to, bind_for(&spec.socket.bind, conn))
}

/// The source address of run-wide connection `k`.
fn bind_for(bind: &[IpAddr], k: usize) -> Option<IpAddr> {
    match bind.len() {
        0 => None,
        n => bind.get(k % n).copied(),
    }
}

/// Starts connecting to the Unix socket at `path`; always reported as in progress, so the
/// worker waits for the writable edge epoll raises at once when it is connected.
fn connect_unix(path: &Path) -> io::Result<(Socket, bool)> {
    Ok((Socket::Unix(UnixStream::connect(path)?), true))
}

/// Creates a non-blocking TCP socket and starts connecting; `true` when still in progress.
#[inline(always)]
fn connect_tcp(
    addr: &SocketAddr,
    spec: &RunSpec,
    bind: Option<IpAddr>,
) -> io::Result<(Socket, bool)> {
    let sock = tcp_socket(addr, spec, bind)?;
    let in_progress = match sock.connect(&(*addr).into()) {
        Ok(()) => false,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => true,
        Err(e) => return Err(e),
    };
    let std_stream: std::net::TcpStream = sock.into();
    Ok((Socket::Tcp(TcpStream::from_std(std_stream)), in_progress))
}

/// A non-blocking TCP socket toward `addr`, its options set and bound to `bind` if given.
#[inline(always)]
fn tcp_socket(
    addr: &SocketAddr,
    spec: &RunSpec,
    bind: Option<IpAddr>,
) -> io::Result<socket2::Socket> {
    let sock = socket2::Socket::new(
        Domain::for_address(*addr),
        Type::STREAM.nonblocking().cloexec(),
        Some(Protocol::TCP),
    )?;
    // Every connection, plain or TLS, HTTP/1 or HTTP/2: Nagle's algorithm holds a small write
    // while an earlier one is unacknowledged, until the server's delayed ACK (40 ms on Linux).
    // Over TLS that is every new connection: the request follows the handshake's Finished
    // before the server has acknowledged it (44 ms per request against nginx before this was
    // set here, where ab took 1.6 ms). HTTP/2 writes frames behind unacknowledged ones all the
    // time. wrk and h2load set it too (docs/socket-options.md). A failure is an error like the
    // socket's own: a run whose figures would silently carry the stall is not one to start.
    sock.set_nodelay(true)?;
    if let Some(size) = spec.socket.buffer_size {
        sock.set_send_buffer_size(size as usize)?;
        sock.set_recv_buffer_size(size as usize)?;
    } else if let Some(rate) = spec.receive_rate {
        sock.set_recv_buffer_size(Throttle::receive_buffer(rate))?;
    }
    if let Some(ip) = bind {
        no_port_at_bind(&sock);
        sock.bind(&SocketAddr::new(ip, 0).into())?;
    }
    Ok(sock)
}

/// IP_BIND_ADDRESS_NO_PORT: bind() fixes only the address and connect() picks the port
/// for the 4-tuple, so each source address has the whole ephemeral range per destination
/// instead of one shared range reserved at bind(). Best effort: without it (an old kernel)
/// bind() reserves a port as before.
fn no_port_at_bind(sock: &socket2::Socket) {
    use std::os::fd::AsRawFd;
    let one: libc::c_int = 1;
    // SAFETY: a valid socket fd, and a c_int option value of the size passed.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            std::ptr::addr_of!(one).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// A non-blocking UDP socket connected to `peer`, bound to port 0 of `source` when given (else
/// connect(2) binds the routed source and a port), with `opts`' buffer sizes, and what QUIC
/// asks of the kernel: no fragmentation (so quinn can probe the path MTU), GSO where the
/// kernel has it (read back: setting it needs a segment size), GRO where it takes it. Not
/// only a run's: [`crate::quic::H3Conn::connect`] opens here too.
pub(crate) fn connect_udp(
    peer: SocketAddr,
    source: Option<IpAddr>,
    opts: Datagram,
) -> io::Result<UdpSocket> {
    let sock = socket2::Socket::new(
        Domain::for_address(peer),
        Type::DGRAM.nonblocking().cloexec(),
        Some(Protocol::UDP),
    )?;
    if let Some(size) = opts.buffer_size {
        sock.set_send_buffer_size(size as usize)?;
        sock.set_recv_buffer_size(size as usize)?;
    }
    if let Some(ip) = source {
        // Port 0: the kernel picks one at bind. A source of the other family than the
        // peer's fails here, as TCP's bind does: the connection fails to open, and nothing
        // leaves from another address instead.
        sock.bind(&SocketAddr::new(ip, 0).into())?;
    }
    sock.connect(&peer.into())?;
    use std::os::fd::AsRawFd;
    let fd = sock.as_raw_fd();
    // Don't fragment, and don't let the kernel's path MTU cache cap the datagrams: quinn
    // probes the path itself (and needs unfragmented datagrams to do so).
    let mtud = match peer {
        SocketAddr::V4(_) => {
            udp_sys::set_int(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, libc::IP_PMTUDISC_PROBE)
        }
        SocketAddr::V6(_) => udp_sys::set_int(
            fd,
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU_DISCOVER,
            libc::IPV6_PMTUDISC_PROBE,
        ),
    }
    .is_ok();
    let gso = opts.offload.gso && udp_sys::get_int(fd, libc::SOL_UDP, UDP_SEGMENT).is_ok();
    let gro = opts.offload.gro && udp_sys::set_int(fd, libc::SOL_UDP, UDP_GRO, 1).is_ok();
    let std_socket: std::net::UdpSocket = sock.into();
    let socket = mio::net::UdpSocket::from_std(std_socket);
    Ok(UdpSocket::new(socket, peer, Offload { gso, gro }, mtud))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quic::udp_sys::get_int;
    use crate::target::Target;

    fn datagram(offload: Offload) -> Datagram {
        Datagram { offload, buffer_size: None }
    }

    /// A run to a UDP listener on 127.0.0.1, its connections from `bind` in turn.
    fn spec(port: u16, bind: &[&str]) -> RunSpec {
        let mut spec = RunSpec::for_tests(Target::loopback_for_tests(port));
        spec.socket.bind = bind.iter().map(|a| a.parse().unwrap()).collect();
        spec
    }

    /// A datagram from `sock` as the listener sees it: its source address.
    fn source_seen(listener: &std::net::UdpSocket, sock: &mut UdpSocket) -> SocketAddr {
        use crate::quic::udp::Sent;
        assert_eq!(sock.send_segments(b"hello", None).unwrap(), Sent::All);
        let mut buf = [0u8; 64];
        let (n, from) = listener.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
        from
    }

    /// Each run-wide connection's UDP socket leaves from its `--bind` address, taken in
    /// turn, with a port of its own, connected to the target: the server sees the source
    /// asked for, and the socket says the same.
    #[test]
    fn datagram_sockets_leave_from_each_bind_address_connected_to_the_target() {
        let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        listener.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let to = listener.local_addr().unwrap();
        let spec = spec(to.port(), &["127.0.0.2", "127.0.0.3"]);
        for (conn, want) in [(0, "127.0.0.2"), (1, "127.0.0.3"), (2, "127.0.0.2")] {
            let mut sock = connect(&spec, 0, conn, datagram(Offload::default())).unwrap();
            let local = sock.local_addr().unwrap();
            assert_eq!(local.ip().to_string(), want, "connection {conn}");
            assert_ne!(local.port(), 0);
            assert_eq!(sock.peer(), to);
            assert_eq!(source_seen(&listener, &mut sock), local, "connection {conn}");
        }
        // Past the end of the address list: the last address, as for TCP.
        let sock = connect(&spec, 5, 0, datagram(Offload::default())).unwrap();
        assert_eq!(sock.peer(), to);
    }

    /// Without `--bind` the kernel chooses the source at connect(2): on loopback, the
    /// target's own address; and the socket is connected: another sender's datagram is
    /// filtered by the kernel.
    #[test]
    fn without_bind_the_kernel_chooses_and_only_the_peer_is_heard() {
        let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        listener.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let to = listener.local_addr().unwrap();
        let mut sock = connect(&spec(to.port(), &[]), 0, 0, datagram(Offload::default())).unwrap();
        let local = sock.local_addr().unwrap();
        assert_eq!(local.ip().to_string(), "127.0.0.1");
        assert_ne!(local.port(), 0);
        assert_eq!(source_seen(&listener, &mut sock), local);
        let stranger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        stranger.send_to(b"not you", local).unwrap();
        listener.send_to(b"reply", local).unwrap();
        let mut pool = bytes::BytesMut::new();
        let mut out = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while out.is_empty() && std::time::Instant::now() < deadline {
            sock.recv(&mut pool, &mut out).unwrap();
        }
        let got: Vec<&[u8]> = out.iter().map(|d| &d[..]).collect();
        assert_eq!(got, [&b"reply"[..]]);
    }

    /// What QUIC asks of the kernel, read back from the socket: no fragmentation (path MTU
    /// probing), GRO on, GSO found, the buffer sizes asked for; and neither offload when
    /// neither is asked for. Linux 5.0+ has both offloads, and herd's machines are newer: a
    /// kernel without them still works, but its figures would not be comparable, so say so.
    #[test]
    fn udp_options_are_set_up_as_asked() {
        let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap();
        let opts = Datagram { offload: Offload::default(), buffer_size: Some(256 * 1024) };
        let sock = connect_udp(to, None, opts).unwrap();
        assert!(sock.gso() && sock.gro(), "UDP GSO/GRO missing on this kernel");
        assert!(sock.mtud());
        let fd = sock.fd();
        assert_eq!(get_int(fd, libc::SOL_UDP, UDP_GRO).unwrap(), 1);
        assert_eq!(
            get_int(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER).unwrap(),
            libc::IP_PMTUDISC_PROBE
        );
        // The kernel doubles what it is given (for its bookkeeping), within its limits.
        let rcvbuf = get_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF).unwrap();
        let sndbuf = get_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF).unwrap();
        assert!(rcvbuf >= 256 * 1024 && sndbuf >= 256 * 1024, "{rcvbuf} {sndbuf}");
        let off = connect_udp(to, None, datagram(Offload { gso: false, gro: false })).unwrap();
        assert!(!off.gso() && !off.gro());
        assert_eq!(get_int(off.fd(), libc::SOL_UDP, UDP_GRO).unwrap(), 0);
    }

    /// IPv6: the same set-up on ::1, path MTU probing through IPV6_MTU_DISCOVER.
    #[test]
    fn udp_over_ipv6() {
        let Ok(listener) = std::net::UdpSocket::bind("[::1]:0") else {
            return; // no IPv6 loopback here (a container without it): nothing to check
        };
        let to = listener.local_addr().unwrap();
        let sock =
            connect_udp(to, Some("::1".parse().unwrap()), datagram(Offload::default())).unwrap();
        assert_eq!(sock.local_addr().unwrap().ip().to_string(), "::1");
        assert!(sock.mtud());
        assert_eq!(
            get_int(sock.fd(), libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER).unwrap(),
            libc::IPV6_PMTUDISC_PROBE
        );
    }

    /// A source of the other family than the target's cannot be bound: the socket does not
    /// open (the worker counts a failed connect), as TCP's does not.
    #[test]
    fn a_source_of_the_other_family_fails_to_open() {
        let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let spec = spec(listener.local_addr().unwrap().port(), &["::1"]);
        assert!(connect(&spec, 0, 0, datagram(Offload::default())).is_err());
        assert!(connect(&spec, 0, 0, Stream).is_err());
    }

    /// HTTP/3 has no Unix-socket carrier (RunSpec::check refuses the run before).
    #[test]
    fn no_datagrams_over_a_unix_socket() {
        let mut spec = spec(1, &[]);
        spec.target.unix = Some("/nonexistent/herd.sock".into());
        let e = connect(&spec, 0, 0, datagram(Offload::default())).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
    }
}
