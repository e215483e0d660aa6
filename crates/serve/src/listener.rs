//! Binds the listening sockets: one per worker, all on the same address with `SO_REUSEPORT`.
//! Does not accept connections (each worker does, in its own event loop).
//!
//! Why one socket per worker rather than one shared socket: with `SO_REUSEPORT` the kernel hashes
//! each new connection to one socket's own accept queue, so exactly one worker is woken and no
//! accept queue lock is shared (the wake-all and serialized accept of seed 004 cannot happen).
//! A shared socket would need `EPOLLEXCLUSIVE`, which mio does not expose, and still shares one
//! queue. nginx's `listen … reuseport` is its fastest setting for the same reasons. The cost is
//! that a connection hashed to a busy worker waits for it; workers never block, so that wait is
//! one event-loop turn.
//!
//! `SO_REUSEPORT` has a trap: a second herd serve of the same user on the same port would bind
//! too and silently take half the connections. So the address is first bound once *without*
//! `SO_REUSEPORT` (the probe): that fails with `EADDRINUSE` if anything listens there, and with
//! port 0 it picks the free port the workers then share.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsFd;

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::error::ServeError;
use crate::sys;

/// Listen backlog per socket. The kernel caps it at `net.core.somaxconn` (4096 by default since
/// Linux 5.4); asking for more than the usual 128 matters for connection-per-request benchmarks.
const BACKLOG: i32 = 4096;

/// `TCP_DEFER_ACCEPT`: a new connection wakes its worker once, when its request has arrived,
/// not first at the handshake and again for the data (nginx's `listen … deferred`). On loopback
/// that wake-up runs in the client's `connect`, so it is the client's CPU it saves most
/// (bench/serve.sh, BENCHMARKS.md). A client that connects and sends nothing is accepted after
/// about this long instead of at once; HTTP clients always speak first.
const DEFER_ACCEPT_S: u32 = 1;

/// Binds `n` listening sockets (at least one) on `addr`, all sharing the same port.
pub(crate) fn bind(
    addr: SocketAddr,
    n: usize,
) -> Result<(Vec<TcpListener>, SocketAddr), ServeError> {
    let bound = probe(addr)?;
    let mut listeners = Vec::with_capacity(n.max(1));
    for _ in 0..n.max(1) {
        let socket = reuseport_socket(bound).map_err(|e| bind_error(bound, e))?;
        listeners.push(TcpListener::from(socket));
    }
    Ok((listeners, bound))
}

/// Binds `addr` without `SO_REUSEPORT` to detect a port in use and to resolve port 0, then
/// releases it. `SO_REUSEADDR` is set so that connections of a previous run in TIME_WAIT do not
/// count as "in use"; on Linux it never allows binding next to a live listener.
fn probe(addr: SocketAddr) -> Result<SocketAddr, ServeError> {
    let socket = new_socket(addr).map_err(|e| bind_error(addr, e))?;
    socket.set_reuse_address(true).map_err(|e| bind_error(addr, e))?;
    socket.bind(&SockAddr::from(addr)).map_err(|e| bind_error(addr, e))?;
    let local = socket.local_addr().map_err(|e| bind_error(addr, e))?;
    local.as_socket().ok_or_else(|| ServeError::Bind {
        addr,
        source: io::Error::new(io::ErrorKind::InvalidData, "bound address is not an IP address"),
    })
}

fn reuseport_socket(addr: SocketAddr) -> io::Result<Socket> {
    let socket = new_socket(addr)?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&SockAddr::from(addr))?;
    socket.listen(BACKLOG)?;
    sys::set_defer_accept(socket.as_fd(), DEFER_ACCEPT_S)?;
    Ok(socket)
}

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    // socket2 creates sockets with SOCK_CLOEXEC.
    Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
}

fn bind_error(addr: SocketAddr, source: io::Error) -> ServeError {
    match source.raw_os_error() {
        Some(libc::EADDRINUSE) => ServeError::AddrInUse { addr },
        Some(libc::EACCES | libc::EPERM) => ServeError::BindDenied { addr },
        _ => ServeError::Bind { addr, source },
    }
}
