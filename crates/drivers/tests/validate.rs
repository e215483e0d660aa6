//! The real servers and proxies judge the rendered configs: every setup and proxy (and worker
//! counts, IPv6, and every protocol each one speaks, with its certificate written as the lab
//! writes it) is rendered into a temporary run_dir with this machine's programs, and each of
//! its `Launch::validate` commands (`nginx -t`, `apache2 -t`, `lighttpd -tt`, `h2o -t`,
//! `php-fpm8.2 -t`, `haproxy -c`, `caddy validate`, `testparm -s`) must exit 0, also while the listen address
//! is taken. Each version probe must read the real program's answer, and OpenSSL must accept
//! each made certificate for its names. A missing program fails with the package to install;
//! nothing is skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::net::SocketAddr;
use std::num::NonZeroU32;

use herd_drivers::{
    render, render_proxy, Mpm, Php, Protocol, ProxyKind, ProxySpec, ServerKind, ServerSpec,
};
use herd_testutil::launch::{lab_user, prepare};
use util::{
    located, located_proxy, need_tls_modules, run, runs_as, setup_name, setups, show, tempdir,
    with_protocol,
};

fn spec(kind: ServerKind, php: Option<Php>, listen: &str, workers: Option<u32>) -> ServerSpec {
    let dir = tempdir(&setup_name(kind, php));
    let docroot = dir.join("www");
    std::fs::create_dir(&docroot).unwrap();
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    ServerSpec {
        kind,
        php,
        protocol: Protocol::H1,
        listen: listen.parse::<SocketAddr>().unwrap(),
        docroot,
        run_dir,
        workers: workers.and_then(NonZeroU32::new),
        user: lab_user(),
        runs_as: runs_as(),
        programs: located(kind, php),
        access_log: false,
        keepalive_requests: None,
        sendfile: None,
    }
}

/// `s` with `keepalive_requests = 10` and `sendfile = false`: both away from what is rendered
/// without them.
fn with_settings(s: ServerSpec) -> ServerSpec {
    ServerSpec { keepalive_requests: NonZeroU32::new(10), sendfile: Some(false), ..s }
}

