//! Each rule path built for real (root: CI runs as root), carrying TCP connections from the
//! client namespace to a server in the server namespace, the bytes checked both ways; and
//! nothing left behind afterwards, whether the build succeeded, failed halfway, or left a
//! process running inside. The proxy paths are the lab's (it starts their programs): they are
//! tested there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use herd_topo::net::{apply, netns, plan::SERVER_2, Host, Path, Plan, TopologyError};
use herd_topo::{CpuSet, Registry, Spawn, Supervisor};

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "these tests build network namespaces and need root: run them as root (CI does)"
    );
}

/// A tag of this test process's own, so parallel tests never share a namespace.
fn tag() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("herd-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed) + 100)
}

fn scratch() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("herd-topo-paths-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn assert_gone(plan: &Plan) {
    for &h in &plan.hosts {
        let name = plan.netns(h);
        assert!(!netns::exists(&name), "{name} is left behind");
    }
}

const PORT: u16 = 8080;

/// `n` connections from the client namespace to the plan's target, each sending a request and
/// reading the server's answer to EOF; returns the server-side local address of each (which
/// of the server's addresses the path chose).
fn carry(plan: &Plan, n: usize) -> Vec<Ipv4Addr> {
    carry_from(plan, Host::Client, SocketAddr::from((plan.target, PORT)), n)
}

/// [`carry`] from client host `from` to `target` (its port: where the server listens).
fn carry_from(plan: &Plan, from: Host, target: SocketAddr, n: usize) -> Vec<Ipv4Addr> {
    let server_ns = plan.netns(Host::Server);
    let client_ns = plan.netns(from);
    let listener = netns::within(&server_ns, || {
        TcpListener::bind(SocketAddr::from(([0, 0, 0, 0], target.port()))).unwrap()
    })
    .unwrap();
    let body: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    std::thread::scope(|s| {
        let server = s.spawn(|| {
            let mut seen = Vec::new();
            for _ in 0..n {
                let (mut c, _) = listener.accept().unwrap();
                let mut req = [0u8; 5];
                c.read_exact(&mut req).unwrap();
                assert_eq!(&req, b"hello");
                c.write_all(&body).unwrap();
                match c.local_addr().unwrap().ip() {
                    std::net::IpAddr::V4(v4) => seen.push(v4),
                    other => panic!("{other}"),
                }
            }
            seen
        });
        netns::within(&client_ns, || {
            for _ in 0..n {
                let mut c = TcpStream::connect_timeout(&target, Duration::from_secs(5))
                    .unwrap_or_else(|e| panic!("{} to {target}: {e}", plan.path));
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                c.write_all(b"hello").unwrap();
                let mut got = Vec::new();
                c.read_to_end(&mut got).unwrap();
                assert!(
                    got == body,
                    "{}: {} bytes arrived, not the {} sent",
                    plan.path,
                    got.len(),
                    body.len()
                );
            }
        })
        .unwrap();
        server.join().unwrap()
    })
}

#[test]
fn every_rule_path_carries_the_bytes_intact_and_leaves_nothing() {
    require_root();
    let dir = scratch();
    for path in [Path::Direct, Path::Routed, Path::IptablesDnat, Path::NftDnat, Path::NftNumgen] {
        let plan = Plan::for_path(&tag(), path, PORT, None).unwrap();
        let mut topo = apply(&plan, None, &dir).unwrap_or_else(|e| panic!("{path}: {e}"));
        let seen = carry(&plan, 6);
        if path.balanced() {
            // Round robin: both server addresses, in turn.
            assert_eq!(seen.iter().filter(|&&a| a == SERVER_2).count(), 3, "{path}: {seen:?}");
        } else {
            assert!(seen.iter().all(|&a| a == plan.server_addrs[0]), "{path}: {seen:?}");
        }
        assert_eq!(topo.teardown(), Vec::<String>::new());
        assert_gone(&plan);
    }
}

