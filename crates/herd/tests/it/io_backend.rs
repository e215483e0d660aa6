//! `--io auto|epoll|uring` (issue 35) from the outside: `herd run` and `herd ab` say which
//! event-loop backend measured, in `--json` and in one summary line, and why `auto` fell
//! back; `--io uring` runs HTTP/1 and HTTP/2, plain or over TLS, on io_uring where this
//! machine allows it (HTTP/3's is run_h3's), and io_uring where the machine refuses it is
//! refused before anything is sent, with the reason and what to do; a spelling `--io` does
//! not have is refused naming the ones it has; a spread run's agents are given it; the lab's
//! `[client] io` is herd's `--io`, refused at parse when misspelt, and its run's backend is
//! stored and disclosed.
//!
//! What `auto` takes is the engine's own answer here (this machine's probe, and
//! `HERD_AUTO_IO`, which the test command sets to run these tests on each backend).

use std::path::Path;

use serde_json::json;

use crate::util::{self, herd, run, run_json, tempdir, text, Serve};

use herd_engine::io_choice::{self, IoChoice, WireKind};

/// What `--io auto` takes for `kind` here: the backend as JSON says it, and why not io_uring.
fn auto_for(kind: WireKind) -> (String, Option<String>) {
    let r = io_choice::resolve_kind(IoChoice::Auto, kind).unwrap();
    (r.backend.as_str().to_owned(), r.why)
}

/// The summary's words for `auto` here, as `epoll (auto: why)` or `io_uring (auto)`.
fn auto_said(kind: WireKind) -> String {
    io_choice::resolve_kind(IoChoice::Auto, kind).unwrap().to_string()
}

/// This machine lets herd use io_uring.
fn uring_runs() -> bool {
    matches!(io_choice::probed(), herd_engine::uring::probe::Uring::Available { .. })
}

#[test]
fn herd_run_says_which_backend_measured_and_why_auto_fell_back() {
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/10");
    let (epoll, out) = util::run_json_exiting(&["-c", "2", "-n", "50", "--io", "epoll", &url], 0);
    assert_eq!(epoll["io"], json!({"asked": "epoll", "backend": "epoll", "fallback": null}));
    assert_eq!(epoll["requests"]["completed"], 50);
    let summary = text(&out.stdout);
    assert!(summary.contains("\n  I/O         epoll\n"), "{summary}");

    let (auto, out) = util::run_json_exiting(&["-c", "2", "-n", "50", &url], 0);
    let (backend, fallback) = auto_for(WireKind::Http1);
    assert_eq!(auto["io"], json!({"asked": "auto", "backend": backend, "fallback": fallback}));
    assert_eq!(auto["requests"]["completed"], 50);
    let summary = text(&out.stdout);
    let said: Vec<&str> = summary.lines().filter(|l| l.contains("I/O")).collect();
    assert_eq!(said, [format!("  I/O         {}", auto_said(WireKind::Http1))], "{summary}");

    // The run's page discloses it beside the client, as `herd report --html` does.
    let dir = tempdir("io-run-html");
    let page = dir.join("run.html");
    let out = run(herd().args(["run", "-c", "1", "-n", "10", &url, "--html"]).arg(&page));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let disclosed = match fallback {
        Some(why) => format!("herd run, I/O: {backend} ({why})"),
        None => format!("herd run, I/O: {backend}"),
    };
    assert!(html.contains(&disclosed), "{disclosed}\n{html}");
    let _ = std::fs::remove_dir_all(&dir);

    // HTTP/2 (h2c with prior knowledge, which herd serve speaks) says its own protocol.
    let h2 = run_json(&["--h2c", "-c", "1", "-n", "20", "--io=auto", &url]);
    assert_eq!(h2["protocol"], "h2c");
    assert_eq!(h2["io"]["fallback"], json!(auto_for(WireKind::Http2).1));
    assert_eq!(h2["requests"]["completed"], 20);
}

