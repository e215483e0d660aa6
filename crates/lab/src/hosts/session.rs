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

    /// The shortest and longest idle time a user may give (`[hosts] idle_timeout`, `herd
    /// cluster run --idle-timeout`): below 2 s a busy host's ping could come late; above an
    /// hour, a lost host's programs would run on unattended for too long.
    pub const IDLE_RANGE: std::ops::RangeInclusive<Duration> =
        Duration::from_secs(2)..=Duration::from_secs(3600);

    /// The liveness of a helper that waits `idle` in silence: a ping six times per idle time,
    /// a reply awaited at most that long. `idle` outside [`Liveness::IDLE_RANGE`] is refused,
    /// in words for the user.
    pub fn for_idle(idle: Duration) -> Result<Liveness, String> {
        if !Liveness::IDLE_RANGE.contains(&idle) {
            return Err("give 2s to 1h (a lost link is found within it; herd pings six times \
                        as often)"
                .to_owned());
        }
        Ok(Liveness { idle, ping_every: idle / 6, limit: idle })
    }
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
    /// Why the link broke, once a request through [`HostSession::call`] found it broken
    /// (not a refusal: a lost link).
    broken: std::sync::Mutex<Option<String>>,
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
        let broken = std::sync::Mutex::new(None);
        Ok(HostSession { url: url.clone(), hello, keeper, session, broken })
    }

    /// Runs `f` on the link, between pings.
    pub fn with<R>(&self, f: impl FnOnce(&mut HostLink<ChildStdin>) -> R) -> R {
        self.keeper.with(f)
    }

    /// A request through [`HostSession::with`]; its error in words. A failure other than
    /// the helper's refusal is the link lost, and [`HostSession::lost`] says so from then on.
    pub fn call<R>(
        &self,
        f: impl FnOnce(&mut HostLink<ChildStdin>) -> Result<R, LinkError>,
    ) -> Result<R, String> {
        self.with(f).map_err(|e| {
            if !matches!(e, LinkError::Refused { .. }) {
                if let Ok(mut broken) = self.broken.lock() {
                    broken.get_or_insert_with(|| e.to_string());
                }
            }
            e.to_string()
        })
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
        let broken = self.broken.lock().ok().and_then(|b| b.clone());
        broken.or_else(|| self.keeper.failure())
    }

    /// Whether `cpus` are all online on this host (as its helper said in its hello); why
    /// not, naming the host and its online CPUs. Asked before anything starts there, since
    /// the helper would refuse the start itself, but only once the run had begun.
    pub fn check_cpus(&self, cpus: &herd_topo::CpuSet) -> Result<(), String> {
        cpus_online(cpus, &self.hello.online).map_err(|why| format!("{}: {why}", self.url))
    }
}

/// Whether `cpus` are all in `online` (a host's CPU list, `0-3`); why not, in words about
/// that host.
fn cpus_online(cpus: &herd_topo::CpuSet, online: &str) -> Result<(), String> {
    let Some(wanted) = cpus.cpus() else { return Ok(()) };
    let there = match herd_topo::CpuSet::parse(online) {
        Ok(herd_topo::CpuSet::Only(there)) => there,
        _ => return Err(format!("its helper said no CPU list (`{online}`)")),
    };
    match wanted.iter().find(|c| !there.contains(c)) {
        Some(cpu) => Err(format!("CPU {cpu} is not online there: its online CPUs are {online}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_topo::CpuSet;

    #[test]
    fn an_idle_time_gives_the_pings_and_is_bounded() {
        let l = Liveness::for_idle(Duration::from_secs(12)).unwrap();
        assert_eq!(l.ping_every, Duration::from_secs(2));
        assert_eq!(l.limit, Duration::from_secs(12));
        let thirty = Liveness::for_idle(Duration::from_secs(30)).unwrap();
        assert_eq!(thirty, Liveness::LAB, "the lab's default is 30 s of silence");
        assert!(Liveness::for_idle(Duration::from_secs(2)).is_ok());
        assert!(Liveness::for_idle(Duration::from_secs(3600)).is_ok());
        for d in [Duration::from_millis(1999), Duration::from_secs(3601), Duration::ZERO] {
            let e = Liveness::for_idle(d).unwrap_err();
            assert!(e.contains("2s to 1h"), "{d:?}: {e}");
        }
    }

    #[test]
    fn cpus_are_checked_against_the_hosts_own() {
        let set = |t: &str| CpuSet::parse(t).unwrap();
        assert_eq!(cpus_online(&CpuSet::All, "0-1"), Ok(()));
        assert_eq!(cpus_online(&set("1"), "0-1"), Ok(()));
        assert_eq!(cpus_online(&set("0,2-3"), "0-3,6"), Ok(()));
        assert_eq!(
            cpus_online(&set("1,7"), "0-1"),
            Err("CPU 7 is not online there: its online CPUs are 0-1".to_owned())
        );
        assert!(cpus_online(&set("0"), "").unwrap_err().contains("no CPU list"));
    }
}
