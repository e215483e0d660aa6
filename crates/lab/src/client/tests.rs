//! `command` for every tool and load shape, as argv goldens, and every refusal's message;
//! `parse` against output captured from the real tools (crates/lab/tests/data/clients/, see
//! its README).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::load::{Method, Request};

const SECS: fn(u64) -> Duration = Duration::from_secs;

fn get(path: &str) -> Request {
    Request {
        path: path.to_owned(),
        method: Method::Get,
        specweb_dir: None,
        expect_status: 200,
        expect_body_bytes: Some(6397),
    }
}

fn post() -> Request {
    Request {
        method: Method::Post {
            body_file: PathBuf::from("/data/body.txt"),
            content_type: "application/x-www-form-urlencoded".to_owned(),
        },
        ..get("/echo")
    }
}

fn specweb() -> Request {
    Request { specweb_dir: Some(PathBuf::from("/data/specweb")), ..get("/") }
}

fn load(shape: Shape) -> Load {
    Load { shape, keep_alive: true, warmup: Warmup::None, timeout: SECS(30), streams: None }
}

fn requests(n_requests: u64, concurrency: u32) -> Load {
    load(Shape::Requests { n_requests, concurrency })
}

fn duration(secs: u64, concurrency: u32) -> Load {
    load(Shape::Duration { duration: SECS(secs), concurrency })
}

fn rate() -> Load {
    load(Shape::Rate { per_second: 1000.0, duration: SECS(10), connections: 50 })
}

fn steps() -> Load {
    load(Shape::Steps { clients: vec![1, 2, 4], step: Duration::from_millis(2500) })
}

fn rate_steps() -> Load {
    load(Shape::RateSteps {
        rates: vec![1000.0, 2000.0, 4000.0],
        step: Duration::from_millis(1500),
        connections: 32,
    })
}

fn program(tool: Tool) -> &'static Path {
    Path::new(match tool {
        Tool::Herd => "/opt/herd",
        Tool::Ab => "/usr/bin/ab",
        Tool::Wrk => "/usr/bin/wrk",
        Tool::H2load => "/usr/bin/h2load",
        Tool::Smbtorture => "/usr/bin/smbtorture",
        Tool::Tbench => "/usr/bin/tbench",
    })
}

fn job<'a>(tool: Tool, request: &'a Request, load: &'a Load) -> ClientJob<'a> {
    ClientJob {
        tool,
        program: program(tool),
        base_url: "http://127.0.0.1:8080",
        protocol: Protocol::H1,
        ca_file: None,
        request,
        load,
        threads: None,
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: Path::new("/out"),
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    }
}

