//! TIME_WAIT between runs. A run that opens a connection per request leaves thousands of
//! sockets in TIME_WAIT for 60 s. They can harm the next run in two ways, handled apart:
//!
//! - **Collisions.** A new connection whose 4-tuple matches a TIME_WAIT socket is delayed or
//!   refused (a SYN into TIME_WAIT, PAWS, a client port search that skips it). Only sockets
//!   that refer to the run's server address can collide, so every run gets a server port that
//!   no TIME_WAIT socket refers to ([`Table::refers_to`]); nothing has to be waited out.
//! - **A crowded table.** Past `net.ipv4.tcp_max_tw_buckets` the kernel destroys new
//!   TIME_WAIT sockets at once, so TCP behaves differently from then on. The runner waits
//!   until fewer than a bound remain (TFB's rule), by default half of that sysctl, and records
//!   the count it found and how long it waited.
//!
//! Measured here (docs/experiment.md, "TIME_WAIT"): 28,000 sockets in TIME_WAIT to another
//! port left `herd ab -n 20000 -c 50` on loopback within its run-to-run noise.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

pub use herd_topo::timewait::{count, count_in, default_bound};
use herd_topo::timewait::{tables, time_wait_rows};

/// The TIME_WAIT sockets of this network namespace (IPv4 and IPv6).
#[derive(Debug, Default)]
pub struct Table {
    /// Every endpoint (local and remote) of a socket in TIME_WAIT.
    endpoints: HashSet<SocketAddr>,
    count: u64,
}

impl Table {
    /// Reads /proc/net/tcp and /proc/net/tcp6; None when the IPv4 table cannot be read
    /// (the IPv6 one is absent on a kernel without IPv6, and counts as empty).
    pub fn read() -> Option<Table> {
        let mut t = Table::default();
        for text in tables()? {
            t.add(&text);
        }
        Some(t)
    }

    /// Sockets in TIME_WAIT.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether a socket in TIME_WAIT has `addr` as its local or its remote end.
    pub fn refers_to(&self, addr: SocketAddr) -> bool {
        self.endpoints.contains(&canonical(addr))
    }

    fn add(&mut self, table: &str) {
        for (local, remote) in time_wait_rows(table) {
            self.count += 1;
            for a in [local, remote].into_iter().filter_map(parse_endpoint) {
                self.endpoints.insert(canonical(a));
            }
        }
    }
}

/// Waits until fewer than `below` sockets are in TIME_WAIT, at most `limit`, checking
/// `cancelled` between looks; `first` is the count just read ([`count`]: the tables are
/// long to read with thousands of sockets, and the caller has said what it found). Returns
/// that count (None: the table cannot be read, and nothing was waited for) and the time
/// waited.
pub fn drain(
    first: Option<u64>,
    below: u64,
    limit: Duration,
    cancelled: &dyn Fn() -> bool,
) -> (Option<u64>, Duration) {
    drain_with(first, below, limit, cancelled, &count)
}

/// [`drain`] of a table read by `count` (a `[hosts]` server host's, through its helper).
pub fn drain_with(
    first: Option<u64>,
    below: u64,
    limit: Duration,
    cancelled: &dyn Fn() -> bool,
    count: &dyn Fn() -> Option<u64>,
) -> (Option<u64>, Duration) {
    let started = Instant::now();
    let mut now = first;
    while now.is_some_and(|n| n >= below) && started.elapsed() < limit && !cancelled() {
        std::thread::sleep(Duration::from_millis(250));
        now = count();
    }
    (first, started.elapsed())
}

/// An address as /proc/net/tcp prints it: the IP as the kernel's 32-bit words in host byte
/// order, hex, then `:` and the port in hex.
fn parse_endpoint(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let w = u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok()?;
        Some(w.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// IPv4 sockets on a dual-stack listener show as `::ffff:a.b.c.d`; compare them as IPv4.
fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: &str = "  sl  local_address rem_address   st tx_queue\n   0: 0100007F:1F90 00000000:0000 0A 0\n   1: 0100007F:1F90 0100007F:9C40 06 0\n   2: 0100007F:9C41 0100007F:1F91 06 0\n";
    const V6: &str = "  sl  local_address                         remote_address                        st\n   0: 0000000000000000FFFF00000100007F:1F92 0000000000000000FFFF00000100007F:9C42 06 0\n   1: 00000000000000000000000001000000:1F93 00000000000000000000000001000000:9C43 06 0\n";

    fn table(texts: &[&str]) -> Table {
        let mut t = Table::default();
        for x in texts {
            t.add(x);
        }
        t
    }

    #[test]
    fn counts_time_wait_rows_only() {
        assert_eq!(table(&[V4]).count(), 2);
        assert_eq!(table(&[V4, V6]).count(), 4);
    }

    #[test]
    fn finds_both_ends_of_a_time_wait_socket() {
        let t = table(&[V4]);
        // local end of row 1 and remote end of row 2
        assert!(t.refers_to("127.0.0.1:8080".parse().unwrap()));
        assert!(t.refers_to("127.0.0.1:8081".parse().unwrap()));
        assert!(t.refers_to("127.0.0.1:40001".parse().unwrap()));
        // the listener (state 0A) is not in TIME_WAIT
        assert!(!t.refers_to("127.0.0.1:8082".parse().unwrap()));
        assert!(!t.refers_to("127.0.0.2:8080".parse().unwrap()));
    }

    #[test]
    fn reads_ipv6_and_mapped_ipv4() {
        let t = table(&[V6]);
        assert!(t.refers_to("127.0.0.1:8082".parse().unwrap()));
        assert!(t.refers_to("[::ffff:127.0.0.1]:8082".parse().unwrap()));
        assert!(t.refers_to("[::1]:8083".parse().unwrap()));
        assert!(!t.refers_to("[::1]:8082".parse().unwrap()));
    }

    #[test]
    fn sees_a_real_time_wait_socket() {
        use std::io::Read;
        use std::net::{TcpListener, TcpStream};
        // A port no TIME_WAIT socket refers to yet: the kernel may hand a listener a port
        // that other tests' closed connections still refer to (SO_REUSEADDR).
        let (listener, server) = (0..100)
            .map(|_| {
                let l = TcpListener::bind("127.0.0.1:0").unwrap();
                let a = l.local_addr().unwrap();
                (l, a)
            })
            .find(|(_, a)| !Table::read().unwrap().refers_to(*a))
            .expect("a port without TIME_WAIT sockets in 100 tries");
        let client = TcpStream::connect(server).unwrap();
        let client_addr = client.local_addr().unwrap();
        let (mut accepted, _) = listener.accept().unwrap();
        // The client closes first, so the TIME_WAIT socket is the client's.
        drop(client);
        let mut buf = [0u8; 1];
        assert_eq!(accepted.read(&mut buf).unwrap(), 0);
        drop(accepted);
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut t = Table::read().unwrap();
        while !t.refers_to(server) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            t = Table::read().unwrap();
        }
        assert!(t.refers_to(server), "no TIME_WAIT socket refers to {server}");
        assert!(t.refers_to(client_addr));
        assert!(t.count() >= 1);
    }

    #[test]
    fn ignores_malformed_rows() {
        let t = table(&["header\n 0: zz:1F90 0100007F:9C40 06\n 1: short\n"]);
        assert_eq!(t.count(), 1);
        assert!(t.endpoints.len() == 1);
    }
}
