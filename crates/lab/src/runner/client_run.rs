//! The warm-up and the measured client runs, one code path for both ([`Phase`]): the
//! adapter's command line for the load, run as herd's child on the client's CPUs in the
//! client's namespace, bounded in time, with its stdout and stderr kept for the accounting.
//! The measured run is taken between two readings of the servers' CPU time and of the path's
//! counters. The warm-up must succeed; its output is read only for how many requests it
//! made (`account.rs`'s `warmed`: the record says what warmed the server up).
//!
//! Not here: what the adapters put on the command line (`crate::client`), and reading the
//! runs' output (`account.rs`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_run::spread::agent::ALLOW_TARGET_VAR;

use crate::hosts::session::Liveness;
use crate::hosts::ssh::CONTROL_DIR_VAR;
use herd_topo::CpuSet;
use std::time::Duration;

use herd_topo::net::Host;
use herd_topo::proc::Finished;
use herd_topo::Spawn;

use super::cell::CellRun;
use super::failure::{Phase, RunFailure, Stop};
use super::log_tail::{last_lines, last_lines_of};
use super::place::Snapshots;
use super::watched::Started;
use crate::client::{self, ClientJob};
use crate::error::with_causes;
use crate::load::{Load, Request, Shape};

/// A client run that ended by itself (not timed out, not interrupted).
pub(super) struct ClientRun {
    pub(super) finished: Finished,
    /// Where its files are: its stdout, stderr, and what the tool wrote (herd's JSON, ab's
    /// TSV).
    pub(super) dir: PathBuf,
    /// Around the measured run only.
    pub(super) usage: Option<(Usage, Usage)>,
}

/// The servers' and the router's CPU time, and the path's counters, at one moment.
pub(super) struct Usage {
    /// One per server process, in start order.
    pub(super) servers: Vec<Option<f64>>,
    pub(super) router: Option<f64>,
    pub(super) network: Option<Snapshots>,
}

/// Grace between SIGTERM and SIGKILL for a client past its time limit.
pub(super) const CLIENT_GRACE: Duration = Duration::from_secs(5);

