//! The real servers judge the rendered configs: every setup (and worker counts, and IPv6) is
//! rendered into a temporary run_dir with this machine's programs, and each of its
//! `Launch::validate` commands (`nginx -t`, `apache2 -t`, `lighttpd -tt`, `h2o -t`,
//! `php-fpm8.2 -t`) must exit 0, also while the listen address is taken. Each version probe
//! must read the real program's answer. A missing program fails with the package to install;
//! nothing is skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::net::SocketAddr;
use std::num::NonZeroU32;

use herd_drivers::{render, Mpm, Php, ServerKind, ServerSpec};
use util::{lab_user, located, prepare, run, setup_name, setups, show, tempdir};

fn spec(kind: ServerKind, php: Option<Php>, listen: &str, workers: Option<u32>) -> ServerSpec {
    let dir = tempdir(&setup_name(kind, php));
    let docroot = dir.join("www");
    std::fs::create_dir(&docroot).unwrap();
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    ServerSpec {
        kind,
        php,
        listen: listen.parse::<SocketAddr>().unwrap(),
        docroot,
        run_dir,
        workers: workers.and_then(NonZeroU32::new),
        user: lab_user(),
        programs: located(kind, php),
    }
}

/// Renders, prepares and validates; returns how many checks ran.
fn validate(spec: &ServerSpec) -> usize {
    let name = setup_name(spec.kind, spec.php);
    let launch = render(spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    prepare(&launch, spec.user.as_deref());
    for argv in &launch.validate {
        let out = run(argv);
        assert!(
            out.status.success(),
            "{name} (workers {:?}, {}): `{}` failed ({}):\n{}{}",
            spec.workers,
            spec.listen,
            show(argv),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(spec.run_dir.parent().unwrap()).unwrap();
    launch.validate.len()
}

fn validate_all(keep: impl Fn(ServerKind) -> bool, expected_checks: usize) {
    let mut checks = 0;
    for (kind, php) in setups().into_iter().filter(|(k, _)| keep(*k)) {
        // The checks must not bind the listen address: it is taken while they run.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listen = taken.local_addr().unwrap().to_string();
        checks += validate(&spec(kind, php, &listen, None));
        drop(taken);
        checks += validate(&spec(kind, php, "[::1]:8080", None));
        if kind != ServerKind::MiniHttpd {
            checks += validate(&spec(kind, php, "127.0.0.1:8080", Some(2)));
        }
    }
    assert_eq!(checks, expected_checks);
}

#[test]
fn nginx() {
    // nginx; nginx + php-fpm (two checks each), × 3 variants.
    validate_all(|k| k == ServerKind::Nginx, 9);
}

#[test]
fn apache_event() {
    validate_all(|k| k == ServerKind::Apache(Mpm::Event), 12);
}

#[test]
fn apache_worker() {
    validate_all(|k| k == ServerKind::Apache(Mpm::Worker), 12);
}

#[test]
fn apache_prefork() {
    validate_all(|k| k == ServerKind::Apache(Mpm::Prefork), 12);
}

#[test]
fn lighttpd() {
    validate_all(|k| k == ServerKind::Lighttpd, 6);
}

#[test]
fn h2o() {
    validate_all(|k| k == ServerKind::H2o, 3);
}

/// mini_httpd has no config check; herd serve neither (and its binary is another crate's).
#[test]
fn no_check_for_mini_httpd_and_herd() {
    validate_all(|k| k == ServerKind::MiniHttpd, 0);
    let launch = render(&util::fixed_spec(ServerKind::Herd, None, None, None)).unwrap();
    assert!(launch.validate.is_empty());
}

/// Every version probe reads the installed program's own answer.
#[test]
fn version_probes_parse_the_real_output() {
    let mut seen = Vec::new();
    for (kind, php) in setups() {
        if kind == ServerKind::Herd {
            continue;
        }
        let s = util::fixed_spec(kind, php, None, None);
        let s = ServerSpec { programs: located(kind, php), ..s };
        for probe in render(&s).unwrap().versions {
            let out = run(&probe.argv);
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let version = (probe.parse)(&text)
                .unwrap_or_else(|| panic!("{}: no version in {text:?}", show(&probe.argv)));
            let form = match probe.program.as_str() {
                "nginx" => version.starts_with("nginx/1."),
                "apache2" => version.starts_with("Apache/2.4.") && version.ends_with("(Debian)"),
                "lighttpd" => version.starts_with("lighttpd/1.4."),
                "h2o" => version.starts_with("h2o 2."),
                "mini_httpd" => version.starts_with("mini_httpd/1."),
                "php-fpm8.2" => version.starts_with("PHP 8.2.") && version.ends_with(" (fpm-fcgi)"),
                "php-cgi" => version.starts_with("PHP 8.") && version.ends_with(" (cgi-fcgi)"),
                other => panic!("unexpected program {other}"),
            };
            assert!(form, "{}: {version:?}", probe.program);
            if !seen.contains(&probe.program) {
                seen.push(probe.program.clone());
            }
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        ["apache2", "h2o", "lighttpd", "mini_httpd", "nginx", "php-cgi", "php-fpm8.2"]
    );
}

/// The router's programs judge their rendered configs too (`haproxy -c`, `nginx -t`), and
/// every proxy's version probe reads the real program's answer (sslh has no config check).
#[test]
fn proxies_pass_their_own_checks_and_report_versions() {
    use herd_drivers::{proxy_programs_needed, render_proxy, ProxyKind, ProxySpec};
    let mut checks = 0;
    for kind in ProxyKind::ALL {
        let dir = tempdir(kind.name());
        let run_dir = dir.join("run");
        std::fs::create_dir(&run_dir).unwrap();
        let programs = herd_drivers::Programs::locate(
            &proxy_programs_needed(kind),
            std::path::Path::new("/nonexistent"),
        )
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let mut backends: Vec<SocketAddr> = vec!["127.0.0.1:8081".parse().unwrap()];
        if kind.balances() {
            backends.push("127.0.0.2:8081".parse().unwrap());
        }
        let spec = ProxySpec {
            kind,
            listen: "127.0.0.1:8080".parse().unwrap(),
            backends,
            run_dir,
            workers: None,
            user: lab_user(),
            programs,
        };
        let launch = render_proxy(&spec).unwrap_or_else(|e| panic!("{kind}: {e}"));
        prepare(&launch, spec.user.as_deref());
        for argv in &launch.validate {
            let out = run(argv);
            assert!(
                out.status.success(),
                "{kind}: `{}` failed ({}):\n{}{}",
                show(argv),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            checks += 1;
        }
        for v in &launch.versions {
            let out = run(&v.argv);
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!((v.parse)(&text).is_some(), "{kind}: no version in {text:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert_eq!(checks, 3, "haproxy twice and nginx once check their configs");
}
