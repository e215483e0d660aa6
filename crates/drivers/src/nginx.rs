//! nginx: static files, and PHP through php-fpm ([`Php::Fpm`]). Renders
//! conf/nginx.conf from src/templates/nginx.conf (Debian's nginx.conf, foreground, everything
//! under the run_dir) and starts `nginx -e logs/nginx-error.log -c conf/nginx.conf`, after
//! php-fpm when there is PHP. Checked with `nginx -t`.
//!
//! Protocols, on the one listener: `h1`; `h1-tls` (`listen … ssl`, ALPN `http/1.1` only); `h2`
//! (`listen … ssl http2`, ALPN `h2` and `http/1.1`); `h2c` (`listen … http2` in the clear).
//! nginx 1.22's h2c listener speaks HTTP/2 with prior knowledge and nothing else (no HTTP/1.1,
//! no Upgrade; the `http2 on` that serves both came in 1.25.1), so its readiness probe is
//! over h2c. No `h3`.

use herd_stats::Protocol;

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::{Launch, RenderedFile};
use crate::programs::NGINX;
use crate::run_dir::Places;
use crate::spec::{Php, ServerSpec};
use crate::template::fill;
use crate::tls::{self, Layout};
use crate::version::{word_with_prefix, VersionProbe};
use crate::{php_fpm, probe_over, ready_probe, tls_for, unsupported};

const TEMPLATE: &str = include_str!("templates/nginx.conf");

/// The certificate made for this launch, with Debian's TLS settings (its nginx.conf sets them
/// in `http`; here they go with the one server that has TLS).
const TLS: &str =
    "# TLS: the certificate herd made for this run. Debian's protocols (nginx 1.22's own
# default leaves out TLSv1.3) and cipher preference; nginx's defaults otherwise (no session
# cache: every new connection is a full handshake unless the client resumes with a ticket).
ssl_certificate @CERT@;
ssl_certificate_key @KEY@;
ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
ssl_prefer_server_ciphers on;
";

/// Keep-alive without the spec's `keepalive_requests`.
const KEEPALIVE_DEFAULT: &str =
    "# Keep-alive: nginx's defaults (75 s idle, 1000 requests per connection; over HTTP/2 the
# same 1000 streams, then a GOAWAY, and at most 128 streams at once).
";

/// Keep-alive with the spec's `keepalive_requests`, which nginx also applies to the streams
/// of an HTTP/2 connection.
const KEEPALIVE_REQUESTS: &str =
    "# Keep-alive: nginx's 75 s idle; at most @N@ requests per connection (the spec's
# keepalive_requests; over HTTP/2 the same @N@ streams, then a GOAWAY, and at most 128
# streams at once).
keepalive_requests @N@;
";

/// The `location` that hands `*.php` to php-fpm, as Debian's snippets/fastcgi-php.conf does
/// without its PATH_INFO split (the pages are plain files).
const PHP_LOCATION: &str = r"# PHP through php-fpm on its Unix socket.
location ~ \.php$ {
    include /etc/nginx/fastcgi_params;
    fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
    fastcgi_pass unix:@SOCKET@;
}
";

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    let exe = spec.programs.path(&NGINX, spec.kind)?;
    let conf = places.path("conf/nginx.conf");
    let error_log = places.path("logs/nginx-error.log");

    let user = places.user.as_ref().map(|u| format!("user {u};")).unwrap_or_default();
    let workers = spec.workers.map_or_else(|| "auto".to_owned(), |n| n.to_string());
    let socket = places.text(php_fpm::SOCKET);
    let php = match spec.php {
        Some(Php::Fpm) => fill("nginx.rs PHP_LOCATION", PHP_LOCATION, &[("SOCKET", &socket)])?,
        _ => String::new(),
    };
    let listen_options = match spec.protocol {
        Protocol::H1 => "",
        Protocol::H1Tls => " ssl",
        Protocol::H2 => " ssl http2",
        Protocol::H2c => " http2",
        Protocol::H3 => return Err(unsupported(spec)),
    };
    let tls = tls_for(spec, places, Layout::Apart)?;
    let tls_block = match &tls {
        Some(t) => fill("nginx.rs TLS", TLS, &[("CERT", &t.cert), ("KEY", &t.key)])?,
        None => String::new(),
    };
    let keepalive = match spec.keepalive_requests {
        Some(n) => {
            fill("nginx.rs KEEPALIVE_REQUESTS", KEEPALIVE_REQUESTS, &[("N", &n.to_string())])?
        }
        None => KEEPALIVE_DEFAULT.to_owned(),
    };
    // Debian's `sendfile on` unless the spec turns it off.
    let sendfile = if spec.sendfile == Some(false) { "off" } else { "on" };
    let access_log = access_log::at_path(spec, places, LogFormat::Common);
    let log_directive = match &access_log {
        Some(_) => format!(
            "log_format herd '$remote_addr - $remote_user [$time_local] \"$request\" $status \
             $body_bytes_sent';\naccess_log {} herd;",
            places.text(access_log::PATH)
        ),
        None => "access_log off;".to_owned(),
    };
    let contents = fill(
        "templates/nginx.conf",
        TEMPLATE,
        &[
            ("RUN", places.run()),
            ("USER", &user),
            ("WORKERS", &workers),
            ("LISTEN", &spec.listen.to_string()),
            ("LISTEN_OPTIONS", listen_options),
            ("TLS", &tls_block),
            ("DOCROOT", &places.docroot),
            ("PHP", &php),
            ("ACCESS_LOG", &log_directive),
            ("SENDFILE", sendfile),
            ("KEEPALIVE", &keepalive),
        ],
    )?;

    let ready = match spec.protocol {
        Protocol::H2c => probe_over(spec, Protocol::H2c),
        _ => ready_probe(spec),
    };
    let mut dirs = vec!["conf", "logs", "run", "tmp"];
    if tls.is_some() {
        dirs.push(tls::DIR);
    }
    let process = places.process(
        "nginx",
        vec![exe.into(), "-e".into(), error_log.clone().into(), "-c".into(), conf.clone().into()],
    );
    let mut launch = Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(&dirs),
        tls: tls.map(|t| t.files),
        validate: vec![vec![
            exe.into(),
            "-t".into(),
            "-e".into(),
            error_log.into(),
            "-c".into(),
            conf.into(),
        ]],
        versions: vec![VersionProbe::new(NGINX.name, exe, "-v", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    };
    if spec.php == Some(Php::Fpm) {
        php_fpm::add_pool(spec, places, &mut launch)?;
    }
    Ok(launch)
}

