//! `herd cluster run` and `herd agent`: one `herd run` spread over several agents, merged
//! exactly (docs/cluster.md). `herd agent` is what each agent runs, configured from its
//! environment as a Kubernetes Indexed Job's pod is; `herd cluster run --local N` runs the
//! coordinator here and N agents as processes of this machine, and prints, judges and writes
//! the merged result as `herd run` does a single one (`--json` with each agent's figures
//! beside it, `--hlog` merged and one per agent). The local agents are started through
//! herd-topo's `Supervisor` (each in its own process group, its log kept in the run's
//! directory); the target is checked once, here, before any agent starts. With `--netns` each
//! agent runs in one of herd's own network namespaces and reaches the coordinator through a
//! Unix socket in the run's directory instead of 127.0.0.1. `herd cluster manifest` prints
//! herd-cluster's objects for a run on Kubernetes (cluster_k8s.rs runs them).
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
use herd_run::spread::{self, Address, AgentEnv, Coordinator, SpreadReport};
use herd_run::{summary, Outputs, SecondObserver};
use herd_stats::units::TimeSpan;
use herd_topo::{CpuSet, Spawn, Supervisor};

use crate::live::Live;
use crate::run_cmd::{judge, no_response, Outcome, RunArgs};

/// `herd cluster` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum ClusterCommand {
    /// One herd run spread over N agents started together, merged exactly
    Run(ClusterRunArgs),
    /// Print the Kubernetes objects of a spread run (an Indexed Job and a headless Service),
    /// for `kubectl apply -f -` or a GitOps repository
    Manifest(ManifestArgs),
}

impl ClusterCommand {
    /// How its errors begin.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            ClusterCommand::Run(_) => "herd cluster run",
            ClusterCommand::Manifest(_) => "herd cluster manifest",
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct ManifestArgs {
    #[command(flatten)]
    pub(crate) kube: KubeArgs,

    /// Agent 0 fails the run when not every agent is armed this long after it starts
    /// [default: 120s]
    #[arg(long, value_name = "DURATION", value_parser = clap::value_parser!(TimeSpan))]
    pub(crate) arm_timeout: Option<TimeSpan>,

    /// herd run's arguments (after --): the URL and flags of the whole run
    #[arg(last = true, required = true, value_name = "RUN ARGS")]
    pub(crate) run: Vec<OsString>,
}

/// Where and how the agents run on Kubernetes (`herd cluster manifest`, and `herd cluster
/// run` without --local).
#[derive(Debug, clap::Args)]
pub(crate) struct KubeArgs {
    /// Agents on Kubernetes: the pods of an Indexed Job, one per node by default (1 to 1000)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) agents: Option<u32>,

    /// The agent image: herd's static binary at /herd (deploy/agent.Containerfile), best
    /// pinned by digest
    #[arg(long, value_name = "IMAGE")]
    pub(crate) image: Option<String>,

    /// The run's name: every object's [default: herd-<time>]
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,

    /// The namespace [default: kubectl's]
    #[arg(long, value_name = "NS")]
    pub(crate) namespace: Option<String>,

    /// Only on nodes with this label, KEY=VALUE (repeatable) [default: herd.dev/role=client]
    #[arg(long = "node-label", value_name = "KEY=VALUE")]
    pub(crate) node_labels: Vec<String>,

    /// Let several agents share a node (by default each has a node of its own)
    #[arg(long)]
    pub(crate) share_nodes: bool,

    /// The node's own network: no pod network between the agents and the server
    #[arg(long)]
    pub(crate) host_network: bool,

    /// Whole CPUs per agent, requests equal to limits (the Guaranteed class, pinned by the
    /// static CPU manager)
    #[arg(long, value_name = "N", requires = "memory")]
    pub(crate) cpus: Option<u32>,

    /// Memory per agent with --cpus (512Mi, 2Gi)
    #[arg(long, value_name = "QUANTITY", requires = "cpus")]
    pub(crate) memory: Option<String>,

    /// Let the agents load this one target although it is outside 127.0.0.0/8, ::1 and
    /// 198.18.0.0/15 (the server under test on your cluster): the URL's host, exactly. herd
    /// refuses such targets otherwise
    #[arg(long, value_name = "HOST")]
    pub(crate) allow_target: Option<String>,
}

/// `herd agent`'s flags: its own, then herd run's.
#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// When this is agent 0, also coordinate: listen on ADDR (HOST:PORT) for every agent and
    /// print the merged result (herd.run.v1 with each agent's figures) on stdout; other
    /// agents ignore it (what `herd cluster manifest` gives every pod)
    #[arg(long, value_name = "ADDR")]
    pub(crate) coordinate: Option<String>,

