//! `herd cluster run --ssh HOST,…`: one agent on each of the user's own machines, reached
//! over SSH (docs/cluster.md). The coordinator listens here on a Unix socket in the run's
//! directory, as for agents in namespaces; each host's helper (`herd host`, herd-lab's
//! `HostSession`, one ssh connection per host) is opened first, every one of them, so that a
//! host that cannot be reached, has another build or lacks a CPU of `--agent-cpus` fails the
//! run before any agent starts. Each helper waits `--idle-timeout` (30 s, the lab's default)
//! with its channel silent before it takes this herd for lost and stops its agent.
//! Then a socket inside each helper's run directory is forwarded to the coordinator's through
//! that host's ssh master (`ssh -O forward -R`), and the helper starts `herd agent` there
//! from the host's cache of this build, told that socket as its coordinator, and given the
//! plan with the files the run reads copied into that run directory first (`cluster_files`:
//! a path here means nothing there). The run is then the local run's:
//! `cluster_cmd::coordinate`.
//!
//! Cleanup on every way out: dropping [`SshAgents`] cancels each forward and says bye to each
//! helper, which stops its agent and removes its run directory (the socket with it). When
//! this process is killed, its ssh sessions see their input close, and each helper stops
//! what it started on its own: that is the helper's rule, not this file's.

use std::ffi::OsString;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use herd_host::protocol::{Probe, Readiness, StartSpec};
use herd_lab::hosts::session::{HostSession, Liveness};
use herd_lab::hosts::ssh::Ssh;
use herd_lab::hosts::{remote_herd, HostUrl};
use herd_run::spread::agent::{ALLOW_TARGET_VAR, COORDINATOR_VAR, COUNT_VAR, INDEX_VAR};
use herd_run::spread::{Address, Coordinator};
use herd_run::RunPlan;
use herd_topo::CpuSet;

use crate::cluster_args::{run_args, run_plan, ClusterRunArgs};
use crate::cluster_cmd::{coordinate, last_line, Agents, RunDir};
use crate::cluster_files::RunFiles;
use crate::run_cmd::{stop_on_ctrl_c, Outcome};
use crate::run_metrics::RunMetrics;
use crate::run_outputs::RunOutputs;
use crate::tui::Tui;

/// This build, as each host's helper must say it is.
const VERSION: &str = env!("HERD_VERSION");
/// How long ssh may take to connect to a host.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The agent's name for its helper, and its log's, in the helper's run directory.
const AGENT_ID: &str = "agent";
const AGENT_LOG: &str = "agent.log";
/// The socket the agent is told, in the helper's run directory.
const SOCKET: &str = "coordinator.sock";
/// How much of an agent's log is read for its last words.
const LOG_READ: u64 = 1 << 20;

/// `herd cluster run --ssh HOSTS -- <run args>`.
pub(crate) fn run(args: &ClusterRunArgs) -> anyhow::Result<Outcome> {
    let plan = run_plan(&args.run)?;
    if plan.outputs.html.is_some() {
        bail!(
            "--html is not written by herd cluster run yet; write --json and make the page with \
             `herd run`'s single-machine runs or `herd report`"
        );
    }
    let count = u32::try_from(args.ssh.len()).ok().and_then(NonZeroU32::new);
    let n = count.context("--ssh: give at least one host (at most 2^32 - 1)")?;
    // The opt-in is checked here for its form; each agent checks it against the URL, and
    // resolves the target on its own host's network, under the safety rule otherwise.
    if let Some(host) = &args.kube.allow_target {
        herd_engine::OptIn::new(host)?;
    }
    if let Some(socket) = &plan.unix_socket {
        bail!(
            "--unix-socket {}: a Unix socket is this machine's, and the agents of --ssh run on \
             other machines; give the server's URL (its address as the hosts reach it) instead",
            socket.display()
        );
    }
    // Read before any host is reached: a file missing here fails the run at once.
    let files = RunFiles::read(&plan)?;
    let run = run_args(&args.run)?;
    let outputs = RunOutputs::open(
        &plan,
        RunMetrics::start(&run, "herd cluster run")?,
        Tui::for_run(run.tui, "herd cluster run", &plan)?,
    )?;
    let dir = RunDir::create()?;
    let local = dir.0.join(SOCKET);
    let mut coordinator = Coordinator::bind(&Address::Unix(local.clone()), n)?;
    if let Some(t) = args.arm_timeout {
        coordinator = coordinator.arm_timeout(t.get());
    }
    let ssh = Ssh::new(args.ssh_config.as_deref(), CONNECT_TIMEOUT, &std::env::temp_dir())
        .context("cannot make a private directory for ssh's control sockets")?;
    let control = stop_on_ctrl_c();
    let live = match args.idle_timeout {
        Some(idle) => Liveness::for_idle(idle).map_err(|why| anyhow!("--idle-timeout: {why}"))?,
        None => Liveness::LAB,
    };
    let cpus = args.agent_cpus.clone().unwrap_or(CpuSet::All);
    let mut agents = SshAgents::open(&ssh, &args.ssh, &local, live, &cpus)?;
    let agent_args = agents.place(&files, &plan.for_agents())?;
    agents.start(&agent_args, n, args.kube.allow_target.as_deref(), &cpus)?;
    coordinate(&plan, coordinator, outputs, &control, &mut agents)
}

