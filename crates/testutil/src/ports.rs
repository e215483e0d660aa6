//! Free loopback ports for test servers that must be told their port (nginx, caddy, …).
//!
//! The kernel hands out a port that is free at the moment it is asked, and the test gives it
//! to a server a moment later: two tests of one binary (cargo runs them in parallel) could be
//! handed the same port, and one test would then measure the other's server (it happened: an
//! nginx's h2c listener answered another test's HTTP/1 requests). So a port is handed out at
//! most once per test process.

use std::collections::HashSet;
use std::net::{TcpListener, UdpSocket};
use std::sync::Mutex;

static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A TCP port on 127.0.0.1, free now and never handed out before in this process.
pub fn free_port() -> u16 {
    pick(|| {
        let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        Some(port)
    })
}

/// A port on 127.0.0.1 free for both TCP and UDP (an HTTP/3 server's QUIC and HTTPS
/// listeners), never handed out before in this process.
pub fn free_tcp_udp_port() -> u16 {
    pick(|| {
        let tcp = TcpListener::bind("127.0.0.1:0").ok()?;
        let port = tcp.local_addr().ok()?.port();
        UdpSocket::bind(("127.0.0.1", port)).ok().map(|_| port)
    })
}

fn pick(mut candidate: impl FnMut() -> Option<u16>) -> u16 {
    for _ in 0..100 {
        let Some(port) = candidate() else { continue };
        let mut seen = HANDED_OUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.get_or_insert_with(HashSet::new).insert(port) {
            return port;
        }
    }
    panic!("no free loopback port after 100 tries");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_port_is_handed_out_twice() {
        let mut all = HashSet::new();
        for _ in 0..200 {
            assert!(all.insert(free_port()));
        }
        for _ in 0..20 {
            let p = free_tcp_udp_port();
            assert!(all.insert(p));
            assert!(UdpSocket::bind(("127.0.0.1", p)).is_ok());
        }
    }
}
