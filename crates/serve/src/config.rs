//! What a server is asked to do: where to listen, what to serve, how many workers, which limits,
//! and whether the listener speaks TLS. Plain data with defaults; checking the root, loading or
//! making certificates and binding happen in `Server::bind`.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use herd_uring::choice::IoChoice;

/// Settings for [`Server::bind`](crate::Server::bind).
///
/// Build it with struct update syntax so that fields added later keep their defaults:
/// `ServeConfig { listen, root: Some(dir), ..ServeConfig::default() }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Address to listen on. Port 0 picks any free port; read it back with
    /// [`Server::local_addr`](crate::Server::local_addr).
    pub listen: SocketAddr,
    /// Directory whose files are served. `None` serves only the generated pages (`/bytes/N`,
    /// `/herd/stats`) and answers 404 for everything else.
    pub root: Option<PathBuf>,
    /// Worker threads, each with its own event loop and listening socket. 0 means one per
    /// available core.
    pub threads: usize,
    /// Largest request head (request line and headers) accepted; a larger one gets 431 and the
    /// connection is closed. It is also the most a connection ever buffers while reading a head.
    pub max_head_bytes: usize,
    /// Longest request line accepted; a longer one gets 414 and the connection is closed.
    pub max_request_line_bytes: usize,
    /// A connection that makes no progress (no complete request read, no response byte written)
    /// for this long is closed. Bytes of an unfinished head do not count as progress, so a client
    /// dribbling a head one byte at a time is closed too.
    pub idle_timeout: Duration,
    /// Write one Common Log Format line per response to stdout.
    pub access_log: bool,
    /// Serve TLS on the listener instead of plain TCP.
    pub tls: Option<TlsConfig>,
    /// CPU time spent on every request before it is answered (a busy wait on the worker's
    /// thread), to make the server slower on purpose: `herd serve --spend-us N`, a test knob
    /// for regressions a history should find. Zero (the default) spends nothing.
    pub spend_per_request: Duration,
    /// The event-loop backend the workers turn (`--io`): settled at bind
    /// ([`Server::io`](crate::Server::io)).
    pub io: IoChoice,
}

/// TLS on the listening socket (rustls, ring provider; TLS 1.2 and 1.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    pub identity: TlsIdentity,
    /// The application protocols offered by ALPN, in order of preference. A client that
    /// offers none of them fails the handshake (RFC 7301 §3.2); a client that sends no ALPN
    /// at all is served as on the plain listener (HTTP/2 with prior knowledge only if `h2` is
    /// in the list).
    pub alpn: Vec<AppProtocol>,
}

/// Where the server's certificate and key come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsIdentity {
    /// PEM files: the certificate chain, leaf first, and the private key (PKCS#8, PKCS#1 or
    /// SEC1). Both may be the same file.
    Pem { cert: PathBuf, key: PathBuf },
    /// A P-256 certificate made at start-up for the bound address, `localhost`, 127.0.0.1 and
    /// ::1, signed by a CA also made at start-up. Its certificate, the one a client must
    /// trust, is written to `write_ca` (PEM) if given.
    SelfSigned { write_ca: Option<PathBuf> },
}

/// An application protocol herd serve speaks, as ALPN names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppProtocol {
    /// `h2`: HTTP/2 over TLS.
    H2,
    /// `http/1.1` (HTTP/1.0 and 1.1).
    Http1,
}

impl AppProtocol {
    /// Every protocol, in herd serve's order of preference.
    pub const ALL: [AppProtocol; 2] = [AppProtocol::H2, AppProtocol::Http1];

    /// The protocol's ALPN identifier (RFC 7301 §6).
    pub fn alpn_id(self) -> &'static str {
        match self {
            AppProtocol::H2 => "h2",
            AppProtocol::Http1 => "http/1.1",
        }
    }
}

impl fmt::Display for AppProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.alpn_id())
    }
}

/// An ALPN identifier herd serve does not speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown application protocol `{0}`; herd serve speaks {list}", list = known_list())]
pub struct UnknownAppProtocol(pub String);

fn known_list() -> String {
    AppProtocol::ALL.map(AppProtocol::alpn_id).join(", ")
}

impl FromStr for AppProtocol {
    type Err = UnknownAppProtocol;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AppProtocol::ALL
            .into_iter()
            .find(|p| p.alpn_id() == s)
            .ok_or_else(|| UnknownAppProtocol(s.to_owned()))
    }
}

/// Default for [`ServeConfig::max_head_bytes`]: 64 KiB, as the brief for issue 3 asks; nginx's
/// default is 1 KiB grown to 4 × 8 KiB, Apache's 100 fields of 8 KiB.
pub(crate) const DEFAULT_MAX_HEAD_BYTES: usize = 64 * 1024;

/// Default for [`ServeConfig::max_request_line_bytes`]: 8 KiB, nginx's and Apache's limit.
pub(crate) const DEFAULT_MAX_REQUEST_LINE_BYTES: usize = 8 * 1024;

/// Default for [`ServeConfig::idle_timeout`]: 60 s, nginx's `client_header_timeout` and close to
/// its `keepalive_timeout` (75 s).
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            root: None,
            threads: 0,
            max_head_bytes: DEFAULT_MAX_HEAD_BYTES,
            max_request_line_bytes: DEFAULT_MAX_REQUEST_LINE_BYTES,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            access_log: false,
            tls: None,
            spend_per_request: Duration::ZERO,
            io: IoChoice::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_protocols_parse_by_their_alpn_names() {
        for p in AppProtocol::ALL {
            assert_eq!(p.alpn_id().parse::<AppProtocol>(), Ok(p));
        }
        let err = "spdy/3".parse::<AppProtocol>().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unknown application protocol `spdy/3`; herd serve speaks {}", known_list())
        );
    }
}
