//! `herd cluster run` and `herd agent`: one `herd run` spread over several agents, merged
//! exactly (docs/cluster.md). `herd agent` is what each agent runs, configured from its
//! environment as a Kubernetes Indexed Job's pod is; `herd cluster run --local N` runs the
//! coordinator here and N agents as processes of this machine, and prints, judges and writes
//! the merged result as `herd run` does a single one (`--json` with each agent's figures
//! beside it, `--hlog` merged and one per agent).
//!
//! Exit codes as `herd run`'s; an agent that fails, goes away or never arms fails the run
//! (1), and the message says which.

use std::ffi::OsString;
use std::fs;
use std::io::{self, IsTerminal as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Parser as _;
use herd_engine::Control;
use herd_run::hlog::Hlog;
use herd_run::series::Series;
use herd_run::spread::agent::{COORDINATOR_VAR, COUNT_VAR, INDEX_VAR};
use herd_run::spread::{self, AgentEnv, Coordinator, SpreadReport};
use herd_run::{summary, Outputs, SecondObserver};
use herd_stats::units::TimeSpan;
use herd_topo::{CpuSet, Spawn, Supervisor};

use crate::live::Live;
use crate::run_cmd::{no_response, Outcome, RunArgs};

/// `herd cluster` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum ClusterCommand {
    /// One herd run spread over N agents started together, merged exactly
    Run(ClusterRunArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ClusterRunArgs {
    /// Run the N agents as processes of this machine (N from 1 to 64)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) local: u32,

    /// Fail when not every agent is armed this long after the start [default: 120s]
    #[arg(long, value_name = "DURATION", value_parser = clap::value_parser!(TimeSpan))]
    pub(crate) arm_timeout: Option<TimeSpan>,

    /// herd run's arguments (after --): the URL and flags of the whole run, as for one machine
    #[arg(last = true, required = true, value_name = "RUN ARGS")]
    pub(crate) run: Vec<OsString>,
}

/// `herd run`'s flags on their own, for the arguments after `--`.
#[derive(Debug, clap::Parser)]
#[command(name = "herd run", no_binary_name = true)]
struct RunOnly {
    #[command(flatten)]
    args: RunArgs,
}

/// `herd cluster …`.
pub(crate) fn main(command: ClusterCommand) -> anyhow::Result<Outcome> {
    match command {
        ClusterCommand::Run(args) => run_local(&args),
    }
}

/// `herd agent`: this process is one agent; who it is comes from its environment.
pub(crate) fn agent(args: RunArgs) -> anyhow::Result<()> {
    let env = AgentEnv::from_env()?;
    let plan = crate::run_args::plan(&args)?;
    let _ = herd_engine::raise_nofile_limit();
    let control = Arc::new(Control::new());
    {
        let control = control.clone();
        let _ = ctrlc::set_handler(move || control.stop());
    }
    spread::run_agent(&plan, &env, &control)
        .with_context(|| format!("agent {} of {}", env.slice.index(), env.slice.count()))
}

/// `herd cluster run --local N -- <run args>`.
fn run_local(args: &ClusterRunArgs) -> anyhow::Result<Outcome> {
    let run_args = RunOnly::try_parse_from(&args.run)
        .map_err(|e| {
            anyhow::anyhow!(
                "the herd run arguments after --: {}",
                e.render().to_string().trim_end()
            )
        })?
        .args;
    let plan = crate::run_args::plan(&run_args)?;
    if plan.outputs.html.is_some() {
        bail!(
            "--html is not written by herd cluster run yet; write --json and make the page with \
             `herd run`'s single-machine runs or `herd report`"
        );
    }
    let n = NonZeroU32::new(args.local).context("--local 0: give at least one agent")?;
    // Everything an agent would refuse (an address outside the safety rule, a body file
    // that cannot be read, a server that will not speak the protocol asked), refused once
    // here, before any agent starts.
    herd_run::prepare(&plan)?;
    let stepped = plan.is_stepped();
    // Opened before any agent starts: a path that cannot be written costs nothing.
    let series = plan.outputs.series.as_deref().map(|p| Series::create(p, stepped)).transpose()?;
    let hlog = plan.outputs.hlog.as_deref().map(|p| Hlog::create(p, &plan.url.text)).transpose()?;
    let live = io::stderr().is_terminal().then(|| {
        Box::new(Live::new(stepped.then(|| plan.steps().len()))) as Box<dyn SecondObserver>
    });
    let json_file = match &plan.outputs.json {
        Some(path) => Some(
            fs::File::create(path)
                .with_context(|| format!("cannot write --json {}", path.display()))?,
        ),
        None => None,
    };
    let mut coordinator = Coordinator::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), n)?;
    if let Some(t) = args.arm_timeout {
        coordinator = coordinator.arm_timeout(t.get());
    }
    let address = coordinator.local_addr().context("the coordinator has no address")?;
    let control = Arc::new(Control::new());
    {
        let control = control.clone();
        let _ = ctrlc::set_handler(move || control.stop());
    }
    // Every agent runs the same settings, less what only the coordinator does.
    let mut agent_plan = plan.clone();
    agent_plan.outputs = Default::default();
    agent_plan.fail_if.clear();
    let mut agents = LocalAgents::start(n, address, &agent_plan.to_args())?;
    let writer = Outputs::start(series, hlog, live)?;
    let mut out = io::stdout().lock();
    let mut printed = Ok(());
    let result = coordinator.run(&plan, writer.as_ref(), &control, |k, setup, step| {
        if stepped && printed.is_ok() {
            printed = summary::write_step(&mut out, k, setup, step).and_then(|()| out.flush());
        }
    });
    if let Some(o) = writer {
        o.finish()?;
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            agents.supervisor.stop_all(Duration::from_secs(2));
            // What the coordinator could not know (an agent that died before it spoke) is
            // in that agent's own words; what an agent told the coordinator is said once.
            let mut message = e.to_string();
            for i in e.unheard_agents() {
                if let Some(words) = agents.last_words(i) {
                    message.push_str(&format!("\n  agent {i} said: {words}"));
                }
            }
            bail!(message);
        }
    };
    let failed_agents = agents.wait();
    printed.context("cannot write the summary")?;
    let outcome = report(&mut out, &plan, &result, json_file)?;
    // Every agent's part is in the result; one that then exited badly is worth a word
    // (after a Ctrl-C each was stopped, as the summary says).
    let told_to_stop = control.is_stopped();
    for (index, words) in failed_agents.into_iter().filter(|_| !told_to_stop) {
        eprintln!("herd cluster run: agent {index} exited with an error after its result: {words}");
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
    /// Each agent's output, for its last words.
    dir: PathBuf,
}

