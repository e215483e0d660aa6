//! `herd run` over HTTP/2 against a real nginx: h2c with prior knowledge and h2 over TLS,
//! streams per connection, the open loop, request bodies, nginx's GOAWAY after a
//! connection's request limit (the requests go on, uncounted as failures), the fallback
//! to HTTP/1.1 by ALPN only when asked, and the clear refusal otherwise. Counts are
//! checked against nginx's own (status, body bytes); connections against the GOAWAY
//! limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use util::{herd, run, run_json, text, Nginx};

fn h2c_url(port: u16, path: &str) -> String {
    format!("http://127.0.0.1:{port}{path}")
}

#[test]
fn h2c_with_streams_gets_every_response_and_says_what_it_spoke() {
    let nginx = Nginx::start();
    let url = h2c_url(nginx.h2c_port, "/f6397.html");
    let j = run_json(&["--h2c", "-c", "2", "-m", "10", "-n", "2000", &url]);
    assert_eq!(j["requests"]["completed"], 2000, "{j}");
    assert_eq!(j["requests"]["failed"], 0, "{j}");
    assert_eq!(j["statuses"]["200"], 2000, "{j}");
    assert_eq!(j["bytes"]["body"], 2000 * 6397, "{j}");
    assert_eq!(j["protocol"], "h2c", "{j}");
    assert_eq!(j["streams"], 10, "{j}");
    // One connect per connection: two connections carried everything.
    assert_eq!(j["latency_us"]["connect"]["count"], 2, "{j}");
    // Time to first byte per request, not per connection.
    assert_eq!(j["latency_us"]["first_byte"]["count"], 2000, "{j}");
    let page = util::tempdir("run-h2-html").join("run.html");
    let out =
        run(herd().args(["run", "--h2c", "-m", "4", "-n", "20", "--html"]).arg(&page).arg(&url));
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The page says what was spoken, as its axes.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("h2c"), "no protocol on the page");
    assert!(html.contains("streams"), "no streams on the page");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("protocol    HTTP/2 in the clear (h2c), 4 streams per connection"),
        "{stdout}"
    );
}

#[test]
fn nginx_s_goaway_after_its_request_limit_costs_no_failure() {
    // keepalive_requests 50: nginx sends GOAWAY after a connection's 50th request; herd
    // finishes the streams nginx will answer, sends the others again on a new connection,
    // and counts no failure.
    let nginx = Nginx::start();
    let url = h2c_url(nginx.h2c_short_port, "/small.html");
    let j = run_json(&["--h2c", "-c", "1", "-m", "10", "-n", "1000", &url]);
    assert_eq!(j["requests"]["completed"], 1000, "{j}");
    assert_eq!(j["requests"]["failed"], 0, "{j}");
    assert_eq!(j["bytes"]["body"], 1000 * 13, "{j}");
    let connects = j["latency_us"]["connect"]["count"].as_u64().unwrap();
    assert_eq!(connects, 20, "1000 requests at 50 per connection: {j}");
}

#[test]
fn h2_over_tls_and_the_open_loop() {
    let nginx = Nginx::start_tls();
    let url = format!("https://localhost:{}/f6397.html", nginx.h2_port.unwrap());
    let ca = nginx.server_cert();
    let ca = ca.to_str().unwrap();
    let j = run_json(&["--h2", "--ca-file", ca, "-c", "4", "-m", "8", "-n", "800", &url]);
    assert_eq!(j["requests"]["completed"], 800, "{j}");
    assert_eq!(j["statuses"]["200"], 800, "{j}");
    assert_eq!(j["bytes"]["body"], 800 * 6397, "{j}");
    assert_eq!(j["protocol"], "h2", "{j}");
    // An open loop: 400 requests due over one second on one connection's streams.
    let j = run_json(&[
        "--h2",
        "--ca-file",
        ca,
        "-c",
        "1",
        "-m",
        "10",
        "--rate",
        "400",
        "-d",
        "1s",
        &url,
    ]);
    let done = j["requests"]["completed"].as_u64().unwrap();
    assert!((360..=401).contains(&done), "{done} of 400 due: {j}");
    assert_eq!(j["requests"]["failed"], 0, "{j}");
    assert_eq!(j["schedule"]["kind"], "rate", "{j}");
    assert_eq!(j["latency_us"]["connect"]["count"], 1, "{j}");
}

