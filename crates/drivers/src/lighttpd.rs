//! lighttpd: static files, and PHP as CGI (mod_cgi runs php-cgi per request). Renders
//! conf/lighttpd.conf from src/templates/lighttpd.conf (Debian's lighttpd.conf, one address,
//! everything under the run_dir) and starts `lighttpd -D -f conf/lighttpd.conf`. Checked with
//! `lighttpd -tt` (which also loads the modules). Its upload directory, run_dir/tmp, is written
//! after lighttpd drops privileges, so it is one of [`Launch::user_dirs`].
//!
//! Protocols, on the one listener: `h1` (with h2c beside it, Debian's setting); `h1-tls`
//! (mod_openssl, from the package lighttpd-mod-openssl; HTTP/2 off so that ALPN offers
//! `http/1.1` only); `h2` (ALPN `h2` and `http/1.1`); `h2c` (prior knowledge or Upgrade, and
//! HTTP/1.1). HTTP/2 is in lighttpd 1.4.69's core: there is no mod_h2 to load. No `h3`.

use std::net::SocketAddr;

use herd_stats::Protocol;

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::{Launch, RenderedFile};
use crate::programs::{LIGHTTPD, PHP_CGI};
use crate::run_dir::{conf_path, Places};
use crate::spec::{Php, ServerSpec};
use crate::template::fill;
use crate::tls::{self, Layout};
use crate::version::{word_with_prefix, VersionProbe};
use crate::{ready_probe, tls_for, unsupported};

const TEMPLATE: &str = include_str!("templates/lighttpd.conf");

const CGI: &str = r#"# PHP as CGI, one php-cgi process per request. mod_cgi sets REDIRECT_STATUS,
# as php-cgi's cgi.force_redirect demands.
cgi.assign = ( ".php" => "@PHP_CGI@" )
"#;

/// The certificate made for this launch on the one listener.
const TLS: &str = r#"# TLS (mod_openssl): the certificate herd made for this run. lighttpd's defaults otherwise
# (Debian's conf-available/10-ssl.conf sets only the certificate).
ssl.engine = "enable"
ssl.pemfile = "@CERT@"
ssl.privkey = "@KEY@"
"#;

/// sendfile on, lighttpd's default, or off as the spec asks.
const SENDFILE_ON: &str = "# lighttpd's default on Linux, written out: static files go \
     through sendfile.\nserver.network-backend = \"sendfile\"\n";
const SENDFILE_OFF: &str = "# Not sendfile, as the spec's sendfile asks: static files go out \
     through writev.\nserver.network-backend = \"writev\"\n";

/// Keep-alive with lighttpd's defaults, or with the spec's `keepalive_requests`.
const KEEPALIVE_DEFAULT: &str =
    "# Keep-alive: lighttpd's defaults (5 s idle, 1000 requests per connection).";
const KEEPALIVE_REQUESTS: &str = "# Keep-alive: lighttpd's 5 s idle; at most @N@ requests per \
     connection (the spec's\n# keepalive_requests).\nserver.max-keep-alive-requests = @N@\n";

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    let exe = spec.programs.path(&LIGHTTPD, spec.kind)?;
    let conf = places.path("conf/lighttpd.conf");

    let bind = match spec.listen {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    };
    let user = match &places.user {
        Some(u) => format!("server.username = \"{u}\"\nserver.groupname = \"{u}\""),
        None => String::new(),
    };
    let workers = match spec.workers.map(|n| n.get()) {
        Some(n) if n > 1 => format!(
            "# The spec's workers: {n} processes sharing the socket (Debian runs one).\n\
             server.max-worker = {n}"
        ),
        // One process: lighttpd's default, and the only way with server.max-worker unset.
        _ => String::new(),
    };
    let (php_module, php) = match spec.php {
        Some(Php::Cgi) => {
            let php_cgi = conf_path("php-cgi", spec.programs.path(&PHP_CGI, spec.kind)?)?;
            ("\"mod_cgi\",", fill("lighttpd.rs CGI", CGI, &[("PHP_CGI", &php_cgi)])?)
        }
        _ => ("", String::new()),
    };
    let h2 = match spec.protocol {
        Protocol::H1 | Protocol::H2 | Protocol::H2c => "enable",
        Protocol::H1Tls => "disable",
        Protocol::H3 => return Err(unsupported(spec)),
    };
    let tls = tls_for(spec, places, Layout::Apart)?;
    let (tls_module, tls_block) = match &tls {
        Some(t) => (
            "\"mod_openssl\",",
            fill("lighttpd.rs TLS", TLS, &[("CERT", &t.cert), ("KEY", &t.key)])?,
        ),
        None => ("", String::new()),
    };
    let access_log = access_log::at_path(spec, places, LogFormat::Common);
    let (log_module, log_block) = match &access_log {
        Some(_) => (
            "\"mod_accesslog\",",
            format!(
                "accesslog.filename = \"{}\"\naccesslog.format = \"{}\"",
                places.text(access_log::PATH),
                access_log::COMMON
            ),
        ),
        None => ("", String::new()),
    };
    let backend = if spec.sendfile == Some(false) { SENDFILE_OFF } else { SENDFILE_ON };
    let keepalive = match spec.keepalive_requests {
        Some(n) => {
            fill("lighttpd.rs KEEPALIVE_REQUESTS", KEEPALIVE_REQUESTS, &[("N", &n.to_string())])?
        }
        None => KEEPALIVE_DEFAULT.to_owned(),
    };
    let contents = fill(
        "templates/lighttpd.conf",
        TEMPLATE,
        &[
            ("RUN", places.run()),
            ("DOCROOT", &places.docroot),
            ("BIND", &bind),
            ("PORT", &spec.listen.port().to_string()),
            ("USER", &user),
            ("WORKERS", &workers),
            ("PHP_MODULE", php_module),
            ("TLS_MODULE", tls_module),
            ("LOG_MODULE", log_module),
            ("ACCESS_LOG", &log_block),
            ("TLS", &tls_block),
            ("H2", h2),
            ("PHP", &php),
            ("NETWORK_BACKEND", backend),
            ("KEEPALIVE", &keepalive),
        ],
    )?;

    let ready = ready_probe(spec);
    let process =
        places.process("lighttpd", vec![exe.into(), "-D".into(), "-f".into(), conf.clone().into()]);
    let mut launch = Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(if tls.is_some() {
            &["conf", "logs", "run", "tmp", tls::DIR]
        } else {
            &["conf", "logs", "run", "tmp"]
        }),
        // mod_accesslog opens its file after lighttpd has dropped privileges, as the error log.
        user_dirs: places.dirs(if access_log.is_some() { &["tmp", "logs"] } else { &["tmp"] }),
        tls: tls.map(|t| t.files),
        validate: vec![vec![exe.into(), "-tt".into(), "-f".into(), conf.into()]],
        versions: vec![VersionProbe::new(LIGHTTPD.name, exe, "-v", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    };
    if spec.php == Some(Php::Cgi) {
        launch.versions.push(crate::php_cgi::version_probe(spec)?);
    }
    Ok(launch)
}

