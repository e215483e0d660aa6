//! The programs a network path runs on its router, between client and server: HAProxy in
//! http or tcp mode, nginx as a reverse proxy, and sslh (one process per connection, or one
//! process with select(2)). Like the server drivers: a [`ProxySpec`] in, a [`Launch`] out,
//! nothing touched. Configs come from `src/templates/haproxy.cfg` and `nginx-proxy.conf`;
//! sslh takes its command line only.
//!
//! With a user (the lab's `www-data` when it runs as root), each proxy binds its listen address
//! as root and then runs as that user and its group, as the servers' workers do: nginx's
//! workers (`user`), HAProxy itself (`user`/`group`, once it has raised its descriptor limit),
//! sslh (`-u`, once it has written its pid file). Nothing needs the user afterwards: HAProxy
//! writes no file, sslh's pid file is written first, and their output goes to files the lab
//! opened. (The measured prototype ran HAProxy and sslh as root; the forwarding is the same.)
//!
//! Protocols ([`ProxyKind::carries`]): HAProxy tcp and sslh forward bytes, so they carry every
//! protocol over TCP (sslh sends whatever its HTTP probe does not recognise, TLS or the h2c
//! preface, to its one backend all the same) and the server speaks it. HAProxy http speaks the
//! protocol itself on both sides: over TLS with a certificate made for it (ALPN `http/1.1`, or
//! `h2` and `http/1.1`) and TLS again to the server, or h2c (HAProxy 2.6 recognises the h2
//! preface on a clear `bind` in mode http, beside HTTP/1.1) and h2c to the server. nginx as a
//! proxy speaks HTTP/1.x to its backend, so it carries `h1` only; none carries `h3`.
//!
//! Limits of sslh 1.20 that no option changes, worth knowing when reading its results (seen
//! with strace): it listens with a backlog of 50 (`listen(fd, 50)`), so a burst of more than
//! 50 new connections waits for SYN retransmits, which the lab counts on the client; and
//! sslh-select connects to the backend with a blocking connect(2), serving no other
//! connection meanwhile.

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;

use herd_stats::Protocol;

use crate::error::DriverError;
use crate::launch::{Launch, Probe, RenderedFile};
use crate::programs::{Program, Programs, HAPROXY, NGINX, SSLH, SSLH_SELECT};
use crate::run_dir::Places;
use crate::template::fill;
use crate::tls::{self, Layout};
use crate::version::{word_after, VersionProbe};
use crate::READY_FILE;

const HAPROXY_TEMPLATE: &str = include_str!("templates/haproxy.cfg");
const NGINX_TEMPLATE: &str = include_str!("templates/nginx-proxy.conf");

/// A program between client and server on the router host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProxyKind {
    /// HAProxy, `mode http`: parses every request and answer.
    HaproxyHttp,
    /// HAProxy, `mode tcp`: copies bytes both ways.
    HaproxyTcp,
    /// nginx with `proxy_pass`: HTTP/1.0 to the backend, a connection per request.
    NginxProxy,
    /// sslh-fork: a process per connection.
    SslhFork,
    /// sslh-select: one process, select(2).
    SslhSelect,
}

/// Everything a proxy driver needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySpec {
    pub kind: ProxyKind,
    /// What the client speaks through the proxy, and the servers behind it speak (see
    /// [`ProxyKind::carries`]). HAProxy http over TLS gets a certificate made for it
    /// ([`Launch::tls`]).
    pub protocol: Protocol,
    /// Where the proxy listens (the router's address on the client's side). Port 0 refused.
    pub listen: SocketAddr,
    /// The real servers, round robin where the kind balances (`ProxyKind::balances`);
    /// nginx-proxy and sslh take exactly one.
    pub backends: Vec<SocketAddr>,
    /// The proxy's own directory, absolute, existing and empty (same rules as a server's).
    pub run_dir: PathBuf,
    /// Processes or threads; None keeps the program's default (nginx `auto`, HAProxy one
    /// thread per CPU it may run on). sslh has no such setting.
    pub workers: Option<NonZeroU32>,
    /// Whom the proxy runs as once it has bound `listen` (`Some("www-data")` when the lab runs
    /// as root), with the group of the same name: nginx's workers, HAProxy, sslh. None: the
    /// lab's own user.
    pub user: Option<String>,
    pub programs: Programs,
}