    /// With --coordinate: fail when not every agent is armed this long after agent 0
    /// starts [default: 120s]
    #[arg(long, value_name = "DURATION", value_parser = clap::value_parser!(TimeSpan))]
    pub(crate) arm_timeout: Option<TimeSpan>,

    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ClusterRunArgs {
    /// Run the N agents as processes of this machine (N from 1 to 64)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64),
          conflicts_with = "agents")]
    pub(crate) local: Option<u32>,

    /// Agent i runs in network namespace i of this list: herd's own (named herd-…, made by
    /// `herd lab`), one per agent; needs root. The agents then reach the coordinator through a
    /// Unix socket, whatever their network
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub(crate) netns: Vec<String>,

    /// Fail when not every agent is armed this long after the start [default: 120s]
    #[arg(long, value_name = "DURATION", value_parser = clap::value_parser!(TimeSpan))]
    pub(crate) arm_timeout: Option<TimeSpan>,

    #[command(flatten)]
    pub(crate) kube: KubeArgs,

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
        ClusterCommand::Run(args) => match (args.local, args.kube.agents) {
            (Some(_), _) => run_local(&args),
            (None, Some(_)) => crate::cluster_k8s::run(&args),
            (None, None) => bail!(
                "say where the agents run: --local N (processes here) or --agents N --image \
                 IMAGE (pods on the Kubernetes cluster kubectl reaches)"
            ),
        },
        ClusterCommand::Manifest(args) => {
            let yaml = manifest(&args)?;
            let mut out = io::stdout().lock();
            out.write_all(yaml.as_bytes()).and_then(|()| out.flush()).context("cannot write")?;
            Ok(Outcome::Done)
        }
    }
}

/// The run's herd run arguments (after `--`), parsed as `herd run` parses them.
pub(crate) fn run_plan(args: &[OsString]) -> anyhow::Result<herd_run::RunPlan> {
    let run_args = RunOnly::try_parse_from(args)
        .map_err(|e| {
            anyhow::anyhow!(
                "the herd run arguments after --: {}",
                e.render().to_string().trim_end()
            )
        })?
        .args;
    Ok(crate::run_args::plan(&run_args)?)
}

/// `herd cluster manifest`: the objects as YAML.
fn manifest(args: &ManifestArgs) -> anyhow::Result<String> {
    let plan = run_plan(&args.run)?;
    Ok(manifest_of(&args.kube, args.arm_timeout, &plan)?.to_yaml()?)
}

/// The objects of `plan` placed as `kube` says; refused where a pod cannot do what the plan
/// asks (write files here) or the safety rule refuses the target.
pub(crate) fn manifest_of(
    kube: &KubeArgs,
    arm_timeout: Option<TimeSpan>,
    plan: &herd_run::RunPlan,
) -> anyhow::Result<herd_cluster::RunManifest> {
    let agents = kube.agents.context("give --agents N: how many pods run the load")?;
    let image = kube
        .image
        .clone()
        .context("give --image IMAGE: the agent image (deploy/agent.Containerfile builds one)")?;
    let o = &plan.outputs;
    if o.json.is_some() || o.html.is_some() || o.series.is_some() || o.hlog.is_some() {
        bail!(
            "--json, --html, --series and --hlog would be written inside agent 0's pod: leave \
             them out; agent 0 prints the merged result (herd.run.v1) on its log"
        );
    }
    // The safety rule holds on a cluster too: the target must be one herd may load, or the
    // one the user named.
    let opt_in = kube.allow_target.as_deref().map(herd_engine::OptIn::new).transpose()?;
    herd_engine::Target::resolve_opted_in(&plan.url.host, plan.url.port, None, opt_in.as_ref())?;
    let mut placement = herd_cluster::Placement {
        one_per_node: !kube.share_nodes,
        host_network: kube.host_network,
        resources: kube.cpus.zip(kube.memory.clone()),
        ..herd_cluster::Placement::default()
    };
    if !kube.node_labels.is_empty() {
        placement.node_selector = kube
            .node_labels
            .iter()
            .map(|l| herd_cluster::manifest::node_label(l))
            .collect::<Result<_, _>>()?;
    }
    let name = kube.name.clone().unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("herd-{t:x}")
    });
    let mut agent_plan = plan.clone();
    agent_plan.fail_if.clear();
    Ok(herd_cluster::RunManifest {
        name,
        namespace: kube.namespace.clone(),
        agents: NonZeroU32::new(agents).context("--agents 0: give at least one")?,
        image,
        run_args: agent_plan.to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        placement,
        deadline_seconds: deadline_seconds(plan, arm_timeout),
        arm_timeout_seconds: arm_timeout
            .map(|t| u32::try_from(t.get().as_secs().max(1)).unwrap_or(u32::MAX)),
        allow_target: opt_in.map(|o| o.host().to_owned()),
    })
}

