//! Why a cell cannot run at all: its protocol is one that its server, its client or its
//! network path cannot carry. Such a cell stays in the matrix, with its key and this reason:
//! the dry run lists it, `herd lab run` counts it and says why, and it never starts
//! anything. An experiment may so name every protocol it compares and get the cells each
//! server has ("h3 where the server has it") without an `[[exclude]]` per missing pair.
//!
//! Not here: what makes the file itself wrong (a load a client cannot run, `streams` on
//! HTTP/1): `experiment::build` refuses those with their line.

use herd_drivers::ServerKind;
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

/// Whether `server`'s driver can serve `protocol`.
fn server_speaks(server: ServerKind, protocol: Protocol) -> Result<(), String> {
    match protocol {
        Protocol::H1 => Ok(()),
        other => {
            Err(format!("herd's {server} driver renders no {} configuration yet", other.describe()))
        }
    }
}

/// Whether the network path `path` carries `protocol` from the client to the server.
/// Where the client connects to the server's own address (direct, routed), every protocol
/// passes; where the router rewrites the address, the server's certificate (which names its
/// own address) does not match the one the client asked for, so only the protocols in the
/// clear pass; a proxy on the router speaks HTTP/1.1 in the clear to both sides.
fn path_carries(path: NetPath, protocol: Protocol) -> Result<(), String> {
    let proxied = crate::matrix::proxy_of(path).is_some() && path != NetPath::HaproxyTcp;
    match path {
        NetPath::Direct | NetPath::Routed => Ok(()),
        _ if proxied && protocol != Protocol::H1 => Err(format!(
            "the {path} path's router program is set up for HTTP/1.1 in the clear, not {}",
            protocol.describe()
        )),
        _ if protocol.is_encrypted() => Err(format!(
            "on the {path} path the client connects to the router's address, which the \
             server's certificate does not name; measure {protocol} on the direct or routed path"
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
        assert!(why.starts_with("server: "), "{why}");
        let why = refusal(ServerKind::Nginx, Protocol::H1Tls, Tool::Herd, None);
        assert!(why.is_some_and(|w| w.starts_with("server: ")));
    }

    #[test]
    fn paths_that_rewrite_addresses_or_proxy_refuse_what_they_cannot_carry() {
        let carries = |p, proto| path_carries(p, proto).is_ok();
        for p in [NetPath::Direct, NetPath::Routed] {
            assert!(Protocol::ALL.iter().all(|&proto| carries(p, proto)), "{p}");
        }
        assert!(carries(NetPath::NftDnat, Protocol::H2c));
        assert!(carries(NetPath::HaproxyTcp, Protocol::H2c));
        let e = path_carries(NetPath::NftDnat, Protocol::H2).unwrap_err();
        assert!(e.contains("certificate does not name"), "{e}");
        let e = path_carries(NetPath::HaproxyHttp, Protocol::H2c).unwrap_err();
        assert_eq!(
            e,
            "the haproxy-http path's router program is set up for HTTP/1.1 in the clear, not \
             HTTP/2 in the clear (h2c)"
        );
    }
}