/// Renders, prepares and validates; returns how many checks ran.
fn validate(spec: &ServerSpec) -> usize {
    let name = with_protocol(&setup_name(spec.kind, spec.php), spec.protocol);
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

/// Each setup of the servers `keep` takes: over h1 with the listen address taken, on IPv6, with
/// two workers, with an access log; then over every other protocol the server speaks, with the address taken, and
/// the TLS ones on IPv6 too. Returns how many checks ran.
fn validate_all(keep: impl Fn(ServerKind) -> bool, expected_checks: usize) {
    need_tls_modules();
    let mut checks = 0;
    for (kind, php) in setups().into_iter().filter(|(k, _)| keep(*k)) {
        // The checks must not bind the listen address: it is taken while they run.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listen = taken.local_addr().unwrap().to_string();
        checks += validate(&spec(kind, php, &listen, None));
        checks += validate(&spec(kind, php, "[::1]:8080", None));
        if kind.takes_workers() {
            checks += validate(&spec(kind, php, "127.0.0.1:8080", Some(2)));
        }
        if kind.speaks_http() {
            checks += validate(&ServerSpec { access_log: true, ..spec(kind, php, &listen, None) });
        }
        if kind.takes_keepalive_requests().is_ok() && kind.takes_sendfile().is_ok() {
            checks += validate(&with_settings(spec(kind, php, &listen, None)));
        }
        for protocol in kind.protocols().into_iter().filter(|&p| p != Protocol::H1) {
            checks += validate(&ServerSpec { protocol, ..spec(kind, php, &listen, None) });
            if protocol.is_encrypted() {
                let v6 = spec(kind, php, "[::1]:8443", None);
                checks += validate(&ServerSpec { protocol, ..v6 });
            }
        }
        drop(taken);
    }
    assert_eq!(checks, expected_checks);
}

// The counts: per setup, 4 variants over h1 (3 without workers; nginx, Apache and lighttpd 5,
// with keepalive_requests and sendfile set), then per other protocol 1 more, 2 with TLS; each
// variant has one check per program (nginx or Apache with php-fpm: two).

#[test]
fn nginx() {
    // (5 + h1-tls 2 + h2 2 + h2c 1) variants: nginx 10 checks, nginx + php-fpm 20.
    validate_all(|k| k == ServerKind::Nginx, 30);
}

#[test]
fn apache_event() {
    // 10 variants each: plain 10, php-fpm 20, php-cgi 10.
    validate_all(|k| k == ServerKind::Apache(Mpm::Event), 40);
}

#[test]
fn apache_worker() {
    validate_all(|k| k == ServerKind::Apache(Mpm::Worker), 40);
}

#[test]
fn apache_prefork() {
    // No HTTP/2 under prefork: 5 + h1-tls 2 variants each: plain 7, php-fpm 14, php-cgi 7.
    validate_all(|k| k == ServerKind::Apache(Mpm::Prefork), 28);
}

#[test]
fn lighttpd() {
    // 10 variants each, plain and php-cgi.
    validate_all(|k| k == ServerKind::Lighttpd, 20);
}

#[test]
fn h2o() {
    validate_all(|k| k == ServerKind::H2o, 9);
}

#[test]
fn caddy() {
    // 4 + h1-tls 2 + h2 2 + h2c 1 + h3 2.
    validate_all(|k| k == ServerKind::Caddy, 11);
}

/// smbd's config, over loopback (its port taken) and IPv6; samba has no worker count and no
/// HTTP protocol, so that is all: 2 variants, each with `testparm -s`.
#[test]
fn samba() {
    validate_all(|k| k == ServerKind::Samba, 2);
}

/// `testparm -s` exits 0 on a parameter it does not know (it only says "Ignoring unknown
/// parameter"), so a misspelt setting in the template would pass the check: its words must
/// all be known too, and none of its values ignored.
#[test]
fn samba_config_has_no_unknown_or_ignored_setting() {
    let s = spec(ServerKind::Samba, None, "127.0.0.1:4450", None);
    let launch = render(&s).unwrap();
    prepare(&launch, s.user.as_deref());
    let out = run(&launch.validate[0]);
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("Unknown parameter") && !text.contains("Ignoring"), "{text}");
    // testparm prints the settings that differ from Samba's defaults: ours are there.
    for line in ["server min protocol = NT1", "smb ports = 4450", "[bench]"] {
        assert!(text.contains(line), "{line}: {text}");
    }
    std::fs::remove_dir_all(s.run_dir.parent().unwrap()).unwrap();
}

/// A check that passes must be able to fail: testparm rejects the rendered config with one
/// value it cannot take.
#[test]
fn samba_check_can_fail() {
    let s = spec(ServerKind::Samba, None, "127.0.0.1:4450", None);
    let launch = render(&s).unwrap();
    prepare(&launch, s.user.as_deref());
    let conf = &launch.files[0];
    let broken = conf.contents.replace("server min protocol = NT1", "server min protocol = NT9");
    assert_ne!(broken, conf.contents);
    std::fs::write(&conf.path, broken).unwrap();
    let out = run(&launch.validate[0]);
    assert!(!out.status.success(), "testparm accepted NT9: {}", show(&launch.validate[0]));
    std::fs::remove_dir_all(s.run_dir.parent().unwrap()).unwrap();
}

