//! The real servers and proxies judge the rendered configs: every setup and proxy (and worker
//! counts, and IPv6) is rendered into a temporary run_dir with this machine's programs, and
//! each of its `Launch::validate` commands (`nginx -t`, `apache2 -t`, `lighttpd -tt`, `h2o
//! -t`, `php-fpm8.2 -t`, `haproxy -c`) must exit 0, also while the listen address is taken. Each version probe
//! must read the real program's answer. A missing program fails with the package to install;
//! nothing is skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::net::SocketAddr;
use std::num::NonZeroU32;

use herd_drivers::{render, render_proxy, Mpm, Php, ProxyKind, ProxySpec, ServerKind, ServerSpec};
use util::{lab_user, located, located_proxy, prepare, run, setup_name, setups, show, tempdir};

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
    all_pass(&launch.validate, &format!("{name} (workers {:?}, {})", spec.workers, spec.listen));
    std::fs::remove_dir_all(spec.run_dir.parent().unwrap()).unwrap();
    launch.validate.len()
}

/// Runs each check command; a failing one fails the test with its output.
fn all_pass(checks: &[Vec<std::ffi::OsString>], what: &str) {
    for argv in checks {
        let out = run(argv);
        assert!(
            out.status.success(),
            "{what}: `{}` failed ({}):\n{}{}",
            show(argv),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
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

/// What `probe` reads from the installed program's answer (stdout and stderr together).
fn probed_version(probe: &herd_drivers::VersionProbe) -> String {
    let out = run(&probe.argv);
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (probe.parse)(&text).unwrap_or_else(|| panic!("{}: no version in {text:?}", show(&probe.argv)))
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
            let version = probed_version(&probe);
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
                seen.push(probe.program);
            }
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        ["apache2", "h2o", "lighttpd", "mini_httpd", "nginx", "php-cgi", "php-fpm8.2"]
    );
}

/// A proxy spec in a new temporary run_dir with this machine's program.
fn proxy_spec(kind: ProxyKind, listen: &str, backends: &[&str], workers: Option<u32>) -> ProxySpec {
    let dir = tempdir(kind.name());
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    ProxySpec {
        kind,
        listen: listen.parse().unwrap(),
        backends: backends.iter().map(|b| b.parse().unwrap()).collect(),
        run_dir,
        workers: workers.and_then(NonZeroU32::new),
        user: lab_user(),
        programs: located_proxy(kind),
    }
}

/// Each proxy's checks with the listen address taken, over IPv6 (listen and backend), and
/// with two workers where it takes a count.
/// Returns how many checks ran.
fn validate_proxy(kind: ProxyKind) -> usize {
    // As the lab gives them: every server address to a balancer, one to the rest.
    let backends: &[&str] =
        if kind.balances() { &["127.0.0.1:8081", "127.0.0.2:8081"] } else { &["127.0.0.1:8081"] };
    // The checks must not bind the listen address: it is taken while they run.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let mut specs = vec![
        proxy_spec(kind, &listen, backends, None),
        proxy_spec(kind, "[::1]:8080", &["[::1]:8081"], None),
    ];
    if !matches!(kind, ProxyKind::SslhFork | ProxyKind::SslhSelect) {
        specs.push(proxy_spec(kind, "127.0.0.1:8080", backends, Some(2)));
    }
    let mut checks = 0;
    for spec in specs {
        let launch = render_proxy(&spec).unwrap_or_else(|e| panic!("{kind}: {e}"));
        prepare(&launch, spec.user.as_deref());
        let what =
            format!("{kind} (workers {:?}, {} -> {:?})", spec.workers, spec.listen, spec.backends);
        all_pass(&launch.validate, &what);
        checks += launch.validate.len();
        std::fs::remove_dir_all(spec.run_dir.parent().unwrap()).unwrap();
    }
    drop(taken);
    checks
}

#[test]
fn haproxy() {
    // haproxy -c: three variants for each mode.
    assert_eq!(validate_proxy(ProxyKind::HaproxyHttp) + validate_proxy(ProxyKind::HaproxyTcp), 6);
}

#[test]
fn nginx_proxy() {
    // nginx -t: the three variants, as for HAProxy.
    assert_eq!(validate_proxy(ProxyKind::NginxProxy), 3);
}

/// sslh 1.20 has no config check: its drivers give none, and its programs must still be
/// installed (`validate_proxy` renders with the located programs).
#[test]
fn sslh_has_no_check_but_is_installed() {
    assert_eq!(validate_proxy(ProxyKind::SslhFork) + validate_proxy(ProxyKind::SslhSelect), 0);
}

/// HAProxy's check reads the config: a broken one fails it, so a passing check means
/// something.
#[test]
fn haproxy_check_can_fail() {
    let spec = proxy_spec(ProxyKind::HaproxyHttp, "127.0.0.1:8080", &["127.0.0.1:8081"], None);
    let mut launch = render_proxy(&spec).unwrap();
    launch.files[0].contents = launch.files[0].contents.replace("balance roundrobin", "balance x");
    prepare(&launch, spec.user.as_deref());
    let out = run(&launch.validate[0]);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    std::fs::remove_dir_all(spec.run_dir.parent().unwrap()).unwrap();
}

/// Every proxy's version probe reads the installed program's own answer.
#[test]
fn proxy_version_probes_parse_the_real_output() {
    let mut seen = Vec::new();
    for kind in ProxyKind::ALL {
        let spec = proxy_spec(kind, "127.0.0.1:8080", &["127.0.0.1:8081"], None);
        let launch = render_proxy(&spec).unwrap_or_else(|e| panic!("{kind}: {e}"));
        for probe in launch.versions {
            let version = probed_version(&probe);
            let form = match probe.program.as_str() {
                "haproxy" => version.starts_with("HAProxy 2."),
                "nginx" => version.starts_with("nginx/1."),
                // Debian's /usr/sbin/sslh is sslh-fork.
                "sslh" => version.starts_with("sslh-fork 1."),
                "sslh-select" => version.starts_with("sslh-select 1."),
                other => panic!("unexpected program {other}"),
            };
            assert!(form, "{kind}: {}: {version:?}", probe.program);
            if !seen.contains(&probe.program) {
                seen.push(probe.program);
            }
        }
        std::fs::remove_dir_all(spec.run_dir.parent().unwrap()).unwrap();
    }
    seen.sort();
    assert_eq!(seen, ["haproxy", "nginx", "sslh", "sslh-select"]);
}
