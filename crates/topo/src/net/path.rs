//! The network paths an experiment can put between client and server (seeds 000, 001, 002),
//! by the names experiment files use, and link shaping. Which of them this kernel can build
//! is [`Path::needs`] against what the machine has.

use std::fmt;
use std::str::FromStr;

/// A path between client and server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// One veth link, no router: the article's "same switch".
    Direct,
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

/// A rate limit on every link of a path (tbf), e.g. `100mbit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaping {
    /// Bits per second.
    pub rate_bits: u64,
}

/// What a path needs from the machine that not every kernel or install has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    IpVs,
    Nft,
    Iptables,
    /// To turn offloads off on a shaped link.
    Ethtool,
}

impl Path {
    pub const ALL: [Path; 11] = [
        Path::Direct,
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

    /// What the path needs beyond `ip` and `tc` (a shaped link also needs `ethtool`:
    /// [`Need::Ethtool`]).
    pub fn needs(self) -> Option<Need> {
        match self {
            Path::Direct | Path::Routed => None,
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
            Need::Ethtool => format!("{p} with a shaped link needs ethtool: apt-get install ethtool"),
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

impl Shaping {
    /// `100mbit`, `1gbit`, `512kbit`, `10mbit` … as tc writes rates (bits, SI prefixes).
    pub fn parse(text: &str) -> Result<Shaping, String> {
        let t = text.trim();
        if ["delay", "loss", "jitter", "ms"].iter().any(|w| t.contains(w)) {
            return Err(format!(
                "`{text}`: delay and loss need tc netem, which herd does not apply yet (`herd doctor` says whether this kernel has it); give a rate such as 100mbit"
            ));
        }
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (n, unit) = t.split_at(digits);
        let scale: u64 = match unit {
            "kbit" => 1_000,
            "mbit" => 1_000_000,
            "gbit" => 1_000_000_000,
            _ => {
                return Err(format!(
                    "`{text}` is not a link rate: write a whole number and kbit, mbit or gbit, e.g. 100mbit"
                ))
            }
        };
        let n: u64 = n.parse().map_err(|_| {
            format!("`{text}` is not a link rate: the number is missing, e.g. 100mbit")
        })?;
        if n == 0 {
            return Err(format!("`{text}`: a link rate must be above 0"));
        }
        n.checked_mul(scale)
            .filter(|&b| b <= 400_000_000_000)
            .map(|rate_bits| Shaping { rate_bits })
            .ok_or_else(|| format!("`{text}` is beyond 400gbit"))
    }

    /// The rate as tc reads it, in the largest whole unit.
    pub fn rate_text(&self) -> String {
        let r = self.rate_bits;
        if r % 1_000_000_000 == 0 {
            format!("{}gbit", r / 1_000_000_000)
        } else if r % 1_000_000 == 0 {
            format!("{}mbit", r / 1_000_000)
        } else if r % 1_000 == 0 {
            format!("{}kbit", r / 1_000)
        } else {
            format!("{r}bit")
        }
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
        assert!(err.starts_with("unknown path `nat`: expected one of direct, routed,"), "{err}");
    }

    #[test]
    fn lvs_says_what_to_use_instead() {
        let why = Path::LvsNat.needs().unwrap().missing(Path::LvsNat);
        assert!(why.contains("no IP_VS") && why.contains("nft-numgen"), "{why}");
    }

    #[test]
    fn rates_as_tc_writes_them() {
        assert_eq!(Shaping::parse("100mbit").unwrap().rate_bits, 100_000_000);
        assert_eq!(Shaping::parse("1gbit").unwrap().rate_text(), "1gbit");
        assert_eq!(Shaping::parse("1500kbit").unwrap().rate_text(), "1500kbit");
        for bad in ["100", "100Mbps", "mbit", "0mbit", "-5mbit", "999999gbit"] {
            assert!(Shaping::parse(bad).is_err(), "{bad}");
        }
        let netem = Shaping::parse("100mbit delay 20ms").unwrap_err();
        assert!(netem.contains("netem") && netem.contains("herd doctor"), "{netem}");
    }
}
