//! A network path as a value: the namespaces to create, then every `ip`, `sysctl`, `nft`,
//! `iptables`, `ipvsadm`, `ethtool` and `tc` command that wires them, in order. Pure:
//! [`Plan::for_path`] only builds, and [`Plan::commands`] is the listing a dry run prints.
//! [`apply`](super::apply) runs it under a guard that deletes the namespaces (and with them
//! every link, rule and qdisc made inside).
//!
//! The addressing is the one the shell prototype measured (shared/docs/topology-notes.md in
//! the team's notes), from the benchmarking range 198.18.0.0/15:
//!
//! ```text
//!  client                          router                           server
//!  c-r 198.18.1.2/24 <-- veth --> r-c 198.18.1.1/24 (the VIP)
//!                                 r-s 198.18.2.1/24 <-- veth --> s-r 198.18.2.2/24 (+ .2.3)
//!  c-s 198.18.3.1/24 <--------------------- veth ---------------> s-c 198.18.3.2/24
//! ```
//!
//! Only the links a path uses are made: `direct` is the client–server pair alone; the others
//! go through the router, except `four-links`: four client hosts, each on its own link to the
//! server (a server with four network cards, as in seed 004):
//!
//! ```text
//!  clientN (N = 1..4)                                             server
//!  c-s 198.18.1N.1/24 <----------------- veth -----------------> s-cN 198.18.1N.2/24
//! ```
//!
//! A path for several agents of one spread run ([`Plan::for_agents`], 2 to 4) gives each
//! agent a client host of its own (`client`, `client2`, …), each on its own veth link to the
//! path's first hop (the server for `direct`, the router otherwise), where a bridge joins
//! them and carries the hop's address: the first agent keeps the one-client address, the
//! others get `.1N` of the same /24 (`198.18.3.11` is the second agent on `direct`). Every
//! agent sends to the same target, so they all run the same settings.
//!
//! Every veth end is created inside its namespace, so nothing appears in the host's.

use std::fmt;
use std::net::Ipv4Addr;

use super::path::Path;
use super::shaping::Shaping;

/// The hosts a path can have: a client (four on `four-links`, [`Host::Client`] the first),
/// a router, a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Host {
    Client,
    Client2,
    Client3,
    Client4,
    Router,
    Server,
}

/// One path's plan for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// `herd-<id>`: the prefix of every namespace of this plan.
    pub tag: String,
    pub path: Path,
    /// The namespaces, in creation order (deleted in reverse).
    pub hosts: Vec<Host>,
    /// What runs in them, in order, each a whole argv.
    pub steps: Vec<Vec<String>>,
    /// Where the client sends its requests (the server itself, or the router's VIP).
    pub target: Ipv4Addr,
    /// Where the servers listen (every address of the server host).
    pub server_addrs: Vec<Ipv4Addr>,
    /// Every client host and the address it sends to: the client and the target, or on
    /// `four-links` each client host and the server's address on its link.
    pub clients: Vec<(Host, Ipv4Addr)>,
}

/// Client side of the direct link, and the server's end of it.
pub const DIRECT_CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 3, 1);
pub const DIRECT_SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 3, 2);
/// Client and router on the client–router link; the router's address is the VIP.
pub const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
pub const VIP: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 1);
/// Router and servers on the router–server link; the second server address is the second
/// real server of a balanced path.
pub const ROUTER_INSIDE: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);
pub const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 2);
pub const SERVER_2: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 3);

/// The port the lab's servers listen on inside a path's namespaces: the article's, and free
/// by construction (a new namespace has nothing bound).
pub const PATH_PORT: u16 = 80;

/// The ephemeral ports every host of a path gets (`net.ipv4.ip_local_port_range`): the
/// widest range that keeps clear of well-known ports and of PATH_PORT.
pub const EPHEMERAL_PORTS: (u16, u16) = (1024, 65000);

/// On `four-links`, client host N (1–4) is `198.18.(10 + N).1` and the server's address on
/// its link `198.18.(10 + N).2`.
fn four_links_addrs(n: u8) -> (Ipv4Addr, Ipv4Addr) {
    (Ipv4Addr::new(198, 18, 10 + n, 1), Ipv4Addr::new(198, 18, 10 + n, 2))
}

/// The most agents a path holds: one client host each, of [`Host`]'s four.
pub const MAX_AGENTS: u8 = 4;

