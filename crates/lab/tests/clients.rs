//! The client adapters end to end: `command` run for real (herd run, the real ab, wrk and
//! h2load) against a `herd serve` this test starts on 127.0.0.1 and stops by its PID, and
//! `parse`'s counts checked against what the server itself counted (`/herd/stats`). Small runs only:
//! at most 2,000 requests or 2 seconds each.
//!
//! herd's binary: `HERD_EXE` if set, else `herd` beside this test's own binary
//! (`target/<profile>/herd`, which `cargo test --workspace` builds; with `cargo test -p
//! herd-lab` alone, run `cargo build -p herd` first). ab, wrk and h2load: /usr/bin/ab,
//! /usr/bin/wrk and /usr/bin/h2load.
//! A missing program fails the test with what to do, never skips it.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use herd_lab::client::{self, ClientJob, ClientOutcome, Tool};
use herd_lab::load::{Load, Method, Request, Shape, Warmup};
use herd_stats::{LatencySeries, Measurement, Protocol};
use serde_json::Value;

const PAGE_BYTES: u64 = 6397;
const BODY: &[u8] = b"hello=world&x=1";

/// herd's binary; see the file's documentation.
fn herd_exe() -> PathBuf {
    if let Some(p) = std::env::var_os("HERD_EXE") {
        let p = PathBuf::from(p);
        assert!(p.exists(), "HERD_EXE={} does not exist", p.display());
        return p;
    }
    // target/<profile>/deps/clients-HASH → target/<profile>/herd
    let me = std::env::current_exe().unwrap();
    let beside = me.parent().and_then(Path::parent).map(|d| d.join("herd"));
    match beside {
        Some(p) if p.exists() => p,
        _ => panic!(
            "herd's binary is not at {beside:?}: build it first (cargo build -p herd, or run \
             cargo test --workspace), or give its path in HERD_EXE"
        ),
    }
}

fn tool_program(tool: Tool) -> PathBuf {
    match tool {
        Tool::Herd => herd_exe(),
        Tool::Ab => {
            let p = PathBuf::from("/usr/bin/ab");
            assert!(p.exists(), "the real ab is missing: apt-get install apache2-utils");
            p
        }
        Tool::Wrk => {
            let p = PathBuf::from("/usr/bin/wrk");
            assert!(p.exists(), "wrk is missing: apt-get install wrk");
            p
        }
        Tool::H2load => {
            let p = PathBuf::from("/usr/bin/h2load");
            assert!(p.exists(), "h2load is missing: apt-get install nghttp2-client");
            p
        }
        Tool::Smbtorture => {
            let p = PathBuf::from("/usr/bin/smbtorture");
            assert!(p.exists(), "smbtorture is missing: apt-get install samba-testsuite");
            p
        }
        Tool::Tbench => {
            let p = PathBuf::from("/usr/bin/tbench");
            assert!(p.exists(), "tbench is missing: apt-get install dbench");
            p
        }
    }
}