/// `--io uring` measures HTTP/1 (keep-alive and a connection per request), h2c, and both
/// over TLS (nginx's https and its h2 by ALPN) on io_uring, and says so; where this machine
/// refuses io_uring it is refused with the probe's reason.
#[test]
fn herd_run_io_uring_runs_http1_and_h2_plain_and_over_tls_on_the_ring() {
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/100");
    let nginx = util::Nginx::start_tls();
    let https = nginx.https_url("localhost", "/f6397.html");
    let h2 = format!("https://localhost:{}/f6397.html", nginx.h2_port.unwrap());
    for (args, url) in [
        (&["-c", "3", "-n", "60"][..], &url),
        (&["-c", "3", "-n", "30", "--no-keep-alive"], &url),
        (&["--h2c", "-c", "2", "-m", "4", "-n", "60"], &url),
        (&["-k", "-c", "3", "-n", "60"][..], &https),
        (&["-k", "-c", "3", "-n", "30", "--no-keep-alive"], &https),
        (&["-k", "--h2", "-c", "2", "-m", "4", "-n", "60"], &h2),
    ] {
        let mut all = args.to_vec();
        all.extend(["--io", "uring", url]);
        if !uring_runs() {
            let out = run(herd().arg("run").args(&all));
            assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
            assert!(
                text(&out.stderr).contains("io_uring is refused here"),
                "{}",
                text(&out.stderr)
            );
            continue;
        }
        let (doc, out) = util::run_json_exiting(&all, 0);
        assert_eq!(doc["io"], json!({"asked": "uring", "backend": "io_uring", "fallback": null}));
        let n = args.iter().position(|a| *a == "-n").map(|k| args[k + 1]).unwrap();
        assert_eq!(doc["requests"]["completed"].to_string(), n, "{args:?}: {doc}");
        assert_eq!(doc["requests"]["failed"], 0, "{args:?}: {doc}");
        let summary = text(&out.stdout);
        assert!(summary.contains("\n  I/O         io_uring\n"), "{summary}");
    }
}

