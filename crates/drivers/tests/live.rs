//! Every rendered launch, started for real: each setup (herd serve aside, whose binary belongs
//! to another crate) is rendered for a free port on 127.0.0.1 with this machine's programs,
//! prepared as the lab would (directories, the user's directories, files), and its processes
//! are started in order, each waited for by its probe. Then the server must serve a static
//! file, and with PHP, `9x9.php` and `include.php` with herd serve's bytes and `echo.php` with
//! the body sent (100 KB, so that request bodies take the servers' temporary-file paths).
//! Finally each process must stop on its stop signal, in reverse order.
//!
//! Every protocol each server speaks besides `h1` is started the same way, with the
//! certificate written as the lab writes it, and then real clients prove the server speaks it
//! (curl: the HTTP version it negotiated, ALPN or prior knowledge, with the certificate checked
//! against the launch's CA for the address and for `localhost`; h2load for h2 and h2c: the
//! application protocol it reports, every request succeeded, the data bytes; ngtcp2's
//! gtlsclient for h3: ALPN h3 and the file's bytes), and that a TLS listener meant for
//! HTTP/1.1 does not offer h2 where the server can leave it out.
//!
//! Each proxy is rendered the same way in front of herd serve backends running in this test
//! (two where it balances, as the lab gives it the server's two addresses, else one), each
//! with its own docroot: the ready file and a 1 MB file must come back through it with the
//! backend's bytes, a 300 KB POST body must come back from `/echo` unchanged, every backend
//! must answer in turn (round robin), the proxy must run as the lab's user when the tests run
//! as root, and it must stop on its stop signal.
//!
//! HAProxy http over h2c, h2 and h1-tls in front of nginx speaking the same is checked with
//! curl and h2load through it.
//!
//! Only 127.0.0.1 is used, and only the processes started here are signalled, by PID. A
//! missing client fails the test with the package to install.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

mod util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use herd_drivers::{
    php_pages, render, render_proxy, Launch, Mpm, Php, Probe, Protocol, ProxyKind, ProxySpec,
    ServerKind, ServerSpec, READY_FILE,
};
use herd_serve::{ServeConfig, Server, StopHandle};
use herd_testutil::launch::{lab_user, prepare, read_log, user_ids, Running};
use util::{located, located_proxy, need_tls_modules, runs_as, setup_name, tempdir, with_protocol};

/// Starts `launch`'s processes in order, each once its probe answers.
fn start(launch: &Launch) -> Running {
    start_trusting(launch, launch.tls.as_ref().map(|t| t.ca.as_path()))
}

/// `start`, checking the certificate of a probe over TLS against `ca` (a proxy that forwards
/// TLS shows the server's).
fn start_trusting(launch: &Launch, ca: Option<&Path>) -> Running {
    Running::start(launch, |probe| answers(probe, ca))
}

/// Whether `probe` answers now; `ca` checks the certificate of a probe over TLS.
fn answers(probe: &Probe, ca: Option<&Path>) -> bool {
    match probe {
        Probe::Http { addr, path, protocol: Protocol::H1 } => {
            get(*addr, path).is_ok_and(|(status, _)| status == 200)
        }
        Probe::Http { addr, path, protocol } => {
            curl(*addr, path, *protocol, ca).is_ok_and(|got| got.status == 200)
        }
        Probe::UnixSocket(path) => UnixStream::connect(path).is_ok(),
        Probe::Tcp(addr) => TcpStream::connect_timeout(addr, Duration::from_secs(2)).is_ok(),
    }
}

use herd_testutil::ports::free_port;

/// One HTTP/1.0 exchange (the server closes after it): status and body.
fn exchange(addr: SocketAddr, request: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    s.set_write_timeout(Some(Duration::from_secs(20)))?;
    s.write_all(request)?;
    let mut response = Vec::new();
    s.read_to_end(&mut response)?;
    let end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of head"))?;
    let head = String::from_utf8_lossy(&response[..end]).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line in {head:?}")))?;
    Ok((status, response[end + 4..].to_vec()))
}

fn get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    exchange(addr, format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes())
}

fn post(addr: SocketAddr, path: &str, body: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
    let mut request = format!(
        "POST {path} HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    exchange(addr, &request)
}

/// A docroot as the lab writes it: the ready file, a static file, the PHP pages and the
/// include texts.
fn docroot(dir: &Path, static_bytes: &[u8]) -> PathBuf {
    let root = dir.join("www");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join(READY_FILE), "ready\n").unwrap();
    std::fs::write(root.join("static.bin"), static_bytes).unwrap();
    for (name, source) in php_pages::FILES {
        std::fs::write(root.join(name), source).unwrap();
    }
    herd_fileset::write_include_texts(&root).unwrap();
    root
}

/// Deterministic bytes of every value.
fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