fn line(argv: &[OsString]) -> String {
    argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

#[track_caller]
fn check(job: &ClientJob, main: &str) {
    let c = command(job).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(line(&c.main), main);
}

#[track_caller]
fn refused(job: &ClientJob, message: &str) {
    match command(job) {
        Ok(c) => panic!("accepted: {}", line(&c.main)),
        Err(e) => assert_eq!(e.to_string(), message),
    }
}

// herd: the arguments of the job's `RunPlan` (the binary's run_args tests parse them back)

/// `[client] io` goes to herd's client as `--io` (unsaid when auto, herd run's default); the
/// other clients have their own loops and are not given it.
#[test]
fn herd_is_given_its_io_backend_and_the_others_are_not() {
    use herd_engine::IoChoice;
    let r = get("/page.html");
    let load = requests(1000, 10);
    for (io, flag) in [(IoChoice::Epoll, " --io=epoll"), (IoChoice::Uring, " --io=uring")] {
        check(
            &ClientJob { io, ..job(Tool::Herd, &r, &load) },
            &format!(
                "/opt/herd run http://127.0.0.1:8080/page.html --connections=10 \
                 --requests=1000{flag} --json=/out/run.json"
            ),
        );
        let ab = command(&ClientJob { io, ..job(Tool::Ab, &r, &load) }).unwrap();
        assert!(!line(&ab.main).contains("--io"), "{}", line(&ab.main));
    }
}

#[test]
fn herd_every_shape() {
    let r = get("/page.html");
    check(
        &job(Tool::Herd, &r, &requests(1000, 10)),
        "/opt/herd run http://127.0.0.1:8080/page.html --connections=10 --requests=1000 \
         --json=/out/run.json",
    );
    check(
        &job(Tool::Herd, &r, &duration(10, 10)),
        "/opt/herd run http://127.0.0.1:8080/page.html --connections=10 --duration=10s \
         --json=/out/run.json",
    );
    check(
        &job(Tool::Herd, &r, &rate()),
        "/opt/herd run http://127.0.0.1:8080/page.html --connections=50 --duration=10s \
         --rate=1000 --json=/out/run.json",
    );
    check(
        &job(Tool::Herd, &r, &steps()),
        "/opt/herd run http://127.0.0.1:8080/page.html --steps=1,2,4 --step-time=2500ms \
         --json=/out/run.json",
    );
    check(
        &job(Tool::Herd, &r, &rate_steps()),
        "/opt/herd run http://127.0.0.1:8080/page.html --connections=32 \
         --rate-steps=1000,2000,4000 --step-time=1500ms --json=/out/run.json",
    );
}

#[test]
fn herd_on_client_hosts_is_a_cluster_run_with_their_idle_time_and_cpus() {
    let r = get("/");
    let urls = ["ssh://c1".to_owned(), "ssh://c2".to_owned()];
    let load = requests(100, 2);
    let mut j = job(Tool::Herd, &r, &load);
    let pinned = herd_topo::CpuSet::Only(vec![1, 2, 3]);
    j.opt_in = Some(std::net::IpAddr::from([10, 1, 1, 2]));
    j.agent_hosts = Some(AgentHosts {
        urls: &urls,
        ssh_config: Some(Path::new("lab.ssh_config")),
        idle: Duration::from_secs(90),
        cpus: &pinned,
    });
    check(
        &j,
        "/opt/herd cluster run --ssh ssh://c1,ssh://c2 --ssh-config lab.ssh_config \
         --idle-timeout=90s --agent-cpus=1-3 --allow-target 10.1.1.2 -- \
         http://127.0.0.1:8080/ --connections=2 --requests=100 --json=/out/run.json",
    );
    // Unpinned: every CPU of each host, and no flag for it.
    let all = herd_topo::CpuSet::All;
    j.agent_hosts = Some(AgentHosts {
        urls: &urls,
        ssh_config: None,
        idle: Duration::from_millis(2500),
        cpus: &all,
    });
    let c = command(&j).unwrap();
    let said = line(&c.main);
    assert!(said.contains("--idle-timeout=2500ms --allow-target"), "{said}");
    assert!(!said.contains("--agent-cpus"), "{said}");
}

#[test]
fn only_herd_sends_offered_rates_in_steps() {
    let r = get("/page.html");
    let l = rate_steps();
    for (tool, protocol, why) in [
        (
            Tool::Ab,
            Protocol::H1,
            "it has no open loop: each connection sends when its last response ends",
        ),
        (Tool::Wrk, Protocol::H1, "it has no open loop (wrk2's -R has)"),
        (
            Tool::H2load,
            Protocol::H2c,
            "its -r is a rate of new connections and its --rps a pace per connection",
        ),
    ] {
        let e = supports(tool, protocol, &l, &r, None).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{} cannot send offered rates in steps: {why}; use the herd client (a \
                 `rate_steps` load)",
                tool.name()
            )
        );
    }
    assert!(supports(Tool::Herd, Protocol::H1, &l, &r, None).is_ok());
    let empty = load(Shape::RateSteps { rates: vec![], step: SECS(1), connections: 1 });
    let e = supports(Tool::Herd, Protocol::H1, &empty, &r, None).unwrap_err().to_string();
    assert!(e.contains("at least one step"), "{e}");
}

