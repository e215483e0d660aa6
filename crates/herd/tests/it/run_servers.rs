//! `herd run` against every real server of the lab, over every protocol each one speaks
//! (nginx, Apache event with mod_http2, lighttpd, h2o, caddy with HTTP/3, mini_httpd, thttpd,
//! herd serve), each started from the lab's own configuration (herd-drivers) with its access log
//! on. What herd counts is held against what the server logged: as many responses to the
//! file as herd completed, each 200, each in the protocol herd said it spoke (the log's
//! `HTTP/2.0`, `HTTP/3.0`), and the body bytes summed to herd's; where the server logs
//! connections too (lighttpd's HTTP/2), as many as herd opened. A server that dropped, doubled
//! or rewrote a request, or a client that counted one it never got, fails here.
//!
//! Only 127.0.0.1 is used; each server is stopped by its PID (and must stop on its signal)
//! before its log is read, so that buffered lines are in it. A missing server fails with the
//! package to install, or for thttpd the script that builds it (scripts/test.sh installs and
//! builds them all).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use herd_drivers::{
    parse_access_log, programs_needed, render, Launch, Logged, Mpm, Probe, Programs, Protocol,
    ServerKind, ServerSpec, READY_FILE,
};
use herd_testutil::launch::{lab_user, prepare, read_log, Running};
use herd_testutil::ports::free_tcp_udp_port;
use util::{herd, run, run_json, tempdir, text};

/// The file every run asks for: larger than one TLS record and one HTTP/2 frame.
const SIZE: usize = 100_000;
const REQUESTS: u64 = 300;

/// A directory every user can enter (the servers' workers run as www-data).
fn open_dir(path: &Path) {
    std::fs::create_dir_all(path).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(path, mode).unwrap();
}

/// `herd run`'s flags for `protocol` (over TLS trusting `ca`).
fn protocol_flags(protocol: Protocol, ca: Option<&Path>) -> Vec<String> {
    let mut flags: Vec<String> = match protocol {
        Protocol::H1 | Protocol::H1Tls => vec![],
        Protocol::H2 => vec!["--h2".into()],
        Protocol::H2c => vec!["--h2c".into()],
        Protocol::H3 => vec!["--h3".into()],
    };
    if let Some(ca) = ca {
        flags.extend(["--ca-file".into(), ca.to_str().unwrap().into()]);
    }
    flags
}

fn url(protocol: Protocol, addr: SocketAddr, path: &str) -> String {
    let scheme = if protocol.is_encrypted() { "https" } else { "http" };
    format!("{scheme}://{addr}{path}")
}

/// A launch's readiness probe, asked with herd itself: one request that must answer 200 (its
/// summary's status line says so; a latency of 200 µs elsewhere in it must not).
fn answers(probe: &Probe, ca: Option<&Path>) -> bool {
    let Probe::Http { addr, path, protocol } = probe else {
        panic!("an HTTP server with a {probe:?} probe");
    };
    let ca = if protocol.is_encrypted() { ca } else { None };
    let out = run(herd()
        .arg("run")
        .args(protocol_flags(*protocol, ca))
        .args(["-n", "1", "--timeout", "2s"])
        .arg(url(*protocol, *addr, path)));
    out.status.success() && text(&out.stdout).contains("\n  status      200: 1\n")
}

/// `kind` serving `protocol` from the lab's config, with its access log, in `dir`.
struct Served {
    spec: ServerSpec,
    launch: Launch,
    running: Running,
}

impl Served {
    fn start(kind: ServerKind, protocol: Protocol, dir: &Path) -> Served {
        let docroot = dir.join("www");
        open_dir(dir);
        open_dir(&docroot);
        std::fs::write(docroot.join(READY_FILE), "ready\n").unwrap();
        std::fs::write(docroot.join("static.bin"), pattern(SIZE)).unwrap();
        let run_dir = dir.join("run");
        open_dir(&run_dir);
        let herd_exe = Path::new(env!("CARGO_BIN_EXE_herd"));
        let programs = Programs::locate(&programs_needed(kind, None), herd_exe)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let spec = ServerSpec {
            kind,
            php: None,
            protocol,
            listen: SocketAddr::from(([127, 0, 0, 1], free_tcp_udp_port())),
            docroot,
            run_dir,
            workers: None,
            user: lab_user(),
            runs_as: None,
            programs,
            access_log: true,
            keepalive_requests: None,
            sendfile: None,
        };
        let launch = render(&spec).unwrap_or_else(|e| panic!("{kind} over {protocol}: {e}"));
        prepare(&launch, spec.user.as_deref());
        let ca = launch.tls.as_ref().map(|t| t.ca.clone());
        let running = Running::start(&launch, |probe| answers(probe, ca.as_deref()));
        Served { spec, launch, running }
    }

    fn ca(&self) -> Option<&Path> {
        self.launch.tls.as_ref().map(|t| t.ca.as_path())
    }

