//! Golden files of everything the drivers render: for each variant (server × MPM × PHP ×
//! user, some worker counts, each protocol a server speaks besides `h1` (static files, no
//! user), and each proxy with and without a user, and over each protocol HAProxy http speaks
//! itself, and each HTTP server with an access log, and the servers that take them with
//! `keepalive_requests` and `sendfile` set) with fixed paths, `tests/golden/<variant>/`
//! holds each rendered file at its place
//! under the run_dir and `launch.txt`, the rest of the [`Launch`] (directories, processes with
//! argv and probes, the TLS files' places, config checks, version probes). The TLS files' contents are
//! made afresh for every launch, so only their places are golden.
//!
//! `UPDATE_GOLDEN=1 cargo test -p herd-drivers --test golden` rewrites them (and removes
//! variants that no longer exist); review the diff like code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use herd_drivers::{render, Launch, Mpm, Php, Probe, Protocol, ServerKind, ServerSpec};
use herd_testutil::golden::Goldens;
use util::{fixed_spec, setup_name, setups, show, with_protocol};

/// One golden directory: a setup with a user, a worker count and a protocol.
struct Variant {
    name: String,
    kind: ServerKind,
    php: Option<Php>,
    user: Option<&'static str>,
    workers: Option<u32>,
    protocol: Protocol,
    access_log: bool,
    /// `keepalive_requests` and `sendfile`: None but in the `-keepalive-10-sendfile-off`
    /// variants of the servers that have them.
    keepalive_requests: Option<u32>,
    sendfile: Option<bool>,
}

fn variants() -> Vec<Variant> {
    let mut out = Vec::new();
    let h1 = Protocol::H1;
    for (kind, php) in setups() {
        let name = setup_name(kind, php);
        out.push(Variant {
            name: name.clone(),
            kind,
            php,
            user: None,
            workers: None,
            protocol: h1,
            access_log: false,
            keepalive_requests: None,
            sendfile: None,
        });
        if kind != ServerKind::Herd {
            let name = format!("{name}-www-data");
            out.push(Variant {
                name,
                kind,
                php,
                user: Some("www-data"),
                workers: None,
                protocol: h1,
                access_log: false,
                keepalive_requests: None,
                sendfile: None,
            });
        }
        if php.is_none() {
            for protocol in kind.protocols().into_iter().filter(|&p| p != h1) {
                let name = with_protocol(&name, protocol);
                out.push(Variant {
                    name,
                    kind,
                    php,
                    user: None,
                    workers: None,
                    protocol,
                    access_log: false,
                    keepalive_requests: None,
                    sendfile: None,
                });
            }
        }
    }
    for (kind, n) in [
        (ServerKind::Herd, 2),
        (ServerKind::Nginx, 4),
        (ServerKind::Apache(Mpm::Event), 2),
        (ServerKind::Apache(Mpm::Worker), 2),
        (ServerKind::Apache(Mpm::Prefork), 4),
        (ServerKind::Lighttpd, 2),
        (ServerKind::H2o, 4),
        (ServerKind::Caddy, 2),
    ] {
        let name = format!("{}-workers-{n}", kind.name());
        out.push(Variant {
            name,
            kind,
            php: None,
            user: None,
            workers: Some(n),
            protocol: h1,
            access_log: false,
            keepalive_requests: None,
            sendfile: None,
        });
    }
    // With an access log, as the tests that hold a client's counts against the server's ask:
    // each HTTP server, as root would run it.
    for (kind, php) in setups().into_iter().filter(|(k, php)| k.speaks_http() && php.is_none()) {
        let name = format!("{}-access-log", setup_name(kind, php));
        let user = (kind != ServerKind::Herd).then_some("www-data");
        out.push(Variant {
            name,
            kind,
            php,
            user,
            workers: None,
            protocol: h1,
            access_log: true,
            keepalive_requests: None,
            sendfile: None,
        });
    }
    // The servers that have both settings, with both away from what is rendered without them
    // (sendfile on, and their own request limits); the others refuse them (lib.rs's tests).
    for kind in [
        ServerKind::Nginx,
        ServerKind::Apache(Mpm::Event),
        ServerKind::Apache(Mpm::Prefork),
        ServerKind::Lighttpd,
    ] {
        out.push(Variant {
            name: format!("{}-keepalive-10-sendfile-off", kind.name()),
            kind,
            php: None,
            user: None,
            workers: None,
            protocol: h1,
            access_log: false,
            keepalive_requests: Some(10),
            sendfile: Some(false),
        });
    }
    out
}

