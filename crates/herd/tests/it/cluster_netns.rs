//! Agents each in a client namespace of their own (root: CI runs as root), against a real
//! nginx in a server namespace: a path for three agents built with herd's own topology
//! (`Plan::for_agents`), `herd cluster run --local 3 --netns …` into it. nginx's own access
//! log counts exactly the merged count, from three client addresses, a third each; then the
//! lab with `[client] agents = 3` runs a cell the same way. Nothing is left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;
use crate::util::require_root;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use herd_topo::net::{apply, netns, Host, Path as NetPath, Plan};
use herd_topo::{CpuSet, Spawn, Supervisor};
use util::{herd, lab_run, rows_of, run, tempdir, text, word_starting_under};

fn nginx() -> &'static str {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("nginx is missing: apt-get install nginx-light")
}

#[test]
fn three_agents_in_namespaces_of_their_own_are_counted_by_nginx() {
    require_root();
    let dir = tempdir("cluster-netns");
    let tag = format!("herd-{}-700", std::process::id());
    let plan = Plan::for_agents(&tag, NetPath::Routed, 80, None, 3).unwrap();
    let mut topo = apply(&plan, None, &dir).unwrap();
    // nginx in the server namespace, logging each request's client address.
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("small.html"), "hello, herd!\n").unwrap();
    let log = dir.join("access.log");
    let conf = dir.join("nginx.conf");
    let server = plan.server_addrs[0];
    std::fs::write(
        &conf,
        format!(
            "worker_processes 1;\nerror_log {d}/error.log;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ log_format a '$remote_addr'; access_log {log} a;\n\
               client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
               server {{ listen {server}:80; root {root}; }} }}\n",
            d = dir.display(),
            log = log.display(),
            root = root.display(),
        ),
    )
    .unwrap();
    let mut sup = Supervisor::new(None);
    let argv: Vec<OsString> =
        [nginx(), "-c", &conf.to_string_lossy(), "-p", &dir.to_string_lossy()]
            .iter()
            .map(OsString::from)
            .chain(["-g".into(), "daemon off; master_process off;".into()])
            .collect();
    let server_ns = plan.netns(Host::Server);
    sup.start(&Spawn {
        name: "nginx",
        argv: &argv,
        env: &[],
        stdout: &dir.join("nginx.out"),
        stderr: &dir.join("nginx.out"),
        cpus: &CpuSet::All,
        netns: Some(&server_ns),
    })
    .unwrap();
    let t = Instant::now();
    while netns::within(&server_ns, || std::net::TcpStream::connect((server, 80)).is_err()).unwrap()
    {
        assert!(t.elapsed() < Duration::from_secs(5), "nginx did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let names: Vec<String> = plan.clients.iter().map(|&(h, _)| plan.netns(h)).collect();
    let json = dir.join("run.json");
    let hiccups = herd_testutil::hiccups::Hiccups::watch();
    let out = run(herd()
        .args(["cluster", "run", "--local", "3"])
        .arg(format!("--netns={}", names.join(",")))
        .arg("--")
        .arg(format!("http://{}:80/small.html", plan.target))
        .args(["-n", "3000", "-c", "6", "-t", "1", "--json"])
        .arg(&json));
    // Together: a few ms, plus what the machine delayed a waking thread meanwhile.
    let bound_us = 25_000.0 + hiccups.stop().worst.as_secs_f64() * 1e6;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["requests"]["completed"], 3000, "{v}");
    // nginx's own count, by client address: three agents, three addresses, a third each.
    let mut by_addr: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        *by_addr.entry(line.trim().to_owned()).or_default() += 1;
    }
    assert_eq!(by_addr.values().sum::<usize>(), 3000, "{by_addr:?}");
    assert_eq!(by_addr.len(), 3, "one address per agent: {by_addr:?}");
    assert!(by_addr.values().all(|&n| n == 1000), "{by_addr:?}");
    for a in v["agents"].as_array().unwrap() {
        let late = a["start_late_us"].as_f64().unwrap();
        assert!((0.0..bound_us).contains(&late), "{bound_us} µs allowed: {a}");
    }
    sup.stop_all(Duration::from_secs(2));
    assert_eq!(topo.teardown(), Vec::<String>::new());
    for &h in &plan.hosts {
        assert!(!netns::exists(&plan.netns(h)), "{h:?} left");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_lab_spreads_a_cell_over_agents_on_hosts_of_their_own() {
    require_root();
    let dir = tempdir("lab-agents");
    let file = dir.join("e.toml");
    std::fs::write(
        &file,
        r#"
name = "agents"
[matrix]
server = ["nginx"]
workload = ["page"]
load = ["l"]
path = ["direct"]
[workloads.page]
kind = "static"
size = 4096
[loads.l]
requests = 1200
concurrency = 6
[client]
agents = 3
threads = 1
[repetitions]
min = 3
max = 3
"#,
    )
    .unwrap();
    let dry = run(herd().args(["lab", "run", "--dry-run"]).arg(&file));
    let plan = text(&dry.stdout);
    assert!(dry.status.success(), "{plan}{}", text(&dry.stderr));
    assert!(plan.contains("cluster run --local 3 --netns="), "{plan}");
    assert!(plan.contains("c-br"), "the agents' bridge in the path's commands: {plan}");
    let out = run(&mut lab_run(&dir, &file));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report = text(&herd().args(["report"]).arg(dir.join("r.db")).output().unwrap().stdout);
    let (header, rows) = rows_of(&report);
    // nginx and the path's calibration (herd serve), each over the three agents.
    assert_eq!(rows.len(), 2, "{report}");
    for row in &rows {
        assert_eq!(word_starting_under(&header, row, "path"), "direct", "{report}");
        assert!(row.contains(" 3/3 "), "every repetition ok: {report}");
    }
    // Beside the merged rows, each agent's own figures.
    let section = report
        .split("rows measured over agents")
        .nth(1)
        .unwrap_or_else(|| panic!("no per-agent section: {report}"));
    for i in 0..3 {
        assert!(section.contains(&format!("agent {i} ")), "agent {i}: {report}");
    }
    assert!(section.contains("req/s, p99 ") && section.contains("ms late"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
