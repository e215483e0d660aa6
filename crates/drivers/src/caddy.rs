//! caddy 2.6: static files only. Renders conf/Caddyfile from src/templates/Caddyfile and starts
//! `caddy run --config conf/Caddyfile --adapter caddyfile`, which stays in the foreground, with
//! its home and XDG directories under the run_dir (`home/`: the autosaved config, storage, and
//! the `.step` directory caddy makes). Checked with `caddy validate` in the same environment
//! (through `/usr/bin/env`, since a check is an argv only). A worker count is Go's
//! `GOMAXPROCS`. caddy has no user switch: it runs as the lab does, so `user` is not used.
//!
//! Protocols, each on the one site's listener (`servers { protocols … }`): `h1`; `h1-tls`
//! (ALPN `http/1.1` only); `h2` (ALPN `h2` and `http/1.1`); `h2c` (prior knowledge or Upgrade,
//! and HTTP/1.1); `h3` (QUIC on the same port number over UDP, with h2 and HTTP/1.1 over TCP
//! beside it, caddy's default: the lab must leave the UDP port free too).

use std::ffi::OsString;

use herd_stats::Protocol;

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::{Launch, RenderedFile};
use crate::programs::CADDY;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::template::fill;
use crate::tls::{self, Layout};
use crate::version::VersionProbe;
use crate::{ready_probe, tls_for};