/// `lighttpd/1.4.69` from `lighttpd -v`: `lighttpd/1.4.69 (ssl) - a light and fast webserver`.
fn parse_version(output: &str) -> Option<String> {
    word_with_prefix(output, "lighttpd/").map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{conf, spec};
    use crate::ServerKind;
    use std::num::NonZeroU32;

    const CONF: &str = "conf/lighttpd.conf";

    #[test]
    fn keepalive_requests_and_sendfile_only_when_asked() {
        let mut s = spec(ServerKind::Lighttpd, None);
        let plain = conf(&s, CONF);
        assert!(plain.contains("\nserver.network-backend = \"sendfile\"\n"), "{plain}");
        assert!(!plain.contains("server.max-keep-alive-requests"), "{plain}");
        s.sendfile = Some(true);
        assert_eq!(conf(&s, CONF), plain, "on is what is rendered without it");
        s.sendfile = Some(false);
        s.keepalive_requests = NonZeroU32::new(10);
        let set = conf(&s, CONF);
        assert!(set.contains("\nserver.network-backend = \"writev\"\n"), "{set}");
        assert!(set.contains("\nserver.max-keep-alive-requests = 10\n"), "{set}");
        assert!(!set.contains("1000 requests"), "{set}");
    }

    #[test]
    fn bind_port_and_user() {
        let mut s = spec(ServerKind::Lighttpd, None);
        let c = conf(&s, CONF);
        assert!(c.contains("server.bind = \"127.0.0.1\"\nserver.port = 8080\n"));
        assert!(!c.contains("server.username"));
        s.listen = "[::1]:81".parse().unwrap();
        s.user = Some("www-data".into());
        let c = conf(&s, CONF);
        assert!(c.contains("server.bind = \"[::1]\"\nserver.port = 81\n"));
        assert!(c.contains("server.username = \"www-data\"\nserver.groupname = \"www-data\"\n"));
    }

    #[test]
    fn workers_beyond_one_are_max_worker() {
        let mut s = spec(ServerKind::Lighttpd, None);
        s.workers = NonZeroU32::new(1);
        assert!(!conf(&s, CONF).contains("max-worker"));
        s.workers = NonZeroU32::new(2);
        assert!(conf(&s, CONF).contains("\nserver.max-worker = 2\n"));
    }

    #[test]
    fn cgi_module_and_assignment() {
        let plain = conf(&spec(ServerKind::Lighttpd, None), CONF);
        assert!(!plain.contains("mod_cgi"));
        assert!(plain
            .contains("server.modules = (\n    \"mod_indexfile\",\n    \"mod_staticfile\",\n)"));
        let c = conf(&spec(ServerKind::Lighttpd, Some(Php::Cgi)), CONF);
        assert!(c.contains("    \"mod_indexfile\",\n    \"mod_cgi\",\n    \"mod_staticfile\",\n"));
        assert!(c.contains("cgi.assign = ( \".php\" => \"/usr/bin/php-cgi\" )"));
    }

    #[test]
    fn upload_dir_is_the_users() {
        let l = crate::render(&spec(ServerKind::Lighttpd, None)).unwrap();
        assert_eq!(l.user_dirs, [std::path::PathBuf::from("/run-dir/lighttpd/tmp")]);
    }

    #[test]
    fn version() {
        let out = "lighttpd/1.4.69 (ssl) - a light and fast webserver\n";
        assert_eq!(parse_version(out).as_deref(), Some("lighttpd/1.4.69"));
    }
}
