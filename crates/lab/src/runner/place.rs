//! Where a run's programs live and talk: over loopback in herd's own namespace (no `path`
//! axis), or on a network path built afresh for the run (herd_topo's [`Topology`]): client,
//! router and server namespaces, the server listening on its host's addresses, the client
//! sending to the path's target. Fresh namespaces per run also mean a fresh TIME_WAIT table,
//! conntrack table and port range for every run: nothing one run leaves can slow the next
//! (the PAWS stalls of shared/docs/topology-notes.md, pitfall 1).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path as FsPath;
use std::sync::atomic::{AtomicU32, Ordering};

use herd_drivers::Probe;

use crate::netstat::{self, Counters, HostSnapshot, NetworkFacts};
use herd_topo::net::plan::EPHEMERAL_PORTS;
use herd_topo::net::{apply, netns, Host, Path, Plan, Shaping, Topology, TopologyError};
use herd_topo::Registry;

/// Where one run's programs are.
pub(super) struct Place {
    /// Where the server binds.
    pub(super) listen: SocketAddr,
    /// Where the client (and the verification, and the path's readiness probe) connect.
    pub(super) target: SocketAddr,
    /// Set on a network path; None over loopback.
    pub(super) network: Option<Network>,
    /// On `[hosts]` with a router host: where its proxy listens (the target) and the
    /// servers it forwards to.
    pub(super) via: Option<Via>,
}

/// A proxy on a `[hosts]` router host, in front of the server host.
pub(super) struct Via {
    pub(super) listen: SocketAddr,
    pub(super) backends: Vec<SocketAddr>,
}

/// A path built for one run.
pub(super) struct Network {
    pub(super) topology: Topology,
    pub(super) link: Option<Shaping>,
}

/// Each host's counters at one moment (a host the path lacks is None).
pub(super) struct Snapshots {
    client: Option<HostSnapshot>,
    server: Option<HostSnapshot>,
    router: Option<HostSnapshot>,
    /// Hosts whose counters could not be read, and why: said in the findings, not hidden.
    unreadable: Vec<String>,
}

impl Place {
    /// Loopback, with the server on `listen`.
    pub(super) fn loopback(listen: SocketAddr) -> Place {
        Place { listen, target: listen, network: None, via: None }
    }

    /// The `[hosts]` server host at `address`: the server listens there on `port` (so
    /// that a TLS certificate made for the run names the address the client sends to), the
    /// client sends to it over the real network.
    pub(super) fn remote(address: std::net::IpAddr, port: u16) -> Place {
        let at = SocketAddr::new(address, port);
        Place { listen: at, target: at, network: None, via: None }
    }

    /// The `[hosts]` server host at `server` behind the proxy of the router host at
    /// `router`: the client sends to the router, whose program forwards to the server,
    /// `backends` times over (two where the proxy balances: the one server host's address
    /// twice, so that the proxy's round robin runs as on the path herd builds).
    pub(super) fn remote_via(server: SocketAddr, router: SocketAddr, backends: usize) -> Place {
        let via = Via { listen: router, backends: vec![server; backends.max(1)] };
        Place { listen: server, target: router, network: None, via: Some(via) }
    }

