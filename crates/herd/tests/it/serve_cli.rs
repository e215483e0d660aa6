//! `herd serve` as a user runs it: the address line first on stdout, Ctrl-C ending it cleanly
//! with a summary, start-up errors that say which flag to change, and `/herd/stats` agreeing
//! exactly with what herd ab and the real ab counted against it.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use util::{herd, real_ab, run, run_json, tempdir, text, Serve};

/// What only these tests do with a running server.
trait Interrupt {
    fn interrupt(self) -> (Option<i32>, String);
}

impl Interrupt for Serve {
    /// Sends SIGINT and returns (exit code, stderr).
    fn interrupt(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                return (status.code(), err);
            }
            assert!(Instant::now() < deadline, "herd serve did not stop on SIGINT");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn sigint_stops_it_with_a_summary() {
    let serve = Serve::start(&["--threads", "2"]);
    let out = run(herd().args(["ab", "-q", "-n", "10", &serve.url("/bytes/5")]));
    assert!(out.status.success());
    let (code, stderr) = serve.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("herd serve: stopped after 10 requests (0 bad) on 10 connections"),
        "{stderr}"
    );
}

#[test]
fn stats_agree_with_herd_ab() {
    let serve = Serve::start(&["--threads", "2"]);
    let json = tempdir("serve-cli").join("ab.json");
    let out = run(herd()
        .args(["ab", "-q", "-k", "-n", "2000", "-c", "8", "--json"])
        .arg(&json)
        .arg(serve.url("/9x9")));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ab: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let s = serve.stats();
    assert_eq!(ab["results"]["complete_requests"], 2000);
    assert_eq!(ab["results"]["failed_requests"], 0);
    assert_eq!(s["routes"]["/9x9"], 2000, "{s}");
    assert_eq!(s["status"]["200"], 2000, "{s}");
    assert_eq!(s["requests"], 2000, "{s}");
    assert_eq!(s["bytes_written"], ab["results"]["total_transferred_bytes"], "{s}");
    // ab's 8 connections and the one asking for the stats.
    assert_eq!(s["connections"], 9, "{s}");
}