#[test]
fn herd_requests_and_clients() {
    let mut l = requests(1000, 10);
    l.keep_alive = false;
    l.timeout = Duration::from_millis(2500);
    let (p, s) = (post(), specweb());
    let mut j = job(Tool::Herd, &p, &l);
    j.threads = Some(2);
    check(
        &j,
        "/opt/herd run http://127.0.0.1:8080/echo --connections=10 --requests=1000 \
         --threads=2 --no-keep-alive --method=POST \
         --header=Content-Type: application/x-www-form-urlencoded \
         --body-file=/data/body.txt --timeout=2500ms --json=/out/run.json",
    );
    // The header is one argument.
    let c = command(&j).unwrap();
    assert!(c.main.iter().any(|a| a == "--header=Content-Type: application/x-www-form-urlencoded"));
    assert!(c.files.is_empty());
    let d = duration(5, 4);
    check(
        &job(Tool::Herd, &s, &d),
        "/opt/herd run http://127.0.0.1:8080/ --connections=4 --duration=5s \
         --specweb=/data/specweb --json=/out/run.json",
    );
}

#[test]
fn a_job_carries_no_warm_up_the_runner_runs_it() {
    let r = get("/page.html");
    for tool in Tool::HTTP {
        let mut l = if tool == Tool::Wrk { duration(10, 10) } else { requests(1000, 10) };
        l.warmup = Warmup::Requests(100);
        let e = command(&job(tool, &r, &l)).unwrap_err().to_string();
        assert!(e.contains("the runner runs the load's warm-up as a job of its own"), "{e}");
        // Its warm-up run is a job like any other.
        let warm = l.warmup_run().unwrap();
        if tool != Tool::Wrk {
            command(&job(tool, &r, &warm)).unwrap();
        }
        command(&job(tool, &r, &l.measured())).unwrap();
    }
}

// ab

#[test]
fn ab_requests() {
    let r = get("/page.html");
    check(
        &job(Tool::Ab, &r, &requests(1000, 10)),
        "/usr/bin/ab -n 1000 -c 10 -k -s 30 -g /out/ab.tsv http://127.0.0.1:8080/page.html",
    );
    let mut l = requests(1000, 10);
    l.keep_alive = false;
    l.timeout = SECS(5);
    let p = post();
    let mut j = job(Tool::Ab, &p, &l);
    j.threads = Some(1);
    check(
        &j,
        "/usr/bin/ab -n 1000 -c 10 -s 5 -p /data/body.txt \
         -T application/x-www-form-urlencoded -g /out/ab.tsv http://127.0.0.1:8080/echo",
    );
    // A warm-up shorter than -c uses fewer connections (Load::warmup_run): ab refuses -c
    // above -n.
    let mut warm = requests(1000, 10);
    warm.warmup = Warmup::Requests(5);
    check(
        &job(Tool::Ab, &r, &warm.warmup_run().unwrap()),
        "/usr/bin/ab -n 5 -c 5 -k -s 30 -g /out/ab.tsv http://127.0.0.1:8080/page.html",
    );
}

