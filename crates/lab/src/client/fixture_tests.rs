//! `parse` against output captured from the real tools, one directory per run under
//! crates/lab/tests/data/clients/ (its README.md gives each run's command line and server).
//! Each directory is the run's `out_dir`, with its `stdout` and `stderr` beside.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_stats::{ClientVerdict, LatencySeries, REPORTED_TIMER_RESOLUTION_S};

use super::*;
use crate::load::{Method, Request};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/clients").join(name)
}

fn get(path: &str) -> Request {
    Request {
        path: path.to_owned(),
        method: Method::Get,
        specweb_dir: None,
        expect_status: 200,
        expect_body_bytes: None,
    }
}

fn post() -> Request {
    Request {
        method: Method::Post {
            body_file: fixture("body.txt"),
            content_type: "application/x-www-form-urlencoded".to_owned(),
        },
        ..get("/echo")
    }
}

fn load(shape: Shape, keep_alive: bool) -> Load {
    Load { shape, keep_alive, warmup: Warmup::None, timeout: Duration::from_secs(5), streams: None }
}

/// `tool`'s output in fixture `name`, parsed.
fn parse_fixture(
    tool: Tool,
    name: &str,
    request: &Request,
    load: &Load,
) -> Result<ClientOutcome, ClientError> {
    let dir = fixture(name);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let job = ClientJob {
        tool,
        program: Path::new(tool.name()),
        base_url: "http://127.0.0.1:43073",
        protocol: Protocol::H1,
        ca_file: None,
        request,
        load,
        threads: Some(1),
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    parse(&job, &read("stdout"), &read("stderr"))
}

fn one(outcome: &ClientOutcome) -> &Measurement {
    assert_eq!(outcome.steps.len(), 1);
    &outcome.steps[0]
}

fn counts(m: &Measurement) -> Vec<(&str, u64)> {
    m.histograms.iter().map(|(n, h)| (n.as_str(), h.len())).collect()
}

fn verdict(o: &ClientOutcome) -> Option<&str> {
    o.judgement.as_ref().map(|j| j.verdict.as_str())
}

fn ok() -> ClientJudgement {
    ClientJudgement { verdict: ClientVerdict::Ok, reason: None }
}

fn failures(m: &Measurement) -> Vec<(&str, u64)> {
    m.failures.iter().map(|(k, n)| (k.as_str(), *n)).collect()
}

// herd: run.json files written by herd run since herd.run.v1 had its `hdr` field, read as a
// `RunReport`: v1 only adds fields, so what an earlier herd wrote must still read.

#[test]
fn herd_closed_loop() {
    let l = load(Shape::Requests { n_requests: 300, concurrency: 4 }, true);
    let o = parse_fixture(Tool::Herd, "herd-closed", &get("/page.html"), &l).unwrap();
    let m = one(&o);
    assert_eq!((m.step, m.label.as_str(), m.concurrency, m.rate), (1, "", Some(4), None));
    assert_eq!((m.completed, m.failed, m.non_2xx, m.wrong_length()), (300, 0, 0, 0));
    assert_eq!(m.statuses, [(200, 300)]);
    assert!(m.failures.is_empty());
    assert_eq!((m.bytes_total, m.bytes_body), (1_983_300, 1_919_100));
    assert_eq!(m.duration_s, 0.004488558);
    assert_eq!(
        counts(m),
        [
            ("total", 300),
            ("total_from_send", 300),
            ("connect", 4),
            ("first_byte", 300),
            ("queued", 300)
        ]
    );
    // The decoded histogram gives what herd printed from it.
    let total = m.histogram(LatencySeries::Total).unwrap();
    assert_eq!((total.max(), total.value_at_quantile(0.5)), (429, 36));
    let v = o.judgement.as_ref().unwrap();
    assert_eq!(v.verdict, ClientVerdict::Suspect);
    assert!(v.reason.as_deref().unwrap().starts_with("herd's worker thread was on a CPU 44 %"));
    let Some(HealthFacts::Run(health)) = &o.health else { panic!("{:?}", o.health) };
    assert_eq!(health.verdict, Some(ClientVerdict::Suspect));
    assert_eq!(health.worker_threads, 1);
    assert!(m.reported("requests_per_second").unwrap() > 66_000.0);
    assert_eq!(m.reported("interrupted"), None);
}

#[test]
fn herd_steps_one_measurement_each() {
    let l = load(Shape::Steps { clients: vec![1, 2], step: Duration::from_millis(300) }, true);
    let o = parse_fixture(Tool::Herd, "herd-steps", &get("/page.html"), &l).unwrap();
    let labels: Vec<(u32, &str, Option<u32>)> =
        o.steps.iter().map(|m| (m.step, m.label.as_str(), m.concurrency)).collect();
    assert_eq!(labels, [(1, "c=1", Some(1)), (2, "c=2", Some(2))]);
    let (a, b) = (&o.steps[0], &o.steps[1]);
    assert_eq!((a.completed, b.completed), (3857, 9664));
    // The warm-up ran before step 1 only, on step 1's connection: no connect in step 1.
    assert_eq!((a.warmup_requests, b.warmup_requests), (2479, 0));
    assert_eq!((counts(a)[2], counts(b)[2]), (("connect", 0), ("connect", 2)));
    assert!(a.histogram(LatencySeries::Connect).unwrap().is_empty());
    assert_eq!((a.bytes_total, b.bytes_body), (25_498_627, 61_820_608));
    assert_eq!(o.judgement, Some(ok()));
    assert_eq!((&a.judgement, &b.judgement), (&o.judgement, &o.judgement), "each step judged");
    let Some(HealthFacts::Steps(health)) = &o.health else { panic!("{:?}", o.health) };
    assert_eq!(health.len(), 2);
}

#[test]
fn herd_steps_keep_each_steps_verdict() {
    // The captured run, with step 2 judged suspect: the run's verdict is the worst step's,
    // and each step keeps its own.
    let dir = std::env::temp_dir().join(format!("herd-lab-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(fixture("herd-steps").join(herd::JSON_FILE)).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["steps"][1]["client"]["verdict"] = "suspect".into();
    doc["steps"][1]["client"]["reason"] = "send lag p99 1.2ms".into();
    std::fs::write(dir.join(herd::JSON_FILE), doc.to_string()).unwrap();
    let l = load(Shape::Steps { clients: vec![1, 2], step: Duration::from_millis(300) }, true);
    let job = ClientJob {
        tool: Tool::Herd,
        program: Path::new("herd"),
        base_url: "http://127.0.0.1:43073",
        protocol: Protocol::H1,
        ca_file: None,
        request: &get("/page.html"),
        load: &l,
        threads: Some(1),
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    let o = parse(&job, "", "").unwrap();
    let suspect = ClientJudgement {
        verdict: ClientVerdict::Suspect,
        reason: Some("step 2 (c=2): send lag p99 1.2ms".into()),
    };
    assert_eq!(o.steps[0].judgement, Some(ok()));
    assert_eq!(o.steps[1].judgement, Some(suspect.clone()));
    assert_eq!(o.judgement, Some(suspect));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn herd_open_loop_without_keep_alive() {
    let l = load(
        Shape::Rate { per_second: 400.0, duration: Duration::from_millis(500), connections: 4 },
        false,
    );
    let o = parse_fixture(Tool::Herd, "herd-rate", &get("/page.html"), &l).unwrap();
    let m = one(&o);
    assert_eq!(
        (m.rate, m.concurrency, m.completed, m.duration_s),
        (Some(400.0), Some(4), 200, 0.5)
    );
    // A connection per request.
    assert_eq!(m.histogram(LatencySeries::Connect).unwrap().len(), 200);
    assert_eq!(m.histogram(LatencySeries::Total).unwrap().max(), 1311);
    assert_eq!(verdict(&o), Some("ok"));
}

#[test]
fn herd_post_and_specweb_lengths() {
    let l = load(Shape::Requests { n_requests: 50, concurrency: 2 }, true);
    let o = parse_fixture(Tool::Herd, "herd-post", &post(), &l).unwrap();
    // 15 bytes echoed, 50 times.
    assert_eq!((one(&o).completed, one(&o).bytes_body), (50, 750));

    let sw = Request { specweb_dir: Some(PathBuf::from("/tmp/clients-fx/sw")), ..get("/") };
    let l = load(Shape::Requests { n_requests: 400, concurrency: 2 }, true);
    let o = parse_fixture(Tool::Herd, "herd-specweb", &sw, &l).unwrap();
    let m = one(&o);
    // herd counts a wrong length as completed only; a Measurement also as failed (as ab).
    assert_eq!((m.completed, m.failed, m.wrong_length()), (400, 6, 6));
    assert_eq!(failures(m), [("length", 6)]);
}

#[test]
fn herd_every_request_failed() {
    // Written by a herd that still judged such a run (client-bound); the runner fails such a
    // run as NoResponse (runner/account.rs), whatever its verdict.
    let l = load(Shape::Requests { n_requests: 10, concurrency: 2 }, true);
    let o = parse_fixture(Tool::Herd, "herd-failed", &get("/"), &l).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.bytes_total), (0, 10, 0));
    assert_eq!(failures(m), [("connect", 10)]);
    assert!(m.statuses.is_empty());
    // Every histogram is there, empty.
    assert_eq!(counts(m).len(), 5);
    assert!(m.histograms.iter().all(|(_, h)| h.is_empty()));
}

#[test]
fn herd_output_problems_are_errors() {
    let l = load(Shape::Requests { n_requests: 10, concurrency: 1 }, true);
    let r = get("/");
    // No run.json: herd failed before writing it; the error quotes its stderr.
    let dir = fixture("ab-get");
    let job = ClientJob {
        tool: Tool::Herd,
        program: Path::new("herd"),
        base_url: "http://127.0.0.1:1",
        protocol: Protocol::H1,
        ca_file: None,
        request: &r,
        load: &l,
        threads: None,
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    let e =
        parse(&job, "", "herd run: refusing to send load to 10.0.0.1\n").unwrap_err().to_string();
    assert!(e.starts_with("herd wrote no readable "), "{e}");
    assert!(e.ends_with(r#"its stderr: "herd run: refusing to send load to 10.0.0.1""#), "{e}");

    // Broken documents, each in one place.
    let text = std::fs::read_to_string(fixture("herd-closed/run.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tmp = std::env::temp_dir().join(format!("herd-lab-herd-json-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let job = ClientJob { out_dir: &tmp, ..job };
    let check = |edit: &dyn Fn(&mut serde_json::Value), expect: &str| {
        let mut d = doc.clone();
        edit(&mut d);
        std::fs::write(tmp.join("run.json"), d.to_string()).unwrap();
        let e = parse(&job, "", "").unwrap_err().to_string();
        assert_eq!(e, expect);
    };
    let file = tmp.join("run.json").display().to_string();
    check(
        &|d| d["format"] = "herd.run.v2".into(),
        &format!("herd wrote {file} that is of format \"herd.run.v2\", not herd.run.v1"),
    );
    check(
        &|d| {
            d["latency_us"]["total"].as_object_mut().unwrap().remove("hdr");
        },
        &format!(
            "herd wrote {file} that has a bad `latency_us.total`: a histogram of 300 values has \
             no `hdr` (a herd from before it? rebuild herd)"
        ),
    );
    check(
        &|d| d["latency_us"]["total"]["count"] = 301.into(),
        &format!(
            "herd wrote {file} that has a bad `latency_us.total`: `hdr` holds 300 values where \
             `count` says 301"
        ),
    );
    check(
        &|d| d["latency_us"]["connect"]["hdr"] = "HISTFAAA!".into(),
        &format!(
            "herd wrote {file} that has a bad `latency_us.connect.hdr`: not base64: Invalid \
             symbol 33, offset 8."
        ),
    );
    check(
        &|d| {
            d["requests"].as_object_mut().unwrap().remove("completed");
        },
        &format!("herd wrote {file} that has a bad `requests`: missing field `completed`"),
    );
    check(
        &|d| d["client"]["verdict"] = "great".into(),
        &format!(
            "herd wrote {file} that has a bad `client.verdict`: `great` is not a client verdict: \
             use one of ok, suspect, client-bound"
        ),
    );
    std::fs::write(tmp.join("run.json"), "{").unwrap();
    let e = parse(&job, "", "").unwrap_err().to_string();
    assert!(e.contains("that is not JSON"), "{e}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

// ab

#[test]
fn ab_keep_alive() {
    let l = load(Shape::Requests { n_requests: 200, concurrency: 4 }, true);
    let o = parse_fixture(Tool::Ab, "ab-get", &get("/page.html"), &l).unwrap();
    let m = one(&o);
    assert_eq!((m.concurrency, m.completed, m.failed, m.non_2xx), (Some(4), 200, 0, 0));
    assert_eq!((m.bytes_total, m.bytes_body, m.duration_s), (1_327_000, 1_279_400, 0.003));
    assert!(m.statuses.is_empty() && m.failures.is_empty());
    assert_eq!(counts(m), [("total", 200), ("connect", 200), ("first_byte", 200)]);
    assert_eq!(m.reported("keep_alive_requests"), Some(200.0));
    assert_eq!(m.reported("requests_per_second"), Some(63371.36));
    assert_eq!((o.judgement.as_ref(), o.health.as_ref()), (None, None));
}

#[test]
fn ab_post_and_non_2xx() {
    let l = load(Shape::Requests { n_requests: 100, concurrency: 2 }, false);
    let o = parse_fixture(Tool::Ab, "ab-post", &post(), &l).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.bytes_total), (100, 18_900));
    // herd serve's /echo dropped the body on a closing connection (README.md): the head says
    // 15 bytes, none came.
    assert_eq!(m.bytes_body, 0);
    assert_eq!(m.reported("keep_alive_requests"), None);

    let l = load(Shape::Requests { n_requests: 50, concurrency: 2 }, true);
    let o = parse_fixture(Tool::Ab, "ab-status404", &get("/status/404"), &l).unwrap();
    let m = one(&o);
    // A 404 is complete, not failed; ab counts it as non-2xx and nothing else.
    assert_eq!((m.completed, m.failed, m.non_2xx), (50, 0, 50));
}

#[test]
fn ab_length_failures() {
    let l = load(Shape::Requests { n_requests: 30, concurrency: 1 }, false);
    let o = parse_fixture(Tool::Ab, "ab-length", &get("/varlen"), &l).unwrap();
    let m = one(&o);
    // ab counts a wrong length in both Complete and Failed requests.
    assert_eq!((m.completed, m.failed, m.wrong_length()), (30, 20, 20));
    assert_eq!(failures(m), [("length", 20)]);
    // The warm-up is the runner's own run: the measurement has none of it.
    assert_eq!(m.warmup_requests, 0);
}

#[test]
fn ab_fatal_error_is_quoted() {
    let l = load(Shape::Requests { n_requests: 10, concurrency: 2 }, false);
    let e = parse_fixture(Tool::Ab, "ab-refused", &get("/"), &l).unwrap_err().to_string();
    assert!(e.starts_with("ab printed no 'Complete requests:' line; its stdout: "), "{e}");
    assert!(e.ends_with(r#"its stderr: "apr_socket_recv: Connection refused (111)""#), "{e}");
}

#[test]
fn ab_report_variants() {
    // What ab prints in rarer cases, edited into a real report: a write error, and a failure
    // ab counts in none of its four kinds (a head too large).
    let dir = fixture("ab-length");
    let stdout = std::fs::read_to_string(dir.join("stdout")).unwrap();
    let edited = stdout
        .replace("Failed requests:        20", "Failed requests:        23")
        .replace("Total transferred:", "Write errors:           2\nTotal transferred:");
    let l = load(Shape::Requests { n_requests: 30, concurrency: 1 }, false);
    let r = get("/varlen");
    let job = ClientJob {
        tool: Tool::Ab,
        program: Path::new("ab"),
        base_url: "http://127.0.0.1:1",
        protocol: Protocol::H1,
        ca_file: None,
        request: &r,
        load: &l,
        threads: None,
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    let o = parse(&job, &edited, "").unwrap();
    let m = one(&o);
    assert_eq!(m.failed, 25);
    // In the vocabulary's order.
    assert_eq!(failures(m), [("write", 2), ("length", 20), ("other", 3)]);

    let e = parse(
        &job,
        &stdout.replace("Complete requests:      30", "Complete requests:      31"),
        "",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("ab wrote 30 rows in ") && e.ends_with(" for 31 complete requests"),
        "{e}"
    );
    let e = parse(
        &job,
        &stdout.replace("Time taken for tests:   0.003", "Time taken for tests:   soon"),
        "",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "ab printed 'Time taken for tests:' with \"soon\", not a number");
}

// wrk

fn wrk_load(keep_alive: bool) -> Load {
    load(Shape::Duration { duration: Duration::from_secs(1), concurrency: 2 }, keep_alive)
}

#[test]
fn wrk_keep_alive() {
    let o = parse_fixture(Tool::Wrk, "wrk-get", &get("/page.html"), &wrk_load(true)).unwrap();
    let m = one(&o);
    assert_eq!((m.concurrency, m.completed, m.failed, m.non_2xx), (Some(2), 31_696, 0, 0));
    assert_eq!((m.bytes_total, m.bytes_body, m.duration_s), (209_542_256, 0, 1.099566));
    assert!(m.histograms.is_empty() && m.statuses.is_empty() && m.failures.is_empty());
    let r = |k| m.reported(k).unwrap();
    assert_eq!(
        [r("latency_p50_us"), r("latency_p99_us"), r("latency_p99.9_us"), r("latency_max_us")],
        [62.0, 114.0, 1498.0, 2598.0]
    );
    assert_eq!(r("latency_mean_us"), 65.373);
    assert_eq!(r("errors_timeout"), 0.0);
    assert!((r("requests_per_second") - 31_696.0 / 1.099566).abs() < 1e-6);
    assert_eq!(o.judgement, None);
}

#[test]
fn wrk_close_post_and_status_errors() {
    let o = parse_fixture(Tool::Wrk, "wrk-close", &get("/page.html"), &wrk_load(false)).unwrap();
    assert_eq!(one(&o).completed, 21_406);
    let o = parse_fixture(Tool::Wrk, "wrk-post", &post(), &wrk_load(true)).unwrap();
    // 185 bytes a response: the head and the 15 bytes echoed, so the body was sent.
    assert_eq!((one(&o).completed, one(&o).bytes_total), (29_692, 29_692 * 185));
    let o =
        parse_fixture(Tool::Wrk, "wrk-status404", &get("/status/404"), &wrk_load(true)).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.non_2xx), (71_515, 0, 71_515));
}

#[test]
fn wrk_without_its_lines_is_an_error() {
    let e = parse_fixture(Tool::Wrk, "wrk-refused", &get("/"), &wrk_load(true))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("wrk printed no 'herd-wrk requests' line (was "), "{e}");
    assert!(
        e.ends_with(r#"its stderr: "unable to connect to 127.0.0.1:1 Connection refused""#),
        "{e}"
    );
    let job_dir = fixture("wrk-get");
    let stdout = std::fs::read_to_string(job_dir.join("stdout")).unwrap();
    let l = wrk_load(true);
    let r = get("/");
    let job = ClientJob {
        tool: Tool::Wrk,
        program: Path::new("wrk"),
        base_url: "http://127.0.0.1:1",
        protocol: Protocol::H1,
        ca_file: None,
        request: &r,
        load: &l,
        threads: None,
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &job_dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    let e = parse(&job, &stdout.replace("herd-wrk bytes 209542256", "herd-wrk bytes lots"), "")
        .unwrap_err()
        .to_string();
    assert_eq!(e, r#"wrk printed "herd-wrk bytes lots", whose value is not a number"#);
}

#[test]
fn wrk_timeouts_are_reported_not_failed() {
    // wrk's timeout count is no count of requests (wrk.rs): edited into a real output.
    let dir = fixture("wrk-get");
    let stdout = std::fs::read_to_string(dir.join("stdout"))
        .unwrap()
        .replace("herd-wrk errors_timeout 0", "herd-wrk errors_timeout 5")
        .replace("herd-wrk errors_read 0", "herd-wrk errors_read 3");
    let (l, r) = (wrk_load(true), get("/page.html"));
    let job = ClientJob {
        tool: Tool::Wrk,
        program: Path::new("wrk"),
        base_url: "http://127.0.0.1:1",
        protocol: Protocol::H1,
        ca_file: None,
        request: &r,
        load: &l,
        threads: None,
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    let o = parse(&job, &stdout, "").unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed), (31_696, 3));
    assert_eq!(failures(m), [("read", 3)]);
    assert_eq!(m.reported("errors_timeout"), Some(5.0));
}

// h2load: its text report, Debian's 1.52 (see the README for each run)

/// `name`'s stdout and stderr parsed as h2load's for a job speaking `protocol`.
fn parse_h2load(name: &str, protocol: Protocol, load: &Load) -> Result<ClientOutcome, ClientError> {
    let dir = fixture(name);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let request = get("/page.html");
    let job = ClientJob {
        tool: Tool::H2load,
        program: Path::new("h2load"),
        base_url: if protocol.is_encrypted() {
            "https://127.0.0.1:48443"
        } else {
            "http://127.0.0.1:48081"
        },
        protocol,
        ca_file: None,
        request: &request,
        load,
        threads: Some(1),
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    parse(&job, &read("stdout"), &read("stderr"))
}

fn h2load_requests(n_requests: u64, concurrency: u32) -> Load {
    load(Shape::Requests { n_requests, concurrency }, true)
}

#[test]
fn h2load_every_protocol_it_speaks() {
    for (name, protocol, bytes_total, rps) in [
        ("h2load-h2c", Protocol::H2c, 1_957_696, 8611.78),
        ("h2load-h2", Protocol::H2, 1_957_396, 4144.51),
        ("h2load-h1", Protocol::H1, 1_991_100, 5461.99),
        ("h2load-h1-tls", Protocol::H1Tls, 1_991_100, 1382.94),
    ] {
        let o = parse_h2load(name, protocol, &h2load_requests(300, 4)).unwrap();
        let m = one(&o);
        assert_eq!((m.completed, m.failed, m.non_2xx), (300, 0, 0), "{name}");
        assert!(m.failures.is_empty(), "{name}");
        assert_eq!((m.bytes_total, m.bytes_body), (bytes_total, 300 * 6397), "{name}");
        assert_eq!((m.concurrency, m.rate), (Some(4), None), "{name}");
        // Its own rate, and no percentiles made up: no histogram at all.
        assert_eq!(m.reported("requests_per_second"), Some(rps), "{name}");
        assert!(m.histograms.is_empty() && m.statuses.is_empty(), "{name}");
        assert_eq!((o.judgement.as_ref(), o.health.as_ref()), (None, None), "{name}");
    }
    let o = parse_h2load("h2load-h2c", Protocol::H2c, &h2load_requests(300, 4)).unwrap();
    let m = one(&o);
    assert_eq!(m.duration_s, 0.03484);
    assert_eq!(m.reported(REPORTED_TIMER_RESOLUTION_S), Some(0.00001));
    assert_eq!(m.reported("request_min_us"), Some(64.0));
    assert_eq!(m.reported("request_max_us"), Some(10_660.0));
    assert_eq!(m.reported("request_mean_us"), Some(3690.0));
    assert_eq!(m.reported("connect_mean_us"), Some(287.0));
    assert_eq!(m.reported("first_byte_per_connection_mean_us"), Some(5790.0));
    assert_eq!(m.reported("header_bytes"), Some(33_000.0));
}

#[test]
fn h2load_timed_run_counts_its_main_duration() {
    let l = load(Shape::Duration { duration: Duration::from_secs(1), concurrency: 2 }, true);
    let o = parse_h2load("h2load-duration", Protocol::H2c, &l).unwrap();
    let m = one(&o);
    // `finished in 1.02s` includes the stop; its req/s (2000.00) is over the main second,
    // as the counts are.
    assert_eq!((m.duration_s, m.completed, m.failed), (1.0, 2000, 1));
    assert_eq!(failures(m), [("errored", 1)]);
    assert_eq!(m.requests_per_second(), m.reported("requests_per_second"));
    assert_eq!(m.reported(REPORTED_TIMER_RESOLUTION_S), None);
}

#[test]
fn h2load_timed_run_with_streams_counts_heads_apart_from_answers() {
    // 1 MiB answers on 8 connections of 10 streams for a second: 550 heads arrived, 544
    // answers ended in the main duration, and the data of those still arriving is counted.
    let mut l = load(Shape::Duration { duration: Duration::from_secs(1), concurrency: 8 }, true);
    l.streams = std::num::NonZeroU32::new(10);
    let o = parse_h2load("h2load-timed-streams", Protocol::H2c, &l).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.non_2xx), (544, 0, 0));
    assert_eq!(m.requests_per_second(), Some(544.0));
    assert!(m.bytes_body > 544 * 1_048_576, "{}", m.bytes_body);
}

#[test]
fn h2load_failures_are_errored_and_timeouts_and_statuses_are_answers() {
    // A 404 is an answer: completed, non-2xx, not failed.
    let o = parse_h2load("h2load-status404", Protocol::H2c, &h2load_requests(50, 2)).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed, m.non_2xx, m.bytes_body), (50, 0, 50, 7650));
    // nginx's GOAWAY after 1,000 requests: 1,003 streams closed, 1,000 with an answer, and
    // 500 errored (3 reset, 497 abandoned with the connection); completed is total − errored,
    // not done − errored (503).
    let o = parse_h2load("h2load-goaway", Protocol::H2c, &h2load_requests(1500, 1)).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed), (1000, 500));
    assert_eq!(failures(m), [("errored", 500)]);
    // A silent server: 2 requests in flight timed out, 4 never started; all 6 errored.
    let o = parse_h2load("h2load-timeout", Protocol::H1, &h2load_requests(6, 2)).unwrap();
    let m = one(&o);
    assert_eq!((m.completed, m.failed), (0, 6));
    assert_eq!(failures(m), [("timeout", 2), ("errored", 4)]);
    // Nothing listens: no connection, no protocol, no answer (the runner fails the run as
    // NoResponse).
    let o = parse_h2load("h2load-refused", Protocol::H2c, &h2load_requests(10, 2)).unwrap();
    assert_eq!((one(&o).completed, one(&o).failed), (0, 10));
    assert_eq!(one(&o).duration_s, 0.000378);
    // No ALPN id in common: likewise.
    let o = parse_h2load("h2load-no-alpn", Protocol::H2, &h2load_requests(10, 1)).unwrap();
    assert_eq!((one(&o).completed, one(&o).failed), (0, 10));
}

#[test]
fn h2load_must_speak_the_protocol_asked() {
    // The h2c run read as a cell asking for h1: not this cell's figures.
    let e = parse_h2load("h2load-h2c", Protocol::H1, &h2load_requests(300, 4)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "h2load spoke h2c where the cell asks for h1 (http/1.1): the server chose another protocol"
    );
    let e = parse_h2load("h2load-h1-tls", Protocol::H2, &h2load_requests(300, 4)).unwrap_err();
    assert!(
        e.to_string().starts_with("h2load spoke http/1.1 where the cell asks for h2 (h2)"),
        "{e}"
    );
}

#[test]
fn h2load_output_problems_are_errors() {
    let l = h2load_requests(4, 1);
    let r = get("/");
    let dir = fixture("h2load-h2c");
    let job = ClientJob {
        tool: Tool::H2load,
        program: Path::new("h2load"),
        base_url: "http://127.0.0.1:1",
        protocol: Protocol::H2c,
        ca_file: None,
        request: &r,
        load: &l,
        threads: Some(2),
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: &dir,
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    // Refused before running (its stderr, no report).
    let stderr =
        "-c, -t: the number of clients must be greater than or equal to the number of threads.\n";
    let e = parse(&job, "", stderr).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "h2load printed no 'finished in' line; its stdout: \"\"; its stderr: \"-c, -t"
        ),
        "{e}"
    );
    let good = std::fs::read_to_string(dir.join("stdout")).unwrap();
    for (from, to, want) in [
        ("300 done", "many done", "h2load printed a 'requests' line herd cannot read"),
        ("(1919100) data", "(lots) data", "h2load printed a 'traffic' line herd cannot read"),
        ("64us", "64 us", "h2load printed a 'time for request' line herd cannot read"),
        ("0 errored", "301 errored", "h2load counted 300 requests, 300 done, 301 errored"),
        (
            "Application protocol: h2c\n",
            "",
            "h2load printed no 'Application protocol:' line for 300 responses",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let e = parse(&job, &good.replacen(from, to, 1), "").unwrap_err().to_string();
        assert!(e.starts_with(want), "{want:?}: {e}");
    }
}