#[test]
fn stats_agree_with_the_real_ab() {
    let serve = Serve::start(&["--threads", "2"]);
    // HTTP/1.0 keep-alive, a 404 mix, and the ab report's own byte count.
    let out = run(real_ab().args(["-k", "-n", "500", "-c", "5"]).arg(serve.url("/status/404")));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let field = |name: &str| -> u64 {
        let line =
            report.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{report}"));
        line[name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let s = serve.stats();
    assert_eq!(field("Complete requests:"), 500);
    assert_eq!(field("Non-2xx responses:"), 500);
    assert_eq!(s["status"]["404"], 500, "{s}");
    assert_eq!(s["routes"]["/status"], 500, "{s}");
    assert_eq!(s["bytes_written"], field("Total transferred:"), "{s}");
    assert_eq!(s["connections"], 5 + 1, "{s}");
}

#[test]
fn start_up_errors_name_the_flag_to_change() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run(herd().args(["serve", "--listen", &addr]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("is already in use: choose another --listen port"), "{err}");
    assert!(out.stdout.is_empty(), "no address printed when nothing listens");

    let missing = tempdir("serve-cli").join("nope");
    let out = run(herd().args(["serve", "--listen", "127.0.0.1:0", "--root"]).arg(&missing));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no such directory"), "{}", text(&out.stderr));

    let file = tempdir("serve-cli").join("file");
    std::fs::write(&file, b"x").unwrap();
    let out = run(herd().args(["serve", "--listen", "127.0.0.1:0", "--root"]).arg(&file));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not a directory"), "{}", text(&out.stderr));

    let out = run(herd().args(["serve", "--listen", "nonsense"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--listen"), "{}", text(&out.stderr));
}

#[test]
fn the_backend_is_said_and_a_backend_that_cannot_serve_is_refused() {
    // Which backend serves is said on stderr, once, with what `--io` asked.
    let serve = Serve::start(&["--threads", "1", "--io", "epoll"]);
    let (code, stderr) = serve.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr.matches("herd serve: I/O ").count(), 1, "{stderr}");
    assert!(stderr.starts_with("herd serve: I/O epoll\n"), "{stderr}");

    let out = run(herd().args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--io",
        "uring",
        "--tls-self-signed",
    ]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("herd serve: --io uring: "), "said once, flag first: {err}");
    assert!(err.contains("plain TCP only"), "{err}");
    assert!(err.contains("use --io epoll or --io auto"), "{err}");
    assert!(out.stdout.is_empty(), "no address printed when nothing listens");

    let out = run(herd().args(["serve", "--listen", "127.0.0.1:0", "--io", "kqueue"]));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--io") && err.contains("auto, epoll, uring"), "{err}");
}

#[test]
fn access_log_lines_follow_the_address_line() {
    let mut child = herd()
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", "1", "--access-log"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on http://").unwrap().to_owned();
    for request in [&b"GET /9x9 HTTP/1.0\r\n\r\n"[..], b"GET /a\"\x1b HTTP/1.0\r\n\r\n"] {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(request).unwrap();
        let _ = s.read_to_end(&mut Vec::new());
    }
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut l = String::new();
        stdout.read_line(&mut l).unwrap();
        lines.push(l);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(lines[0].starts_with("127.0.0.1 - - ["), "{lines:?}");
    assert!(lines[0].ends_with("] \"GET /9x9 HTTP/1.0\" 200 1692\n"), "{lines:?}");
    // A client cannot forge log syntax: quotes and control bytes are escaped.
    assert!(lines[1].contains("] \"GET /a\\\"\\x1b HTTP/1.0\" 400 "), "{lines:?}");
}

#[test]
fn the_include_texts_live_only_while_the_server_runs() {
    // A private TMPDIR, so that no other test's server can be mistaken for this one's.
    let tmp = tempdir("serve-cli-tmpdir");
    let texts = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect()
    };
    assert!(texts().is_empty());
    let mut child = herd()
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", "1"])
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let during = texts();
    assert_eq!(during.len(), 1, "{during:?}");
    let name = during[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("herd-serve-include-"), "{name}");
    assert!(during[0].join("4.txt").is_file());
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    assert!(child.wait().unwrap().success());
    assert!(texts().is_empty(), "left behind: {:?}", texts());
}

/// `--tls-self-signed` on a fresh machine: the CA it writes lets herd run verify the server
/// fully, and the counts agree.
#[test]
fn a_self_signed_server_is_verified_with_the_ca_it_writes() {
    let ca = tempdir("serve-cli-tls").join("ca.pem");
    let serve = Serve::start(&[
        "--threads",
        "1",
        "--tls-self-signed",
        "--tls-write-ca",
        ca.to_str().unwrap(),
    ]);
    let url = format!("https://{}/bytes/100", serve.addr);
    let j = run_json(&["-c", "2", "-n", "200", "--ca-file", ca.to_str().unwrap(), &url]);
    assert_eq!(j["requests"]["completed"], 200, "{j}");
    assert_eq!(j["statuses"]["200"], 200, "{j}");
    // ALPN offers h2 first: curl, verifying with the same CA, gets HTTP/2.
    let out = run(Command::new("curl").args([
        "--silent",
        "--http2",
        "--max-time",
        "10",
        "--cacert",
        ca.to_str().unwrap(),
        "-w",
        " %{http_version}",
        &url,
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with(" 2"), "{}", text(&out.stdout));
    // A client that does not trust the CA is refused.
    let other = tempdir("serve-cli-tls-other").join("ca.pem");
    let _other_server =
        Serve::start(&["--tls-self-signed", "--tls-write-ca", other.to_str().unwrap()]);
    let (j, _) = util::run_json_exiting(
        &["-c", "1", "-n", "2", "--ca-file", other.to_str().unwrap(), &url],
        4,
    );
    assert_eq!(j["requests"]["completed"], 0, "{j}");
}

#[test]
fn tls_flags_are_checked() {
    for (args, expect, code) in [
        (vec!["--tls-key", "k.pem"], "--tls-cert", 2),
        (vec!["--tls-write-ca", "ca.pem"], "--tls-self-signed", 2),
        (vec!["--alpn", "http/1.1"], "--tls", 2),
        (vec!["--tls-self-signed", "--alpn", "spdy/3"], "unknown application protocol `spdy/3`", 2),
        (vec!["--tls-self-signed", "--tls-cert", "c.pem"], "--tls-cert", 2),
        (vec!["--tls-cert", "/nonexistent/c.pem"], "cannot read `/nonexistent/c.pem`", 1),
    ] {
        let out = run(herd().args(["serve", "--listen", "127.0.0.1:0"]).args(&args));
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        herd_testutil::causes::assert_no_repeated_cause(&err);
    }
    let key_only = tempdir("serve-cli-tls-flags").join("key.pem");
    std::fs::write(&key_only, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        .unwrap();
    let out = run(herd().args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"]).arg(&key_only));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("holds no PEM certificate") && err.contains("--tls-cert FILE takes"),
        "{err}"
    );
}

/// HTTP/2 requests are logged and counted as HTTP/1's are: an `HTTP/2.0` request line, and
/// `h2_connections` in /herd/stats.
#[test]
fn h2c_requests_are_logged_and_counted() {
    let mut serve = Serve::start(&["--threads", "1", "--access-log"]);
    let out = run(Command::new("curl").args([
        "--silent",
        "--http2-prior-knowledge",
        "--max-time",
        "10",
        &serve.url("/bytes/5"),
    ]));
    assert_eq!(out.stdout, b"01234", "{}", text(&out.stderr));
    let mut line = String::new();
    serve.stdout.as_mut().unwrap().read_line(&mut line).unwrap();
    assert!(line.starts_with("127.0.0.1 - - ["), "{line}");
    assert!(line.ends_with("] \"GET /bytes/5 HTTP/2.0\" 200 5\n"), "{line}");
    let s = serve.stats();
    assert_eq!(s["h2_connections"], 1, "{s}");
    assert_eq!(s["tls_connections"], 0, "{s}");
    assert_eq!(s["connections"], 2, "{s}");
}