impl ProxyKind {
    pub const ALL: [ProxyKind; 5] = [
        ProxyKind::HaproxyHttp,
        ProxyKind::HaproxyTcp,
        ProxyKind::NginxProxy,
        ProxyKind::SslhFork,
        ProxyKind::SslhSelect,
    ];

    /// As the path is named: `haproxy-http`, `haproxy-tcp`, `nginx-proxy`, `sslh-fork`,
    /// `sslh-select`.
    pub fn name(self) -> &'static str {
        match self {
            ProxyKind::HaproxyHttp => "haproxy-http",
            ProxyKind::HaproxyTcp => "haproxy-tcp",
            ProxyKind::NginxProxy => "nginx-proxy",
            ProxyKind::SslhFork => "sslh-fork",
            ProxyKind::SslhSelect => "sslh-select",
        }
    }

    /// The program it runs.
    pub fn program(self) -> &'static Program {
        match self {
            ProxyKind::HaproxyHttp | ProxyKind::HaproxyTcp => &HAPROXY,
            ProxyKind::NginxProxy => &NGINX,
            ProxyKind::SslhFork => &SSLH,
            ProxyKind::SslhSelect => &SSLH_SELECT,
        }
    }

    fn is_sslh(self) -> bool {
        matches!(self, ProxyKind::SslhFork | ProxyKind::SslhSelect)
    }

    /// `Ok` when a client can speak `protocol` to a server through this proxy; otherwise why
    /// not.
    pub fn carries(self, protocol: Protocol) -> Result<(), &'static str> {
        match (self, protocol) {
            (ProxyKind::NginxProxy, Protocol::H1) => Ok(()),
            (ProxyKind::NginxProxy, _) => Err(
                "nginx's proxy_pass speaks HTTP/1.x to the server: carry it through haproxy-http, \
                 haproxy-tcp or sslh",
            ),
            (ProxyKind::HaproxyHttp | ProxyKind::HaproxyTcp, Protocol::H3) => {
                Err("Debian 12's HAProxy 2.6 is built without QUIC, so it has no HTTP/3")
            }
            (ProxyKind::SslhFork | ProxyKind::SslhSelect, Protocol::H3) => {
                Err("sslh forwards TCP, and HTTP/3 runs over UDP")
            }
            (_, Protocol::H1 | Protocol::H1Tls | Protocol::H2 | Protocol::H2c) => Ok(()),
        }
    }

    /// Whether it balances over several backends (HAProxy's roundrobin). sslh takes one;
    /// nginx could take several, but a path's nginx proxy forwards to one server, as the
    /// articles' did.
    pub fn balances(self) -> bool {
        matches!(self, ProxyKind::HaproxyHttp | ProxyKind::HaproxyTcp)
    }
}

