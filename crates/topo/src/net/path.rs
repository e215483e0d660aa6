//! The network paths an experiment can put between client and server (seeds 000, 001, 002),
//! by the names experiment files use, and what each needs. Which of them this kernel can build
//! is [`Path::needs`] against what the machine has.

use std::fmt;
use std::str::FromStr;

/// A path between client and server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// One veth link, no router: the article's "same switch".
    Direct,
    /// Four client hosts, each on a veth link of its own to the server (which has four
    /// addresses, one a link), no router: a server with four network cards and its clients
    /// spread over four switches, as in Mindcraft's NetBench runs (seed 004).
    FourLinks,
    /// Through the router, plain forwarding: no NAT, no conntrack.
    Routed,
    /// The router rewrites the destination with iptables (`-j DNAT`).
    IptablesDnat,
    /// The same with nftables (`dnat to`).
    NftDnat,
    /// L4 round robin over two server addresses with nftables (`numgen inc mod 2`): what
    /// LVS-NAT does, on kernels without IP_VS.
    NftNumgen,
    /// LVS-NAT with ipvsadm, round robin.
    LvsNat,
    /// HAProxy on the router, `mode http`, roundrobin.
    HaproxyHttp,
    /// HAProxy on the router, `mode tcp`, roundrobin.
    HaproxyTcp,
    /// nginx on the router as a reverse proxy.
    NginxProxy,
    /// sslh on the router, one process per connection.
    SslhFork,
    /// sslh on the router, one process with select(2).
    SslhSelect,
}

/// What a path needs from the machine that not every kernel or install has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    IpVs,
    Nft,
    Iptables,
}

impl Path {
    pub const ALL: [Path; 12] = [
        Path::Direct,
        Path::FourLinks,
        Path::Routed,
        Path::IptablesDnat,
        Path::NftDnat,
        Path::NftNumgen,
        Path::LvsNat,
        Path::HaproxyHttp,
        Path::HaproxyTcp,
        Path::NginxProxy,
        Path::SslhFork,
        Path::SslhSelect,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::FourLinks => "four-links",
            Path::Routed => "routed",
            Path::IptablesDnat => "iptables-dnat",
            Path::NftDnat => "nft-dnat",
            Path::NftNumgen => "nft-numgen",
            Path::LvsNat => "lvs-nat",
            Path::HaproxyHttp => "haproxy-http",
            Path::HaproxyTcp => "haproxy-tcp",
            Path::NginxProxy => "nginx-proxy",
            Path::SslhFork => "sslh-fork",
            Path::SslhSelect => "sslh-select",
        }
    }

    /// Round robin over two real servers behind the router: the server host gets a second
    /// address, and one server process listens on both (an L4 balancer's cost is in the
    /// choosing and rewriting, which two addresses exercise as two machines would).
    pub fn balanced(self) -> bool {
        matches!(self, Path::NftNumgen | Path::LvsNat | Path::HaproxyHttp | Path::HaproxyTcp)
    }

    /// Its client hosts, each sending to a server address of its own
    /// ([`Plan::clients`](super::Plan::clients)): four for `four-links`, one for the others.
    pub fn client_hosts(self) -> &'static [super::Host] {
        use super::Host;
        match self {
            Path::FourLinks => &[Host::Client, Host::Client2, Host::Client3, Host::Client4],
            _ => &[Host::Client],
        }
    }

    /// What the path needs beyond `ip` and `tc` (a shaped link also needs `ethtool`:
    /// [`machine::missing_for`](super::machine::missing_for)).
    pub fn needs(self) -> Option<Need> {
        match self {
            Path::Direct | Path::FourLinks | Path::Routed => None,
            Path::IptablesDnat => Some(Need::Iptables),
            Path::NftDnat | Path::NftNumgen => Some(Need::Nft),
            Path::LvsNat => Some(Need::IpVs),
            // Their router programs are the drivers' to find (herd_drivers::ProxyKind), with
            // the package to install.
            Path::HaproxyHttp
            | Path::HaproxyTcp
            | Path::NginxProxy
            | Path::SslhFork
            | Path::SslhSelect => None,
        }
    }
}

impl Need {
    /// Why a path cannot run without it, and what to do instead.
    pub fn missing(self, path: Path) -> String {
        let p = path.name();
        match self {
            Need::IpVs => format!(
                "{p} is not supported by this kernel: it has no IP_VS (CONFIG_IP_VS); use nft-numgen (the same round robin in nftables) or haproxy-tcp"
            ),
            Need::Nft => format!("{p} needs nft: apt-get install nftables"),
            Need::Iptables => format!("{p} needs iptables: apt-get install iptables"),
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Path {
    type Err = String;

    fn from_str(s: &str) -> Result<Path, String> {
        Path::ALL.iter().copied().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Path::ALL.iter().map(|p| p.name()).collect();
            format!("unknown path `{s}`: expected one of {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_choices() {
        for p in Path::ALL {
            assert_eq!(p.name().parse::<Path>(), Ok(p));
        }
        let err = "nat".parse::<Path>().unwrap_err();
        assert!(
            err.starts_with("unknown path `nat`: expected one of direct, four-links, routed,"),
            "{err}"
        );
    }

    #[test]
    fn lvs_says_what_to_use_instead() {
        let why = Path::LvsNat.needs().unwrap().missing(Path::LvsNat);
        assert!(why.contains("no IP_VS") && why.contains("nft-numgen"), "{why}");
    }
}
