//! Where load goes: resolved addresses, checked against herd's safety rule.
//!
//! herd sends load only to loopback (127.0.0.0/8, ::1) and to the benchmarking range
//! 198.18.0.0/15 that herd's lab gives to the hosts it builds in network namespaces. A
//! [`Target`] cannot be built for any other address.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use thiserror::Error;

use crate::TlsClient;

#[derive(Debug, Clone)]
pub struct Target {
    /// The host as the user wrote it (for SNI, reports and the Host header).
    pub host: String,
    pub port: u16,
    /// Resolved addresses, in resolver order; a worker moves to the next one while none
    /// has answered yet (as ab does).
    pub addrs: Vec<SocketAddr>,
    /// TLS for https targets.
    pub tls: Option<TlsClient>,
    /// Connect to this Unix-domain socket instead of `addrs` (which may then be empty);
    /// `host` still names the server for the Host header and SNI.
    pub unix: Option<PathBuf>,
}

#[derive(Debug, Error)]
pub enum TargetError {
    #[error("cannot resolve {host:?}: {message}")]
    Resolve { host: String, message: String, os_error: Option<i32> },
    #[error("{host:?} resolves to no address")]
    NoAddress { host: String },
    #[error(
        "refusing to send load to {addr}: herd only targets 127.0.0.0/8, ::1 and its lab hosts in 198.18.0.0/15"
    )]
    NotAllowed { addr: IpAddr },
}

impl Target {
    /// Resolves `host:port` and checks every address against the safety rule.
    pub fn resolve(host: &str, port: u16, tls: Option<TlsClient>) -> Result<Target, TargetError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => (bare, port)
                .to_socket_addrs()
                .map_err(|e| TargetError::Resolve {
                    host: host.to_string(),
                    message: resolver_message(&e),
                    os_error: e.raw_os_error(),
                })?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(TargetError::NoAddress { host: host.to_string() });
        }
        for a in &addrs {
            check_allowed(a.ip())?;
        }
        Ok(Target { host: host.to_string(), port, addrs, tls, unix: None })
    }

    /// A server listening on the Unix socket `path`, named `host` (for Host and SNI). Local
    /// by nature, so always allowed.
    pub fn unix(path: PathBuf, host: &str, tls: Option<TlsClient>) -> Target {
        Target { host: host.to_string(), port: 0, addrs: Vec::new(), tls, unix: Some(path) }
    }

    #[cfg(test)]
    pub(crate) fn loopback_for_tests(port: u16) -> Target {
        Target {
            host: "127.0.0.1".into(),
            port,
            addrs: vec![SocketAddr::from(([127, 0, 0, 1], port))],
            tls: None,
            unix: None,
        }
    }
}

/// The safety rule: loopback, or herd's benchmarking range.
pub fn check_allowed(ip: IpAddr) -> Result<(), TargetError> {
    let ok = match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 127 || (o[0] == 198 && (o[1] == 18 || o[1] == 19))
        }
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.octets()[0] == 127)
        }
    };
    if ok {
        Ok(())
    } else {
        Err(TargetError::NotAllowed { addr: ip })
    }
}

/// std wraps getaddrinfo's message as "failed to lookup address information: <text>";
/// keep the resolver's own words.
fn resolver_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.strip_prefix("failed to lookup address information: ") {
        Some(rest) => rest.to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_loopback_and_benchmark_range_only() {
        for ok in
            ["127.0.0.1", "127.255.0.9", "::1", "198.18.0.1", "198.19.255.254", "::ffff:127.0.0.1"]
        {
            assert!(check_allowed(ok.parse().unwrap()).is_ok(), "{ok}");
        }
        for bad in
            ["10.0.0.1", "192.168.1.1", "8.8.8.8", "198.20.0.1", "198.17.255.255", "::2", "0.0.0.0"]
        {
            assert!(check_allowed(bad.parse().unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_literal_and_localhost() {
        let t = Target::resolve("127.0.0.1", 80, None).unwrap();
        assert_eq!(t.addrs, vec![SocketAddr::from(([127, 0, 0, 1], 80))]);
        let t = Target::resolve("[::1]", 8080, None).unwrap();
        assert_eq!(t.addrs[0].port(), 8080);
        assert!(Target::resolve("localhost", 80, None).is_ok());
    }

    #[test]
    fn refuses_outside_addresses() {
        let e = Target::resolve("10.1.2.3", 80, None).unwrap_err();
        assert!(e.to_string().contains("refusing to send load to 10.1.2.3"), "{e}");
    }

    #[test]
    fn unresolvable_host_is_a_clear_error() {
        let e = Target::resolve("no-such-host.invalid", 80, None).unwrap_err();
        assert!(matches!(e, TargetError::Resolve { .. }), "{e}");
    }
}