    /// `path` (links shaped to `link`) built in fresh namespaces, recorded in `registry`
    /// first, the server to listen on `port` (the lab's PATH_PORT, or a server's built-in
    /// one); `scratch` takes the commands' output.
    pub(super) fn path(
        path: Path,
        link: Option<&Shaping>,
        port: u16,
        agents: u8,
        registry: Option<&Registry>,
        scratch: &FsPath,
    ) -> Result<Place, String> {
        static RUNS: AtomicU32 = AtomicU32::new(0);
        // The PID in the name lets `herd lab clean` tell a live run's namespaces from a
        // crashed one's even without its registry.
        // A name taken already carries this process's PID (a namespace an earlier herd with
        // the same PID left, which `herd lab clean` keeps while this PID lives): take the
        // next number rather than fail.
        // A retry whose teardown left something behind is said, not retried over.
        let mut built = None;
        for _ in 0..100 {
            let n = RUNS.fetch_add(1, Ordering::Relaxed);
            let tag = format!("herd-{}-{n}", std::process::id());
            let plan = Plan::for_agents(&tag, path, port, link, agents)?;
            match apply(&plan, registry, scratch) {
                Ok(topology) => {
                    built = Some((plan, topology));
                    break;
                }
                Err(TopologyError::Exists { cleanup, .. }) if cleanup.is_empty() => continue,
                Err(e) => return Err(crate::error::with_causes(&e)),
            }
        }
        let Some((plan, topology)) = built else {
            return Err(format!(
                "100 network namespace names herd-{}-N were taken: run `herd lab clean`",
                std::process::id()
            ));
        };
        // One server process on every address of its host (two for a balanced path): the
        // namespace has no other address to expose it on.
        let listen = match plan.server_addrs.as_slice() {
            [one] => SocketAddr::from((*one, port)),
            _ => SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)),
        };
        let target = SocketAddr::from((plan.target, port));
        let network = Some(Network { topology, link: link.cloned() });
        Ok(Place { listen, target, network, via: None })
    }

    /// Every client host and where it connects: the client and the target, or on
    /// `four-links` each of its four client hosts and the server's address on its link.
    pub(super) fn clients(&self) -> Vec<(Host, SocketAddr)> {
        match &self.network {
            Some(n) => n
                .topology
                .plan()
                .clients
                .iter()
                .map(|&(h, a)| (h, SocketAddr::from((a, self.target.port()))))
                .collect(),
            None => vec![(Host::Client, self.target)],
        }
    }

    /// The namespace of `host`, or None over loopback.
    pub(super) fn netns(&self, host: Host) -> Option<String> {
        self.network.as_ref().map(|n| n.topology.netns(host))
    }

    /// Where the server itself answers, seen from its own host: its listen address, or its
    /// first address when it listens on all.
    pub(super) fn server_local(&self) -> SocketAddr {
        match (&self.network, self.listen.ip().is_unspecified()) {
            (Some(n), true) => {
                let first = n.topology.plan().server_addrs.first().copied();
                SocketAddr::from((first.unwrap_or(Ipv4Addr::LOCALHOST), self.listen.port()))
            }
            _ => self.listen,
        }
    }

    /// A server's own readiness probe as asked from the server's host: an address it listens
    /// on everywhere (0.0.0.0) is asked on its first real one.
    pub(super) fn local_probe(&self, probe: &Probe) -> Probe {
        match probe {
            Probe::Http { addr, path, protocol } if addr.ip().is_unspecified() => {
                Probe::Http { addr: self.server_local(), path: path.clone(), protocol: *protocol }
            }
            Probe::Tcp(addr) if addr.ip().is_unspecified() => Probe::Tcp(self.server_local()),
            other => other.clone(),
        }
    }

    /// Runs `f` in `host`'s namespace (herd's own over loopback): sockets it opens are there.
    pub(super) fn within<T: Send>(
        &self,
        host: Host,
        f: impl FnOnce() -> T + Send,
    ) -> Result<T, String> {
        match self.netns(host) {
            None => Ok(f()),
            Some(ns) => netns::within(&ns, f).map_err(|e| format!("cannot enter {ns}: {e}")),
        }
    }

    /// Every host's counters now (None over loopback, where they are the whole machine's).
    pub(super) fn snapshot(&self) -> Option<Snapshots> {
        let n = self.network.as_ref()?;
        let hosts = &n.topology.plan().hosts;
        let mut unreadable = Vec::new();
        let mut take = |h: Host| -> Option<HostSnapshot> {
            if !hosts.contains(&h) {
                return None;
            }
            self.within(h, netstat::snapshot_here)
                .and_then(|read| read)
                .map_err(|why| unreadable.push(format!("the {} host's counters: {why}", h.name())))
                .ok()
        };
        let (client, server, router) = (take(Host::Client), take(Host::Server), take(Host::Router));
        Some(Snapshots { client, server, router, unreadable })
    }

    /// What the path's hosts saw between `before` and `after`, judged; `bytes` the client
    /// received in `seconds`, the router program's CPU time over the same span.
    pub(super) fn facts(
        &self,
        before: &Snapshots,
        after: &Snapshots,
        bytes: u64,
        seconds: f64,
        router_cpu_seconds: Option<f64>,
    ) -> Option<NetworkFacts> {
        let n = self.network.as_ref()?;
        let plan = n.topology.plan();
        let delta = |b: &Option<HostSnapshot>, a: &Option<HostSnapshot>, key: &str| match (b, a) {
            (Some(b), Some(a)) => Counters::delta(&b.counters, &a.counters, key),
            _ => 0,
        };
        let mut f = NetworkFacts {
            path: plan.path.to_string(),
            link_bits_per_second: n.link.as_ref().and_then(|l| l.rate_bits()),
            server_links: u32::try_from(plan.clients.len()).unwrap_or(1),
            carried_bits_per_second: (seconds > 0.0).then(|| bytes as f64 * 8.0 / seconds),
            client_syn_retransmits: delta(&before.client, &after.client, "TcpExt.TCPSynRetrans"),
            client_failed_connects: delta(&before.client, &after.client, "Tcp.AttemptFails"),
            client_time_wait: after.client.as_ref().and_then(|s| s.time_wait),
            server_listen_overflows: delta(&before.server, &after.server, "TcpExt.ListenOverflows"),
            server_passive_opens: delta(&before.server, &after.server, "Tcp.PassiveOpens"),
            server_time_wait: after.server.as_ref().and_then(|s| s.time_wait),
            router_time_wait: after.router.as_ref().and_then(|s| s.time_wait),
            router_conntrack: after.router.as_ref().and_then(|a| {
                a.conntrack.map(|c| {
                    netstat::conntrack_since(
                        c,
                        before.router.as_ref().and_then(|b| b.conntrack.as_ref()),
                    )
                })
            }),
            router_cpu_seconds,
            ephemeral_ports: u64::from(EPHEMERAL_PORTS.1 - EPHEMERAL_PORTS.0) + 1,
            findings: Vec::new(),
        };
        netstat::judge(&mut f);
        for why in before.unreadable.iter().chain(&after.unreadable) {
            f.findings.push(format!("not read: {why}"));
        }
        Some(f)
    }

    /// Where the servers answer, as the router reaches them (every address of the server
    /// host); None over loopback and on a server host without a router host.
    pub(super) fn backends(&self) -> Option<Vec<SocketAddr>> {
        if let Some(via) = &self.via {
            return Some(via.backends.clone());
        }
        let plan = self.network.as_ref()?.topology.plan();
        Some(plan.server_addrs.iter().map(|&a| SocketAddr::from((a, self.listen.port()))).collect())
    }

    /// Where a router program listens: the path's target, on the router (a namespace or
    /// the router host). None over loopback, on a direct path or without a router host.
    pub(super) fn router_listen(&self) -> Option<SocketAddr> {
        if let Some(via) = &self.via {
            return Some(via.listen);
        }
        let plan = self.network.as_ref()?.topology.plan();
        plan.hosts.contains(&Host::Router).then_some(self.target)
    }

    /// Deletes the path's namespaces (nothing over loopback); what could not be removed.
    pub(super) fn teardown(&mut self) -> Vec<String> {
        match &mut self.network {
            Some(n) => n.topology.teardown(),
            None => Vec::new(),
        }
    }
}
