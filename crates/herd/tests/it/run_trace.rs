//! `herd run --trace-context`: a real server (nginx, logging `$http_traceparent`) sees one
//! trace id on every request, the run's (in `--json`), and a span id of its own on each, over
//! HTTP/1.1 (one at a time and pipelined) and h2c; the flag as asked; a given trace id kept;
//! bad input refused. HTTP/3 is checked against caddy in run_h3.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use crate::util::{herd, run_json, text, Nginx};

/// The W3C value's parts: (version, trace id, span id, flags).
fn parts(value: &str) -> (&str, &str, &str, &str) {
    let p: Vec<&str> = value.split('-').collect();
    assert_eq!(p.len(), 4, "not a traceparent: {value}");
    (p[0], p[1], p[2], p[3])
}

/// Every logged value: version 00, the run's trace id, distinct non-zero span ids, `flags`.
fn check(logged: &[String], trace_id: &str, flags: &str, n: usize) {
    assert_eq!(logged.len(), n, "{logged:?}");
    let mut spans = HashSet::new();
    for value in logged {
        let (version, trace, span, f) = parts(value);
        assert_eq!((version, trace, f), ("00", trace_id, flags), "{value}");
        assert_eq!(span.len(), 16, "{value}");
        assert!(span.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(span, "0000000000000000", "{value}");
        assert!(spans.insert(span.to_owned()), "span {span} sent twice");
    }
}

#[test]
fn every_request_carries_the_runs_trace_and_its_own_span() {
    let nginx = Nginx::start();
    let url = nginx.url("/traced/small.html");
    // HTTP/1.1, one request at a time on 4 connections.
    let j = run_json(&["-c", "4", "-n", "300", "--trace-context", &url]);
    assert_eq!(j["requests"]["completed"], 300, "{j}");
    let trace = j["trace"]["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(trace.len(), 32, "{j}");
    assert_eq!(j["trace"]["sampled"], true);
    check(&nginx.traced(), &trace, "01", 300);

    // Pipelined: each request of a batch stamped on its own.
    let j = run_json(&["-c", "2", "-n", "200", "--pipeline", "8", "--trace-context", &url]);
    let second = j["trace"]["trace_id"].as_str().unwrap().to_owned();
    assert_ne!(second, trace, "a new trace each run");
    check(&nginx.traced()[300..], &second, "01", 200);

    // h2c, 10 streams at once: the field goes as a literal outside HPACK's table.
    let h2c = format!("http://127.0.0.1:{}/traced/small.html", nginx.h2c_port);
    let j = run_json(&["--h2c", "-c", "2", "-m", "10", "-n", "300", "--trace-context", &h2c]);
    assert_eq!(j["requests"]["completed"], 300, "{j}");
    let third = j["trace"]["trace_id"].as_str().unwrap().to_owned();
    check(&nginx.traced()[500..], &third, "01", 300);

    // Unsampled, with a trace id of the user's.
    let id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let j = run_json(&["-n", "20", "--trace-context=unsampled", "--trace-id", id, &url]);
    assert_eq!(j["trace"]["trace_id"], id);
    assert_eq!(j["trace"]["sampled"], false);
    check(&nginx.traced()[800..], id, "00", 20);

    // Off by default: no field at all.
    let j = run_json(&["-n", "5", &url]);
    assert!(j.get("trace").is_none(), "{j}");
    assert_eq!(nginx.traced()[820..], ["-"; 5]);
}

#[test]
fn bad_trace_flags_are_refused() {
    for (args, says) in [
        (&["--trace-id", "4bf92f3577b34da6a3ce929d0e0e4736"][..], "--trace-context"),
        (&["--trace-context", "--trace-id", "xyz"][..], "is not a trace id: give 32 hex digits"),
        (&["--trace-context", "--trace-id", &"0".repeat(32)][..], "not all zeros"),
        (&["--trace-context=maybe"][..], "maybe"),
    ] {
        let out = herd().arg("run").args(args).arg("http://127.0.0.1:9/").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `[client] trace_context = true`: herd's client sends a traceparent in every repetition, a
/// new trace each, and the store keeps each repetition's trace id.
#[test]
fn the_lab_stores_each_repetitions_trace() {
    let dir = crate::util::tempdir("lab-trace");
    let file = dir.join("trace.toml");
    std::fs::write(
        &file,
        "name = \"trace\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"page\"]\nload = [\"n\"]\n\
         [workloads.page]\nkind = \"static\"\nsize = 100\n[loads.n]\nrequests = 40\n\
         concurrency = 2\n[repetitions]\nmin = 2\nmax = 2\n[runner]\ntime_wait_below = 1000000\n\
         [client]\nthreads = 1\ntrace_context = true\n",
    )
    .unwrap();
    let plan =
        crate::util::run(herd().env("TMPDIR", &dir).args(["lab", "run", "--dry-run"]).arg(&file));
    assert!(text(&plan.stdout).contains(" --trace-context --trace-id="), "{}", text(&plan.stdout));
    let out = crate::util::run(&mut crate::util::lab_run(&dir, &file));
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let store = herd_store::Store::open_read_only(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    let ids: Vec<String> = exp.cells[0]
        .repetitions
        .iter()
        .map(|r| r.record.client.trace_id.clone().expect("a trace id stored"))
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.iter().all(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit())));
    assert_ne!(ids[0], ids[1], "a new trace each repetition");
    drop(store);
    // The report's command lines name each repetition's trace.
    let page = dir.join("r.html");
    let out = crate::util::run(herd().arg("report").arg(dir.join("r.db")).arg("--html").arg(&page));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    for id in &ids {
        assert!(html.contains(&format!(", trace {id})")), "no trace {id} on the page");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
