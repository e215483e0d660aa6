//! Server drivers for herd's lab: how to configure, start, check and identify each web server
//! the lab measures. Drivers are pure: a spec in, files, command lines and probes out. They
//! never write a file, start a process or open a socket; the lab does all of that.
//!
//! # Brief overview
//!
//! A [`ServerSpec`] names the server ([`ServerKind`], Apache with its [`Mpm`]), its PHP setup
//! ([`Php`]: php-fpm or php-cgi, see [`php_choices`]), the [`Protocol`] it serves (see
//! [`ServerKind::supports`]), the listen address, the docroot, the server's own run_dir, the
//! worker count, the unprivileged user, the requests per kept-alive connection and sendfile
//! where the server has them ([`ServerKind::takes_keepalive_requests`],
//! [`ServerKind::takes_sendfile`]; refused where not), and the [`Programs`] found by
//! [`Programs::locate`] (which [`programs_needed`] lists). [`render`] turns it into a [`Launch`]: the
//! [`RenderedFile`]s and directories to create, the [`ProcessSpec`]s to start in order (php-fpm
//! before nginx), the [`Probe`] that says the front server is ready (`GET /`[`READY_FILE`]),
//! with TLS the certificate made for it and the CA the client trusts ([`TlsFiles`]), the
//! servers' own config checks, and a [`VersionProbe`] per program. Samba's smbd is the one
//! server without HTTP: it serves the share [`SAMBA_SHARE`] over SMB, is ready when its port
//! accepts ([`Probe::Tcp`]), and refuses every HTTP protocol ([`ServerKind::speaks_http`]).
//! Every server runs in the foreground as the lab's child and keeps everything (pid files,
//! error logs, temporary files, sockets, mutexes) under its run_dir.
//!
//! The computed pages have the same bytes on every server: herd serve's `/9x9`, `/include`
//! and `/echo`, and the PHP pages in [`php_pages`]; [`page_path`] says where a [`Page`] is.
//!
//! # Module map
//!
//! - `spec`, `programs`, `launch`, `version`, `error`: the types above.
//! - `access_log`: the optional access log's place and format, and its reader.
//! - One driver per server: `herd`, `nginx`, `apache`, `lighttpd`, `h2o`, `mini_httpd`,
//!   `thttpd` (sthttpd, built by `scripts/build-thttpd.sh`), `caddy`, `samba` (smbd: SMB file
//!   serving for netbench, no HTTP), plus `php_fpm` (the pool nginx and Apache use) and `php_cgi` (the program Apache
//!   and lighttpd run per request). Their configs are templates in `src/templates/`, filled by
//!   `template`.
//! - `run_dir`: the layout under a run_dir (conf/, logs/, run/, tmp/, tls/) and the checks that
//!   make a path safe to write into a config file.
//! - `pages`: [`Page`], [`page_path`], and the PHP sources (`src/php/`).
//! - `tls`: the certificate of a TLS listener, made for each launch, and its files.
//! - `proxy`: the router's programs of a network path ([`ProxyKind`]: HAProxy http/tcp,
//!   nginx as a reverse proxy, sslh fork/select), [`render_proxy`] from a [`ProxySpec`].
//!
//! An access log is written only when the spec asks for it (`access_log`: off in the lab,
//! which measures servers, not their logging); [`parse_access_log`] reads it back.
//!
//! Not here: starting, stopping or waiting for processes (the lab), speaking TLS or HTTP/2
//! (the servers do; the drivers only configure them).

mod access_log;
mod apache;
mod caddy;
mod error;
mod h2o;
mod herd;
mod launch;
mod lighttpd;
mod mini_httpd;
mod nginx;
mod pages;
mod php_cgi;
mod php_fpm;
mod programs;
mod proxy;
mod run_dir;
mod samba;
mod spec;
mod tbench;
mod template;
#[cfg(test)]
mod testing;
mod thttpd;
mod tls;
mod version;