/// How long Kubernetes lets the Job run: the run's own length (warm-up and every step, or an
/// hour for a request count), plus the agents' barrier and a margin.
fn deadline_seconds(plan: &herd_run::RunPlan, arm_timeout: Option<TimeSpan>) -> u32 {
    use herd_run::plan::{Load, Stop};
    let warmup = plan.warmup.map_or(Duration::ZERO, |w| w.get());
    let length = match &plan.load {
        Load::Single { stop: Stop::After(d) | Stop::Either(d, _), .. } => d.get(),
        Load::Single { stop: Stop::Requests(_), .. } => Duration::from_secs(3600),
        Load::Steps { step, .. } | Load::RateSteps { step, .. } => {
            step.get().saturating_mul(u32::try_from(plan.steps().len()).unwrap_or(u32::MAX))
        }
    };
    let barrier = arm_timeout.map_or(spread::coordinator::DEFAULT_ARM_TIMEOUT, |t| t.get());
    let total = warmup + length + barrier + Duration::from_secs(60);
    u32::try_from(total.as_secs()).unwrap_or(u32::MAX)
}

/// `herd agent`: this process is one agent; who it is comes from its environment. Agent 0
/// with `--coordinate` also coordinates, and prints the merged result.
pub(crate) fn agent(args: AgentArgs) -> anyhow::Result<()> {
    let env = AgentEnv::from_env()?;
    let mut plan = crate::run_args::plan(&args.run)?;
    // The user's opt-in for a target outside the safe ranges (agents on a real cluster):
    // checked against the URL now, before the coordinator is even looked for.
    if let Some(host) =
        std::env::var(spread::agent::ALLOW_TARGET_VAR).ok().filter(|h| !h.is_empty())
    {
        let opt_in = herd_engine::OptIn::new(&host)?;
        herd_engine::Target::resolve_opted_in(&plan.url.host, plan.url.port, None, Some(&opt_in))?;
        plan.opt_in = Some(opt_in);
    }
    let _ = herd_engine::raise_nofile_limit();
    let control = Arc::new(Control::new());
    {
        let control = control.clone();
        let _ = ctrlc::set_handler(move || control.stop());
    }
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
    let mine = spread::run_agent(&plan, &env, &control);
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
            "--allow-target is for agents on a Kubernetes cluster (--agents); on this machine \
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
    let control = Arc::new(Control::new());
    {
        let control = control.clone();
        let _ = ctrlc::set_handler(move || control.stop());
    }
    // Every agent runs the same settings, less what only the coordinator does.
    let mut agent_plan = plan.clone();
    agent_plan.outputs = Default::default();
    agent_plan.fail_if.clear();
    let mut agents = LocalAgents::start(n, &address, &args.netns, &dir.0, &agent_plan.to_args())?;
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
    // As herd run does a full disk: the result is out, then the output that failed is said.
    if let Some(e) = result.hlog_error {
        return Err(e.into());
    }
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
    /// Where each agent's output goes, for its last words.
    dir: PathBuf,
}

/// This run's directory (the agents' logs, the coordinator's socket), removed at the end.
struct RunDir(PathBuf);

impl RunDir {
    fn create() -> anyhow::Result<RunDir> {
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
    /// Whatever still runs is stopped (the run directory goes after, with its `RunDir`).
    fn drop(&mut self) {
        self.supervisor.stop_all(Duration::from_secs(2));
    }
}

/// The merged result as herd run prints it, each agent's line after it, thresholds judged
/// on the merged result, `--json` written.
pub(crate) fn report(
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
        let not_opened = match a.not_opened_ahead {
            0 => String::new(),
            n => format!(", {n} not"),
        };
        writeln!(
            out,
            "  agent {:<5} {:>10.1} req/s  p99 {:>9.3} ms  opened {} ahead in {:.1} ms{}  \
             started {:.3} ms late  clock {:+.3} ms (rtt {:.3} ms)",
            a.index,
            own.requests.per_second,
            own.latency_us.total.quantile(0.99).unwrap_or(0) as f64 / 1e3,
            a.opened_ahead,
            a.opening_ms,
            not_opened,
            a.start_late_us / 1e3,
            a.clock_offset_us / 1e3,
            a.clock_rtt_us / 1e3,
        )?;
    }
    let mut outcome = judge(out, plan, last)?;
    if let (Some(path), Some(mut file)) = (&plan.outputs.json, json_file) {
        file.write_all(result.to_json_pretty().as_bytes())
            .with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    if outcome == Outcome::Done && report.steps().iter().any(|s| s.no_response()) {
        eprintln!("herd cluster run: {}", no_response(report));
        outcome = Outcome::NoResponse;
    }
    if outcome == Outcome::Interrupted {
        eprintln!("herd cluster run: {}", crate::run_cmd::interrupted(&plan.outputs));
    }
    Ok(outcome)
}
