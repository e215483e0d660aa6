//! Differential test: the bytes the real ApacheBench (/usr/bin/ab) sends, captured by a
//! listener on 127.0.0.1, must equal the request `args::parse` builds from the same flags.
//!
//! Needs ab installed (Debian/Ubuntu: `apt-get install apache2-utils`); without it every
//! test here fails, on purpose: this is the proof that herd's requests are ab's.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use herd_ab::args::{self, Parsed};

const AB: &str = "/usr/bin/ab";

fn ab_path() -> &'static Path {
    let path = Path::new(AB);
    assert!(
        path.exists(),
        "{AB} is missing: the request-bytes differential test needs the real ApacheBench; \
         install apache2-utils (apt-get install apache2-utils)"
    );
    path
}

/// Reads one request (head, then Content-length bytes of body) and answers it.
fn serve_one(mut stream: TcpStream) -> Vec<u8> {
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut data = Vec::new();
    let mut buf = [0u8; 65536];
    let head_end = loop {
        if let Some(p) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = stream.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "ab closed before the end of the head: {:?}",
            String::from_utf8_lossy(&data)
        );
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let body_len = head
        .split("\r\n")
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
    while data.len() < head_end + body_len {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "ab closed before the end of the body");
        data.extend_from_slice(&buf[..n]);
    }
    stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
    data
}

/// Starts a one-shot capturing listener; returns its port and where the bytes will arrive.
fn listen(addr: &str) -> std::io::Result<(u16, mpsc::Receiver<Vec<u8>>)> {
    let listener = TcpListener::bind(addr)?;
    let port = listener.local_addr()?.port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            let _ = tx.send(serve_one(stream));
        }
    });
    Ok((port, rx))
}

/// Runs the real ab with `-n 1` plus `flags` against `url` and returns what it sent.
fn run_ab(flags: &[String], url: &str, rx: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
    let mut child = Command::new(ab_path())
        .arg("-n")
        .arg("1")
        .args(flags)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ab {flags:?} {url} did not finish in 30 s");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    let mut err = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "ab {flags:?} {url} failed ({status}):\n{out}\n{err}");
    rx.recv_timeout(Duration::from_secs(10)).expect("the listener captured nothing")
}

/// What herd would send for the same command line.
fn herd_request(flags: &[String], url: &str) -> Vec<u8> {
    let mut argv: Vec<OsString> = vec!["-n".into(), "1".into()];
    argv.extend(flags.iter().map(OsString::from));
    argv.push(url.into());
    match args::parse(&argv) {
        Ok(Parsed::Run(cfg)) => cfg.request,
        other => panic!("herd could not parse {argv:?}: {other:?}"),
    }
}

fn assert_same(flags: &[String], url: &str, ab: &[u8]) {
    let herd = herd_request(flags, url);
    assert!(
        herd == ab,
        "request bytes differ for {flags:?} {url}\n  ab:   {:?}\n  herd: {:?}",
        String::from_utf8_lossy(ab),
        String::from_utf8_lossy(&herd)
    );
}

/// Direct case: ab talks to the capture listener on 127.0.0.1.
fn direct(flags: &[&str], path: &str) {
    ab_path();
    let (port, rx) = listen("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{port}{path}");
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let ab = run_ab(&flags, &url, &rx);
    assert_same(&flags, &url, &ab);
}

/// Proxy case: `-X` points at the capture listener, so nothing goes to the URL's host.
fn proxied(flags: &[&str], url: &str) {
    ab_path();
    let (port, rx) = listen("127.0.0.1:0").unwrap();
    let mut all: Vec<String> = vec!["-X".into(), format!("127.0.0.1:{port}")];
    all.extend(flags.iter().map(|s| s.to_string()));
    let ab = run_ab(&all, url, &rx);
    assert_same(&all, url, &ab);
    // Through a proxy the request target is the URL as given.
    assert!(ab.starts_with(format!("GET {url} HTTP/1.0\r\n").as_bytes()));
}