#[test]
fn ab_refusals() {
    let r = get("/page.html");
    refused(
        &job(Tool::Ab, &r, &duration(10, 10)),
        "ab cannot run for a duration: it stops after a request count (its -t time limit also \
         stops at 50000 requests, silently); give the load `requests` \
         instead of a duration, or use the herd or wrk client",
    );
    refused(
        &job(Tool::Ab, &r, &rate()),
        "ab cannot send a fixed rate: it has no open loop: each connection sends when its last \
         response ends; use the herd client (a `rate` load)",
    );
    refused(
        &job(Tool::Ab, &r, &steps()),
        "ab cannot run client steps: one ab run has one concurrency; make one load per step \
         with `requests` and `concurrency`, or use the herd client",
    );
    let mut l = requests(1000, 10);
    l.warmup = Warmup::Duration(SECS(2));
    assert_eq!(
        supports(Tool::Ab, Protocol::H1, &l, &r, None).unwrap_err().to_string(),
        "ab cannot warm up for a duration: its warm-up is a separate ab run, which stops after \
         a request count; give the warm-up as `warmup_requests`",
    );
    let l = requests(1000, 10);
    let mut j = job(Tool::Ab, &r, &l);
    j.threads = Some(2);
    refused(
        &j,
        "ab cannot use more than one thread: ab runs on one thread (its -t is a time limit, not \
         threads); leave threads unset for ab",
    );
    refused(
        &job(Tool::Ab, &r, &requests(5, 10)),
        "ab cannot run 10 connections for 5 requests: ab refuses a concurrency above its \
         request count; give at least as many requests as connections",
    );
    refused(
        &job(Tool::Ab, &r, &requests(100_000, 20_001)),
        "ab cannot open 20001 connections: ab allows at most 20000 (-c); use the herd or wrk client for more",
    );
    let mut l = requests(1000, 10);
    l.timeout = Duration::from_millis(1500);
    refused(
        &job(Tool::Ab, &r, &l),
        "ab cannot run a request timeout of 1.5s: ab takes whole seconds; give a whole number \
         of seconds",
    );
    let s = specweb();
    refused(
        &job(Tool::Ab, &s, &requests(1000, 10)),
        "ab cannot send a SPECweb99 mix: ab loads a single URL; use the herd client",
    );
}

// wrk

#[test]
fn wrk_duration() {
    let r = get("/page.html");
    let l = duration(10, 10);
    let c = command(&job(Tool::Wrk, &r, &l)).unwrap();
    assert_eq!(
        line(&c.main),
        "/usr/bin/wrk -c 10 -t 2 -d 10s --latency --timeout 30s -s /out/wrk.lua \
         http://127.0.0.1:8080/page.html"
    );
    assert_eq!(c.files.len(), 1);
    assert_eq!(c.files[0].path, Path::new("/out/wrk.lua"));
    assert_eq!(c.files[0].contents, wrk_script::script(None));
    // One connection: one thread (wrk refuses more threads than connections).
    check(
        &job(Tool::Wrk, &r, &duration(2, 1)),
        "/usr/bin/wrk -c 1 -t 1 -d 2s --latency --timeout 30s -s /out/wrk.lua \
         http://127.0.0.1:8080/page.html",
    );
}

