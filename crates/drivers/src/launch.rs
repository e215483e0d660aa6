//! What a driver hands the lab: [`Launch`], the files to write, directories to create,
//! processes to start in order, how to tell they are ready ([`Probe`]), the certificate of a
//! TLS listener ([`TlsFiles`]), the servers' own config checks and their version probes. Plain
//! data: the lab does every one of these things, nothing here touches the system.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use herd_stats::Protocol;

use crate::access_log::AccessLog;
use crate::version::VersionProbe;

/// How to start one server (and its PHP pool), made by [`render`](crate::render).
#[derive(Debug, Clone)]
pub struct Launch {
    /// Config files to write before anything starts, all under the run_dir.
    pub files: Vec<RenderedFile>,
    /// Directories to create first (parents before children), all under the run_dir.
    pub dirs: Vec<PathBuf>,
    /// The directories of `dirs` that the server writes to after it has dropped privileges
    /// (lighttpd's and h2o's temporary files). When the spec's `user` is set, the lab makes
    /// them owned by that user and its group before starting; otherwise they need nothing.
    pub user_dirs: Vec<PathBuf>,
    /// The directories of `dirs` that every user must be able to write: the lab makes them
    /// mode 1777 (world-writable, sticky, like /tmp) before starting. Samba's share only.
    pub shared_dirs: Vec<PathBuf>,
    /// Start in this order, each once the previous one is ready (php-fpm before nginx); stop
    /// in reverse.
    pub processes: Vec<ProcessSpec>,
    /// The front server answers: `GET /`[`READY_FILE`](crate::READY_FILE) on the listen
    /// address.
    pub ready: Probe,
    /// With TLS: the certificate and key the server reads, made for this launch, and the CA
    /// the client trusts. Write them with the other files, before anything starts.
    pub tls: Option<TlsFiles>,
    /// The servers' own config checks, each an argv that must exit 0 (`nginx -t`, `apache2
    /// -t`, `lighttpd -tt`, `h2o -t`, `php-fpm -t`). Run them after writing the files and
    /// creating the directories; none of them binds the listen address.
    pub validate: Vec<Vec<OsString>>,
    /// How to ask each program for its version.
    pub versions: Vec<VersionProbe>,
    /// Where the front server logs each response, when the spec asked for it.
    pub access_log: Option<AccessLog>,
}

impl Launch {
    /// The launch of one front server, `front`, ready when `ready` answers (the process's
    /// readiness and the launch's are one probe), with nothing else yet: each driver adds its
    /// files, directories, checks and version probes by struct update, and what it leaves out
    /// stays empty.
    pub(crate) fn new(front: ProcessSpec, ready: Probe) -> Launch {
        Launch {
            files: Vec::new(),
            dirs: Vec::new(),
            user_dirs: Vec::new(),
            shared_dirs: Vec::new(),
            processes: vec![front.ready_when(ready.clone())],
            ready,
            tls: None,
            validate: Vec::new(),
            versions: Vec::new(),
            access_log: None,
        }
    }
}

/// The certificate of a TLS (or QUIC) listener, made afresh for one launch by a CA of its own
/// whose private key is dropped once it has signed: nothing else is ever trusted through it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The CA's certificate (PEM), under the run_dir: what the client trusts (`herd run
    /// --ca-file`, `curl --cacert`). The server's certificate names the listen address and
    /// `localhost`.
    pub ca: PathBuf,
    /// The files to write (the CA's certificate, the server's, its private key, and for some
    /// servers the two in one file), all under the run_dir's `tls/`. Unlike [`Launch::files`]
    /// they are not configuration: write them readable by their owner only (the servers read
    /// them as root, or as the lab's user when it is not root), and keep them out of stores and
    /// printed plans.
    pub files: Vec<RenderedFile>,
}

/// A config file and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    /// Absolute, under the run_dir.
    pub path: PathBuf,
    pub contents: String,
}