/// The client hosts of a path's agents, in agent order.
const AGENT_HOSTS: [Host; 4] = [Host::Client, Host::Client2, Host::Client3, Host::Client4];

/// The bridge at the first hop that joins the agents' links.
const AGENTS_BRIDGE: &str = "c-br";

/// Agent `i`'s address on the first hop's /24: the one-client address for the first, `.1N`
/// for the others.
fn agent_addr(first: Ipv4Addr, i: usize) -> Ipv4Addr {
    if i == 0 {
        return first;
    }
    let o = first.octets();
    Ipv4Addr::new(o[0], o[1], o[2], 10 + i as u8)
}

/// The nft table herd's rules live in (inside the router's own namespace).
const NFT_TABLE: &str = "herd_nat";

impl Host {
    pub fn name(self) -> &'static str {
        match self {
            Host::Client => "client",
            Host::Client2 => "client2",
            Host::Client3 => "client3",
            Host::Client4 => "client4",
            Host::Router => "router",
            Host::Server => "server",
        }
    }
}

impl Plan {
    /// The plan of `path` for the run tagged `tag` (`herd-…`), the server listening on
    /// `port`, with `shaping` on every link of the path. The programs of a proxy path (HAProxy,
    /// nginx, sslh) are not part of it: the lab starts them in the router's namespace. Err for
    /// a tag without herd's prefix.
    pub fn for_path(
        tag: &str,
        path: Path,
        port: u16,
        shaping: Option<&Shaping>,
    ) -> Result<Plan, String> {
        Plan::for_agents(tag, path, port, shaping, 1)
    }

