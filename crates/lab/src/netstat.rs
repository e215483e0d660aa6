//! What a network path's hosts saw during a run, from the kernel's own counters: SYN
//! retransmits and failed connects on the client, listen-queue overflows on the server,
//! conntrack use and drops on the router, TIME_WAIT and port use everywhere. Read in each
//! host's namespace before and after the measured run, and turned into plain findings ("the
//! router's conntrack table was full: 812 packets dropped") instead of silently slower
//! numbers. Over loopback none of this is read: the host's counters are everybody's.

use std::collections::BTreeMap;

pub use herd_store::{Conntrack, NetworkFacts};

/// TCP counters of one namespace (`Tcp.ActiveOpens`, `TcpExt.ListenOverflows`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters(pub BTreeMap<String, i64>);

/// One host's view at one moment.
#[derive(Debug, Clone, Default)]
pub struct HostSnapshot {
    pub counters: Counters,
    pub time_wait: Option<u64>,
    pub conntrack: Option<Conntrack>,
}

/// Parses `/proc/net/snmp` or `/proc/net/netstat`: pairs of lines, names then values, each
/// starting with the same `Prefix:`.
pub fn parse_pairs(text: &str) -> Counters {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let (Some((p1, names)), Some((p2, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if p1 != p2 {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = v.parse::<i64>() {
                out.insert(format!("{p1}.{n}"), v);
            }
        }
    }
    Counters(out)
}

/// Sums the per-CPU rows of `/proc/net/stat/nf_conntrack` (hexadecimal) by column name.
pub fn parse_conntrack_stat(text: &str) -> BTreeMap<String, u64> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else { return BTreeMap::new() };
    let names: Vec<&str> = header.split_whitespace().collect();
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for line in lines {
        for (n, v) in names.iter().zip(line.split_whitespace()) {
            if let Ok(v) = u64::from_str_radix(v, 16) {
                *out.entry((*n).to_string()).or_default() += v;
            }
        }
    }
    out
}

/// Reads this thread's namespace (call it from inside `netns::within`). The TCP counters
/// must be readable; conntrack is optional (a namespace without NAT has none).
pub fn snapshot_here() -> Result<HostSnapshot, String> {
    let must = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"));
    let mut counters = parse_pairs(&must("/proc/thread-self/net/snmp")?);
    counters.0.extend(parse_pairs(&must("/proc/thread-self/net/netstat")?).0);
    let time_wait = Some(crate::timewait::count_in(&must("/proc/thread-self/net/tcp")?));
    // The sysctls are the namespace's own: /proc/sys/net resolves by the reading thread.
    let number = |name: &str| crate::environment::sysctl(name).and_then(|v| v.parse::<u64>().ok());
    let conntrack = match number("net.netfilter.nf_conntrack_count") {
        // No conntrack in this namespace (no NAT rule ever loaded): nothing to read.
        None => None,
        Some(count) => {
            let max = number("net.netfilter.nf_conntrack_max")
                .ok_or("cannot read net.netfilter.nf_conntrack_max")?;
            let stat = parse_conntrack_stat(&must("/proc/thread-self/net/stat/nf_conntrack")?);
            let field = |k: &str| {
                stat.get(k).copied().ok_or(format!("no `{k}` in /proc/net/stat/nf_conntrack"))
            };
            Some(Conntrack {
                count,
                max,
                drop: field("drop")?,
                insert_failed: field("insert_failed")?,
            })
        }
    };
    Ok(HostSnapshot { counters, time_wait, conntrack })
}

/// `after` with its drops and failed inserts counted since `before` (the warm-up and the
/// path's own setup are not the measured run's).
pub fn conntrack_since(after: Conntrack, before: Option<&Conntrack>) -> Conntrack {
    let b = before.copied().unwrap_or_default();
    Conntrack {
        drop: after.drop.saturating_sub(b.drop),
        insert_failed: after.insert_failed.saturating_sub(b.insert_failed),
        ..after
    }
}

impl Counters {
    /// `after - before` for `key` (0 when either lacks it).
    pub fn delta(before: &Counters, after: &Counters, key: &str) -> i64 {
        match (before.0.get(key), after.0.get(key)) {
            (Some(b), Some(a)) => a - b,
            _ => 0,
        }
    }
}

/// Share of a shaped link's rate above which the link, not the server, set the pace.
pub const LINK_BOUND_SHARE: f64 = 0.85;
/// Share of the ephemeral ports in TIME_WAIT above which a host is running out of them.
pub const PORTS_SHARE: f64 = 0.9;

/// The findings, from the figures (called once they are all in).
pub fn judge(facts: &mut NetworkFacts) {
    let mut f = Vec::new();
    if let (Some(rate), Some(carried)) = (facts.link_bits_per_second, facts.carried_bits_per_second)
    {
        // Side by side links (four-links) carry their rates together.
        let links = facts.server_links.max(1);
        let capacity = rate as f64 * f64::from(links);
        if carried >= LINK_BOUND_SHARE * capacity {
            let on = match links {
                1 => format!("a {:.0} Mbit/s link", rate as f64 / 1e6),
                n => format!("{n} links of {:.0} Mbit/s", rate as f64 / 1e6),
            };
            f.push(format!(
                "{}: {:.1} Mbit/s carried on {on} ({:.0} %): the link, not the server, set this rate",
                herd_store::FINDING_LINK_BOUND,
                carried / 1e6,
                100.0 * carried / capacity
            ));
        }
    }
    if let Some(c) = facts.router_conntrack {
        if c.drop > 0 || c.insert_failed > 0 || (c.max > 0 && c.count >= c.max) {
            f.push(format!(
                "conntrack table full on the router: {} of {} entries, {} packets dropped, {} inserts failed",
                c.count, c.max, c.drop, c.insert_failed
            ));
        }
    }
    let ports = facts.ephemeral_ports as f64;
    for (who, tw) in
        [("client", facts.client_time_wait), ("router (toward the server)", facts.router_time_wait)]
    {
        if let Some(tw) = tw {
            if ports > 0.0 && tw as f64 >= PORTS_SHARE * ports {
                f.push(format!(
                    "port exhaustion on the {who}: {tw} sockets in TIME_WAIT of {} ephemeral ports",
                    facts.ephemeral_ports
                ));
            }
        }
    }
    if facts.client_failed_connects > 0 {
        f.push(format!("failed connects: {} on the client", facts.client_failed_connects));
    }
    if facts.client_syn_retransmits > 0 {
        f.push(format!(
            "SYN retransmits: {} by the client (each costs the connection at least a second)",
            facts.client_syn_retransmits
        ));
    }
    if facts.server_listen_overflows > 0 {
        f.push(format!("listen queue overflows: {} on the server", facts.server_listen_overflows));
    }
    facts.findings = f;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_of_lines_become_named_counters() {
        let text =
            "Tcp: RtoAlgorithm ActiveOpens AttemptFails\nTcp: 1 42 3\nUdp: InDatagrams\nUdp: 7\n";
        let c = parse_pairs(text);
        assert_eq!(c.0.get("Tcp.ActiveOpens"), Some(&42));
        assert_eq!(c.0.get("Udp.InDatagrams"), Some(&7));
        let later = parse_pairs("Tcp: RtoAlgorithm ActiveOpens AttemptFails\nTcp: 1 50 3\n");
        assert_eq!(Counters::delta(&c, &later, "Tcp.ActiveOpens"), 8);
        assert_eq!(Counters::delta(&c, &later, "Tcp.Missing"), 0);
    }

    #[test]
    fn conntrack_drops_count_from_before_the_run() {
        let before = Conntrack { count: 3, max: 100, drop: 7, insert_failed: 1 };
        let after = Conntrack { count: 50, max: 100, drop: 10, insert_failed: 1 };
        assert_eq!(
            conntrack_since(after, Some(&before)),
            Conntrack { drop: 3, insert_failed: 0, ..after }
        );
        assert_eq!(conntrack_since(after, None), after);
    }

    #[test]
    fn conntrack_stats_sum_the_cpus_in_hex() {
        let text = "entries  drop insert_failed\n00000010  0000000a 00000001\n00000002  00000006 00000000\n";
        let s = parse_conntrack_stat(text);
        assert_eq!(s.get("drop"), Some(&16));
        assert_eq!(s.get("insert_failed"), Some(&1));
    }

    #[test]
    fn findings_name_what_capped_the_run() {
        let mut f = NetworkFacts {
            link_bits_per_second: Some(100_000_000),
            carried_bits_per_second: Some(91e6),
            router_conntrack: Some(Conntrack { count: 10, max: 10, drop: 5, insert_failed: 0 }),
            client_time_wait: Some(60_000),
            ephemeral_ports: 63_977,
            client_syn_retransmits: 2,
            ..NetworkFacts::default()
        };
        judge(&mut f);
        let all = f.findings.join("\n");
        assert!(all.contains("link-bound: 91.0 Mbit/s carried on a 100 Mbit/s link"), "{all}");
        assert!(all.contains("conntrack table full"), "{all}");
        assert!(all.contains("port exhaustion on the client"), "{all}");
        assert!(all.contains("SYN retransmits: 2 by the client"), "{all}");
        let mut quiet = NetworkFacts {
            link_bits_per_second: Some(100_000_000),
            carried_bits_per_second: Some(40e6),
            ephemeral_ports: 63_977,
            client_time_wait: Some(5_000),
            ..NetworkFacts::default()
        };
        judge(&mut quiet);
        assert!(quiet.findings.is_empty(), "{:?}", quiet.findings);
        // Four links side by side: 302.9 Mbit/s is 76 % of their 400, not 303 % of one.
        let four = |carried| {
            let mut f = NetworkFacts {
                link_bits_per_second: Some(100_000_000),
                carried_bits_per_second: Some(carried),
                server_links: 4,
                ..NetworkFacts::default()
            };
            judge(&mut f);
            f.findings.join("\n")
        };
        assert_eq!(four(302.9e6), "");
        let bound = four(360e6);
        assert!(bound.contains("360.0 Mbit/s carried on 4 links of 100 Mbit/s (90 %)"), "{bound}");
    }
}