pub use access_log::{
    herd_serve_own_line, parse as parse_access_log, AccessLog, BadLine, LogFormat, Logged,
};
pub use error::DriverError;
/// herd's one protocol vocabulary, re-exported for the specs' `protocol`.
pub use herd_stats::Protocol;
pub use launch::{Detached, Launch, Probe, ProcessSpec, RenderedFile, TlsFiles};
pub use pages::{page_path, php_pages, Page};
pub use programs::THTTPD;
pub use programs::{programs_needed, Install, Program, Programs, ALL_PROGRAMS};
pub use programs::{APACHE2, CADDY, H2O, HERD, LIGHTTPD, MINI_HTTPD, NGINX, PHP_CGI, PHP_FPM};
pub use programs::{HAPROXY, LIGHTTPD_TLS_MODULE, SMBD, SSLH, SSLH_SELECT, TBENCH_SRV, TESTPARM};
pub use proxy::{proxy_programs_needed, render_proxy, ProxyKind, ProxySpec};
pub use samba::{SHARE as SAMBA_SHARE, SHARES as SAMBA_SHARES};
pub use spec::{check_php, check_protocol, php_choices, Mpm, Php, ServerKind, ServerSpec};
pub use tbench::PORT as TBENCH_PORT;
pub use version::VersionProbe;

/// The file every server is probed for: the lab writes it into the docroot, and a server is
/// ready when `GET /herd-ready.txt` on its listen address answers 200.
pub const READY_FILE: &str = "herd-ready.txt";

/// Renders `spec` into what the lab writes and starts.
///
/// Fails for a PHP setup or a protocol the server does not have, a program missing from
/// `spec.programs`, listen port 0, a worker count for mini_httpd or thttpd, a
/// `keepalive_requests` or `sendfile` the server has no setting for, or a run_dir, docroot or user
/// that cannot be written safely into a config file.
/// A samba or tbench spec's `protocol` is not read: smbd speaks SMB and tbench_srv plain TCP, which herd's HTTP vocabulary has no
/// word for, and [`check_protocol`] refuses every HTTP protocol for it (the lab asks before
/// it gives samba a workload).
pub fn render(spec: &ServerSpec) -> Result<Launch, DriverError> {
    check_php(spec.kind, spec.php)?;
    if spec.kind.speaks_http() {
        check_protocol(spec.kind, spec.protocol)?;
    }
    if spec.listen.port() == 0 {
        return Err(DriverError::PortZero { addr: spec.listen });
    }
    check_settings(spec)?;
    let places = run_dir::Places::new(spec)?;
    match spec.kind {
        ServerKind::Herd => herd::render(spec, &places),
        ServerKind::Nginx => nginx::render(spec, &places),
        ServerKind::Apache(mpm) => apache::render(spec, mpm, &places),
        ServerKind::Lighttpd => lighttpd::render(spec, &places),
        ServerKind::H2o => h2o::render(spec, &places),
        ServerKind::MiniHttpd => mini_httpd::render(spec, &places),
        ServerKind::Thttpd => thttpd::render(spec, &places),
        ServerKind::Caddy => caddy::render(spec, &places),
        ServerKind::Samba => samba::render(spec, &places),
        ServerKind::Tbench => tbench::render(spec, &places),
        ServerKind::External => Err(DriverError::External),
    }
}

/// `Ok` unless the spec sets `keepalive_requests` or `sendfile` for a server without that
/// setting ([`ServerKind::takes_keepalive_requests`], [`ServerKind::takes_sendfile`]): a
/// driver never drops a setting it was asked for.
fn check_settings(spec: &ServerSpec) -> Result<(), DriverError> {
    let asked = [
        (
            "keepalive_requests",
            spec.keepalive_requests.is_some(),
            spec.kind.takes_keepalive_requests(),
        ),
        ("sendfile", spec.sendfile.is_some(), spec.kind.takes_sendfile()),
    ];
    for (setting, set, takes) in asked {
        if let (true, Err(why)) = (set, takes) {
            let server = spec.kind.name().to_owned();
            return Err(DriverError::SettingNotSupported { server, setting, why });
        }
    }
    Ok(())
}

/// The front server's readiness probe: `GET /READY_FILE` on the listen address, over
/// HTTP/1.1 in the clear or over TLS (every TLS listener here also offers `http/1.1`), and in
/// the clear on an h2c listener, which here also speaks HTTP/1.1 (nginx's does not, and says
/// so with [`probe_over`]).
fn ready_probe(spec: &ServerSpec) -> Probe {
    let over = match spec.protocol {
        Protocol::H1Tls | Protocol::H2 | Protocol::H3 => Protocol::H1Tls,
        Protocol::H1 | Protocol::H2c => Protocol::H1,
    };
    probe_over(spec, over)
}

/// `GET /READY_FILE` on the listen address over `protocol`.
fn probe_over(spec: &ServerSpec, protocol: Protocol) -> Probe {
    Probe::Http { addr: spec.listen, path: format!("/{READY_FILE}"), protocol }
}

