//! `herd cluster run` and `herd agent`: one `herd run` spread over several agents, merged
//! exactly (docs/cluster.md). `herd agent` is what each agent runs, configured from its
//! environment as a Kubernetes Indexed Job's pod is; `herd cluster run --local N` runs the
//! coordinator here and N agents as processes of this machine, and prints, judges and writes
//! the merged result as `herd run` does a single one (`--json` with each agent's figures
//! beside it, `--hlog` merged and one per agent). The local agents are started through
//! herd-topo's `Supervisor` (each in its own process group, its log kept in the run's
//! directory); the target is checked once, here, before any agent starts. With `--netns` each
//! agent runs in one of herd's own network namespaces and reaches the coordinator through a
//! Unix socket in the run's directory instead of 127.0.0.1. `herd cluster manifest` and
//! `herd cluster run --agents N` are cluster_k8s.rs's, `--ssh HOSTS` cluster_ssh.rs's (which
//! coordinates through [`coordinate`] as the local run does); the flags are cluster_args.rs's,
//! and the merged result is said by cluster_report.rs for every way of running.
//!
//! Exit codes as `herd run`'s; an agent that fails, goes away or never arms fails the run
//! (1), and the message says which.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use herd_run::spread::agent::{COORDINATOR_VAR, COUNT_VAR, INDEX_VAR, RUN_NAME_VAR};
use herd_run::spread::{self, Address, AgentEnv, Coordinator};
use herd_topo::{CpuSet, Spawn, Supervisor};

use crate::cluster_args::{run_args, run_plan, AgentArgs, ClusterCommand, ClusterRunArgs};
use crate::cluster_report::report;
use crate::run_cmd::{stop_on_ctrl_c, Outcome};
use crate::run_metrics::RunMetrics;
use crate::run_outputs::{RunOutputs, StepLines};
use crate::tui::Tui;

/// `herd cluster …`.
pub(crate) fn main(command: ClusterCommand) -> anyhow::Result<Outcome> {
    match command {
        ClusterCommand::Run(args) if args.ssh.is_empty() && args.ssh_config.is_some() => {
            bail!("--ssh-config is for the ssh of --ssh HOST,…: give the hosts, or leave it out")
        }
        ClusterCommand::Run(args) if args.ssh.is_empty() && args.idle_timeout.is_some() => {
            bail!(
                "--idle-timeout is for the helpers of --ssh HOST,…: give the hosts, or leave it \
                 out"
            )
        }
        ClusterCommand::Run(args) if args.ssh.is_empty() && args.agent_cpus.is_some() => {
            bail!(
                "--agent-cpus places the agents of --ssh HOST,… on their hosts' CPUs: give the \
                 hosts, or leave it out (here, run herd itself under taskset)"
            )
        }
        ClusterCommand::Run(args)
            if args.local.is_none()
                && args.ssh.is_empty()
                && run_args(&args.run).is_ok_and(|r| r.tui) =>
        {
            bail!(
                "--tui shows the merged figures where herd cluster run coordinates (--local, \
                 --ssh); on Kubernetes agent 0 coordinates in its pod: not yet"
            )
        }
        ClusterCommand::Run(args) => match (args.local, args.kube.agents) {
            (Some(_), _) => run_local(&args),
            (None, Some(_)) => crate::cluster_k8s::run(&args),
            (None, None) if !args.ssh.is_empty() => crate::cluster_ssh::run(&args),
            (None, None) => bail!(
                "say where the agents run: --local N (processes here), --ssh HOST,… (one on \
                 each of your machines) or --agents N --image IMAGE (pods on the Kubernetes \
                 cluster kubectl reaches)"
            ),
        },
        ClusterCommand::Manifest(args) => {
            let yaml = crate::cluster_k8s::manifest(&args)?;
            let mut out = io::stdout().lock();
            out.write_all(yaml.as_bytes()).and_then(|()| out.flush()).context("cannot write")?;
            Ok(Outcome::Done)
        }
    }
}

