//! Every rendered launch, started for real: each setup (herd serve aside, whose binary belongs
//! to another crate) is rendered for a free port on 127.0.0.1 with this machine's programs,
//! prepared as the lab would (directories, the user's directories, files), and its processes
//! are started in order, each waited for by its probe. Then the server must serve a static
//! file, and with PHP, `9x9.php` and `include.php` with herd serve's bytes and `echo.php` with
//! the body sent (100 KB, so that request bodies take the servers' temporary-file paths).
//! Finally each process must stop on its stop signal, in reverse order.
//!
//! Only 127.0.0.1 is used, and only the processes started here are signalled, by PID.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

mod util;

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_drivers::{
    php_pages, render, Launch, Mpm, Php, Probe, ServerKind, ServerSpec, READY_FILE,
};
use util::{lab_user, located, prepare, setup_name, show, tempdir};

/// Processes started by one test, stopped (by PID, in reverse order) when dropped.
struct Running {
    children: Vec<(String, Child, i32)>,
}

impl Running {
    /// Starts `launch`'s processes in order, each once the previous one's probe answers.
    fn start(launch: &Launch) -> Running {
        let mut running = Running { children: Vec::new() };
        for p in &launch.processes {
            let log = File::options().create(true).append(true).open(&p.log).unwrap();
            // A process group of its own, as ProcessSpec asks: Apache prefork signals its whole
            // group when it stops, which would otherwise include this test.
            let child = Command::new(&p.argv[0])
                .process_group(0)
                .args(&p.argv[1..])
                .envs(p.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", show(&p.argv)));
            running.children.push((p.name.clone(), child, p.stop_signal));
            if let Some(probe) = &p.ready {
                running.wait_ready(probe, &p.log);
            }
        }
        running
    }

    fn wait_ready(&mut self, probe: &Probe, log: &Path) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let ready = match probe {
                Probe::Http { addr, path } => {
                    get(*addr, path).is_ok_and(|(status, _)| status == 200)
                }
                Probe::UnixSocket(path) => UnixStream::connect(path).is_ok(),
            };
            if ready {
                return;
            }
            let (name, child, _) = self.children.last_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{name} exited ({status}) before {probe:?}; its log:\n{}", read_log(log));
            }
            assert!(
                Instant::now() < deadline,
                "{name}: {probe:?} not ready; its log:\n{}",
                read_log(log)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops every process with its stop signal, last started first; each must exit within
    /// 10 s. Returns the names of those that did not (killed then).
    fn stop(&mut self) -> Vec<String> {
        let mut stuck = Vec::new();
        while let Some((name, mut child, signal)) = self.children.pop() {
            let pid = child.id() as libc::pid_t;
            if child.try_wait().unwrap().is_none() {
                // SAFETY: kill has no memory preconditions; pid is our own unreaped child.
                unsafe { libc::kill(pid, signal) };
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    stuck.push(name.clone());
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        stuck
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

fn read_log(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

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
    herd_serve::fileset::write_include_texts(&root).unwrap();
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
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, &static_bytes),
        run_dir,
        workers: workers.and_then(std::num::NonZeroU32::new),
        user: lab_user(),
        programs: located(kind, php),
    };
    let launch = render(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    prepare(&launch, spec.user.as_deref());
    let mut running = Running::start(&launch);
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

    // With a user, each process (or the workers it forked) serves as that user.
    if let Some(user) = &spec.user {
        let (uid, _) = util::user_ids(user);
        for (pname, child, _) in &running.children {
            let uids = tree_uids(child.id());
            assert!(uids.contains(&uid), "{name}: {pname} and its children run as {uids:?}");
        }
    }

    let stuck = running.stop();
    assert!(stuck.is_empty(), "{name}: {stuck:?} did not stop on SIGTERM within 10 s\n{}", logs());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The effective uids of process `pid` and its children.
fn tree_uids(pid: u32) -> Vec<u32> {
    let euid = |pid: &str| -> Option<u32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("Uid:"))?;
        line.split_whitespace().nth(2)?.parse().ok()
    };
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
        listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
        docroot: docroot(&dir, b"x"),
        run_dir,
        workers: None,
        user: lab_user(),
        programs: located(kind, Some(Php::Cgi)),
    };
    let launch = render(&spec).unwrap();
    prepare(&launch, spec.user.as_deref());
    let mut running = Running::start(&launch);
    let (status, _) = get(spec.listen, "/herd-php-cgi/9x9.php").unwrap();
    assert_eq!(status, 403);
    let (status, _) = get(spec.listen, "/9x9.php").unwrap();
    assert_eq!(status, 200);
    assert!(running.stop().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