/// A check that passes must be able to fail: each server's check rejects the settings'
/// lines with a value it cannot take, so passing `with_settings` means they were read.
/// (`apache2 -t` reads `MaxKeepAliveRequests ten` as 0, no limit, without a word: a second
/// argument is what it refuses.)
#[test]
fn settings_checks_can_fail() {
    for (kind, good, bad) in [
        (ServerKind::Nginx, "keepalive_requests 10;", "keepalive_requests ten;"),
        (ServerKind::Nginx, "sendfile off;", "sendfile of;"),
        (ServerKind::Apache(Mpm::Event), "MaxKeepAliveRequests 10", "MaxKeepAliveRequests 10 10"),
        (ServerKind::Apache(Mpm::Event), "EnableSendfile Off", "EnableSendfile Of"),
        (ServerKind::Lighttpd, "max-keep-alive-requests = 10", "max-keep-alive-requests = \"x\""),
        (ServerKind::Lighttpd, "network-backend = \"writev\"", "network-backend = \"w\""),
    ] {
        let s = with_settings(spec(kind, None, "127.0.0.1:8080", None));
        let mut launch = render(&s).unwrap();
        let conf = &mut launch.files[0];
        assert!(conf.contents.contains(good), "{kind}: {good} not in {}", conf.contents);
        conf.contents = conf.contents.replace(good, bad);
        prepare(&launch, s.user.as_deref());
        let out = run(&launch.validate[0]);
        assert!(!out.status.success(), "{kind}: `{}` passed {bad}", show(&launch.validate[0]));
        std::fs::remove_dir_all(s.run_dir.parent().unwrap()).unwrap();
    }
}

/// A network path's server listens on port 80 (and could on 443): caddy must accept https on
/// 80 and http on 443 (it refused them with "scheme and port violate convention").
#[test]
fn caddy_on_the_other_schemes_port() {
    for (protocol, listen) in [
        (Protocol::H2, "198.18.0.2:80"),
        (Protocol::H3, "198.18.0.2:80"),
        (Protocol::H1, "198.18.0.2:443"),
    ] {
        let s = ServerSpec { protocol, ..spec(ServerKind::Caddy, None, listen, None) };
        assert_eq!(validate(&s), 1, "{protocol} on {listen}");
    }
}

/// A check that passes must be able to fail: each server's check rejects a config broken in
/// its TLS settings (a certificate file that does not exist).
#[test]
fn tls_checks_can_fail() {
    need_tls_modules();
    let kinds = [
        ServerKind::Nginx,
        ServerKind::Apache(Mpm::Event),
        ServerKind::Lighttpd,
        ServerKind::H2o,
        ServerKind::Caddy,
    ];
    for kind in kinds {
        let s = ServerSpec { protocol: Protocol::H2, ..spec(kind, None, "127.0.0.1:8443", None) };
        let launch = render(&s).unwrap();
        let mut broken = launch.clone();
        for f in &mut broken.files {
            f.contents = f.contents.replace("tls/cert.pem", "tls/missing.pem");
        }
        prepare(&broken, s.user.as_deref());
        let out = run(&broken.validate[0]);
        assert!(
            !out.status.success(),
            "{kind}: `{}` passed a config naming a missing certificate",
            show(&broken.validate[0])
        );
        std::fs::remove_dir_all(s.run_dir.parent().unwrap()).unwrap();
    }
}

