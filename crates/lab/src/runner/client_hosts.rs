//! The client hosts of an experiment's `[hosts]`: where herd's client runs as the agents of
//! one spread run (`herd cluster run --ssh`, one agent per host, merged exactly). The lab
//! reaches each once, before the store opens: its helper's hello (this very build, else an
//! error naming the host) and its disclosure (`herd doctor --json` there, stored as
//! `host.clientN.*`). It then holds those sessions for the whole lab run, and each run's
//! client shares their ssh connections (`HERD_SSH_CONTROL_DIR`): no run pays for a login.

use std::path::Path;
use std::time::Duration;

use crate::error::LabError;
use crate::hosts::session::HostSession;
use crate::hosts::ssh::Ssh;
use crate::hosts::{HostUrl, Hosts};

/// How long ssh may take to connect to a host.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The client hosts, reached.
pub(crate) struct ClientHosts {
    /// Declared before `ssh`: the sessions end before their transport's directory goes.
    sessions: Vec<HostSession>,
    ssh: Ssh,
    disclosure: Vec<(String, String)>,
    /// The hosts' URLs as text, for the client's command line.
    texts: Vec<String>,
}

impl ClientHosts {
    /// Reaches every client host of `hosts` (None: there are none).
    pub(crate) fn open(
        hosts: &Hosts,
        version: &str,
        scratch: &Path,
    ) -> Result<Option<ClientHosts>, LabError> {
        if hosts.clients.is_empty() {
            return Ok(None);
        }
        let ssh = Ssh::new(hosts.ssh_config.as_deref(), CONNECT_TIMEOUT, scratch).map_err(|e| {
            LabError::Setup(format!("[hosts] clients: cannot make ssh's socket directory: {e}"))
        })?;
        let mut sessions = Vec::new();
        for (i, url) in hosts.clients.iter().enumerate() {
            let s = HostSession::open_with(&ssh, url, version, hosts.liveness())
                .map_err(|e| LabError::Setup(format!("[hosts] client {}: {e}", i + 1)))?;
            sessions.push(s);
        }
        let mut disclosure = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            let key = |k: &str| format!("host.client{}.{k}", i + 1);
            disclosure.push((key("url"), s.url.to_string()));
            disclosure.push((key("herd"), s.hello.herd.clone()));
            match s.with(|l| l.doctor()) {
                Ok((text, _)) => match super::server_host::doctor_environment(&text) {
                    Ok(env) => disclosure.extend(env.into_iter().map(|(k, v)| (key(&k), v))),
                    Err(why) => disclosure.push((key("doctor"), why)),
                },
                Err(why) => disclosure.push((key("doctor"), why.to_string())),
            }
        }
        let texts = sessions.iter().map(|s| s.url.to_string()).collect();
        Ok(Some(ClientHosts { sessions, ssh, disclosure, texts }))
    }

    /// The hosts, in file order: one agent each.
    pub(crate) fn urls(&self) -> Vec<&HostUrl> {
        self.sessions.iter().map(|s| &s.url).collect()
    }

    /// [`ClientHosts::urls`] as text.
    pub(crate) fn url_texts(&self) -> &[String] {
        &self.texts
    }

    /// Where their ssh masters' sockets are, for the client's own ssh to share them.
    pub(crate) fn control_dir(&self) -> &Path {
        self.ssh.control_dir()
    }

    /// What the disclosure records of them.
    pub(crate) fn disclosure(&self) -> &[(String, String)] {
        &self.disclosure
    }

    /// One line for the user.
    pub(crate) fn describe(&self) -> String {
        let each: Vec<String> = self
            .sessions
            .iter()
            .map(|s| {
                let h = &s.hello;
                format!("{} ({}, {} CPUs, kernel {})", s.url, h.hostname, h.cpus, h.kernel)
            })
            .collect();
        format!("client hosts, one agent each: {}", each.join(", "))
    }

    /// Why a link to one of them is lost, if one is.
    pub(crate) fn lost(&self) -> Option<String> {
        self.sessions.iter().find_map(|s| s.lost().map(|why| format!("{}: {why}", s.url)))
    }

    /// Ends every helper in order.
    pub(crate) fn close(self) {
        let ClientHosts { sessions, ssh, .. } = self;
        for s in sessions {
            let _ = s.bye();
        }
        drop(ssh);
    }
}

impl std::fmt::Debug for ClientHosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientHosts").field("hosts", &self.urls()).finish()
    }
}
