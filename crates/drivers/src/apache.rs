//! Apache 2.4 with the event, worker or prefork MPM: static files, PHP through php-fpm
//! (mod_proxy_fcgi) or as CGI (php-cgi per request: mod_cgid for the threaded MPMs, mod_cgi for
//! prefork). Renders the stand-alone conf/apache2.conf from src/templates/apache2.conf and
//! starts `apache2 -f conf/apache2.conf -DFOREGROUND`, after php-fpm when there is one. Checked
//! with `apache2 -t`.
//!
//! Protocols: `h1`; `h1-tls` (mod_ssl); `h2` (mod_ssl and mod_http2, ALPN `h2` and `http/1.1`);
//! `h2c` (mod_http2 in the clear: prior knowledge, which mod_http2 calls H2Direct, and
//! HTTP/1.1 beside it). HTTP/2 needs a threaded MPM: under prefork Apache turns it off, so
//! [`ServerKind::supports`](crate::ServerKind::supports) refuses it there. No `h3`.

use herd_stats::Protocol;

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::{Launch, RenderedFile};
use crate::programs::{APACHE2, PHP_CGI};
use crate::run_dir::{conf_path, Places};
use crate::spec::{Mpm, Php, ServerSpec};
use crate::template::fill;
use crate::tls::{self, Layout};
use crate::version::VersionProbe;
use crate::{php_fpm, ready_probe, tls_for};

const TEMPLATE: &str = include_str!("templates/apache2.conf");

/// Where Debian's apache2 package puts its modules.
const MODULES: &str = "/usr/lib/apache2/modules";

/// Debian's conf-available/php8.2-fpm.conf, pointed at this run_dir's pool.
const FPM_HANDLER: &str = r#"# PHP through php-fpm on its Unix socket (Debian's php8.2-fpm.conf).
<FilesMatch ".+\.php$">
    SetHandler "proxy:unix:@SOCKET@|fcgi://localhost"
</FilesMatch>
"#;

/// Debian's conf-available/php8.2-cgi.conf recipe, with php-cgi itself behind a private URL.
const CGI_HANDLER: &str = r#"# PHP as CGI, one php-cgi process per request, the way Debian's
# conf-available/php8.2-cgi.conf does it: mod_actions passes *.php to php-cgi by an internal
# redirect, which sets the REDIRECT_STATUS that php-cgi's cgi.force_redirect demands.
# php-cgi's own URL answers only such redirects.
@SCRIPT_SOCK@
ScriptAlias /herd-php-cgi "@PHP_CGI@"
<Location "/herd-php-cgi">
    Require env REDIRECT_STATUS
</Location>
<FilesMatch ".+\.php$">
    SetHandler application/x-httpd-php
</FilesMatch>
Action application/x-httpd-php /herd-php-cgi
"#;

/// HTTP/2, in the clear or over TLS.
const HTTP2: &str =
    "# HTTP/2 (mod_http2). Debian's mods-available/http2.conf offers h2, h2c and http/1.1;
# here the one measured, and HTTP/1.1. mod_http2's defaults otherwise: 100 streams at once
# (H2MaxSessionStreams). MaxKeepAliveRequests above does not end an HTTP/2 connection (5000
# requests on one, seen with h2load).
Protocols @PROTOCOLS@
";

/// The certificate made for this launch, with Debian's mods-available/ssl.conf.
const TLS: &str =
    "# TLS (mod_ssl): the certificate herd made for this run. Debian's mods-available/ssl.conf,
# with its session cache under the run_dir, but neither its SSLRandomSeed lines (OpenSSL 3
# seeds itself) nor SSLPassPhraseDialog (the key has no pass phrase).
SSLEngine on
SSLCertificateFile \"@CERT@\"
SSLCertificateKeyFile \"@KEY@\"
SSLSessionCache shmcb:@RUN@/run/ssl_scache(512000)
SSLSessionCacheTimeout 300
SSLCipherSuite HIGH:!aNULL
SSLProtocol all -SSLv3
SSLSessionTickets off
";

/// Keep-alive as Debian's apache2.conf has it, or with the spec's `keepalive_requests`.
const KEEPALIVE_DEFAULT: &str =
    "# Debian's apache2.conf: keep-alive on, at most 100 requests per connection, 5 s idle.";
const KEEPALIVE_REQUESTS: &str = "# Debian's apache2.conf: keep-alive on, 5 s idle; at most \
     @N@ requests per connection\n# (the spec's keepalive_requests).";

/// sendfile on, the lab's default, or off as the spec asks.
const SENDFILE_ON: &str =
    "# Off in Apache's and Debian's defaults; on here, as in every server of the lab, so that