impl<'a> CellRun<'a> {
    /// Runs the client once with `load`. Fails when it ran past its time limit, and for the
    /// warm-up when it exited unsuccessfully (a failed warm-up would leave the measured run
    /// on a server in an unknown state); a server or router that died meanwhile is named
    /// as the cause instead.
    pub(super) fn run_client(
        &mut self,
        phase: Phase,
        load: &Load,
        request: &Request,
        started: &Started,
    ) -> Result<ClientRun, Stop> {
        let (cell, e) = (self.cell, self.ctx.experiment);
        let dir = self.dir.join("client").join(phase.name());
        std::fs::create_dir_all(&dir)
            .map_err(|err| RunFailure::Setup(format!("cannot create {}: {err}", dir.display())))?;
        if let Some(hosts) = self.tool_hosts() {
            return self.run_tool_on_host(hosts, phase, load, request, started, dir);
        }
        let base_url = self.base_url();
        let ca_file = self.ca_file.clone();
        let netns = self.agent_netns();
        let job = self.job(load, request, &base_url, ca_file.as_deref(), &dir, &netns)?;
        let setup = |err: client::ClientError| RunFailure::Setup(with_causes(&err));
        let mut cmd = client::command(&job).map_err(setup)?;
        // `herd lab run --metrics-listen`: herd's measured runs serve their figures, labelled.
        if let (Phase::Measure, crate::client::Tool::Herd, Some((addr, linger))) =
            (phase, cell.client, self.ctx.metrics)
        {
            cmd.main.extend(crate::client::herd::metrics_args(
                addr,
                linger,
                &cell.key,
                // Counted from 1, as the report's command lines and tables count them.
                self.rec.repetition.saturating_add(1),
            ));
        }
        if phase == Phase::Measure {
            self.rec.client.argv =
                cmd.main.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        }
        // `herd lab run --tui`: herd's measured runs write their seconds where the view
        // follows them. Not in the recorded command line: the view's file is gone when the
        // lab ends, and the same run without the view measures the same.
        if let (Phase::Measure, crate::client::Tool::Herd, Some(path)) =
            (phase, cell.client, self.ctx.live_series)
        {
            cmd.main.extend(["--series".into(), path.as_os_str().to_owned()]);
        }
        cmd.write_files().map_err(setup)?;
        let (stdout, stderr) = (dir.join("stdout"), dir.join("stderr"));
        let client_ns = self.place.netns(Host::Client);
        // herd's client takes the opt-in as an agent does (`HERD_ALLOW_TARGET`, the URL's
        // host exactly); the other tools have no safety rule but the lab's own check.
        let mut env: Vec<(OsString, OsString)> = match (job.opt_in, cell.client) {
            (Some(ip), crate::client::Tool::Herd) => {
                vec![(ALLOW_TARGET_VAR.into(), crate::client::herd::url_host(ip).into())]
            }
            _ => Vec::new(),
        };
        // herd's client stops when the lab dies, its agents on other hosts with it.
        if cell.client == crate::client::Tool::Herd {
            env.push((crate::client::PARENT_VAR.into(), std::process::id().to_string().into()));
        }
        // Agents on client hosts go through the lab's own ssh connections to them.
        if let (Some(_), Some(c)) = (&job.agent_hosts, self.ctx.client_hosts) {
            env.push((CONTROL_DIR_VAR.into(), c.control_dir().as_os_str().to_owned()));
        }
        let spawn = Spawn {
            name: match phase {
                Phase::Warmup => "client-warmup",
                Phase::Measure => "client",
            },
            argv: &cmd.main,
            env: &env,
            stdout: &stdout,
            stderr: &stderr,
            // With client hosts, `[client] cpus` are theirs (`--agent-cpus`); here runs only
            // the coordinator, unpinned.
            cpus: if job.agent_hosts.is_some() { &CpuSet::All } else { &e.client_cpus },
            netns: client_ns.as_deref(),
        };
        let before = (phase == Phase::Measure).then(|| self.usage(started));
        let limit = time_limit(load);
        let finished =
            self.sup.run(&spawn, limit, CLIENT_GRACE, Some(self.ctx.cancel)).map_err(|err| {
                RunFailure::Setup(format!("cannot run {}: {}", cell.client, with_causes(&err)))
            })?;
        let usage = before.map(|before| (before, self.usage(started)));
        if finished.cancelled || self.cancelled() {
            return Err(Stop::Cancelled { client: finished.cancelled });
        }
        let failed = if finished.timed_out {
            Some(RunFailure::ClientTimedOut {
                tool: cell.client,
                phase,
                limit,
                stderr_tail: last_lines_of(&stderr),
            })
        } else if phase == Phase::Warmup && !finished.status.success() {
            Some(RunFailure::ClientFailed {
                tool: cell.client,
                phase,
                status: finished.status,
                problem: None,
                stderr_tail: Some(output_tail(&stdout, &stderr)),
            })
        } else {
            None
        };
        if let Some(failed) = failed {
            return Err(started.exited(self.sup, self.ctx.remotes()).unwrap_or(failed).into());
        }
        Ok(ClientRun { finished, dir, usage })
    }

