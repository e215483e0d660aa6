//! `herd run --h3` against real HTTP/3 servers: Debian's ngtcp2 example server
//! (`gtlsserver`, package ngtcp2-server) and caddy. Counts and bytes equal what was served,
//! the protocol and QUIC's figures are in the JSON, the open loop runs, and a peer that
//! never answers ends in bounded time as a connect failure (the handshake's timeout is the
//! run's --timeout).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers they check, and stop them by PID

use crate::util;

use std::net::{TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_testutil::ports::free_tcp_udp_port as free_port;
use util::{herd, run, run_json, run_json_exiting, tempdir, text};

/// An HTTP/3 server on 127.0.0.1, serving `small.html` (13 bytes) and `big.bin` (200,000);
/// stopped by its PID on drop.
struct H3Server {
    port: u16,
    dir: PathBuf,
    child: Child,
}

impl H3Server {
    fn files(tag: &str) -> (PathBuf, PathBuf) {
        let dir = tempdir(tag);
        let www = dir.join("www");
        std::fs::create_dir_all(&www).unwrap();
        std::fs::write(www.join("small.html"), "hello, herd!\n").unwrap();
        std::fs::write(www.join("big.bin"), vec![b'q'; 200_000]).unwrap();
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
        (dir, www)
    }

    fn ngtcp2() -> H3Server {
        let bin = Path::new("/usr/sbin/gtlsserver");
        assert!(bin.exists(), "gtlsserver is missing: apt-get install ngtcp2-server");
        let (dir, www) = H3Server::files("h3-ngtcp2");
        let port = free_port();
        let child = Command::new(bin)
            .arg("-q")
            .arg("-d")
            .arg(&www)
            .args(["127.0.0.1", &port.to_string()])
            .arg(dir.join("key.pem"))
            .arg(dir.join("cert.pem"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // No TCP to wait on: its UDP socket, once bound, queues the first datagrams for it.
        let bound = herd_testutil::ports::wait_udp_bound(port, Duration::from_secs(20));
        let server = H3Server { port, dir, child };
        assert!(bound, "gtlsserver did not bind UDP port {port}");
        server
    }

    fn caddy() -> H3Server {
        let bin = Path::new("/usr/bin/caddy");
        assert!(bin.exists(), "caddy is missing: apt-get install caddy");
        let (dir, www) = H3Server::files("h3-caddy");
        let (port, http_port) = (free_port(), free_port());
        let caddyfile = format!(
            "{{\n\tadmin off\n\tauto_https disable_redirects\n\thttp_port {http_port}\n\
             \thttps_port {port}\n}}\n\
             https://127.0.0.1:{port}, https://localhost:{port} {{\n\
             \tbind 127.0.0.1\n\ttls {cert} {key}\n\troot * {www}\n\tfile_server\n\
             \tlog {{\n\t\toutput file {log}\n\t}}\n}}\n",
            log = dir.join("access.log").display(),
            cert = dir.join("cert.pem").display(),
            key = dir.join("key.pem").display(),
            www = www.display(),
        );
        std::fs::write(dir.join("Caddyfile"), caddyfile).unwrap();
        let child = Command::new(bin)
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(dir.join("Caddyfile"))
            .env("HOME", &dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "caddy did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        H3Server { port, dir, child }
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    fn ca(&self) -> String {
        self.dir.join("cert.pem").to_str().unwrap().to_owned()
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every check on both event-loop backends: epoll, and io_uring (which polls QUIC's UDP
/// socket for the engine; where this machine refuses io_uring, `--io uring` must say so).
fn check_server(server: &H3Server) {
    check_server_on(server, "epoll");
    let uring = matches!(
        herd_engine::io_choice::probed(),
        herd_engine::uring::probe::Uring::Available { .. }
    );
    if uring {
        check_server_on(server, "uring");
    } else {
        let url = server.url("/small.html");
        let out = run(herd().args(["run", "--h3", "--io", "uring", "-n", "1", &url]));
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("io_uring is refused here"), "{}", text(&out.stderr));
    }
}

fn check_server_on(server: &H3Server, io: &str) {
    let ca = server.ca();
    let j = run_json(&[
        "--h3",
        "--io",
        io,
        "--ca-file",
        &ca,
        "-c",
        "2",
        "-m",
        "10",
        "-n",
        "600",
        &server.url("/small.html"),
    ]);
    let backend = if io == "uring" { "io_uring" } else { "epoll" };
    assert_eq!(j["io"]["backend"], backend, "{j}");
    assert_eq!(j["requests"]["completed"], 600, "{j}");
    assert_eq!(j["requests"]["failed"], 0, "{j}");
    assert_eq!(j["statuses"]["200"], 600, "{j}");
    assert_eq!(j["bytes"]["body"], 600 * 13, "{j}");
    assert_eq!(j["protocol"], "h3", "{j}");
    assert_eq!(j["streams"], 10, "{j}");
    assert_eq!(j["latency_us"]["connect"]["count"], 2, "one QUIC handshake per connection: {j}");
    assert_eq!(j["latency_us"]["first_byte"]["count"], 600, "{j}");
    // herd.run.v1's contract holds for HTTP/3's document too (its `quic` object).
    let errors = util::json_schema::RunJsonSchema::start().errors(&j);
    assert!(errors.is_empty(), "{errors:?}");
    let q = &j["quic"];
    assert!(q["packets_sent"].as_u64().unwrap() > 0, "{q}");
    assert!(q["datagrams_received"].as_u64().unwrap() > 0, "{q}");
    assert!(q["min_rtt_us"].as_u64().unwrap() > 0, "{q}");
    let j = run_json(&[
        "--h3",
        "--io",
        io,
        "--ca-file",
        &ca,
        "-c",
        "1",
        "-m",
        "4",
        "-n",
        "20",
        &server.url("/big.bin"),
    ]);
    assert_eq!(j["io"]["backend"], backend, "{j}");
    assert_eq!(j["bytes"]["body"], 20 * 200_000, "{j}");
}

/// `--trace-context` over HTTP/3: caddy's access log (JSON, with each request's headers)
/// has the run's trace id on every request and a span id of its own on each.
#[test]
fn caddy_sees_the_runs_trace_on_every_http3_request() {
    let server = H3Server::caddy();
    let ca = server.ca();
    let url = server.url("/small.html");
    let j = run_json(&[
        "--h3",
        "--ca-file",
        &ca,
        "-c",
        "2",
        "-m",
        "5",
        "-n",
        "100",
        "--trace-context",
        &url,
    ]);
    assert_eq!(j["requests"]["completed"], 100, "{j}");
    let trace = j["trace"]["trace_id"].as_str().unwrap().to_owned();
    let log = std::fs::read_to_string(server.dir.join("access.log")).unwrap_or_default();
    let mut spans = std::collections::HashSet::new();
    let mut seen = 0;
    for line in log.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        let request = &entry["request"];
        if request["proto"] != "HTTP/3.0" {
            continue;
        }
        seen += 1;
        let value = request["headers"]["Traceparent"][0].as_str().unwrap_or_default();
        let parts: Vec<&str> = value.split('-').collect();
        assert_eq!(parts.len(), 4, "{line}");
        assert_eq!((parts[0], parts[1], parts[3]), ("00", trace.as_str(), "01"), "{line}");
        assert!(parts[2] != "0000000000000000" && spans.insert(parts[2].to_owned()), "{line}");
    }
    assert_eq!(seen, 100, "{log}");
}

#[test]
fn ngtcp2_and_caddy_serve_every_request_over_http3() {
    check_server(&H3Server::ngtcp2());
    check_server(&H3Server::caddy());
}

#[test]
fn the_open_loop_runs_over_http3() {
    let server = H3Server::ngtcp2();
    let ca = server.ca();
    let j = run_json(&[
        "--h3",
        "--ca-file",
        &ca,
        "-c",
        "2",
        "-m",
        "10",
        "--rate",
        "400",
        "-d",
        "1s",
        &server.url("/small.html"),
    ]);
    let done = j["requests"]["completed"].as_u64().unwrap();
    assert!((360..=401).contains(&done), "{done} of 400 due: {j}");
    assert_eq!(j["requests"]["failed"], 0, "{j}");
}

#[test]
fn a_silent_peer_ends_in_bounded_time_as_a_connect_failure() {
    // A UDP socket that reads and never answers.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let t = Instant::now();
    let (j, _) = run_json_exiting(
        &[
            "--h3",
            "-k",
            "-c",
            "1",
            "-n",
            "3",
            "--timeout",
            "1s",
            &format!("https://127.0.0.1:{port}/"),
        ],
        4,
    );
    assert!(t.elapsed() < Duration::from_secs(15), "took {:?}", t.elapsed());
    // The run gives up once its one connection's handshake timed out (issue 31): nothing
    // answers there, and the two requests left would each wait out the timeout again.
    assert_eq!(j["failures"]["connect"], 1, "{j}");
    drop(silent);
}

/// `--bind` holds over HTTP/3 as over TCP. Before, it was checked and then ignored: QUIC's
/// UDP sockets bound the wildcard address, and `herd run --h3 --bind 127.0.0.2` sent from
/// 127.0.0.1. A UDP socket that never answers records where the datagrams came from; then a
/// real server's answers find their way back to the bound address.
#[test]
fn http3_sends_from_the_bind_address() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("https://127.0.0.1:{port}/");
    let args = ["--h3", "-k", "--bind", "127.0.0.2", "-c", "1", "-n", "20", "--timeout", "1s"];
    let (j, _) = run_json_exiting(&[&args[..], &[url.as_str()]].concat(), 4);
    assert_eq!(j["failures"]["connect"], 1, "{j}");
    // The run has ended: on loopback every datagram it sent is already queued here.
    silent.set_nonblocking(true).unwrap();
    let mut sources = std::collections::BTreeSet::new();
    let mut buf = [0u8; 2048];
    while let Ok((_, from)) = silent.recv_from(&mut buf) {
        sources.insert(from.ip().to_string());
    }
    assert_eq!(sources, ["127.0.0.2".to_owned()].into(), "where herd's datagrams came from");

    let server = H3Server::ngtcp2();
    let ca = server.ca();
    let j = run_json(&[
        "--h3",
        "--ca-file",
        &ca,
        "--bind",
        "127.0.0.2",
        "-n",
        "20",
        &server.url("/small.html"),
    ]);
    assert_eq!(j["requests"]["completed"], 20, "{j}");
    assert_eq!(j["requests"]["failed"], 0, "{j}");
}

/// A `--bind` address of the other family than the target's is refused before the run, with
/// what to do, over HTTP/3 as over TCP (the same check, the same words).
#[test]
fn a_bind_address_of_the_other_family_is_refused_as_over_tcp() {
    let url = format!("https://127.0.0.1:{}/", herd_testutil::ports::closed_port());
    let want = "--bind ::1: 127.0.0.1 resolves to no IPv6 address; give source addresses of its \
                family";
    for h3 in [true, false] {
        let mut cmd = herd();
        cmd.arg("run");
        if h3 {
            cmd.arg("--h3");
        }
        let out = run(cmd.args(["-k", "--bind", "::1", "-n", "1", &url]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "h3 {h3}: {stderr}");
        assert!(stderr.contains(want), "h3 {h3}: {stderr}");
    }
}

/// Issue 31: against a UDP port without a QUIC listener, the summary printed `rtt min
/// 333.000ms` of a run that never heard the server: quinn's initial guess, not a
/// measurement. No ACK came back, so no round-trip time is reported, in the summary or the
/// JSON (null, and the document still valid); the run stops after its first attempts.
#[test]
fn a_closed_port_reports_no_round_trip_time() {
    let port = herd_testutil::ports::closed_port();
    let url = format!("https://127.0.0.1:{port}/");
    let t = Instant::now();
    let (j, out) = run_json_exiting(&["--h3", "-k", "-c", "2", "-t", "1", "-d", "10s", &url], 4);
    assert!(t.elapsed() < Duration::from_secs(3), "took {:?}", t.elapsed());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("  quic        rtt not measured, "), "{stdout}");
    assert!(!stdout.contains("rtt min"), "{stdout}");
    assert_eq!(j["failures"], serde_json::json!({ "connect": 2 }), "{j}");
    let q = &j["quic"];
    assert_eq!((&q["min_rtt_us"], &q["smoothed_rtt_us"]), (&json_null(), &json_null()), "{q}");
    assert_eq!(q["datagrams_received"], 0, "{q}");
    let errors = util::json_schema::RunJsonSchema::start().errors(&j);
    assert!(errors.is_empty(), "{errors:?}");
}

fn json_null() -> serde_json::Value {
    serde_json::Value::Null
}

#[test]
fn what_http3_cannot_do_is_refused_with_what_to_do() {
    let refused = |args: &[&str]| {
        let out = run(herd().arg("run").args(args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        text(&out.stderr)
    };
    assert!(refused(&["--h3", "http://127.0.0.1:1/"]).contains("https:// URL"));
    assert!(refused(&["--h3", "-k", "--bandwidth", "1mbit", "https://127.0.0.1:1/"])
        .contains("drop --bandwidth"));
    assert!(
        refused(&["--h3", "-k", "--pipeline", "4", "https://127.0.0.1:1/"]).contains("--streams")
    );
}

/// Two agents over HTTP/3: the merged result carries QUIC's figures, the agents' added up;
/// QUIC connections are not opened ahead (their handshake is in the run's connect figures).
#[test]
fn a_spread_http3_run_merges_quic_figures() {
    let server = H3Server::ngtcp2();
    let ca = server.ca();
    let dir = tempdir("h3-spread");
    let json = dir.join("run.json");
    let out = run(herd()
        .args(["cluster", "run", "--local", "2", "--", "--h3", "--ca-file", &ca])
        .args(["-c", "2", "-m", "10", "-n", "600", &server.url("/small.html"), "--json"])
        .arg(&json));
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(j["requests"]["completed"], 600, "{j}");
    assert_eq!(j["protocol"], "h3", "{j}");
    assert_eq!(j["latency_us"]["connect"]["count"], 2, "{j}");
    let agents = j["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    for field in ["packets_sent", "datagrams_sent", "datagrams_received", "packets_lost"] {
        let sum: u64 = agents.iter().map(|a| a["steps"][0]["quic"][field].as_u64().unwrap()).sum();
        assert_eq!(j["quic"][field].as_u64(), Some(sum), "{field}: {j}");
    }
    assert!(agents.iter().all(|a| a["opened_ahead"] == 0), "QUIC is not opened ahead: {j}");
    let _ = std::fs::remove_dir_all(&dir);
}