fn check(kind: ServerKind, php: Option<Php>, workers: Option<u32>) {
    let name = match workers {
        Some(n) => format!("{}-workers-{n}", setup_name(kind, php)),
        None => setup_name(kind, php),
    };
    let dir = tempdir(&format!("live-{name}"));
    let static_bytes = pattern(100_000, 1);
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let spec = ServerSpec {
        kind,
        php,
        protocol: Protocol::H1,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, &static_bytes),
        run_dir,
        workers: workers.and_then(std::num::NonZeroU32::new),
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(kind, php),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    };
    let launch = render(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    prepare(&launch, spec.user.as_deref());
    let mut running = start(&launch);
    let addr = spec.listen;
    let logs = || {
        launch
            .processes
            .iter()
            .map(|p| format!("--- {}\n{}", p.log.display(), read_log(&p.log)))
            .collect::<String>()
    };
    let expect = |path: &str, got: std::io::Result<(u16, Vec<u8>)>, want: &[u8]| {
        let (status, body) = got.unwrap_or_else(|e| panic!("{name} {path}: {e}\n{}", logs()));
        assert_eq!(status, 200, "{name} {path}: {}\n{}", String::from_utf8_lossy(&body), logs());
        assert!(
            body == want,
            "{name} {path}: {} bytes, not the {} expected",
            body.len(),
            want.len()
        );
    };

    expect("/herd-ready.txt", get(addr, "/herd-ready.txt"), b"ready\n");
    expect("/static.bin", get(addr, "/static.bin"), &static_bytes);
    if php.is_some() {
        let golden =
            |rel: &str| std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
        expect("/9x9.php", get(addr, "/9x9.php"), &golden("../serve/tests/golden/9x9.html"));
        expect(
            "/include.php",
            get(addr, "/include.php"),
            &golden("tests/golden/herd-serve-include.html"),
        );
        let body = pattern(100_000, 2);
        expect("/echo.php", post(addr, "/echo.php", &body), &body);
    }

    // With a user, each process (or the workers it forked) serves as that user; caddy has no
    // user switch and runs as the lab does.
    if let (Some(user), false) = (&spec.user, kind == ServerKind::Caddy) {
        let (uid, _) = user_ids(user);
        for (pname, child, _) in &running.children {
            let uids = tree_uids(child.id());
            assert!(uids.contains(&uid), "{name}: {pname} and its children run as {uids:?}");
        }
    }

    let stuck = running.stop();
    assert!(stuck.is_empty(), "{name}: {stuck:?} did not stop on SIGTERM within 10 s\n{}", logs());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The effective uid of process `pid`, if it still runs.
fn euid(pid: &str) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// The effective uids of process `pid` and its children.
fn tree_uids(pid: u32) -> Vec<u32> {
    let parent = |pid: &str| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
    };
    let mut uids: Vec<u32> = euid(&pid.to_string()).into_iter().collect();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.bytes().all(|b| b.is_ascii_digit()) && parent(&name) == Some(pid) {
            uids.extend(euid(&name));
        }
    }
    uids
}

#[test]
fn nginx() {
    check(ServerKind::Nginx, None, None);
}

#[test]
fn nginx_fpm() {
    check(ServerKind::Nginx, Some(Php::Fpm), None);
}

#[test]
fn apache_event() {
    check(ServerKind::Apache(Mpm::Event), None, None);
}

#[test]
fn apache_event_fpm() {
    check(ServerKind::Apache(Mpm::Event), Some(Php::Fpm), None);
}

#[test]
fn apache_event_cgi() {
    check(ServerKind::Apache(Mpm::Event), Some(Php::Cgi), None);
}

#[test]
fn apache_worker_cgi() {
    check(ServerKind::Apache(Mpm::Worker), Some(Php::Cgi), None);
}

#[test]
fn apache_worker_fpm() {
    check(ServerKind::Apache(Mpm::Worker), Some(Php::Fpm), None);
}

#[test]
fn apache_prefork() {
    check(ServerKind::Apache(Mpm::Prefork), None, None);
}

#[test]
fn apache_prefork_cgi() {
    check(ServerKind::Apache(Mpm::Prefork), Some(Php::Cgi), None);
}

#[test]
fn apache_prefork_fpm() {
    check(ServerKind::Apache(Mpm::Prefork), Some(Php::Fpm), None);
}

#[test]
fn lighttpd() {
    check(ServerKind::Lighttpd, None, None);
}

#[test]
fn lighttpd_cgi() {
    check(ServerKind::Lighttpd, Some(Php::Cgi), None);
}

#[test]
fn h2o() {
    check(ServerKind::H2o, None, None);
}

#[test]
fn mini_httpd() {
    check(ServerKind::MiniHttpd, None, None);
}

#[test]
fn caddy() {
    check(ServerKind::Caddy, None, None);
}

/// The real thttpd (sthttpd 2.27, built by scripts/build-thttpd.sh, which scripts/test.sh
/// runs; missing, this fails saying so), as `check` starts every server.
#[test]
fn thttpd() {
    check(ServerKind::Thttpd, None, None);
}

