//! nginx: static files, and PHP through php-fpm ([`Php::Fpm`]). Renders
//! conf/nginx.conf from src/templates/nginx.conf (Debian's nginx.conf, foreground, everything
//! under the run_dir) and starts `nginx -e logs/nginx-error.log -c conf/nginx.conf`, after
//! php-fpm when there is PHP. Checked with `nginx -t`.

use std::ffi::OsString;

use crate::error::DriverError;
use crate::launch::{Launch, RenderedFile};
use crate::programs::NGINX;
use crate::run_dir::Places;
use crate::spec::{Php, ServerSpec};
use crate::template::fill;
use crate::version::{word_with_prefix, VersionProbe};
use crate::{php_fpm, ready_probe};

const TEMPLATE: &str = include_str!("templates/nginx.conf");

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
    let contents = fill(
        "templates/nginx.conf",
        TEMPLATE,
        &[
            ("RUN", places.run()),
            ("USER", &user),
            ("WORKERS", &workers),
            ("LISTEN", &spec.listen.to_string()),
            ("DOCROOT", &places.docroot),
            ("PHP", &php),
        ],
    )?;

    let ready = ready_probe(spec);
    let process = places
        .process(
            "nginx",
            vec![
                exe.into(),
                "-e".into(),
                error_log.clone().into(),
                "-c".into(),
                conf.clone().into(),
            ],
        )
        .ready_when(ready.clone());
    let mut launch = Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(&["conf", "logs", "run", "tmp"]),
        user_dirs: Vec::new(),
        processes: vec![process],
        ready,
        validate: vec![vec![
            exe.into(),
            "-t".into(),
            "-e".into(),
            error_log.into(),
            "-c".into(),
            conf.into(),
        ]],
        versions: vec![VersionProbe {
            program: NGINX.name.to_owned(),
            argv: vec![OsString::from(exe), "-v".into()],
            parse: parse_version,
        }],
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
