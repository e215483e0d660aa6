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
//! The shares, `bench` (and `bench2` to `bench4`, one for each client host of a four-links
//! path: [`SHARES`]), are `share/` (`share2/` …) under the run_dir, mode 1777
//! ([`Launch::shared_dirs`]).
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
const SHARE_TEMPLATE: &str = include_str!("templates/smb-share.conf");

/// The shares' names, as clients write them (`//ADDR/bench`): one a client host, the first
/// for the only one of most paths. Each is its own directory: smbtorture NBENCH deletes and
/// makes `\clients` at its start and names its clients from 1, so two runs side by side (one
/// from each client host of a four-links path) need a share each.
pub const SHARES: [&str; 4] = ["bench", "bench2", "bench3", "bench4"];

/// The first share: the one client host's of a path with one.
pub const SHARE: &str = SHARES[0];

/// The directory of share `i` under the run_dir: `share`, `share2`, ….
fn share_dir(i: usize) -> String {
    if i == 0 {
        "share".to_owned()
    } else {
        format!("share{}", i + 1)
    }
}

/// The longest path a Unix socket can have (`sun_path` is 108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Whom guests are, and whom connections run as when smbd starts as root.
const GUEST: &str = "nobody";

/// The run_dir's directories smbd uses, parents first. smbd makes some of its own (lock,
/// cache, ncalrpc) but not `private dir`: without it, it cannot open secrets.tdb and exits
/// (seen here), so every directory the config names is created for it.
const DIRS: [&str; 9] = [
    "conf",
    "logs",
    "run",
    "samba",
    "samba/binddns",
    "samba/cache",
    "samba/lock",
    "samba/private",
    "samba/state",
];

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    if let Some(n) = spec.workers {
        return Err(DriverError::WorkersNotSupported {
            server: spec.kind.name().to_owned(),
            workers: n.get(),
            why: "smbd forks one process per client connection",
        });
    }
    // smbd's messaging sockets are `lock directory/msg.sock/PID`: past the kernel's limit it
    // exits at start ("messaging_dgm_ref failed: File name too long", seen here under a deep
    // TMPDIR; a 90-byte lock directory worked, 95 did not). Refused here with the way out,
    // rather than an smbd that will not start. PIDs have at most 7 digits (pid_max 4194304).
    let socket = format!("{}/msg.sock/{}", places.path("samba/lock").display(), "9".repeat(7));
    if socket.len() > MAX_SOCKET_PATH {
        return Err(DriverError::SocketPathTooLong {
            server: spec.kind.name().to_owned(),
            len: socket.len(),
            path: socket,
            max: MAX_SOCKET_PATH,
        });
    }
    let exe = spec.programs.path(&SMBD, spec.kind)?;
    let testparm = spec.programs.path(&TESTPARM, spec.kind)?;
    let conf = places.path("conf/smb.conf");
    // As root (the spec has a user), connections run as `nobody`, the guest account, and
    // not as the spec's user: with www-data as guest account and forced user, NBENCH's
    // NTCreateX in the directories it had made got NT_STATUS_ACCESS_DENIED (seen here); with
    // nobody, as in the probe (docs/netbench.md), it succeeds.
    // Not root: smbd cannot switch users, so guests are the user it runs as (as `nobody`, or
    // anyone else: with guests as nobody, smbd running as www-data failed NBENCH's Unlink at
    // line 652 with NT_STATUS_ACCESS_DENIED, seen here).
    let (guest, force_user) = match &places.user {
        Some(_) => (GUEST.to_owned(), format!("force user = {GUEST}")),
        // Not root: guests are the account smbd runs as (the lab's), the one it can be.
        None => (spec.runs_as.clone().unwrap_or_else(|| GUEST.to_owned()), String::new()),
    };
    let mut shares = String::new();
    for (i, name) in SHARES.iter().enumerate() {
        shares.push_str(&fill(
            "templates/smb-share.conf",
            SHARE_TEMPLATE,
            &[("NAME", name), ("PATH", &places.text(&share_dir(i))), ("FORCE_USER", &force_user)],
        )?);
    }
    let contents = fill(
        "templates/smb.conf",
        TEMPLATE,
        &[
            ("RUN", places.run()),
            ("BIND", &bind_lines(spec.listen.ip())),
            ("PORT", &spec.listen.port().to_string()),
            ("GUEST", &guest),
            ("SHARES", &shares),
        ],
    )?;
    let argv: Vec<OsString> = vec![
        exe.into(),
        "-F".into(),
        "--no-process-group".into(),
        // Its log on stdout too, which the lab keeps as the process's log: a failed start
        // then shows smbd's own reason, not an empty stderr.
        "--debug-stdout".into(),
        "-l".into(),
        places.path("logs").into(),
        "-s".into(),
        conf.clone().into(),
    ];
    let ready = Probe::Tcp(spec.listen);
    let mut process = places.process("smbd", argv);
    // samba-dcerpcd is off in the config (`rpc start on demand helpers = no`); should a
    // future config turn it on, it leaves the group, so its pid file is named for the stop.
    process.detached.push(crate::launch::Detached {
        pid_file: places.path("run/samba-dcerpcd.pid"),
        marker: conf.clone().into(),
    });
    let share_dirs: Vec<_> = (0..SHARES.len()).map(|i| places.path(&share_dir(i))).collect();
    Ok(Launch {
        files: vec![RenderedFile { path: conf.clone(), contents }],
        dirs: places.dirs(&DIRS).into_iter().chain(share_dirs.iter().cloned()).collect(),
        // Guests write the share as the forced user, yet Samba checks their access with an NT
        // token whose SID is not the Unix owner's, so only the "everyone" bits let them write
        // (seen here: a 0755 share owned by the forced user gave NT_STATUS_ACCESS_DENIED).
        shared_dirs: share_dirs,
        validate: vec![vec![testparm.into(), "-s".into(), conf.into()]],
        versions: vec![
            VersionProbe::new(SMBD.name, exe, "--version", parse_version),
            VersionProbe::new(TESTPARM.name, testparm, "--version", parse_version),
        ],
        ..Launch::new(process, ready)
    })
}

