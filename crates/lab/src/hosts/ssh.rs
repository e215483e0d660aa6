//! The SSH transport: the system's OpenSSH client, never a library and never a password.
//! Every ssh runs with `BatchMode=yes` (a prompt is a failure, not a hang), a short
//! `ConnectTimeout`, and `ControlMaster=auto` on a socket in a private directory of this
//! herd's own, so that a host's sessions share one connection (the first is the master;
//! `ControlPersist=no`: it ends with its own session). The user's keys, agent, known hosts
//! and ssh_config are ssh's business; herd passes `-F` only when the experiment names one.
//!
//! The remote command is one string a POSIX login shell reads (ssh joins its arguments with
//! spaces): each word is quoted by [`remote_command`]. ssh's own failures (exit 255) are
//! told apart by what it printed and name the host ([`SshError`]).
//!
//! A parent that holds its own masters (the lab, running `herd cluster run --ssh`) shares
//! them by naming their directory in [`CONTROL_DIR_VAR`]: the sockets are then looked for
//! there, and the directory is the parent's, left in place. A Unix socket of this machine is
//! forwarded to a host through the master ([`Ssh::forward_unix`], `ssh -O forward -R`), so
//! that a program there reaches one here with no port opened on either side.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use herd_topo::proc::{Input, Output};
use herd_topo::{Piped, PipedSpawn, ProcError};

use super::HostUrl;

/// How one host is reached, for every session to it.
#[derive(Debug)]
pub struct Ssh {
    /// `ssh`, looked up in PATH (a test names another program).
    program: OsString,
    config: Option<PathBuf>,
    connect_timeout: Duration,
    /// Private (0700): the control sockets, and each session's stderr.
    dir: PathBuf,
    /// Whether `dir` is this transport's own, removed when it drops (not one a parent
    /// named in [`CONTROL_DIR_VAR`]).
    owned: bool,
}

/// The environment variable a parent process sets to a directory of its own (0700) for
/// every ssh of this process to keep its control sockets in, so that the connections to a
/// host share the parent's master. The directory is left in place.
pub const CONTROL_DIR_VAR: &str = "HERD_SSH_CONTROL_DIR";

/// `ssh -O`'s two operations on a forwarding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardOp {
    Forward,
    Cancel,
}

/// What a remote command printed and how it ended (ssh itself got through).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOutput {
    /// The remote command's exit code (ssh passes it on).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Why a host could not be used, naming it; the detail is ssh's own last words.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    #[error("{host}: unreachable: {detail}")]
    Unreachable { host: String, detail: String },
    #[error(
        "{host}: key refused ({detail}): add your public key to the host's authorized_keys, \
         or name the key in the ssh_config"
    )]
    KeyRefused { host: String, detail: String },
    #[error(
        "{host}: host key verification failed, the host's key is not known here: check it and \
         add it to known_hosts ({detail})"
    )]
    UnknownHostKey { host: String, detail: String },
    #[error(
        "{host}: host key verification failed, the host's key CHANGED since known_hosts \
         recorded it: find out why before going on ({detail})"
    )]
    HostKeyChanged { host: String, detail: String },
    #[error("{host}: ssh failed: {detail}")]
    Other { host: String, detail: String },
    #[error("{host}: no answer within {limit:?}")]
    TimedOut { host: String, limit: Duration },
    #[error("{host}: there is no ssh client on this machine (apt-get install openssh-client)")]
    Missing { host: String },
    #[error("{host}: cannot run ssh")]
    Start { host: String, source: ProcError },
}

/// An interactive session: a remote program whose input and output herd holds (for the
/// `herd host` helper). Dropping it stops the local ssh, which closes the channel.
#[derive(Debug)]
pub struct Session {
    pub host: HostUrl,
    pub process: Piped,
    stderr: PathBuf,
}

impl ForwardOp {
    /// `ssh -O`'s word for it.
    pub fn word(self) -> &'static str {
        match self {
            ForwardOp::Forward => "forward",
            ForwardOp::Cancel => "cancel",
        }
    }
}

/// ssh's exit status for its own failures (a remote command's status is passed on).
const SSH_FAILED: i32 = 255;

static SESSIONS: AtomicU64 = AtomicU64::new(0);

