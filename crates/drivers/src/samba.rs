//! Samba's smbd 4.17: SMB file serving for the lab's netbench workloads (smbtorture's NBENCH
//! replaying the NetBench trace), not HTTP. Renders conf/smb.conf from src/templates/smb.conf
//! and starts
//!
//! ```text
//! smbd -F --no-process-group -l RUN/logs -s RUN/conf/smb.conf
//! ```
//!
//! `-F` keeps it in the foreground, so the PID the lab started is smbd's parent.
//! `--no-process-group` keeps smbd in the process group the lab made for it, with everything it
//! forks (smbd-notifyd, cleanupd, one smbd per client connection): stopping that group stops
//! the whole instance. `-l` as well as `log file`: without `-l` smbd still creates files under
//! its compiled-in /var/log/samba. Every other directory Samba keeps state in (private, lock,
//! state, cache, binddns, pid, ncalrpc) is under the run_dir, and so is the passdb
//! (`tdbsam:`); nothing under /etc/samba is read.
//!
//! The one share, `bench`, is `share/` under the run_dir, mode 1777 ([`Launch::shared_dirs`]).
//! Clients are guests (no password), mapped to `nobody`. With a user (the lab runs as root),
//! connections run as `nobody` (`force user`; not the spec's user, see `render`); without one,
//! smbd runs as the lab and cannot change user.
//!
//! Ready when the listen port accepts a TCP connection ([`Probe::Tcp`]): there is no HTTP to
//! ask. Checked with `testparm -s`. No worker count: smbd forks one process per connection.
//! No [`Protocol`](crate::Protocol) either: smbd speaks SMB (NT1 up to SMB3), and
//! [`ServerKind::supports`](crate::ServerKind::supports) refuses every HTTP one.

use std::ffi::OsString;

use crate::error::DriverError;
use crate::launch::{Launch, Probe, RenderedFile};
use crate::programs::{SMBD, TESTPARM};
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::template::fill;
use crate::version::{word_after, VersionProbe};

const TEMPLATE: &str = include_str!("templates/smb.conf");

/// The share's name, as clients write it: `//ADDR/bench`.
pub const SHARE: &str = "bench";

/// Whom guests are, and whom connections run as when smbd starts as root.
const GUEST: &str = "nobody";

/// The run_dir's directories smbd uses, parents first. smbd makes some of its own (lock,
/// cache, ncalrpc) but not `private dir`: without it, it cannot open secrets.tdb and exits
/// (seen here), so every directory the config names is created for it.
const DIRS: [&str; 10] = [
    "conf",
    "logs",
    "run",
    "samba",
    "samba/binddns",
    "samba/cache",
    "samba/lock",
    "samba/private",
    "samba/state",
    "share",
];

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    if let Some(n) = spec.workers {
        return Err(DriverError::WorkersNotSupported {
            server: spec.kind.name().to_owned(),
            workers: n.get(),
            why: "smbd forks one process per client connection",
        });
    }
    let exe = spec.programs.path(&SMBD, spec.kind)?;
    let testparm = spec.programs.path(&TESTPARM, spec.kind)?;
    let conf = places.path("conf/smb.conf");
    // As root (the spec has a user), connections run as `nobody`, the guest account, and
    // not as the spec's user: with www-data as guest account and forced user, NBENCH's
    // NTCreateX in the directories it had made got NT_STATUS_ACCESS_DENIED (seen here); with
    // nobody, as in the probe (docs/netbench.md), it succeeds.
    let force_user = match &places.user {
        Some(_) => format!("force user = {GUEST}"),
        None => String::new(),
    };
    let contents = fill(
        "templates/smb.conf",
        TEMPLATE,
        &[
            ("RUN", places.run()),
            ("HOST", &spec.listen.ip().to_string()),
            ("PORT", &spec.listen.port().to_string()),
            ("GUEST", GUEST),
            ("FORCE_USER", &force_user),
        ],
    )?;
    let argv: Vec<OsString> = vec![
        exe.into(),
        "-F".into(),
        "--no-process-group".into(),
        "-l".into(),
        places.path("logs").into(),
        "-s".into(),
        conf.clone().into(),
    ];
    let ready = Probe::Tcp(spec.listen);
    let mut process = places.process("smbd", argv).ready_when(ready.clone());
    // samba-dcerpcd is off in the config (`rpc start on demand helpers = no`); should a
    // future config turn it on, it leaves the group, so its pid file is named for the stop.
    process.detached.push(crate::launch::Detached {
        pid_file: places.path("run/samba-dcerpcd.pid"),
        marker: conf.clone().into(),
    });
    Ok(Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(&DIRS),
        user_dirs: Vec::new(),
        // Guests write the share as the forced user, yet Samba checks their access with an NT
        // token whose SID is not the Unix owner's, so only the "everyone" bits let them write
        // (seen here: a 0755 share owned by the forced user gave NT_STATUS_ACCESS_DENIED).
        shared_dirs: vec![places.path("share")],
        processes: vec![process],
        ready,
        tls: None,
        validate: vec![vec![testparm.into(), "-s".into(), conf.into()]],
        versions: vec![
            VersionProbe {
                program: SMBD.name.to_owned(),
                argv: vec![exe.into(), "--version".into()],
                parse: parse_version,
            },
            VersionProbe {
                program: TESTPARM.name.to_owned(),
                argv: vec![testparm.into(), "--version".into()],
                parse: parse_version,
            },
        ],
    })
}