#[test]
fn wrk_without_keep_alive_post_and_its_warm_up_run() {
    let mut l = duration(10, 8);
    l.keep_alive = false;
    l.warmup = Warmup::Duration(SECS(2));
    l.timeout = SECS(5);
    let p = post();
    let warm = l.warmup_run().unwrap();
    let mut j = job(Tool::Wrk, &p, &warm);
    j.threads = Some(4);
    assert_eq!(
        line(&command(&j).unwrap().main),
        "/usr/bin/wrk -c 8 -t 4 -d 2s --latency --timeout 5s -s /out/wrk.lua \
         -H Connection: close http://127.0.0.1:8080/echo"
    );
    let measured = l.measured();
    j.load = &measured;
    let c = command(&j).unwrap();
    assert_eq!(
        line(&c.main),
        "/usr/bin/wrk -c 8 -t 4 -d 10s --latency --timeout 5s -s /out/wrk.lua \
         -H Connection: close http://127.0.0.1:8080/echo"
    );
    let script = &c.files[0].contents;
    assert!(script.contains(r#"io.open("/data/body.txt", "rb")"#), "{script}");
    assert!(script.contains(r#""application/x-www-form-urlencoded""#), "{script}");
}

#[test]
fn wrk_refusals() {
    let r = get("/page.html");
    refused(
        &job(Tool::Wrk, &r, &requests(1000, 10)),
        "wrk cannot stop after a request count: it runs for a duration (-d) and has no -n; \
         give the load a `duration` instead of `requests`, or use the herd or ab client",
    );
    refused(
        &job(Tool::Wrk, &r, &rate()),
        "wrk cannot send a fixed rate: it has no open loop (wrk2's -R has); use the herd client (a `rate` load)",
    );
    refused(
        &job(Tool::Wrk, &r, &steps()),
        "wrk cannot run client steps: one wrk run has one connection count; make one load per \
         step with `duration` and `concurrency`, or use the herd client",
    );
    let mut l = duration(10, 10);
    l.warmup = Warmup::Requests(100);
    assert_eq!(
        supports(Tool::Wrk, Protocol::H1, &l, &r, None).unwrap_err().to_string(),
        "wrk cannot warm up for a request count: it runs for a duration and has no -n; give the \
         warm-up as `warmup = \"2s\"`",
    );
    let l = load(Shape::Duration { duration: Duration::from_millis(1500), concurrency: 10 });
    refused(
        &job(Tool::Wrk, &r, &l),
        "wrk cannot run a duration of 1.5s: wrk takes whole seconds; give a whole number of \
         seconds",
    );
    let l = duration(10, 2);
    let mut j = job(Tool::Wrk, &r, &l);
    j.threads = Some(3);
    refused(
        &j,
        "wrk cannot run 3 threads with 2 connections: wrk needs at least one connection per \
         thread; give fewer threads or more connections",
    );
    let s = specweb();
    refused(
        &job(Tool::Wrk, &s, &duration(10, 10)),
        "wrk cannot send a SPECweb99 mix: the lab's wrk script loads a single URL; use the \
         herd client",
    );
}

// every tool

#[test]
fn only_allowed_addresses_with_the_protocols_scheme() {
    let r = get("/");
    let l = requests(10, 1);
    for tool in Tool::HTTP {
        for (url, reason) in [
            (
                "http://10.0.0.1:80",
                "refusing to send load to 10.0.0.1: herd only targets 127.0.0.0/8, ::1 and its \
                 lab hosts in 198.18.0.0/15",
            ),
            ("http://localhost:80", "`localhost` is not an IP address; give one (e.g. 127.0.0.1)"),
            ("https://127.0.0.1:443", "h1 (HTTP/1.1) goes to a http:// URL"),
            ("http://127.0.0.1:80/x", "give the base URL without a path (the request adds it)"),
        ] {
            let mut j = job(tool, &r, &l);
            j.base_url = url;
            refused(&j, &format!("refusing to send load to {url}: {reason}"));
        }
        for url in
            ["http://127.0.0.2:80", "http://[::1]:8080", "http://198.19.0.1", "http://127.0.0.1"]
        {
            let mut j = job(tool, &r, &l);
            j.base_url = url;
            assert!(check_job(&j).is_ok(), "{tool} {url}");
        }
        // Over TLS, https:// and nothing else.
        let mut j = job(tool, &r, &l);
        j.protocol = Protocol::H1Tls;
        j.ca_file = Some(Path::new("/run/ca.pem"));
        j.base_url = "https://127.0.0.1:8443";
        assert!(check_job(&j).is_ok(), "{tool}");
        j.base_url = "http://127.0.0.1:8443";
        refused(
            &j,
            "refusing to send load to http://127.0.0.1:8443: h1-tls (HTTP/1.1 over TLS) goes to \
             a https:// URL",
        );
    }
}

#[test]
fn the_server_host_an_experiment_names_is_the_one_address_opted_in() {
    let r = get("/");
    let l = requests(10, 1);
    for tool in Tool::HTTP {
        let mut j = job(tool, &r, &l);
        j.base_url = "http://10.0.0.1:18080";
        j.opt_in = Some(std::net::IpAddr::from([10, 0, 0, 1]));
        assert!(check_job(&j).is_ok(), "{tool}: the [hosts] server's address");
        // Any other address outside the ranges is still refused.
        j.base_url = "http://10.0.0.2:18080";
        refused(
            &j,
            "refusing to send load to http://10.0.0.2:18080: refusing to send load to 10.0.0.2: \
             herd only targets 127.0.0.0/8, ::1 and its lab hosts in 198.18.0.0/15",
        );
    }
}

#[test]
fn nonsense_loads_are_refused_for_every_tool() {
    let r = get("/");
    for tool in Tool::HTTP {
        refused(
            &job(tool, &r, &requests(0, 1)),
            &format!("{tool}: the request count must be at least 1"),
        );
        refused(
            &job(tool, &r, &duration(0, 1)),
            &format!("{tool}: the duration must be more than zero"),
        );
        let l = load(Shape::Steps { clients: vec![], step: SECS(1) });
        refused(&job(tool, &r, &l), &format!("{tool}: a stepped load needs at least one step"));
        let l = load(Shape::Rate { per_second: f64::NAN, duration: SECS(1), connections: 1 });
        refused(
            &job(tool, &r, &l),
            &format!("{tool}: the rate NaN must be a number more than zero"),
        );
        let bad_path = get("page.html");
        refused(
            &job(tool, &bad_path, &requests(1, 1)),
            &format!("{tool}: the request path `page.html` must start with `/`"),
        );
    }
}

#[test]
fn tools_by_name() {
    for tool in Tool::ALL {
        assert_eq!(tool.name().parse::<Tool>().unwrap(), tool);
    }
    assert_eq!(
        "wrk2".parse::<Tool>().unwrap_err().to_string(),
        "unknown client `wrk2`, expected one of herd, ab, wrk, h2load, smbtorture"
    );
}

#[test]
fn write_files_writes_the_wrk_script() {
    let dir = std::env::temp_dir().join(format!("herd-lab-write-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (r, l) = (get("/"), duration(1, 1));
    let mut j = job(Tool::Wrk, &r, &l);
    j.out_dir = &dir;
    let c = command(&j).unwrap();
    c.write_files().unwrap();
    let written = std::fs::read_to_string(dir.join("wrk.lua")).unwrap();
    assert_eq!(written, c.files[0].contents);
    std::fs::remove_dir_all(&dir).unwrap();
    let e = c.write_files().unwrap_err().to_string();
    assert!(e.starts_with(&format!("cannot write {}", dir.join("wrk.lua").display())), "{e}");
}

#[test]
fn supports_is_commands_refusal() {
    let r = get("/");
    assert!(supports(Tool::Wrk, Protocol::H1, &duration(1, 1), &r, None).is_ok());
    assert!(supports(Tool::Ab, Protocol::H1, &requests(10, 1), &r, Some(1)).is_ok());
    let e = supports(Tool::Ab, Protocol::H1, &requests(10, 1), &r, Some(2)).unwrap_err();
    assert!(e.to_string().starts_with("ab cannot use more than one thread"), "{e}");
    let e = supports(Tool::Wrk, Protocol::H1, &requests(10, 1), &r, None).unwrap_err();
    assert!(e.to_string().starts_with("wrk cannot stop after a request count"), "{e}");
}

// protocols

#[test]
fn herd_speaks_every_protocol_through_its_run_plan() {
    let r = get("/page.html");
    let mut l = duration(10, 4);
    let ca = Path::new("/run/tls/ca.pem");
    let over = |protocol: Protocol, base_url: &'static str, l: &Load| {
        let mut j = job(Tool::Herd, &r, l);
        j.protocol = protocol;
        j.base_url = base_url;
        j.ca_file = protocol.is_encrypted().then_some(ca);
        line(&command(&j).unwrap_or_else(|e| panic!("{e}")).main)
    };
    assert_eq!(
        over(Protocol::H1Tls, "https://127.0.0.1:8443", &l),
        "/opt/herd run https://127.0.0.1:8443/page.html --connections=4 --duration=10s \
         --ca-file=/run/tls/ca.pem --json=/out/run.json"
    );
    l.streams = NonZeroU32::new(10);
    assert_eq!(
        over(Protocol::H2, "https://127.0.0.1:8443", &l),
        "/opt/herd run https://127.0.0.1:8443/page.html --connections=4 --duration=10s --h2 \
         --streams=10 --ca-file=/run/tls/ca.pem --json=/out/run.json"
    );
    assert_eq!(
        over(Protocol::H2c, "http://127.0.0.1:8080", &l),
        "/opt/herd run http://127.0.0.1:8080/page.html --connections=4 --duration=10s --h2c \
         --streams=10 --json=/out/run.json"
    );
    assert_eq!(
        over(Protocol::H3, "https://127.0.0.1:8443", &l),
        "/opt/herd run https://127.0.0.1:8443/page.html --connections=4 --duration=10s --h3 \
         --streams=10 --ca-file=/run/tls/ca.pem --json=/out/run.json"
    );
    // Over TLS, herd verifies the server's certificate: it needs the CA.
    let mut j = job(Tool::Herd, &r, &l);
    j.protocol = Protocol::H2;
    j.base_url = "https://127.0.0.1:8443";
    refused(&j, "herd: h2 needs the CA file that signed the server's certificate, to verify it");
}

#[test]
fn ab_and_wrk_speak_http1_in_the_clear_and_over_tls() {
    let r = get("/page.html");
    let l = requests(100, 2);
    let mut j = job(Tool::Ab, &r, &l);
    j.protocol = Protocol::H1Tls;
    j.base_url = "https://127.0.0.1:8443";
    check(&j, "/usr/bin/ab -n 100 -c 2 -k -s 30 -g /out/ab.tsv https://127.0.0.1:8443/page.html");
    let l = duration(2, 2);
    let mut j = job(Tool::Wrk, &r, &l);
    j.protocol = Protocol::H1Tls;
    j.base_url = "https://127.0.0.1:8443";
    check(
        &j,
        "/usr/bin/wrk -c 2 -t 2 -d 2s --latency --timeout 30s -s /out/wrk.lua \
         https://127.0.0.1:8443/page.html",
    );
    for (tool, l) in [(Tool::Ab, requests(100, 2)), (Tool::Wrk, duration(2, 2))] {
        let mut j = job(tool, &r, &l);
        j.protocol = Protocol::H2c;
        refused(
            &j,
            &format!(
                "{tool} cannot speak h2c: it speaks HTTP/1.1 only (h1, h1-tls); use the herd or \
                 h2load client"
            ),
        );
        assert!(speaks(tool, Protocol::H2).is_err() && speaks(tool, Protocol::H3).is_err());
    }
}

#[test]
fn streams_are_refused_where_a_connection_carries_one_request_at_a_time() {
    let r = get("/page.html");
    let mut l = requests(100, 2);
    l.streams = NonZeroU32::new(4);
    refused(
        &job(Tool::Herd, &r, &l),
        "herd: `streams` is for a protocol that multiplexes requests (h2, h2c, h3); h1 carries \
         one request at a time on a connection",
    );
}

// h2load

/// An h2load job speaking `protocol` at the protocol's URL.
fn h2load_job<'a>(protocol: Protocol, request: &'a Request, load: &'a Load) -> ClientJob<'a> {
    let mut j = job(Tool::H2load, request, load);
    j.protocol = protocol;
    if protocol.is_encrypted() {
        j.base_url = "https://127.0.0.1:8443";
    }
    j
}

#[test]
fn h2load_every_protocol_and_shape() {
    let r = get("/page.html");
    let mut l = requests(1000, 10);
    l.streams = NonZeroU32::new(10);
    check(
        &h2load_job(Protocol::H2c, &r, &l),
        "/usr/bin/h2load -c 10 -t 1 -n 1000 -m 10 -N 30s http://127.0.0.1:8080/page.html",
    );
    check(
        &h2load_job(Protocol::H2, &r, &l),
        "/usr/bin/h2load -c 10 -t 1 -n 1000 -m 10 -N 30s --npn-list=h2 \
         https://127.0.0.1:8443/page.html",
    );
    let mut l = duration(10, 4);
    l.timeout = Duration::from_millis(2500);
    check(
        &h2load_job(Protocol::H1, &r, &l),
        "/usr/bin/h2load -c 4 -t 1 -D 10s -N 2500ms --h1 http://127.0.0.1:8080/page.html",
    );
    let p = post();
    let mut j = h2load_job(Protocol::H1Tls, &p, &l);
    j.threads = Some(2);
    check(
        &j,
        "/usr/bin/h2load -c 4 -t 2 -D 10s -N 2500ms --h1 -d /data/body.txt \
         -H content-type: application/x-www-form-urlencoded https://127.0.0.1:8443/echo",
    );
    // The warm-up is a run like any other: a count or a time.
    let mut warm = requests(1000, 10);
    warm.warmup = Warmup::Duration(SECS(2));
    check(
        &h2load_job(Protocol::H2c, &r, &warm.warmup_run().unwrap()),
        "/usr/bin/h2load -c 10 -t 1 -D 2s -N 30s http://127.0.0.1:8080/page.html",
    );
    assert!(supports(Tool::H2load, Protocol::H2c, &warm, &r, None).is_ok());
}

#[test]
fn h2load_refusals() {
    let r = get("/page.html");
    refused(
        &h2load_job(Protocol::H2c, &r, &rate()),
        "h2load cannot send a fixed request rate: its -r is a rate of new connections and its \
         --rps a pace per connection; use the herd client (a `rate` load)",
    );
    refused(
        &h2load_job(Protocol::H2c, &r, &steps()),
        "h2load cannot run client steps: one h2load run has one connection count; make one load \
         per step with `requests` or `duration` and `concurrency`, or use the herd client",
    );
    let mut l = requests(100, 2);
    l.keep_alive = false;
    refused(
        &h2load_job(Protocol::H2c, &r, &l),
        "h2load cannot open a connection per request: it keeps its connections open for all \
         their requests; set keep_alive = true in the load, or use the herd or ab client",
    );
    let l = requests(100, 2);
    let mut j = h2load_job(Protocol::H2c, &r, &l);
    j.threads = Some(3);
    refused(
        &j,
        "h2load cannot run 3 threads with 2 connections: h2load needs at least one connection \
         per thread; give fewer threads or more connections",
    );
    let s = specweb();
    refused(
        &h2load_job(Protocol::H2c, &s, &l),
        "h2load cannot send a SPECweb99 mix: the lab loads a single URL with h2load; use the \
         herd client",
    );
    let mut l = requests(100, 2);
    l.timeout = Duration::from_micros(1500);
    refused(
        &h2load_job(Protocol::H2c, &r, &l),
        "h2load cannot run a request timeout of 1.5ms: h2load takes whole milliseconds; give a \
         whole number of milliseconds",
    );
    refused(
        &h2load_job(Protocol::H3, &r, &requests(100, 2)),
        "h2load cannot speak h3: Debian's h2load 1.52 is built without ngtcp2 and has no --h3; \
         use the herd client",
    );
}

/// What the lab copies back from a client host is what each command writes there: every
/// output file is named on the command line inside the job's `out_dir` (ab's `-g`, herd's
/// `--json`), and the candidates a host is searched at are the ones `locate` uses here.
#[test]
fn output_files_are_the_ones_each_command_writes_into_its_out_dir() {
    for (tool, l) in
        [(Tool::Herd, requests(10, 1)), (Tool::Ab, requests(10, 1)), (Tool::Wrk, duration(1, 1))]
    {
        let r = get("/");
        let j = job(tool, &r, &l);
        let cmd = command(&j).unwrap();
        for name in output_files(tool) {
            let path = j.out_dir.join(name).display().to_string();
            let named = |a: &OsString| {
                let a = a.to_string_lossy();
                a == path || a.ends_with(&format!("={path}"))
            };
            assert!(cmd.main.iter().any(named), "{tool}: {name} in {:?}", cmd.main);
        }
    }
    assert!(output_files(Tool::Wrk).is_empty() && output_files(Tool::H2load).is_empty());
    assert!(candidates(Tool::Ab).contains(&"/usr/bin/ab"));
    assert!(candidates(Tool::Herd).is_empty(), "herd is herd's own executable");
}
