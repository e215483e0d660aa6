//! Golden command lists of every path: what `--dry-run` prints, reviewed once and then
//! checked byte for byte (a proxy path's program is the lab's; its namespaces are here). `UPDATE_GOLDEN=1` rewrites them.
//! The routed plan was also pasted into a root shell and carried `herd ab -n 2000` from the
//! client namespace to `herd serve` in the server namespace with 0 failures (2026-11-21).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_testutil::golden::Goldens;
use herd_topo::net::{Host, Path, Plan, Shaping};

fn check_golden(name: &str, got: &str) {
    Goldens::of(env!("CARGO_MANIFEST_DIR")).check(name, got);
}

#[test]
fn every_rule_path_has_its_golden_plan() {
    for path in Path::ALL {
        let plan = Plan::for_path("herd-t1", path, 8080, None).unwrap();
        check_golden(&format!("plan-{path}.txt"), &plan.to_string());
    }
    let shaped =
        Plan::for_path("herd-t1", Path::Direct, 8080, Some(&Shaping::parse("100mbit").unwrap()))
            .unwrap();
    check_golden("plan-direct-100mbit.txt", &shaped.to_string());
    // netem at the root, tbf under it (tc-netem(8)'s layout); not run on this kernel, which
    // has no sch_netem: the lab refuses such links here (preflight probes the kernel).
    let netem = Shaping::parse("100mbit,delay=20ms,loss=0.1%").unwrap();
    let plan = Plan::for_path("herd-t1", Path::Routed, 8080, Some(&netem)).unwrap();
    check_golden("plan-routed-100mbit-delay-loss.txt", &plan.to_string());
    // Once each way, however many links a path has: netem on the client's and the server's
    // ends only, the rate on every end.
    let on = |what: &str| -> Vec<String> {
        plan.commands().into_iter().filter(|c| c.contains(what)).collect()
    };
    let netem = on(" netem ");
    assert_eq!(netem.len(), 2, "{netem:?}");
    assert!(
        netem[0].starts_with("tc -n herd-t1-client ")
            && netem[1].starts_with("tc -n herd-t1-server "),
        "{netem:?}"
    );
    assert_eq!(on(" tbf ").len(), 4, "every end of both links has the rate");
    let delay_only = Shaping::parse("delay=5ms").unwrap();
    let plan = Plan::for_path("herd-t1", Path::Direct, 8080, Some(&delay_only)).unwrap();
    check_golden("plan-direct-delay.txt", &plan.to_string());
}

#[test]
fn every_name_and_address_stays_in_herds_ranges() {
    for path in Path::ALL {
        let plan = Plan::for_path("herd-t2", path, 80, None).unwrap();
        for line in plan.commands() {
            for word in line.split(|c: char| c.is_whitespace() || c == '/' || c == ':' || c == '\'')
            {
                if let Ok(ip) = word.parse::<std::net::Ipv4Addr>() {
                    let o = ip.octets();
                    assert!(o[0] == 198 && (o[1] == 18 || o[1] == 19), "{ip} in: {line}");
                }
            }
            if line.starts_with("ip netns") || line.contains(" netns ") {
                assert!(line.contains("herd-t2-"), "a namespace without the herd prefix: {line}");
            }
        }
        assert_eq!(plan.netns(Host::Client), "herd-t2-client");
    }
}

#[test]
fn each_path_sends_the_client_where_it_should() {
    use herd_topo::net::plan::{DIRECT_SERVER, SERVER, VIP};
    for (path, target) in [
        (Path::Direct, DIRECT_SERVER),
        (Path::Routed, SERVER),
        (Path::IptablesDnat, VIP),
        (Path::NftDnat, VIP),
        (Path::NftNumgen, VIP),
        (Path::LvsNat, VIP),
        (Path::HaproxyHttp, VIP),
        (Path::HaproxyTcp, VIP),
        (Path::NginxProxy, VIP),
        (Path::SslhFork, VIP),
        (Path::SslhSelect, VIP),
    ] {
        assert_eq!(Plan::for_path("herd-t4", path, 80, None).unwrap().target, target, "{path}");
    }
}

#[test]
fn a_tag_that_is_not_herds_is_refused() {
    for tag in ["topo-1", "herd-a/b", "herd-a b", ""] {
        let err = Plan::for_path(tag, Path::Routed, 80, None).unwrap_err();
        assert!(err.contains("must start with herd-"), "{tag}: {err}");
    }
}

#[test]
fn direct_has_no_router_and_balanced_paths_two_servers() {
    let direct = Plan::for_path("herd-t3", Path::Direct, 80, None).unwrap();
    assert_eq!(direct.hosts, [Host::Client, Host::Server]);
    assert!(!direct.commands().iter().any(|l| l.contains("router")));
    let rr = Plan::for_path("herd-t3", Path::NftNumgen, 80, None).unwrap();
    assert_eq!(rr.server_addrs.len(), 2);
    let routed = Plan::for_path("herd-t3", Path::Routed, 80, None).unwrap();
    assert!(
        !routed.commands().iter().any(|l| l.contains("nft") || l.contains("iptables")),
        "routed has no NAT"
    );
    assert!(routed.commands().iter().any(|l| l.ends_with("net.ipv4.ip_forward=1")));
}

/// Several agents of one spread run: a client host each, on a bridge at the first hop.
#[test]
fn agents_plans_have_their_goldens_and_limits() {
    for (path, agents) in [(Path::Direct, 3), (Path::Routed, 3), (Path::NftDnat, 2)] {
        let plan = Plan::for_agents("herd-t1", path, 8080, None, agents).unwrap();
        check_golden(&format!("plan-{path}-{agents}-agents.txt"), &plan.to_string());
        assert_eq!(plan.clients.len(), usize::from(agents));
        assert!(plan.clients.iter().all(|&(_, to)| to == plan.target), "one target for all");
        assert_eq!(plan.netns(Host::Client3), "herd-t1-client3");
    }
    // One agent is the one-client plan, command for command.
    for path in Path::ALL {
        assert_eq!(
            Plan::for_agents("herd-t1", path, 8080, None, 1).unwrap(),
            Plan::for_path("herd-t1", path, 8080, None).unwrap()
        );
    }
    let refused = |path, shaping: Option<&Shaping>, agents| {
        Plan::for_agents("herd-t1", path, 8080, shaping, agents).unwrap_err()
    };
    assert!(refused(Path::FourLinks, None, 2).contains("four-links has its four client hosts"));
    let shaped = Shaping::parse("100mbit").unwrap();
    assert!(refused(Path::Routed, Some(&shaped), 2).contains("a shaped link with 2 agents"));
    assert!(refused(Path::Direct, None, 5).contains("5 agents: a path holds 1 to 4"));
    assert!(refused(Path::Direct, None, 0).contains("0 agents"));
}