/// `Samba 4.17.12-Debian` from `smbd --version` (and `testparm --version`):
/// `Version 4.17.12-Debian`.
fn parse_version(output: &str) -> Option<String> {
    word_after(output, "Version").map(|v| format!("Samba {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{conf, spec};
    use crate::{Protocol, ServerKind};
    use std::num::NonZeroU32;

    const CONF: &str = "conf/smb.conf";

    #[test]
    fn argv_probe_and_check() {
        let l = crate::render(&spec(ServerKind::Samba, None)).unwrap();
        let want = "/usr/sbin/smbd -F --no-process-group -l /run-dir/samba/logs \
                    -s /run-dir/samba/conf/smb.conf";
        assert_eq!(l.processes.len(), 1);
        assert_eq!(l.processes[0].argv, want.split(' ').collect::<Vec<_>>());
        assert_eq!(l.ready, Probe::Tcp("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(l.processes[0].ready.as_ref(), Some(&l.ready));
        assert_eq!(l.validate, [["/usr/bin/testparm", "-s", "/run-dir/samba/conf/smb.conf"]]);
        let detached = &l.processes[0].detached;
        assert_eq!(detached.len(), 1);
        assert_eq!(
            detached[0].pid_file,
            std::path::Path::new("/run-dir/samba/run/samba-dcerpcd.pid")
        );
        assert_eq!(detached[0].marker, "/run-dir/samba/conf/smb.conf");
    }

    #[test]
    fn every_state_directory_is_the_run_dirs() {
        let c = conf(&spec(ServerKind::Samba, None), CONF);
        for (key, value) in [
            ("private dir", "/run-dir/samba/samba/private"),
            ("binddns dir", "/run-dir/samba/samba/binddns"),
            ("lock directory", "/run-dir/samba/samba/lock"),
            ("state directory", "/run-dir/samba/samba/state"),
            ("cache directory", "/run-dir/samba/samba/cache"),
            ("pid directory", "/run-dir/samba/run"),
            ("ncalrpc dir", "/run-dir/samba/run/ncalrpc"),
            ("passdb backend", "tdbsam:/run-dir/samba/samba/private/passdb.tdb"),
            ("log file", "/run-dir/samba/logs/log.%m"),
            ("path", "/run-dir/samba/share"),
        ] {
            assert!(c.contains(&format!("\t{key} = {value}\n")), "{key}: {c}");
        }
        // Outside comments, no path but the run_dir's and /dev/null.
        for line in c.lines().filter(|l| !l.trim_start().starts_with('#')) {
            for word in line.split_whitespace() {
                let path = word.trim_start_matches("tdbsam:");
                if path.starts_with('/') {
                    assert!(path.starts_with("/run-dir/samba/") || path == "/dev/null", "{line}");
                }
            }
        }
    }

    #[test]
    fn listens_only_where_asked_and_speaks_nt1() {
        let mut s = spec(ServerKind::Samba, None);
        s.listen = "198.18.2.2:445".parse().unwrap();
        let c = conf(&s, CONF);
        for line in [
            "interfaces = 198.18.2.2",
            "bind interfaces only = yes",
            "smb ports = 445",
            "disable netbios = yes",
            "server min protocol = NT1",
            "rpc start on demand helpers = no",
            "kernel oplocks = no",
            "server signing = disabled",
            "smb encrypt = off",
            "load printers = no",
            "map to guest = Bad User",
            "guest ok = yes",
            "guest only = yes",
            "read only = no",
        ] {
            assert!(c.contains(&format!("\t{line}\n")), "{line}: {c}");
        }
        assert!(c.contains("\n[bench]\n"), "{c}");
    }

    #[test]
    fn as_root_connections_run_as_nobody_in_an_open_share() {
        let s = spec(ServerKind::Samba, None);
        let c = conf(&s, CONF);
        assert!(!c.contains("force user") && c.contains("\tguest account = nobody\n"), "{c}");
        assert_eq!(crate::render(&s).unwrap().shared_dirs, [s.run_dir.join("share")]);
        let s = ServerSpec { user: Some("www-data".into()), ..s };
        let c = conf(&s, CONF);
        assert!(c.contains("\tforce user = nobody\n"), "{c}");
        assert!(c.contains("\tguest account = nobody\n") && !c.contains("www-data"), "{c}");
        let l = crate::render(&s).unwrap();
        assert_eq!(l.shared_dirs, [s.run_dir.join("share")]);
        assert!(l.user_dirs.is_empty());
    }

    #[test]
    fn workers_are_refused() {
        let mut s = spec(ServerKind::Samba, None);
        s.workers = NonZeroU32::new(2);
        let err = crate::render(&s).unwrap_err();
        assert!(matches!(err, DriverError::WorkersNotSupported { workers: 2, .. }), "{err}");
    }

    /// The lab asks `supports` before an HTTP workload; render itself does not read the
    /// protocol of a samba spec (there is no SMB one in herd's HTTP vocabulary).
    #[test]
    fn every_http_protocol_is_refused_and_render_ignores_it() {
        assert!(ServerKind::Samba.protocols().is_empty());
        for &p in Protocol::ALL {
            let err = crate::check_protocol(ServerKind::Samba, p).unwrap_err().to_string();
            assert!(
                err.contains(
                    "samba serves files over SMB, not HTTP; it runs netbench workloads only"
                ),
                "{err}"
            );
            let s = ServerSpec { protocol: p, ..spec(ServerKind::Samba, None) };
            assert!(crate::render(&s).is_ok(), "{p}");
        }
    }

    #[test]
    fn version() {
        assert_eq!(
            parse_version("Version 4.17.12-Debian\n").as_deref(),
            Some("Samba 4.17.12-Debian")
        );
        assert_eq!(parse_version("Version unknown\n"), None);
        assert_eq!(parse_version("smbd: command not found"), None);
    }
}
