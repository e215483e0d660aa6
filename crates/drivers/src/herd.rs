//! herd serve, the reference server: the lab's own executable as `herd serve --root DOCROOT
//! --listen ADDR [--threads N]`. No config file and no config check. It serves the docroot's
//! files and its computed pages (`/9x9`, `/include` from `DOCROOT/include/`, `/echo`), keeps
//! alive without a request limit, writes no access log (its default; `--access-log` when the
//! spec asks for one: Common Log Format on its stdout, the process's log), and uses sendfile
//! above 16 KiB. It has no user switch: it runs as whoever the lab is, so `user` is not used.
//!
//! Protocols: `h1` and `h2c` on its plain listener (HTTP/2 with prior knowledge beside
//! HTTP/1.1: the connection's first bytes decide), `h1-tls` and `h2` over TLS with the
//! certificate made for the launch (`--tls-cert`/`--tls-key`; ALPN `http/1.1` alone for
//! `h1-tls`, `h2,http/1.1` for `h2`). No HTTP/3: caddy serves it.

use std::ffi::OsString;

use crate::access_log::{AccessLog, LogFormat};
use crate::error::DriverError;
use crate::launch::Launch;
use crate::programs::HERD;
use crate::ready_probe;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::tls::{self, Layout};
use crate::tls_for;
use crate::version::{word_after, VersionProbe};
use herd_stats::Protocol;

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    let exe = spec.programs.path(&HERD, spec.kind)?;
    let mut argv: Vec<OsString> = vec![
        exe.into(),
        "serve".into(),
        "--root".into(),
        spec.docroot.clone().into(),
        "--listen".into(),
        spec.listen.to_string().into(),
    ];
    // Without --threads: one worker thread per core.
    if let Some(n) = spec.workers {
        argv.extend(["--threads".into(), n.to_string().into()]);
    }
    let tls = tls_for(spec, places, Layout::Apart)?;
    if let Some(t) = &tls {
        argv.extend([
            "--tls-cert".into(),
            t.cert.clone().into(),
            "--tls-key".into(),
            t.key.clone().into(),
        ]);
        if spec.protocol == Protocol::H1Tls {
            // Only HTTP/1.1 offered, so that a client asking for h2 is told no.
            argv.extend(["--alpn".into(), "http/1.1".into()]);
        }
    }
    if spec.access_log {
        argv.push("--access-log".into());
    }
    let ready = ready_probe(spec);
    let process = places.process("herd", argv);
    let access_log = spec
        .access_log
        .then(|| AccessLog { path: process.log.clone(), format: LogFormat::HerdServe });
    let dirs: &[&str] = if tls.is_some() { &["logs", tls::DIR] } else { &["logs"] };
    Ok(Launch {
        dirs: places.dirs(dirs),
        tls: tls.map(|t| t.files),
        versions: vec![VersionProbe::new(HERD.name, exe, "--version", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    })
}

/// `herd/0.1.0` from `herd --version`, which prints `herd 0.1.0` (clap's format).
/// `herd 0.1.0 (commit 1a2b3c4d5e6f)` → `herd/0.1.0 (commit 1a2b3c4d5e6f)`: the commit is part
/// of the version, so a rebuilt herd serve counts as a changed server.
fn parse_version(output: &str) -> Option<String> {
    let line = output.lines().find(|l| l.starts_with("herd "))?;
    let version = word_after(line, "herd ")?;
    let commit = line.split_once(" (commit ").map(|(_, c)| c.trim_end_matches(')').trim());
    Some(match commit.filter(|c| !c.is_empty()) {
        Some(c) => format!("herd/{version} (commit {c})"),
        None => format!("herd/{version}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::spec;
    use crate::ServerKind;

    #[test]
    fn argv() {
        let mut s = spec(ServerKind::Herd, None);
        let l = crate::render(&s).unwrap();
        assert_eq!(
            l.processes[0].argv,
            ["/opt/herd/bin/herd", "serve", "--root", "/docroot", "--listen", "127.0.0.1:8080"]
        );
        s.workers = std::num::NonZeroU32::new(2);
        s.user = Some("www-data".into());
        let l = crate::render(&s).unwrap();
        assert_eq!(l.processes[0].argv[6..], ["--threads", "2"]);
        assert!(l.files.is_empty() && l.validate.is_empty());
    }

    #[test]
    fn tls_protocols_get_the_launch_s_certificate_and_h1_tls_offers_http1_only() {
        for (protocol, alpn) in [(Protocol::H2, None), (Protocol::H1Tls, Some("http/1.1"))] {
            let mut s = spec(ServerKind::Herd, None);
            s.protocol = protocol;
            let l = crate::render(&s).unwrap();
            let argv: Vec<String> =
                l.processes[0].argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            let tls = l.tls.as_ref().expect("a TLS launch has its files");
            let at = |flag: &str| argv.iter().position(|a| a == flag).map(|i| argv[i + 1].clone());
            assert!(at("--tls-cert").is_some_and(|c| c.ends_with("cert.pem")), "{argv:?}");
            assert!(at("--tls-key").is_some_and(|k| k.ends_with("key.pem")), "{argv:?}");
            assert_eq!(at("--alpn").as_deref(), alpn, "{argv:?}");
            assert!(tls.ca.ends_with("ca.pem"));
        }
        let mut s = spec(ServerKind::Herd, None);
        s.protocol = Protocol::H2c;
        let l = crate::render(&s).unwrap();
        assert!(l.tls.is_none(), "h2c is the plain listener");
    }

    #[test]
    fn version() {
        let own = format!("herd {}\n", env!("CARGO_PKG_VERSION"));
        assert_eq!(parse_version(&own), Some(format!("herd/{}", env!("CARGO_PKG_VERSION"))));
        assert_eq!(
            parse_version("herd 0.2.0 (commit 1a2b3c4d5e6f)\n").as_deref(),
            Some("herd/0.2.0 (commit 1a2b3c4d5e6f)")
        );
        assert_eq!(parse_version("herdsman 1.0"), None);
    }
}
