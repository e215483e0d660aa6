//! The user's own machines as the lab's hosts, reached over the system's OpenSSH client
//! (docs/hosts.md, issue 34). Brief overview: [`Hosts`] is an experiment's `[hosts]`
//! section, checked (`url.rs` reads each `ssh://[user@]host[:port]`); `ssh.rs` runs a
//! command or a session on a host through one multiplexed connection; `check.rs` says what
//! each host has (kernel, CPUs, which herd build) and `install.rs` copies this herd there.
//!
//! `session.rs` starts `herd host`, the helper each host runs (crates/host), over an ssh
//! session and keeps its link alive. The runner puts a cell's roles on the hosts
//! (`runner/role_host.rs`, `runner/client_hosts.rs`). Naming the server host is the
//! opt-in to load its address alone; every other address stays under the safety rule
//! (`herd_engine::target`).

pub mod check;
pub mod install;
pub mod session;
pub mod ssh;
mod url;

use std::fmt;
use std::path::PathBuf;

pub use url::{HostUrl, UrlError};

/// `[hosts]`: which machine plays which role, and the ssh_config to reach them with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hosts {
    pub server: Option<HostUrl>,
    pub clients: Vec<HostUrl>,
    pub router: Option<HostUrl>,
    /// `-F` for every ssh (resolved against the experiment file's directory); None: the
    /// user's own configuration (~/.ssh/config, agent, known hosts).
    pub ssh_config: Option<PathBuf>,
    /// `idle_timeout`: how long each host's helper waits in silence before it takes its
    /// link for lost and stops what it started (default 30 s).
    pub idle: std::time::Duration,
}

impl Hosts {
    /// How the lab keeps its links to these hosts alive: a ping six times per idle time,
    /// and a reply awaited at most that long.
    pub fn liveness(&self) -> session::Liveness {
        // `idle` was checked when the file was read.
        session::Liveness::for_idle(self.idle).unwrap_or(session::Liveness::LAB)
    }
}

/// A host's part in an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Server,
    /// The n-th client host, from 1, in file order.
    Client(usize),
    Router,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::Server => f.write_str("server"),
            Role::Client(n) => write!(f, "client {n}"),
            Role::Router => f.write_str("router"),
        }
    }
}

impl Hosts {
    /// Every host with its role: the server, the clients in file order, the router.
    pub fn each(&self) -> Vec<(Role, &HostUrl)> {
        let mut all: Vec<(Role, &HostUrl)> = Vec::new();
        all.extend(self.server.iter().map(|h| (Role::Server, h)));
        all.extend(self.clients.iter().enumerate().map(|(i, h)| (Role::Client(i + 1), h)));
        all.extend(self.router.iter().map(|h| (Role::Router, h)));
        all
    }
}

/// herd's build as hosts keep it: `herd --version`'s `0.1.0 (commit 1a2b3c4d5e6f)` as
/// `0.1.0-1a2b3c4d5e6f`, the suffix of `~/.cache/herd/herd-<id>`. Characters outside
/// `[A-Za-z0-9.+-]` become `_`, so the id is always one safe file name and shell word.
pub fn build_id(version: &str) -> String {
    let id = match version.split_once(" (commit ") {
        Some((v, rest)) => format!("{v}-{}", rest.trim_end_matches(')')),
        None => version.to_owned(),
    };
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() || ".+-".contains(c) { c } else { '_' })
        .collect()
}

/// Where a host keeps herd builds, relative to its user's home.
pub const CACHE_DIR: &str = ".cache/herd";

/// The remote command that runs this build of herd with `args` on a host, from its user's
/// cache (where `herd lab hosts install` put it): `["sh", "-c", "exec …"]`, since `~` and
/// `$HOME` mean nothing to ssh itself and a quoted word would not expand them.
pub fn remote_herd(version: &str, args: &[&str]) -> Vec<String> {
    let mut line = format!("exec \"$HOME/{CACHE_DIR}/herd-{}\"", build_id(version));
    for a in args {
        line.push(' ');
        line.push_str(&ssh::quote(a));
    }
    vec!["sh".into(), "-c".into(), line]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_ids_name_the_version_and_commit() {
        assert_eq!(build_id("0.1.0 (commit 1a2b3c4d5e6f)"), "0.1.0-1a2b3c4d5e6f");
        assert_eq!(build_id("0.1.0"), "0.1.0");
        assert_eq!(build_id("0.1.0 weird/`$x"), "0.1.0_weird___x");
    }

    #[test]
    fn remote_herd_runs_the_cached_build() {
        assert_eq!(
            remote_herd("0.1.0 (commit abc)", &["host", "two words"]),
            ["sh", "-c", "exec \"$HOME/.cache/herd/herd-0.1.0-abc\" host 'two words'"]
        );
    }

    #[test]
    fn roles_come_server_clients_router() {
        let h = |s: &str| s.parse::<HostUrl>().unwrap();
        let hosts = Hosts {
            server: Some(h("ssh://s")),
            clients: vec![h("ssh://c1"), h("ssh://c2")],
            router: Some(h("ssh://r")),
            ssh_config: None,
            idle: std::time::Duration::from_secs(30),
        };
        let roles: Vec<String> = hosts.each().iter().map(|(r, u)| format!("{r}={u}")).collect();
        assert_eq!(
            roles,
            ["server=ssh://s", "client 1=ssh://c1", "client 2=ssh://c2", "router=ssh://r"]
        );
    }
}