/// One host's helper, the forward to the coordinator made through its connection, and
/// whether its agent was started.
struct Remote {
    /// None once said bye to.
    session: Option<HostSession>,
    /// The socket on the host forwarded to the coordinator's, once it is.
    forwarded: Option<PathBuf>,
    started: bool,
}

/// The agents on SSH hosts, agent i on the i-th host named; cleaned up on drop.
struct SshAgents<'a> {
    ssh: &'a Ssh,
    /// The coordinator's socket here.
    local: PathBuf,
    remotes: Vec<Remote>,
}

impl<'a> SshAgents<'a> {
    /// Opens every host's helper (kept alive by `live`: it stops its agent once silent for
    /// `live.idle`), checks `cpus` against each host's online CPUs, then forwards a socket
    /// in each helper's run directory to `local`: everything that can fail for a host fails
    /// here, before any agent starts.
    fn open(
        ssh: &'a Ssh,
        hosts: &[HostUrl],
        local: &Path,
        live: Liveness,
        cpus: &CpuSet,
    ) -> anyhow::Result<SshAgents<'a>> {
        let mut agents = SshAgents { ssh, local: local.to_owned(), remotes: Vec::new() };
        for url in hosts {
            let session = HostSession::open_with(ssh, url, VERSION, live)?;
            agents.remotes.push(Remote { session: Some(session), forwarded: None, started: false });
        }
        for session in agents.remotes.iter().filter_map(|r| r.session.as_ref()) {
            session.check_cpus(cpus).map_err(|why| anyhow!("--agent-cpus {cpus}: {why}"))?;
        }
        for r in &mut agents.remotes {
            let Some(session) = &r.session else { continue };
            let remote = Path::new(&session.hello.run_dir).join(SOCKET);
            ssh.forward_unix(&session.url, &remote, local)?;
            r.forwarded = Some(remote);
        }
        Ok(agents)
    }

    /// Copies the files the run reads into every helper's run directory, before any agent
    /// starts; each host's agent's `herd run` arguments, `plan` with the copies' paths there.
    fn place(&self, files: &RunFiles, plan: &RunPlan) -> anyhow::Result<Vec<Vec<String>>> {
        let mut args = Vec::new();
        for r in &self.remotes {
            let Some(session) = &r.session else {
                args.push(Vec::new());
                continue;
            };
            let write = |name: &str, bytes: &[u8], mode: u32| {
                session.with(|l| l.write_file(name, bytes, mode)).map(|_| ()).map_err(Into::into)
            };
            let there = files.place(plan, &session.hello.run_dir, write)?;
            let words = there
                .to_args()
                .into_iter()
                .map(OsString::into_string)
                .collect::<Result<Vec<String>, _>>()
                .map_err(|a| {
                    anyhow!("{}: a remote command line is text (UTF-8)", a.to_string_lossy())
                })?;
            args.push(words);
        }
        Ok(args)
    }

    /// Starts `herd agent ARGS` on every host, `ARGS` the host's own from `run_args`: agent i
    /// of n, its coordinator the forwarded socket there, on `cpus` of that host.
    fn start(
        &mut self,
        run_args: &[Vec<String>],
        n: NonZeroU32,
        allow_target: Option<&str>,
        cpus: &CpuSet,
    ) -> anyhow::Result<()> {
        for (i, (r, args)) in self.remotes.iter_mut().zip(run_args).enumerate() {
            let (Some(session), Some(socket)) = (&r.session, &r.forwarded) else { continue };
            let mut words: Vec<&str> = vec!["agent"];
            words.extend(args.iter().map(String::as_str));
            // `sh -c 'exec "$HOME/.cache/herd/herd-<build>" agent …'`: the host's copy of
            // this build, wherever its user's home is.
            let argv = remote_herd(VERSION, &words);
            let mut env = vec![
                (INDEX_VAR.to_owned(), i.to_string()),
                (COUNT_VAR.to_owned(), n.to_string()),
                (COORDINATOR_VAR.to_owned(), Address::Unix(socket.clone()).to_string()),
            ];
            if let Some(host) = allow_target {
                env.push((ALLOW_TARGET_VAR.to_owned(), host.to_owned()));
            }
            let spec = StartSpec {
                id: AGENT_ID.to_owned(),
                argv,
                env,
                cwd: None,
                cpus: cpus.cpus().map(|_| cpus.to_string()),
                log: AGENT_LOG.to_owned(),
            };
            session.with(|l| l.start(spec)).map_err(|e| anyhow!("starting agent {i}: {e}"))?;
            r.started = true;
        }
        Ok(())
    }

    fn session(&self, i: u32) -> Option<&HostSession> {
        self.remotes.get(i as usize).and_then(|r| r.session.as_ref())
    }

    /// Waits for agent `i` to end, at most until `deadline`: None when it exited 0, else
    /// why not.
    fn wait_one(&self, i: u32, deadline: Instant) -> Option<String> {
        let session = self.session(i)?;
        // `ready` on a socket nobody makes answers when the program ends (or at the limit).
        let never = Path::new(&session.hello.run_dir).join("exit.never");
        let probe = Probe::UnixSocket(never.display().to_string());
        let left = deadline.saturating_duration_since(Instant::now());
        let waited = session.with(|l| l.ready(AGENT_ID, probe, left));
        let stopped = session.with(|l| l.stop(AGENT_ID, Some(Duration::from_secs(2))));
        match (waited, stopped) {
            (Err(e), _) | (_, Err(e)) => Some(e.to_string()),
            (Ok(Readiness::Exited { .. }), Ok(s)) if s.code == Some(0) => None,
            (Ok(Readiness::Exited { how, .. }), Ok(_)) => {
                Some(self.words(i).unwrap_or_else(|| format!("{how}; it printed nothing")))
            }
            (Ok(_), Ok(_)) => Some("it did not exit in time, and was stopped".to_owned()),
        }
    }

    fn words(&self, i: u32) -> Option<String> {
        let part = self.session(i)?.with(|l| l.read_file(AGENT_LOG, LOG_READ)).ok()?;
        last_line(&part.text)
    }
}