/// thttpd with its access log, as herd's client-against-server counts read it: every file
/// fetched comes back whole, and once thttpd has gone idle and stopped (by PID, on SIGTERM,
/// which flushes its buffered log), the log holds one 200 line per fetch with the file's
/// bytes, the 404's, the readiness probes', and nothing else.
#[test]
fn thttpd_access_log_counts_every_response() {
    let kind = ServerKind::Thttpd;
    let dir = tempdir("live-thttpd-log");
    let static_bytes = pattern(300_000, 7);
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let spec = ServerSpec {
        kind,
        php: None,
        protocol: Protocol::H1,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, &static_bytes),
        run_dir,
        workers: None,
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(kind, None),
        access_log: true,
        keepalive_requests: None,
        sendfile: None,
    };
    let launch = render(&spec).unwrap();
    prepare(&launch, spec.user.as_deref());
    let mut running = start(&launch);
    let log = launch.access_log.clone().unwrap();
    let logs = || format!("{}\n{}", read_log(&launch.processes[0].log), read_log(&log.path));
    const FETCHES: usize = 25;
    for i in 0..FETCHES {
        let (status, body) = get(spec.listen, "/static.bin")
            .unwrap_or_else(|e| panic!("fetch {i}: {e}\n{}", logs()));
        assert_eq!(status, 200, "fetch {i}\n{}", logs());
        assert!(
            body == static_bytes,
            "fetch {i}: {} bytes, not the file's {}",
            body.len(),
            300_000
        );
    }
    let (status, _) = get(spec.listen, "/no-such-file").unwrap();
    assert_eq!(status, 404);
    let pid = running.children[0].1.id();
    // Idle first: thttpd stopped while it finishes a connection logs that one twice.
    assert!(herd_testutil::procs::wait_sleeping(pid, Duration::from_secs(10)), "thttpd busy");
    let stuck = running.stop();
    assert!(stuck.is_empty(), "thttpd (pid {pid}) did not stop on SIGTERM\n{}", logs());

    let logged = herd_drivers::parse_access_log(log.format, &read_log(&log.path))
        .unwrap_or_else(|e| panic!("{e}\n{}", logs()));
    let file: Vec<_> = logged.iter().filter(|l| l.target == "/static.bin").collect();
    assert_eq!(file.len(), FETCHES, "thttpd's own count\n{}", logs());
    for l in &file {
        assert_eq!((l.method.as_str(), l.status, l.version.as_str()), ("GET", 200, "HTTP/1.0"));
        assert_eq!(l.body_bytes, 300_000, "{l:?}");
    }
    let missing: Vec<_> = logged.iter().filter(|l| l.target == "/no-such-file").collect();
    assert_eq!(missing.len(), 1, "{logged:?}");
    assert_eq!(missing[0].status, 404);
    let probes = logged.iter().filter(|l| l.target == "/herd-ready.txt").count();
    assert_eq!(logged.len(), FETCHES + 1 + probes, "{logged:?}");
    assert!(probes >= 1, "{logged:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The worker counts the spec can set, running.
#[test]
fn with_two_workers() {
    for kind in [
        ServerKind::Nginx,
        ServerKind::Apache(Mpm::Event),
        ServerKind::Apache(Mpm::Worker),
        ServerKind::Apache(Mpm::Prefork),
        ServerKind::Lighttpd,
        ServerKind::H2o,
        ServerKind::Caddy,
    ] {
        check(kind, None, Some(2));
    }
}

/// php-cgi's own URL in Apache answers only the redirects of *.php, not a direct request.
#[test]
fn apache_refuses_direct_php_cgi_requests() {
    let kind = ServerKind::Apache(Mpm::Event);
    let dir = tempdir("live-apache-direct");
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let spec = ServerSpec {
        kind,
        php: Some(Php::Cgi),
        protocol: Protocol::H1,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, b"x"),
        run_dir,
        workers: None,
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(kind, Some(Php::Cgi)),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    };
    let launch = render(&spec).unwrap();
    prepare(&launch, spec.user.as_deref());
    let mut running = start(&launch);
    let (status, _) = get(spec.listen, "/herd-php-cgi/9x9.php").unwrap();
    assert_eq!(status, 403);
    let (status, _) = get(spec.listen, "/9x9.php").unwrap();
    assert_eq!(status, 200);
    assert!(running.stop().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A herd serve in this test process on a free port of 127.0.0.1, one worker, serving its own
/// docroot with `who.txt` saying its name; stopped and joined when dropped.
struct Backend {
    addr: SocketAddr,
    stop: StopHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Backend {
    fn start(dir: &Path, name: &str, static_bytes: &[u8]) -> Backend {
        let root = dir.join(format!("www-{name}"));
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join(READY_FILE), "ready\n").unwrap();
        std::fs::write(root.join("static.bin"), static_bytes).unwrap();
        std::fs::write(root.join("who.txt"), name).unwrap();
        let config = ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            root: Some(root),
            threads: 1,
            ..ServeConfig::default()
        };
        let server = Server::bind(config).unwrap();
        let addr = server.local_addr();
        let stop = StopHandle::new();
        let handle = stop.clone();
        let thread = std::thread::spawn(move || {
            server.run(handle).unwrap();
        });
        Backend { addr, stop, thread: Some(thread) }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            // A backend that panicked is this test's failure, not something to drop.
            if let Err(panic) = thread.join() {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(panic);
                }
            }
        }
    }
}

