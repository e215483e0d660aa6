//! Why a cell cannot run at all: its protocol is one that its server, its client or its
//! network path cannot carry. Such a cell stays in the matrix, with its key and this reason:
//! the dry run lists it, `herd lab run` counts it and says why, and it never starts
//! anything. An experiment may so name every protocol it compares and get the cells each
//! server has ("h3 where the server has it") without an `[[exclude]]` per missing pair.
//!
//! Not here: what makes the file itself wrong (a load a client cannot run, `streams` on
//! HTTP/1): `experiment::build` refuses those with their line.

use herd_drivers::{ProxyKind, ServerKind};
use herd_stats::Protocol;
use herd_topo::net::Path as NetPath;

use crate::client::{self, Tool};

/// Why a cell with these parts cannot run, or None when it can. The first reason found: the
/// server's, then the client's, then the path's.
pub fn refusal(
    server: ServerKind,
    protocol: Protocol,
    tool: Tool,
    path: Option<NetPath>,
) -> Option<String> {
    if let Err(why) = server_speaks(server, protocol) {
        return Some(format!("server: {why}"));
    }
    if let Err(why) = client::speaks(tool, protocol) {
        return Some(format!("client: {why}"));
    }
    match path.map(|p| path_carries(p, protocol)) {
        Some(Err(why)) => Some(format!("path: {why}")),
        _ => None,
    }
}

/// Whether `server`'s driver can serve `protocol` (its reason, as Debian 12 ships it).
fn server_speaks(server: ServerKind, protocol: Protocol) -> Result<(), String> {
    server.supports(protocol).map_err(str::to_owned)
}

/// Whether the network path `path` carries `protocol` from the client to the server. Where
/// the client connects to the server's own address (direct, routed) every protocol passes.
/// A router program must carry it ([`ProxyKind::carries`]). Over TLS, the certificate the
/// client checks must name the address it connects to: the server's names the server's own,
/// so where the client connects to the router's (NAT, balancing, a proxy that forwards bytes)
/// only the protocols in the clear pass; HAProxy in http mode ends TLS itself, with a
/// certificate made for the router's address.
fn path_carries(path: NetPath, protocol: Protocol) -> Result<(), String> {
    let proxy = crate::matrix::proxy_of(path);
    if let Some(kind) = proxy {
        kind.carries(protocol).map_err(|why| format!("the {path} path: {why}"))?;
    }
    match (path, proxy) {
        (NetPath::Direct | NetPath::Routed, _) | (_, Some(ProxyKind::HaproxyHttp)) => Ok(()),
        _ if protocol.is_encrypted() => Err(format!(
            "on the {path} path the client connects to the router's address, which the \
             server's certificate does not name; measure {protocol} on the direct or routed \
             path, or through haproxy-http, which ends TLS itself"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h1_runs_everywhere_it_ran_before() {
        for path in [None, Some(NetPath::Direct), Some(NetPath::NginxProxy)] {
            assert_eq!(refusal(ServerKind::Nginx, Protocol::H1, Tool::Ab, path), None);
        }
    }

    #[test]
    fn the_first_reason_is_named() {
        let why = refusal(ServerKind::Nginx, Protocol::H3, Tool::Ab, None).unwrap();
        assert_eq!(
            why,
            "server: nginx 1.22 has no HTTP/3 (its http_v3_module came in 1.25): use caddy"
        );
        let why = refusal(ServerKind::Nginx, Protocol::H2, Tool::Ab, None).unwrap();
        assert!(why.starts_with("client: ab cannot speak h2"), "{why}");
        let why = refusal(ServerKind::Caddy, Protocol::H3, Tool::H2load, None).unwrap();
        assert_eq!(
            why,
            "client: h2load cannot speak h3: Debian's h2load 1.52 is built without ngtcp2 and \
             has no --h3; use the herd client"
        );
        assert_eq!(refusal(ServerKind::Caddy, Protocol::H3, Tool::Herd, None), None);
        assert_eq!(refusal(ServerKind::Nginx, Protocol::H2, Tool::H2load, None), None);
    }

    #[test]
    fn paths_refuse_what_they_cannot_carry() {
        let carries = |p, proto| path_carries(p, proto).is_ok();
        for p in [NetPath::Direct, NetPath::Routed] {
            assert!(Protocol::ALL.iter().all(|&proto| carries(p, proto)), "{p}");
        }
        assert!(carries(NetPath::NftDnat, Protocol::H2c));
        assert!(carries(NetPath::HaproxyTcp, Protocol::H2c));
        assert!(carries(NetPath::HaproxyHttp, Protocol::H2));
        let e = path_carries(NetPath::NftDnat, Protocol::H2).unwrap_err();
        assert!(e.contains("which the server's certificate does not name"), "{e}");
        let e = path_carries(NetPath::SslhFork, Protocol::H1Tls).unwrap_err();
        assert!(e.contains("which the server's certificate does not name"), "{e}");
        let e = path_carries(NetPath::NginxProxy, Protocol::H2c).unwrap_err();
        assert!(e.starts_with("the nginx-proxy path: nginx's proxy_pass speaks HTTP/1.x"), "{e}");
        let e = path_carries(NetPath::HaproxyHttp, Protocol::H3).unwrap_err();
        assert!(e.contains("HAProxy 2.6 is built without QUIC"), "{e}");
    }
}