impl Agents for SshAgents<'_> {
    fn who(&self, i: u32) -> String {
        match self.session(i) {
            Some(s) => format!("agent {i} on {}", s.url),
            None => format!("agent {i}"),
        }
    }

    fn last_words(&mut self, i: u32) -> Option<String> {
        self.words(i)
    }

    fn stop_all(&mut self) {
        for r in self.remotes.iter().filter(|r| r.started) {
            if let Some(s) = &r.session {
                let _ = s.with(|l| l.stop(AGENT_ID, Some(Duration::from_secs(2))));
            }
        }
    }

    fn wait(&mut self) -> Vec<(u32, String)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut failed = Vec::new();
        for i in 0..self.remotes.len() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            if !self.remotes.get(i as usize).is_some_and(|r| r.started) {
                continue;
            }
            if let Some(why) = self.wait_one(i, deadline) {
                failed.push((i, why));
            }
        }
        failed
    }
}

impl Drop for SshAgents<'_> {
    /// Each forward cancelled, then each helper told bye: it stops its agent and removes its
    /// run directory. Failures are not worth more than the run's own outcome: a helper whose
    /// link is gone has stopped everything already.
    fn drop(&mut self) {
        for r in &mut self.remotes {
            if let (Some(session), Some(remote)) = (&r.session, &r.forwarded) {
                let _ = self.ssh.cancel_forward(&session.url, remote, &self.local);
            }
            if let Some(session) = r.session.take() {
                let _ = session.bye();
            }
        }
    }
}