/// Proxy `kind` (with `workers`) on 127.0.0.1 in front of `n_backends` herd serve backends:
/// bytes both ways, round robin over every backend, the user, the stop.
fn check_proxy(kind: ProxyKind, workers: Option<u32>, n_backends: usize) {
    let name = match workers {
        Some(n) => format!("{kind}-{n_backends}-backends-workers-{n}"),
        None => format!("{kind}-{n_backends}-backends"),
    };
    let dir = tempdir(&format!("live-{name}"));
    // Many times every proxy's buffers (HAProxy's 16 KB, nginx's 8 × 4 KB).
    let static_bytes = pattern(1 << 20, 3);
    let names: Vec<String> = (0..n_backends).map(|i| format!("backend-{i}")).collect();
    let backends: Vec<Backend> =
        names.iter().map(|who| Backend::start(&dir, who, &static_bytes)).collect();
    let run_dir = dir.join("proxy");
    std::fs::create_dir(&run_dir).unwrap();
    let spec = ProxySpec {
        kind,
        protocol: Protocol::H1,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        backends: backends.iter().map(|b| b.addr).collect(),
        run_dir,
        workers: workers.and_then(std::num::NonZeroU32::new),
        user: lab_user(),
        programs: located_proxy(kind),
    };
    let launch = render_proxy(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    prepare(&launch, spec.user.as_deref());
    let mut running = start(&launch);
    let addr = spec.listen;
    let logs = || {
        let mut text: String = launch
            .processes
            .iter()
            .map(|p| format!("--- {}\n{}", p.log.display(), read_log(&p.log)))
            .collect();
        // nginx writes its errors (an upstream refused, a temp file it cannot write) there.
        let error_log = spec.run_dir.join("logs/nginx-error.log");
        if error_log.exists() {
            text += &format!("--- {}\n{}", error_log.display(), read_log(&error_log));
        }
        text
    };
    let expect = |what: &str, got: std::io::Result<(u16, Vec<u8>)>, want: &[u8]| {
        let (status, body) = got.unwrap_or_else(|e| panic!("{name} {what}: {e}\n{}", logs()));
        assert_eq!(status, 200, "{name} {what}: {}\n{}", String::from_utf8_lossy(&body), logs());
        assert!(
            body == want,
            "{name} {what}: {} bytes, not the {} expected\n{}",
            body.len(),
            want.len(),
            logs()
        );
    };

    expect("/herd-ready.txt", get(addr, "/herd-ready.txt"), b"ready\n");
    // One request per backend, so that with round robin each one's bytes come through.
    for _ in 0..n_backends {
        expect("/static.bin", get(addr, "/static.bin"), &static_bytes);
        // Under nginx's client_max_body_size (1 MB), over its client_body_buffer_size (16 KB):
        // nginx's worker writes the body to tmp/body first (seen with strace).
        let body = pattern(300_000, 4);
        expect("POST /echo", post(addr, "/echo", &body), &body);
    }

    // Round robin: every backend answers once in any n requests in a row, in the same turn
    // each time (HTTP/1.0, so a new connection for each). Which backend comes first depends
    // on the requests before.
    let answers: Vec<String> = (0..2 * n_backends)
        .map(|_| {
            let (status, body) =
                get(addr, "/who.txt").unwrap_or_else(|e| panic!("{name} /who.txt: {e}"));
            assert_eq!(status, 200, "{name} /who.txt\n{}", logs());
            String::from_utf8_lossy(&body).into_owned()
        })
        .collect();
    let mut turn = answers[..n_backends].to_vec();
    turn.sort();
    assert_eq!(turn, names, "{name}: not every backend answered: {answers:?}");
    assert_eq!(answers[..n_backends], answers[n_backends..], "{name}: not in turn: {answers:?}");

    // With a user, HAProxy and sslh run as that user themselves, nginx's workers do.
    if let Some(user) = &spec.user {
        let (uid, _) = user_ids(user);
        let (pname, child, _) = &running.children[0];
        if kind == ProxyKind::NginxProxy {
            let uids = tree_uids(child.id());
            assert!(uids.contains(&uid), "{name}: {pname} and its children run as {uids:?}");
        } else {
            let own = euid(&child.id().to_string());
            assert_eq!(own, Some(uid), "{name}: {pname} runs as {own:?}, not {user}");
        }
    }

    let stuck = running.stop();
    assert!(stuck.is_empty(), "{name}: {stuck:?} did not stop on SIGTERM within 10 s\n{}", logs());
    drop(backends);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every proxy as a lab path runs it: two backends where it balances, else one.
fn check_proxy_as_the_lab_runs_it(kind: ProxyKind) {
    check_proxy(kind, None, if kind.balances() { 2 } else { 1 });
}

#[test]
fn haproxy_http() {
    check_proxy_as_the_lab_runs_it(ProxyKind::HaproxyHttp);
}

#[test]
fn haproxy_tcp() {
    check_proxy_as_the_lab_runs_it(ProxyKind::HaproxyTcp);
}

#[test]
fn nginx_proxy() {
    check_proxy_as_the_lab_runs_it(ProxyKind::NginxProxy);
}

#[test]
fn sslh_fork() {
    check_proxy_as_the_lab_runs_it(ProxyKind::SslhFork);
}

#[test]
fn sslh_select() {
    check_proxy_as_the_lab_runs_it(ProxyKind::SslhSelect);
}

/// The worker counts a proxy can take, running (HAProxy threads, nginx worker processes).
#[test]
fn proxies_with_two_workers() {
    for kind in [ProxyKind::HaproxyHttp, ProxyKind::HaproxyTcp, ProxyKind::NginxProxy] {
        check_proxy(kind, Some(2), if kind.balances() { 2 } else { 1 });
    }
}

/// What curl got: the HTTP version it spoke (`1.1`, `2`), the status, the body.
struct Got {
    version: String,
    status: u16,
    body: Vec<u8>,
}

/// One `GET path` with curl on `addr` over `protocol`, checking a TLS server's certificate
/// against `ca` for the address (the IP in the URL).
fn curl(
    addr: SocketAddr,
    path: &str,
    protocol: Protocol,
    ca: Option<&Path>,
) -> Result<Got, String> {
    curl_as(addr, &addr.ip().to_string(), path, protocol, ca)
}

/// `curl` with `host` in the URL, resolved to `addr`'s IP (`localhost` checks the
/// certificate's DNS name).
fn curl_as(
    addr: SocketAddr,
    host: &str,
    path: &str,
    protocol: Protocol,
    ca: Option<&Path>,
) -> Result<Got, String> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("herd-drivers-curl-{}-{n}", std::process::id()));
    let (scheme, flag) = match protocol {
        Protocol::H1 => ("http", "--http1.1"),
        Protocol::H1Tls => ("https", "--http1.1"),
        Protocol::H2 => ("https", "--http2"),
        Protocol::H2c => ("http", "--http2-prior-knowledge"),
        Protocol::H3 => panic!("curl 7.88 has no HTTP/3: use gtlsclient"),
    };
    let host_text = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    let mut cmd = Command::new("curl");
    // -g: no globbing of the brackets of an IPv6 URL.
    cmd.args(["-sS", "-g", "--max-time", "20", flag, "-o"])
        .arg(&out)
        .args(["-w", "%{http_version} %{http_code}"])
        .arg("--resolve")
        .arg(format!("{host}:{}:{}", addr.port(), addr.ip()))
        .arg(format!("{scheme}://{host_text}:{}{path}", addr.port()));
    if let Some(ca) = ca {
        cmd.arg("--cacert").arg(ca);
    }
    let result = cmd.output().unwrap_or_else(|e| panic!("curl (apt-get install curl): {e}"));
    let body = std::fs::read(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    let text = String::from_utf8_lossy(&result.stdout).into_owned();
    if !result.status.success() {
        return Err(format!(
            "curl {flag} {path}: {}{text}",
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    let (version, status) = text.split_once(' ').ok_or_else(|| format!("curl wrote {text:?}"))?;
    let status = status.parse().map_err(|_| format!("curl wrote {text:?}"))?;
    Ok(Got { version: version.to_owned(), status, body })
}

/// h2load's figures for `n` requests on `url` over 2 connections, 4 streams each: the
/// application protocol it reports, the requests that succeeded, and the data bytes.
fn h2load(url: &str, n: u32) -> (String, u32, u64, String) {
    let out = Command::new("h2load")
        .args(["-n", &n.to_string(), "-c", "2", "-m", "4", url])
        .output()
        .unwrap_or_else(|e| panic!("h2load (apt-get install nghttp2-client): {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let protocol = text
        .lines()
        .find_map(|l| l.strip_prefix("Application protocol: "))
        .unwrap_or("none")
        .trim()
        .to_owned();
    // requests: 20 total, 20 started, 20 done, 20 succeeded, 0 failed, …
    let succeeded = text
        .lines()
        .find_map(|l| l.strip_prefix("requests: "))
        .and_then(|l| l.split(", ").find_map(|f| f.strip_suffix(" succeeded")))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    // traffic: 1.91MB (2002658) total, 2.03KB (2080) headers (…), 1.91MB (2000000) data
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("traffic: "))
        .and_then(|l| l.rsplit_once(") data"))
        .and_then(|(head, _)| head.rsplit_once('(').map(|(_, n)| n.to_owned()))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (protocol, succeeded, data, text)
}

/// `kind` (static files) over `protocol`, started as the lab would; then the clients check
/// what it speaks.
fn check_protocol(kind: ServerKind, protocol: Protocol) {
    need_tls_modules();
    let name = with_protocol(kind.name(), protocol);
    let dir = tempdir(&format!("live-{name}"));
    let static_bytes = pattern(100_000, 5);
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let spec = ServerSpec {
        kind,
        php: None,
        protocol,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, &static_bytes),
        run_dir,
        workers: None,
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(kind, None),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    };
    let launch = render(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    prepare(&launch, spec.user.as_deref());
    let mut running = start(&launch);
    let addr = spec.listen;
    let ca = launch.tls.as_ref().map(|t| t.ca.clone());
    let logs = || {
        launch
            .processes
            .iter()
            .map(|p| format!("--- {}\n{}", p.log.display(), read_log(&p.log)))
            .collect::<String>()
    };
    let url = |path: &str| {
        let scheme = if protocol.is_encrypted() { "https" } else { "http" };
        format!("{scheme}://{addr}{path}")
    };

    if protocol == Protocol::H3 {
        // Over TCP beside it, as caddy serves h3: h2 and the certificate.
        let got = curl(addr, "/static.bin", Protocol::H2, ca.as_deref()).unwrap();
        assert_eq!((got.version.as_str(), got.status), ("2", 200), "{name}\n{}", logs());
        let (alpn, body) = gtlsclient(addr, "/static.bin", &dir);
        assert_eq!(alpn, "h3", "{name}\n{}", logs());
        assert!(body == static_bytes, "{name}: {} bytes over h3, not the file's", body.len());
    } else {
        let want = if protocol.is_multiplexed() { "2" } else { "1.1" };
        let got = curl(addr, "/static.bin", protocol, ca.as_deref())
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", logs()));
        assert_eq!((got.version.as_str(), got.status), (want, 200), "{name}\n{}", logs());
        assert!(got.body == static_bytes, "{name}: {} bytes, not the file's", got.body.len());
        if protocol.is_encrypted() {
            // The certificate names `localhost` too.
            let got = curl_as(addr, "localhost", "/herd-ready.txt", protocol, ca.as_deref())
                .unwrap_or_else(|e| panic!("{name} as localhost: {e}"));
            assert_eq!((got.status, got.body.as_slice()), (200, &b"ready\n"[..]), "{name}");
        }
    }
    if matches!(protocol, Protocol::H2 | Protocol::H2c) {
        let (alpn, succeeded, data, text) = h2load(&url("/static.bin"), 20);
        assert_eq!(alpn, protocol.as_str(), "{name}: h2load spoke {alpn}\n{text}");
        assert_eq!((succeeded, data), (20, 20 * 100_000), "{name}:\n{text}\n{}", logs());
    }
    // A listener meant for HTTP/1.1 over TLS leaves h2 out of ALPN, except h2o's, which has
    // no setting for it.
    if protocol == Protocol::H1Tls && kind != ServerKind::H2o {
        let got = curl(addr, "/herd-ready.txt", Protocol::H2, ca.as_deref()).unwrap();
        assert_eq!(got.version, "1.1", "{name} offered h2");
    }

    let stuck = running.stop();
    assert!(stuck.is_empty(), "{name}: {stuck:?} did not stop on SIGTERM within 10 s\n{}", logs());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One GET over HTTP/3 with ngtcp2's example client: the ALPN it negotiated and the body.
fn gtlsclient(addr: SocketAddr, path: &str, dir: &Path) -> (String, Vec<u8>) {
    let download = dir.join("h3");
    std::fs::create_dir_all(&download).unwrap();
    let out = Command::new("timeout")
        .args(["20", "gtlsclient", "--exit-on-all-streams-close"])
        .arg(format!("--download={}", download.display()))
        .args([addr.ip().to_string(), addr.port().to_string()])
        .arg(format!("https://{addr}{path}"))
        .output()
        .unwrap_or_else(|e| panic!("gtlsclient (apt-get install ngtcp2-client): {e}"));
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "gtlsclient (apt-get install ngtcp2-client) failed ({}): {}",
        out.status,
        text.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
    let alpn = text
        .lines()
        .find_map(|l| l.strip_prefix("Negotiated ALPN is "))
        .unwrap_or("none")
        .trim()
        .to_owned();
    let name = path.rsplit('/').next().unwrap();
    (alpn, std::fs::read(download.join(name)).unwrap_or_default())
}

/// Every protocol `kind` speaks besides h1 (which `check` covers).
fn check_protocols(kind: ServerKind) {
    let protocols: Vec<Protocol> =
        kind.protocols().into_iter().filter(|&p| p != Protocol::H1).collect();
    assert!(!protocols.is_empty(), "{kind}");
    for protocol in protocols {
        check_protocol(kind, protocol);
    }
}

#[test]
fn nginx_protocols() {
    check_protocols(ServerKind::Nginx);
}

#[test]
fn apache_event_protocols() {
    check_protocols(ServerKind::Apache(Mpm::Event));
}

#[test]
fn apache_worker_protocols() {
    check_protocols(ServerKind::Apache(Mpm::Worker));
}

/// h1-tls only: no HTTP/2 under prefork.
#[test]
fn apache_prefork_protocols() {
    check_protocols(ServerKind::Apache(Mpm::Prefork));
}

#[test]
fn lighttpd_protocols() {
    check_protocols(ServerKind::Lighttpd);
}

#[test]
fn h2o_protocols() {
    check_protocols(ServerKind::H2o);
}

#[test]
fn mini_httpd_protocols() {
    check_protocols(ServerKind::MiniHttpd);
}

#[test]
fn caddy_protocols() {
    check_protocols(ServerKind::Caddy);
}

/// Proxy `kind` over `protocol` in front of nginx speaking the same: curl and h2load through
/// it speak the protocol (the certificate checked is HAProxy http's own, or nginx's through a
/// proxy that forwards bytes), and get the file's bytes.
fn check_proxy_protocol(kind: ProxyKind, protocol: Protocol) {
    let name = with_protocol(kind.name(), protocol);
    let dir = tempdir(&format!("live-proxy-{name}"));
    let static_bytes = pattern(100_000, 6);
    let server_dir = dir.join("server");
    std::fs::create_dir(&server_dir).unwrap();
    let server = ServerSpec {
        kind: ServerKind::Nginx,
        php: None,
        protocol,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, &static_bytes),
        run_dir: server_dir,
        workers: None,
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(ServerKind::Nginx, None),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    };
    let server_launch = render(&server).unwrap();
    prepare(&server_launch, server.user.as_deref());
    let _server_running = start(&server_launch);

    let run_dir = dir.join("proxy");
    std::fs::create_dir(&run_dir).unwrap();
    let spec = ProxySpec {
        kind,
        protocol,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        backends: vec![server.listen],
        run_dir,
        workers: None,
        user: lab_user(),
        programs: located_proxy(kind),
    };
    let launch = render_proxy(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    prepare(&launch, spec.user.as_deref());
    // The certificate the client meets: HAProxy http's own, else the server's.
    let tls = launch.tls.as_ref().or(server_launch.tls.as_ref());
    let ca = tls.map(|t| t.ca.clone());
    assert_eq!(launch.tls.is_some(), kind == ProxyKind::HaproxyHttp && protocol.is_encrypted());
    let mut running = start_trusting(&launch, ca.as_deref());
    let logs = || {
        launch
            .processes
            .iter()
            .map(|p| format!("--- {}\n{}", p.log.display(), read_log(&p.log)))
            .collect::<String>()
    };
    let addr = spec.listen;
    let want = if protocol.is_multiplexed() { "2" } else { "1.1" };
    let got = curl(addr, "/static.bin", protocol, ca.as_deref())
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", logs()));
    assert_eq!((got.version.as_str(), got.status), (want, 200), "{name}\n{}", logs());
    assert!(got.body == static_bytes, "{name}: {} bytes, not the file's", got.body.len());
    if protocol.is_multiplexed() {
        let scheme = if protocol.is_encrypted() { "https" } else { "http" };
        let (alpn, succeeded, data, text) = h2load(&format!("{scheme}://{addr}/static.bin"), 20);
        assert_eq!(alpn, protocol.as_str(), "{name}: h2load spoke {alpn}\n{text}");
        assert_eq!((succeeded, data), (20, 20 * 100_000), "{name}:\n{text}\n{}", logs());
    }
    let stuck = running.stop();
    assert!(stuck.is_empty(), "{name}: {stuck:?} did not stop on SIGTERM within 10 s\n{}", logs());
    drop(_server_running);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// HAProxy http speaks each protocol on both sides itself.
#[test]
fn haproxy_http_protocols() {
    for protocol in [Protocol::H1Tls, Protocol::H2, Protocol::H2c] {
        check_proxy_protocol(ProxyKind::HaproxyHttp, protocol);
    }
}

/// Proxies that forward bytes carry TLS (ALPN h2 reaches the server) and the h2c preface.
#[test]
fn byte_proxies_carry_h2_and_h2c() {
    check_proxy_protocol(ProxyKind::HaproxyTcp, Protocol::H2);
    check_proxy_protocol(ProxyKind::SslhFork, Protocol::H2);
    check_proxy_protocol(ProxyKind::SslhSelect, Protocol::H2c);
}

/// The live processes of process group `pgid` (the group a process started here leads, and
/// everything it forked that stayed in it), by PID from /proc; zombies left out.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(close) = stat.rfind(')') else { continue };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // state(3) ppid(4) pgrp(5)
        if fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str()) {
            out.push(pid);
        }
    }
    out
}

/// The PIDs whose command line has `marker` as one of its arguments (this instance's config
/// path: nothing else on the machine names it).
fn pids_naming(marker: &Path) -> Vec<u32> {
    herd_testutil::procs::naming(marker.as_os_str())
}

/// Stops a samba instance as the lab does: its stop signal to the process group it leads,
/// up to 10 s for smbd itself, then up to 5 s more for what it forked; what is left of that
/// group gets SIGKILL. Then each detached helper's PID, only if its command line still
/// names this instance's config. Returns the PIDs that needed SIGKILL.
fn stop_samba(running: &mut Running, launch: &Launch) -> Vec<u32> {
    let (_, mut child, signal) = running.children.pop().unwrap();
    let pid = child.id();
    // SAFETY: kill has no memory preconditions; -pid is the group our own child leads.
    unsafe { libc::kill(-(pid as libc::pid_t), signal) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !group_members(pid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = group_members(pid);
    if !killed.is_empty() {
        // SAFETY: as above.
        unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
    for d in &launch.processes[0].detached {
        let Some(helper) = std::fs::read_to_string(&d.pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<libc::pid_t>().ok())
            .filter(|&p| p > 1)
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{helper}/cmdline")).unwrap_or_default();
        if cmdline.split(|&b| b == 0).any(|a| a == d.marker.as_encoded_bytes()) {
            // SAFETY: as above; the PID is this instance's helper, checked just now.
            unsafe { libc::kill(helper, signal) };
        }
    }
    killed
}

/// What /var/log/samba holds (names and sizes), to show that a test added nothing there.
fn system_samba_logs() -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir("/var/log/samba") else { return Vec::new() };
    let mut out: Vec<(String, u64)> = dir
        .flatten()
        .map(|e| {
            let len = e.metadata().map(|m| m.len()).unwrap_or(0);
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .collect();
    out.sort();
    out
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_owned());
            }
        }
    }
    out.sort();
    out
}

/// Samba's smbd, started through the driver on 127.0.0.1 as the tests' user (root here and in
/// CI, so its connections run as the lab's user): ready when its port accepts; smbclient
/// (SMB1, as NBENCH speaks) puts a file into the share, lists it and gets it back with its
/// bytes. (smbtorture's NBENCH is not run yet: as root it gets NT_STATUS_ACCESS_DENIED on its
/// third NTCreateX with this config, see the report.) Then, with one more connection held open (a per-connection smbd), it is
/// stopped: no process of this instance is left (its group, by PID, and anything naming its
/// config), nothing was added to /var/log/samba, and all it wrote is under its run_dir.
#[test]
fn samba() {
    let kind = ServerKind::Samba;
    let system_logs = system_samba_logs();
    let dir = tempdir("live-samba");
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let docroot = dir.join("www");
    std::fs::create_dir(&docroot).unwrap();
    let spec = ServerSpec {
        kind,
        php: None,
        protocol: Protocol::H1,
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot,
        run_dir: run_dir.clone(),
        workers: None,
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(kind, None),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    };
    let launch = render(&spec).unwrap();
    prepare(&launch, spec.user.as_deref());
    let conf = launch.files[0].path.clone();
    let started = Instant::now();
    let mut running = start(&launch);
    let ready_after = started.elapsed();
    let smbd = running.children[0].1.id();
    let logs = || {
        let log = |p: &Path| format!("--- {}\n{}", p.display(), read_log(p));
        log(&launch.processes[0].log) + &log(&run_dir.join("logs/log.smbd"))
    };
    let port = spec.listen.port().to_string();
    let share = format!("//127.0.0.1/{}", herd_drivers::SAMBA_SHARE);

    // The client reads its own empty config, not /etc/samba's; SMB1 both ways, as NBENCH.
    let local = dir.join("put.bin");
    let bytes = pattern(200_000, 7);
    std::fs::write(&local, &bytes).unwrap();
    let back = dir.join("got.bin");
    let script = format!("put {} x.bin; ls; get x.bin {}", local.display(), back.display());
    let out = Command::new("smbclient")
        .args([&share, "-N", "-p", &port, "-s", "/dev/null", "-m", "NT1"])
        .args(["--option=client min protocol=NT1", "-c", &script])
        .output()
        .unwrap_or_else(|e| panic!("smbclient (apt-get install smbclient): {e}"));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "smbclient: {text}\n{}", logs());
    assert!(text.contains("x.bin"), "smbclient ls: {text}");
    assert!(std::fs::read(&back).unwrap() == bytes, "smbclient got other bytes back");
    assert!(std::fs::read(run_dir.join("share/x.bin")).unwrap() == bytes);

    // What the lab runs against it: smbtorture's NBENCH, two clients replaying dbench's
    // NetBench trace for 3 s (it makes \clients, then a directory per client in it).
    let loadfile = "/usr/share/dbench/client.txt";
    assert!(Path::new(loadfile).is_file(), "no {loadfile} (apt-get install dbench)");
    // Bounded: coreutils' timeout signals the whole group (the clients are forked), and
    // smbtorture's cleanup after its time limit has no bound of its own.
    let out = Command::new("timeout")
        .args(["-k", "5", "60", "smbtorture", &share, "-N", "-p", &port, "--num-progs=2"])
        .args(["-t", "3", &format!("--loadfile={loadfile}"), "bench.nbench"])
        .output()
        .unwrap_or_else(|e| panic!("smbtorture (apt-get install samba-testsuite): {e}"));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("success: nbench"),
        "smbtorture NBENCH: {text}\n{}",
        logs()
    );
    assert!(text.contains("Throughput "), "{text}");

    // One connection held open: smbd forks a process for it at once.
    let held = TcpStream::connect(spec.listen).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut members = group_members(smbd);
    // The parent, smbd-notifyd, cleanupd, and the held connection's smbd.
    while members.len() < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        members = group_members(smbd);
    }
    assert!(members.len() >= 4, "smbd's group: {members:?}\n{}", logs());
    let mut instance = pids_naming(&conf);
    instance.extend(&members);

    let killed = stop_samba(&mut running, &launch);
    drop(held);
    assert!(killed.is_empty(), "{killed:?} outlived SIGTERM by 5 s\n{}", logs());
    let alive: Vec<u32> =
        instance.iter().copied().filter(|p| Path::new(&format!("/proc/{p}")).exists()).collect();
    let left: Vec<u32> = alive
        .into_iter()
        .filter(|p| {
            // A PID reused since is someone else's: only ours name the config or the group.
            group_members(smbd).contains(p) || pids_naming(&conf).contains(p)
        })
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
    assert!(pids_naming(&conf).is_empty());
    assert!(!run_dir.join("run/samba-dcerpcd.pid").exists(), "samba-dcerpcd was started");

    assert_eq!(system_samba_logs(), system_logs, "something was written to /var/log/samba");
    // Everything it wrote: under the run_dir, in the places the config gives.
    let files = files_under(&run_dir);
    for f in &files {
        let top = f.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        assert!(["conf", "logs", "run", "samba", "share"].contains(&top.as_str()), "{f:?}");
    }
    assert!(files.iter().any(|f| f.starts_with("samba/private")), "{files:?}");
    eprintln!("samba: ready in {ready_after:?}; wrote {} files under its run_dir", files.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
