//! The options herd serve sets on the connections it accepts, read back from the accepted
//! sockets themselves: the server runs in this process, so its file descriptors are in
//! /proc/self/fd. docs/socket-options.md lists them beside nginx's and the clients'.

use std::net::SocketAddr;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use herd_serve::AppProtocol;

use crate::harness::{self, TestServer, IO_TIMEOUT};
use crate::tls::TlsServer;

/// Every accepted connection is without Nagle's algorithm from its first byte, plain and TLS:
/// before, herd serve set TCP_NODELAY only once a kept-alive request had been read, so a TLS
/// handshake's flights and a connection-per-request response went out with it on.
#[test]
fn every_accepted_connection_is_without_nagle_from_the_start() {
    let plain = TestServer::start(None);
    let tls = TlsServer::start(None, &[AppProtocol::Http1]);
    for addr in [plain.addr(), tls.addr()] {
        // Connected, nothing sent: the server has accepted it and read nothing yet.
        let _client = harness::tcp(addr);
        let accepted = accepted_sockets(addr);
        assert!(!accepted.is_empty(), "no accepted socket of {addr} in /proc/self/fd");
        for fd in accepted {
            assert_eq!(nodelay(fd), Some(true), "TCP_NODELAY on accepted fd {fd} of {addr}");
        }
    }
}

/// The sockets of this process bound to `server`'s port that are not its listener: the
/// connections the server accepted. Waits (up to the tests' timeout) for the accept.
fn accepted_sockets(server: SocketAddr) -> Vec<i32> {
    let deadline = Instant::now() + IO_TIMEOUT;
    loop {
        let found: Vec<i32> = open_fds()
            .into_iter()
            .filter(|&fd| {
                let fd = borrow(fd);
                let sock = socket2::SockRef::from(&fd);
                let local = sock.local_addr().ok().and_then(|a| a.as_socket());
                local.is_some_and(|a| a.port() == server.port())
                    && sock.is_listener().ok() == Some(false)
            })
            .collect();
        if !found.is_empty() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn nodelay(fd: i32) -> Option<bool> {
    let fd = borrow(fd);
    socket2::SockRef::from(&fd).nodelay().ok()
}

fn open_fds() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return Vec::new() };
    dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()
}

fn borrow(fd: i32) -> BorrowedFd<'static> {
    // SAFETY: only for a getsockopt/getsockname on an fd listed in /proc/self/fd a moment ago.
    // Another test's thread may close it meanwhile; the calls then fail with EBADF (or read
    // a socket that took its number), which the filter above and the port check tolerate.
    unsafe { BorrowedFd::borrow_raw(fd) }
}