    /// As [`Plan::for_path`], with a client host for each of `agents` (1 to [`MAX_AGENTS`]):
    /// module docs. Err for `four-links` (it has its four client hosts) and for a shaped
    /// link with more than one agent (each would have a link of its own, not the one link
    /// the experiment names).
    pub fn for_agents(
        tag: &str,
        path: Path,
        port: u16,
        shaping: Option<&Shaping>,
        agents: u8,
    ) -> Result<Plan, String> {
        if !(1..=MAX_AGENTS).contains(&agents) {
            return Err(format!(
                "{agents} agents: a path holds 1 to {MAX_AGENTS}, each on a client host of its own"
            ));
        }
        let many = agents > 1;
        if many && path == Path::FourLinks {
            return Err("four-links has its four client hosts already: agents need another path \
                        (direct, routed, …)"
                .into());
        }
        if many && shaping.is_some() {
            return Err(format!(
                "a shaped link with {agents} agents: each agent would have a link of its own, not \
                 the one link the experiment names; leave `link` out, or run one agent"
            ));
        }
        if !tag.starts_with(super::netns::PREFIX) || tag.contains(['/', ' ']) {
            return Err(format!(
                "`{tag}` cannot name herd's namespaces: it must start with {} and have no / or space",
                super::netns::PREFIX
            ));
        }
        let mut b = Builder { tag: tag.to_owned(), steps: Vec::new() };
        let routed = !matches!(path, Path::Direct | Path::FourLinks);
        let mut hosts = if many {
            AGENT_HOSTS[..usize::from(agents)].to_vec()
        } else {
            path.client_hosts().to_vec()
        };
        let client_hosts = hosts.clone();
        if routed {
            hosts.push(Host::Router);
        }
        hosts.push(Host::Server);
        for &h in &hosts {
            b.ns(h, &["ip", "link", "set", "lo", "up"]);
        }
        // Each link: one end's host and device, the other's, and their addresses.
        let mut links: Vec<Link> = Vec::new();
        let mut extra: Vec<(Host, &str, Ipv4Addr)> = Vec::new();
        // Agents' links: the first hop's end of each goes on the bridge there (which holds
        // the hop's address).
        let mut bridge: Option<(Host, Vec<&'static str>)> = None;
        let mut server_addrs = Vec::new();
        let mut clients = Vec::new();
        match path {
            Path::Direct if many => {
                const SERVER_DEVS: [&str; 4] = ["s-c1", "s-c2", "s-c3", "s-c4"];
                for (i, &h) in client_hosts.iter().enumerate() {
                    let a = (h, "c-s", agent_addr(DIRECT_CLIENT, i));
                    links.push(Link::bridged(a, (Host::Server, SERVER_DEVS[i])));
                    clients.push((h, DIRECT_SERVER));
                }
                bridge = Some((Host::Server, SERVER_DEVS[..client_hosts.len()].to_vec()));
                extra.push((Host::Server, AGENTS_BRIDGE, DIRECT_SERVER));
                server_addrs.push(DIRECT_SERVER);
            }
            Path::Direct => {
                links.push(Link::new(
                    (Host::Client, "c-s", DIRECT_CLIENT),
                    (Host::Server, "s-c", DIRECT_SERVER),
                ));
                server_addrs.push(DIRECT_SERVER);
                clients.push((Host::Client, DIRECT_SERVER));
            }
            Path::FourLinks => {
                const SERVER_DEVS: [&str; 4] = ["s-c1", "s-c2", "s-c3", "s-c4"];
                for (n, (&h, dev)) in (1u8..).zip(path.client_hosts().iter().zip(SERVER_DEVS)) {
                    let (client, server) = four_links_addrs(n);
                    links.push(Link::new((h, "c-s", client), (Host::Server, dev, server)));
                    server_addrs.push(server);
                    clients.push((h, server));
                }
            }
            _ => {
                const ROUTER_DEVS: [&str; 4] = ["r-c1", "r-c2", "r-c3", "r-c4"];
                if many {
                    for (i, &h) in client_hosts.iter().enumerate() {
                        let a = (h, "c-r", agent_addr(CLIENT, i));
                        links.push(Link::bridged(a, (Host::Router, ROUTER_DEVS[i])));
                    }
                    bridge = Some((Host::Router, ROUTER_DEVS[..client_hosts.len()].to_vec()));
                    extra.push((Host::Router, AGENTS_BRIDGE, VIP));
                } else {
                    links
                        .push(Link::new((Host::Client, "c-r", CLIENT), (Host::Router, "r-c", VIP)));
                }
                links.push(Link::new(
                    (Host::Router, "r-s", ROUTER_INSIDE),
                    (Host::Server, "s-r", SERVER),
                ));
                server_addrs.push(SERVER);
                if path.balanced() {
                    extra.push((Host::Server, "s-r", SERVER_2));
                    server_addrs.push(SERVER_2);
                }
                let target = if path == Path::Routed { SERVER } else { VIP };
                clients.extend(client_hosts.iter().map(|&h| (h, target)));
            }
        }
        for l in &links {
            let (na, nz) = (b.netns(l.a), b.netns(l.z));
            b.host(&[
                "ip", "link", "add", l.a_dev, "netns", &na, "type", "veth", "peer", "name",
                l.z_dev, "netns", &nz,
            ]);
        }
        if let Some((hop, ports)) = &bridge {
            b.ns(*hop, &["ip", "link", "add", AGENTS_BRIDGE, "type", "bridge"]);
            for dev in ports {
                b.ns(*hop, &["ip", "link", "set", dev, "master", AGENTS_BRIDGE]);
            }
        }
        let mut addrs: Vec<(Host, &str, Ipv4Addr)> = Vec::new();
        for l in &links {
            addrs.push((l.a, l.a_dev, l.a_addr));
            if let Some(z_addr) = l.z_addr {
                addrs.push((l.z, l.z_dev, z_addr));
            }
        }
        addrs.extend(extra);
        for &(h, dev, a) in &addrs {
            b.ns(h, &["ip", "addr", "add", &format!("{a}/24"), "dev", dev]);
        }
        for l in &links {
            b.ns(l.a, &["ip", "link", "set", l.a_dev, "up"]);
            b.ns(l.z, &["ip", "link", "set", l.z_dev, "up"]);
        }
        if let Some((hop, _)) = &bridge {
            b.ns(*hop, &["ip", "link", "set", AGENTS_BRIDGE, "up"]);
        }
        if routed {
            for &h in &client_hosts {
                b.ns(h, &["ip", "route", "add", "198.18.2.0/24", "via", &VIP.to_string()]);
            }
            b.ns(
                Host::Server,
                &["ip", "route", "add", "default", "via", &ROUTER_INSIDE.to_string()],
            );
        }
        // Per namespace and not inherited by a new one (ip_forward is 0, rp_filter is not the
        // host's): set them, one sysctl per host.
        let port_range = format!("{} {}", EPHEMERAL_PORTS.0, EPHEMERAL_PORTS.1);
        for &h in &hosts {
            let mut keys = vec![
                ("net.ipv4.conf.all.rp_filter", "0"),
                ("net.ipv4.conf.default.rp_filter", "0"),
                ("net.ipv4.ip_local_port_range", port_range.as_str()),
                ("net.core.somaxconn", "4096"),
            ];
            if h == Host::Router {
                keys.push(("net.ipv4.ip_forward", "1"));
            }
            b.sysctl(h, &keys);
        }
        let target = clients[0].1;
        b.rules(path, port);
        if let Some(s) = shaping {
            for l in &links {
                b.shape(l.a, l.a_dev, s);
                b.shape(l.z, l.z_dev, s);
            }
        }
        Ok(Plan { tag: tag.to_owned(), path, hosts, steps: b.steps, target, server_addrs, clients })
    }

    /// The namespace of `host` in this plan.
    pub fn netns(&self, host: Host) -> String {
        netns_name(&self.tag, host)
    }

    /// Every command of the plan, one per line, namespaces first, quoted for a POSIX shell:
    /// what `--dry-run` prints, and what a person can paste to rebuild the path by hand.
    pub fn commands(&self) -> Vec<String> {
        let mut out: Vec<String> =
            self.hosts.iter().map(|&h| format!("ip netns add {}", self.netns(h))).collect();
        out.extend(
            self.steps
                .iter()
                .map(|argv| argv.iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" ")),
        );
        out
    }