impl LocalAgents {
    /// Starts agents 0 to n − 1: this binary's `herd agent`, told who it is as a pod is.
    fn start(
        n: NonZeroU32,
        coordinator: SocketAddr,
        run_args: &[OsString],
    ) -> anyhow::Result<LocalAgents> {
        let exe = std::env::current_exe().context("cannot find the herd binary to start agents")?;
        let dir = std::env::temp_dir().join(format!("herd-cluster-{}", std::process::id()));
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut agents = LocalAgents { supervisor: Supervisor::new(None), pids: Vec::new(), dir };
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
                netns: None,
            })?;
            agents.pids.push((i, pid));
        }
        Ok(agents)
    }

    fn log(&self, i: u32) -> PathBuf {
        self.dir.join(format!("agent-{i}.log"))
    }

    /// Agent `i`'s last line of output, when it printed one.
    fn last_words(&self, i: u32) -> Option<String> {
        let text = fs::read_to_string(self.log(i)).ok()?;
        text.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_owned())
    }

    /// Waits (bounded: they have sent their results) for every agent to exit; returns those
    /// that exited badly, with their last words. Any still running after that is stopped.
    fn wait(&mut self) -> Vec<(u32, String)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut failed = Vec::new();
        for &(i, pid) in &self.pids {
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

impl Drop for LocalAgents {
    /// Whatever still runs is stopped; the agents' logs go.
    fn drop(&mut self) {
        self.supervisor.stop_all(Duration::from_secs(2));
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The merged result as herd run prints it, each agent's line after it, thresholds judged
/// on the merged result, `--json` written.
fn report(
    out: &mut impl io::Write,
    plan: &herd_run::RunPlan,
    result: &SpreadReport,
    json_file: Option<fs::File>,
) -> anyhow::Result<Outcome> {
    let report = &result.report;
    let last = report.last().context("no step was run")?;
    if !report.is_stepped() {
        summary::write(out, &result.setup, last).context("cannot write the summary")?;
    }
    for a in &result.agents {
        let Some(own) = a.steps.last() else { continue };
        writeln!(
            out,
            "  agent {:<5} {:>10.1} req/s  p99 {:>9.3} ms  started {:.3} ms late  clock \
             {:+.3} ms (rtt {:.3} ms)",
            a.index,
            own.requests.per_second,
            own.latency_us.total.quantile(0.99).unwrap_or(0) as f64 / 1e3,
            a.start_late_us / 1e3,
            a.clock_offset_us / 1e3,
            a.clock_rtt_us / 1e3,
        )?;
    }
    let mut outcome = if last.interrupted { Outcome::Interrupted } else { Outcome::Done };
    for t in &plan.fail_if {
        let (measured, holds) = t.check(last);
        writeln!(out, "  fail-if     {t}: {measured} {}", if holds { "ok" } else { "FAILED" })?;
        if !holds && outcome == Outcome::Done {
            outcome = Outcome::ThresholdFailed;
        }
    }
    out.flush().context("cannot write the summary")?;
    if let (Some(path), Some(mut file)) = (&plan.outputs.json, json_file) {
        file.write_all(result.to_json_pretty().as_bytes())
            .with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    if outcome == Outcome::Done && report.steps().iter().any(|s| s.no_response()) {
        eprintln!("herd cluster run: {}", no_response(report));
        outcome = Outcome::NoResponse;
    }
    Ok(outcome)
}