/// Three agents' client hosts on a bridge at the first hop: each reaches the one target from
/// its own address, and nothing is left.
#[test]
fn agents_each_reach_the_target_from_a_host_of_their_own() {
    require_root();
    let dir = scratch();
    for (k, path) in [Path::Direct, Path::Routed].into_iter().enumerate() {
        let plan = Plan::for_agents(&tag(), path, PORT, None, 3).unwrap();
        let mut topo = apply(&plan, None, &dir).unwrap_or_else(|e| panic!("{path}: {e}"));
        for (i, &(host, target)) in plan.clients.iter().enumerate() {
            // A port per carry: the previous carry's connections may still hold theirs.
            let port = PORT + 20 + (k * 4 + i) as u16;
            let seen = carry_from(&plan, host, SocketAddr::from((target, port)), 2);
            assert!(seen.iter().all(|&a| a == plan.server_addrs[0]), "{path} {host:?}: {seen:?}");
        }
        assert_eq!(topo.teardown(), Vec::<String>::new());
        assert_gone(&plan);
    }
}

/// Four client hosts, each on its own link to its own server address (and no way to another
/// link's: the clients are spread, not sharing one wire), every link shaped, nothing left.
#[test]
fn four_links_give_each_client_host_its_own_link() {
    require_root();
    let dir = scratch();
    let shaping = herd_topo::net::Shaping::parse("100mbit").unwrap();
    let plan = Plan::for_path(&tag(), Path::FourLinks, PORT, Some(&shaping)).unwrap();
    assert_eq!(plan.clients.len(), 4);
    assert_eq!(plan.server_addrs, plan.clients.iter().map(|c| c.1).collect::<Vec<_>>());
    let mut topo = apply(&plan, None, &dir).unwrap();
    // A port a host: each carry's closed connections stay in TIME_WAIT on the server's port
    // (seen: the next listener's bind failed with EADDRINUSE in CI).
    for (n, &(host, addr)) in (1u16..).zip(&plan.clients) {
        let target = SocketAddr::from((addr, PORT + n));
        assert_eq!(carry_from(&plan, host, target, 2), [addr, addr], "{host:?}");
        let other = plan.server_addrs.iter().copied().find(|&a| a != addr).unwrap();
        let reached = netns::within(&plan.netns(host), || {
            TcpStream::connect_timeout(&SocketAddr::from((other, PORT)), Duration::from_secs(1))
        })
        .unwrap();
        assert!(reached.is_err(), "{host:?} reached {other}, another link's address");
    }
    let args: Vec<OsString> =
        ["tc", "-n", &plan.netns(Host::Server), "qdisc", "show"].map(OsString::from).into();
    let qdiscs = Supervisor::new(None)
        .capture("tc", &args, &dir.join("tc.log"), Duration::from_secs(10))
        .into_result()
        .unwrap();
    for dev in ["s-c1", "s-c2", "s-c3", "s-c4"] {
        assert!(
            qdiscs.lines().any(|l| l.contains("tbf") && l.contains(&format!("dev {dev} "))),
            "{dev} is not shaped: {qdiscs}"
        );
    }
    assert_eq!(topo.teardown(), Vec::<String>::new());
    assert_gone(&plan);
}

#[test]
fn a_shaped_link_holds_its_rate() {
    require_root();
    let dir = scratch();
    let shaping = herd_topo::net::Shaping::parse("20mbit").unwrap();
    let plan = Plan::for_path(&tag(), Path::Direct, PORT, Some(&shaping)).unwrap();
    let _topo = apply(&plan, None, &dir).unwrap();
    // 70 kB five times: 350 kB = 2.8 Mbit at 20 Mbit/s is at least 0.14 s (the first 32 kB
    // burst aside); unshaped veth moves it in about a millisecond.
    let started = std::time::Instant::now();
    carry(&plan, 5);
    let took = started.elapsed();
    assert!(took > Duration::from_millis(100), "20mbit moved 350 kB in {took:?}");
}

#[test]
fn a_failed_step_removes_what_was_made() {
    require_root();
    let dir = scratch();
    let mut plan = Plan::for_path(&tag(), Path::Routed, PORT, None).unwrap();
    let bad = vec![
        "ip".to_string(),
        "-n".into(),
        plan.netns(Host::Router),
        "link".into(),
        "set".into(),
        "no-such-dev".into(),
        "up".into(),
    ];
    plan.steps.insert(3, bad);
    let err = apply(&plan, None, &dir).unwrap_err();
    let TopologyError::Step { command, how, .. } = &err else { panic!("{err}") };
    assert!(command.contains("no-such-dev") && !how.is_empty(), "{err}");
    assert_gone(&plan);
}

