//! The network between this machine (the client) and the `[hosts]` server host, checked
//! once before the runs, as the calibration cells check a path herd builds: its MTU (the
//! kernel's path MTU for the host's address), the round trip of a TCP connect, and what one
//! TCP connection carries, with herd serve started on the host as the null server
//! (`GET /bytes/N`: computed bytes, no disk). The figures go into the disclosure; a link far
//! slower than the cells' load explains their figures before anyone blames a server.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use herd_host::protocol::{Probe, Readiness};

use super::role_host::{RoleHost, HOST_PORT};

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PathFacts {
    pub mtu: Option<u32>,
    /// The median time of a TCP connect (SYN to SYN-ACK): one round trip.
    pub connect_rtt: Option<Duration>,
    /// What one TCP connection carried, the best of three transfers.
    pub mbit_per_second: Option<f64>,
    /// What could not be measured, and why.
    pub problems: Vec<String>,
}

impl PathFacts {
    /// The facts as disclosure entries (`path.server.*`, `path.router.*`: `role`).
    pub(crate) fn entries(&self, role: &str) -> Vec<(String, String)> {
        let or_unknown = |v: Option<String>| v.unwrap_or_else(|| "unknown".to_owned());
        let at = |k: &str| format!("path.{role}.{k}");
        let mut out = vec![
            (at("mtu"), or_unknown(self.mtu.map(|m| m.to_string()))),
            (at("connect_rtt_us"), or_unknown(self.connect_rtt.map(|d| d.as_micros().to_string()))),
            (at("tcp_mbit_per_s"), or_unknown(self.mbit_per_second.map(|m| format!("{m:.0}")))),
        ];
        if !self.problems.is_empty() {
            out.push((at("problems"), self.problems.join("; ")));
        }
        out
    }

    /// In words, for the lab's first lines.
    pub(crate) fn sentence(&self) -> String {
        let mtu = self.mtu.map_or("MTU unknown".to_owned(), |m| format!("MTU {m}"));
        let rtt = self.connect_rtt.map_or("connect RTT unknown".to_owned(), |d| {
            format!("connect RTT {:.3} ms", d.as_secs_f64() * 1e3)
        });
        let tput = self.mbit_per_second.map_or("TCP throughput unknown".to_owned(), |m| {
            format!("one TCP connection {m:.0} Mbit/s")
        });
        let mut s = format!("{mtu}, {rtt}, {tput}");
        if !self.problems.is_empty() {
            s.push_str(&format!(" ({})", self.problems.join("; ")));
        }
        s
    }
}

/// The bytes one transfer asks for: 64 MiB, a fraction of a second on a gigabit link and
/// above, long enough to leave slow start behind.
const TRANSFER: u64 = 64 << 20;
/// How long any one step may take.
const LIMIT: Duration = Duration::from_secs(10);

/// Checks the path to `host`: herd serve started there (this build) for the length of the
/// check, stopped after it.
pub(crate) fn check(host: &RoleHost) -> PathFacts {
    let target = SocketAddr::new(host.address, HOST_PORT);
    let mut facts =
        PathFacts { mtu: None, connect_rtt: None, mbit_per_second: None, problems: Vec::new() };
    match path_mtu(target) {
        Ok(m) => facts.mtu = Some(m),
        Err(e) => facts.problems.push(format!("MTU: {e}")),
    }
    let argv =
        vec![host.herd_path(), "serve".to_owned(), "--listen".to_owned(), target.to_string()];
    const ID: &str = "path-check";
    if let Err(e) = host.start(ID, &argv, &[], None, "path-check.log") {
        facts.problems.push(format!("herd serve on the host: {e}"));
        return facts;
    }
    match host.ready(ID, Probe::Tcp(target.to_string()), LIMIT) {
        Ok(Readiness::Ready { .. }) => {
            match connect_rtt(target) {
                Ok(d) => facts.connect_rtt = Some(d),
                Err(e) => facts.problems.push(format!("connect RTT: {e}")),
            }
            match throughput(target) {
                Ok(m) => facts.mbit_per_second = Some(m),
                Err(e) => facts.problems.push(format!("throughput: {e}")),
            }
        }
        Ok(other) => facts.problems.push(format!("herd serve on the host not ready: {other:?}")),
        Err(e) => facts.problems.push(format!("herd serve on the host: {e}")),
    }
    host.stop_all(Duration::from_secs(2));
    facts
}