impl Variant {
    fn render(&self) -> (ServerSpec, Launch) {
        let spec = ServerSpec {
            protocol: self.protocol,
            access_log: self.access_log,
            keepalive_requests: self.keepalive_requests.and_then(std::num::NonZeroU32::new),
            sendfile: self.sendfile,
            ..fixed_spec(self.kind, self.php, self.user, self.workers)
        };
        let launch = render(&spec).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        (spec, launch)
    }
}

fn goldens() -> Goldens {
    Goldens::of(env!("CARGO_MANIFEST_DIR"))
}

/// The files of one variant's golden directory: relative path → contents.
fn expected_files(launch: &Launch, run_dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files: BTreeMap<PathBuf, String> = launch
        .files
        .iter()
        .map(|f| (f.path.strip_prefix(run_dir).unwrap().to_owned(), f.contents.clone()))
        .collect();
    files.insert(PathBuf::from("launch.txt"), describe(launch));
    files
}

/// The launch apart from file contents, one fact per line.
fn describe(l: &Launch) -> String {
    let mut s = String::new();
    let probe = |p: &Probe| match p {
        Probe::Http { addr, path, protocol: Protocol::H1 } => format!("http {addr} GET {path}"),
        Probe::Http { addr, path, protocol } => format!("http {addr} GET {path} over {protocol}"),
        Probe::UnixSocket(path) => format!("unix socket {}", path.display()),
        Probe::Tcp(addr) => format!("tcp {addr} accepts"),
    };
    writeln!(s, "files:").unwrap();
    for f in &l.files {
        writeln!(s, "  {}", f.path.display()).unwrap();
    }
    writeln!(s, "dirs:").unwrap();
    for d in &l.dirs {
        writeln!(s, "  {}", d.display()).unwrap();
    }
    writeln!(s, "user_dirs:").unwrap();
    for d in &l.user_dirs {
        writeln!(s, "  {}", d.display()).unwrap();
    }
    if !l.shared_dirs.is_empty() {
        writeln!(s, "shared_dirs (1777):").unwrap();
        for d in &l.shared_dirs {
            writeln!(s, "  {}", d.display()).unwrap();
        }
    }
    writeln!(s, "processes (start in this order):").unwrap();
    for p in &l.processes {
        writeln!(s, "  {}:", p.name).unwrap();
        writeln!(s, "    argv: {}", show(&p.argv)).unwrap();
        for (k, v) in &p.env {
            writeln!(s, "    env: {}={}", k.to_string_lossy(), v.to_string_lossy()).unwrap();
        }
        writeln!(s, "    ready: {}", p.ready.as_ref().map_or("-".to_owned(), probe)).unwrap();
        writeln!(s, "    log: {}", p.log.display()).unwrap();
        writeln!(s, "    stop signal: {}", p.stop_signal).unwrap();
        for d in &p.detached {
            let marker = d.marker.to_string_lossy();
            writeln!(s, "    detached: {} if its cmdline has {marker}", d.pid_file.display())
                .unwrap();
        }
    }
    writeln!(s, "ready: {}", probe(&l.ready)).unwrap();
    if let Some(tls) = &l.tls {
        writeln!(s, "tls (made for each launch; owner only):").unwrap();
        writeln!(s, "  the client trusts: {}", tls.ca.display()).unwrap();
        for f in &tls.files {
            writeln!(s, "  {}", f.path.display()).unwrap();
        }
    }
    writeln!(s, "validate:").unwrap();
    for argv in &l.validate {
        writeln!(s, "  {}", show(argv)).unwrap();
    }
    writeln!(s, "versions:").unwrap();
    for v in &l.versions {
        writeln!(s, "  {}: {}", v.program, show(&v.argv)).unwrap();
    }
    if let Some(log) = &l.access_log {
        writeln!(s, "access log: {} ({:?})", log.path.display(), log.format).unwrap();
    }
    s
}

