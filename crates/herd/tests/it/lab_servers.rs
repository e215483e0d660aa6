//! Every server driver's real server, started, verified and loaded through the lab: static
//! files on all of them, the 9x9, include and POST pages on every PHP setup (php-fpm behind
//! nginx and Apache, php-cgi under Apache and lighttpd) and on herd serve, and the real ab and
//! wrk as clients. Each run must pass verify-before-measure and complete without a failed
//! request. A missing server fails here with its apt package (run scripts/test.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use util::{figure_ending_under, lab_run, rows_of, tempdir};

fn run_experiment(tag: &str, text: &str) -> String {
    run_experiment_stored(tag, text).0
}

/// [`run_experiment`], with the experiment as the store holds it.
fn run_experiment_stored(tag: &str, text: &str) -> (String, herd_store::StoredExperiment) {
    let dir = tempdir(tag);
    let file = dir.join("x.toml");
    std::fs::write(&file, text).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The failed runs' reasons first: a CI log may keep only the head and tail of a message.
    let failed: Vec<&str> = stderr.lines().filter(|l| l.contains("FAILED")).collect();
    assert!(
        out.status.success() && failed.is_empty(),
        "exit {:?}; failed runs:\n{}\n\n{stdout}\n{stderr}",
        out.status.code(),
        failed.join("\n")
    );
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let stored = store.load_experiment(id).unwrap();
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
    (stdout, stored)
}

