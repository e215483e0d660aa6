//! The first phase on a `[hosts]` server host: the cell's server rendered against the
//! helper's run directory there (its configuration, its certificate, its logs, the document
//! root copied once per lab run), the files written through the helper, its processes
//! started there in order on the server's CPUs of that host, each ready before the next.
//! The front one is ready when it accepts a connection on its host and then answers the
//! readiness file from here, over the network the client will use. A TLS listener's CA
//! certificate is also written here, for the client and the verification.

use std::path::Path;

use herd_drivers::{Probe, Protocol, ServerSpec};
use herd_host::protocol::{Probe as HostProbe, Readiness};

use super::cell::CellRun;
use super::failure::{RunFailure, Stage, Stop};
use super::readiness::{ask, poll, NotReady};
use super::role_host::RoleHost;
use super::server_count::{LogAt, ServerLog};
use super::watched::{On, Watched};

/// Where the document root goes in the helper's run directory.
pub(super) const DOCROOT: &str = "www";

impl CellRun<'_> {
    /// [`CellRun::start_servers`] on the server host.
    pub(super) fn start_servers_on(
        &mut self,
        host: &RoleHost,
    ) -> Result<(Vec<Watched>, Protocol), Stop> {
        let (cell, place) = (self.cell, self.place);
        let name = &cell.server.name;
        let run =
            self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let base = host.path(&format!("cells/{run}"));
        let setup = |why: String| RunFailure::Setup(format!("on {}: {why}", host.url));
        let mut spec = spec_on(host, cell, place.listen, &host.path(DOCROOT), base.join(name))
            .ok_or_else(|| setup(format!("no programs were located for server {name}")))?;
        spec.access_log = self.ctx.experiment.runner.server_count;
        let launch = crate::server_config::render_with(&spec, cell.server.config.as_ref())
            .map_err(|err| setup(format!("cannot configure {name}: {err}")))?;
        write_launch(host, &launch).map_err(setup)?;
        if let Some(tls) = &launch.tls {
            // The client and the verification run here: they trust the CA from a copy.
            let ca = tls.files.iter().find(|f| f.path == tls.ca).ok_or_else(|| {
                setup(format!("the driver of {name} made no CA file at {}", tls.ca.display()))
            })?;
            let local = self.dir.join(name).join("ca.pem");
            super::launch::create_dir(&self.dir.join(name)).map_err(RunFailure::Setup)?;
            std::fs::write(&local, &ca.contents)
                .map_err(|e| RunFailure::Setup(format!("cannot write {}: {e}", local.display())))?;
            self.ca_file = Some(local);
        }
        self.record_programs(&launch, &base);

        let cpus = match &cell.server_cpus {
            herd_topo::CpuSet::All => None,
            set => Some(set.to_string()),
        };
        let mut started = Vec::new();
        let log_of = |p: &herd_drivers::ProcessSpec| format!("{run}-{name}-{}.log", p.name);
        self.server_log = launch.access_log.as_ref().map(|access| {
            // A log on a process's own output (herd serve's) is that process's log in the
            // helper's run directory, where the helper sends its output.
            let own = launch.processes.iter().find(|p| p.log == access.path);
            let at = own.map_or_else(|| access.path.display().to_string(), log_of);
            ServerLog { server: name.clone(), at: LogAt::Host(at), format: access.format }
        });
        for p in &launch.processes {
            let log = log_of(p);
            let pid = start_process(host, p, cpus.clone(), &log)
                .map_err(|e| setup(format!("cannot start {}: {e}", p.name)))?;
            let on = On::Host { log: log.clone(), role: host.role };
            let process = Watched { pid, name: p.name.clone(), log: host.path(&log), on };
            if let Some(probe) = &p.ready {
                self.wait_ready_on(host, probe, &process, place.listen)?;
            }
            started.push(process);
        }
        let front = started
            .last()
            .cloned()
            .ok_or_else(|| setup(format!("the driver of {name} started no process")))?;
        self.wait_ready_on(host, &launch.ready, &front, place.listen)?;
        let over = match launch.ready {
            Probe::Http { protocol, .. } => protocol,
            Probe::UnixSocket(_) | Probe::Tcp(_) => Protocol::H1,
        };
        Ok((started, over))
    }

    /// Waits until `probe` answers for `process` on the host: a connection it accepts,
    /// asked by the helper there, then for an HTTP probe the readiness file asked from
    /// here at `from_here` (the server's address, or the router's where the client sends
    /// through it), within the experiment's `ready_timeout` in all.
    pub(super) fn wait_ready_on(
        &mut self,
        host: &RoleHost,
        probe: &Probe,
        process: &Watched,
        from_here: std::net::SocketAddr,
    ) -> Result<(), Stop> {
        let timeout = self.ctx.experiment.runner.ready_timeout;
        let started = std::time::Instant::now();
        let on_host = match probe {
            Probe::Http { addr, .. } | Probe::Tcp(addr) => HostProbe::Tcp(addr.to_string()),
            Probe::UnixSocket(path) => HostProbe::UnixSocket(path.display().to_string()),
        };
        let not_ready = |last: String, log_tail: String| RunFailure::ServerNotReady {
            name: format!("{} on {}", process.name, host.url),
            timeout,
            last,
            log_tail,
        };
        let log = match &process.on {
            On::Host { log, .. } => log.as_str(),
            _ => "",
        };
        let remotes = self.ctx.remotes();
        match host.ready(&process.name, on_host, timeout) {
            Ok(Readiness::Ready { .. }) => {}
            Ok(Readiness::Exited { .. }) => {
                let exited = process.exited(self.sup, remotes, Stage::Starting);
                return Err(exited
                    .unwrap_or_else(|| not_ready("it ended".into(), host.log_tail(log)))
                    .into());
            }
            Ok(Readiness::TimedOut { .. }) => {
                let last = format!("accepted no connection on {from_here}");
                return Err(not_ready(last, host.log_tail(log)).into());
            }
            Err(e) => return Err(RunFailure::Setup(e).into()),
        }
        let Probe::Http { path, protocol, .. } = probe else { return Ok(()) };
        // From here, as the client will ask.
        let remote = Probe::Http { addr: from_here, path: path.clone(), protocol: *protocol };
        let ca = self.ca_file.clone();
        let cancel = self.ctx.cancel;
        let sup = &mut *self.sup;
        let waited = poll(
            timeout.saturating_sub(started.elapsed()),
            || cancel.load(std::sync::atomic::Ordering::Relaxed),
            || process.exited(sup, remotes, Stage::Starting),
            || Ok(ask(&remote, ca.as_deref())),
        );
        match waited {
            Ok(()) => Ok(()),
            Err(NotReady::Cancelled) => Err(Stop::Cancelled { client: false }),
            Err(NotReady::Exited(exited)) => Err(exited.into()),
            Err(NotReady::Unaskable(why)) => Err(RunFailure::Setup(why).into()),
            Err(NotReady::TimedOut { last }) => Err(not_ready(last, host.log_tail(log)).into()),
        }
    }
}

