//! The processes a run started and watches: each one's PID, name and log, so that one that
//! exits is named with the end of its log; and which of them has exited.

use std::path::PathBuf;

use herd_store::ServerRecord;
use herd_topo::Supervisor;

use super::failure::{RunFailure, Stage};
use super::log_tail::last_lines_of;
use super::role_host::RoleHost;
use crate::hosts::Role;

/// The `[hosts]` hosts a run's programs may run on (None: this machine).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Remotes<'a> {
    pub(super) server: Option<&'a RoleHost>,
    pub(super) router: Option<&'a RoleHost>,
}

impl<'a> Remotes<'a> {
    /// The host a process runs on by where it was started (None: here).
    fn of(self, on: &On) -> Option<&'a RoleHost> {
        match on {
            On::Here => None,
            On::Host { role: Role::Router, .. } => self.router,
            On::Host { .. } | On::HostGroup => self.server,
        }
    }

    /// Every host, for what is done on each (stopping what was started there).
    pub(super) fn each(self) -> impl Iterator<Item = &'a RoleHost> {
        self.server.into_iter().chain(self.router)
    }
}

/// A process herd started for the run.
#[derive(Debug, Clone)]
pub(super) struct Watched {
    /// Its PID on the machine it runs on.
    pub(super) pid: u32,
    pub(super) name: String,
    /// Its log: a path here, or on the server host the path the helper's log name means.
    pub(super) log: PathBuf,
    /// Where it runs, and so how its CPU time and its end are read.
    pub(super) on: On,
}

/// Where a watched process runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum On {
    /// This machine: the supervisor started it (or, for an external server, `pid` is its
    /// process group).
    Here,
    /// A `[hosts]` host (the server host, or the router host: `role`), started there by its
    /// helper, which knows it as the process's `name`; `log` is its log's name in the
    /// helper's run directory.
    Host { log: String, role: Role },
    /// The server host, a process group herd did not start there (an external server's):
    /// only its CPU time is read.
    HostGroup,
}

/// A program started on the router of a proxy path, and its record for the store.
pub(super) struct Router {
    pub(super) process: Watched,
    pub(super) record: ServerRecord,
}

/// Everything the run started before its client: the server's processes in start order
/// (the front one last), and the path's router program, if it has one.
pub(super) struct Started {
    pub(super) servers: Vec<Watched>,
    pub(super) router: Option<Router>,
    /// The protocol the front server's readiness is asked in (its driver's choice: h1 in
    /// the clear, h1-tls on a TLS listener, h2c on one that speaks nothing else).
    pub(super) over: herd_drivers::Protocol,
}

impl Watched {
    /// Its exit, as a failure, if it has exited; a process on a host is asked there.
    pub(super) fn exited(
        &self,
        sup: &mut Supervisor,
        hosts: Remotes<'_>,
        when: Stage,
    ) -> Option<RunFailure> {
        if let (On::Host { log, .. }, Some(host)) = (&self.on, hosts.of(&self.on)) {
            let ended = host.ended(&self.name)?;
            use std::os::unix::process::ExitStatusExt as _;
            let raw = match (ended.code, ended.signal) {
                (Some(code), _) => (code & 0xff) << 8,
                (None, Some(signal)) => signal & 0x7f,
                (None, None) => 0,
            };
            let tail = if ended.log_tail.trim().is_empty() {
                host.log_tail(log)
            } else {
                super::log_tail::last_lines(&ended.log_tail)
            };
            return Some(RunFailure::ServerExited {
                name: format!("{} on {}", self.name, host.url),
                status: std::process::ExitStatus::from_raw(raw),
                when,
                log_tail: tail,
            });
        }
        let status = sup.exit_status(self.pid)?;
        Some(RunFailure::ServerExited {
            name: self.name.clone(),
            status,
            when,
            log_tail: last_lines_of(&self.log),
        })
    }
}

impl Watched {
    /// Its CPU time so far (and its children's), read where it runs.
    pub(super) fn cpu_seconds(&self, sup: &Supervisor, hosts: Remotes<'_>) -> Option<f64> {
        match (&self.on, hosts.of(&self.on)) {
            (On::Host { .. }, Some(host)) => host.cpu_seconds(&self.name),
            (On::HostGroup, Some(host)) => host.group_cpu_seconds(self.pid),
            _ => sup.cpu_seconds(self.pid),
        }
    }
}

impl Started {
    /// The first of the run's server and router processes that has exited, as a failure:
    /// a run in which one died failed, whatever the client counted.
    pub(super) fn exited(&self, sup: &mut Supervisor, hosts: Remotes<'_>) -> Option<RunFailure> {
        let router = self.router.iter().map(|r| &r.process);
        self.servers.iter().chain(router).find_map(|p| p.exited(sup, hosts, Stage::Running))
    }

    /// The process whose log explains a failure to answer through the path: the router
    /// program on a proxy path, else the front server.
    pub(super) fn front(&self) -> Option<&Watched> {
        self.router.as_ref().map(|r| &r.process).or_else(|| self.servers.last())
    }
}