/// `Samba 4.17.12-Debian` from `smbd --version` (and `testparm --version`):
/// `Version 4.17.12-Debian`.
fn parse_version(output: &str) -> Option<String> {
    word_after(output, "Version").map(|v| format!("Samba {v}"))
}

/// Where smbd binds: the listen address alone, or, for an unspecified one (0.0.0.0: the
/// server host of a `four-links` path has an address a link), every address of its host,
/// which in herd's namespace is only herd's.
fn bind_lines(ip: std::net::IpAddr) -> String {
    if ip.is_unspecified() {
        "\tbind interfaces only = no".to_owned()
    } else {
        format!("\tinterfaces = {ip}\n\tbind interfaces only = yes")
    }
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
        let want = "/usr/sbin/smbd -F --no-process-group --debug-stdout -l /run-dir/samba/logs \
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
    fn a_run_dir_too_deep_for_its_sockets_is_refused_with_the_way_out() {
        let mut s = spec(ServerKind::Samba, None);
        s.run_dir = std::path::PathBuf::from(format!("/{}", "d".repeat(85)));
        let e = crate::render(&s).unwrap_err().to_string();
        assert!(e.starts_with("samba's socket /ddd"), "{e}");
        assert!(e.contains("/samba/lock/msg.sock/9999999 would be 114 bytes long"), "{e}");
        assert!(e.ends_with("set TMPDIR to a shorter directory (herd's run directories go there)"));
        // 75 deep fits (104 bytes).
        s.run_dir = std::path::PathBuf::from(format!("/{}", "d".repeat(75)));
        assert!(crate::render(&s).is_ok());
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
        // A server host with an address a link (four-links): every one of them.
        s.listen = "0.0.0.0:445".parse().unwrap();
        let c = conf(&s, CONF);
        assert!(c.contains("\tbind interfaces only = no\n") && !c.contains("interfaces = "), "{c}");
    }

    #[test]
    fn without_root_guests_are_the_user_smbd_runs_as() {
        let s = ServerSpec { runs_as: Some("alice".into()), ..spec(ServerKind::Samba, None) };
        let c = conf(&s, CONF);
        assert!(c.contains("\tguest account = alice\n") && !c.contains("force user"), "{c}");
        // With no name for that account, nobody (smbd then says it cannot become it).
        let s = ServerSpec { runs_as: None, ..s };
        assert!(conf(&s, CONF).contains("\tguest account = nobody\n"));
        // As root (a user to drop to), never the lab's account.
        let s = ServerSpec {
            runs_as: Some("root".into()),
            user: Some("www-data".into()),
            ..spec(ServerKind::Samba, None)
        };
        assert!(conf(&s, CONF).contains("\tguest account = nobody\n"));
    }

    #[test]
    fn as_root_connections_run_as_nobody_in_an_open_share() {
        let s = spec(ServerKind::Samba, None);
        let c = conf(&s, CONF);
        assert!(!c.contains("force user") && c.contains("\tguest account = nobody\n"), "{c}");
        let shares = ["share", "share2", "share3", "share4"].map(|d| s.run_dir.join(d));
        assert_eq!(crate::render(&s).unwrap().shared_dirs, shares);
        let s = ServerSpec { user: Some("www-data".into()), ..s };
        let c = conf(&s, CONF);
        // Every share's connections.
        assert_eq!(c.matches("\tforce user = nobody\n").count(), SHARES.len(), "{c}");
        assert!(c.contains("\tguest account = nobody\n") && !c.contains("www-data"), "{c}");
        let l = crate::render(&s).unwrap();
        assert_eq!(l.shared_dirs, shares);
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