#[test]
fn a_body_goes_out_as_data_frames() {
    let nginx = Nginx::start();
    let url = h2c_url(nginx.h2c_port, "/echo");
    // Larger than HTTP/2's initial window (65,535): nginx's WINDOW_UPDATEs let it through.
    let body = nginx.root.join("body.bin");
    std::fs::write(&body, vec![b'b'; 100_000]).unwrap();
    let body = body.to_str().unwrap();
    let j = run_json(&["--h2c", "-X", "POST", "--body-file", body, "-m", "4", "-n", "40", &url]);
    assert_eq!(j["requests"]["completed"], 40, "{j}");
    assert_eq!(j["statuses"]["200"], 40, "{j}");
    assert_eq!(j["bytes"]["body"], 40 * 7, "{j}");
}

#[test]
fn alpn_falls_back_to_http1_only_when_asked() {
    let nginx = Nginx::start_tls();
    // The plain https listener has no http2: ALPN picks http/1.1.
    let url = nginx.https_url("localhost", "/small.html");
    let ca = nginx.server_cert();
    let ca = ca.to_str().unwrap();
    let j = run_json(&["--alpn", "h2,http/1.1", "--ca-file", ca, "-n", "10", &url]);
    assert_eq!(j["requests"]["completed"], 10, "{j}");
    assert_eq!(j["protocol"], "h1-tls", "{j}");
    assert_eq!(j["streams"], serde_json::Value::Null, "{j}");
    let out = run(herd().args(["run", "--h2", "--ca-file", ca, "-n", "10", &url]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "localhost does not speak HTTP/2 over TLS (it chose no ALPN protocol); to fall back to \
             HTTP/1.1 give --alpn h2,http/1.1, or drop --h2"
        ),
        "{err}"
    );
    // With streams, --alpn that lands on HTTP/1.1 says why it cannot go on.
    let out = run(herd()
        .args(["run", "--alpn", "h2,http/1.1", "-m", "4", "--ca-file", ca])
        .args(["-n", "10", &url]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "localhost chose ALPN http/1.1: --streams 4 needs HTTP/2; drop --streams or http/1.1 \
             from --alpn"
        ),
        "{err}"
    );
    herd_testutil::causes::assert_no_repeated_cause(&err);
    // Where h2 is there, --alpn takes it.
    let url = format!("https://localhost:{}/small.html", nginx.h2_port.unwrap());
    let j = run_json(&["--alpn", "h2,http/1.1", "--ca-file", ca, "-m", "2", "-n", "10", &url]);
    assert_eq!(j["protocol"], "h2", "{j}");
    assert_eq!(j["requests"]["completed"], 10, "{j}");
}

#[test]
fn herd_serve_answers_herd_run_over_every_protocol_it_has() {
    // On a fresh machine with nothing installed: herd serve with its own certificate, and
    // herd run over h2c on the plain listener, h2 and HTTP/1.1 over TLS.
    let dir = util::tempdir("run-h2-serve");
    let ca = dir.join("ca.pem");
    let tls = util::Serve::start(&["--tls-self-signed", "--tls-write-ca", ca.to_str().unwrap()]);
    let plain = util::Serve::start(&[]);
    let ca = ca.to_str().unwrap();
    let https = format!("https://localhost:{}/bytes/1000", tls.addr.rsplit(':').next().unwrap());
    for (args, protocol) in
        [(vec!["--h2", "--ca-file", ca, "-m", "8"], "h2"), (vec!["--ca-file", ca], "h1-tls")]
    {
        let mut all = args.clone();
        all.extend(["-c", "2", "-n", "400", &https]);
        let j = run_json(&all);
        assert_eq!(j["protocol"], protocol, "{j}");
        assert_eq!(j["statuses"]["200"], 400, "{j}");
        assert_eq!(j["bytes"]["body"], 400 * 1000, "{j}");
    }
    let j = run_json(&["--h2c", "-c", "2", "-m", "8", "-n", "400", &plain.url("/bytes/1000")]);
    assert_eq!(j["protocol"], "h2c", "{j}");
    assert_eq!(j["statuses"]["200"], 400, "{j}");
    assert_eq!(j["bytes"]["body"], 400 * 1000, "{j}");
}