    /// The job of a client run, for its command line and for reading its output; `ca_file`
    /// is the run's [`CellRun::ca_file`].
    pub(super) fn job<'j>(
        &self,
        load: &'j Load,
        request: &'j Request,
        base_url: &'j str,
        ca_file: Option<&'j Path>,
        out_dir: &'j Path,
        agent_netns: &'j [String],
    ) -> Result<ClientJob<'j>, RunFailure>
    where
        'a: 'j,
    {
        let (tool, ctx) = (self.cell.client, self.ctx);
        // ab, wrk and h2load with client hosts: located on client 1, where they run.
        let on_host = self.tool_hosts().and_then(|c| c.tool(tool));
        let program = on_host
            .or_else(|| ctx.ready.clients.get(&tool).map(PathBuf::as_path))
            .ok_or_else(|| RunFailure::Setup(format!("the client {tool} was not located")))?;
        Ok(ClientJob {
            tool,
            program,
            base_url,
            protocol: self.cell.protocol,
            ca_file,
            request,
            load,
            threads: ctx.experiment.client_threads,
            io: ctx.experiment.client_io,
            trace: ctx.experiment.client_trace,
            out_dir,
            agents: ctx.experiment.client_agents.unwrap_or(1),
            agent_netns,
            // The server host the experiment names is the user's opt-in for its address.
            // The address the load goes to is a named host's: the router host's behind a
            // proxy path, else the server host's.
            opt_in: ctx
                .router_host
                .filter(|_| self.cell.proxy().is_some())
                .or(ctx.server_host)
                .map(|h| h.address),
            agent_hosts: ctx.client_hosts.map(|c| crate::client::AgentHosts {
                urls: c.url_texts(),
                ssh_config: ctx.experiment.hosts.as_ref().and_then(|h| h.ssh_config.as_deref()),
                idle: ctx.experiment.hosts.as_ref().map_or(Liveness::LAB.idle, |h| h.idle),
                cpus: &ctx.experiment.client_cpus,
            }),
        })
    }

    /// The client hosts, when this cell's client is a tool that runs on client 1 there (ab,
    /// wrk, h2load; herd's own spreads over them as agents from here).
    pub(super) fn tool_hosts(&self) -> Option<&'a super::client_hosts::ClientHosts> {
        self.ctx.client_hosts.filter(|_| self.cell.client != client::Tool::Herd)
    }

    /// With agents on a network path, each agent's client namespace (the path made a client
    /// host for each); empty otherwise.
    pub(super) fn agent_netns(&self) -> Vec<String> {
        if self.ctx.experiment.client_agents.unwrap_or(1) < 2 {
            return Vec::new();
        }
        self.place.clients().iter().filter_map(|&(h, _)| self.place.netns(h)).collect()
    }

    /// Where every request goes: the path's target, or the server's loopback address, with
    /// the protocol's scheme.
    pub(super) fn base_url(&self) -> String {
        client::base_url(self.cell.protocol, self.place.target)
    }

    pub(super) fn usage(&self, started: &Started) -> Usage {
        Usage {
            servers: started
                .servers
                .iter()
                .map(|p| p.cpu_seconds(self.sup, self.ctx.remotes()))
                .collect(),
            router: started
                .router
                .as_ref()
                .and_then(|r| r.process.cpu_seconds(self.sup, self.ctx.remotes())),
            network: self.place.snapshot(),
        }
    }
}

/// How long a client may run before it is stopped: its own length plus a margin, or for a
/// request count, a generous bound (10 ms a request, at least a minute, at most two hours).
pub(super) fn time_limit(load: &Load) -> Duration {
    let margin = Duration::from_secs(60);
    match &load.shape {
        Shape::Duration { duration, .. } | Shape::Rate { duration, .. } => *duration + margin,
        Shape::Steps { clients, step } => *step * clients.len() as u32 + margin,
        Shape::RateSteps { rates, step, .. } => *step * rates.len() as u32 + margin,
        Shape::Requests { n_requests, .. } => {
            let per = Duration::from_millis(10)
                .saturating_mul(u32::try_from(*n_requests).unwrap_or(u32::MAX));
            (per + margin).min(Duration::from_secs(7200))
        }
    }
}

/// The end of a failed client's stderr, or of its stdout when stderr is empty (wrk and ab
/// print some of their errors there).
pub(super) fn output_tail(stdout: &Path, stderr: &Path) -> String {
    let err = std::fs::read_to_string(stderr).unwrap_or_default();
    if err.trim().is_empty() {
        last_lines_of(stdout)
    } else {
        last_lines(&err)
    }
}