/// Every program of every run, as recorded: (server, program, version).
fn versions(exp: &herd_store::StoredExperiment) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = exp
        .cells
        .iter()
        .flat_map(|c| &c.repetitions)
        .flat_map(|r| &r.record.servers)
        .map(|s| (s.name.clone(), s.program.clone(), s.version.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Rows of the table of every row's figures (after the matrix) whose first column is one of
/// `servers`, checked: every repetition ok, no failed request, no non-2xx answer.
fn check_rows(report: &str, servers: &[&str], rows_each: usize) {
    let (header, rows) = rows_of(report);
    for s in servers {
        let mine: Vec<&String> =
            rows.iter().filter(|l| l.split_whitespace().next() == Some(s)).collect();
        assert_eq!(mine.len(), rows_each, "{s}:\n{report}");
        for row in mine {
            assert_eq!(figure_ending_under(&header, row, "reps"), "1/1", "{row}");
            let failures = ["failed", "non-2xx"].map(|h| figure_ending_under(&header, row, h));
            assert_eq!(failures, ["0", "0"], "failures in {row}");
        }
    }
}

/// One repetition: what these tests check is that each server serves through the lab, not
/// the spread of its figures (the lab's repetitions are tested in lab_cli and lab_resume).
/// The 6,397-byte static page, 200 requests 4 at a time.
const PAGE_N200: &str = "[workloads.page]\nkind = \"static\"\nsize = 6397\n[loads.n200]\nrequests = 200\nconcurrency = 4\n";

const TRIM: &str = r#"
[repetitions]
min = 1
max = 1
[runner]
time_wait_below = 1000000   # other tests leave TIME_WAIT behind; not what this test is about
"#;

#[test]
fn every_server_serves_a_static_page_through_the_lab() {
    let servers = [
        "herd",
        "nginx",
        "apache-event",
        "apache-worker",
        "apache-prefork",
        "lighttpd",
        "h2o",
        "mini_httpd",
        "thttpd",
        "nginx-fpm",
        "apache-fpm",
        "apache-cgi",
        "lighttpd-cgi",
    ];
    let list = servers.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ");
    let text = format!(
        r#"
name = "every-server-static"
[matrix]
server = [{list}]
workload = ["page"]
load = ["n200"]
{PAGE_N200}{TRIM}"#
    );
    let (table, stored) = run_experiment_stored("lab-static", &text);
    check_rows(&table, &servers, 1);
    // Every program's version is recorded, PHP's too where the server starts it itself.
    let versions = versions(&stored);
    for (server, program, version) in &versions {
        assert!(
            !version.is_empty() && version != "n/a" && !version.contains("unknown"),
            "{server}: {program} has version {version:?}"
        );
    }
    for php in ["nginx-fpm", "apache-fpm", "apache-cgi", "lighttpd-cgi"] {
        assert!(
            versions.iter().any(|(s, _, v)| s == php && v.starts_with("PHP 8")),
            "{php} has no PHP version: {versions:?}"
        );
    }
}

#[test]
fn every_php_setup_and_herd_serve_the_dynamic_pages() {
    let servers = ["herd", "nginx-fpm", "apache-fpm", "apache-cgi", "lighttpd-cgi"];
    let list = servers.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ");
    let text = format!(
        r#"
name = "every-php"
[matrix]
server = [{list}]
workload = ["9x9", "include", "post"]
load = ["n60", "n60-ka"]
[workloads.post]
kind = "post"
size = 5000
[loads.n60]
requests = 60
concurrency = 3
[loads.n60-ka]
requests = 60
concurrency = 3
keep_alive = true
{TRIM}"#
    );
    let table = run_experiment("lab-php", &text);
    check_rows(&table, &servers, 6);
}

#[test]
fn the_real_ab_and_wrk_are_clients_of_the_lab() {
    let text = format!(
        r#"
name = "tools"
[matrix]
server = ["nginx"]
workload = ["page"]
load = ["n300", "d1"]
client = ["herd", "ab", "wrk"]
[[exclude]]
client = "ab"
load = "d1"
[[exclude]]
client = "wrk"
load = "n300"
[workloads.page]
kind = "static"
size = 6397
[loads.n300]
requests = 300
concurrency = 5
warmup_requests = 50
[loads.d1]
duration = "1s"
concurrency = 4
keep_alive = true
{TRIM}"#
    );
    let (table, stored) = run_experiment_stored("lab-tools", &text);
    check_rows(&table, &["nginx"], 4);
    // Each client's version is recorded (wrk -v exits 1 and must still be read).
    for rep in stored.cells.iter().flat_map(|c| &c.repetitions) {
        let c = &rep.record.client;
        assert!(
            !c.version.is_empty() && !c.version.starts_with("unknown"),
            "{}: version {:?}",
            c.tool,
            c.version
        );
    }
    for tool in ["herd", "ab", "wrk"] {
        let row = table
            .lines()
            .find(|l| l.starts_with("nginx") && l.contains(&format!(" {tool} ")))
            .unwrap_or_else(|| panic!("{tool}:\n{table}"));
        // Every client gets a verdict: herd its own, ab and wrk the lab's from their CPU time.
        let verdict = row.split_whitespace().last().unwrap();
        assert!(["ok", "suspect!", "client-bound!"].contains(&verdict), "{tool}: {row}");
    }
}

/// `[servers.NAME] keepalive_requests` reaches each server that takes it: nginx, Apache and
/// lighttpd with 10 close each kept-alive connection after its 10th answer, so 200 requests
/// over 2 kept-alive connections open 20 (each request that opened one has a connect time),
/// where nginx's own 1000 keeps the 2 open throughout. Apache and lighttpd also run with
/// `sendfile = false` (the lab verifies the page they send). Counts, not times: a busy
/// machine changes neither.
#[test]
fn keepalive_requests_reaches_the_server() {
    let text = format!(
        r#"
name = "keepalive-requests"
[matrix]
server = ["nginx", "nginx-ka10", "apache-ka10", "lighttpd-ka10"]
workload = ["page"]
load = ["ka"]
[servers.nginx-ka10]
driver = "nginx"
keepalive_requests = 10
[servers.apache-ka10]
driver = "apache"
keepalive_requests = 10
sendfile = false
[servers.lighttpd-ka10]
driver = "lighttpd"
keepalive_requests = 10
sendfile = false
[workloads.page]
kind = "static"
size = 6397
[loads.ka]
requests = 200
concurrency = 2
keep_alive = true
{TRIM}"#
    );
    let servers = ["apache-ka10", "lighttpd-ka10", "nginx", "nginx-ka10"];
    let (table, stored) = run_experiment_stored("lab-keepalive", &text);
    check_rows(&table, &servers, 1);
    let mut seen = Vec::new();
    for cell in &stored.cells {
        let server = &cell.axes.iter().find(|(a, _)| a == "server").unwrap().1;
        let rep = &cell.repetitions[0].record;
        let connects: u64 = rep
            .measurements
            .iter()
            .flat_map(|m| &m.histograms)
            .filter(|(series, _)| *series == herd_stats::LatencySeries::Connect)
            .map(|(_, h)| h.len())
            .sum();
        let completed: u64 = rep.measurements.iter().map(|m| m.completed).sum();
        assert_eq!(completed, 200, "{server}");
        let config: String =
            rep.servers.iter().flat_map(|s| &s.configs).map(|(_, text)| text.as_str()).collect();
        let (limit, sendfile_off) = match server.as_str() {
            "nginx" => (None, None),
            "nginx-ka10" => (Some("\n    keepalive_requests 10;\n"), None),
            "apache-ka10" => (Some("\nMaxKeepAliveRequests 10\n"), Some("\nEnableSendfile Off\n")),
            _ => (
                Some("\nserver.max-keep-alive-requests = 10\n"),
                Some("\nserver.network-backend = \"writev\"\n"),
            ),
        };
        for line in limit.iter().chain(&sendfile_off) {
            assert!(config.contains(line), "{server}: no {line:?} in\n{config}");
        }
        if limit.is_some() {
            // At most 10 answers a connection: at least 20 connections for 200.
            assert!((20..=22).contains(&connects), "{server}: {connects} connects");
        } else {
            assert!(!config.contains("keepalive_requests"), "{config}");
            assert_eq!(connects, 2, "{server}: nginx's 1000 keeps both connections");
        }
        seen.push(server.clone());
    }
    seen.sort();
    assert_eq!(seen, servers);
}

/// `dir/x.toml`: servers `servers` over the page, `[servers.nginx-mine]` the nginx driver
/// with `key` (its own binary, its own config); the file and its text.
fn with_nginx_mine(
    dir: &std::path::Path,
    servers: &str,
    key: &str,
) -> (std::path::PathBuf, String) {
    let text = format!(
        "name = \"mine\"\n[matrix]\nserver = {servers}\nworkload = [\"page\"]\nload = [\"n200\"]\n\
         [servers.nginx-mine]\ndriver = \"nginx\"\n{key}\n{PAGE_N200}{TRIM}"
    );
    let file = dir.join("x.toml");
    std::fs::write(&file, &text).unwrap();
    (file, text)
}

/// "Is my build faster?": `[servers.NAME] binary` starts one's own build of a server beside
/// the distribution's, with the driver's config. Here a copy of Debian's nginx under another
/// path (relative to the experiment file), beside the nginx the driver finds: both verified
/// and loaded, each run's argv starting with its own program, each version asked of it.
#[test]
fn a_servers_own_binary_runs_beside_the_distributions() {
    let dir = tempdir("lab-binary");
    std::fs::create_dir_all(dir.join("build/sbin")).unwrap();
    let mine = dir.join("build/sbin/nginx");
    std::fs::copy("/usr/sbin/nginx", &mine).unwrap();
    let (file, text) =
        with_nginx_mine(&dir, r#"["nginx", "nginx-mine"]"#, "binary = \"build/sbin/nginx\"");
    let plan = util::herd().args(["lab", "run", "--dry-run"]).arg(&file).output().unwrap();
    let plan = String::from_utf8_lossy(&plan.stdout).into_owned();
    assert!(plan.contains(&format!("start nginx: {} -e ", mine.display())), "{plan}");
    let out = lab_run(&dir, &file).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    check_rows(&stdout, &["nginx", "nginx-mine"], 1);
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let exp = store.load_experiment(store.experiments().unwrap()[0].id).unwrap();
    for cell in &exp.cells {
        let server = &cell.repetitions[0].record.servers[0];
        let want = if server.name == "nginx-mine" {
            mine.display().to_string()
        } else {
            "/usr/sbin/nginx".to_owned()
        };
        assert_eq!(server.argv[0], want, "{}", cell.key);
        assert!(server.version.starts_with("nginx/"), "{server:?}");
    }
    // A binary that is not there fails at its line, before anything runs.
    std::fs::write(&file, text.replace("build/sbin/nginx", "build/sbin/ngnix")).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("line 8: [servers.nginx-mine] binary: "), "{stderr}");
    assert!(stderr.contains("build/sbin/ngnix is not an executable file"), "{stderr}");
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `[servers.NAME] config`: the user's own nginx config with herd's placeholders, filled in
/// for each run (the address, the document root, the server's own directory), verified and
/// loaded as the driver's would be, the filled text stored with the run. A config nginx's own
/// test refuses fails before anything runs, with nginx's words; an unknown placeholder at its
/// line when the file is read.
#[test]
fn a_users_own_config_is_filled_in_and_judged_by_the_servers_test() {
    let dir = tempdir("lab-config");
    let config = "worker_processes {{workers}};\npid {{dir}}/mine.pid;\n\
                  events { worker_connections 512; }\n\
                  http {\n  access_log off;\n  default_type application/octet-stream;\n  \
                  server {\n    listen {{listen}};\n    root {{docroot}};\n  }\n}\n";
    std::fs::write(dir.join("mine.conf"), config).unwrap();
    let (file, _) = with_nginx_mine(&dir, r#"["nginx-mine"]"#, "config = \"mine.conf\"");
    let out = lab_run(&dir, &file).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    check_rows(&stdout, &["nginx-mine"], 1);
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let exp = store.load_experiment(store.experiments().unwrap()[0].id).unwrap();
    let server = &exp.cells[0].repetitions[0].record.servers[0];
    let (_, stored) = server.configs.iter().find(|(p, _)| p.ends_with("nginx.conf")).unwrap();
    assert!(stored.contains("listen 127.0.0.1:") && stored.contains("    root /"), "{stored}");
    assert!(!stored.contains("{{"), "{stored}");
    drop(store);

    std::fs::write(dir.join("mine.conf"), config.replace("listen {{listen}}", "lisen {{listen}}"))
        .unwrap();
    let _ = std::fs::remove_file(dir.join("r.db"));
    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("server nginx-mine: its own config test refused"), "{stderr}");
    assert!(stderr.contains("unknown directive \"lisen\""), "{stderr}");
    assert!(!dir.join("r.db").exists(), "refused before the store was opened");

    std::fs::write(dir.join("mine.conf"), config.replace("{{docroot}}", "{{root}}")).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 8: [servers.nginx-mine] config: "), "{stderr}");
    assert!(stderr.contains("mine.conf: line 9: unknown placeholder {{root}}"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
