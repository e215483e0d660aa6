//! The lab's protocol axis for real: the CI version of the bundled `protocols` experiment.
//! nginx over h1-tls, h2 and h2c, with herd and h2load as clients, on a direct path (root:
//! fresh network namespaces per run, as the other lab path tests; CI runs as root), and
//! caddy over h3 over loopback, a few hundred requests a run. Every run must verify the page
//! over its own protocol (over TLS and QUIC trusting only the run's CA), count exactly its
//! requests, and the store must say which protocol each cell spoke and which flags spoke it;
//! the cells nginx or h2load cannot speak (h3) are refused with the reason and never stored;
//! nothing is left behind. Then the bundled experiment's plan, which needs no root: it lists
//! every refusal with its reason and no private key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use herd_stats::LatencySeries;
use herd_store::{Outcome, StoredExperiment};
use util::{herd, lab_run, namespaces_of, tempdir};

const REQUESTS: u64 = 300;

const CI: &str = r#"
name = "protocols-ci"
[matrix]
server = ["nginx"]
protocol = ["h1-tls", "h2", "h2c", "h3"]
workload = ["page"]
load = ["n300"]
client = ["herd", "h2load"]
path = ["direct"]
[workloads.page]
kind = "static"
size = 6397
[loads.n300]
requests = 300
concurrency = 3
keep_alive = true
warmup_requests = 30
[repetitions]
min = 1
max = 1
[runner]
calibrate = false
"#;

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test builds network namespaces and needs root: run it as root (CI does)"
    );
}

/// The value of `axis` in a stored cell.
fn axis<'e>(exp: &'e StoredExperiment, cell: usize, axis: &str) -> &'e str {
    exp.cells[cell].axis(axis).unwrap_or_else(|| panic!("cell {cell} has no {axis}"))
}

