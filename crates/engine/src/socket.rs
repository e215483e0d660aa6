//! A connection's socket: TCP, or a Unix-domain stream for servers that listen on a path
//! (`--unix-socket`), and how one is opened. Both are read and written with raw
//! read(2)/write(2) through their fd (transport.rs), registered with epoll the same way, and
//! fed to rustls as `Read + Write`.
//!
//! `connect` is the one way a run's TCP and Unix connections open, for HTTP/1's worker, the
//! multiplexed worker's HTTP/2 connections and the connections opened ahead (warm.rs):
//! connection k gets the target's address and, with `--bind`, the source addresses taken
//! round robin (k mod their count; `IP_BIND_ADDRESS_NO_PORT`). Every TCP socket sets
//! `TCP_NODELAY`, so that no write waits for Nagle's algorithm (docs/socket-options.md).
//! HTTP/3's UDP sockets are opened by the QUIC driver (quic/udp.rs), but to and from the
//! addresses [`route`] chooses here for TCP as well: a choice made in one place cannot drift
//! (before, HTTP/3 chose its own address and bound the wildcard, ignoring `--bind`).

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use socket2::{Domain, Protocol, Type};

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

/// Starts connecting run-wide connection `conn` to the run's target: its Unix socket, or its
/// resolved address `addr` (the last one past the end of the list), from the connection's
/// source address (`--bind`, taken in turn). `true` while still in progress.
pub(crate) fn connect(spec: &RunSpec, addr: usize, conn: usize) -> io::Result<(Socket, bool)> {
    if let Some(path) = &spec.target.unix {
        return connect_unix(path);
    }
    // run_all refused an empty address list.
    let Some((to, from)) = route(spec, addr, conn) else {
        return Err(io::Error::from(io::ErrorKind::AddrNotAvailable));
    };
    connect_tcp(to, spec, from)
}

/// Where run-wide connection `conn` goes, and from where: the target's resolved address
/// `addr` (the last one past the end of the list) and its source address (`--bind`, taken in
/// turn; None: the kernel chooses). None when the target has no address. TCP's and QUIC's.
pub(crate) fn route(
    spec: &RunSpec,
    addr: usize,
    conn: usize,
) -> Option<(SocketAddr, Option<IpAddr>)> {
    let addrs = &spec.target.addrs;
    let to = addrs.get(addr).or(addrs.last())?;
    Some((*to, bind_for(&spec.socket.bind, conn)))
}

/// The source address of run-wide connection `k`.
pub(crate) fn bind_for(bind: &[IpAddr], k: usize) -> Option<IpAddr> {
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
fn connect_tcp(
    addr: SocketAddr,
    spec: &RunSpec,
    bind: Option<IpAddr>,
) -> io::Result<(Socket, bool)> {
    let sock = socket2::Socket::new(
        Domain::for_address(addr),
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
    let in_progress = match sock.connect(&addr.into()) {
        Ok(()) => false,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => true,
        Err(e) => return Err(e),
    };
    let std_stream: std::net::TcpStream = sock.into();
    Ok((Socket::Tcp(TcpStream::from_std(std_stream)), in_progress))
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
