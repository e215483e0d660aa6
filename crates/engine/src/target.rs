//! Where load goes: resolved addresses, checked against herd's safety rule.
//!
//! herd sends load only to loopback (127.0.0.0/8, ::1) and to the benchmarking range
//! 198.18.0.0/15 that herd's lab gives to the hosts it builds in network namespaces. A
//! [`Target`] cannot be built for any other address, with one exception made on purpose:
//! the agents of a run on a real Kubernetes cluster, whose user names the one target they
//! may load ([`OptIn`], `herd cluster run --allow-target HOST`); a target that is not the
//! one named is refused all the same.

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
    #[error(
        "the opt-in names {named:?}, but the run's target is {host:?}: --allow-target must name \
         the URL's host exactly"
    )]
    OptInMismatch { named: String, host: String },
    #[error(
        "the opt-in {0:?} (--allow-target, HERD_ALLOW_TARGET): name one host, as the URL writes it"
    )]
    BadOptIn(String),
}

/// The user's explicit opt-in to load one target outside the safety rule's ranges: a host
/// named exactly as the run's URL writes it. Only agents on a real cluster take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptIn {
    host: String,
}

impl OptIn {
    pub fn new(host: &str) -> Result<OptIn, TargetError> {
        if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == '/' || c == ',') {
            return Err(TargetError::BadOptIn(host.to_owned()));
        }
        Ok(OptIn { host: host.to_owned() })
    }

    /// The host it names.
    pub fn host(&self) -> &str {
        &self.host
    }
}

impl Target {
    /// Resolves `host:port` and checks every address against the safety rule.
    pub fn resolve(host: &str, port: u16, tls: Option<TlsClient>) -> Result<Target, TargetError> {
        Target::resolve_opted_in(host, port, tls, None)
    }

    /// [`Target::resolve`], except that the host `opt_in` names (and only it) may be outside
    /// the safety rule's ranges; a different host is refused, whatever its address.
    pub fn resolve_opted_in(
        host: &str,
        port: u16,
        tls: Option<TlsClient>,
        opt_in: Option<&OptIn>,
    ) -> Result<Target, TargetError> {
        if let Some(o) = opt_in {
            if o.host != host {
                return Err(TargetError::OptInMismatch {
                    named: o.host.clone(),
                    host: host.to_owned(),
                });
            }
        }
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
        if opt_in.is_none() {
            for a in &addrs {
                check_allowed(a.ip())?;
            }
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

    /// The opt-in admits the one host it names, and nothing else (no load is sent here:
    /// building a Target connects to nothing).
    #[test]
    fn an_opt_in_admits_only_the_host_it_names() {
        let outside = "203.0.113.9";
        assert!(matches!(Target::resolve(outside, 80, None), Err(TargetError::NotAllowed { .. })));
        let o = OptIn::new(outside).unwrap();
        let t = Target::resolve_opted_in(outside, 80, None, Some(&o)).unwrap();
        assert_eq!(t.addrs, [SocketAddr::from(([203, 0, 113, 9], 80))]);
        let e = Target::resolve_opted_in("203.0.113.10", 80, None, Some(&o)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the opt-in names \"203.0.113.9\", but the run's target is \"203.0.113.10\": \
             --allow-target must name the URL's host exactly"
        );
        for bad in ["", "a b", "x/y", "a,b"] {
            assert!(matches!(OptIn::new(bad), Err(TargetError::BadOptIn(_))), "{bad:?}");
        }
    }

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
