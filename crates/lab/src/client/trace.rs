//! What replays the NetBench trace (dbench's client.txt) in one step from one client host:
//! smbtorture's NBENCH over SMB against samba, or tbench over plain TCP against tbench_srv
//! (a NetBench cell's calibration). The runner runs it and the dry run prints it, from the
//! same [`TraceJob::new`].

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use super::nbench_output::{NbenchExit, NbenchOutcome};
use super::smbtorture::{self, NbenchJob, DBENCH_CLIENT_TXT};
use super::tbench::{self, TbenchJob};
use super::Tool;

/// One client host's run of a step.
#[derive(Debug, Clone, Copy)]
pub enum TraceJob<'a> {
    Nbench(NbenchJob<'a>),
    Tbench(TbenchJob<'a>),
}

impl<'a> TraceJob<'a> {
    /// `tool`'s run (`program`) from client host `host` (from 0) of `clients` for `limit`
    /// against `server`, replaying [`DBENCH_CLIENT_TXT`]. smbtorture gets the host's own
    /// share: runs side by side in one share would delete each other's files. Err for a
    /// host beyond the shares smbd has.
    pub fn new(
        tool: Tool,
        program: &'a Path,
        server: SocketAddr,
        host: usize,
        clients: u32,
        limit: Duration,
    ) -> Result<TraceJob<'a>, String> {
        let loadfile = Path::new(DBENCH_CLIENT_TXT);
        Ok(match tool {
            Tool::Tbench => TraceJob::Tbench(TbenchJob {
                program,
                server: server.ip(),
                clients,
                duration: limit,
                loadfile,
            }),
            _ => TraceJob::Nbench(NbenchJob {
                program,
                server,
                share: herd_drivers::SAMBA_SHARES
                    .get(host)
                    .ok_or_else(|| format!("smbd has no share for client host {}", host + 1))?,
                clients,
                duration: limit,
                loadfile,
            }),
        })
    }

    pub fn argv(&self) -> Result<Vec<OsString>, String> {
        match self {
            TraceJob::Nbench(j) => j.argv().map_err(|e| e.to_string()),
            TraceJob::Tbench(j) => j.argv().map_err(|e| e.to_string()),
        }
    }

    /// How long a runner lets it go before killing it.
    pub fn kill_timeout(&self) -> Duration {
        match self {
            TraceJob::Nbench(j) => j.kill_timeout(),
            TraceJob::Tbench(j) => tbench::kill_timeout(j.duration),
        }
    }

    /// What the run measured, or its cause of failure in words.
    pub fn parse(&self, out: &str, err: &str, exit: NbenchExit) -> Result<NbenchOutcome, String> {
        match self {
            TraceJob::Nbench(j) => smbtorture::parse(j, out, err, exit).map_err(|e| e.to_string()),
            TraceJob::Tbench(j) => tbench::parse(j, out, err, exit).map_err(|e| e.to_string()),
        }
    }

    /// Why a run that had to be stopped at its kill timeout never got going, when its output
    /// says: tbench waits forever after a failed connect.
    pub fn stuck_because(&self, out: &str, err: &str, after: Duration) -> Option<String> {
        match self {
            TraceJob::Nbench(_) => None,
            TraceJob::Tbench(j) => match tbench::parse(j, out, err, NbenchExit::TimedOut { after })
            {
                Err(e @ tbench::TbenchError::NoServer { .. }) => Some(e.to_string()),
                _ => None,
            },
        }
    }
}
