//! `--io auto|epoll|uring` (issue 35) from the outside: `herd run` and `herd ab` say which
//! event-loop backend measured, in `--json` and in one summary line, and why `auto` fell
//! back; `--io uring` is refused before anything is sent while no protocol has an io_uring
//! worker, with the reason and what to do; a spelling `--io` does not have is refused naming
//! the ones it has; a spread run's agents are given it; the lab's `[client] io` is herd's
//! `--io`, refused at parse when misspelt, and its run's backend is stored and disclosed.

use std::path::Path;

use serde_json::json;

use crate::util::{self, herd, run, run_json, tempdir, text, Serve};

const AUTO_H1: &str = "io_uring not yet for HTTP/1";

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
    assert_eq!(auto["io"], json!({"asked": "auto", "backend": "epoll", "fallback": AUTO_H1}));
    let summary = text(&out.stdout);
    let said: Vec<&str> = summary.lines().filter(|l| l.contains("I/O")).collect();
    assert_eq!(said, [format!("  I/O         epoll (auto: {AUTO_H1})")], "{summary}");

    // The run's page discloses it beside the client, as `herd report --html` does.
    let dir = tempdir("io-run-html");
    let page = dir.join("run.html");
    let out = run(herd().args(["run", "-c", "1", "-n", "10", &url, "--html"]).arg(&page));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&format!("herd run, I/O: epoll ({AUTO_H1})")), "{html}");
    let _ = std::fs::remove_dir_all(&dir);

    // HTTP/2 (h2c with prior knowledge, which herd serve speaks) says its own protocol.
    let h2 = run_json(&["--h2c", "-c", "1", "-n", "20", "--io=auto", &url]);
    assert_eq!(h2["protocol"], "h2c");
    assert_eq!(h2["io"]["fallback"], "io_uring not yet for HTTP/2");
}

#[test]
fn herd_run_io_uring_is_refused_before_anything_is_sent() {
    let serve = Serve::start(&["--threads", "1"]);
    let dir = tempdir("io-uring-refused");
    let json = dir.join("out.json");
    let out = run(herd()
        .args(["run", "-c", "2", "-n", "10", "--io", "uring", &serve.url("/9x9"), "--json"])
        .arg(&json));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "cannot start: {stderr}");
    assert_eq!(
        stderr,
        "herd run: --io uring: herd's io_uring backend does not carry HTTP/1 yet; use --io epoll \
         or --io auto\n"
    );
    assert_eq!(text(&out.stdout), "", "no summary of a run that did not run");
    assert!(!json.exists(), "no --json of a run that did not run");
    assert_eq!(serve.stats()["routes"]["/9x9"].as_u64().unwrap_or(0), 0, "no load was sent");
    let _ = std::fs::remove_dir_all(&dir);
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
/// `--json` says what was asked and what measured; `--io uring` is refused before the banner.
#[test]
fn herd_ab_takes_io_and_says_it_only_in_its_json() {
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/bytes/10");
    let dir = tempdir("ab-io");
    let json = dir.join("ab.json");
    let ab = |io: &[&str]| {
        let out = run(herd()
            .args(["ab", "-q", "-n", "20", "-c", "2"])
            .args(io)
            .arg("--json")
            .arg(&json)
            .arg(&url));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (util::report_lines(&text(&out.stdout)), doc)
    };
    let (report, doc) = ab(&["--io", "epoll"]);
    assert_eq!(doc["settings"]["io"], "epoll");
    assert_eq!(doc["io"], json!({"backend": "epoll", "fallback": null}));
    assert!(report.iter().any(|l| l == "Complete requests:      20"), "{report:#?}");
    assert!(!report.iter().any(|l| l.contains("I/O") || l.contains("epoll")), "{report:#?}");
    let (auto_report, doc) = ab(&[]);
    assert_eq!(doc["settings"]["io"], "auto");
    assert_eq!(doc["io"], json!({"backend": "epoll", "fallback": AUTO_H1}));
    // The same lines, figures aside: no line added or taken away by `--io`.
    let labels = |r: &[String]| -> Vec<String> {
        let label = |l: &String| {
            l.split(|c: char| c == ':' || c.is_ascii_digit()).next().unwrap_or("").to_owned()
        };
        r.iter().map(label).collect()
    };
    assert_eq!(labels(&report), labels(&auto_report));

    let out = run(herd().args(["ab", "-n", "5", "--io=uring", &url]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "refused before ab's banner");
    assert!(
        text(&out.stderr).starts_with("herd ab: --io uring: herd's io_uring backend does not"),
        "{}",
        text(&out.stderr)
    );
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
         (io_uring where it runs, else epoll), \"epoll\" or \"uring\"",
        bad.display()
    );
    assert!(text(&out.stderr).contains(&want), "{want}\n{}", text(&out.stderr));

    // `uring` is one of its names, but no protocol has herd's io_uring worker yet: refused
    // before any run, at the same line.
    let uring = lab_file(&dir, "io = \"uring\"\n");
    let out = run(herd().env("TMPDIR", &dir).args(["lab", "run", "--dry-run"]).arg(&uring));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("line {line}: [client] io = \"uring\": cell ")), "{stderr}");
    assert!(stderr.contains("herd's io_uring backend does not carry HTTP/1 yet"), "{stderr}");
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
    let want = herd_store::ClientIo { backend: "epoll".into(), fallback: Some(AUTO_H1.into()) };
    assert_eq!(client.io.as_ref(), Some(&want), "{client:?}");
    drop(store);
    let page = dir.join("r.html");
    let out = run(herd().arg("report").arg(dir.join("r.db")).arg("--html").arg(&page));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&format!("herd, I/O: epoll ({AUTO_H1})")), "{html}");
    let _ = std::fs::remove_dir_all(&dir);
}