    fn logs(&self) -> String {
        let log = |p: &PathBuf| format!("--- {}\n{}", p.display(), read_log(p));
        self.launch.processes.iter().map(|p| log(&p.log)).collect()
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

/// The HTTP major version `protocol` is.
fn major(protocol: Protocol) -> u8 {
    match protocol {
        Protocol::H1 | Protocol::H1Tls => 1,
        Protocol::H2 | Protocol::H2c => 2,
        Protocol::H3 => 3,
    }
}

fn check(kind: ServerKind, protocol: Protocol) {
    let name = format!("{kind} over {protocol}");
    let dir = tempdir(&format!("run-servers-{kind}-{protocol}"));
    let mut served = Served::start(kind, protocol, &dir);
    let addr = served.spec.listen;
    let mut args = protocol_flags(protocol, served.ca());
    args.extend(["-c", "2", "-n", &REQUESTS.to_string()].map(String::from));
    if protocol.is_multiplexed() {
        args.extend(["-m", "8"].map(String::from));
    }
    args.push(url(protocol, addr, "/static.bin"));
    let j = run_json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(j["requests"]["completed"], REQUESTS, "{name}: {j}");
    assert_eq!(j["requests"]["failed"], 0, "{name}: {j}");
    assert_eq!(j["statuses"]["200"], REQUESTS, "{name}: {j}");
    assert_eq!(j["bytes"]["body"], REQUESTS * SIZE as u64, "{name}: {j}");
    assert_eq!(j["protocol"], protocol.as_str(), "{name}: {j}");

    if kind == ServerKind::Thttpd {
        // Idle first: thttpd stopped while it finishes a connection logs that one twice.
        let pid = served.running.children[0].1.id();
        let idle = herd_testutil::procs::wait_sleeping(pid, std::time::Duration::from_secs(10));
        assert!(idle, "{name}: thttpd still busy 10 s after the run\n{}", served.logs());
    }
    let stuck = served.running.stop();
    assert!(stuck.is_empty(), "{name}: {stuck:?} did not stop on its signal\n{}", served.logs());
    let log = served.launch.access_log.clone().expect("an access log was asked for");
    let logged = parse_access_log(log.format, &read_log(&log.path))
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", served.logs()));
    let file: Vec<_> = logged.iter().filter(|l| l.target == "/static.bin").collect();
    assert_eq!(file.len() as u64, REQUESTS, "{name}: the server's own count\n{}", served.logs());
    for l in &file {
        assert_eq!((l.method.as_str(), l.status), ("GET", 200), "{name}: {l:?}");
        assert_eq!(l.major(), Some(major(protocol)), "{name}: herd said {protocol}: {l:?}");
    }
    let bytes: u64 = file.iter().map(|l| l.body_bytes).sum();
    assert_eq!(bytes, REQUESTS * SIZE as u64, "{name}: the server's body bytes");
    // lighttpd also logs each HTTP/2 connection, as `PRI * HTTP/2.0` when it closes: herd's
    // connections, and over TLS the one handshake in which herd asked the server for h2 first.
    let is_connection = |l: &&Logged| (l.method.as_str(), l.target.as_str()) == ("PRI", "*");
    let connections = logged.iter().filter(is_connection).count() as u64;
    if kind == ServerKind::Lighttpd && protocol.is_multiplexed() {
        let asked = u64::from(protocol == Protocol::H2);
        let herd_connections = j["latency_us"]["connect"]["count"].as_u64().unwrap();
        assert_eq!(connections, herd_connections + asked, "{name}: {logged:?}");
    } else {
        assert_eq!(connections, 0, "{name}: {logged:?}");
    }
    // Nothing else reached the server but its readiness probes.
    let others: Vec<_> = logged
        .iter()
        .filter(|l| !is_connection(l))
        .filter(|l| l.target != "/static.bin" && l.target != "/herd-ready.txt")
        .collect();
    assert!(others.is_empty(), "{name}: {others:?}");
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every protocol `kind` speaks.
fn check_all(kind: ServerKind) {
    for protocol in kind.protocols() {
        check(kind, protocol);
    }
}

#[test]
fn nginx() {
    check_all(ServerKind::Nginx);
}

#[test]
fn apache_event_with_mod_http2() {
    check_all(ServerKind::Apache(Mpm::Event));
}

#[test]
fn lighttpd() {
    check_all(ServerKind::Lighttpd);
}

#[test]
fn h2o() {
    check_all(ServerKind::H2o);
}

#[test]
fn caddy_with_http3() {
    assert!(ServerKind::Caddy.protocols().contains(&Protocol::H3));
    check_all(ServerKind::Caddy);
}

#[test]
fn mini_httpd() {
    check_all(ServerKind::MiniHttpd);
}

/// sthttpd 2.27, built by scripts/build-thttpd.sh into target/peers/bin, beside herd.
#[test]
fn thttpd() {
    check_all(ServerKind::Thttpd);
}

#[test]
fn herd_serve() {
    check_all(ServerKind::Herd);
}
