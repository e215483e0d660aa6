//! The second phase, on a proxy path only: the router's program (HAProxy, nginx, sslh) in the
//! router's namespace, on the router's CPUs, forwarding the cell's protocol to every address
//! the server listens on, ready before the path is checked. Its record comes after the servers' in the store
//! (its CPU time is not theirs).

use herd_drivers::{render_proxy, ProxySpec};
use herd_store::ServerRecord;
use herd_topo::net::Host;
use herd_topo::Spawn;

use super::cell::CellRun;
use super::failure::{RunFailure, Stop};
use super::launch::{
    argv_record, config_records, create_dir, version, write_launch, write_tls, Asker,
};
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
}
