//! thttpd, seed 002's server, as sthttpd 2.27 (its maintained fork; Debian 12 has no thttpd,
//! `scripts/build-thttpd.sh` builds it): static files from one process and one thread, every
//! connection in one poll(2) loop (select where there is no poll), no keep-alive (every
//! response says `Connection: close`). No config file: everything is flags,
//!
//! ```text
//! thttpd -D -p PORT -h ADDR -d DOCROOT -nor -nos -l LOG [-u USER]
//! ```
//!
//! `-D` keeps it in the foreground. No `-t`, so no throttle table: thttpd throttles nothing.
//! `-nor`: no chroot (chroot needs root, which the lab may not be; nothing else here is jailed
//! either), and `-nos`: no symlink check, the per-request walk that thttpd leaves out when it
//! runs chrooted as its manual advises and Debian's old package ran it, and that no other
//! server here makes. No `-c` (and none built in), so no CGI. `-l`: the access log when the
//! spec asks for one (Combined Log Format, the file opened before thttpd drops privileges),
//! else `/dev/null`, thttpd's own word for no log: without `-l` it would send every request to
//! syslog, and the lab measures servers, not their logging. Started as root, thttpd switches
//! user, to `nobody` unless `-u` says otherwise, so `-u` is passed whenever the spec has a
//! user. It serves only world-readable files that are not executable (the lab's docroot is
//! 0644). No config check exists. A worker count is refused: there is nothing to set.
//!
//! Protocols: `h1` only: sthttpd has no TLS and no HTTP/2.

use std::ffi::OsString;

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::Launch;
use crate::programs::THTTPD;
use crate::ready_probe;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::version::{word_with_prefix, VersionProbe};

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    if let Some(n) = spec.workers {
        return Err(DriverError::WorkersNotSupported {
            server: spec.kind.name().to_owned(),
            workers: n.get(),
            why: "it serves every connection from one process with one thread",
        });
    }
    let exe = spec.programs.path(&THTTPD, spec.kind)?;
    let access_log = access_log::at_path(spec, places, LogFormat::Common);
    let log: OsString = match &access_log {
        Some(log) => log.path.clone().into(),
        None => "/dev/null".into(),
    };
    let mut argv: Vec<OsString> = vec![
        exe.into(),
        "-D".into(),
        "-p".into(),
        spec.listen.port().to_string().into(),
        "-h".into(),
        spec.listen.ip().to_string().into(),
        "-d".into(),
        spec.docroot.clone().into(),
        "-nor".into(),
        "-nos".into(),
        "-l".into(),
        log,
    ];
    if let Some(user) = &places.user {
        argv.extend(["-u".into(), user.into()]);
    }
    let ready = ready_probe(spec);
    let process = places.process("thttpd", argv);
    Ok(Launch {
        dirs: places.dirs(&["logs"]),
        versions: vec![VersionProbe::new(THTTPD.name, exe, "-V", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    })
}

/// `sthttpd/2.27.0` from `thttpd -V`: `sthttpd/2.27.0 03oct2014` (acme.com's own thttpd says
/// `thttpd/2.29 23May2018`).
fn parse_version(output: &str) -> Option<String> {
    word_with_prefix(output, "sthttpd/")
        .or_else(|| word_with_prefix(output, "thttpd/"))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::spec;
    use crate::{Protocol, ServerKind};
    use std::num::NonZeroU32;

    #[test]
    fn argv() {
        let mut s = spec(ServerKind::Thttpd, None);
        let l = crate::render(&s).unwrap();
        let want = "/usr/local/sbin/thttpd -D -p 8080 -h 127.0.0.1 -d /docroot \
                    -nor -nos -l /dev/null";
        assert_eq!(l.processes[0].argv, want.split(' ').collect::<Vec<_>>());
        assert!(l.access_log.is_none());
        assert_eq!(l.dirs, [std::path::PathBuf::from("/run-dir/thttpd/logs")]);
        // No throttle table, no CGI pattern, no chroot, no config file.
        let flags = ["-t", "-c", "-r", "-C"];
        assert!(!l.processes[0].argv.iter().any(|a| flags.iter().any(|f| a == f)));
        assert!(l.files.is_empty() && l.validate.is_empty());

        s.user = Some("www-data".into());
        s.listen = "[::1]:81".parse().unwrap();
        let l = crate::render(&s).unwrap();
        assert_eq!(l.processes[0].argv[3..5], ["81", "-h"]);
        assert_eq!(l.processes[0].argv[5], "::1");
        assert_eq!(l.processes[0].argv[12..], ["-u", "www-data"]);
    }

    #[test]
    fn the_access_log_is_its_l_file() {
        let mut s = spec(ServerKind::Thttpd, None);
        s.access_log = true;
        let l = crate::render(&s).unwrap();
        let log = l.access_log.unwrap();
        assert_eq!(log.path, std::path::PathBuf::from("/run-dir/thttpd/logs/access.log"));
        assert_eq!(log.format, LogFormat::Common);
        assert_eq!(l.processes[0].argv[10..], ["-l", "/run-dir/thttpd/logs/access.log"]);
        // As thttpd writes it: Combined, its referrer empty when none was sent.
        let line = "127.0.0.1 - - [02/Dec/2026:17:40:01 +0000] \"GET /static.bin HTTP/1.1\" 200 \
                    100000 \"\" \"herd/0.1.0\"\n";
        let got = crate::parse_access_log(log.format, line).unwrap();
        assert_eq!(
            (got[0].target.as_str(), got[0].status, got[0].body_bytes),
            ("/static.bin", 200, 100_000)
        );
    }

    #[test]
    fn workers_are_refused() {
        let mut s = spec(ServerKind::Thttpd, None);
        s.workers = NonZeroU32::new(1);
        let err = crate::render(&s).unwrap_err();
        assert!(matches!(err, DriverError::WorkersNotSupported { workers: 1, .. }));
        let msg = err.to_string();
        assert!(msg.contains("one process with one thread; leave workers unset"), "{msg}");
    }

    #[test]
    fn only_plain_http_1() {
        assert_eq!(ServerKind::Thttpd.protocols(), [Protocol::H1]);
        for p in [Protocol::H1Tls, Protocol::H2, Protocol::H2c, Protocol::H3] {
            let mut s = spec(ServerKind::Thttpd, None);
            s.protocol = p;
            let msg = crate::render(&s).unwrap_err().to_string();
            assert!(msg.contains("no TLS and no HTTP/2"), "{msg}");
        }
    }

    #[test]
    fn version() {
        assert_eq!(parse_version("sthttpd/2.27.0 03oct2014\n").as_deref(), Some("sthttpd/2.27.0"));
        assert_eq!(parse_version("thttpd/2.29 23May2018\n").as_deref(), Some("thttpd/2.29"));
        assert_eq!(parse_version("usage: thttpd [-C configfile]"), None);
    }
}