/// `nginx/1.22.1` from `nginx -v`, which prints `nginx version: nginx/1.22.1` on stderr.
pub(crate) fn parse_version(output: &str) -> Option<String> {
    word_with_prefix(output, "nginx/").map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{conf, spec};
    use crate::ServerKind;

    #[test]
    fn user_line_only_with_a_user() {
        let mut s = spec(ServerKind::Nginx, None);
        assert!(!conf(&s, "conf/nginx.conf").contains("\nuser "));
        s.user = Some("www-data".into());
        assert!(conf(&s, "conf/nginx.conf").contains("\nuser www-data;\n"));
    }

    #[test]
    fn workers_auto_or_count() {
        let mut s = spec(ServerKind::Nginx, None);
        assert!(conf(&s, "conf/nginx.conf").contains("\nworker_processes auto;\n"));
        s.workers = std::num::NonZeroU32::new(3);
        assert!(conf(&s, "conf/nginx.conf").contains("\nworker_processes 3;\n"));
    }

    #[test]
    fn keepalive_requests_and_sendfile_only_when_asked() {
        let mut s = spec(ServerKind::Nginx, None);
        let plain = conf(&s, "conf/nginx.conf");
        assert!(plain.contains("\n    sendfile on;\n") && !plain.contains("keepalive_requests"));
        s.sendfile = Some(true);
        assert_eq!(conf(&s, "conf/nginx.conf"), plain, "on is what is rendered without it");
        s.sendfile = Some(false);
        s.keepalive_requests = std::num::NonZeroU32::new(10);
        let set = conf(&s, "conf/nginx.conf");
        assert!(set.contains("\n    sendfile off;\n"), "{set}");
        assert!(set.contains("\n    keepalive_requests 10;\n"), "{set}");
        assert!(!set.contains("1000 requests"), "{set}");
    }

    #[test]
    fn php_location_and_pool_only_with_fpm() {
        let plain = render(&spec(ServerKind::Nginx, None), &places(ServerKind::Nginx)).unwrap();
        assert_eq!(plain.processes.len(), 1);
        assert!(!plain.files[0].contents.contains("fastcgi_pass"));

        let s = spec(ServerKind::Nginx, Some(Php::Fpm));
        let l = crate::render(&s).unwrap();
        let names: Vec<_> = l.processes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["php-fpm", "nginx"]);
        assert!(conf(&s, "conf/nginx.conf")
            .contains("fastcgi_pass unix:/run-dir/nginx/run/php-fpm.sock;"));
        assert_eq!(l.validate.len(), 2);
    }

    #[test]
    fn ipv6_listen_is_bracketed() {
        let mut s = spec(ServerKind::Nginx, None);
        s.listen = "[::1]:8080".parse().unwrap();
        assert!(conf(&s, "conf/nginx.conf").contains("listen [::1]:8080;"));
    }

    #[test]
    fn version() {
        assert_eq!(parse_version("nginx version: nginx/1.22.1\n").as_deref(), Some("nginx/1.22.1"));
        assert_eq!(parse_version("bash: nginx: not found"), None);
    }

    fn places(kind: ServerKind) -> Places {
        Places::new(&spec(kind, None)).unwrap()
    }
}