/// OpenSSL accepts each made certificate: signed by the launch's CA, for the listen address
/// and `localhost`, for a TLS server; and no other launch's CA vouches for it.
#[test]
fn certificates_verify_for_their_names() {
    let tool = std::path::Path::new("/usr/bin/openssl");
    assert!(tool.is_file(), "{} is missing: apt-get install openssl", tool.display());
    let openssl = |args: &[&std::ffi::OsStr]| {
        let mut argv = vec![tool.as_os_str().to_owned()];
        argv.extend(args.iter().map(|a| a.to_os_string()));
        let out = run(&argv);
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let mut made = Vec::new();
    for (listen, ip) in [("127.0.0.1:8443", "127.0.0.1"), ("[::1]:8443", "::1")] {
        let s =
            ServerSpec { protocol: Protocol::H2, ..spec(ServerKind::Nginx, None, listen, None) };
        let launch = render(&s).unwrap();
        prepare(&launch, s.user.as_deref());
        let tls = launch.tls.unwrap();
        let cert = s.run_dir.join("tls/cert.pem");
        assert!(tls.files.iter().any(|f| f.path == cert));
        let (ca, cert_os) = (tls.ca.as_os_str(), cert.as_os_str());
        let (ok, out) = openssl(&[
            "verify".as_ref(),
            "-purpose".as_ref(),
            "sslserver".as_ref(),
            "-CAfile".as_ref(),
            ca,
            cert_os,
        ]);
        assert!(ok, "{listen}: {out}");
        let (ok, out) = openssl(&[
            "x509".as_ref(),
            "-noout".as_ref(),
            "-in".as_ref(),
            cert_os,
            "-checkhost".as_ref(),
            "localhost".as_ref(),
            "-checkip".as_ref(),
            ip.as_ref(),
        ]);
        assert!(ok, "{out}");
        assert!(out.contains("Hostname localhost does match certificate"), "{listen}: {out}");
        assert!(out.contains(&format!("IP {ip} does match certificate")), "{listen}: {out}");
        made.push((tls.ca, cert, s.run_dir.parent().unwrap().to_owned()));
    }
    let (ok, out) = openssl(&[
        "verify".as_ref(),
        "-CAfile".as_ref(),
        made[0].0.as_os_str(),
        made[1].1.as_os_str(),
    ]);
    assert!(!ok, "another launch's CA vouches for this certificate: {out}");
    for (_, _, dir) in made {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// mini_httpd and thttpd have no config check; herd serve neither (and its binary is another
/// crate's).
#[test]
fn no_check_for_mini_httpd_thttpd_and_herd() {
    validate_all(|k| k == ServerKind::MiniHttpd, 0);
    validate_all(|k| k == ServerKind::Thttpd, 0);
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
                "thttpd" => version == "sthttpd/2.27.0",
                "php-fpm8.2" => version.starts_with("PHP 8.2.") && version.ends_with(" (fpm-fcgi)"),
                "php-cgi" => version.starts_with("PHP 8.") && version.ends_with(" (cgi-fcgi)"),
                "caddy" => version.starts_with("caddy 2."),
                "smbd" | "testparm" => version.starts_with("Samba 4."),
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
        [
            "apache2",
            "caddy",
            "h2o",
            "lighttpd",
            "mini_httpd",
            "nginx",
            "php-cgi",
            "php-fpm8.2",
            "smbd",
            "testparm",
            "thttpd"
        ]
    );
}

/// A proxy spec in a new temporary run_dir with this machine's program.
fn proxy_spec(kind: ProxyKind, listen: &str, backends: &[&str], workers: Option<u32>) -> ProxySpec {
    let dir = tempdir(kind.name());
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    ProxySpec {
        kind,
        protocol: Protocol::H1,
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
    for protocol in [Protocol::H1Tls, Protocol::H2, Protocol::H2c] {
        if kind.carries(protocol).is_ok() {
            specs.push(ProxySpec { protocol, ..proxy_spec(kind, &listen, backends, None) });
        }
    }
    let mut checks = 0;
    for spec in specs {
        let launch = render_proxy(&spec).unwrap_or_else(|e| panic!("{kind}: {e}"));
        prepare(&launch, spec.user.as_deref());
        let what = format!(
            "{kind} over {} (workers {:?}, {} -> {:?})",
            spec.protocol, spec.workers, spec.listen, spec.backends
        );
        all_pass(&launch.validate, &what);
        checks += launch.validate.len();
        std::fs::remove_dir_all(spec.run_dir.parent().unwrap()).unwrap();
    }
    drop(taken);
    checks
}

#[test]
fn haproxy() {
    // haproxy -c: three variants over h1 for each mode, then h1-tls, h2 and h2c.
    assert_eq!(validate_proxy(ProxyKind::HaproxyHttp) + validate_proxy(ProxyKind::HaproxyTcp), 12);
}

#[test]
fn nginx_proxy() {
    // nginx -t: the three variants over h1, as for HAProxy (nginx carries h1 only).
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
