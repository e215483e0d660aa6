//! mini_httpd 1.30: static files only, one forked process per connection, no keep-alive (it
//! answers `Connection: close`). No config file: everything is flags,
//!
//! ```text
//! mini_httpd -D -p PORT -h ADDR -d DOCROOT -i run/mini_httpd.pid [-u USER]
//! ```
//!
//! `-D` keeps it in the foreground. No `-l` unless the spec asks for an access log: that file
//! is mini_httpd's access log (Combined Log Format), and the lab measures servers, not their
//! logging (without it, nothing is logged per request; start-up messages go to stderr and
//! syslog). No `-r`, so no chroot (mini_httpd only warns about that),
//! and no `-c`, so no CGI. Started as root, mini_httpd always switches user, to `nobody`
//! unless `-u` says otherwise, so `-u` is passed whenever the spec has a user. No config check
//! exists. A worker count is refused: there is nothing to set.
//!
//! Protocols: `h1`, and `h1-tls` with `-S -E tls/cert-and-key.pem` (Debian builds it with
//! OpenSSL; `-E` takes the certificate and key in one file). No HTTP/2.

use std::ffi::OsString;

use crate::access_log::{self, LogFormat};
use crate::error::DriverError;
use crate::launch::Launch;
use crate::programs::MINI_HTTPD;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::tls::{self, Layout};
use crate::version::{word_with_prefix, VersionProbe};
use crate::{ready_probe, tls_for};

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    if let Some(n) = spec.workers {
        return Err(DriverError::WorkersNotSupported {
            server: spec.kind.name().to_owned(),
            workers: n.get(),
            why: "it forks one process per connection",
        });
    }
    let exe = spec.programs.path(&MINI_HTTPD, spec.kind)?;
    let mut argv: Vec<OsString> = vec![
        exe.into(),
        "-D".into(),
        "-p".into(),
        spec.listen.port().to_string().into(),
        "-h".into(),
        spec.listen.ip().to_string().into(),
        "-d".into(),
        spec.docroot.clone().into(),
        "-i".into(),
        places.path("run/mini_httpd.pid").into(),
    ];
    if let Some(user) = &places.user {
        argv.extend(["-u".into(), user.into()]);
    }
    let access_log = access_log::at_path(spec, places, LogFormat::Common);
    if let Some(log) = &access_log {
        argv.extend(["-l".into(), log.path.clone().into()]);
    }
    let tls = tls_for(spec, places, Layout::AlsoTogether)?;
    if let Some(t) = &tls {
        argv.extend(["-S".into(), "-E".into(), t.cert_and_key.clone().into()]);
    }
    let ready = ready_probe(spec);
    let process = places.process("mini_httpd", argv);
    Ok(Launch {
        dirs: places.dirs(if tls.is_some() {
            &["logs", "run", tls::DIR]
        } else {
            &["logs", "run"]
        }),
        tls: tls.map(|t| t.files),
        versions: vec![VersionProbe::new(MINI_HTTPD.name, exe, "-V", parse_version)],
        access_log,
        ..Launch::new(process, ready)
    })
}

/// `mini_httpd/1.30` from `mini_httpd -V`: `mini_httpd/1.30 26Oct2018`.
fn parse_version(output: &str) -> Option<String> {
    word_with_prefix(output, "mini_httpd/").map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::spec;
    use crate::ServerKind;
    use std::num::NonZeroU32;

    #[test]
    fn argv() {
        let mut s = spec(ServerKind::MiniHttpd, None);
        let l = crate::render(&s).unwrap();
        let want = "/usr/sbin/mini_httpd -D -p 8080 -h 127.0.0.1 -d /docroot \
                    -i /run-dir/mini_httpd/run/mini_httpd.pid";
        assert_eq!(l.processes[0].argv, want.split(' ').collect::<Vec<_>>());
        s.user = Some("www-data".into());
        let l = crate::render(&s).unwrap();
        assert_eq!(l.processes[0].argv[10..], ["-u", "www-data"]);
        assert!(!l.processes[0].argv.iter().any(|a| a == "-l" || a == "-r" || a == "-c"));
    }

    #[test]
    fn workers_are_refused() {
        let mut s = spec(ServerKind::MiniHttpd, None);
        s.workers = NonZeroU32::new(2);
        let err = crate::render(&s).unwrap_err();
        assert!(matches!(err, DriverError::WorkersNotSupported { workers: 2, .. }));
        assert!(err.to_string().contains("leave workers unset"), "{err}");
    }

    #[test]
    fn version() {
        assert_eq!(
            parse_version("mini_httpd/1.30 26Oct2018\n").as_deref(),
            Some("mini_httpd/1.30")
        );
    }
}
