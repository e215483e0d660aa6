//! The second phase, on a proxy path only: the router's program (HAProxy, nginx, sslh) in the
//! router's namespace, or on the `[hosts]` router host through its helper, on the router's
//! CPUs, forwarding the cell's protocol to every address the server listens on, ready before
//! the path is checked. Its record comes after the servers' in the store (its CPU time is
//! not theirs).

use std::net::SocketAddr;

use herd_drivers::{render_proxy, ProxyKind, ProxySpec};
use herd_store::ServerRecord;
use herd_topo::net::Host;
use herd_topo::Spawn;

use super::cell::CellRun;
use super::failure::{RunFailure, Stop};
use super::launch::{
    argv_record, config_records, create_dir, version, write_launch, write_tls, Asker,
};
use super::role_host::RoleHost;
use super::servers_on_host::{start_process, write_launch as write_launch_on};
use super::watched::{On, Router, Watched};
use crate::error::with_causes;

impl CellRun<'_> {
    /// Starts the path's router program; None for a path without one (and over loopback).
    pub(super) fn start_router(&mut self) -> Result<Option<Router>, Stop> {
        let (cell, place, ctx) = (self.cell, self.place, self.ctx);
        let (Some(kind), Some(backends), Some(vip)) =
            (cell.proxy(), place.backends(), place.router_listen())
        else {
            return Ok(None);
        };
        if let Some(host) = ctx.router_host {
            return self.start_router_on(host, kind, backends, vip).map(Some);
        }
        let e = ctx.experiment;
        let programs = ctx
            .ready
            .proxies
            .get(&kind)
            .cloned()
            .ok_or_else(|| RunFailure::Setup(format!("no program was located for {kind}")))?;
        let run_dir = self.dir.join("router");
        create_dir(&run_dir).map_err(RunFailure::Setup)?;
        let spec = ProxySpec {
            kind,
            protocol: cell.protocol,
            listen: vip,
            // Every address of the server host: two on a path HAProxy balances, one otherwise
            // (matrix.rs checks that Path::balanced and ProxyKind::balances agree).
            backends,
            run_dir,
            workers: None,
            user: ctx.ready.user.clone(),
            programs,
        };
        let launch = render_proxy(&spec).map_err(|err| {
            RunFailure::Setup(format!("cannot configure {kind}: {}", with_causes(&err)))
        })?;
        write_launch(&launch, ctx.ready.user.as_deref()).map_err(RunFailure::Setup)?;
        // A proxy that ends TLS itself (HAProxy http) has a certificate of its own, for the
        // router's address: the client trusts its CA, not the server's.
        if let Some(tls) = &launch.tls {
            write_tls(tls).map_err(RunFailure::Setup)?;
        }
        let router_ca = launch.tls.as_ref().map(|t| t.ca.clone());
        let p = launch
            .processes
            .last()
            .ok_or_else(|| RunFailure::Setup(format!("the driver of {kind} started no process")))?;
        let router_ns = place.netns(Host::Router);
        let pid = self
            .sup
            .start(&Spawn {
                name: &p.name,
                argv: &p.argv,
                env: &p.env,
                stdout: &p.log,
                stderr: &p.log,
                cpus: &e.router_cpus,
                netns: router_ns.as_deref(),
            })
            .map_err(|err| {
                RunFailure::Setup(format!("cannot start {}: {}", p.name, with_causes(&err)))
            })?;
        let process = Watched { pid, name: p.name.clone(), log: p.log.clone(), on: On::Here };
        self.wait_ready(&launch.ready, router_ca.as_deref(), Host::Router, &process)?;
        if router_ca.is_some() {
            self.ca_file = router_ca;
        }
        // Every proxy driver gives a version probe; "n/a" as for a server process without one.
        let version = launch.versions.first().map_or_else(
            || "n/a".to_owned(),
            |v| version(v, &mut Asker::Here(self.sup, self.dir), self.versions),
        );
        let record = ServerRecord {
            name: format!("router:{kind}"),
            program: kind.program().name.to_string(),
            version,
            argv: argv_record(p),
            cpus: Some(e.router_cpus.to_string()),
            cpu_seconds: None,
            configs: config_records(&launch.files, self.dir),
        };
        Ok(Some(Router { process, record }))
    }

    /// [`CellRun::start_router`] on the `[hosts]` router host: the proxy rendered against
    /// its helper's run directory there, its files written and its process started through
    /// the helper on the router's CPUs of that host, ready when it accepts there and answers
    /// the readiness file from here through it.
    fn start_router_on(
        &mut self,
        host: &RoleHost,
        kind: ProxyKind,
        backends: Vec<SocketAddr>,
        vip: SocketAddr,
    ) -> Result<Router, Stop> {
        let (cell, e) = (self.cell, self.ctx.experiment);
        let setup = |why: String| RunFailure::Setup(format!("on {}: {why}", host.url));
        let run =
            self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let base = host.path(&format!("cells/{run}"));
        let programs = host
            .programs
            .get(kind.name())
            .cloned()
            .ok_or_else(|| setup(format!("no program was located for {kind}")))?;
        let spec = ProxySpec {
            kind,
            protocol: cell.protocol,
            listen: vip,
            backends,
            run_dir: base.join("router"),
            workers: None,
            user: host.user.clone(),
            programs,
        };
        let launch = render_proxy(&spec)
            .map_err(|err| setup(format!("cannot configure {kind}: {}", with_causes(&err))))?;
        write_launch_on(host, &launch).map_err(setup)?;
        // A proxy that ends TLS itself has a certificate of its own, for the router host's
        // address: the client (here or on client hosts) trusts its CA, from a copy here.
        if let Some(tls) = &launch.tls {
            let ca = tls.files.iter().find(|f| f.path == tls.ca).ok_or_else(|| {
                setup(format!("the driver of {kind} made no CA file at {}", tls.ca.display()))
            })?;
            let local = self.dir.join("router").join("ca.pem");
            create_dir(&self.dir.join("router")).map_err(RunFailure::Setup)?;
            std::fs::write(&local, &ca.contents)
                .map_err(|e| RunFailure::Setup(format!("cannot write {}: {e}", local.display())))?;
            self.ca_file = Some(local);
        }
        let p = launch
            .processes
            .last()
            .ok_or_else(|| setup(format!("the driver of {kind} started no process")))?;
        let cpus = match &e.router_cpus {
            herd_topo::CpuSet::All => None,
            set => Some(set.to_string()),
        };
        let log = format!("{run}-router-{}.log", p.name);
        let pid = start_process(host, p, cpus, &log)
            .map_err(|e| setup(format!("cannot start {}: {e}", p.name)))?;
        let on = On::Host { log: log.clone(), role: host.role };
        let process = Watched { pid, name: p.name.clone(), log: host.path(&log), on };
        self.wait_ready_on(host, &launch.ready, &process, vip)?;
        let version = launch.versions.first().map_or_else(
            || "n/a".to_owned(),
            |v| version(v, &mut Asker::Host(host), self.versions),
        );
        let record = ServerRecord {
            name: format!("router:{kind}"),
            program: kind.program().name.to_string(),
            version,
            argv: argv_record(p),
            cpus: Some(format!("{} on {}", e.router_cpus, host.url)),
            cpu_seconds: None,
            configs: config_records(&launch.files, &base),
        };
        Ok(Router { process, record })
    }
}
