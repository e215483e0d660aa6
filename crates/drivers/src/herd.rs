//! herd serve, the reference server: the lab's own executable as `herd serve --root DOCROOT
//! --listen ADDR [--threads N]`. No config file and no config check. It serves the docroot's
//! files and its computed pages (`/9x9`, `/include` from `DOCROOT/include/`, `/echo`), keeps
//! alive without a request limit, writes no access log (its default), and uses sendfile above
//! 16 KiB. It has no user switch: it runs as whoever the lab is, so `user` is not used.
//!
//! Protocols: `h1` only, until herd serve has TLS and HTTP/2 (issue 19, point 4; look for
//! SERVE-H2 here and in spec.rs).

use std::ffi::OsString;

use crate::error::DriverError;
use crate::launch::Launch;
use crate::programs::HERD;
use crate::ready_probe;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::version::{word_after, VersionProbe};

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
    // SERVE-H2: when herd serve has TLS (branch serve-h2), a TLS protocol gets
    // `--tls-cert CERT --tls-key KEY` from `crate::tls_for(spec, places, Layout::Apart)` (and
    // `tls::DIR` in dirs, the files in `Launch::tls`), and `h2c` whatever flag turns h2c on
    // on the plain listener; ServerKind::supports then accepts them. Until then supports()
    // refuses every protocol but h1, so only h1 gets here.
    let ready = ready_probe(spec);
    let process = places.process("herd", argv).ready_when(ready.clone());
    Ok(Launch {
        files: Vec::new(),
        dirs: places.dirs(&["logs"]),
        user_dirs: Vec::new(),
        processes: vec![process],
        ready,
        tls: None,
        validate: Vec::new(),
        versions: vec![VersionProbe {
            program: HERD.name.to_owned(),
            argv: vec![OsString::from(exe), "--version".into()],
            parse: parse_version,
        }],
    })
}

/// `herd/0.1.0` from `herd --version`, which prints `herd 0.1.0` (clap's format).
fn parse_version(output: &str) -> Option<String> {
    let line = output.lines().find(|l| l.starts_with("herd "))?;
    word_after(line, "herd ").map(|v| format!("herd/{v}"))
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
    fn version() {
        let own = format!("herd {}\n", env!("CARGO_PKG_VERSION"));
        assert_eq!(parse_version(&own), Some(format!("herd/{}", env!("CARGO_PKG_VERSION"))));
        assert_eq!(parse_version("herdsman 1.0"), None);
    }
}