fn check_variants(keep: impl Fn(ServerKind) -> bool) {
    let mut checked = 0;
    for variant in variants().into_iter().filter(|v| keep(v.kind)) {
        let (spec, launch) = variant.render();
        goldens().check_dir(&variant.name, &expected_files(&launch, &spec.run_dir));
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn herd() {
    check_variants(|k| k == ServerKind::Herd);
}

#[test]
fn nginx() {
    check_variants(|k| k == ServerKind::Nginx);
}

#[test]
fn apache() {
    check_variants(|k| matches!(k, ServerKind::Apache(_)));
}

#[test]
fn lighttpd() {
    check_variants(|k| k == ServerKind::Lighttpd);
}

#[test]
fn h2o() {
    check_variants(|k| k == ServerKind::H2o);
}

#[test]
fn mini_httpd() {
    check_variants(|k| k == ServerKind::MiniHttpd);
}

#[test]
fn thttpd() {
    check_variants(|k| k == ServerKind::Thttpd);
}

#[test]
fn caddy() {
    check_variants(|k| k == ServerKind::Caddy);
}

#[test]
fn samba() {
    check_variants(|k| k == ServerKind::Samba);
}

/// The router programs of the proxy paths at fixed paths, as the lab gives them their
/// servers (every server address to a balancer, the first to the rest): `proxy-<kind>`
/// without a user, and `proxy-<kind>-www-data` dropping to www-data as the lab does as root.
fn proxy_launches() -> Vec<(String, PathBuf, Launch)> {
    use herd_drivers::{ProxyKind, ProxySpec};
    let spec = |kind: ProxyKind, user: Option<&str>, backends: usize, protocol: Protocol| {
        let backends = ["198.18.2.2:80", "198.18.2.3:80"][..backends]
            .iter()
            .map(|b| b.parse().unwrap())
            .collect();
        ProxySpec {
            kind,
            protocol,
            listen: "198.18.1.1:80".parse().unwrap(),
            backends,
            run_dir: PathBuf::from("/run-dir/router"),
            workers: None,
            user: user.map(str::to_owned),
            programs: herd_drivers::Programs::from_paths([
                ("haproxy", "/usr/sbin/haproxy".into()),
                ("nginx", "/usr/sbin/nginx".into()),
                ("sslh", "/usr/sbin/sslh".into()),
                ("sslh-select", "/usr/sbin/sslh-select".into()),
            ]),
        }
    };
    let mut specs = Vec::new();
    for kind in ProxyKind::ALL {
        let backends = if kind.balances() { 2 } else { 1 };
        specs.push((format!("proxy-{kind}"), spec(kind, None, backends, Protocol::H1)));
        let www_data = spec(kind, Some("www-data"), backends, Protocol::H1);
        specs.push((format!("proxy-{kind}-www-data"), www_data));
    }
    // HAProxy http speaks the protocol itself; the others forward bytes, configured the same
    // for every protocol.
    for protocol in [Protocol::H1Tls, Protocol::H2, Protocol::H2c] {
        let name = with_protocol("proxy-haproxy-http", protocol);
        specs.push((name, spec(ProxyKind::HaproxyHttp, None, 2, protocol)));
    }
    specs
        .into_iter()
        .map(|(name, spec)| {
            let launch =
                herd_drivers::render_proxy(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, spec.run_dir, launch)
        })
        .collect()
}

#[test]
fn proxies() {
    for (name, run_dir, launch) in proxy_launches() {
        goldens().check_dir(&name, &expected_files(&launch, &run_dir));
    }
}

/// Every variant directory belongs to a variant (the golden pages are plain files beside
/// them).
#[test]
fn no_stale_variants() {
    let mut names: Vec<String> = variants().into_iter().map(|v| v.name).collect();
    names.extend(proxy_launches().into_iter().map(|(name, _, _)| name));
    for e in std::fs::read_dir(goldens().path("")).unwrap() {
        let path = e.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !names.contains(&name) {
            if herd_testutil::golden::updating() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                panic!("tests/golden/{name} is no variant any more (UPDATE_GOLDEN=1 removes it)");
            }
        }
    }
}

#[test]
fn no_placeholder_is_left() {
    let servers = variants().into_iter().map(|v| {
        let (_, launch) = v.render();
        (v.name, launch)
    });
    let proxies = proxy_launches().into_iter().map(|(name, _, launch)| (name, launch));
    for (name, launch) in servers.chain(proxies) {
        for f in &launch.files {
            for line in f.contents.lines() {
                let at = line.find('@').map(|i| &line[i + 1..]);
                let placeholder = at.is_some_and(|rest| {
                    let n = rest
                        .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                        .unwrap_or(rest.len());
                    n > 0 && rest[n..].starts_with('@')
                });
                assert!(!placeholder, "{name}: {}: {line}", f.path.display());
            }
        }
    }
}