impl fmt::Display for ProxyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Renders `spec` into what the lab writes and starts on the router.
pub fn render_proxy(spec: &ProxySpec) -> Result<Launch, DriverError> {
    if spec.listen.port() == 0 {
        return Err(DriverError::PortZero { addr: spec.listen });
    }
    spec.kind.carries(spec.protocol).map_err(|why| DriverError::ProtocolNotSupported {
        server: spec.kind.name().to_owned(),
        protocol: spec.protocol,
        why,
    })?;
    if spec.backends.is_empty() {
        return Err(DriverError::NoBackends { proxy: spec.kind.name() });
    }
    if let Some(port0) = spec.backends.iter().find(|b| b.port() == 0) {
        return Err(DriverError::PortZero { addr: *port0 });
    }
    // What does not balance forwards to one server: the lab gives it one, and a second
    // would be a setup nobody measures (nginx would also need a shared upstream zone).
    if !spec.kind.balances() && spec.backends.len() > 1 {
        return Err(DriverError::OneBackendOnly {
            proxy: spec.kind.name(),
            given: spec.backends.len(),
        });
    }
    if spec.kind.is_sslh() {
        if let Some(n) = spec.workers {
            return Err(DriverError::WorkersNotSupported {
                server: spec.kind.name().to_owned(),
                workers: n.get(),
                why: "sslh has no worker setting (sslh-fork forks per connection, sslh-select is one process)",
            });
        }
    }
    let places = Places::for_run_dir(&spec.run_dir, spec.user.as_deref())?;
    let exe = spec.programs.path(spec.kind.program(), spec.kind)?.to_owned();
    // The backend serves the file, so an answer through the proxy checks the whole way: over
    // TLS with TLS (every server here offers http/1.1 too), and over h2c with h2c, which every
    // h2c server speaks (nginx's nothing else).
    let over = match spec.protocol {
        Protocol::H1 => Protocol::H1,
        Protocol::H1Tls | Protocol::H2 | Protocol::H3 => Protocol::H1Tls,
        Protocol::H2c => Protocol::H2c,
    };
    let ready = Probe::Http { addr: spec.listen, path: format!("/{READY_FILE}"), protocol: over };
    match spec.kind {
        ProxyKind::HaproxyHttp | ProxyKind::HaproxyTcp => haproxy(spec, &places, exe, ready),
        ProxyKind::NginxProxy => nginx(spec, &places, exe, ready),
        ProxyKind::SslhFork | ProxyKind::SslhSelect => Ok(sslh(spec, &places, exe, ready)),
    }
}

/// The programs `kind` needs (for `Programs::locate`).
pub fn proxy_programs_needed(kind: ProxyKind) -> Vec<&'static Program> {
    vec![kind.program()]
}

fn haproxy(
    spec: &ProxySpec,
    places: &Places,
    exe: PathBuf,
    ready: Probe,
) -> Result<Launch, DriverError> {
    let conf = places.path("conf/haproxy.cfg");
    let http = spec.kind == ProxyKind::HaproxyHttp;
    let mode = if http { "http" } else { "tcp" };
    let user = places.user.as_ref().map(|u| format!("user {u}\ngroup {u}")).unwrap_or_default();
    let threads = spec.workers.map(|n| format!("nbthread {n}")).unwrap_or_default();
    // In tcp mode the bytes pass, whatever the protocol; in http mode HAProxy speaks it.
    let tls = if http && spec.protocol.is_encrypted() {
        Some(tls::for_listener(spec.kind.name(), spec.listen.ip(), places, Layout::AlsoTogether)?)
    } else {
        None
    };
    let (bind_options, server_options) = match (http, spec.protocol, &tls) {
        (true, Protocol::H1Tls, Some(t)) => {
            (format!(" ssl crt {} alpn http/1.1", t.cert_and_key), SERVER_TLS_H1)
        }
        (true, Protocol::H2, Some(t)) => {
            (format!(" ssl crt {} alpn h2,http/1.1", t.cert_and_key), SERVER_TLS_H2)
        }
        (true, Protocol::H2c, _) => (String::new(), " proto h2"),
        _ => (String::new(), ""),
    };
    let servers: Vec<String> = spec
        .backends
        .iter()
        .enumerate()
        .map(|(i, b)| format!("server s{} {b}{server_options}", i + 1))
        .collect();
    let servers = match server_options {
        "" => servers.join("\n"),
        _ => format!("{}\n{}", SERVER_OPTIONS_WHY, servers.join("\n")),
    };
    let contents = fill(
        "templates/haproxy.cfg",
        HAPROXY_TEMPLATE,
        &[
            ("USER", &user),
            ("THREADS", &threads),
            ("MODE", mode),
            ("LISTEN", &spec.listen.to_string()),
            ("BIND_OPTIONS", &bind_options),
            ("SERVERS", &servers),
        ],
    )?;
    let conf_arg: OsString = conf.clone().into();
    let process = places
        .process("haproxy", vec![exe.clone().into(), "-db".into(), "-f".into(), conf_arg.clone()]);
    Ok(Launch {
        files: vec![RenderedFile { path: conf, contents }],
        dirs: places.dirs(if tls.is_some() {
            &["conf", "logs", tls::DIR]
        } else {
            &["conf", "logs"]
        }),
        tls: tls.map(|t| t.files),
        validate: vec![vec![exe.clone().into(), "-c".into(), "-q".into(), "-f".into(), conf_arg]],
        versions: vec![VersionProbe::new(HAPROXY.name, exe, "-v", parse_haproxy_version)],
        ..Launch::new(process, ready)
    })
}

