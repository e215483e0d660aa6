//! h2o 2.2: static files only. Renders conf/h2o.conf (YAML) from src/templates/h2o.conf and
//! starts `h2o -c conf/h2o.conf` (the default "worker" mode stays in the foreground). Checked
//! with `h2o -t`, which does not bind. h2o writes its temporary buffers (run_dir/tmp) after
//! dropping privileges, so that directory is one of [`Launch::user_dirs`]; it also starts a
//! perl helper (annotate-backtrace-symbols) that ends with it.
//!
//! Protocols, on the one listener: `h1` and `h2c` (every plain listener of h2o 2.2 speaks
//! both: HTTP/1.1, and HTTP/2 with prior knowledge or Upgrade, so the two render the same);
//! `h1-tls` and `h2` (TLS, ALPN `h2` and `http/1.1` either way: h2o 2.2 has no setting that
//! leaves h2 out, so an `h1-tls` client, which offers `http/1.1` only, gets that). No `h3`.

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::{Launch, RenderedFile};
use crate::programs::H2O;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::template::fill;
use crate::tls::{self, Layout};
use crate::version::{word_after, VersionProbe};
use crate::{ready_probe, tls_for};

const TEMPLATE: &str = include_str!("templates/h2o.conf");

/// The certificate made for this launch, on the listener (YAML, indented by the template).
const TLS: &str = r#"# TLS: the certificate herd made for this run. No OCSP stapling: by default h2o runs
# fetch-ocsp-response for it, which fails for a certificate that names no OCSP responder.
ssl:
  certificate-file: "@CERT@"
  key-file: "@KEY@"
  ocsp-update-interval: 0
"#;

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    let exe = spec.programs.path(&H2O, spec.kind)?;
    let conf = places.path("conf/h2o.conf");

    // Started as root without `user`, h2o would switch to nobody by itself.
    let user = places.user.as_ref().map(|u| format!("user: \"{u}\"")).unwrap_or_default();
    let threads = match spec.workers {
        Some(n) => format!("num-threads: {n}"),
        // h2o's default: one thread per CPU.
        None => String::new(),
    };
    let tls = tls_for(spec, places, Layout::Apart)?;
    let tls_block = match &tls {
        Some(t) => fill("h2o.rs TLS", TLS, &[("CERT", &t.cert), ("KEY", &t.key)])?,
        None => String::new(),
    };
    let access_log = access_log::at_path(spec, places, LogFormat::Common);
    let log_block = match &access_log {
        // h2o's `%s` is the final status (it has no `%>s`).
        Some(_) => format!(
            "access-log:\n  path: \"{}\"\n  format: \"{}\"",
            places.text(access_log::PATH),
            access_log::COMMON.replace("%>s", "%s")
        ),
        None => String::new(),
    };
    let contents = fill(
        "templates/h2o.conf",
        TEMPLATE,
        &[
            ("HOST", &spec.listen.ip().to_string()),
            ("PORT", &spec.listen.port().to_string()),
            ("USER", &user),
            ("THREADS", &threads),
            ("TLS", &tls_block),
            ("RUN", places.run()),
            ("DOCROOT", &places.docroot),
            ("ACCESS_LOG", &log_block),
        ],
    )?;

    let ready = ready_probe(spec);
    let process = places.process("h2o", vec![exe.into(), "-c".into(), conf.clone().into()]);
    Ok(Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(if tls.is_some() {
            &["conf", "logs", "tmp", tls::DIR]
        } else {
            &["conf", "logs", "tmp"]
        }),
        user_dirs: places.dirs(&["tmp"]),
        tls: tls.map(|t| t.files),
        validate: vec![vec![exe.into(), "-t".into(), "-c".into(), conf.into()]],
        versions: vec![VersionProbe::new(H2O.name, exe, "-v", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    })
}

/// `h2o 2.2.5` from `h2o -v`, which prints `h2o version 2.2.5` and its libraries.
fn parse_version(output: &str) -> Option<String> {
    word_after(output, "h2o version").map(|v| format!("h2o {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{conf, spec};
    use crate::ServerKind;
    use std::num::NonZeroU32;

    const CONF: &str = "conf/h2o.conf";

    #[test]
    fn listen_threads_and_user() {
        let mut s = spec(ServerKind::H2o, None);
        let c = conf(&s, CONF);
        assert!(c.contains("listen:\n  host: \"127.0.0.1\"\n  port: 8080\n"));
        assert!(!c.contains("num-threads") && !c.contains("\nuser:"));
        s.workers = NonZeroU32::new(4);
        s.user = Some("www-data".into());
        s.listen = "[::1]:8080".parse().unwrap();
        let c = conf(&s, CONF);
        assert!(c.contains("host: \"::1\"\n"));
        assert!(c.contains("\nuser: \"www-data\"\nnum-threads: 4\n"));
        assert!(!c.contains("\npid-file:"));
    }

    #[test]
    fn version() {
        let out = "h2o version 2.2.5\nOpenSSL: OpenSSL 3.0.19 27 Jan 2026\nmruby: YES\n";
        assert_eq!(parse_version(out).as_deref(), Some("h2o 2.2.5"));
    }
}