const TEMPLATE: &str = include_str!("templates/Caddyfile");

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    let exe = spec.programs.path(&CADDY, spec.kind)?;
    let conf = places.path("conf/Caddyfile");

    let protocols = match spec.protocol {
        Protocol::H1 | Protocol::H1Tls => "h1",
        Protocol::H2 => "h1 h2",
        Protocol::H2c => "h1 h2c",
        Protocol::H3 => "h1 h2 h3",
    };
    let tls = tls_for(spec, places, Layout::Apart)?;
    let (scheme, tls_line) = match &tls {
        Some(t) => ("https", format!("tls {} {}", t.cert, t.key)),
        None => ("http", String::new()),
    };
    let port = spec.listen.port();
    let ports = match (tls.is_some(), port) {
        (true, 80) => "http_port 81",
        (false, 443) => "https_port 444",
        _ => "",
    };
    let access_log = access_log::at_path(spec, places, LogFormat::CaddyJson);
    let log_block = match &access_log {
        Some(_) => {
            format!("log {{\n\toutput file {}\n\tformat json\n}}", places.text(access_log::PATH))
        }
        None => String::new(),
    };
    let contents = fill(
        "templates/Caddyfile",
        TEMPLATE,
        &[
            ("PROTOCOLS", protocols),
            ("PORTS", ports),
            ("SCHEME", scheme),
            ("PORT", &port.to_string()),
            ("HOST", &spec.listen.ip().to_string()),
            ("TLS", &tls_line),
            ("DOCROOT", &places.docroot),
            ("ACCESS_LOG", &log_block),
        ],
    )?;

    let home = places.text("home");
    let env: Vec<(OsString, OsString)> = [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", format!("{home}/config")),
        ("XDG_DATA_HOME", format!("{home}/data")),
    ]
    .into_iter()
    .chain(spec.workers.map(|n| ("GOMAXPROCS", n.to_string())))
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    let ready = ready_probe(spec);
    let mut process = places.process(
        "caddy",
        vec![
            exe.into(),
            "run".into(),
            "--config".into(),
            conf.clone().into(),
            "--adapter".into(),
            "caddyfile".into(),
        ],
    );
    process.env = env.clone();
    // `caddy validate` makes home/.step as `run` does: the same environment, through env(1).
    let mut validate: Vec<OsString> = vec!["/usr/bin/env".into()];
    validate.extend(env.iter().map(|(k, v)| {
        let mut kv = k.clone();
        kv.push("=");
        kv.push(v);
        kv
    }));
    validate.extend([
        exe.into(),
        "validate".into(),
        "--config".into(),
        conf.clone().into(),
        "--adapter".into(),
        "caddyfile".into(),
    ]);
    let mut dirs = vec!["conf", "logs", "home"];
    if tls.is_some() {
        dirs.push(tls::DIR);
    }
    Ok(Launch {
        files: vec![RenderedFile { path: conf, contents }],
        dirs: places.dirs(&dirs),
        tls: tls.map(|t| t.files),
        validate: vec![validate],
        versions: vec![VersionProbe::new(CADDY.name, exe, "version", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    })
}

/// `caddy 2.6.2` from `caddy version`: Debian's build prints `2.6.2`, caddy's own `v2.6.2
/// h1:…` (the module's hash).
fn parse_version(output: &str) -> Option<String> {
    let word = output.split_whitespace().next()?;
    let version = word.strip_prefix('v').unwrap_or(word);
    version.starts_with(|c: char| c.is_ascii_digit()).then(|| format!("caddy {version}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{conf, spec};
    use crate::ServerKind;
    use std::num::NonZeroU32;

    const CONF: &str = "conf/Caddyfile";

    fn with(protocol: Protocol) -> ServerSpec {
        ServerSpec { protocol, ..spec(ServerKind::Caddy, None) }
    }

    #[test]
    fn each_protocol_its_site_and_protocols() {
        for (protocol, site, protocols) in [
            (Protocol::H1, "http://:8080 {\n\tbind 127.0.0.1\n", "protocols h1\n"),
            (Protocol::H1Tls, "https://:8080 {\n\tbind 127.0.0.1\n", "protocols h1\n"),
            (Protocol::H2, "https://:8080 {\n\tbind 127.0.0.1\n", "protocols h1 h2\n"),
            (Protocol::H2c, "http://:8080 {\n\tbind 127.0.0.1\n", "protocols h1 h2c\n"),
            (Protocol::H3, "https://:8080 {\n\tbind 127.0.0.1\n", "protocols h1 h2 h3\n"),
        ] {
            let c = conf(&with(protocol), CONF);
            assert!(c.contains(site) && c.contains(protocols), "{protocol}: {c}");
            let tls = "\ttls /run-dir/caddy/tls/cert.pem /run-dir/caddy/tls/key.pem\n";
            assert_eq!(c.contains(tls), protocol.is_encrypted(), "{protocol}: {c}");
        }
    }

    /// On a network path the server listens on port 80: https there needs caddy's http_port
    /// elsewhere ("scheme and port violate convention" otherwise, seen in the lab).
    #[test]
    fn https_on_port_80_and_http_on_443_move_caddys_other_port() {
        let mut s = with(Protocol::H2);
        s.listen = "198.18.0.2:80".parse().unwrap();
        let c = conf(&s, CONF);
        assert!(c.contains("\thttp_port 81\n") && c.contains("https://:80 {"), "{c}");
        let mut s = with(Protocol::H1);
        s.listen = "198.18.0.2:443".parse().unwrap();
        let c = conf(&s, CONF);
        assert!(c.contains("\thttps_port 444\n") && c.contains("http://:443 {"), "{c}");
        let c = conf(&with(Protocol::H2), CONF);
        assert!(!c.contains("\thttp_port ") && !c.contains("\thttps_port "), "{c}");
    }

    #[test]
    fn ipv6_site_and_bind() {
        let mut s = with(Protocol::H2);
        s.listen = "[::1]:8443".parse().unwrap();
        let c = conf(&s, CONF);
        assert!(c.contains("https://:8443 {\n\tbind ::1\n"), "{c}");
    }

    #[test]
    fn environment_home_and_workers() {
        let mut s = with(Protocol::H1);
        s.user = Some("www-data".into());
        let l = crate::render(&s).unwrap();
        let env: Vec<String> = l.processes[0]
            .env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        assert_eq!(
            env,
            [
                "HOME=/run-dir/caddy/home",
                "XDG_CONFIG_HOME=/run-dir/caddy/home/config",
                "XDG_DATA_HOME=/run-dir/caddy/home/data"
            ]
        );
        assert_eq!(
            l.validate[0][1..4],
            l.processes[0]
                .env
                .iter()
                .map(|(k, v)| {
                    let mut kv = k.clone();
                    kv.push("=");
                    kv.push(v);
                    kv
                })
                .collect::<Vec<_>>()[..]
        );
        assert!(!conf(&s, CONF).contains("www-data"), "caddy has no user switch");
        s.workers = NonZeroU32::new(3);
        let l = crate::render(&s).unwrap();
        assert_eq!(l.processes[0].env[3], ("GOMAXPROCS".into(), "3".into()));
    }

    #[test]
    fn version() {
        assert_eq!(parse_version("2.6.2\n").as_deref(), Some("caddy 2.6.2"));
        assert_eq!(
            parse_version("v2.7.6 h1:w0NymbG2m9PcvKWsrXO6EEkY9Ru4FJK8uQbYcev1p3A=\n").as_deref(),
            Some("caddy 2.7.6")
        );
        assert_eq!(parse_version("caddy: command not found"), None);
    }
}
