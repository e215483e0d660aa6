//! A program herd talks to over its standard input and output, rather than one it only logs:
//! the system's `ssh` for the lab's hosts (a remote command fed a file, or a session carrying
//! `herd host`'s JSON lines). Started here, beside the [`Supervisor`](super::Supervisor), so
//! that the rule holds: its own process group, stopped by the PID it was given (SIGTERM, a
//! grace, SIGKILL), on [`Piped::stop`] and on Drop. It is not written to a run's registry: it
//! lives no longer than the herd that holds its pipes (ssh ends when its input closes), and
//! what it started on a host is the host's own helper's to stop.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{signal_group, ProcError};

/// Where a piped program's standard input comes from.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    Null,
    /// A file, read from its start (the binary `herd lab hosts install` copies).
    File(&'a Path),
    /// A pipe herd writes to ([`Piped::take_stdin`]).
    Pipe,
}

/// Where a piped program's standard output goes.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    /// A file, created or truncated, read once the program ended.
    File(&'a Path),
    /// A pipe herd reads from ([`Piped::take_stdout`]).
    Pipe,
}

/// What to start.
#[derive(Debug, Clone, Copy)]
pub struct PipedSpawn<'a> {
    /// A short name for messages (`ssh`).
    pub name: &'a str,
    /// Program and arguments; the program is an absolute path or looked up in PATH.
    pub argv: &'a [OsString],
    pub stdin: Input<'a>,
    pub stdout: Output<'a>,
    /// Standard error always goes to a file: read after the end, it says why it failed.
    pub stderr: &'a Path,
}

/// A started program with its pipes; stopped by its PID when dropped before it ended.
#[derive(Debug)]
pub struct Piped {
    name: String,
    child: Child,
    ended: Option<ExitStatus>,
}

impl Piped {
    /// Starts `s` in a process group of its own.
    pub fn start(s: &PipedSpawn<'_>) -> Result<Piped, ProcError> {
        let (program, args) =
            s.argv.split_first().ok_or_else(|| ProcError::EmptyArgv { name: s.name.into() })?;
        let log = |path: &Path, source| ProcError::Log {
            name: s.name.to_string(),
            path: path.to_path_buf(),
            source,
        };
        let stdin = match s.stdin {
            Input::Null => Stdio::null(),
            Input::File(p) => Stdio::from(File::open(p).map_err(|e| log(p, e))?),
            Input::Pipe => Stdio::piped(),
        };
        let create = |p: &Path| {
            OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(p)
                .map_err(|e| log(p, e))
        };
        let stdout = match s.stdout {
            Output::File(p) => Stdio::from(create(p)?),
            Output::Pipe => Stdio::piped(),
        };
        let stderr = Stdio::from(create(s.stderr)?);
        #[allow(clippy::disallowed_methods)] // this module is where programs are started
        let mut cmd = Command::new(program);
        // Its own group: the terminal's Ctrl-C reaches herd only, which stops it in order.
        cmd.args(args).stdin(stdin).stdout(stdout).stderr(stderr).process_group(0);
        use std::os::unix::process::CommandExt as _;
        let child = cmd.spawn().map_err(|source| ProcError::Spawn {
            name: s.name.to_string(),
            program: program.to_string_lossy().into_owned(),
            source,
        })?;
        Ok(Piped { name: s.name.to_string(), child, ended: None })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The write end of its standard input, once (dropping it closes the program's input).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The read end of its standard output, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Waits for its end, at most `limit`: Some(status), or None when it ran past the limit
    /// and was stopped.
    pub fn wait(&mut self, limit: Duration) -> Result<Option<ExitStatus>, ProcError> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                self.stop(Duration::from_secs(1));
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Its exit status when it has ended, without waiting.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, ProcError> {
        if self.ended.is_none() {
            self.ended = self.child.try_wait().map_err(|source| ProcError::Wait {
                name: self.name.clone(),
                pid: self.child.id(),
                source,
            })?;
        }
        Ok(self.ended)
    }

    /// SIGTERM to its group, SIGKILL after `grace`, then reaped. A program already reaped
    /// is left alone: its PID may since name another process (ssh leaves no stragglers in
    /// its group while ControlPersist is off).
    pub fn stop(&mut self, grace: Duration) {
        let pid = self.child.id();
        if self.ended.is_some() {
            return;
        }
        if let Ok(Some(status)) = self.child.try_wait() {
            self.ended = Some(status);
            return;
        }
        signal_group(pid, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.ended = Some(status);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        signal_group(pid, libc::SIGKILL);
        self.ended = self.child.wait().ok();
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{self, Read as _, Write as _};

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn pipes_carry_input_and_output() {
        let dir = std::env::temp_dir().join(format!("herd-piped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = dir.join("err");
        let a = argv(&["sh", "-c", "tr a-z A-Z; echo oops >&2"]);
        let s = PipedSpawn {
            name: "tr",
            argv: &a,
            stdin: Input::Pipe,
            stdout: Output::Pipe,
            stderr: &err,
        };
        let mut p = Piped::start(&s).unwrap();
        let mut input = p.take_stdin().unwrap();
        input.write_all(b"herd\n").unwrap();
        drop(input);
        let mut out = String::new();
        p.take_stdout().unwrap().read_to_string(&mut out).unwrap();
        assert_eq!(out, "HERD\n");
        assert!(p.wait(Duration::from_secs(5)).unwrap().unwrap().success());
        assert_eq!(std::fs::read_to_string(&err).unwrap(), "oops\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_program_past_its_limit_is_stopped_by_pid() {
        let dir = std::env::temp_dir().join(format!("herd-piped-late-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = argv(&["sleep", "30"]);
        let out = dir.join("out");
        let s = PipedSpawn {
            name: "sleep",
            argv: &a,
            stdin: Input::Null,
            stdout: Output::File(&out),
            stderr: &out,
        };
        let mut p = Piped::start(&s).unwrap();
        let started = Instant::now();
        assert_eq!(p.wait(Duration::from_millis(100)).unwrap(), None);
        assert!(started.elapsed() < Duration::from_secs(5));
        // Reaped: the PID no longer names a child of ours.
        assert!(p.try_wait().unwrap().is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let a = argv(&["/nonexistent/herd-no-such-program"]);
        let err = std::env::temp_dir().join(format!("herd-piped-miss-{}", std::process::id()));
        let s = PipedSpawn {
            name: "ssh",
            argv: &a,
            stdin: Input::Null,
            stdout: Output::Pipe,
            stderr: &err,
        };
        let e = Piped::start(&s).unwrap_err();
        let not_found = io::ErrorKind::NotFound;
        assert!(matches!(&e, ProcError::Spawn { source, .. } if source.kind() == not_found), "{e}");
        let _ = std::fs::remove_file(&err);
    }
}