#[test]
fn nginx_over_every_protocol_it_serves_through_herd_and_h2load() {
    require_root();
    let dir = tempdir("lab-protocols");
    let file = dir.join("e.toml");
    std::fs::write(&file, CI).unwrap();
    let child = lab_run(&dir, &file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let (report, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{report}\n{stderr}");
    assert!(
        stderr.contains(
            "herd lab: 2 of 8 cells refused, before anything ran (`--dry-run` lists them):\n  \
             2 cells: server: nginx 1.22 has no HTTP/3 (its http_v3_module came in 1.25): use \
             caddy\n"
        ),
        "{stderr}"
    );

    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    drop(store);
    // The h3 cells were refused before anything ran: the plan kept says why, the store has
    // only the cells that ran.
    assert!(
        exp.experiment.plan.contains("refused, nothing runs: server: nginx 1.22 has no HTTP/3"),
        "{}",
        exp.experiment.plan
    );
    let cells: Vec<String> = (0..exp.cells.len())
        .map(|i| {
            let [s, p, c] = ["server", "protocol", "client"].map(|a| axis(&exp, i, a));
            format!("{s} {p} {c}")
        })
        .collect();
    let mut want = Vec::new();
    for p in ["h1-tls", "h2", "h2c"] {
        for c in ["herd", "h2load"] {
            want.push(format!("nginx {p} {c}"));
        }
    }
    assert_eq!(cells, want);
    check_runs(&exp);
    assert!(!stderr.contains("FAILED"), "{stderr}");
    // The report's matrix and rows by protocol.
    let shown = herd().args(["report"]).arg(dir.join("r.db")).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    // (The matrix has a row per protocol, against h1-tls's; "protocol=h2c" appears only
    // in the list of verdicts not ok, when there is one.)
    assert!(
        text.contains("requests/s by protocol and client")
            && text.contains("percentage of protocol=h1-tls's"),
        "{text}"
    );
    for p in ["h1-tls", "h2", "h2c"] {
        assert!(
            text.lines().any(|l| l.split_whitespace().next() == Some(p)),
            "no matrix row for {p}:\n{text}"
        );
    }
    // Nothing of the run is left: its namespaces are gone.
    let left = namespaces_of(pid);
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every run of every stored cell: ok, its requests counted exactly, the protocol's flags
/// on the client's command line, configs stored without a private key.
fn check_runs(exp: &StoredExperiment) {
    for (i, cell) in exp.cells.iter().enumerate() {
        let (protocol, client) = (axis(exp, i, "protocol"), axis(exp, i, "client"));
        assert_eq!(cell.repetitions.len(), 1, "{protocol} {client}");
        for rep in &cell.repetitions {
            let r = &rep.record;
            assert_eq!(r.outcome, Outcome::Ok, "{protocol} {client}");
            assert_eq!(r.client.tool, client);
            let m = &r.measurements[0];
            assert_eq!(
                (m.completed, m.failed, m.non_2xx, m.warmup_requests),
                (REQUESTS, 0, 0, 30),
                "{protocol} {client}"
            );
            assert_eq!(m.bytes_body, REQUESTS * 6397, "{protocol} {client}");
            // The client was told the protocol, and over TLS the CA made for the run.
            let argv = r.client.argv.join(" ");
            let flags: &[&str] = match (protocol, client) {
                ("h1-tls", "herd") => &["https://", "--ca-file="],
                ("h2", "herd") => &["https://", "--h2", "--ca-file="],
                ("h2c", "herd") => &["http://", "--h2c"],
                ("h3", "herd") => &["https://", "--h3", "--ca-file="],
                ("h1-tls", "h2load") => &["https://", "--h1"],
                ("h2", "h2load") => &["https://", "--npn-list=h2"],
                ("h2c", "h2load") => &["http://"],
                other => panic!("{other:?}"),
            };
            for flag in flags {
                assert!(argv.contains(flag), "{protocol} {client}: {flag} in {argv}");
            }
            // The configs are stored; the certificates' private keys never are.
            let configs: String =
                r.servers.iter().flat_map(|s| &s.configs).map(|(_, t)| t.as_str()).collect();
            assert!(configs.contains("listen") || configs.contains("bind"), "{configs}");
            assert!(!configs.contains("PRIVATE KEY"), "{configs}");
        }
    }
}

/// HTTP/3 where a server has it: caddy through herd's client (h2load 1.52 has none), over
/// loopback, verified over QUIC with the run's CA.
#[test]
fn caddy_over_h3_through_herd() {
    let dir = tempdir("lab-h3");
    let file = dir.join("e.toml");
    let text = CI
        .replace("server = [\"nginx\"]", "server = [\"caddy\"]")
        .replace("\"h1-tls\", \"h2\", \"h2c\", \"h3\"", "\"h3\"")
        .replace("path = [\"direct\"]\n", "")
        .replace("calibrate = false\n", "");
    std::fs::write(&file, text).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(
        stderr.contains(
            "herd lab: 1 of 2 cells refused, before anything ran (`--dry-run` lists them):\n  \
             1 cell: client: h2load cannot speak h3: Debian's h2load 1.52 is built without \
             ngtcp2 and has no --h3; use the herd client\n"
        ),
        "{stderr}"
    );
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    drop(store);
    assert_eq!(exp.cells.len(), 1);
    assert_eq!((axis(&exp, 0, "protocol"), axis(&exp, 0, "client")), ("h3", "herd"));
    check_runs(&exp);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_bundled_experiment_plans_every_protocol_and_says_what_it_refuses() {
    let out = herd().args(["lab", "run", "--dry-run", "protocols"]).output().unwrap();
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for reason in [
        "refused, nothing runs: server: nginx 1.22 has no HTTP/3",
        "refused, nothing runs: client: h2load cannot speak h3",
        "refused, nothing runs: server: herd serve has no HTTP/3",
        "refused, nothing runs: client: h2load does not open a new connection after a GOAWAY, \
         and nginx sends one",
    ] {
        assert!(plan.contains(reason), "{reason}:\n{plan}");
    }
    for server in ["nginx", "h2o", "apache-event", "lighttpd", "caddy", "herd"] {
        for protocol in ["h1-tls", "h2"] {
            let heading = format!("\n== server {server} over {protocol}\n");
            assert!(plan.contains(&heading), "{heading}");
        }
    }
    assert!(plan.contains("--npn-list=h2") && plan.contains("--h2 --streams=10"), "{plan}");
    assert!(plan.contains("\n== server caddy over h3\n") && plan.contains("--h3 --streams=10"));
    assert!(plan.contains("trusting only the run's CA"), "{plan}");
    assert!(!plan.contains("PRIVATE KEY"), "a key in the plan");
    let list = herd().args(["lab", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("\nprotocols "));
}

/// The lab's own client, and ab beside it, on a new TLS connection per request (nginx over
/// h1-tls, loopback): herd's median was 44 ms, ab's 1.6 ms, while herd's verdict said `ok`
/// (Nagle held each request behind the handshake for nginx's delayed ACK). Both medians must
/// now be far below the 40 ms delayed-ACK timeout, with a wide margin for a busy machine.
#[test]
fn a_lab_cell_opening_a_tls_connection_per_request_does_not_stall() {
    const BOUND_US: u64 = 20_000;
    let dir = tempdir("lab-tls-new-conn");
    let file = dir.join("e.toml");
    let text = r#"
name = "tls-new-connections"
[matrix]
server = ["nginx"]
protocol = ["h1-tls"]
workload = ["page"]
load = ["close"]
client = ["herd", "ab"]
[workloads.page]
kind = "static"
size = 6397
[loads.close]
requests = 100
concurrency = 1
keep_alive = false
[repetitions]
min = 1
max = 1
"#;
    std::fs::write(&file, text).unwrap();
    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    drop(store);
    assert_eq!(exp.cells.len(), 2);
    for (i, cell) in exp.cells.iter().enumerate() {
        let client = axis(&exp, i, "client");
        for rep in &cell.repetitions {
            let m = &rep.record.measurements[0];
            assert_eq!((m.completed, m.failed), (100, 0), "{client}");
            let total = m.histogram(LatencySeries::Total).unwrap_or_else(|| panic!("{client}"));
            let p50 = total.value_at_quantile(0.5);
            assert!(
                p50 < BOUND_US,
                "{client}: median {p50} µs on a new TLS connection per request"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
