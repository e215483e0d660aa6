//! Why a cell cannot run at all: its protocol is one that its server, its client or its
//! network path cannot carry, or its client cannot keep up its load against that server. Such a cell stays in the matrix, with its key and this reason:
//! the dry run lists it, `herd lab run` counts it and says why, and it never starts
//! anything. An experiment may so name every protocol it compares and get the cells each
//! server has ("h3 where the server has it") without an `[[exclude]]` per missing pair.
//!
//! Not here: what makes the file itself wrong (a load a client cannot run, `streams` on
//! HTTP/1): `experiment::build` refuses those with their line.

use std::num::NonZeroU32;

use herd_drivers::{ProxyKind, ServerKind};
use herd_stats::Protocol;
use herd_topo::net::Path as NetPath;

use crate::client::{self, Tool};
use crate::load::{Load, Shape};

/// Why a cell with these parts cannot run, or None when it can. The first reason found: the
/// server's, then the client's (alone, then with this server and load), then the path's.
/// A `netbench` workload (files over SMB) pairs only with samba and smbtorture, and an HTTP
/// one never does.
pub fn refusal(
    server: ServerKind,
    keepalive_requests: Option<NonZeroU32>,
    protocol: Protocol,
    tool: Tool,
    load: &Load,
    path: Option<NetPath>,
    netbench: bool,
) -> Option<String> {
    if netbench {
        return netbench_refusal(server, protocol, tool, path);
    }
    if tool == Tool::Smbtorture {
        return Some(
            "client: smbtorture replays the NetBench trace over SMB1: it runs `netbench` \
             workloads only; use herd, ab, wrk or h2load"
                .to_owned(),
        );
    }
    if path == Some(NetPath::FourLinks) {
        return Some(
            "path: four-links spreads a NetBench ramp's clients over four client hosts; an \
             HTTP client runs on one host: use direct (or routed) for HTTP workloads"
                .to_owned(),
        );
    }
    if server == ServerKind::External && path.is_some() {
        return Some(
            "server: an external server runs outside herd's network namespaces, which a path \
             is built of: leave it out of `path` cells (with [[exclude]])"
                .to_owned(),
        );
    }
    if let Err(why) = server_speaks(server, protocol) {
        return Some(format!("server: {why}"));
    }
    if let Err(why) = client::speaks(tool, protocol) {
        return Some(format!("client: {why}"));
    }
    if let Err(why) = client_keeps_up(server, keepalive_requests, protocol, tool, load) {
        return Some(format!("client: {why}"));
    }
    match path.map(|p| path_carries(p, protocol)) {
        Some(Err(why)) => Some(format!("path: {why}")),
        _ => None,
    }
}

/// Why a NetBench cell cannot run: a server other than samba, a client other than
/// smbtorture, an HTTP protocol asked of it, or a path whose router speaks HTTP.
fn netbench_refusal(
    server: ServerKind,
    protocol: Protocol,
    tool: Tool,
    path: Option<NetPath>,
) -> Option<String> {
    // tbench_srv: the calibration cells' (`matrix::cells`), never a file's.
    if !matches!(server, ServerKind::Samba | ServerKind::Tbench) {
        return Some(format!(
            "server: {server} serves HTTP; a `netbench` workload (files over SMB) needs server samba"
        ));
    }
    if tool != Tool::Smbtorture && !(server == ServerKind::Tbench && tool == Tool::Tbench) {
        return Some(format!(
            "client: {tool} speaks HTTP; a `netbench` workload is replayed by smbtorture \
             (client = [\"smbtorture\"])"
        ));
    }
    if protocol != crate::experiment::DEFAULT_PROTOCOL {
        return Some(format!(
            "protocol: a `netbench` workload speaks SMB1, not {protocol}: leave it out of the \
             protocol axis with [[exclude]] workload = …, protocol = \"{protocol}\""
        ));
    }
    // SMB goes through what forwards packets or TCP streams; an HTTP proxy or sslh (which
    // sorts connections by their first bytes) would not carry it.
    match path.and_then(crate::matrix::proxy_of) {
        Some(proxy) if proxy != ProxyKind::HaproxyTcp => Some(format!(
            "path: {proxy} on the router speaks HTTP (or sorts by it); SMB goes over direct, \
             routed, the NAT paths or haproxy-tcp"
        )),
        _ => None,
    }
}

/// Whether `server`'s driver can serve `protocol` (its reason, as Debian 12 ships it).
fn server_speaks(server: ServerKind, protocol: Protocol) -> Result<(), String> {
    server.supports(protocol).map_err(str::to_owned)
}

