//! `herd cluster run --local N`: one run spread over N agent processes, against a real nginx.
//! The merged count is nginx's own count; each agent ran its stripe; the merged `--hlog`
//! equals the agents' own hlogs added up and the `--json` histogram; every agent started
//! within a few ms of the one start instant, its connections opened before it. An agent killed mid-run fails the run and is
//! named, with nothing left running; `herd agent` without its environment says what is
//! missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use util::{herd, run, tempdir, text, Nginx};

/// Every interval of an hlog, added up.
fn hlog_sum(path: &Path) -> Histogram<u64> {
    let bytes = std::fs::read(path).unwrap();
    let mut sum = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = entry.unwrap() {
            let raw =
                base64::engine::general_purpose::STANDARD.decode(i.encoded_histogram()).unwrap();
            let h: Histogram<u64> = Deserializer::new().deserialize(&mut &raw[..]).unwrap();
            sum.add(&h).unwrap();
        }
    }
    sum
}

fn json_hdr(v: &serde_json::Value) -> Histogram<u64> {
    let text = v["latency_us"]["total"]["hdr"].as_str().expect("a histogram");
    let raw = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
    Deserializer::new().deserialize(&mut &raw[..]).unwrap()
}

#[test]
fn three_agents_merge_exactly_what_nginx_served() {
    let nginx = Nginx::start();
    let dir = tempdir("cluster");
    let (json, hlog) = (dir.join("run.json"), dir.join("run.hlog"));
    let hiccups = herd_testutil::hiccups::Hiccups::watch();
    let out = run(herd()
        .args(["cluster", "run", "--local", "3", "--"])
        .arg(nginx.url("/counted/small.html"))
        .args(["-n", "3000", "-c", "6", "-t", "1"])
        .arg("--json")
        .arg(&json)
        .arg("--hlog")
        .arg(&hlog));
    // Started together: a few ms at most, plus what the machine itself delayed a waking
    // thread during the run (a busy 2-core machine held one agent 25.6 ms once).
    let bound_us = 25_000.0 + hiccups.stop().worst.as_secs_f64() * 1e6;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["format"], "herd.run.v1");
    assert_eq!(v["requests"]["completed"], 3000, "{v}");
    assert_eq!(v["connections"], 6);
    assert_eq!(nginx.counted(), 3000, "nginx's own count");
    let agents = v["agents"].as_array().expect("per-agent figures");
    assert_eq!(agents.len(), 3);
    for (i, a) in agents.iter().enumerate() {
        assert_eq!(a["index"], i);
        let own = &a["steps"][0];
        // The request count and connections striped i mod 3: 1000 and 2 each.
        assert_eq!(own["requests"]["completed"], 1000, "agent {i}: {a}");
        assert_eq!(own["connections"], 2);
        let late = a["start_late_us"].as_f64().unwrap();
        assert!(
            (0.0..bound_us).contains(&late),
            "agent {i} started {late} µs late ({bound_us} µs allowed)"
        );
        // Armed with its connections open: none opened in the run.
        assert_eq!((&a["opened_ahead"], &a["not_opened_ahead"]), (&2.into(), &0.into()), "{a}");
        assert_eq!(own["latency_us"]["connect"]["count"], 0, "a connect in agent {i}'s run");
        assert!(stdout.contains(&format!("agent {i} ")), "{stdout}");
    }
    // The merged log, the agents' logs added up, and the result's histogram: one histogram.
    let merged = hlog_sum(&hlog);
    let mut agents_sum = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for i in 0..3 {
        agents_sum.add(hlog_sum(&dir.join(format!("run.agent-{i}.hlog")))).unwrap();
    }
    assert_eq!(merged.len(), 3000);
    assert_eq!(merged, agents_sum);
    assert_eq!(merged, json_hdr(&v));
    assert!(stdout.contains("3000 requests in"), "the merged summary: {stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// HTTP/2 as HTTP/1: each agent's connections are open before it arms (their prefaces go at
/// the start), none is opened in the run, and the merged count is nginx's own.
#[test]
fn agents_open_their_http2_connections_before_the_start() {
    let nginx = Nginx::start();
    let url = format!("http://127.0.0.1:{}/counted/small.html", nginx.h2c_port);
    let dir = tempdir("cluster-h2c");
    let json = dir.join("run.json");
    let out = run(herd()
        .args(["cluster", "run", "--local", "2", "--", "--h2c", &url])
        .args(["-n", "2000", "-c", "4", "-m", "8", "-t", "1", "--json"])
        .arg(&json));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["protocol"], "h2c", "{v}");
    assert_eq!(v["requests"]["completed"], 2000, "{v}");
    assert_eq!(v["requests"]["failed"], 0, "{v}");
    assert_eq!(nginx.counted(), 2000, "nginx's own count");
    for (i, a) in v["agents"].as_array().expect("per-agent figures").iter().enumerate() {
        assert_eq!((&a["opened_ahead"], &a["not_opened_ahead"]), (&2.into(), &0.into()), "{a}");
        let own = &a["steps"][0];
        assert_eq!(own["requests"]["completed"], 1000, "agent {i}: {a}");
        assert_eq!(own["latency_us"]["connect"]["count"], 0, "a connect in agent {i}'s run");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The PIDs of `parent`'s children.
fn children(parent: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else { return pids };
    for t in tasks.flatten() {
        let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        pids.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    pids
}

/// Agent `index`'s PID among `pids`, by its environment.
fn agent_pid(pids: &[u32], index: u32) -> Option<u32> {
    let want = format!("JOB_COMPLETION_INDEX={index}");
    pids.iter().copied().find(|p| {
        std::fs::read(format!("/proc/{p}/environ"))
            .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == want.as_bytes()))
    })
}

#[test]
fn a_killed_agent_fails_the_run_and_is_named() {
    let nginx = Nginx::start();
    let mut child = herd()
        .args(["cluster", "run", "--local", "3", "--"])
        .arg(nginx.url("/small.html"))
        .args(["-d", "30s", "-c", "3", "-t", "1", "--rate", "300"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for the three agents, then let them run a moment.
    let t = Instant::now();
    let victim = loop {
        let kids = children(pid);
        if kids.len() == 3 {
            if let Some(p) = agent_pid(&kids, 1) {
                break p;
            }
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no agents: {kids:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let agents = children(pid);
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on the agent this test's herd started, found by its environment.
    assert_eq!(unsafe { libc::kill(victim as i32, libc::SIGKILL) }, 0);
    let status = crate::util::exit_within(
        &mut child,
        Duration::from_secs(20),
        "herd cluster run went on without agent 1",
    );
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("agent 1 is gone mid-run"), "{stderr}");
    assert!(stderr.contains("the run is void"), "{stderr}");
    herd_testutil::causes::assert_no_repeated_cause(&stderr);
    for p in agents {
        assert!(!Path::new(&format!("/proc/{p}")).exists(), "agent {p} left running");
    }
}

/// Ctrl-C (SIGINT) to `herd cluster run`: every agent stops its step, the merged result of
/// what they measured is printed (marked interrupted) and written, no agent is left, and the
/// exit code is herd run's for an interrupted run, 130.
#[test]
fn ctrl_c_merges_what_the_agents_measured_and_exits_130() {
    let nginx = Nginx::start();
    let dir = tempdir("cluster-sigint");
    let json = dir.join("run.json");
    let child = herd()
        .args(["cluster", "run", "--local", "2", "--"])
        .arg(nginx.url("/small.html"))
        .args(["-d", "60s", "-c", "2", "-t", "1", "--json"])
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t = Instant::now();
    while children(pid).len() < 2 {
        assert!(t.elapsed() < Duration::from_secs(20), "no agents");
        std::thread::sleep(Duration::from_millis(50));
    }
    let agents = children(pid);
    // Armed, started and measuring.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on the herd this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let signalled = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(signalled.elapsed() < Duration::from_secs(15), "did not stop promptly");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains(" s (interrupted): "), "no interrupted summary: {stdout}");
    assert!(stdout.contains("agent 1 "), "{stdout}");
    assert!(stderr.contains("herd cluster run: interrupted: the summary covers"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true, "{v}");
    assert!(v["requests"]["completed"].as_u64().unwrap() > 0, "{v}");
    for p in agents {
        assert!(!Path::new(&format!("/proc/{p}")).exists(), "agent {p} left running");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_agent_without_its_environment_says_what_is_missing() {
    let out = run(Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["agent", "http://127.0.0.1:1/"])
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("HERD_AGENTS")
        .env_remove("HERD_COORDINATOR"));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim(), "herd agent: JOB_COMPLETION_INDEX is not set");
}

#[test]
fn bad_run_arguments_after_the_dashes_are_named() {
    let out = run(herd().args([
        "cluster",
        "run",
        "--local",
        "2",
        "--",
        "http://127.0.0.1:1/",
        "-c",
        "zero",
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the herd run arguments after --"), "{stderr}");
    assert!(stderr.contains("zero"), "{stderr}");
    let out = run(herd().args(["cluster", "run", "--local", "2", "--", "http://203.0.113.9/"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("203.0.113.9"), "refused before any agent starts: {stderr}");
}

#[test]
fn the_kubernetes_objects_carry_the_run() {
    let out = run(herd().args([
        "cluster",
        "manifest",
        "--agents",
        "3",
        "--image",
        "registry.example/herd@sha256:1d2e3f",
        "--name",
        "herd-t1",
        "--",
        "http://198.18.1.1/index.html",
        "-c",
        "600",
        "-d",
        "30s",
    ]));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for want in [
        "kind: Service",
        "clusterIP: None",
        "kind: Job",
        "completionMode: Indexed",
        "backoffLimitPerIndex: 0",
        "value: herd-t1-0.herd-t1:7070",
        "--coordinate=0.0.0.0:7070",
        "--connections=600",
        // 30 s of run, 120 s of barrier, a minute's margin.
        "activeDeadlineSeconds: 210",
    ] {
        assert!(stdout.contains(want), "{want} missing in:\n{stdout}");
    }
}

#[test]
fn the_objects_refuse_a_target_herd_may_not_load_and_files_in_a_pod() {
    let refused = |args: &[&str]| {
        let out = run(herd()
            .args(["cluster", "manifest", "--agents", "2", "--image", "herd:1", "--"])
            .args(args));
        assert_eq!(out.status.code(), Some(1));
        text(&out.stderr)
    };
    let e = refused(&["http://203.0.113.9/"]);
    assert!(e.starts_with("herd cluster manifest: "), "{e}");
    assert!(e.contains("203.0.113.9"), "{e}");
    let e = refused(&["http://198.18.1.1/", "--json", "/tmp/x.json"]);
    assert!(e.contains("would be written inside agent 0's pod"), "{e}");
}

/// The pods' entrypoint, as processes: every agent is given `--coordinate`; agent 0 also
/// coordinates and prints the merged result, the others only run their part.
#[test]
fn agent_zero_coordinates_as_in_a_pod() {
    let nginx = Nginx::start();
    let port = herd_testutil::ports::free_port();
    let coordinator = format!("127.0.0.1:{port}");
    let spawn = |i: u32| {
        Command::new(env!("CARGO_BIN_EXE_herd"))
            .args(["agent", &format!("--coordinate={coordinator}")])
            .arg(nginx.url("/counted/small.html"))
            .args(["-n", "400", "-c", "4", "-t", "1"])
            .env("JOB_COMPLETION_INDEX", i.to_string())
            .env("HERD_AGENTS", "2")
            .env("HERD_COORDINATOR", &coordinator)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Agent 1 first: it waits for its coordinator to come.
    let one = spawn(1);
    std::thread::sleep(Duration::from_millis(300));
    let zero = spawn(0);
    let (zero, one) = (zero.wait_with_output().unwrap(), one.wait_with_output().unwrap());
    assert_eq!(zero.status.code(), Some(0), "{}", text(&zero.stderr));
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    assert!(one.stdout.is_empty(), "only agent 0 prints the result");
    let v: serde_json::Value = serde_json::from_slice(&zero.stdout).unwrap();
    assert_eq!(v["requests"]["completed"], 400);
    assert_eq!(v["agents"].as_array().unwrap().len(), 2);
    assert_eq!(nginx.counted(), 400);
}

/// The opt-in for a target outside the safe ranges (agents on a real cluster) is rendered for
/// the pods and refused everywhere else; no load goes anywhere in this test.
#[test]
fn the_opt_in_for_another_target_is_rendered_or_refused_never_used_here() {
    let manifest = |allow: &str| {
        run(herd().args([
            "cluster",
            "manifest",
            "--agents",
            "2",
            "--image",
            "herd:1",
            "--allow-target",
            allow,
            "--",
            "http://203.0.113.9/",
        ]))
    };
    let out = manifest("203.0.113.9");
    let yaml = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(yaml.contains("name: HERD_ALLOW_TARGET\n          value: 203.0.113.9"), "{yaml}");
    let out = manifest("203.0.113.10");
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains(r#"the opt-in names "203.0.113.10", but the run's target is "203.0.113.9""#),
        "{e}"
    );
    // An agent given another host than its URL's stops at once, before looking for its
    // coordinator.
    let t = Instant::now();
    let out = run(Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["agent", "http://203.0.113.9/"])
        .env("JOB_COMPLETION_INDEX", "0")
        .env("HERD_AGENTS", "1")
        .env("HERD_COORDINATOR", "127.0.0.1:1")
        .env("HERD_ALLOW_TARGET", "203.0.113.10"));
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("the opt-in names"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "it waited for a coordinator");
    // Without the opt-in the agent refuses the address as herd run does.
    let out = run(Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["cluster", "run", "--local", "2", "--allow-target", "203.0.113.9", "--"])
        .arg("http://203.0.113.9/"));
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("--allow-target is for agents on other machines (--ssh, --agents)"), "{e}");
}
