//! herd serve answers as nginx does, checked against a real nginx on the same root: the
//! directory redirect and its Location, a file whose name holds a percent escape, and the
//! preconditions with dates in all three HTTP-date forms. Each request goes to both servers
//! with `Host: 127.0.0.1:<its port>`; statuses, Locations (the port written as `PORT`) and
//! 2xx bodies must be equal.
//!
//! Left out on purpose, where nginx 1.22 departs from RFC 9110 and herd serve follows the RFC
//! (docs/serve.md lists them): an If-Unmodified-Since that is not a date (nginx 412, ignored
//! by the RFC), an If-Unmodified-Since beside an If-Match (nginx evaluates both; the RFC
//! ignores it), and If-Modified-Since dates later than the file (nginx's default
//! `if_modified_since exact` gives 200).
//!
//! nginx runs as one process (`master_process off`) on a free 127.0.0.1 port, and is killed
//! by its PID when the test ends. A missing nginx fails the test with the package to install.
#![allow(clippy::disallowed_methods)] // the test starts the nginx it compares with, by PID

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_testutil::ports::free_port;

use crate::harness::{Client, TempDir, TestServer};
use crate::preconditions;

/// An nginx serving a root, stopped (SIGKILL, by PID) when dropped.
struct Nginx {
    child: Child,
    addr: SocketAddr,
    dir: TempDir,
}

impl Nginx {
    fn start(root: &Path) -> Nginx {
        let dir = TempDir::new();
        let port = free_port();
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nerror_log {d}/error.log;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n\
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n\
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             server {{ listen 127.0.0.1:{port}; root {}; }}\n}}\n",
            root.display()
        );
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let program = ["/usr/sbin/nginx", "nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or("nginx");
        let child = Command::new(program)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run nginx ({e}): install the package nginx-light"));
        let mut nginx = Nginx { child, addr: SocketAddr::from(([127, 0, 0, 1], port)), dir };
        nginx.wait_ready();
        nginx
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(self.addr).is_err() {
            let log = || std::fs::read_to_string(self.dir.path().join("error.log"));
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("nginx exited ({status}): {:?}", log());
            }
            assert!(Instant::now() < deadline, "nginx not listening: {:?}", log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What is compared: status, Location (its port written `PORT`) and, for 2xx, the body.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    status: u16,
    location: Option<String>,
    body: Option<Vec<u8>>,
}

fn ask(addr: SocketAddr, method: &str, target: &str, headers: &str) -> Seen {
    let mut c = Client::connect(addr);
    let port = addr.port();
    c.send(
        format!(
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}\
             Connection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    let r = c.response(method == "HEAD");
    let location = r.header("Location").map(|l| l.replace(&port.to_string(), "PORT"));
    let body = (200..300).contains(&r.status).then_some(r.body);
    Seen { status: r.status, location, body }
}

#[test]
fn herd_serve_answers_as_nginx_does() {
    let dir = preconditions::site();
    dir.write("docs/index.html", b"docs index");
    dir.write("sub/page.html", b"page");
    dir.write("sp ace/index.html", b"space");
    dir.write("a%20b.txt", b"percent");
    let nginx = Nginx::start(dir.path());
    let herd = TestServer::start(Some(dir.path()));

    let etag = "\"5e0d5da5-c\"";
    let lm = "Thu, 02 Jan 2020 03:04:05 GMT";
    let old = ["Thu, 02 Jan 2020 03:04:04 GMT", "Thursday, 02-Jan-20 03:04:04 GMT"];
    let old_asctime = "Thu Jan  2 03:04:04 2020";
    let cases: Vec<(&str, &str, String)> = vec![
        // Directories without their slash, with and without a query and an index.
        ("GET", "/docs", String::new()),
        ("HEAD", "/docs", String::new()),
        ("GET", "/docs?x=1&y", String::new()),
        ("GET", "/sub", String::new()),
        ("GET", "/sp%20ace", String::new()),
        ("GET", "/docs/", String::new()),
        // Decoded once.
        ("GET", "/a%2520b.txt", String::new()),
        // If-Match, strongly.
        ("GET", "/hello.txt", format!("If-Match: {etag}\r\n")),
        ("GET", "/hello.txt", format!("If-Match: \"x\", {etag}\r\n")),
        ("GET", "/hello.txt", "If-Match: *\r\n".into()),
        ("GET", "/hello.txt", "If-Match: \"nope\"\r\n".into()),
        ("GET", "/hello.txt", format!("If-Match: W/{etag}\r\n")),
        ("HEAD", "/hello.txt", "If-Match: \"nope\"\r\n".into()),
        // If-Unmodified-Since in each form.
        ("GET", "/hello.txt", format!("If-Unmodified-Since: {lm}\r\n")),
        ("GET", "/hello.txt", format!("If-Unmodified-Since: {}\r\n", old[0])),
        ("GET", "/hello.txt", format!("If-Unmodified-Since: {}\r\n", old[1])),
        ("GET", "/hello.txt", format!("If-Unmodified-Since: {old_asctime}\r\n")),
        // A stale validator on a range: 412, not 206; a current one: 206.
        ("GET", "/hello.txt", "Range: bytes=0-4\r\nIf-Match: \"old\"\r\n".into()),
        ("GET", "/hello.txt", format!("Range: bytes=0-4\r\nIf-Unmodified-Since: {}\r\n", old[1])),
        ("GET", "/hello.txt", format!("Range: bytes=0-4\r\nIf-Match: {etag}\r\n")),
        // The order: If-Match before If-None-Match, If-Unmodified-Since before it too.
        ("GET", "/hello.txt", "If-Match: \"nope\"\r\nIf-None-Match: \"nope\"\r\n".into()),
        (
            "GET",
            "/hello.txt",
            format!("If-None-Match: {etag}\r\nIf-Unmodified-Since: {}\r\n", old[0]),
        ),
        ("GET", "/hello.txt", format!("If-Match: {etag}\r\nIf-None-Match: {etag}\r\n")),
        // If-Modified-Since and If-Range in each form.
        ("GET", "/hello.txt", format!("If-Modified-Since: {lm}\r\n")),
        ("GET", "/hello.txt", "If-Modified-Since: Thursday, 02-Jan-20 03:04:05 GMT\r\n".into()),
        ("GET", "/hello.txt", "If-Modified-Since: Thu Jan  2 03:04:05 2020\r\n".into()),
        (
            "GET",
            "/hello.txt",
            "Range: bytes=0-4\r\nIf-Range: Thursday, 02-Jan-20 03:04:05 GMT\r\n".into(),
        ),
        ("GET", "/hello.txt", "Range: bytes=0-4\r\nIf-Range: Thu Jan  2 03:04:05 2020\r\n".into()),
        ("GET", "/hello.txt", format!("Range: bytes=0-4\r\nIf-Range: {old_asctime}\r\n")),
    ];
    for (method, target, headers) in &cases {
        let theirs = ask(nginx.addr, method, target, headers);
        let ours = ask(herd.addr(), method, target, headers);
        assert_eq!(ours, theirs, "{method} {target} with {headers:?}: herd serve, then nginx");
    }
}
