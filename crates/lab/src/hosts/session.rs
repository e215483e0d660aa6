//! A host's helper, reached: `herd host` started over an ssh session from the host's cache
//! (`remote_herd`), its link kept alive by pings (herd-host's `Keeper`: the helper ends on
//! silence, so a link lost without a close ends it too), and its hello checked: the same
//! build as this herd, or an error naming the host and what it has. Dropping a session stops
//! the local ssh, which closes the channel: the helper then stops everything it started.

use std::process::ChildStdin;
use std::time::Duration;

use herd_host::protocol::Hello;
use herd_host::{HostLink, Keeper, LinkError};

use super::ssh::{Session, Ssh, SshError};
use super::{remote_herd, HostUrl};

/// How a lost link is found, from either end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// How long the helper waits in silence before it takes its link for lost and ends
    /// (whole seconds).
    pub idle: Duration,
    /// How often herd pings it meanwhile: well inside that.
    pub ping_every: Duration,
    /// How long one request (a ping too) may take before herd takes the link for lost (a
    /// `ready` adds its own wait).
    pub limit: Duration,
}

impl Liveness {
    /// The lab's: 30 s of silence, a ping every 5 s, 30 s for a reply.
    pub const LAB: Liveness = Liveness {
        idle: Duration::from_secs(30),
        ping_every: Duration::from_secs(5),
        limit: Duration::from_secs(30),
    };
}

/// Why a host's helper could not be reached, naming the host.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    /// `link` names the host already (`host ssh://…: …`).
    #[error("{link}{said}")]
    NoHelper { host: String, link: LinkError, said: String },
    #[error(
        "{host}: runs {theirs}, not this {ours}: `herd lab hosts install FILE` copies this build \
         there"
    )]
    OtherBuild { host: String, theirs: String, ours: String },
}

/// A live helper on one host.
pub struct HostSession {
    pub url: HostUrl,
    pub hello: Hello,
    keeper: Keeper<ChildStdin>,
    session: Session,
}

impl HostSession {
    /// Starts this build's helper on `url` and checks its hello.
    pub fn open(ssh: &Ssh, url: &HostUrl, version: &str) -> Result<HostSession, SessionError> {
        HostSession::open_with(ssh, url, version, Liveness::LAB)
    }

    /// [`HostSession::open`] with its [`Liveness`] given (tests: a lost link found within
    /// seconds).
    pub fn open_with(
        ssh: &Ssh,
        url: &HostUrl,
        version: &str,
        live: Liveness,
    ) -> Result<HostSession, SessionError> {
        let idle = format!("{}s", live.idle.as_secs().max(1));
        let argv = remote_herd(version, &["host", "--idle-timeout", &idle]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut session = ssh.spawn_session(url, &argv)?;
        let host = url.to_string();
        let (Some(input), Some(output)) =
            (session.process.take_stdin(), session.process.take_stdout())
        else {
            return Err(SessionError::Ssh(SshError::Other {
                host,
                detail: "its session has no pipes".to_owned(),
            }));
        };
        let mut link = HostLink::new(host.clone(), output, input, live.limit);
        let hello = match link.hello() {
            Ok(h) => h,
            Err(link) => {
                // ssh's own failure (exit 255) says more than the silent pipe.
                std::thread::sleep(Duration::from_millis(100));
                if let Some(e) = session.failure() {
                    return Err(e.into());
                }
                let said = session.stderr();
                let said = said.trim();
                let said = if said.is_empty() { String::new() } else { format!(" ({said})") };
                return Err(SessionError::NoHelper { host, link, said });
            }
        };
        let ours = format!("herd {version}");
        if hello.herd != ours {
            return Err(SessionError::OtherBuild { host, theirs: hello.herd, ours });
        }
        let keeper = Keeper::start(link, live.ping_every);
        Ok(HostSession { url: url.clone(), hello, keeper, session })
    }

    /// Runs `f` on the link, between pings.
    pub fn with<R>(&self, f: impl FnOnce(&mut HostLink<ChildStdin>) -> R) -> R {
        self.keeper.with(f)
    }

    /// Ends the helper in order: everything it started stopped, its run directory removed;
    /// then the session.
    pub fn bye(self) -> Result<usize, LinkError> {
        let HostSession { keeper, session, .. } = self;
        let stopped = keeper.into_link().bye();
        drop(session);
        stopped
    }

    /// The local ssh's PID (tests: a crash is its death).
    pub fn ssh_pid(&self) -> u32 {
        self.session.process.pid()
    }

    /// Why a ping failed, if one did: the link is lost.
    pub fn lost(&self) -> Option<String> {
        self.keeper.failure()
    }
}