/// HAProxy http's server lines over TLS: to the server's own TLS listener, whose certificate
/// another CA made (the server's launch), so not checked here; the client checks HAProxy's.
const SERVER_TLS_H1: &str = " ssl verify none alpn http/1.1";
const SERVER_TLS_H2: &str = " ssl verify none alpn h2";
const SERVER_OPTIONS_WHY: &str =
    "# The servers speak the protocol the client does: h2c, or TLS (their certificates come
# from their own launches, so HAProxy does not check them; the client checks HAProxy's).";

fn nginx(
    spec: &ProxySpec,
    places: &Places,
    exe: PathBuf,
    ready: Probe,
) -> Result<Launch, DriverError> {
    let conf = places.path("conf/nginx-proxy.conf");
    let error_log = places.path("logs/nginx-error.log");
    let user = places.user.as_ref().map(|u| format!("user {u};")).unwrap_or_default();
    let workers = spec.workers.map_or_else(|| "auto".to_owned(), |n| n.to_string());
    let servers: Vec<String> = spec.backends.iter().map(|b| format!("server {b};")).collect();
    let contents = fill(
        "templates/nginx-proxy.conf",
        NGINX_TEMPLATE,
        &[
            ("RUN", places.run()),
            ("USER", &user),
            ("WORKERS", &workers),
            ("LISTEN", &spec.listen.to_string()),
            ("SERVERS", &servers.join("\n")),
        ],
    )?;
    let args = |first: Vec<OsString>| -> Vec<OsString> {
        let mut v = first;
        v.extend(["-e".into(), error_log.clone().into(), "-c".into(), conf.clone().into()]);
        v
    };
    let process = places.process("nginx-proxy", args(vec![exe.clone().into()]));
    Ok(Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(&["conf", "logs", "run", "tmp"]),
        // Its workers write request bodies and proxied answers there after dropping privileges.
        user_dirs: if places.user.is_some() { places.dirs(&["tmp"]) } else { Vec::new() },
        validate: vec![args(vec![exe.clone().into(), "-t".into()])],
        versions: vec![VersionProbe::new(NGINX.name, exe, "-v", crate::nginx::parse_version)],
        ..Launch::new(process, ready)
    })
}

fn sslh(spec: &ProxySpec, places: &Places, exe: PathBuf, ready: Probe) -> Launch {
    let program = spec.kind.program();
    // -f: foreground (else it daemonizes and the PID is lost); -n: numeric logging, no
    // reverse DNS per connection; --http: where the HTTP probe sends a connection.
    let mut argv: Vec<OsString> = vec![
        exe.clone().into(),
        "-f".into(),
        "-n".into(),
        "-p".into(),
        spec.listen.to_string().into(),
        "--http".into(),
        spec.backends[0].to_string().into(),
        "-P".into(),
        places.path("run/sslh.pid").into(),
    ];
    // -u: sslh binds and writes its pid file as root, then drops its supplementary groups and
    // takes the user's gid and uid (seen with strace). Without -u it stays root.
    if let Some(user) = &places.user {
        argv.extend(["-u".into(), user.into()]);
    }
    // sslh 1.20 has no config check: the readiness probe through it is the check.
    Launch {
        dirs: places.dirs(&["logs", "run"]),
        versions: vec![VersionProbe::new(program.name, exe, "-V", parse_sslh_version)],
        ..Launch::new(places.process(spec.kind.name(), argv), ready)
    }
}

/// `HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/` → `HAProxy 2.6.12-1+deb12u4`.
fn parse_haproxy_version(output: &str) -> Option<String> {
    word_after(output, "HAProxy version").map(|v| format!("HAProxy {v}"))
}

