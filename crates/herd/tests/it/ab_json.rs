//! Contract test for `herd ab --json`: real output against the documented `herd.ab.v1`
//! shape (docs/ab-json.md), and its numbers against the text report of the same run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use serde_json::Value;
use util::{herd, run, tempdir, text, Nginx};

#[test]
fn json_output_has_the_documented_shape_and_agrees_with_the_report() {
    let nginx = Nginx::start();
    let dir = tempdir("json");
    let path = dir.join("run.json");
    let url = nginx.url("/f6397.html");
    let h = run(herd().args([
        "ab",
        "-k",
        "-n",
        "300",
        "-c",
        "3",
        "--json",
        path.to_str().unwrap(),
        &url,
    ]));
    assert!(h.status.success(), "{}", text(&h.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();

    assert_eq!(v["format"], "herd.ab.v1");
    assert!(v["herd_version"].is_string());
    for key in ["url", "hostname", "port", "path", "tls"] {
        assert!(v["target"].get(key).is_some(), "target.{key}");
    }
    for key in [
        "requests",
        "concurrency",
        "time_limit_s",
        "timeout_s",
        "keepalive",
        "method",
        "threads",
        "io",
    ] {
        assert!(v["settings"].get(key).is_some(), "settings.{key}");
    }
    for key in ["backend", "fallback"] {
        assert!(v["io"].get(key).is_some(), "io.{key}");
    }
    let r = &v["results"];
    for key in [
        "server_software",
        "document_length",
        "time_taken_s",
        "complete_requests",
        "failed_requests",
        "failed_connect",
        "failed_receive",
        "failed_length",
        "failed_exceptions",
        "write_errors",
        "non_2xx_responses",
        "keep_alive_requests",
        "total_transferred_bytes",
        "total_body_sent_bytes",
        "html_transferred_bytes",
        "requests_per_second",
        "transfer_rate_kib_per_s",
    ] {
        assert!(r.get(key).is_some(), "results.{key}");
    }
    for row in ["connect", "processing", "waiting", "total"] {
        let t = &v["timings_us"][row];
        for key in ["min", "mean", "sd", "max", "percentiles", "hdr_p99"] {
            assert!(t.get(key).is_some(), "timings_us.{row}.{key}");
        }
        assert!(t["min"].as_i64().unwrap() <= t["max"].as_i64().unwrap());
    }
    assert_eq!(v["statuses"]["200"], 300);
    assert_eq!(v["failures_by_kind"].as_object().unwrap().len(), 9);

    // The same numbers as the text report.
    let out = text(&h.stdout);
    let field = |label: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(r["complete_requests"].to_string(), field("Complete requests:"));
    assert_eq!(r["failed_requests"].to_string(), field("Failed requests:"));
    assert_eq!(r["keep_alive_requests"].to_string(), field("Keep-Alive requests:"));
    assert_eq!(r["total_transferred_bytes"].to_string(), field("Total transferred:"));
    assert_eq!(r["html_transferred_bytes"].to_string(), field("HTML transferred:"));
    assert_eq!(r["document_length"].to_string(), field("Document Length:"));
    assert_eq!(r["server_software"].as_str().unwrap(), field("Server Software:"));
    let _ = std::fs::remove_dir_all(dir);
}
