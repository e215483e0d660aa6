//! `herd run --metrics-listen`: the page passes `promtool check metrics`, a real Prometheus
//! server (Debian's) scraping a run ends with herd's own count as its total, the final
//! figures are served until scraped, and bad input is refused before any load.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // the test starts Prometheus and promtool itself

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_testutil::ports::free_port;

use crate::util::{herd, tempdir, text, wait_for, Serve};

/// Prometheus, stopped (by PID) and its data removed when dropped.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One request, HTTP/1.0: the answer comes whole, not chunked.
fn get(port: u16, path: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(c, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    out
}

/// The page herd serves while it runs is valid for Prometheus's own checker, and it says
/// where it is on stderr.
#[test]
fn the_page_passes_promtool() {
    let serve = Serve::start(&["-t", "1"]);
    let mut run = herd()
        .args(["run", "-c", "2", "-d", "3s", "--metrics-listen", "127.0.0.1:0"])
        .args(["--metrics-linger", "1s"])
        .arg(serve.url("/bytes/100"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let at = line.split("http://").nth(1).and_then(|r| r.split('/').next()).unwrap_or_default();
    assert!(line.starts_with("herd run: metrics at http://127.0.0.1:"), "{line}");
    let port: u16 = at.rsplit(':').next().unwrap().parse().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let reply = get(port, "/metrics");
    let page = reply.split("\r\n\r\n").nth(1).unwrap().to_owned();
    assert!(page.contains("herd_requests_completed_total{run=\""), "{page}");
    // Mid-run, after a whole second: both keep-alive connections are open.
    let open = page.lines().find(|l| l.starts_with("herd_connections_open{"));
    assert!(open.is_some_and(|l| l.ends_with(" 2")), "{open:?}\n{page}");
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package; scripts/test.sh installs it)");
    check.stdin.take().unwrap().write_all(page.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{page}",
        text(&checked.stdout),
        text(&checked.stderr)
    );
    assert!(get(port, "/other").starts_with("HTTP/1.1 404"));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(run.wait().unwrap().success(), "{rest}");
}

/// A real Prometheus scrapes a run each second; once herd has exited (having kept its final
/// figures up until they were scraped), Prometheus's total is herd's own count, and its
/// failures by kind are there (all zero).
#[test]
fn prometheus_scrapes_a_run_and_its_total_is_herds_count() {
    let serve = Serve::start(&["-t", "1"]);
    let dir = tempdir("prometheus");
    let (metrics_port, prom_port) = (free_port(), free_port());
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: herd\n    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n"
        ),
    )
    .unwrap();
    let prometheus = Prometheus(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect("prometheus (Debian's package; scripts/test.sh installs it)"),
    );
    wait_for("prometheus", Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", prom_port)).is_ok()
            && get(prom_port, "/-/ready").contains(" 200 ")
    });
    // Prometheus hands its scrape loops their targets some seconds after it is ready (its
    // discovery's update interval, 5 s): the run starts once the target is there.
    wait_for("prometheus's target", Duration::from_secs(30), || {
        get(prom_port, "/api/v1/targets").contains(&format!("127.0.0.1:{metrics_port}"))
    });
    let json = dir.join("run.json");
    let t = Instant::now();
    let out = herd()
        .args(["run", "-c", "4", "-d", "4s", "--metrics-listen"])
        .arg(format!("127.0.0.1:{metrics_port}"))
        .arg("--json")
        .arg(&json)
        .arg(serve.url("/bytes/100"))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("no scrape read the final metrics"), "{stderr}");
    assert!(t.elapsed() < Duration::from_secs(12), "it lingered {:?}: {stderr}", t.elapsed());
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let completed = result["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 100, "{result}");
    let run = stderr.split("run=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();

    // The last sample of each series within a minute: once herd is gone, Prometheus's next
    // scrape fails and marks the series stale, which an instant query then leaves out.
    let query = |q: &str| -> Vec<serde_json::Value> {
        let reply = get(prom_port, &format!("/api/v1/query?query=last_over_time({q}%5B1m%5D)"));
        let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    };
    let mut seen = 0;
    wait_for("Prometheus's total to reach herd's count", Duration::from_secs(10), || {
        let r = query("herd_requests_completed_total");
        seen = r
            .first()
            .and_then(|s| s["value"][1].as_str())
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0, |v| v as u64);
        seen == completed
    });
    let series = query("herd_requests_completed_total");
    assert_eq!(series.len(), 1, "{series:?}");
    assert_eq!(series[0]["metric"]["run"], run.as_str(), "{series:?}");
    let failures = query("herd_requests_failed_total");
    assert_eq!(failures.len(), 12, "a series for every failure kind: {failures:?}");
    let finished = query("herd_run_finished");
    assert_eq!(finished[0]["value"][1], "1", "{finished:?}");
    let count = query("herd_request_duration_seconds_count");
    assert_eq!(count[0]["value"][1], completed.to_string().as_str(), "{count:?}");
    // Every query of the Grafana dashboard (deploy/) runs on this Prometheus and finds series.
    for expr in dashboard_queries() {
        let promql = expr.replace("$run", ".*").replace("$__rate_interval", "1m");
        let reply = get(prom_port, &format!("/api/v1/query?query={}", url_encode(&promql)));
        let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        assert_eq!(v["status"], "success", "{promql}: {body}");
    }
    drop(prometheus);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The PromQL of every panel of deploy/grafana-herd.json.
fn dashboard_queries() -> Vec<String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana-herd.json");
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for panel in d["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            out.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    out
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The dashboard asks only for metrics herd's page has.
#[test]
fn the_dashboard_asks_only_for_metrics_herd_serves() {
    use herd_run::metrics::{text, Labels, LiveFigures};
    let mut figures = LiveFigures::new(Labels { run: "r".into(), ..Labels::default() });
    figures.step = Some(1);
    let page = text::render(&figures, Some(0.0));
    let queries = dashboard_queries();
    assert!(queries.len() >= 6, "{queries:?}");
    for q in &queries {
        for name in q
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("herd_"))
        {
            assert!(
                page.lines().any(|l| l.starts_with(name)),
                "{name} (in `{q}`) is not on herd's page"
            );
        }
    }
}

/// A bad address is refused with what to give, before any load; so are a linger without an
/// address and labels herd sets or Prometheus refuses.
#[test]
fn bad_metrics_flags_are_refused_before_any_load() {
    let out = herd()
        .args(["run", "-d", "1s", "--metrics-listen", "localhost:9464", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("is not IP:PORT: give e.g. 127.0.0.1:9464"), "{err}");

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = herd()
        .args(["run", "-d", "1s", "--metrics-listen", &addr, "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("--metrics-listen {addr}: cannot listen there")), "{err}");
    assert!(!err.contains("requests in"), "no run: {err}");

    let out =
        herd().args(["run", "--metrics-linger", "5s", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));

    for (label, says) in [
        ("run=x", "`run` is a label herd sets itself"),
        ("9lives=x", "`9lives` is not a Prometheus label name"),
        ("novalue", "`novalue` is not KEY=VALUE"),
    ] {
        let out = herd()
            .args(["run", "--metrics-listen", "127.0.0.1:0", "--metrics-label", label])
            .arg("http://127.0.0.1:9/")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{label}");
        assert!(text(&out.stderr).contains(says), "{label}: {}", text(&out.stderr));
    }
}

/// `herd cluster run --local 2`: the endpoint serves the agents' merged figures, and the last
/// page scraped (herd waits for it) counts what the merged result counts.
#[test]
fn a_spread_run_serves_its_merged_figures() {
    let serve = Serve::start(&["-t", "1"]);
    let dir = tempdir("cluster-metrics");
    let json = dir.join("run.json");
    let port = free_port();
    let mut run = herd()
        .args(["cluster", "run", "--local", "2", "--", "--metrics-listen"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["-c", "2", "-d", "2s", "--json"])
        .arg(&json)
        .arg(serve.url("/bytes/100"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The last page scraped is the final one (herd waits for that scrape).
    let last = scrape_until_exit(&mut run, port).pop().unwrap_or_default();
    let out = run.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("herd cluster run: metrics at http://"), "{stderr}");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let completed = result["requests"]["completed"].as_u64().unwrap();
    let served = last
        .lines()
        .find(|l| l.starts_with("herd_requests_completed_total{"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<u64>().ok());
    assert_eq!(served, Some(completed), "{last}");
    assert!(last.lines().any(|l| l.starts_with("herd_run_finished{") && l.ends_with(" 1")));
    // The agents' connections summed: one each of the run's two.
    let open = last.lines().find(|l| l.starts_with("herd_connections_open{"));
    assert!(open.is_some_and(|l| l.ends_with(" 2")), "{open:?}\n{last}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--tui` where no coordinator of this machine merges the seconds (a Kubernetes run, whose
/// agent 0 coordinates in its pod; an agent): said, not ignored. `--metrics-listen` on
/// Kubernetes must listen where Prometheus reaches a pod (every address), and then every pod
/// is annotated for scraping and names its port.
#[test]
fn live_outputs_are_refused_or_placed_where_the_agents_run() {
    let out = herd()
        .args(["cluster", "run", "--agents", "2", "--image", "x", "--", "--tui"])
        .arg("http://127.0.0.1:9/")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("on Kubernetes agent 0 coordinates"), "{err}");
    let out = herd().args(["agent", "--tui", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("an agent has no terminal"), "{}", text(&out.stderr));

    let manifest = |listen: &str| {
        herd()
            .args(["cluster", "manifest", "--agents", "2", "--image", "x", "--"])
            .args(["--metrics-listen", listen, "http://127.0.0.1:9/"])
            .output()
            .unwrap()
    };
    let out = manifest("127.0.0.1:9464");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("listen on every address, e.g. --metrics-listen 0.0.0.0:9464"), "{err}");
    let out = manifest("0.0.0.0:7070");
    assert!(text(&out.stderr).contains("port 7070 is the coordinator's"), "{}", text(&out.stderr));
    let out = manifest("0.0.0.0:9464");
    let yaml = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for want in [
        "prometheus.io/scrape: 'true'",
        "prometheus.io/port: '9464'",
        "- --metrics-listen=0.0.0.0:9464",
        "name: metrics",
        "name: HERD_RUN",
    ] {
        assert!(yaml.contains(want), "no {want} in\n{yaml}");
    }
}

/// Agents as pods run them (`herd agent`, its index and run from the environment), each
/// serving its own part of the run: labelled with its index and the run's name, and the sum
/// of their final counts is the merged result's.
#[test]
fn each_agent_serves_its_part_and_their_sum_is_the_merged_count() {
    let serve = Serve::start(&["-t", "1"]);
    let url = serve.url("/bytes/100");
    let coordinator = free_port();
    let ports = [free_port(), free_port()];
    let agent = |index: usize| {
        let mut cmd = herd();
        cmd.arg("agent");
        if index == 0 {
            cmd.arg(format!("--coordinate=127.0.0.1:{coordinator}"));
        }
        cmd.args(["-c", "2", "-t", "1", "-d", "2s", "--metrics-linger", "5s"])
            .args(["--metrics-listen", &format!("127.0.0.1:{}", ports[index]), &url])
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("HERD_AGENTS", "2")
            .env("HERD_COORDINATOR", format!("127.0.0.1:{coordinator}"))
            .env("HERD_RUN", "pods-run")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut zero = agent(0);
    let mut one = agent(1);
    // Each agent's last page: the final one, kept up until scraped.
    let scraper = std::thread::spawn(move || scrape_until_exit(&mut one, ports[1]));
    let last0 = scrape_until_exit(&mut zero, ports[0]).pop().unwrap_or_default();
    let last1 = scraper.join().unwrap().pop().unwrap_or_default();
    let out = zero.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let completed = merged["requests"]["completed"].as_u64().unwrap();
    let count = |page: &str, agent: &str| -> u64 {
        let line = page
            .lines()
            .find(|l| l.starts_with("herd_requests_completed_total{"))
            .unwrap_or_else(|| panic!("no count in {page}"));
        assert!(line.contains(&format!("agent=\"{agent}\"")), "{line}");
        assert!(line.contains("run=\"pods-run\""), "{line}");
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let (c0, c1) = (count(&last0, "0"), count(&last1, "1"));
    assert!(c0 > 0 && c1 > 0, "{c0} {c1}");
    assert_eq!(c0 + c1, completed, "each agent's part adds up to the merged count");
}

/// `herd lab run --metrics-listen`: each measured run of herd's client serves its figures
/// labelled with its cell and repetition, and the last page of each is its stored count.
#[test]
fn the_lab_serves_each_runs_figures_labelled_with_its_cell() {
    let dir = tempdir("lab-metrics");
    let file = dir.join("m.toml");
    std::fs::write(
        &file,
        "name = \"m\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"page\"]\nload = [\"d\"]\n\
         [workloads.page]\nkind = \"static\"\nsize = 100\n[loads.d]\nduration = \"2s\"\n\
         concurrency = 2\n[repetitions]\nmin = 2\nmax = 2\n[runner]\ntime_wait_below = 1000000\n\
         [client]\nthreads = 1\n",
    )
    .unwrap();
    let port = free_port();
    let mut lab = crate::util::lab_run(&dir, &file);
    let mut child = lab
        .args(["--metrics-listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pages = scrape_until_exit(&mut child, port);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let store = herd_store::Store::open_read_only(&dir.join("r.db")).unwrap();
    let exp = store.load_experiment(store.experiments().unwrap()[0].id).unwrap();
    let cell = &exp.cells[0];
    for r in &cell.repetitions {
        // Counted from 1, as the report counts them.
        let rep = r.record.repetition + 1;
        let labels = format!("cell=\"{}\",repetition=\"{rep}\"", cell.key);
        // The last page of this repetition, which herd kept up until it was scraped.
        let last = pages.iter().rev().find(|p| p.contains(&labels)).unwrap_or_else(|| {
            panic!("no page labelled {labels} in {} pages: {:?}", pages.len(), pages.last())
        });
        assert!(last.lines().any(|l| l.starts_with("herd_run_finished{") && l.ends_with(" 1")));
        let served: u64 = last
            .lines()
            .find(|l| l.starts_with("herd_requests_completed_total{"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        let stored = r.record.measurements.first().map(|m| m.completed).unwrap();
        assert_eq!(served, stored, "repetition {rep}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scraper of `port`'s /metrics every 200 ms until `child` exits (60 s at most): the pages
/// it got, in order.
fn scrape_until_exit(child: &mut std::process::Child, port: u16) -> Vec<String> {
    let mut pages = Vec::new();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(60) {
        if let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n");
            let mut page = String::new();
            if c.read_to_string(&mut page).is_ok() && page.contains(" 200 OK") {
                pages.push(page);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    pages
}