/// `sslh-fork 1.20-1+deb12u1` → as is (the flavour and the version).
fn parse_sslh_version(output: &str) -> Option<String> {
    let line = output.lines().map(str::trim).find(|l| l.starts_with("sslh"))?;
    let mut words = line.split_whitespace();
    let (name, version) = (words.next()?, words.next()?);
    let version = version.trim_start_matches('v');
    version.starts_with(|c: char| c.is_ascii_digit()).then(|| format!("{name} {version}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn proxy_spec(kind: ProxyKind) -> ProxySpec {
        ProxySpec {
            kind,
            protocol: Protocol::H1,
            listen: "198.18.1.1:80".parse().unwrap(),
            backends: vec!["198.18.2.2:80".parse().unwrap()],
            run_dir: "/run-dir/router".into(),
            workers: None,
            user: Some("www-data".into()),
            programs: Programs::from_paths([
                ("haproxy", "/usr/sbin/haproxy".into()),
                ("nginx", "/usr/sbin/nginx".into()),
                ("sslh", "/usr/sbin/sslh".into()),
                ("sslh-select", "/usr/sbin/sslh-select".into()),
            ]),
        }
    }

    #[test]
    fn every_kind_renders_under_its_run_dir_with_its_probe() {
        for kind in ProxyKind::ALL {
            let mut s = proxy_spec(kind);
            if kind.balances() {
                s.backends.push("198.18.2.3:80".parse().unwrap());
            }
            let l = render_proxy(&s).unwrap();
            let under = |p: &std::path::Path| p.starts_with(&s.run_dir);
            assert!(l.files.iter().all(|f| under(&f.path)), "{kind}");
            assert!(l.dirs.iter().all(|d| under(d)), "{kind}");
            assert!(l.processes.iter().all(|p| under(&p.log)), "{kind}");
            let probe = Probe::Http {
                addr: s.listen,
                path: "/herd-ready.txt".into(),
                protocol: Protocol::H1,
            };
            assert_eq!(l.ready, probe, "{kind}");
            assert_eq!(l.processes.last().unwrap().ready.as_ref(), Some(&probe), "{kind}");
            let text: String = l.files.iter().map(|f| f.contents.as_str()).collect::<String>()
                + &l.processes
                    .iter()
                    .flat_map(|p| p.argv.iter())
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ");
            let mut at = 0;
            for b in &s.backends {
                let found = text[at..]
                    .find(&b.to_string())
                    .unwrap_or_else(|| panic!("{kind}: {b} in {text}"));
                at += found;
            }
            assert!(!text.contains('@'), "{kind}: a placeholder is left: {text}");
        }
    }

    #[test]
    fn haproxy_modes_and_threads() {
        let mut s = proxy_spec(ProxyKind::HaproxyTcp);
        s.workers = NonZeroU32::new(2);
        let l = render_proxy(&s).unwrap();
        let conf = &l.files[0].contents;
        assert!(conf.contains("mode tcp") && conf.contains("nbthread 2"), "{conf}");
        assert!(conf.contains("bind 198.18.1.1:80") && conf.contains("server s1 198.18.2.2:80"));
        let http = render_proxy(&proxy_spec(ProxyKind::HaproxyHttp)).unwrap();
        assert!(http.files[0].contents.contains("mode http"));
        assert!(!http.files[0].contents.contains("nbthread"));
    }

    /// The lines of a config that are not comments, trimmed.
    fn directives(conf: &str) -> impl Iterator<Item = &str> {
        conf.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'))
    }

    #[test]
    fn each_proxy_drops_to_the_user_only_when_given_one() {
        let argv = |s: &ProxySpec| {
            let l = render_proxy(s).unwrap();
            l.processes[0].argv.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>()
        };
        let haproxy = proxy_spec(ProxyKind::HaproxyHttp);
        let conf = render_proxy(&haproxy).unwrap().files[0].contents.clone();
        assert!(conf.contains("\nglobal\n"), "{conf}");
        assert!(conf.contains("\n    user www-data\n    group www-data\n"), "{conf}");
        let conf =
            render_proxy(&ProxySpec { user: None, ..haproxy }).unwrap().files[0].contents.clone();
        let set = |word: &str| directives(&conf).any(|l| l.starts_with(word));
        assert!(!set("user ") && !set("group "), "{conf}");

        for kind in [ProxyKind::SslhFork, ProxyKind::SslhSelect] {
            let sslh = proxy_spec(kind);
            assert!(argv(&sslh).ends_with(&["-u".into(), "www-data".into()]), "{kind}");
            assert!(!argv(&ProxySpec { user: None, ..sslh }).contains(&"-u".into()), "{kind}");
        }

        let nginx = proxy_spec(ProxyKind::NginxProxy);
        let conf = render_proxy(&nginx).unwrap().files[0].contents.clone();
        assert!(conf.contains("\nuser www-data;\n"), "{conf}");
        let conf =
            render_proxy(&ProxySpec { user: None, ..nginx }).unwrap().files[0].contents.clone();
        assert!(!conf.contains("\nuser "), "{conf}");
    }

    #[test]
    fn what_does_not_balance_takes_one_backend() {
        for kind in ProxyKind::ALL.into_iter().filter(|k| !k.balances()) {
            let mut s = proxy_spec(kind);
            s.backends.push("198.18.2.3:80".parse().unwrap());
            let err = render_proxy(&s).unwrap_err().to_string();
            assert!(err.contains("forwards to one server (2 given)"), "{kind}: {err}");
        }
    }

    /// SocketAddr's IPv6 text (`[::1]:80`) is what each program reads: nginx and HAProxy
    /// take it in their configs (validate.rs has them check it), sslh splits at the last colon
    /// and strips the brackets (resolve_name and resolve_split_name in its common.c; the live
    /// tests run on 127.0.0.1 only).
    #[test]
    fn ipv6_addresses_keep_their_brackets() {
        for kind in ProxyKind::ALL {
            let mut s = proxy_spec(kind);
            s.listen = "[::1]:8080".parse().unwrap();
            s.backends = vec!["[::1]:8081".parse().unwrap()];
            let l = render_proxy(&s).unwrap();
            let text: String = l.files.iter().map(|f| f.contents.as_str()).collect::<String>()
                + &l.processes[0]
                    .argv
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ");
            let (listen, backend) = match kind {
                ProxyKind::HaproxyHttp | ProxyKind::HaproxyTcp => {
                    ("bind [::1]:8080\n", "server s1 [::1]:8081\n")
                }
                ProxyKind::NginxProxy => ("listen [::1]:8080;", "server [::1]:8081;"),
                ProxyKind::SslhFork | ProxyKind::SslhSelect => {
                    ("-p [::1]:8080 ", "--http [::1]:8081 ")
                }
            };
            assert!(text.contains(listen) && text.contains(backend), "{kind}: {text}");
            assert_eq!(
                l.ready,
                Probe::Http {
                    addr: s.listen,
                    path: "/herd-ready.txt".into(),
                    protocol: Protocol::H1
                }
            );
        }
    }

    #[test]
    fn bad_specs_are_refused_with_the_reason() {
        let mut two = proxy_spec(ProxyKind::SslhFork);
        two.backends.push("198.18.2.3:80".parse().unwrap());
        let err = render_proxy(&two).unwrap_err().to_string();
        assert!(err.contains("sslh-fork forwards to one server"), "{err}");
        let mut workers = proxy_spec(ProxyKind::SslhSelect);
        workers.workers = NonZeroU32::new(4);
        assert!(matches!(render_proxy(&workers), Err(DriverError::WorkersNotSupported { .. })));
        let mut none = proxy_spec(ProxyKind::HaproxyHttp);
        none.backends.clear();
        assert!(render_proxy(&none).unwrap_err().to_string().contains("no backend"));
        let mut port0 = proxy_spec(ProxyKind::NginxProxy);
        port0.listen = "198.18.1.1:0".parse().unwrap();
        assert!(matches!(render_proxy(&port0), Err(DriverError::PortZero { .. })));
        let mut missing = proxy_spec(ProxyKind::HaproxyTcp);
        missing.programs = Programs::default();
        assert!(render_proxy(&missing).unwrap_err().to_string().contains("haproxy"));
    }

    #[test]
    fn what_each_proxy_carries() {
        use Protocol::{H1Tls, H2c, H1, H2, H3};
        for kind in ProxyKind::ALL {
            let carried: Vec<_> =
                Protocol::ALL.iter().copied().filter(|&p| kind.carries(p).is_ok()).collect();
            let want: &[Protocol] =
                if kind == ProxyKind::NginxProxy { &[H1] } else { &[H1, H1Tls, H2, H2c] };
            assert_eq!(carried, want, "{kind}");
            let mut s = proxy_spec(kind);
            s.protocol = H3;
            let err = render_proxy(&s).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("{kind} cannot serve h3 (HTTP/3 over QUIC): ")),
                "{err}"
            );
        }
        let mut s = proxy_spec(ProxyKind::NginxProxy);
        s.protocol = H2;
        let err = render_proxy(&s).unwrap_err().to_string();
        assert!(err.contains("proxy_pass speaks HTTP/1.x"), "{err}");
    }

    #[test]
    fn haproxy_http_speaks_the_protocol_on_both_sides() {
        let conf = |kind, protocol| {
            let l = render_proxy(&ProxySpec { protocol, ..proxy_spec(kind) }).unwrap();
            (l.files[0].contents.clone(), l.tls, l.ready)
        };
        let (c, tls, ready) = conf(ProxyKind::HaproxyHttp, Protocol::H2);
        let crt = "/run-dir/router/tls/cert-and-key.pem";
        assert!(c.contains(&format!("bind 198.18.1.1:80 ssl crt {crt} alpn h2,http/1.1\n")), "{c}");
        assert!(c.contains("server s1 198.18.2.2:80 ssl verify none alpn h2\n"), "{c}");
        let tls = tls.unwrap();
        assert_eq!(tls.ca, std::path::Path::new("/run-dir/router/tls/ca.pem"));
        assert!(tls.files.iter().any(|f| f.path == std::path::Path::new(crt)));
        assert!(matches!(ready, Probe::Http { protocol: Protocol::H1Tls, .. }));

        let (c, _, _) = conf(ProxyKind::HaproxyHttp, Protocol::H1Tls);
        assert!(c.contains(&format!("ssl crt {crt} alpn http/1.1\n")), "{c}");
        assert!(c.contains("server s1 198.18.2.2:80 ssl verify none alpn http/1.1\n"), "{c}");

        let (c, tls, ready) = conf(ProxyKind::HaproxyHttp, Protocol::H2c);
        assert!(
            c.contains("bind 198.18.1.1:80\n") && c.contains("server s1 198.18.2.2:80 proto h2\n")
        );
        assert!(tls.is_none());
        assert!(matches!(ready, Probe::Http { protocol: Protocol::H2c, .. }));

        // In tcp mode the bytes pass: the same config for every protocol, no certificate.
        let (h1, _, _) = conf(ProxyKind::HaproxyTcp, Protocol::H1);
        for p in [Protocol::H1Tls, Protocol::H2, Protocol::H2c] {
            let (c, tls, _) = conf(ProxyKind::HaproxyTcp, p);
            assert_eq!((c.as_str(), tls.is_none()), (h1.as_str(), true), "{p}");
        }
    }

    #[test]
    fn versions_from_real_outputs() {
        assert_eq!(
            parse_haproxy_version("HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/\nStatus: long-term"),
            Some("HAProxy 2.6.12-1+deb12u4".into())
        );
        assert_eq!(
            parse_sslh_version("sslh-fork 1.20-1+deb12u1\n"),
            Some("sslh-fork 1.20-1+deb12u1".into())
        );
        assert_eq!(parse_sslh_version("sslh-select v1.21\n"), Some("sslh-select 1.21".into()));
        for junk in ["", "usage: sslh", "HAProxy version unknown"] {
            assert_eq!(parse_haproxy_version(junk), None, "{junk}");
            assert_eq!(parse_sslh_version(junk), None, "{junk}");
        }
    }
}
