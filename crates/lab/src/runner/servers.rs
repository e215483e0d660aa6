//! The first phase: the cell's server, fresh, speaking the cell's protocol. Its configuration
//! (and, over TLS, a certificate made for this run) is rendered into the run's directory,
//! every program it runs is recorded with its version, and its processes start in order
//! (php-fpm before nginx), each ready before the next, on the server's CPUs and in the
//! server's namespace; the phase ends when the front one answers the readiness file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use herd_drivers::{Probe, Protocol, ServerSpec};
use herd_store::ServerRecord;
use herd_topo::net::Host;

use super::cell::CellRun;
use super::failure::{RunFailure, Stop};
use super::launch::{
    argv_record, config_records, create_dir, open_dir, program_versions, spawn_of, write_launch,
    write_tls, Asker,
};
use super::preflight::Ready;
use super::server_count::{LogAt, ServerLog};
use super::watched::{On, Watched};
use crate::error::with_causes;
use crate::matrix::Cell;

/// `cell`'s server as its driver is asked to render it: listening on `listen`, serving
/// `docroot`, its files under `run_dir`, with the programs preflight located (None: none
/// were, for this server).
pub(super) fn server_spec(
    cell: &Cell,
    ready: &Ready,
    listen: SocketAddr,
    docroot: &Path,
    run_dir: PathBuf,
) -> Option<ServerSpec> {
    Some(ServerSpec {
        kind: cell.server.kind,
        php: cell.server.php,
        protocol: cell.protocol,
        listen,
        docroot: docroot.to_path_buf(),
        run_dir,
        workers: cell.server.workers,
        user: ready.user.clone(),
        runs_as: ready.runs_as.clone(),
        programs: ready.programs.get(&cell.server.name)?.clone(),
        access_log: false,
        keepalive_requests: cell.server.keepalive_requests,
        sendfile: cell.server.sendfile,
    })
}

impl CellRun<'_> {
    /// Starts the server's processes in the cell's protocol (a TLS listener's certificate
    /// written first, its CA kept as the run's [`CellRun::ca_file`]); returns them in start
    /// order, the front one last, and the protocol the front one's readiness is asked in.
    pub(super) fn start_servers(&mut self) -> Result<(Vec<Watched>, Protocol), Stop> {
        if let Some(ext) = &self.cell.server.external {
            return self.start_external(ext);
        }
        if let Some(host) = self.ctx.server_host {
            return self.start_servers_on(host);
        }
        let (cell, place, ready) = (self.cell, self.place, self.ctx.ready);
        let name = &cell.server.name;
        let server_dir = self.dir.join(name);
        create_dir(&server_dir).map_err(RunFailure::Setup)?;
        open_dir(self.dir);
        let mut spec = server_spec(cell, ready, place.listen, &self.ctx.docroot.dir, server_dir)
            .ok_or_else(|| {
                RunFailure::Setup(format!("no programs were located for server {name}"))
            })?;
        spec.access_log = self.ctx.experiment.runner.server_count;
        let launch = crate::server_config::render_with(&spec, cell.server.config.as_ref())
            .map_err(|err| RunFailure::Setup(format!("cannot configure {name}: {err}")))?;
        self.server_log = launch.access_log.as_ref().map(|log| ServerLog {
            server: name.clone(),
            at: LogAt::Here(log.path.clone()),
            format: log.format,
        });
        write_launch(&launch, ready.user.as_deref()).map_err(RunFailure::Setup)?;
        if let Some(tls) = &launch.tls {
            write_tls(tls).map_err(RunFailure::Setup)?;
            self.ca_file = Some(tls.ca.clone());
        }
        self.record_programs(&launch, self.dir);

        let server_ns = place.netns(Host::Server);
        let mut started = Vec::new();
        for p in &launch.processes {
            let spawn = spawn_of(p, &cell.server_cpus, server_ns.as_deref());
            let pid = self.sup.start(&spawn).map_err(|err| {
                RunFailure::Setup(format!("cannot start {}: {}", p.name, with_causes(&err)))
            })?;
            let process = Watched { pid, name: p.name.clone(), log: p.log.clone(), on: On::Here };
            if let Some(probe) = &p.ready {
                let ca = self.ca_file.clone();
                self.wait_ready(&place.local_probe(probe), ca.as_deref(), Host::Server, &process)?;
            }
            started.push(process);
        }
        let front = started
            .last()
            .cloned()
            .ok_or_else(|| RunFailure::Setup(format!("the driver of {name} started no process")))?;
        let probe = place.local_probe(&launch.ready);
        let ca = self.ca_file.clone();
        self.wait_ready(&probe, ca.as_deref(), Host::Server, &front)?;
        let over = match launch.ready {
            Probe::Http { protocol, .. } => protocol,
            // Not HTTP (samba): the lab refuses HTTP workloads for it before it gets here.
            Probe::UnixSocket(_) | Probe::Tcp(_) => Protocol::H1,
        };
        Ok((started, over))
    }

    /// One record per process of the launch (php-fpm, then nginx …), each with the version
    /// of its program, the rendered files with the front one (the last started); then one
    /// per program the servers start themselves (php-cgi under lighttpd or Apache), whose
    /// CPU time is in the server's (reaped children). The records of started processes come
    /// first and in start order: the accounting pairs them with the processes by position.
    /// `base` is the directory the rendered files' recorded names are relative to (this
    /// run's directory, here or on the server host).
    pub(super) fn record_programs(&mut self, launch: &herd_drivers::Launch, base: &Path) {
        let cell = self.cell;
        let cpus = Some(cell.server_cpus.to_string());
        let n = launch.processes.len();
        let mut ask = match self.ctx.server_host {
            Some(host) => Asker::Host(host),
            None => Asker::Here(self.sup, self.dir),
        };
        let found = program_versions(launch, &mut ask, self.versions);
        for (i, (program, version)) in found.into_iter().enumerate() {
            // The processes first, in start order, the front one's record with the configs.
            let process = launch.processes.get(i);
            let configs = if i + 1 == n { config_records(&launch.files, base) } else { Vec::new() };
            self.rec.servers.push(ServerRecord {
                name: cell.server.name.clone(),
                program,
                version,
                argv: process.map(argv_record).unwrap_or_default(),
                cpus: cpus.clone(),
                cpu_seconds: None,
                configs,
            });
        }
    }
}