/// Whether `tool` can carry `load` to `server` over `protocol` to its end. h2load (1.52)
/// does not open a new connection after a GOAWAY: against a server that ends HTTP/2
/// connections after a number of requests, its connections are spent and it waits idle for
/// the rest of a timed run (nginx at -c 8: 8,000 requests, then 2,667 req/s "measured" over
/// 3 s, and the streams in flight when each GOAWAY came counted as errors).
fn client_keeps_up(
    server: ServerKind,
    keepalive_requests: Option<NonZeroU32>,
    protocol: Protocol,
    tool: Tool,
    load: &Load,
) -> Result<(), String> {
    let multiplexed = matches!(protocol, Protocol::H2 | Protocol::H2c);
    let Some(limit) = server.h2_requests_per_connection(keepalive_requests).filter(|_| multiplexed)
    else {
        return Ok(());
    };
    if tool != Tool::H2load {
        return Ok(());
    }
    let fits = match load.measured().shape {
        Shape::Requests { n_requests, concurrency } => {
            n_requests <= limit.saturating_mul(u64::from(concurrency))
        }
        _ => false,
    };
    if fits {
        return Ok(());
    }
    Err(format!(
        "h2load does not open a new connection after a GOAWAY, and {server} sends one when a \
         connection has carried {limit} requests (its keepalive_requests), so h2load would \
         stand idle once its connections are spent; use the herd client, which reconnects, or \
         a request count (`requests`) of at most {limit} per connection"
    ))
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
    use std::time::Duration;

    use super::*;
    use crate::load::Warmup;

    fn load(shape: Shape) -> Load {
        Load {
            shape,
            keep_alive: true,
            warmup: Warmup::Duration(Duration::from_secs(1)),
            timeout: Duration::from_secs(30),
            streams: None,
        }
    }

    fn timed() -> Load {
        load(Shape::Duration { duration: Duration::from_secs(3), concurrency: 8 })
    }

    #[test]
    fn h1_runs_everywhere_it_ran_before() {
        for path in [None, Some(NetPath::Direct), Some(NetPath::NginxProxy)] {
            assert_eq!(
                refusal(ServerKind::Nginx, None, Protocol::H1, Tool::Ab, &timed(), path, false),
                None
            );
        }
    }

    #[test]
    fn h2load_against_nginx_only_while_its_connections_last() {
        for protocol in [Protocol::H2, Protocol::H2c] {
            let why =
                refusal(ServerKind::Nginx, None, protocol, Tool::H2load, &timed(), None, false)
                    .unwrap();
            assert!(why.starts_with("client: h2load does not open a new connection"), "{why}");
            assert!(why.contains("nginx sends one when a connection has carried 1000"), "{why}");
            let fits = load(Shape::Requests { n_requests: 8000, concurrency: 8 });
            assert_eq!(
                refusal(ServerKind::Nginx, None, protocol, Tool::H2load, &fits, None, false),
                None
            );
            let over = load(Shape::Requests { n_requests: 8001, concurrency: 8 });
            assert!(refusal(ServerKind::Nginx, None, protocol, Tool::H2load, &over, None, false)
                .is_some());
            // herd reconnects; the other servers set no such limit.
            assert_eq!(
                refusal(ServerKind::Nginx, None, protocol, Tool::Herd, &timed(), None, false),
                None
            );
            for server in
                [ServerKind::H2o, ServerKind::Caddy, ServerKind::Lighttpd, ServerKind::Herd]
            {
                assert_eq!(
                    refusal(server, None, protocol, Tool::H2load, &timed(), None, false),
                    None
                );
            }
        }
        // With the server's keepalive_requests, its limit is that many streams.
        let ten = NonZeroU32::new(10);
        let fits = load(Shape::Requests { n_requests: 80, concurrency: 8 });
        let nginx = ServerKind::Nginx;
        assert_eq!(refusal(nginx, ten, Protocol::H2, Tool::H2load, &fits, None, false), None);
        let over = load(Shape::Requests { n_requests: 81, concurrency: 8 });
        let why = refusal(nginx, ten, Protocol::H2, Tool::H2load, &over, None, false).unwrap();
        assert!(why.contains("nginx sends one when a connection has carried 10 requests"), "{why}");
        // HTTP/1 over h2load (--h1) is not concerned.
        assert_eq!(
            refusal(ServerKind::Nginx, None, Protocol::H1, Tool::H2load, &timed(), None, false),
            None
        );
    }

    #[test]
    fn the_first_reason_is_named() {
        let why = refusal(ServerKind::Nginx, None, Protocol::H3, Tool::Ab, &timed(), None, false)
            .unwrap();
        assert_eq!(
            why,
            "server: nginx 1.22 has no HTTP/3 (its http_v3_module came in 1.25): use caddy"
        );
        let why = refusal(ServerKind::Nginx, None, Protocol::H2, Tool::Ab, &timed(), None, false)
            .unwrap();
        assert!(why.starts_with("client: ab cannot speak h2"), "{why}");
        let why =
            refusal(ServerKind::Caddy, None, Protocol::H3, Tool::H2load, &timed(), None, false)
                .unwrap();
        assert_eq!(
            why,
            "client: h2load cannot speak h3: Debian's h2load 1.52 is built without ngtcp2 and \
             has no --h3; use the herd client"
        );
        assert_eq!(
            refusal(ServerKind::Caddy, None, Protocol::H3, Tool::Herd, &timed(), None, false),
            None
        );
        assert_eq!(
            refusal(
                ServerKind::Apache(herd_drivers::Mpm::Event),
                NonZeroU32::new(10),
                Protocol::H2,
                Tool::H2load,
                &timed(),
                None,
                false
            ),
            None
        );
    }

    #[test]
    fn four_links_is_for_netbench_ramps() {
        let four = Some(NetPath::FourLinks);
        let why = refusal(ServerKind::Nginx, None, Protocol::H1, Tool::Herd, &timed(), four, false);
        assert!(why.is_some_and(|w| w.starts_with("path: four-links spreads")));
        let smb =
            refusal(ServerKind::Samba, None, Protocol::H1, Tool::Smbtorture, &timed(), four, true);
        assert_eq!(smb, None);
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