# static files take the kernel's sendfile path everywhere.
EnableSendfile On
";
const SENDFILE_OFF: &str = "# Off, as the spec's sendfile asks (Apache's and Debian's default): \
     static files are read\n# and written by the server.\nEnableSendfile Off\n";

/// Debian's mods-available/mpm_event.conf and mpm_worker.conf (the same values).
const THREADED_DEFAULTS: &str = "# Debian's mods-available/mpm_@MPM@.conf.
StartServers 2
MinSpareThreads 25
MaxSpareThreads 75
ThreadLimit 64
ThreadsPerChild 25
MaxRequestWorkers 150
MaxConnectionsPerChild 0
";

/// `n` children of Debian's 25 threads, all started at once and kept.
const THREADED_FIXED: &str =
    "# @N@ child processes (the spec's workers) of Debian's 25 threads each, all started at
# once; MaxSpareThreads is above the total, so none is stopped as idle.
StartServers @N@
ServerLimit @N@
MinSpareThreads 25
MaxSpareThreads @MAX_SPARE@
ThreadLimit 64
ThreadsPerChild 25
MaxRequestWorkers @THREADS@
MaxConnectionsPerChild 0
";

/// Debian's mods-available/mpm_prefork.conf.
const PREFORK_DEFAULTS: &str = "# Debian's mods-available/mpm_prefork.conf.
StartServers 5
MinSpareServers 5
MaxSpareServers 10
MaxRequestWorkers 150
MaxConnectionsPerChild 0
";

/// `n` processes, fixed.
const PREFORK_FIXED: &str =
    "# @N@ processes (the spec's workers), each serving one connection at a time, all started
# at once and kept (MaxSpareServers is above the total).
StartServers @N@
ServerLimit @N@
MinSpareServers @N@
MaxSpareServers @MAX_SPARE@
MaxRequestWorkers @N@
MaxConnectionsPerChild 0
";

