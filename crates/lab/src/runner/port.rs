//! The port a run's server listens on. Two rules:
//!
//! - **Outside the ephemeral range** (`net.ipv4.ip_local_port_range`): the port is found free
//!   and released, and the server binds it a moment later (after its config is written and,
//!   for PHP, after php-fpm is ready). A port from the ephemeral range could be taken in
//!   between by any outgoing connection on the machine; one outside it can only be taken by a
//!   program that binds it by number.
//! - **No TIME_WAIT socket refers to it**, so that none of the run's connections can collide
//!   with one an earlier run left (see `timewait`).

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use crate::environment::sysctl;
use crate::timewait;

/// Lowest port handed out: below are well-known and registered services.
const LOWEST: u16 = 10_000;
/// Ports tried before giving up.
const TRIES: usize = 512;

/// A free port on 127.0.0.1 by the rules above, or why there is none.
pub(super) fn pick() -> Result<SocketAddr, String> {
    // Unreadable (the runner said so before its drain): no TIME_WAIT check.
    let table = timewait::Table::read().unwrap_or_default();
    let ephemeral = sysctl("net.ipv4.ip_local_port_range").and_then(|r| parse_range(&r));
    let candidates = outside(ephemeral);
    if candidates.is_empty() {
        // The ephemeral range covers every port herd would use: let the kernel choose.
        return TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port on 127.0.0.1: {e}"));
    }
    // Start somewhere different in every run, so that two herds do not race for one port.
    let start =
        (std::process::id() as usize).wrapping_mul(2_654_435_761).wrapping_add(clock_nanos())
            % candidates.len();
    for port in candidates.iter().cycle().skip(start).take(TRIES.min(candidates.len())) {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, *port));
        if !table.refers_to(addr) && TcpListener::bind(addr).is_ok() {
            return Ok(addr);
        }
    }
    Err(format!(
        "no free port on 127.0.0.1 outside the ephemeral range and clear of TIME_WAIT after {} tries; wait a minute, or stop what holds ports {}-65535",
        TRIES.min(candidates.len()),
        LOWEST
    ))
}

/// `32768\t60999` as /proc prints it.
fn parse_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(|w| w.parse::<u16>().ok());
    Some((it.next()??, it.next()??))
}

/// The ports from LOWEST up that are not in the ephemeral range (all of them when the range
/// is unknown: then nothing is known to be safer).
fn outside(ephemeral: Option<(u16, u16)>) -> Vec<u16> {
    let (lo, hi) = ephemeral.unwrap_or((u16::MAX, u16::MAX));
    (LOWEST..=u16::MAX).filter(|p| *p < lo || *p > hi).collect()
}

fn clock_nanos() -> usize {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_avoid_the_ephemeral_range() {
        assert_eq!(parse_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_range("junk"), None);
        let ports = outside(Some((32768, 60999)));
        assert_eq!(ports.first(), Some(&10_000));
        assert!(ports.contains(&32767) && ports.contains(&61000) && ports.contains(&65535));
        assert!(!ports.iter().any(|p| (32768..=60999).contains(p)));
        assert!(outside(Some((1024, 65535))).is_empty());
    }

    #[test]
    fn a_picked_port_is_free_and_outside_the_range() {
        let addr = pick().unwrap();
        let range = sysctl("net.ipv4.ip_local_port_range").and_then(|r| parse_range(&r));
        if let Some((lo, hi)) = range {
            assert!(!(lo..=hi).contains(&addr.port()) || outside(range).is_empty(), "{addr}");
        }
        TcpListener::bind(addr).unwrap();
    }
}
