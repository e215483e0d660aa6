//! Server drivers for herd's lab: how to configure, start, check and identify each web server
//! the lab measures. Drivers are pure: a spec in, files, command lines and probes out. They
//! never write a file, start a process or open a socket; the lab does all of that.
//!
//! # Brief overview
//!
//! A [`ServerSpec`] names the server ([`ServerKind`], Apache with its [`Mpm`]), its PHP setup
//! ([`Php`]: php-fpm or php-cgi, see [`php_choices`]), the listen address, the docroot, the
//! server's own run_dir, the worker count, the unprivileged user, and the [`Programs`] found by
//! [`Programs::locate`] (which [`programs_needed`] lists). [`render`] turns it into a
//! [`Launch`]: the [`RenderedFile`]s and directories to create, the [`ProcessSpec`]s to start in
//! order (php-fpm before nginx), the [`Probe`] that says the front server is ready (`GET
//! /`[`READY_FILE`]), the servers' own config checks, and a [`VersionProbe`] per program.
//! Every server runs in the foreground as the lab's child and keeps everything (pid files,
//! error logs, temporary files, sockets, mutexes) under its run_dir.
//!
//! The computed pages have the same bytes on every server: herd serve's `/9x9`, `/include`
//! and `/echo`, and the PHP pages in [`php_pages`]; [`page_path`] says where a [`Page`] is.
//!
//! # Module map
//!
//! - `spec`, `programs`, `launch`, `version`, `error`: the types above.
//! - One driver per server: `herd`, `nginx`, `apache`, `lighttpd`, `h2o`, `mini_httpd`, plus
//!   `php_fpm` (the pool nginx and Apache use) and `php_cgi` (the program Apache and lighttpd
//!   run per request). Their configs are templates in `src/templates/`, filled by `template`.
//! - `run_dir`: the layout under a run_dir (conf/, logs/, run/, tmp/) and the checks that make
//!   a path safe to write into a config file.
//! - `pages`: [`Page`], [`page_path`], and the PHP sources (`src/php/`).
//! - `proxy`: the router's programs of a network path ([`ProxyKind`]: HAProxy http/tcp,
//!   nginx as a reverse proxy, sslh fork/select), [`render_proxy`] from a [`ProxySpec`].
//!
//! Not here: starting, stopping or waiting for processes (the lab), TLS, HTTP/2, access logs
//! (off everywhere: the lab measures servers, not their logging).

mod apache;
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
mod spec;
mod template;
#[cfg(test)]
mod testing;
mod version;

pub use error::DriverError;
pub use launch::{Launch, Probe, ProcessSpec, RenderedFile};
pub use pages::{page_path, php_pages, Page};
pub use programs::{programs_needed, Program, Programs, ALL_PROGRAMS};
pub use programs::{APACHE2, H2O, HERD, LIGHTTPD, MINI_HTTPD, NGINX, PHP_CGI, PHP_FPM};
pub use programs::{HAPROXY, SSLH, SSLH_SELECT};
pub use proxy::{proxy_programs_needed, render_proxy, ProxyKind, ProxySpec};
pub use spec::{check_php, php_choices, Mpm, Php, ServerKind, ServerSpec};
pub use version::VersionProbe;

/// The file every server is probed for: the lab writes it into the docroot, and a server is
/// ready when `GET /herd-ready.txt` on its listen address answers 200.
pub const READY_FILE: &str = "herd-ready.txt";

/// Renders `spec` into what the lab writes and starts.
///
/// Fails for a PHP setup the server does not have, a program missing from `spec.programs`,
/// listen port 0, a worker count for mini_httpd, or a run_dir, docroot or user that cannot be
/// written safely into a config file.
pub fn render(spec: &ServerSpec) -> Result<Launch, DriverError> {
    check_php(spec.kind, spec.php)?;
    if spec.listen.port() == 0 {
        return Err(DriverError::PortZero { addr: spec.listen });
    }
    let places = run_dir::Places::new(spec)?;
    match spec.kind {
        ServerKind::Herd => herd::render(spec, &places),
        ServerKind::Nginx => nginx::render(spec, &places),
        ServerKind::Apache(mpm) => apache::render(spec, mpm, &places),
        ServerKind::Lighttpd => lighttpd::render(spec, &places),
        ServerKind::H2o => h2o::render(spec, &places),
        ServerKind::MiniHttpd => mini_httpd::render(spec, &places),
    }
}

/// The front server's readiness probe: `GET /READY_FILE` on the listen address.
fn ready_probe(spec: &ServerSpec) -> Probe {
    Probe::Http { addr: spec.listen, path: format!("/{READY_FILE}") }
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
        ];
        for (kind, php) in kinds {
            let mut s = spec(kind, php);
            s.user = Some("www-data".into());
            let l = render(&s).unwrap();
            let under = |p: &std::path::Path| p.starts_with(&s.run_dir);
            assert!(l.files.iter().all(|f| under(&f.path)), "{kind}");
            assert!(l.dirs.iter().all(|d| under(d)), "{kind}");
            assert!(l.user_dirs.iter().all(|d| l.dirs.contains(d)), "{kind}");
            assert!(l.processes.iter().all(|p| under(&p.log)), "{kind}");
            assert!(l.processes.iter().all(|p| p.stop_signal == libc::SIGTERM), "{kind}");
            // Parents before children.
            for (i, d) in l.dirs.iter().enumerate() {
                assert!(!l.dirs[i + 1..].iter().any(|later| d.starts_with(later)), "{kind}");
            }
            assert_eq!(
                l.ready,
                Probe::Http { addr: s.listen, path: "/herd-ready.txt".into() },
                "{kind}"
            );
            assert_eq!(l.processes.last().unwrap().ready.as_ref(), Some(&l.ready), "{kind}");
            let programs: Vec<_> = l.versions.iter().map(|v| v.program.as_str()).collect();
            let needed: Vec<_> = programs_needed(kind, php).iter().map(|p| p.name).collect();
            assert_eq!(programs, needed, "{kind}");
            for f in &l.files {
                check_paths_in(&f.contents);
            }
        }
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