/// The refusal of a protocol that a driver has no configuration for. [`render`] checks
/// [`ServerKind::supports`] first, so this is reached only if a driver and that table disagree.
fn unsupported(spec: &ServerSpec) -> DriverError {
    DriverError::ProtocolNotSupported {
        server: spec.kind.name().to_owned(),
        protocol: spec.protocol,
        why: spec
            .kind
            .supports(spec.protocol)
            .err()
            .unwrap_or("its driver has no configuration for it"),
    }
}

/// The certificate of `spec`'s listener when its protocol has TLS.
fn tls_for(
    spec: &ServerSpec,
    places: &run_dir::Places,
    layout: tls::Layout,
) -> Result<Option<tls::ServerTls>, DriverError> {
    if !spec.protocol.is_encrypted() {
        return Ok(None);
    }
    tls::for_listener(spec.kind.name(), spec.listen.ip(), places, layout).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::spec;

    #[test]
    fn unsupported_php_is_refused_before_anything_else() {
        let mut s = spec(ServerKind::MiniHttpd, Some(Php::Cgi));
        s.run_dir = "relative".into();
        assert!(matches!(render(&s), Err(DriverError::PhpNotSupported { .. })));
        for (kind, php) in [
            (ServerKind::Nginx, Php::Cgi),
            (ServerKind::Herd, Php::Fpm),
            (ServerKind::H2o, Php::Cgi),
            (ServerKind::Lighttpd, Php::Fpm),
        ] {
            let err = render(&spec(kind, Some(php))).unwrap_err();
            match &err {
                DriverError::PhpNotSupported { server, php: p } => {
                    assert_eq!((*server, *p), (kind, php));
                }
                other => panic!("{other:?}"),
            }
            assert!(err.to_string().contains("the valid choices are nginx + php-fpm"), "{err}");
        }
    }

    #[test]
    fn port_zero_and_bad_paths_are_refused() {
        let mut s = spec(ServerKind::Nginx, None);
        s.listen = "127.0.0.1:0".parse().unwrap();
        assert!(matches!(render(&s), Err(DriverError::PortZero { .. })));
        let mut s = spec(ServerKind::H2o, None);
        s.docroot = "/srv/my site".into();
        assert!(matches!(render(&s), Err(DriverError::UnsafePath { what: "docroot", .. })));
        let mut s = spec(ServerKind::Lighttpd, None);
        s.run_dir = "run".into();
        assert!(matches!(render(&s), Err(DriverError::RelativePath { what: "run_dir", .. })));
        let mut s = spec(ServerKind::Apache(Mpm::Event), None);
        s.user = Some("www data".into());
        assert!(matches!(render(&s), Err(DriverError::UnsafeUser { .. })));
    }

    #[test]
    fn a_program_missing_from_the_spec_is_named() {
        let mut s = spec(ServerKind::Nginx, Some(Php::Fpm));
        s.programs = Programs::from_paths([("nginx", "/usr/sbin/nginx".into())]);
        let err = render(&s).unwrap_err();
        assert!(
            matches!(err, DriverError::ProgramNotLocated { program: "php-fpm8.2", .. }),
            "{err}"
        );
    }

    #[test]
    fn every_launch_stays_under_its_run_dir() {
        let kinds = [
            (ServerKind::Herd, None),
            (ServerKind::Nginx, Some(Php::Fpm)),
            (ServerKind::Apache(Mpm::Event), Some(Php::Cgi)),
            (ServerKind::Apache(Mpm::Prefork), Some(Php::Fpm)),
            (ServerKind::Lighttpd, Some(Php::Cgi)),
            (ServerKind::H2o, None),
            (ServerKind::MiniHttpd, None),
            (ServerKind::Thttpd, None),
            (ServerKind::Caddy, None),
        ];
        for (kind, php) in kinds {
            for protocol in kind.protocols() {
                let mut s = spec(kind, php);
                s.user = Some("www-data".into());
                s.protocol = protocol;
                check_launch(&s, &format!("{kind} over {protocol}"));
            }
        }
    }

    /// samba has no HTTP protocol to walk, so it is checked once, with and without a user.
    #[test]
    fn samba_stays_under_its_run_dir() {
        for user in [None, Some("www-data")] {
            let mut s = spec(ServerKind::Samba, None);
            s.user = user.map(str::to_owned);
            let l = render(&s).unwrap();
            let under = |p: &std::path::Path| p.starts_with(&s.run_dir);
            assert!(l.files.iter().all(|f| under(&f.path)));
            assert!(l.dirs.iter().all(|d| under(d)));
            assert!(l.user_dirs.iter().all(|d| l.dirs.contains(d)));
            assert!(l.shared_dirs.iter().all(|d| l.dirs.contains(d)));
            let p = &l.processes[0];
            assert!(under(&p.log) && p.stop_signal == libc::SIGTERM);
            assert!(p.detached.iter().all(|d| under(&d.pid_file)));
            assert!(l.tls.is_none());
            assert_eq!(l.ready, Probe::Tcp(s.listen));
            let programs: Vec<_> = l.versions.iter().map(|v| v.program.as_str()).collect();
            assert_eq!(programs, ["smbd", "testparm"]);
        }
    }

    fn check_launch(s: &ServerSpec, what: &str) {
        let l = render(s).unwrap_or_else(|e| panic!("{what}: {e}"));
        let under = |p: &std::path::Path| p.starts_with(&s.run_dir);
        assert!(l.files.iter().all(|f| under(&f.path)), "{what}");
        assert!(l.dirs.iter().all(|d| under(d)), "{what}");
        assert!(l.user_dirs.iter().all(|d| l.dirs.contains(d)), "{what}");
        assert!(l.processes.iter().all(|p| under(&p.log)), "{what}");
        assert!(l.processes.iter().all(|p| p.stop_signal == libc::SIGTERM), "{what}");
        // Parents before children.
        for (i, d) in l.dirs.iter().enumerate() {
            assert!(!l.dirs[i + 1..].iter().any(|later| d.starts_with(later)), "{what}");
        }
        // A certificate exactly with TLS, its files in a directory the launch creates.
        assert_eq!(l.tls.is_some(), s.protocol.is_encrypted(), "{what}");
        if let Some(tls) = &l.tls {
            assert!(under(&tls.ca) && tls.files.iter().any(|f| f.path == tls.ca), "{what}");
            for f in &tls.files {
                assert!(l.dirs.iter().any(|d| Some(d.as_path()) == f.path.parent()), "{what}");
            }
        }
        let Probe::Http { addr, path, protocol } = &l.ready else {
            panic!("{what}: {:?}", l.ready)
        };
        assert_eq!((*addr, path.as_str()), (s.listen, "/herd-ready.txt"), "{what}");
        let over = match s.protocol {
            Protocol::H1 => Protocol::H1,
            Protocol::H2c if s.kind == ServerKind::Nginx => Protocol::H2c,
            Protocol::H2c => Protocol::H1,
            Protocol::H1Tls | Protocol::H2 | Protocol::H3 => Protocol::H1Tls,
        };
        assert_eq!(*protocol, over, "{what}");
        assert_eq!(l.processes.last().unwrap().ready.as_ref(), Some(&l.ready), "{what}");
        let programs: Vec<_> = l.versions.iter().map(|v| v.program.as_str()).collect();
        let needed: Vec<_> = programs_needed(s.kind, s.php).iter().map(|p| p.name).collect();
        assert_eq!(programs, needed, "{what}");
        for f in &l.files {
            check_paths_in(&f.contents);
        }
    }

    #[test]
    fn a_protocol_the_server_lacks_is_refused_with_the_reason() {
        for (kind, protocol, reason) in [
            (ServerKind::Nginx, Protocol::H3, "nginx 1.22 has no HTTP/3"),
            (ServerKind::Herd, Protocol::H3, "herd serve has no HTTP/3"),
            (ServerKind::Apache(Mpm::Prefork), Protocol::H2c, "prefork"),
            (ServerKind::MiniHttpd, Protocol::H2, "HTTP/1.1 only"),
            (ServerKind::Thttpd, Protocol::H1Tls, "no TLS and no HTTP/2"),
            (ServerKind::Thttpd, Protocol::H2c, "sthttpd 2.27"),
            (ServerKind::H2o, Protocol::H3, "h2o 2.2 has no HTTP/3"),
            (ServerKind::Lighttpd, Protocol::H3, "lighttpd 1.4.69 has no HTTP/3"),
            (ServerKind::Apache(Mpm::Event), Protocol::H3, "Apache httpd has no HTTP/3"),
        ] {
            let mut s = spec(kind, None);
            s.protocol = protocol;
            let err = render(&s).unwrap_err();
            assert!(
                matches!(&err, DriverError::ProtocolNotSupported { protocol: p, .. } if *p == protocol),
                "{err:?}"
            );
            let msg = err.to_string();
            let start = format!("{kind} cannot serve {protocol} ({}): ", protocol.describe());
            assert!(msg.starts_with(&start) && msg.contains(reason), "{msg}");
            assert_eq!(check_protocol(kind, protocol).unwrap_err().to_string(), msg);
        }
    }

    /// Every server without the setting refuses it, naming itself, the setting and why; the
    /// three that have both render them.
    #[test]
    fn a_setting_the_server_lacks_is_refused_with_the_reason() {
        let keepalive = std::num::NonZeroU32::new(10);
        let lacks = [
            (ServerKind::Herd, "keepalive_requests", "herd serve keeps a connection alive"),
            (ServerKind::Herd, "sendfile", "herd serve sends files above 16 KiB"),
            (ServerKind::H2o, "keepalive_requests", "h2o 2.2 has no limit"),
            (ServerKind::H2o, "sendfile", "h2o 2.2 has no sendfile"),
            (ServerKind::Caddy, "keepalive_requests", "caddy 2.6 (Go's net/http) has no limit"),
            (ServerKind::Caddy, "sendfile", "caddy 2.6 has no setting"),
            (ServerKind::MiniHttpd, "keepalive_requests", "mini_httpd has no keep-alive"),
            (ServerKind::MiniHttpd, "sendfile", "mini_httpd has no setting"),
            (ServerKind::Thttpd, "keepalive_requests", "thttpd has no keep-alive"),
            (ServerKind::Thttpd, "sendfile", "maps files into memory"),
            (ServerKind::Samba, "sendfile", "speaks no HTTP"),
        ];
        for (kind, setting, reason) in lacks {
            let mut s = spec(kind, None);
            match setting {
                "sendfile" => s.sendfile = Some(true),
                _ => s.keepalive_requests = keepalive,
            }
            let err = render(&s).unwrap_err();
            let DriverError::SettingNotSupported { setting: got, .. } = &err else {
                panic!("{err:?}")
            };
            assert_eq!(*got, setting);
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("{kind} cannot take {setting}: ")), "{msg}");
            assert!(msg.contains(reason) && msg.ends_with(&format!("leave {setting} unset")));
        }
        for kind in [ServerKind::Nginx, ServerKind::Apache(Mpm::Prefork), ServerKind::Lighttpd] {
            assert!(kind.takes_keepalive_requests().is_ok() && kind.takes_sendfile().is_ok());
            let s = ServerSpec {
                keepalive_requests: keepalive,
                sendfile: Some(false),
                ..spec(kind, None)
            };
            assert!(render(&s).is_ok(), "{kind}");
        }
    }

    #[test]
    fn what_each_server_speaks() {
        use Protocol::{H1Tls, H2c, H1, H2, H3};
        let all = ServerKind::Caddy.protocols();
        assert_eq!(all, [H1, H1Tls, H2, H2c, H3]);
        for kind in [
            ServerKind::Nginx,
            ServerKind::Apache(Mpm::Event),
            ServerKind::Apache(Mpm::Worker),
            ServerKind::Lighttpd,
            ServerKind::H2o,
        ] {
            assert_eq!(kind.protocols(), [H1, H1Tls, H2, H2c], "{kind}");
        }
        assert_eq!(ServerKind::Apache(Mpm::Prefork).protocols(), [H1, H1Tls]);
        assert_eq!(ServerKind::MiniHttpd.protocols(), [H1, H1Tls]);
        assert_eq!(ServerKind::Thttpd.protocols(), [H1]);
        assert_eq!(ServerKind::Herd.protocols(), [H1, H1Tls, H2, H2c]);
    }

    /// Outside comments, a config names only the run_dir, the docroot, system files under
    /// /etc and /usr, and the URL path of php-cgi.
    fn check_paths_in(contents: &str) {
        let lines = contents.lines().filter(|l| !l.trim_start().starts_with(['#', ';']));
        for line in lines {
            for token in line.split(|c: char| c.is_whitespace() || "\"'();,|".contains(c)) {
                let path = token.trim_start_matches("unix:").trim_start_matches("file:");
                if !path.starts_with('/') || path.len() <= 2 {
                    continue;
                }
                let ok = ["/run-dir/", "/docroot", "/etc/", "/usr/", "/herd-php-cgi"]
                    .iter()
                    .any(|p| path.starts_with(p));
                assert!(ok, "{path} in {line:?}");
            }
        }
    }
}