impl Ssh {
    /// A transport whose sockets live in a private directory made under `scratch`, or in
    /// the directory [`CONTROL_DIR_VAR`] names when it is set.
    pub fn new(
        config: Option<&Path>,
        connect_timeout: Duration,
        scratch: &Path,
    ) -> io::Result<Ssh> {
        let shared = std::env::var_os(CONTROL_DIR_VAR).filter(|d| !d.is_empty());
        match shared {
            Some(dir) => Ok(Ssh::sharing("ssh".into(), config, connect_timeout, dir.into())),
            None => Ssh::with_program("ssh".into(), config, connect_timeout, scratch),
        }
    }

    /// A transport whose control sockets are in `dir`, someone else's: not made here, not
    /// removed at the end.
    pub fn sharing(
        program: OsString,
        config: Option<&Path>,
        connect_timeout: Duration,
        dir: PathBuf,
    ) -> Ssh {
        Ssh { program, config: config.map(Path::to_path_buf), connect_timeout, dir, owned: false }
    }

    /// As [`Ssh::new`] with another client program (tests: a stand-in, or one that is missing).
    pub fn with_program(
        program: OsString,
        config: Option<&Path>,
        connect_timeout: Duration,
        scratch: &Path,
    ) -> io::Result<Ssh> {
        use std::os::unix::fs::DirBuilderExt as _;
        // A socket's path holds at most 107 bytes, and ssh binds the master's under a name
        // 17 longer than `%C` (40) before renaming it: a deep scratch directory (a test's
        // TMPDIR) would make every connection fail, so such a one gives way to /tmp.
        let deep = scratch.as_os_str().len() + "/herd-ssh-4194304-99/".len() + 40 + 17 > 107;
        let scratch = if deep { Path::new("/tmp") } else { scratch };
        let mut n = 0;
        let dir = loop {
            let dir = scratch.join(format!("herd-ssh-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        };
        Ok(Ssh {
            program,
            config: config.map(Path::to_path_buf),
            connect_timeout,
            dir,
            owned: true,
        })
    }

    /// The directory of the control sockets (removed when the transport drops, unless it
    /// is a parent's, from [`CONTROL_DIR_VAR`]).
    pub fn control_dir(&self) -> &Path {
        &self.dir
    }

    /// The name or address `host` connects to after the ssh_config's `HostName` (an alias
    /// there is no name the clients could resolve), as `ssh -G` says; `host` itself when
    /// ssh says nothing of it.
    pub fn hostname(&self, host: &HostUrl) -> String {
        let mut argv: Vec<OsString> = vec![self.program.clone()];
        if let Some(c) = &self.config {
            argv.extend(["-F".into(), c.clone().into_os_string()]);
        }
        argv.extend(["-G".into(), "--".into(), host.host.clone().into()]);
        let said = self.capture(host, &argv, None, Duration::from_secs(10));
        let (ended, text) = match said {
            Ok((Some(status), stdout, _)) => (status.success(), stdout),
            _ => (false, String::new()),
        };
        let named = text.lines().find_map(|l| l.strip_prefix("hostname ").map(str::trim));
        match named {
            Some(h) if ended && !h.is_empty() => h.to_owned(),
            _ => host.host.clone(),
        }
    }

    /// ssh's command line for `remote` on `host`: options, the host, then the remote command
    /// as one quoted string.
    pub fn argv(&self, host: &HostUrl, remote: &[&str]) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec![self.program.clone()];
        if let Some(c) = &self.config {
            a.extend(["-F".into(), c.clone().into_os_string()]);
        }
        // No terminal (a session carries JSON lines, not a person's keys) and none of the
        // user's forwardings, which a second session to the host would find taken.
        a.push("-T".into());
        a.extend(["-o".into(), "ClearAllForwardings=yes".into()]);
        self.push_connection(&mut a, host);
        a.push(remote_command(remote).into());
        a
    }

    /// The options every ssh to `host` shares (how it connects, and to which master), then
    /// `--` and the host.
    fn push_connection(&self, a: &mut Vec<OsString>, host: &HostUrl) {
        let secs = self.connect_timeout.as_secs().max(1);
        for o in [
            "BatchMode=yes".to_owned(),
            format!("ConnectTimeout={secs}"),
            "ControlMaster=auto".to_owned(),
            format!("ControlPath={}/%C", self.dir.display()),
            "ControlPersist=no".to_owned(),
        ] {
            a.extend(["-o".into(), o.into()]);
        }
        if let Some(p) = host.port {
            a.extend(["-p".into(), p.to_string().into()]);
        }
        if let Some(u) = &host.user {
            a.extend(["-l".into(), u.into()]);
        }
        // `--`: whatever follows is the host and its command, never an option.
        a.extend(["--".into(), host.host.clone().into()]);
    }

    /// `ssh -O forward|cancel -R REMOTE:LOCAL host`: asks the host's master (a session to it
    /// must be open) to forward, or stop forwarding, the Unix socket `remote` on the host to
    /// `local` here. No ClearAllForwardings here: it would clear this very `-R`.
    pub fn forward_argv(
        &self,
        host: &HostUrl,
        op: ForwardOp,
        remote: &Path,
        local: &Path,
    ) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec![self.program.clone()];
        if let Some(c) = &self.config {
            a.extend(["-F".into(), c.clone().into_os_string()]);
        }
        let mut spec = remote.as_os_str().to_owned();
        spec.push(":");
        spec.push(local);
        a.extend(["-O".into(), op.word().into(), "-R".into(), spec]);
        self.push_connection(&mut a, host);
        a
    }

    /// Forwards the Unix socket `remote` on `host` to `local` here, through the host's
    /// master: a program there that connects to `remote` reaches whoever listens on `local`.
    /// ssh returns once the host's sshd listens there.
    pub fn forward_unix(
        &self,
        host: &HostUrl,
        remote: &Path,
        local: &Path,
    ) -> Result<(), SshError> {
        self.forward_op(host, ForwardOp::Forward, remote, local)
    }

    /// Stops a forwarding [`Ssh::forward_unix`] made (the master's end goes with it).
    pub fn cancel_forward(
        &self,
        host: &HostUrl,
        remote: &Path,
        local: &Path,
    ) -> Result<(), SshError> {
        self.forward_op(host, ForwardOp::Cancel, remote, local)
    }

    fn forward_op(
        &self,
        host: &HostUrl,
        op: ForwardOp,
        remote: &Path,
        local: &Path,
    ) -> Result<(), SshError> {
        // ssh reads `A:B`: a path with a colon would be split in the wrong place.
        for p in [remote, local] {
            if p.as_os_str().as_encoded_bytes().contains(&b':') {
                return Err(SshError::Other {
                    host: host.to_string(),
                    detail: format!("cannot forward {}: a path with ':'", p.display()),
                });
            }
        }
        let argv = self.forward_argv(host, op, remote, local);
        let limit = self.connect_timeout.saturating_add(Duration::from_secs(10));
        let (status, _, stderr) = self.capture(host, &argv, None, limit)?;
        match status {
            None => Err(SshError::TimedOut { host: host.to_string(), limit }),
            Some(s) if s.success() => Ok(()),
            Some(_) => Err(classify(host, &stderr).unwrap_or_else(|| SshError::Other {
                host: host.to_string(),
                detail: format!("ssh -O {}: {}", op.word(), last_words(&stderr)),
            })),
        }
    }

    /// Runs `remote` on `host` to its end, at most `limit`, its input from `stdin` (a file)
    /// or none. Ok whatever the remote command's exit code, once ssh got through.
    pub fn run(
        &self,
        host: &HostUrl,
        remote: &[&str],
        stdin: Option<&Path>,
        limit: Duration,
    ) -> Result<RemoteOutput, SshError> {
        let argv = self.argv(host, remote);
        let (status, stdout, stderr) = self.capture(host, &argv, stdin, limit)?;
        let Some(status) = status else {
            return Err(SshError::TimedOut { host: host.to_string(), limit });
        };
        // A signal (none of ours but the time limit's) ends it as ssh's failure.
        let code = status.code().unwrap_or(SSH_FAILED);
        if code == SSH_FAILED {
            if let Some(e) = classify(host, &stderr) {
                return Err(e);
            }
        }
        Ok(RemoteOutput { code, stdout, stderr })
    }

    /// Runs ssh as `argv` to its end, at most `limit` (None: it did not end in time, and was
    /// stopped), its input from `stdin` or none; what it printed on each output. The one way
    /// this transport runs a short ssh (a command, `-G`, `-O forward`).
    fn capture(
        &self,
        host: &HostUrl,
        argv: &[OsString],
        stdin: Option<&Path>,
        limit: Duration,
    ) -> Result<(Option<std::process::ExitStatus>, String, String), SshError> {
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let (out, err) =
            (self.dir.join(format!("run-{n}.out")), self.dir.join(format!("run-{n}.err")));
        let spawn = PipedSpawn {
            name: "ssh",
            argv,
            stdin: stdin.map_or(Input::Null, Input::File),
            stdout: Output::File(&out),
            stderr: &err,
        };
        let mut p = Piped::start(&spawn).map_err(|e| self.start_error(host, e))?;
        let status = p.wait(limit).map_err(|e| self.start_error(host, e))?;
        let read = |p: &Path| {
            let t = std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
            let _ = std::fs::remove_file(p);
            t.unwrap_or_default()
        };
        Ok((status, read(&out), read(&err)))
    }

    /// Starts `remote` on `host` with its standard input and output piped to herd.
    pub fn spawn_session(&self, host: &HostUrl, remote: &[&str]) -> Result<Session, SshError> {
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let stderr = self.dir.join(format!("session-{n}.err"));
        let argv = self.argv(host, remote);
        let spawn = PipedSpawn {
            name: "ssh",
            argv: &argv,
            stdin: Input::Pipe,
            stdout: Output::Pipe,
            stderr: &stderr,
        };
        let process = Piped::start(&spawn).map_err(|e| self.start_error(host, e))?;
        Ok(Session { host: host.clone(), process, stderr })
    }

    fn start_error(&self, host: &HostUrl, e: ProcError) -> SshError {
        match &e {
            ProcError::Spawn { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                SshError::Missing { host: host.to_string() }
            }
            _ => SshError::Start { host: host.to_string(), source: e },
        }
    }
}

impl Session {
    /// What ssh printed on its standard error so far (why a session ended, when it did).
    pub fn stderr(&self) -> String {
        std::fs::read(&self.stderr)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Why the session ended, when ssh failed (exit 255): the classified error.
    pub fn failure(&mut self) -> Option<SshError> {
        let status = self.process.try_wait().ok().flatten()?;
        if status.code() != Some(SSH_FAILED) {
            return None;
        }
        classify(&self.host, &self.stderr())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Its ssh is stopped by `Piped`'s own Drop, right after this.
        let _ = std::fs::remove_file(&self.stderr);
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        // The control sockets are gone with their masters; what is left is ours alone. A
        // parent's directory is the parent's to remove.
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The remote command as the remote login shell must read it: each word quoted, joined.
/// Assumes a POSIX shell (sh, bash, dash, zsh), as ssh itself does for its arguments.
pub fn remote_command(words: &[&str]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// `word` as a POSIX shell reads it back: as is when every character is safe, otherwise in
/// single quotes, each `'` written as `'\''`. Nothing inside single quotes is special.
pub fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// ssh's failure (exit 255) from what it printed, or None when nothing known matched (the
/// remote command itself may have exited 255).
fn classify(host: &HostUrl, stderr: &str) -> Option<SshError> {
    let host_s = host.to_string();
    let detail = last_words(stderr);
    let has = |s: &str| stderr.contains(s);
    let e = if has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        SshError::HostKeyChanged { host: host_s, detail }
    } else if has("Host key verification failed") {
        SshError::UnknownHostKey { host: host_s, detail }
    } else if has("Permission denied") || has("Too many authentication failures") {
        SshError::KeyRefused { host: host_s, detail }
    } else if has("Connection refused")
        || has("Connection timed out")
        || has("No route to host")
        || has("Network is unreachable")
        || has("Could not resolve hostname")
        || has("Name or service not known")
        || has("Connection closed by")
        || has("Connection reset")
    {
        SshError::Unreachable { host: host_s, detail }
    } else if stderr.trim().is_empty() {
        return None;
    } else {
        SshError::Other { host: host_s, detail }
    };
    Some(e)
}

/// ssh's last non-empty line, without its `ssh: ` prefix: enough to act on, one line.
fn last_words(stderr: &str) -> String {
    let line = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    line.strip_prefix("ssh: ").unwrap_or(line).trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests;