/// The kernel's path MTU towards `to` (a connected UDP socket's IP_MTU: the route's MTU,
/// lowered by any "fragmentation needed" seen).
fn path_mtu(to: SocketAddr) -> Result<u32, String> {
    use std::os::fd::AsRawFd as _;
    let bind = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
    let socket = UdpSocket::bind(bind).map_err(|e| e.to_string())?;
    socket.connect(to).map_err(|e| e.to_string())?;
    let (level, name) = if to.is_ipv4() {
        (libc::IPPROTO_IP, libc::IP_MTU)
    } else {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU)
    };
    let mut mtu: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the pointers are to `mtu` and `len`, which live through the call.
    let rc = unsafe {
        libc::getsockopt(socket.as_raw_fd(), level, name, (&raw mut mtu).cast(), &raw mut len)
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    u32::try_from(mtu).map_err(|_| format!("the kernel said {mtu}"))
}

/// The median of nine TCP connects' times.
fn connect_rtt(to: SocketAddr) -> Result<Duration, String> {
    let mut times = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        let s = TcpStream::connect_timeout(&to, LIMIT).map_err(|e| e.to_string())?;
        times.push(t.elapsed());
        drop(s);
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// The best of three transfers of [`TRANSFER`] bytes over one connection each, in Mbit/s.
fn throughput(to: SocketAddr) -> Result<f64, String> {
    let mut best: f64 = 0.0;
    for _ in 0..3 {
        let mut s = TcpStream::connect_timeout(&to, LIMIT).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(LIMIT)).map_err(|e| e.to_string())?;
        let request =
            format!("GET /bytes/{TRANSFER} HTTP/1.1\r\nHost: {to}\r\nConnection: close\r\n\r\n");
        let t = Instant::now();
        s.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 1 << 16];
        let mut got: u64 = 0;
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got += n as u64,
                Err(e) => return Err(e.to_string()),
            }
            if t.elapsed() > LIMIT {
                return Err(format!("{got} bytes in {LIMIT:?}"));
            }
        }
        let secs = t.elapsed().as_secs_f64();
        if got < TRANSFER {
            return Err(format!("{got} of {TRANSFER} bytes came"));
        }
        if secs > 0.0 {
            best = best.max(got as f64 * 8.0 / secs / 1e6);
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_said_and_disclosed_unknown_where_unmeasured() {
        let f = PathFacts {
            mtu: Some(1500),
            connect_rtt: Some(Duration::from_micros(120)),
            mbit_per_second: None,
            problems: vec!["throughput: connection reset".into()],
        };
        assert_eq!(
            f.sentence(),
            "MTU 1500, connect RTT 0.120 ms, TCP throughput unknown (throughput: connection \
             reset)"
        );
        let e = f.entries("server");
        assert!(e.contains(&("path.server.mtu".into(), "1500".into())));
        assert!(e.contains(&("path.server.connect_rtt_us".into(), "120".into())));
        assert!(e.contains(&("path.server.tcp_mbit_per_s".into(), "unknown".into())));
        assert!(e.contains(&("path.server.problems".into(), "throughput: connection reset".into())));
    }

    #[test]
    fn the_loopback_mtu_is_the_kernels() {
        let mtu = path_mtu(SocketAddr::from(([127, 0, 0, 1], 9))).unwrap();
        // lo's link MTU, capped at the largest IPv4 packet.
        let link: u32 =
            std::fs::read_to_string("/sys/class/net/lo/mtu").unwrap().trim().parse().unwrap();
        assert_eq!(mtu, link.min(65535));
    }
}