/// Starts launch process `p` on the host through its helper, as `p.name`, on `cpus` (None:
/// every CPU), its output in `log` (a plain name in the run directory); its PID there.
pub(super) fn start_process(
    host: &RoleHost,
    p: &herd_drivers::ProcessSpec,
    cpus: Option<String>,
    log: &str,
) -> Result<u32, String> {
    let argv: Vec<String> = p.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let env: Vec<(String, String)> = p
        .env
        .iter()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    host.start(&p.name, &argv, &env, cpus, log)
}

/// `cell`'s server as its driver is asked to render it on the server host (the host's
/// programs and users), listening on `listen`, serving `docroot`, its files under `run_dir`
/// (paths there); None when no programs were located there for it.
pub(super) fn spec_on(
    host: &RoleHost,
    cell: &crate::matrix::Cell,
    listen: std::net::SocketAddr,
    docroot: &Path,
    run_dir: std::path::PathBuf,
) -> Option<ServerSpec> {
    Some(ServerSpec {
        kind: cell.server.kind,
        php: cell.server.php,
        protocol: cell.protocol,
        listen,
        docroot: docroot.to_path_buf(),
        run_dir,
        workers: cell.server.workers,
        user: host.user.clone(),
        runs_as: host.runs_as.clone(),
        programs: host.programs.get(&cell.server.name)?.clone(),
        access_log: false,
        keepalive_requests: cell.server.keepalive_requests,
        sendfile: cell.server.sendfile,
    })
}

/// A launch's directories and files written on the host, through its helper: the
/// directories a server writes after dropping to its user given to that user, the ones
/// everyone writes opened (1777), a TLS listener's files readable by their owner only.
pub(super) fn write_launch(host: &RoleHost, launch: &herd_drivers::Launch) -> Result<(), String> {
    for d in &launch.dirs {
        host.make_dir(d, Some(0o755), None)?;
    }
    for d in &launch.user_dirs {
        host.make_dir(d, Some(0o755), host.user.as_deref())?;
    }
    for d in &launch.shared_dirs {
        host.make_dir(d, Some(0o1777), None)?;
    }
    for f in &launch.files {
        host.write(&f.path, f.contents.as_bytes(), 0o644)?;
    }
    for f in launch.tls.iter().flat_map(|t| &t.files) {
        host.write(&f.path, f.contents.as_bytes(), 0o600)?;
    }
    Ok(())
}

/// The document root `local` (this lab run's) copied to the host, once per lab run.
pub(super) fn copy_docroot(host: &RoleHost, local: &Path) -> Result<usize, String> {
    host.copy_tree(local, DOCROOT)
}
