//! The words of `--io auto|epoll|uring`, shared by herd's client (herd-engine's io_choice.rs
//! settles a run's choice against its protocol) and herd serve (which settles its own): what
//! the user asked for ([`IoChoice`]), what turns ([`Backend`]), what the choice came to and
//! why `auto` fell back ([`Resolved`]), and this machine's answer to the probe, asked once per
//! process ([`probed`]).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::probe::{self, Uring};

/// What the user asked for (`--io`, the lab's `io = …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum IoChoice {
    /// io_uring where this machine has it and it was measured faster than epoll for what
    /// runs (the client: its protocol, herd-engine's io_choice.rs; herd serve: docs/io.md),
    /// else epoll.
    #[default]
    Auto,
    /// Readiness-based: epoll through mio.
    Epoll,
    /// Completion-based: io_uring; refused where it cannot run.
    Uring,
}

impl IoChoice {
    /// Every choice, in the order the help text lists them.
    pub const ALL: [IoChoice; 3] = [IoChoice::Auto, IoChoice::Epoll, IoChoice::Uring];

    /// The command line's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            IoChoice::Auto => "auto",
            IoChoice::Epoll => "epoll",
            IoChoice::Uring => "uring",
        }
    }
}

impl fmt::Display for IoChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A spelling [`IoChoice`] does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an I/O backend: give auto, epoll or uring")]
pub struct BadIoChoice(pub String);

impl FromStr for IoChoice {
    type Err = BadIoChoice;

    /// `auto`, `epoll` or `uring`, exactly as the command line spells them.
    fn from_str(s: &str) -> Result<IoChoice, BadIoChoice> {
        IoChoice::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| BadIoChoice(s.into()))
    }
}

/// The backend a run's workers turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    Epoll,
    Uring,
}

impl Backend {
    /// As reports write it: `epoll` or `io_uring`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Epoll => "epoll",
            Backend::Uring => "io_uring",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `--io` came to: a run's (herd-engine's io_choice.rs) or herd serve's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// What was asked.
    pub asked: IoChoice,
    /// What measured, or serves.
    pub backend: Backend,
    /// Why `auto` did not take io_uring, in one line (`io_uring not yet for HTTP/2`,
    /// `io_uring refused here: kernel.io_uring_disabled = 2: …`); None when nothing fell back.
    pub why: Option<String>,
}

impl fmt::Display for Resolved {
    /// `epoll`, `io_uring (auto)`, or `epoll (auto: io_uring not yet for HTTP/1)`: the
    /// summaries' one line after `I/O: `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.why, self.asked) {
            (Some(why), asked) => write!(f, "{} ({asked}: {why})", self.backend),
            (None, IoChoice::Auto) => write!(f, "{} (auto)", self.backend),
            (None, _) => write!(f, "{}", self.backend),
        }
    }
}

/// What this machine says of io_uring, probed on the first call of the process and kept:
/// every run, worker and server of the process gets the same answer.
pub fn probed() -> &'static Uring {
    static PROBED: OnceLock<Uring> = OnceLock::new();
    PROBED.get_or_init(probe::probe)
}