/// A new empty directory, unique to this process and call.
fn tempdir(tag: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("herd-lab-clients-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `herd serve` on 127.0.0.1, a port of its choosing, serving `page.html` (6,397 bytes);
/// killed by its PID (the kept `Child`) on drop.
struct Serve {
    child: Child,
    addr: String,
    root: PathBuf,
}

impl Serve {
    fn start() -> Serve {
        let root = tempdir("root");
        std::fs::write(root.join("page.html"), vec![b'x'; PAGE_BYTES as usize]).unwrap();
        std::fs::write(root.join("body.txt"), BODY).unwrap();
        let mut child = Command::new(herd_exe())
            .args(["serve", "--listen", "127.0.0.1:0", "--threads", "1", "--root"])
            .arg(&root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = match line.trim().strip_prefix("listening on http://") {
            Some(a) => a.to_owned(),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("herd serve's first line: {line:?}");
            }
        };
        Serve { child, addr, root }
    }

    fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `/herd/stats`, parsed. Its own request shows in later answers only, and not in
    /// `routes` (which the tests compare).
    fn stats(&self) -> Value {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET /herd/stats HTTP/1.0\r\n\r\n").unwrap();
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        serde_json::from_str(all.split_once("\r\n\r\n").unwrap().1).unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// How much a counter of `/herd/stats` grew between two readings.
fn grew(before: &Value, after: &Value, pointer: &str) -> u64 {
    let at = |v: &Value| v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    at(after) - at(before)
}

fn get(path: &str) -> Request {
    Request {
        path: path.to_owned(),
        method: Method::Get,
        specweb_dir: None,
        expect_status: 200,
        expect_body_bytes: Some(PAGE_BYTES),
    }
}

fn post(serve: &Serve) -> Request {
    Request {
        method: Method::Post {
            body_file: serve.root.join("body.txt"),
            content_type: "application/x-www-form-urlencoded".to_owned(),
        },
        expect_body_bytes: Some(BODY.len() as u64),
        ..get("/echo")
    }
}

fn load(shape: Shape, keep_alive: bool, warmup: Warmup) -> Load {
    Load { shape, keep_alive, warmup, timeout: Duration::from_secs(5), streams: None }
}

/// Runs `tool` with `load` against `serve` as the lab's runner does: the warm-up
/// (`Load::warmup_run`) as a job of its own, then the measured load, parsed, with a counted
/// warm-up's requests on the first step. Returns the outcome and the server's counters
/// before and after the measured run (the warm-up's are not in them).
fn run(
    serve: &Serve,
    tool: Tool,
    request: &Request,
    load: &Load,
    threads: Option<u32>,
) -> (ClientOutcome, Value, Value) {
    let program = tool_program(tool);
    let out_dir = tempdir(tool.name());
    let warm_dir = out_dir.join("warmup");
    std::fs::create_dir_all(&warm_dir).unwrap();
    let base_url = serve.base_url();
    let measured = load.measured();
    let job = ClientJob {
        tool,
        program: &program,
        base_url: &base_url,
        protocol: Protocol::H1,
        ca_file: None,
        request,
        load: &measured,
        threads,
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &out_dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    let cmd = client::command(&job).unwrap_or_else(|e| panic!("{e}"));
    cmd.write_files().unwrap();
    if let Some(warm_load) = load.warmup_run() {
        let warm = ClientJob { load: &warm_load, out_dir: &warm_dir, ..job };
        let w = client::command(&warm).unwrap_or_else(|e| panic!("{e}"));
        w.write_files().unwrap();
        let out = Command::new(&w.main[0]).args(&w.main[1..]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "warm-up {:?}: {err}", w.main);
    }
    let before = serve.stats();
    let out = Command::new(&cmd.main[0]).args(&cmd.main[1..]).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{:?}: {}\n{stdout}\n{stderr}", cmd.main, out.status);
    let after = serve.stats();
    let mut outcome = client::parse(&job, &stdout, &stderr).unwrap_or_else(|e| panic!("{e}"));
    if let (Warmup::Requests(k), Some(first)) = (load.warmup, outcome.steps.first_mut()) {
        first.warmup_requests += k;
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    (outcome, before, after)
}

fn one(o: &ClientOutcome) -> &Measurement {
    assert_eq!(o.steps.len(), 1, "{o:#?}");
    &o.steps[0]
}

// herd run

#[test]
fn herd_request_count_with_a_separate_warm_up() {
    let serve = Serve::start();
    let l = load(Shape::Requests { n_requests: 1000, concurrency: 4 }, true, Warmup::Requests(100));
    let (o, before, after) = run(&serve, Tool::Herd, &get("/page.html"), &l, Some(1));
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.warmup_requests), (1000, 0, 100));
    assert_eq!(grew(&before, &after, "/routes/static"), 1000);
    assert_eq!(m.statuses, [(200, 1000)]);
    assert_eq!(m.bytes_body, 1000 * PAGE_BYTES);
    assert_eq!(m.histogram(LatencySeries::Total).unwrap().len(), 1000);
    assert!(o.judgement.is_some() && o.health.is_some());
}

#[test]
fn herd_steps_count_what_the_server_served() {
    let serve = Serve::start();
    let l = load(
        Shape::Steps { clients: vec![1, 2], step: Duration::from_millis(400) },
        true,
        Warmup::Duration(Duration::from_millis(200)),
    );
    let (o, before, after) = run(&serve, Tool::Herd, &get("/page.html"), &l, Some(1));
    assert_eq!(o.steps.iter().map(|m| m.label.as_str()).collect::<Vec<_>>(), ["c=1", "c=2"]);
    let counted: u64 = o.steps.iter().map(|m| m.completed).sum();
    let served = grew(&before, &after, "/routes/static");
    assert!(o.steps.iter().all(|m| m.completed > 0 && m.failed == 0), "{o:#?}");
    // The warm-up ran apart (for 200 ms) and is in no step's figures.
    assert!(o.steps.iter().all(|m| m.warmup_requests == 0), "{o:#?}");
    // A step's end abandons the requests its connections had in flight (one each at most).
    assert!((counted..=counted + 3).contains(&served), "served {served}, counted {counted}");
}

#[test]
fn herd_open_loop_post_without_keep_alive() {
    let serve = Serve::start();
    // A POST over kept-alive connections: see the fixture README for /echo on a closing one.
    let l = load(
        Shape::Rate { per_second: 500.0, duration: Duration::from_secs(1), connections: 4 },
        true,
        Warmup::None,
    );
    let (o, before, after) = run(&serve, Tool::Herd, &post(&serve), &l, Some(1));
    let m = one(&o);
    assert_eq!(m.rate, Some(500.0));
    let served = grew(&before, &after, "/routes/~1echo");
    assert!((m.completed..=m.completed + 4).contains(&served), "{served} {m:#?}");
    assert!((490..=510).contains(&m.completed), "{m:#?}");
    assert_eq!(m.bytes_body, m.completed * BODY.len() as u64);

    let l = load(Shape::Requests { n_requests: 300, concurrency: 3 }, false, Warmup::None);
    let (o, before, after) = run(&serve, Tool::Herd, &get("/page.html"), &l, Some(1));
    assert_eq!(one(&o).completed, 300);
    assert_eq!(grew(&before, &after, "/routes/static"), 300);
    // A connection per request (the stats request is one more).
    assert_eq!(grew(&before, &after, "/connections"), 301);
}

// ab

#[test]
fn ab_counts_match_the_server() {
    let serve = Serve::start();
    let l = load(Shape::Requests { n_requests: 500, concurrency: 4 }, true, Warmup::Requests(50));
    let (o, before, after) = run(&serve, Tool::Ab, &get("/page.html"), &l, None);
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.non_2xx, m.warmup_requests), (500, 0, 0, 50));
    assert_eq!(grew(&before, &after, "/routes/static"), 500);
    assert_eq!(m.bytes_body, 500 * PAGE_BYTES);
    let names: Vec<&str> = m.histograms.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["total", "connect", "first_byte"]);
    assert_eq!(m.histogram(LatencySeries::Total).unwrap().len(), 500);
    assert_eq!(m.reported("keep_alive_requests"), Some(500.0));

    // Without keep-alive: a connection per request; a POST with keep-alive echoes the body.
    let l = load(Shape::Requests { n_requests: 200, concurrency: 2 }, false, Warmup::None);
    let (o, before, after) = run(&serve, Tool::Ab, &get("/page.html"), &l, None);
    assert_eq!(one(&o).completed, 200);
    assert_eq!(grew(&before, &after, "/routes/static"), 200);
    // The stats request's connection is one more; ab 2.3 itself now and then opens one
    // connection more than it has requests, which sends nothing (5 runs in 15 here).
    let conns = grew(&before, &after, "/connections");
    assert!((201..=202).contains(&conns), "{conns}");
    let l = load(Shape::Requests { n_requests: 200, concurrency: 2 }, true, Warmup::None);
    let (o, before, after) = run(&serve, Tool::Ab, &post(&serve), &l, None);
    assert_eq!((one(&o).completed, one(&o).bytes_body), (200, 200 * BODY.len() as u64));
    assert_eq!(grew(&before, &after, "/routes/~1echo"), 200);
}

// wrk

#[test]
fn wrk_counts_match_the_server() {
    let serve = Serve::start();
    let l = load(
        Shape::Duration { duration: Duration::from_secs(1), concurrency: 2 },
        true,
        Warmup::None,
    );
    let (o, before, after) = run(&serve, Tool::Wrk, &get("/page.html"), &l, Some(1));
    let m = one(&o);
    let served = grew(&before, &after, "/routes/static");
    // wrk does not count the requests in flight when its time runs out: one per connection.
    assert!((m.completed..=m.completed + 2).contains(&served), "{served} {m:#?}");
    assert!(m.completed > 100 && m.failed == 0, "{m:#?}");
    assert!(m.reported("latency_p99_us").unwrap() >= m.reported("latency_p50_us").unwrap());
    assert!(m.bytes_total >= m.completed * PAGE_BYTES);
}

#[test]
fn wrk_posts_its_body_and_closes_without_keep_alive() {
    let serve = Serve::start();
    let l = load(
        Shape::Duration { duration: Duration::from_secs(1), concurrency: 2 },
        true,
        Warmup::None,
    );
    let (o, before, after) = run(&serve, Tool::Wrk, &post(&serve), &l, Some(2));
    let m = one(&o);
    let served = grew(&before, &after, "/routes/~1echo");
    assert!((m.completed..=m.completed + 2).contains(&served), "{served} {m:#?}");
    // Each response is a head and the 15 bytes echoed: the same size whichever it is, so
    // the bytes read are a multiple of it (plus any partial response at the end).
    let per = echo_response_bytes(&serve);
    assert!(
        (m.completed * per..=(m.completed + 2) * per).contains(&m.bytes_total),
        "{} bytes for {} responses of {per}",
        m.bytes_total,
        m.completed
    );

    let mut l = l;
    l.keep_alive = false;
    let (o, before, after) = run(&serve, Tool::Wrk, &get("/page.html"), &l, Some(1));
    let m = one(&o);
    let conns = grew(&before, &after, "/connections");
    // A connection per request: wrk reconnects after every `Connection: close` answer. Four
    // more: the connection wrk opens and closes at its start to check the address, the two
    // open when its time runs out, and the stats request's.
    assert!((m.completed..=m.completed + 4).contains(&conns), "{conns} {m:#?}");
}

// h2load (HTTP/1.1 here: herd serve; the lab's protocol tests run its h2 and h2c against
// nginx)

#[test]
fn h2load_counts_match_the_server() {
    let serve = Serve::start();
    let l = load(Shape::Requests { n_requests: 600, concurrency: 3 }, true, Warmup::Requests(60));
    let (o, before, after) = run(&serve, Tool::H2load, &get("/page.html"), &l, Some(1));
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.non_2xx, m.warmup_requests), (600, 0, 0, 60));
    assert_eq!(grew(&before, &after, "/routes/static"), 600);
    assert_eq!(m.bytes_body, 600 * PAGE_BYTES);
    assert!(m.bytes_total > m.bytes_body);
    // Kept-alive connections: the three of the run (and the stats request's).
    assert_eq!(grew(&before, &after, "/connections"), 4);
    assert!(m.histograms.is_empty());
    assert!(m.reported("request_mean_us").is_some_and(|us| us > 0.0), "{m:#?}");

    let l = load(
        Shape::Duration { duration: Duration::from_secs(1), concurrency: 2 },
        true,
        Warmup::None,
    );
    let (o, before, after) = run(&serve, Tool::H2load, &post(&serve), &l, Some(2));
    let m = one(&o);
    let served = grew(&before, &after, "/routes/~1echo");
    // A timed run counts the main second only: what was in flight at its end is served,
    // not counted (one per connection).
    assert!((m.completed..=m.completed + 2).contains(&served), "{served} {m:#?}");
    assert_eq!((m.duration_s, m.failed), (1.0, 0), "{m:#?}");
    // Its data bytes count as they arrive: those answers' bodies are in them.
    let per = BODY.len() as u64;
    assert!((m.completed * per..=(m.completed + 2) * per).contains(&m.bytes_body), "{m:#?}");
}

/// The size of herd serve's answer to the POST of [`BODY`] to /echo, on a kept-alive
/// HTTP/1.1 connection as wrk sends it.
fn echo_response_bytes(serve: &Serve) -> u64 {
    let mut s = TcpStream::connect(&serve.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let head = format!(
        "POST /echo HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\n\r\n",
        serve.addr,
        BODY.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(BODY).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            assert!(head.contains(&format!("Content-Length: {}", BODY.len())), "{head}");
            if body.len() >= BODY.len() {
                return got.len() as u64;
            }
        }
    }
}

// versions

#[test]
fn every_tool_says_its_version() {
    for tool in Tool::ALL {
        let argv = client::version_argv(tool, &tool_program(tool));
        let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v = client::parse_version(tool, &text);
        assert!(v.as_deref().is_some_and(|v| !v.is_empty()), "{tool}: {text}");
    }
}