/// `herd agent`: this process is one agent; who it is comes from its environment. Agent 0
/// with `--coordinate` also coordinates, and prints the merged result.
pub(crate) fn agent(args: AgentArgs) -> anyhow::Result<()> {
    if args.run.tui {
        bail!("--tui is herd run's (one machine) for now; an agent has no terminal of its own");
    }
    let env = AgentEnv::from_env()?;
    // In a pod (herd cluster run --agents N --metrics-listen), each agent serves its own
    // part of the run, labelled with its index and the Job's name: Prometheus scrapes every
    // pod and sums them.
    let run = std::env::var(RUN_NAME_VAR).ok().filter(|r| !r.is_empty());
    let metrics = RunMetrics::start_as(
        &args.run,
        "herd agent",
        run.unwrap_or_else(crate::run_metrics::run_id),
        Some(env.slice.index().to_string()),
    )?;
    let mut plan = crate::run_args::plan(&args.run)?;
    // The user's opt-in for a target outside the safe ranges (agents on a real cluster):
    // checked against the URL now, before the coordinator is even looked for.
    crate::run_args::opt_in_from_env(&mut plan)?;
    let _ = herd_engine::raise_nofile_limit();
    let control = stop_on_ctrl_c();
    let coordinator = match &args.coordinate {
        Some(addr) if env.slice.index() == 0 => {
            let count = NonZeroU32::new(env.slice.count()).unwrap_or(NonZeroU32::MIN);
            let mut c = Coordinator::bind(&Address::Tcp(addr.clone()), count)?;
            if let Some(t) = args.arm_timeout {
                c = c.arm_timeout(t.get());
            }
            let (plan, control) = (plan.clone(), control.clone());
            Some(std::thread::spawn(move || c.run(&plan, None, &control, |_, _, _| {})))
        }
        _ => None,
    };
    let figures = metrics.as_ref().map(|m| m.figures.clone());
    let mine = spread::run_agent(&plan, &env, &control, figures);
    if let Some(m) = metrics {
        m.finish(control.is_stopped());
    }
    if let Some(handle) = coordinator {
        // The coordinator's verdict first: when it failed, this agent's own error is only
        // its echo (told to stop), not worth saying twice.
        let result = handle.join().map_err(|_| anyhow::anyhow!("the coordinator panicked"))?;
        let report = result.context("coordinating")?;
        let mut out = io::stdout().lock();
        out.write_all(report.to_json_pretty().as_bytes())
            .and_then(|()| out.flush())
            .context("cannot print the result")?;
    }
    mine.with_context(|| format!("agent {} of {}", env.slice.index(), env.slice.count()))
}

/// `herd cluster run --local N -- <run args>`.
fn run_local(args: &ClusterRunArgs) -> anyhow::Result<Outcome> {
    let plan = run_plan(&args.run)?;
    if args.kube.allow_target.is_some() {
        bail!(
            "--allow-target is for agents on other machines (--ssh, --agents); on this machine \
             herd loads only 127.0.0.0/8, ::1 and its own namespaces' 198.18.0.0/15"
        );
    }
    if plan.outputs.html.is_some() {
        bail!(
            "--html is not written by herd cluster run yet; write --json and make the page with \
             `herd run`'s single-machine runs or `herd report`"
        );
    }
    let n =
        NonZeroU32::new(args.local.unwrap_or(0)).context("--local 0: give at least one agent")?;
    check_netns(&args.netns, n)?;
    if args.netns.is_empty() {
        // Everything an agent would refuse (an address outside the safety rule, a body file
        // that cannot be read, a server that will not speak the protocol asked), refused
        // once here, before any agent starts. In namespaces of their own the agents see a
        // network this process does not: each checks for itself, and the first refusal
        // fails the run with its reason.
        herd_run::prepare(&plan)?;
    }
    // Opened before any agent starts: a path that cannot be written costs nothing.
    let run = run_args(&args.run)?;
    let metrics = RunMetrics::start(&run, "herd cluster run")?;
    let tui = Tui::for_run(run.tui, "herd cluster run", &plan)?;
    let outputs = RunOutputs::open(&plan, metrics, tui)?;
    let dir = RunDir::create()?;
    let listen = if args.netns.is_empty() {
        Address::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).to_string())
    } else {
        Address::Unix(dir.0.join("coordinator.sock"))
    };
    let mut coordinator = Coordinator::bind(&listen, n)?;
    if let Some(t) = args.arm_timeout {
        coordinator = coordinator.arm_timeout(t.get());
    }
    let address = coordinator.address().context("the coordinator has no address")?;
    let control = stop_on_ctrl_c();
    let agent_args = plan.for_agents().to_args();
    let mut agents = LocalAgents::start(n, &address, &args.netns, &dir.0, &agent_args)?;
    coordinate(&plan, coordinator, outputs, &control, &mut agents)
}