#[test]
fn a_backend_io_does_not_have_is_refused_naming_those_it_has() {
    let out = run(herd().args(["run", "--io", "kqueue", "http://127.0.0.1:1/"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "bad usage: {stderr}");
    assert!(stderr.contains("invalid value 'kqueue' for '--io <BACKEND>'"), "{stderr}");
    assert!(stderr.contains("[possible values: auto, epoll, uring]"), "{stderr}");

    let out = run(herd().args(["ab", "--io", "kqueue", "http://127.0.0.1:1/"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(22), "ab's usage error: {stderr}");
    assert_eq!(stderr, "herd ab: --io kqueue is not valid: give auto, epoll or uring\n");
}

/// `herd ab --io`: ab's report is ab's, byte for byte, whatever the backend; herd's own
/// `--json` says what was asked and what measured, over TLS too; where io_uring is refused,
/// `--io uring` is refused before the banner.
#[test]
fn herd_ab_takes_io_and_says_it_only_in_its_json() {
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/10");
    let dir = tempdir("ab-io");
    let json = dir.join("ab.json");
    // herd ab with `args` before the URL: its report's lines and its JSON.
    let ab_at = |args: &[&str], url: &str| {
        let out = run(herd()
            .args(["ab", "-n", "20", "-c", "2"])
            .args(args)
            .arg("--json")
            .arg(&json)
            .arg(url));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (util::report_lines(&text(&out.stdout)), doc)
    };
    let ab = |io: &[&str]| ab_at(&[&["-q"][..], io].concat(), &url);
    let (report, doc) = ab(&["--io", "epoll"]);
    assert_eq!(doc["settings"]["io"], "epoll");
    assert_eq!(doc["io"], json!({"backend": "epoll", "fallback": null}));
    assert!(report.iter().any(|l| l == "Complete requests:      20"), "{report:#?}");
    assert!(!report.iter().any(|l| l.contains("I/O") || l.contains("epoll")), "{report:#?}");
    let (auto_report, doc) = ab(&[]);
    assert_eq!(doc["settings"]["io"], "auto");
    let (backend, fallback) = auto_for(WireKind::Http1);
    assert_eq!(doc["io"], json!({"backend": backend, "fallback": fallback}));
    // The same lines, figures aside: no line added or taken away by `--io`.
    let labels = |r: &[String]| -> Vec<String> {
        let label = |l: &String| {
            l.split(|c: char| c == ':' || c.is_ascii_digit()).next().unwrap_or("").to_owned()
        };
        r.iter().map(label).collect()
    };
    assert_eq!(labels(&report), labels(&auto_report));

    if uring_runs() {
        let (ring_report, doc) = ab(&["--io=uring"]);
        assert_eq!(doc["io"], json!({"backend": "io_uring", "fallback": null}));
        assert!(ring_report.iter().any(|l| l == "Complete requests:      20"), "{ring_report:#?}");
        assert_eq!(labels(&report), labels(&ring_report));
    }
    // Over TLS, on the ring too: nginx's https, ab's report with its TLS lines, the same
    // lines on either backend.
    let nginx = util::Nginx::start_tls();
    let https = nginx.https_url("localhost", "/small.html");
    let ab_tls = |io: &str| ab_at(&["-k", io], &https);
    let (tls_report, doc) = ab_tls("--io=epoll");
    assert_eq!(doc["io"], json!({"backend": "epoll", "fallback": null}));
    assert!(tls_report.iter().any(|l| l == "Complete requests:      20"), "{tls_report:#?}");
    assert!(tls_report.iter().any(|l| l.starts_with("SSL/TLS Protocol:")), "{tls_report:#?}");
    if uring_runs() {
        let (ring_report, doc) = ab_tls("--io=uring");
        assert_eq!(doc["io"], json!({"backend": "io_uring", "fallback": null}));
        assert!(ring_report.iter().any(|l| l == "Complete requests:      20"), "{ring_report:#?}");
        assert!(ring_report.iter().any(|l| l == "Failed requests:        0"), "{ring_report:#?}");
        assert_eq!(labels(&tls_report), labels(&ring_report));
        let protocol =
            |r: &[String]| r.iter().find(|l| l.starts_with("SSL/TLS Protocol:")).cloned();
        assert_eq!(protocol(&tls_report), protocol(&ring_report));
    } else {
        // Refused before ab's banner, with the reason.
        let out = run(herd().args(["ab", "-n", "5", "--io=uring", &https]));
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "refused before ab's banner");
        assert!(text(&out.stderr).contains("io_uring is refused here"), "{}", text(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `herd cluster run --local 2 -- … --io epoll`: each agent is given the choice (its plan's
/// arguments carry it) and says what it measured on; the merged document says theirs.
#[test]
fn a_spread_runs_agents_are_given_io() {
    let serve = Serve::start(&["--threads", "1"]);
    let dir = tempdir("io-cluster");
    let path = dir.join("out.json");
    let out = run(herd()
        .args(["cluster", "run", "--local", "2", "--", "-c", "2", "-n", "40", "--io", "epoll"])
        .arg(serve.url("/bytes/10"))
        .arg("--json")
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let epoll = json!({"asked": "epoll", "backend": "epoll", "fallback": null});
    assert_eq!(doc["io"], epoll, "{doc}");
    for agent in doc["agents"].as_array().unwrap() {
        assert_eq!(agent["steps"][0]["io"], epoll, "{agent}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const LAB: &str = r#"
name = "io"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["n40"]
[workloads.page]
kind = "static"
size = 100
[loads.n40]
requests = 40
concurrency = 2
[repetitions]
min = 1
max = 1
[runner]
time_wait_below = 1000000
[client]
threads = 1
"#;

fn lab_file(dir: &Path, extra: &str) -> std::path::PathBuf {
    let p = dir.join("io.toml");
    std::fs::write(&p, format!("{LAB}{extra}")).unwrap();
    p
}

/// `[client] io`: given to herd's client as `--io` (the dry run shows it), and a name it does
/// not have refused at parse with the file, its line, the key and the names it has.
#[test]
fn the_lab_reads_client_io_and_refuses_a_bad_one() {
    let dir = tempdir("lab-io-parse");
    let file = lab_file(&dir, "io = \"epoll\"\n");
    let out = run(herd().env("TMPDIR", &dir).args(["lab", "run", "--dry-run"]).arg(&file));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = text(&out.stdout);
    assert!(plan.contains(" --io=epoll "), "{plan}");
    let auto = lab_file(&dir, "");
    let out = run(herd().env("TMPDIR", &dir).args(["lab", "run", "--dry-run"]).arg(&auto));
    assert!(!text(&out.stdout).contains("--io"), "auto is herd run's default, left unsaid");

    let bad = lab_file(&dir, "io = \"io_uring\"\n");
    let out = run(herd().env("TMPDIR", &dir).args(["lab", "run", "--dry-run"]).arg(&bad));
    assert_eq!(out.status.code(), Some(1), "a bad experiment file");
    let line = LAB.lines().count() + 1;
    let want = format!(
        "{}: line {line}: [client] io = \"io_uring\" is not an I/O backend: give \"auto\" \
         (io_uring where it runs and was measured faster, else epoll), \"epoll\" or \"uring\"",
        bad.display()
    );
    assert!(text(&out.stderr).contains(&want), "{want}\n{}", text(&out.stderr));

    // `uring` for herd's HTTP/1 client: given as `--io=uring` (a protocol without an io_uring
    // worker would be refused here, at the same line: io_choice's unit tests hold that rule).
    let uring = lab_file(&dir, "io = \"uring\"\n");
    let out = run(herd().env("TMPDIR", &dir).args(["lab", "run", "--dry-run"]).arg(&uring));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(" --io=uring "), "{}", text(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lab run stores which backend herd's client measured with, and `herd report --html`
/// discloses it beside the client.
#[test]
fn the_lab_stores_and_discloses_the_clients_backend() {
    let dir = tempdir("lab-io-run");
    let file = lab_file(&dir, "");
    let out = run(&mut util::lab_run(&dir, &file));
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let store = herd_store::Store::open_read_only(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    let client = &exp.cells[0].repetitions[0].record.client;
    let (backend, fallback) = auto_for(WireKind::Http1);
    let want = herd_store::ClientIo { backend: backend.clone(), fallback: fallback.clone() };
    assert_eq!(client.io.as_ref(), Some(&want), "{client:?}");
    drop(store);
    let page = dir.join("r.html");
    let out = run(herd().arg("report").arg(dir.join("r.db")).arg("--html").arg(&page));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let disclosed = match fallback {
        Some(why) => format!("herd, I/O: {backend} ({why})"),
        None => format!("herd, I/O: {backend}"),
    };
    assert!(html.contains(&disclosed), "{disclosed}\n{html}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// On the ring, more connections than the ring has receive buffers (64), each response
/// larger than a buffer: every byte arrives, none is lost when the buffers run out (the ring
/// re-arms its receives as they come back), and each response has its full length.
#[test]
fn more_connections_than_ring_buffers_lose_no_byte() {
    if !uring_runs() {
        let why = io_choice::probed().to_string();
        return herd_testutil::not_run::not_run(
            "io_uring with more connections than buffers",
            &why,
        );
    }
    let serve = Serve::start(&["--threads", "1"]);
    let args = ["-c", "150", "-n", "1500", "--io", "uring", &serve.url("/bytes/40000")];
    let (doc, _) = util::run_json_exiting(&args, 0);
    assert_eq!(doc["io"]["backend"], "io_uring", "{doc}");
    assert_eq!(doc["requests"]["completed"], 1500, "{doc}");
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    assert_eq!(doc["wrong_length"], 0, "{doc}");
    assert_eq!(doc["bytes"]["body"], 1500 * 40000, "{doc}");
}
