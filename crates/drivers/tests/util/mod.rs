//! Helpers for herd-drivers' integration tests: the list of variants every test walks (server
//! × MPM × PHP), specs with fixed paths for the goldens or with the real programs (servers' and
//! proxies') for the tests that run them, temporary run_dirs and docroots, and doing what the
//! lab does with a [`Launch`] before starting it (directories, ownership, files).
#![allow(dead_code, unreachable_pub)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use std::num::NonZeroU32;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use herd_drivers::{
    programs_needed, proxy_programs_needed, Mpm, Php, Programs, Protocol, ProxyKind, ServerKind,
    ServerSpec,
};

/// Every server with every PHP setup it supports (Apache with each MPM).
pub fn setups() -> Vec<(ServerKind, Option<Php>)> {
    let mut out = vec![
        (ServerKind::Herd, None),
        (ServerKind::Nginx, None),
        (ServerKind::Nginx, Some(Php::Fpm)),
    ];
    for mpm in [Mpm::Event, Mpm::Worker, Mpm::Prefork] {
        for php in [None, Some(Php::Fpm), Some(Php::Cgi)] {
            out.push((ServerKind::Apache(mpm), php));
        }
    }
    out.extend([
        (ServerKind::Lighttpd, None),
        (ServerKind::Lighttpd, Some(Php::Cgi)),
        (ServerKind::H2o, None),
        (ServerKind::MiniHttpd, None),
        (ServerKind::Thttpd, None),
        (ServerKind::Caddy, None),
        (ServerKind::Samba, None),
    ]);
    out
}

/// `nginx`, `apache-event-fpm`, `lighttpd-cgi`: a setup's name in test messages and golden
/// directories.
pub fn setup_name(kind: ServerKind, php: Option<Php>) -> String {
    match php {
        Some(Php::Fpm) => format!("{kind}-fpm"),
        Some(Php::Cgi) => format!("{kind}-cgi"),
        None => kind.name().to_owned(),
    }
}

/// The spec the goldens use: `h1` on 127.0.0.1:8080, docroot `/docroot`, run_dir `/run-dir/<server>`,
/// programs at fixed Debian paths, thttpd at make install's (nothing is looked up on this
/// machine).
pub fn fixed_spec(
    kind: ServerKind,
    php: Option<Php>,
    user: Option<&str>,
    workers: Option<u32>,
) -> ServerSpec {
    ServerSpec {
        kind,
        php,
        protocol: Protocol::H1,
        listen: "127.0.0.1:8080".parse().unwrap(),
        docroot: PathBuf::from("/docroot"),
        run_dir: PathBuf::from(format!("/run-dir/{}", kind.name())),
        workers: workers.and_then(NonZeroU32::new),
        user: user.map(str::to_owned),
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
        ]),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    }
}

/// The programs of `kind` with `php` on this machine. A missing one fails the test with the
/// package to install, or for thttpd the script that builds it (never a skip).
pub fn located(kind: ServerKind, php: Option<Php>) -> Programs {
    Programs::locate(&programs_needed(kind, php), &herd_exe())
        .unwrap_or_else(|e| panic!("{}: {e}", setup_name(kind, php)))
}

/// Where herd's executable is built beside this test (target/debug/herd for
/// target/debug/deps/live-…): what thttpd is looked for beside (target/peers/bin/thttpd,
/// where scripts/build-thttpd.sh puts it). herd itself is never started by these tests (its
/// binary is another crate's), so it need not be there.
pub fn herd_exe() -> PathBuf {
    let exe = std::env::current_exe().expect("this test's own executable");
    let profile = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>");
    profile.join("herd")
}

/// The program of proxy `kind` on this machine. A missing one fails the test with the package
/// to install (never a skip).
pub fn located_proxy(kind: ProxyKind) -> Programs {
    Programs::locate(&proxy_programs_needed(kind), &herd_exe())
        .unwrap_or_else(|e| panic!("{kind}: {e}"))
}

/// Fails, naming the package, unless the modules the servers' TLS needs beyond their own
/// packages are installed (lighttpd's TLS is a package of its own).
pub fn need_tls_modules() {
    let module = Path::new("/usr/lib/lighttpd/mod_openssl.so");
    assert!(
        module.is_file(),
        "lighttpd's TLS module {} is missing: apt-get install lighttpd-mod-openssl",
        module.display()
    );
}

/// The name of the user the tests run as (the lab's `runs_as`), from `id -un`.
pub fn runs_as() -> Option<String> {
    let out = Command::new("id").arg("-un").output().ok()?;
    let name = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !name.is_empty()).then_some(name)
}

/// A new directory under the system temp dir, unique across tests and processes, readable
/// and searchable by everyone (the servers' workers run as www-data when the tests are root).
pub fn tempdir(tag: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("herd-drivers-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `nginx`, `nginx-h2`, `caddy-h3`: a setup's name with its protocol where it is not `h1`.
pub fn with_protocol(name: &str, protocol: Protocol) -> String {
    match protocol {
        Protocol::H1 => name.to_owned(),
        p => format!("{name}-{p}"),
    }
}

/// Runs `argv` to completion, with its output.
pub fn run(argv: &[std::ffi::OsString]) -> Output {
    Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", argv[0]))
}

/// `argv` as one line, for messages.
pub fn show(argv: &[std::ffi::OsString]) -> String {
    argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
}
