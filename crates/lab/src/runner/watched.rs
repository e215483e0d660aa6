//! The processes a run started and watches: each one's PID, name and log, so that one that
//! exits is named with the end of its log; and which of them has exited.

use std::path::PathBuf;

use herd_store::ServerRecord;
use herd_topo::Supervisor;

use super::failure::{RunFailure, Stage};
use super::log_tail::last_lines_of;

/// A process herd started for the run.
#[derive(Debug, Clone)]
pub(super) struct Watched {
    pub(super) pid: u32,
    pub(super) name: String,
    pub(super) log: PathBuf,
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
    /// Its exit, as a failure, if it has exited.
    pub(super) fn exited(&self, sup: &mut Supervisor, when: Stage) -> Option<RunFailure> {
        let status = sup.exit_status(self.pid)?;
        Some(RunFailure::ServerExited {
            name: self.name.clone(),
            status,
            when,
            log_tail: last_lines_of(&self.log),
        })
    }
}

impl Started {
    /// The first of the run's server and router processes that has exited, as a failure:
    /// a run in which one died failed, whatever the client counted.
    pub(super) fn exited(&self, sup: &mut Supervisor) -> Option<RunFailure> {
        let router = self.router.iter().map(|r| &r.process);
        self.servers.iter().chain(router).find_map(|p| p.exited(sup, Stage::Running))
    }

    /// The process whose log explains a failure to answer through the path: the router
    /// program on a proxy path, else the front server.
    pub(super) fn front(&self) -> Option<&Watched> {
        self.router.as_ref().map(|r| &r.process).or_else(|| self.servers.last())
    }
}