#[test]
fn processes_left_inside_are_stopped_and_recorded_namespaces_cleaned_after_a_crash() {
    require_root();
    let dir = scratch();
    let plan = Plan::for_path(&tag(), Path::Direct, PORT, None).unwrap();
    let topo = apply(&plan, None, &dir).unwrap();
    let server_ns = topo.netns(Host::Server);
    let log = dir.join("sleep.log");
    let argv: Vec<OsString> = ["sleep", "60"].iter().map(OsString::from).collect();
    let mut sup = Supervisor::new(None);
    let pid = sup
        .start(&Spawn {
            name: "sleeper",
            argv: &argv,
            env: &[],
            stdout: &log,
            stderr: &log,
            cpus: &CpuSet::All,
            netns: Some(&server_ns),
        })
        .unwrap();
    assert_eq!(netns::pids(&server_ns), vec![pid], "the program runs in the namespace");
    // The Topology goes first (as after a panic): the sleeper is killed, the namespace gone.
    drop(topo);
    assert_gone(&plan);
    let _ = sup.exit_status(pid);
    drop(sup);

    // A registry whose owner died (kill -9): clean deletes what it recorded. From the moment
    // a dead owner's namespaces exist, any sweep would take them, whichever test binary runs
    // it: the sweep lock is held from before they are made until this test's clean.
    let sweep = herd_testutil::sweep::lock();
    let parent = dir.join("runs");
    std::fs::create_dir_all(&parent).unwrap();
    let reg = Registry::create(&parent).unwrap();
    // The dead owner's PID, in its namespaces' names as herd writes them (PIDs stay below
    // 2^22 on Linux: this one runs nowhere).
    let dead = std::process::id() + 5_000_000;
    let plan = Plan::for_path(&format!("herd-{dead}-0"), Path::Routed, PORT, None).unwrap();
    let topo = apply(&plan, Some(&reg), &dir).unwrap();
    std::mem::forget(topo); // as if herd were killed: no teardown
    std::fs::write(reg.dir().join("owner"), format!("{dead} 1\n")).unwrap();
    let cleaned = herd_topo::registry::clean(&parent);
    let mut want: Vec<String> = plan.hosts.iter().rev().map(|&h| plan.netns(h)).collect();
    want.sort();
    // clean also removes any herd namespace whose maker is gone (another test's or run's,
    // left by a crash on this shared machine): those may come along, nothing else.
    let (mut got, others): (Vec<String>, Vec<String>) =
        cleaned.namespaces.iter().cloned().partition(|n| want.contains(n));
    got.sort();
    assert_eq!(got, want, "{cleaned:?}");
    assert!(others.iter().all(|n| made_by_a_dead_herd(n)), "{cleaned:?}");
    assert_gone(&plan);

    // A dead owner's registry naming namespaces of a live herd (its PID reused): kept.
    let reg = Registry::create(&parent).unwrap();
    let live = Plan::for_path(&tag(), Path::Direct, PORT, None).unwrap();
    let topo = apply(&live, Some(&reg), &dir).unwrap();
    std::fs::write(reg.dir().join("owner"), format!("{dead} 1\n")).unwrap();
    let cleaned = herd_topo::registry::clean(&parent);
    drop(sweep);
    assert!(
        cleaned.namespaces.iter().all(|n| made_by_a_dead_herd(n)),
        "a live run's namespaces were taken: {cleaned:?}"
    );
    for &h in &live.hosts {
        assert!(netns::exists(&live.netns(h)));
    }
    drop(topo);
    assert_gone(&live);
}

#[test]
fn an_existing_namespace_is_not_taken_over() {
    require_root();
    let dir = scratch();
    let plan = Plan::for_path(&tag(), Path::Direct, PORT, None).unwrap();
    let first = apply(&plan, None, &dir).unwrap();
    let err = apply(&plan, None, &dir).unwrap_err();
    assert!(matches!(err, TopologyError::Exists { .. }), "{err}");
    assert!(err.to_string().contains("herd lab clean"), "{err}");
    // The refusal removed nothing of the first.
    for &h in &plan.hosts {
        assert!(netns::exists(&plan.netns(h)));
    }
    drop(first);
    assert_gone(&plan);
}

/// Whether the herd process named in namespace `name` (`herd-PID-…`) is gone.
fn made_by_a_dead_herd(name: &str) -> bool {
    let pid = name.strip_prefix("herd-").and_then(|rest| rest.split('-').next());
    pid.and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
}