/// One process to start. It stays in the foreground as the lab's child; its own children
/// (workers, pools, CGI processes) end when it does.
///
/// Start it in a process group of its own (`CommandExt::process_group(0)`). Apache's prefork
/// MPM, kept in the foreground, stops by sending SIGTERM to its whole process group, which
/// would otherwise include the lab; and Ctrl-C at the lab's terminal then reaches only the
/// lab, which stops the servers itself, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessSpec {
    /// Short name for messages and logs (`nginx`, `php-fpm`, …).
    pub name: String,
    /// The program's absolute path, then its arguments.
    pub argv: Vec<OsString>,
    /// Added to the lab's environment (empty for every server today).
    pub env: Vec<(OsString, OsString)>,
    /// When this process is ready for the next one to start. The front server's is the same
    /// as [`Launch::ready`].
    pub ready: Option<Probe>,
    /// stdout and stderr go here (appended), under the run_dir/logs.
    pub log: PathBuf,
    /// The signal that stops it: SIGTERM for every server. (Apache's graceful stop is
    /// SIGWINCH, which waits for requests in flight; the lab stops between cells, when none
    /// are.) The lab sends it to the process group it started the process in, so that
    /// workers it forked (which stay in that group) stop with it, and SIGKILLs what is left
    /// of that group after a grace period.
    pub stop_signal: i32,
    /// Programs this process may start outside its process group, which stopping the group
    /// therefore misses (samba-dcerpcd: smbd starts it and init adopts it). Empty for every
    /// server but samba.
    pub detached: Vec<Detached>,
}

/// A program a server starts that leaves the server's process group, known by the pid file
/// it writes. After stopping the server, the lab stops the PID in `pid_file` (the same signal,
/// then SIGKILL), but only if `/proc/PID/cmdline` still contains `marker`: a stale pid file
/// may name a PID that belongs to someone else by then. Never found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    /// Under the run_dir.
    pub pid_file: PathBuf,
    /// A command-line argument only this instance's processes have (its config's path).
    pub marker: OsString,
}

impl ProcessSpec {
    /// The same process, ready when `probe` answers.
    pub(crate) fn ready_when(mut self, probe: Probe) -> ProcessSpec {
        self.ready = Some(probe);
        self
    }
}

/// A readiness check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// `GET path` on `addr` over `protocol` answers 200. The protocol is the simplest the
    /// listener speaks: `h1` in the clear, `h1-tls` on every TLS listener (all of them also
    /// offer `http/1.1` by ALPN; the certificate need not be checked here: readiness is not
    /// verification), and `h2c` only where the listener speaks nothing else (nginx 1.22's
    /// h2c listener).
    Http { addr: SocketAddr, path: String, protocol: Protocol },
    /// A connection to this Unix socket is accepted.
    UnixSocket(PathBuf),
    /// A TCP connection to this address is accepted: for a server that speaks no HTTP
    /// (samba's smbd).
    Tcp(SocketAddr),
}

impl std::fmt::Display for Probe {
    /// The probe as a sentence's end, for the dry run: "`GET /herd-ready.txt` over h1 to
    /// 127.0.0.1:8080 answers 200".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Probe::Http { addr, path, protocol } => {
                write!(f, "GET {path} over {protocol} to {addr} answers 200")
            }
            Probe::UnixSocket(path) => {
                write!(f, "a connection to the Unix socket {} is accepted", path.display())
            }
            Probe::Tcp(addr) => write!(f, "a TCP connection to {addr} is accepted"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::testing::spec;
    use crate::{php_choices, ServerKind};

    #[test]
    fn a_new_launch_is_its_front_process_and_nothing_else() {
        let front = ProcessSpec {
            name: "front".into(),
            argv: vec!["/bin/front".into()],
            env: Vec::new(),
            ready: None,
            log: PathBuf::from("/run-dir/logs/front.out"),
            stop_signal: libc::SIGTERM,
            detached: Vec::new(),
        };
        let ready = Probe::Tcp("127.0.0.1:8080".parse().unwrap());
        let l = Launch::new(front.clone(), ready.clone());
        assert_eq!(l.processes, [ProcessSpec { ready: Some(ready.clone()), ..front }]);
        assert_eq!(l.ready, ready);
        assert!(l.files.is_empty() && l.dirs.is_empty() && l.user_dirs.is_empty());
        assert!(l.shared_dirs.is_empty() && l.validate.is_empty() && l.versions.is_empty());
        assert!(l.tls.is_none() && l.access_log.is_none());
    }

    /// What the lab waits for before it measures is the front server's own readiness, for
    /// every server and PHP setup (php-fpm, started first, has a probe of its own).
    #[test]
    fn every_front_server_is_ready_when_its_launch_is() {
        for kind in ServerKind::ALL {
            for php in std::iter::once(None).chain(php_choices(kind).iter().copied().map(Some)) {
                let mut s = spec(kind, php);
                if let Some(port) = kind.fixed_port() {
                    s.listen.set_port(port);
                }
                let l = crate::render(&s).unwrap();
                let front = l.processes.last().unwrap();
                assert_eq!(front.ready.as_ref(), Some(&l.ready), "{kind} {php:?}");
            }
        }
    }
}
