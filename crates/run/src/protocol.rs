//! Which protocol a run speaks, as asked: by the URL's scheme and `--h2`, `--h2c` or
//! `--alpn`; how many requests a connection carries at once (`--streams`); and HTTP/2's
//! flow-control windows. What the server agrees to is known only once a handshake has
//! happened ([`crate::prepare`] asks it before the run when ALPN decides).

use herd_stats::units::ByteSize;
use herd_stats::Protocol;

/// The protocol asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Speak {
    /// HTTP/1.1: in the clear for http://, over TLS (ALPN `http/1.1`) for https://.
    #[default]
    Http1,
    /// HTTP/2: over TLS with ALPN `h2` for https:// (`--h2`), in the clear with prior
    /// knowledge for http:// (`--h2c`).
    Http2,
    /// HTTP/3 over QUIC (`--h3`): https:// URLs only, on UDP to the URL's port.
    Http3,
    /// Over TLS, whichever of these the server chooses by ALPN, offered in this order
    /// (`--alpn h2,http/1.1`): the one way a run falls back from HTTP/2 to HTTP/1.1.
    Alpn(Vec<Protocol>),
}

/// HTTP/2's flow control: how much the server may send before herd says it has room for
/// more. Large by default, as h2load's are (2³⁰ − 1): small windows make a client on a
/// long link look like a slow server (oha#538).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// Each stream's initial window (SETTINGS_INITIAL_WINDOW_SIZE).
    pub stream: ByteSize,
    /// The connection's window.
    pub connection: ByteSize,
}

/// 1 GiB: HTTP/2's default windows in herd (h2load's are one byte less).
pub const DEFAULT_WINDOW: ByteSize = ByteSize::new(1 << 30);
/// HTTP/2's largest window (RFC 9113 §6.9.1).
pub const MAX_WINDOW: u64 = (1 << 31) - 1;
/// At most this many requests at once on one connection.
pub const MAX_STREAMS: u32 = 1 << 16;

impl Default for Windows {
    fn default() -> Windows {
        Windows { stream: DEFAULT_WINDOW, connection: DEFAULT_WINDOW }
    }
}

impl Speak {
    /// The protocol of a run against a URL that is https (`tls`) or not, when the asking
    /// decides it; None when the server's ALPN choice does.
    pub fn protocol(&self, tls: bool) -> Option<Protocol> {
        match (self, tls) {
            (Speak::Http1, false) => Some(Protocol::H1),
            (Speak::Http1, true) => Some(Protocol::H1Tls),
            (Speak::Http2, false) => Some(Protocol::H2c),
            (Speak::Http2, true) => Some(Protocol::H2),
            (Speak::Http3, _) => Some(Protocol::H3),
            (Speak::Alpn(_), _) => None,
        }
    }

    /// Whether HTTP/2 may be spoken.
    pub fn may_be_http2(&self) -> bool {
        match self {
            Speak::Http1 | Speak::Http3 => false,
            Speak::Http2 => true,
            Speak::Alpn(list) => list.contains(&Protocol::H2),
        }
    }

    /// Whether a connection may carry several requests at once (HTTP/2 or HTTP/3).
    pub fn may_multiplex(&self) -> bool {
        matches!(self, Speak::Http3) || self.may_be_http2()
    }

    /// The ALPN protocol ids a TLS handshake offers, in order.
    pub fn alpn_ids(&self, tls: bool) -> Vec<Vec<u8>> {
        let protocols = match self {
            Speak::Alpn(list) => list.clone(),
            other => other.protocol(tls).into_iter().collect(),
        };
        protocols.iter().filter_map(|p| p.alpn()).map(<[u8]>::to_vec).collect()
    }
}

/// `--alpn`'s value: ALPN ids herd can speak over TLS, comma-separated, in order of
/// preference (`h2,http/1.1`).
pub fn parse_alpn(text: &str) -> Result<Vec<Protocol>, String> {
    let mut list = Vec::new();
    for id in text.split(',').map(str::trim) {
        let p = Protocol::from_alpn_over_tls(id.as_bytes()).ok_or_else(|| {
            format!(
                "`{id}` is not an ALPN id herd speaks over TLS: give h2, http/1.1 or both \
                 (h2,http/1.1), in order of preference"
            )
        })?;
        if list.contains(&p) {
            return Err(format!("`{id}` is listed twice"));
        }
        list.push(p);
    }
    Ok(list)
}

/// `--alpn`'s spelling of a list.
pub fn alpn_text(list: &[Protocol]) -> String {
    let ids: Vec<String> = list
        .iter()
        .filter_map(|p| p.alpn())
        .map(|id| String::from_utf8_lossy(id).into_owned())
        .collect();
    ids.join(",")
}

/// A window given to `--window` or `--connection-window`: 64 KiB − 1 (HTTP/2's default) up
/// to 2 GiB − 1.
pub fn check_window(flag: &str, size: ByteSize) -> Result<(), String> {
    if size.bytes() < 65_535 || size.bytes() > MAX_WINDOW {
        return Err(format!(
            "{flag} {size}: an HTTP/2 window is from 65535 bytes (the protocol's default) to \
             {MAX_WINDOW} (2Gi − 1)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_lists_read_and_write_back() {
        let list = parse_alpn("h2,http/1.1").unwrap();
        assert_eq!(list, [Protocol::H2, Protocol::H1Tls]);
        assert_eq!(alpn_text(&list), "h2,http/1.1");
        assert!(parse_alpn("h3").unwrap_err().contains("h2, http/1.1"));
        assert!(parse_alpn("h2,h2").unwrap_err().contains("twice"));
        assert!(parse_alpn("").is_err());
    }

    #[test]
    fn the_protocol_follows_the_scheme() {
        assert_eq!(Speak::Http1.protocol(false), Some(Protocol::H1));
        assert_eq!(Speak::Http1.protocol(true), Some(Protocol::H1Tls));
        assert_eq!(Speak::Http2.protocol(false), Some(Protocol::H2c));
        assert_eq!(Speak::Http2.protocol(true), Some(Protocol::H2));
        assert_eq!(Speak::Http2.alpn_ids(true), [b"h2".to_vec()]);
        assert_eq!(Speak::Http1.alpn_ids(true), [b"http/1.1".to_vec()]);
        assert!(Speak::Http2.alpn_ids(false).is_empty());
        let both = Speak::Alpn(vec![Protocol::H2, Protocol::H1Tls]);
        assert_eq!(both.protocol(true), None);
        assert_eq!(both.alpn_ids(true), [b"h2".to_vec(), b"http/1.1".to_vec()]);
    }

    #[test]
    fn windows_are_bounded_as_http2_bounds_them() {
        assert!(check_window("--window", ByteSize::new(65_535)).is_ok());
        assert!(check_window("--window", ByteSize::new(MAX_WINDOW)).is_ok());
        assert!(check_window("--window", ByteSize::new(1024)).unwrap_err().contains("65535"));
        assert!(check_window("--window", ByteSize::new(1 << 31)).is_err());
    }
}