/// Agents started somewhere, as the coordinator's run needs them: stopped when it fails,
/// their last words when one went silent, and their exits waited for after the result.
pub(crate) trait Agents {
    /// How messages name agent `i` (`agent 1`, `agent 1 on ssh://bench-2`).
    fn who(&self, i: u32) -> String {
        format!("agent {i}")
    }
    /// Agent `i`'s last line of output, when it printed one.
    fn last_words(&mut self, i: u32) -> Option<String>;
    /// Stops every agent that still runs.
    fn stop_all(&mut self);
    /// Waits (bounded: they have sent their results) for every agent to exit; returns those
    /// that exited badly, with their last words. Any still running after that is stopped.
    fn wait(&mut self) -> Vec<(u32, String)>;
}

/// The coordinator's run with its agents started: the steps printed as they end, the merged
/// result said, judged and written as `herd run` does one machine's.
pub(crate) fn coordinate(
    plan: &herd_run::RunPlan,
    coordinator: Coordinator,
    outputs: RunOutputs,
    control: &Arc<herd_engine::Control>,
    agents: &mut dyn Agents,
) -> anyhow::Result<Outcome> {
    let RunOutputs { writer, json, metrics, mut tui } = outputs;
    // The agents are up: the view may take the terminal now.
    if let Some(t) = &mut tui {
        t.show(control.clone())?;
    }
    let mut out = io::stdout().lock();
    let mut lines = StepLines::new(plan);
    // While the view has the terminal, the step lines wait for it to close.
    let mut held = Vec::new();
    let viewed = tui.is_some();
    let result = coordinator.run(plan, writer.as_ref(), control, |k, setup, step| match viewed {
        true => lines.print(&mut held, k, setup, step),
        false => lines.print(&mut out, k, setup, step),
    });
    if let Some(t) = tui {
        t.finish();
    }
    out.write_all(&held).context("cannot write the summary")?;
    if let Some(o) = writer {
        o.finish()?;
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            agents.stop_all();
            // What the coordinator could not know (an agent that died before it spoke) is
            // in that agent's own words; what an agent told the coordinator is said once.
            let mut message = e.to_string();
            for i in e.unheard_agents() {
                if let Some(words) = agents.last_words(i) {
                    message.push_str(&format!("\n  {} said: {words}", agents.who(i)));
                }
            }
            bail!(message);
        }
    };
    let failed_agents = agents.wait();
    lines.finish()?;
    let outcome = report(&mut out, plan, &result, json)?;
    if let Some(m) = metrics {
        m.finish(control.is_stopped());
    }
    // As herd run does a full disk: the result is out, then the output that failed is said.
    if let Some(e) = result.hlog_error {
        return Err(e.into());
    }
    // Every agent's part is in the result; one that then exited badly is worth a word
    // (after a Ctrl-C each was stopped, as the summary says).
    let told_to_stop = control.is_stopped();
    for (index, words) in failed_agents.into_iter().filter(|_| !told_to_stop) {
        eprintln!(
            "herd cluster run: {} exited with an error after its result: {words}",
            agents.who(index)
        );
    }
    Ok(outcome)
}

/// The agents as processes of this machine, started and stopped (by PID) through the one
/// supervisor of programs herd starts; each in its own process group, so a Ctrl-C at the
/// terminal reaches the coordinator alone, which stops them in order.
struct LocalAgents {
    supervisor: Supervisor,
    /// Agent index and PID, in index order.
    pids: Vec<(u32, u32)>,
    /// Where each agent's output goes, for its last words.
    dir: PathBuf,
}