fn body_file(name: &str, data: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herd-request-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

#[test]
fn plain_get() {
    direct(&[], "/");
}

#[test]
fn path_and_query() {
    direct(&[], "/a/b.html?x=1&y=%20z");
}

#[test]
fn keepalive() {
    direct(&["-k"], "/");
}

#[test]
fn head() {
    direct(&["-i"], "/");
}

#[test]
fn post_with_content_type() {
    let f = body_file("post", b"a=1&b=2\n");
    direct(&["-p", f.to_str().unwrap(), "-T", "application/x-www-form-urlencoded"], "/form");
}

#[test]
fn post_default_content_type() {
    let f = body_file("post-plain", b"plain body");
    direct(&["-p", f.to_str().unwrap()], "/");
}

#[test]
fn post_binary_body() {
    let f = body_file("post-bin", &[0, 1, 2, 255, b'\r', b'\n', 0]);
    direct(&["-p", f.to_str().unwrap(), "-T", "application/octet-stream"], "/");
}

#[test]
fn put() {
    let f = body_file("put", b"{\"k\": 1}");
    direct(&["-u", f.to_str().unwrap(), "-T", "application/json"], "/item/1");
}

#[test]
fn custom_method() {
    direct(&["-m", "PATCH"], "/");
}

#[test]
fn custom_method_after_post_keeps_body() {
    let f = body_file("patch", b"patch body");
    direct(&["-p", f.to_str().unwrap(), "-m", "PATCH"], "/");
}

#[test]
fn cookie() {
    direct(&["-C", "session=abc"], "/");
}

#[test]
fn second_cookie_replaces_first() {
    direct(&["-C", "a=1", "-C", "b=2"], "/");
}

#[test]
fn custom_headers() {
    direct(&["-H", "Accept-Encoding: gzip", "-H", "X-Trace: 1"], "/");
}

#[test]
fn host_override() {
    direct(&["-H", "Host: example.test"], "/");
}

#[test]
fn host_override_lowercase_twice() {
    direct(&["-H", "host: one.test ", "-H", "HOST: two.test"], "/");
}

#[test]
fn user_agent_override() {
    direct(&["-H", "User-Agent: herd-test"], "/");
}

#[test]
fn accept_override() {
    direct(&["-H", "Accept: text/html"], "/");
}

#[test]
fn basic_auth() {
    direct(&["-A", "user:secret"], "/");
}

#[test]
fn basic_auth_leading_whitespace() {
    direct(&["-A", "  user:secret"], "/");
}

#[test]
fn proxy_auth() {
    direct(&["-P", "proxyuser:pw"], "/");
}

#[test]
fn auth_lines_in_flag_order() {
    direct(&["-P", "p:1", "-A", "a:2", "-A", "b:3"], "/");
}

#[test]
fn everything_at_once() {
    let f = body_file("all", b"all the things");
    direct(
        &[
            "-k",
            "-C",
            "c=1",
            "-A",
            "a:b",
            "-P",
            "c:d",
            "-H",
            "X-A: 1",
            "-H",
            "Accept: */*;q=0.1",
            "-p",
            f.to_str().unwrap(),
            "-T",
            "text/x-herd",
        ],
        "/all?x",
    );
}

#[test]
fn bundled_and_attached_options() {
    direct(&["-kCz=1", "-HX-B: 2"], "/");
}

#[test]
fn proxy_default_port() {
    proxied(&[], "http://example.test/x?y=1");
}

#[test]
fn proxy_explicit_port() {
    proxied(&[], "http://example.test:8080/");
}

#[test]
fn proxy_explicit_default_port() {
    proxied(&[], "http://example.test:80/");
}

#[test]
fn proxy_url_without_scheme() {
    proxied(&[], "example.test/x");
}

#[test]
fn proxy_ipv6_url() {
    proxied(&[], "http://[::1]:8080/v6");
}

#[test]
fn proxy_with_auth_and_keepalive() {
    proxied(&["-k", "-P", "u:p"], "http://example.test/");
}

#[test]
fn ipv6_direct() {
    ab_path();
    match listen("[::1]:0") {
        Ok((port, rx)) => {
            let url = format!("http://[::1]:{port}/v6");
            let ab = run_ab(&[], &url, &rx);
            assert_same(&[], &url, &ab);
        }
        Err(e) => {
            // No IPv6 loopback here: check the same URL's bytes through a local proxy.
            herd_testutil::not_run::not_run(
                "request_bytes: herd ab to an [::1] server",
                &format!("no IPv6 loopback here ({e}); checked: the URL's bytes through -X"),
            );
            proxied(&[], "http://[::1]:8080/v6");
        }
    }
}
