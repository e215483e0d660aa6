//! Unit-test fixtures shared by the drivers' tests: a spec with fixed paths (the same ones the
//! golden tests use) and a shortcut to one rendered file. Compiled for tests only.

use std::path::PathBuf;

use crate::{render, Php, Programs, Protocol, ServerKind, ServerSpec};

/// `kind` with `php` over `h1` at 127.0.0.1:8080, docroot `/docroot`, run_dir `/run-dir/<name>`,
/// programs at their Debian paths (thttpd at make install's), no user, default workers.
pub(crate) fn spec(kind: ServerKind, php: Option<Php>) -> ServerSpec {
    ServerSpec {
        kind,
        php,
        protocol: Protocol::H1,
        listen: "127.0.0.1:8080".parse().unwrap(),
        docroot: PathBuf::from("/docroot"),
        run_dir: PathBuf::from(format!("/run-dir/{}", kind.name())),
        workers: None,
        user: None,
        runs_as: None,
        programs: Programs::from_paths([
            ("herd", PathBuf::from("/opt/herd/bin/herd")),
            ("nginx", PathBuf::from("/usr/sbin/nginx")),
            ("apache2", PathBuf::from("/usr/sbin/apache2")),
            ("lighttpd", PathBuf::from("/usr/sbin/lighttpd")),
            ("h2o", PathBuf::from("/usr/bin/h2o")),
            ("mini_httpd", PathBuf::from("/usr/sbin/mini_httpd")),
            ("thttpd", PathBuf::from("/usr/local/sbin/thttpd")),
            ("php-fpm8.2", PathBuf::from("/usr/sbin/php-fpm8.2")),
            ("php-cgi", PathBuf::from("/usr/bin/php-cgi")),
            ("caddy", PathBuf::from("/usr/bin/caddy")),
            ("smbd", PathBuf::from("/usr/sbin/smbd")),
            ("testparm", PathBuf::from("/usr/bin/testparm")),
            ("tbench_srv", PathBuf::from("/usr/bin/tbench_srv")),
        ]),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    }
}

/// The contents of the rendered file at `rel` under the spec's run_dir.
pub(crate) fn conf(spec: &ServerSpec, rel: &str) -> String {
    let launch = render(spec).unwrap();
    let path = spec.run_dir.join(rel);
    launch
        .files
        .into_iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {rel} rendered"))
        .contents
}