/// This run's directory (the agents' logs, the coordinator's socket), removed at the end.
pub(crate) struct RunDir(pub(crate) PathBuf);

impl RunDir {
    pub(crate) fn create() -> anyhow::Result<RunDir> {
        let dir = std::env::temp_dir().join(format!("herd-cluster-{}", std::process::id()));
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(RunDir(dir))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `--netns`: one of herd's namespaces per agent, and root to enter them.
fn check_netns(names: &[String], n: NonZeroU32) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    if names.len() != n.get() as usize {
        bail!("--netns names {} namespaces for {n} agents: give one per agent", names.len());
    }
    let ours =
        |name: &&String| name.starts_with(herd_topo::net::netns::PREFIX) && !name.contains('/');
    if let Some(other) = names.iter().find(|name| !ours(name)) {
        bail!("--netns {other}: agents run only in herd's own namespaces (named herd-…, made by herd lab)");
    }
    // SAFETY: geteuid has no failure mode and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        bail!("--netns needs root (entering a network namespace); run as root, or leave it out");
    }
    Ok(())
}

impl LocalAgents {
    /// Starts agents 0 to n − 1: this binary's `herd agent`, told who it is as a pod is.
    fn start(
        n: NonZeroU32,
        coordinator: &Address,
        netns: &[String],
        dir: &std::path::Path,
        run_args: &[OsString],
    ) -> anyhow::Result<LocalAgents> {
        let exe = std::env::current_exe().context("cannot find the herd binary to start agents")?;
        let mut agents = LocalAgents {
            supervisor: Supervisor::new(None),
            pids: Vec::new(),
            dir: dir.to_owned(),
        };
        let mut argv = vec![exe.into_os_string(), OsString::from("agent")];
        argv.extend(run_args.iter().cloned());
        for i in 0..n.get() {
            let env = [
                (OsString::from(INDEX_VAR), OsString::from(i.to_string())),
                (OsString::from(COUNT_VAR), OsString::from(n.to_string())),
                (OsString::from(COORDINATOR_VAR), OsString::from(coordinator.to_string())),
            ];
            let log = agents.log(i);
            let pid = agents.supervisor.start(&Spawn {
                name: &format!("agent {i}"),
                argv: &argv,
                env: &env,
                stdout: &log,
                stderr: &log,
                cpus: &CpuSet::All,
                netns: netns.get(i as usize).map(String::as_str),
            })?;
            agents.pids.push((i, pid));
        }
        Ok(agents)
    }

    fn log(&self, i: u32) -> PathBuf {
        self.dir.join(format!("agent-{i}.log"))
    }
}

impl Agents for LocalAgents {
    fn last_words(&mut self, i: u32) -> Option<String> {
        let text = fs::read_to_string(self.log(i)).ok()?;
        last_line(&text)
    }

    fn stop_all(&mut self) {
        self.supervisor.stop_all(Duration::from_secs(2));
    }

    fn wait(&mut self) -> Vec<(u32, String)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut failed = Vec::new();
        for (i, pid) in self.pids.clone() {
            let status = loop {
                match self.supervisor.exit_status(pid) {
                    Some(s) => break Some(s),
                    None if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20))
                    }
                    None => break None,
                }
            };
            if !status.is_some_and(|s| s.success()) {
                failed
                    .push((i, self.last_words(i).unwrap_or_else(|| "(it printed nothing)".into())));
            }
        }
        self.supervisor.stop_all(Duration::from_secs(2));
        failed
    }
}

/// The last non-empty line of an agent's output, trimmed.
pub(crate) fn last_line(text: &str) -> Option<String> {
    text.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_owned())
}

impl Drop for LocalAgents {
    /// Whatever still runs is stopped (the run directory goes after, with its `RunDir`).
    fn drop(&mut self) {
        self.supervisor.stop_all(Duration::from_secs(2));
    }
}