pub(crate) fn render(spec: &ServerSpec, mpm: Mpm, places: &Places) -> Result<Launch, DriverError> {
    let exe = spec.programs.path(&APACHE2, spec.kind)?;
    let conf = places.path("conf/apache2.conf");

    let mpm_name = mpm.name();
    let user = match &places.user {
        Some(u) => format!("User {u}\nGroup {u}"),
        None => String::new(),
    };
    let (php_modules, php) = match spec.php {
        Some(Php::Fpm) => (
            module_lines(&["proxy", "proxy_fcgi"]),
            fill(
                "apache.rs FPM_HANDLER",
                FPM_HANDLER,
                &[("SOCKET", &places.text(php_fpm::SOCKET))],
            )?,
        ),
        Some(Php::Cgi) => {
            let php_cgi = conf_path("php-cgi", spec.programs.path(&PHP_CGI, spec.kind)?)?;
            // mod_cgi forks from the serving process, which in a threaded MPM would fork
            // every thread's memory; mod_cgid forks from its own small daemon instead.
            let (cgi, sock) = match mpm {
                Mpm::Prefork => ("cgi", String::new()),
                Mpm::Event | Mpm::Worker => {
                    ("cgid", format!("ScriptSock \"{}\"", places.text("run/cgid.sock")))
                }
            };
            (
                module_lines(&[cgi, "actions", "alias"]),
                fill(
                    "apache.rs CGI_HANDLER",
                    CGI_HANDLER,
                    &[("SCRIPT_SOCK", &sock), ("PHP_CGI", &php_cgi)],
                )?,
            )
        }
        None => (String::new(), String::new()),
    };
    let tls = tls_for(spec, places, Layout::Apart)?;
    let (protocol_modules, protocol) = protocol_settings(spec, places, tls.as_ref())?;
    let access_log = access_log::at_path(spec, places, LogFormat::Common);
    let log_directive = match &access_log {
        Some(_) => {
            format!("CustomLog \"{}\" \"{}\"", places.text(access_log::PATH), access_log::COMMON)
        }
        None => String::new(),
    };
    let (keepalive_note, max_keepalive) = match spec.keepalive_requests {
        Some(n) => (
            fill("apache.rs KEEPALIVE_REQUESTS", KEEPALIVE_REQUESTS, &[("N", &n.to_string())])?,
            n.to_string(),
        ),
        None => (KEEPALIVE_DEFAULT.to_owned(), "100".to_owned()),
    };
    let sendfile = if spec.sendfile == Some(false) { SENDFILE_OFF } else { SENDFILE_ON };
    let contents = fill(
        "templates/apache2.conf",
        TEMPLATE,
        &[
            ("RUN", places.run()),
            ("LISTEN", &spec.listen.to_string()),
            ("USER", &user),
            ("MPM", mpm_name),
            ("MODULES", MODULES),
            ("PHP_MODULES", &php_modules),
            ("PROTOCOL_MODULES", &protocol_modules),
            ("PROTOCOL", &protocol),
            ("MPM_SETTINGS", &mpm_settings(mpm, mpm_name, spec.workers.map(|n| n.get()))?),
            ("DOCROOT", &places.docroot),
            ("PHP", &php),
            ("ACCESS_LOG", &log_directive),
            ("KEEPALIVE_NOTE", &keepalive_note),
            ("MAX_KEEPALIVE_REQUESTS", &max_keepalive),
            ("SENDFILE", sendfile),
        ],
    )?;

    let ready = ready_probe(spec);
    let process = places.process(
        "apache2",
        vec![exe.into(), "-f".into(), conf.clone().into(), "-DFOREGROUND".into()],
    );
    let mut launch = Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(if tls.is_some() {
            &["conf", "logs", "run", tls::DIR]
        } else {
            &["conf", "logs", "run"]
        }),
        tls: tls.map(|t| t.files),
        validate: vec![vec![exe.into(), "-t".into(), "-f".into(), conf.into()]],
        versions: vec![VersionProbe::new(APACHE2.name, exe, "-v", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    };
    match spec.php {
        Some(Php::Fpm) => php_fpm::add_pool(spec, places, &mut launch)?,
        Some(Php::Cgi) => launch.versions.push(crate::php_cgi::version_probe(spec)?),
        None => {}
    }
    Ok(launch)
}

/// The modules and settings of `spec`'s protocol: nothing for `h1`.
fn protocol_settings(
    spec: &ServerSpec,
    places: &Places,
    tls: Option<&tls::ServerTls>,
) -> Result<(String, String), DriverError> {
    let mut modules = Vec::new();
    let mut settings = Vec::new();
    let http2 = match spec.protocol {
        Protocol::H1 | Protocol::H1Tls => None,
        Protocol::H2 => Some("h2 http/1.1"),
        Protocol::H2c => Some("h2c http/1.1"),
        Protocol::H3 => return Err(crate::unsupported(spec)),
    };
    if let Some(protocols) = http2 {
        modules.push("http2");
        settings.push(fill("apache.rs HTTP2", HTTP2, &[("PROTOCOLS", protocols)])?);
    }
    if let Some(t) = tls {
        // mod_ssl's session cache is shmcb (Debian's ssl.load says so too).
        modules.extend(["ssl", "socache_shmcb"]);
        settings.push(fill(
            "apache.rs TLS",
            TLS,
            &[("CERT", &t.cert), ("KEY", &t.key), ("RUN", places.run())],
        )?);
    }
    let settings = if settings.is_empty() {
        String::new()
    } else {
        // A blank line apart from the keep-alive settings above.
        format!("\n{}", settings.join("\n"))
    };
    Ok((module_lines(&modules), settings))
}

fn module_lines(names: &[&str]) -> String {
    names.iter().map(|m| format!("LoadModule {m}_module {MODULES}/mod_{m}.so\n")).collect()
}

fn mpm_settings(mpm: Mpm, mpm_name: &str, workers: Option<u32>) -> Result<String, DriverError> {
    Ok(match (mpm, workers) {
        (Mpm::Event | Mpm::Worker, None) => {
            fill("apache.rs THREADED_DEFAULTS", THREADED_DEFAULTS, &[("MPM", mpm_name)])?
        }
        (Mpm::Event | Mpm::Worker, Some(n)) => fill(
            "apache.rs THREADED_FIXED",
            THREADED_FIXED,
            &[
                ("N", &n.to_string()),
                ("MAX_SPARE", &(25 * (u64::from(n) + 1)).to_string()),
                ("THREADS", &(25 * u64::from(n)).to_string()),
            ],
        )?,
        (Mpm::Prefork, None) => PREFORK_DEFAULTS.to_owned(),
        (Mpm::Prefork, Some(n)) => fill(
            "apache.rs PREFORK_FIXED",
            PREFORK_FIXED,
            &[("N", &n.to_string()), ("MAX_SPARE", &(u64::from(n) + 1).to_string())],
        )?,
    })
}

/// `Apache/2.4.66 (Debian)` from `apache2 -v`, whose first line is `Server version:
/// Apache/2.4.66 (Debian)`.
fn parse_version(output: &str) -> Option<String> {
    let line = output.lines().find_map(|l| l.trim().strip_prefix("Server version:"))?;
    let version = line.trim();
    let digits = version.strip_prefix("Apache/")?;
    digits.starts_with(|c: char| c.is_ascii_digit()).then(|| version.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{conf, spec};
    use crate::ServerKind;
    use std::num::NonZeroU32;

    const CONF: &str = "conf/apache2.conf";

    #[test]
    fn keepalive_requests_and_sendfile_only_when_asked() {
        let mut s = spec(ServerKind::Apache(Mpm::Event), None);
        let plain = conf(&s, CONF);
        assert!(plain.contains("\nMaxKeepAliveRequests 100\n"), "{plain}");
        assert!(plain.contains("\nEnableSendfile On\n"), "{plain}");
        s.sendfile = Some(true);
        assert_eq!(conf(&s, CONF), plain, "on is what is rendered without it");
        s.sendfile = Some(false);
        s.keepalive_requests = NonZeroU32::new(10);
        let set = conf(&s, CONF);
        assert!(set.contains("\nMaxKeepAliveRequests 10\n"), "{set}");
        assert!(
            set.contains("\nEnableSendfile Off\n") && !set.contains("EnableSendfile On"),
            "{set}"
        );
        assert!(!set.contains("100 requests"), "{set}");
    }

    #[test]
    fn mpm_module_and_settings() {
        for (mpm, name) in
            [(Mpm::Event, "event"), (Mpm::Worker, "worker"), (Mpm::Prefork, "prefork")]
        {
            let c = conf(&spec(ServerKind::Apache(mpm), None), CONF);
            let line = format!("LoadModule mpm_{name}_module {MODULES}/mod_mpm_{name}.so\n");
            assert!(c.contains(&line), "{c}");
            assert!(c.contains("MaxRequestWorkers 150\n"));
            let settings = c.lines().filter(|l| !l.starts_with('#'));
            assert!(settings.clone().all(|l| !l.contains("${")), "no envvars");
        }
        let mut s = spec(ServerKind::Apache(Mpm::Event), None);
        s.workers = NonZeroU32::new(3);
        let c = conf(&s, CONF);
        assert!(c.contains("StartServers 3\nServerLimit 3\n"));
        assert!(c.contains("MaxSpareThreads 100\n") && c.contains("MaxRequestWorkers 75\n"));
        s.kind = ServerKind::Apache(Mpm::Prefork);
        let c = conf(&s, CONF);
        assert!(c.contains("MaxSpareServers 4\nMaxRequestWorkers 3\n"), "{c}");
    }

    #[test]
    fn user_and_group_only_with_a_user() {
        let mut s = spec(ServerKind::Apache(Mpm::Event), None);
        assert!(!conf(&s, CONF).contains("\nUser "));
        s.user = Some("www-data".into());
        assert!(conf(&s, CONF).contains("\nUser www-data\nGroup www-data\n"));
    }

    #[test]
    fn cgi_is_cgid_for_threads_and_cgi_for_prefork() {
        let event = conf(&spec(ServerKind::Apache(Mpm::Event), Some(Php::Cgi)), CONF);
        assert!(
            event.contains("mod_cgid.so")
                && event.contains("ScriptSock \"/run-dir/apache-event/run/cgid.sock\"")
        );
        assert!(event.contains("ScriptAlias /herd-php-cgi \"/usr/bin/php-cgi\""));
        let prefork = conf(&spec(ServerKind::Apache(Mpm::Prefork), Some(Php::Cgi)), CONF);
        assert!(prefork.contains("LoadModule cgi_module") && !prefork.contains("ScriptSock"));
        let l = crate::render(&spec(ServerKind::Apache(Mpm::Worker), Some(Php::Cgi))).unwrap();
        assert_eq!(l.processes.len(), 1, "php-cgi is started by Apache, per request");
        assert_eq!(l.versions[1].program, "php-cgi");
    }

    #[test]
    fn fpm_adds_the_pool_first() {
        let s = spec(ServerKind::Apache(Mpm::Event), Some(Php::Fpm));
        let c = conf(&s, CONF);
        assert!(c.contains(
            "SetHandler \"proxy:unix:/run-dir/apache-event/run/php-fpm.sock|fcgi://localhost\""
        ));
        let l = crate::render(&s).unwrap();
        assert_eq!(l.processes[0].name, "php-fpm");
        assert_eq!(l.processes[1].argv[3], "-DFOREGROUND");
    }

    #[test]
    fn version() {
        let out = "Server version: Apache/2.4.71 (Debian)\nServer built:   2026-11-12T08:58:41\n";
        assert_eq!(parse_version(out).as_deref(), Some("Apache/2.4.71 (Debian)"));
        assert_eq!(parse_version("Server version: unknown"), None);
    }
}