    /// How the path goes away: each namespace deleted, last made first (its links, rules and
    /// qdiscs go with it, once no process is left inside).
    pub fn teardown_commands(&self) -> Vec<String> {
        self.hosts.iter().rev().map(|&h| format!("ip netns delete {}", self.netns(h))).collect()
    }
}

/// The namespace of `host` in the run tagged `tag`: `herd-<pid>-<run>-client`.
fn netns_name(tag: &str, host: Host) -> String {
    format!("{tag}-{}", host.name())
}

/// `word` as a shell reads it back: as is when it has only safe characters, else in single
/// quotes (none of herd's arguments contains a single quote; one would be closed and escaped).
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.commands() {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// One veth pair: end `a` (its host, device and address) and end `z` (its address None
/// when it is a bridge's port: the bridge holds the address).
struct Link {
    a: Host,
    a_dev: &'static str,
    a_addr: Ipv4Addr,
    z: Host,
    z_dev: &'static str,
    z_addr: Option<Ipv4Addr>,
}

/// One end of a link: its host, device and address.
type End = (Host, &'static str, Ipv4Addr);

impl Link {
    fn new((a, a_dev, a_addr): End, (z, z_dev, z_addr): End) -> Link {
        Link { a, a_dev, a_addr, z, z_dev, z_addr: Some(z_addr) }
    }

    /// A link whose `z` end is a port of the first hop's bridge.
    fn bridged((a, a_dev, a_addr): End, (z, z_dev): (Host, &'static str)) -> Link {
        Link { a, a_dev, a_addr, z, z_dev, z_addr: None }
    }
}

struct Builder {
    tag: String,
    steps: Vec<Vec<String>>,
}

impl Builder {
    fn netns(&self, h: Host) -> String {
        netns_name(&self.tag, h)
    }

    /// A command in the host namespace (only `ip link add … netns …`).
    fn host(&mut self, argv: &[&str]) {
        self.steps.push(argv.iter().map(|s| s.to_string()).collect());
    }

    /// A command inside `h`'s namespace: `ip` and `tc` enter it themselves (`-n`, one
    /// process instead of two), anything else through `ip netns exec`.
    fn ns(&mut self, h: Host, argv: &[&str]) {
        let ns = self.netns(h);
        let v: Vec<String> = match argv.split_first() {
            Some((&tool, rest)) if tool == "ip" || tool == "tc" => [tool, "-n", &ns]
                .into_iter()
                .chain(rest.iter().copied())
                .map(str::to_owned)
                .collect(),
            _ => ["ip", "netns", "exec", &ns]
                .into_iter()
                .chain(argv.iter().copied())
                .map(str::to_owned)
                .collect(),
        };
        self.steps.push(v);
    }

    fn sysctl(&mut self, h: Host, keys: &[(&str, &str)]) {
        let settings: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut argv = vec!["sysctl", "-q", "-w"];
        argv.extend(settings.iter().map(String::as_str));
        self.ns(h, &argv);
    }

    /// The router's rules for the NAT and LVS paths (the proxies are programs, not rules).
    fn rules(&mut self, path: Path, port: u16) {
        let port = port.to_string();
        let to = format!("{SERVER}:{port}");
        match path {
            Path::IptablesDnat => self.ns(
                Host::Router,
                &[
                    "iptables",
                    "-t",
                    "nat",
                    "-A",
                    "PREROUTING",
                    "-d",
                    &VIP.to_string(),
                    "-p",
                    "tcp",
                    "--dport",
                    &port,
                    "-j",
                    "DNAT",
                    "--to-destination",
                    &to,
                ],
            ),
            Path::LvsNat => {
                let service = format!("{VIP}:{port}");
                self.ns(Host::Router, &["ipvsadm", "-A", "-t", &service, "-s", "rr"]);
                for real in [SERVER, SERVER_2] {
                    let real = format!("{real}:{port}");
                    self.ns(Host::Router, &["ipvsadm", "-a", "-t", &service, "-r", &real, "-m"]);
                }
            }
            Path::NftDnat | Path::NftNumgen => {
                self.ns(Host::Router, &["nft", "add", "table", "ip", NFT_TABLE]);
                self.ns(
                    Host::Router,
                    &[
                        "nft",
                        "add",
                        "chain",
                        "ip",
                        NFT_TABLE,
                        "prerouting",
                        "{ type nat hook prerouting priority dstnat; policy accept; }",
                    ],
                );
                let action = if path == Path::NftNumgen {
                    format!("dnat to numgen inc mod 2 map {{ 0 : {SERVER}, 1 : {SERVER_2} }}")
                } else {
                    format!("dnat to {to}")
                };
                let rule = format!("ip daddr {VIP} tcp dport {port} {action}");
                let mut argv = vec!["nft", "add", "rule", "ip", NFT_TABLE, "prerouting"];
                argv.push(&rule);
                self.ns(Host::Router, &argv);
            }
            _ => {}
        }
    }

    /// One link end shaped: offloads off, so the qdiscs see real packets (a dropped or
    /// delayed GSO super-packet would be dozens of segments at once); the Ethernet overhead
    /// each frame costs on a wire counted (preamble 8 + gap 12 + FCS 4, `stab overhead 24`);
    /// tbf for a rate; netem for a delay or a loss rate, at the root with tbf under it, the
    /// layout tc-netem(8) gives for both. netem's queue holds 100,000 packets: its default
    /// 1,000 drops packets of its own at gigabit rates with tens of ms of delay.
    ///
    /// netem goes on the client's and the server's ends only, never the router's: a packet
    /// leaves one of those two once on its way, however many links it crosses, so the delay
    /// and the loss apply once each way on a routed path as on a direct one. The rate applies
    /// on every end: each link is as fast as the link the experiment names.
    fn shape(&mut self, h: Host, dev: &str, s: &Shaping) {
        self.ns(h, &["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"]);
        let tbf = |rate: &str| -> Vec<String> {
            ["tbf", "rate", rate, "burst", "32kb", "latency", "20ms"].map(str::to_owned).into()
        };
        // `tc qdisc replace dev DEV` + where + what.
        let qdisc = |b: &mut Self, place: &[&str], what: Vec<String>| {
            let mut argv: Vec<&str> = vec!["tc", "qdisc", "replace", "dev", dev];
            argv.extend_from_slice(place);
            argv.extend(what.iter().map(String::as_str));
            b.ns(h, &argv);
        };
        let root = ["root", "handle", "1:", "stab", "overhead", "24"];
        match (s.needs_netem() && h != Host::Router, s.rate_text()) {
            (true, rate) => {
                let mut netem: Vec<String> = vec!["netem".into(), "limit".into(), "100000".into()];
                netem.extend(s.netem_args());
                qdisc(self, &root, netem);
                if let Some(rate) = rate {
                    qdisc(self, &["parent", "1:1", "handle", "10:"], tbf(&rate));
                }
            }
            (false, Some(rate)) => qdisc(self, &root, tbf(&rate)),
            (false, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("198.18.1.1/24"), "198.18.1.1/24");
        assert_eq!(
            shell_word("net.ipv4.ip_local_port_range=1024 65000"),
            "'net.ipv4.ip_local_port_range=1024 65000'"
        );
        assert_eq!(shell_word("{ type nat; }"), "'{ type nat; }'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
