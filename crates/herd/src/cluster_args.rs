//! What `herd cluster` and `herd agent` are asked: their clap definitions, and the `herd run`
//! arguments after `--` parsed into the run's plan. Shared by the local run (cluster_cmd.rs),
//! the run on SSH hosts (cluster_ssh.rs) and the run on Kubernetes (cluster_k8s.rs), which
//! all read it and none owns it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser as _;
use herd_lab::hosts::session::Liveness;
use herd_lab::hosts::HostUrl;
use herd_stats::units::TimeSpan;
use herd_topo::CpuSet;

use crate::run_args::RunArgs;

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

    /// The agent image: herd at /herd (deploy/agent.Containerfile; scripts/build-images.sh), best
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
    /// 198.18.0.0/15 (the server under test on your cluster, or your network with --ssh): the
    /// URL's host, exactly. herd refuses such targets otherwise
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
          conflicts_with_all = ["agents", "ssh"])]
    pub(crate) local: Option<u32>,

    /// Run one agent on each of these machines, over SSH: ssh://[user@]host[:port] (ssh://
    /// may be left out), comma-separated; each must have this herd build (`herd lab hosts
    /// install`). The agents reach the coordinator here through the SSH connection
    #[arg(long, value_name = "HOSTS", value_delimiter = ',', value_parser = host_url,
          conflicts_with_all = ["agents", "netns"])]
    pub(crate) ssh: Vec<HostUrl>,

    /// With --ssh: the ssh_config file for every ssh (ssh -F) [default: ssh's own]
    #[arg(long, value_name = "FILE")]
    pub(crate) ssh_config: Option<PathBuf>,

    /// With --ssh: how long each host's helper waits with its ssh channel silent before it
    /// takes this herd for lost and stops the agent it started (2s to 1h; herd pings six
    /// times as often) [default: 30s, as the lab's [hosts] idle_timeout]
    #[arg(long, value_name = "DURATION", value_parser = idle_timeout)]
    pub(crate) idle_timeout: Option<Duration>,

    /// With --ssh: run each agent on these CPUs of its own host (0-3,6), checked against
    /// every host's online CPUs before any agent starts [default: all of its host's CPUs]
    #[arg(long, value_name = "CPUS", value_parser = cpu_list)]
    pub(crate) agent_cpus: Option<CpuSet>,

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

/// One `--ssh` host: `ssh://[user@]host[:port]`, or the same without `ssh://`.
fn host_url(text: &str) -> Result<HostUrl, String> {
    let url = if text.contains("://") { text.to_owned() } else { format!("ssh://{text}") };
    url.parse::<HostUrl>().map_err(|e| e.to_string())
}

/// `--idle-timeout`: a duration the helpers' liveness accepts.
fn idle_timeout(text: &str) -> Result<Duration, String> {
    // The units' own error quotes the text already.
    let d = herd_stats::units::parse_duration(text)?;
    Liveness::for_idle(d).map_err(|why| format!("`{text}`: {why}"))?;
    Ok(d)
}

/// `--agent-cpus`: CPU numbers (`all` is the default, said by leaving the flag out).
fn cpu_list(text: &str) -> Result<CpuSet, String> {
    match CpuSet::parse(text).map_err(|e| e.to_string())? {
        CpuSet::All => Err("`all` is the default: leave --agent-cpus out".to_owned()),
        only => Ok(only),
    }
}

/// `herd run`'s flags on their own, for the arguments after `--`.
#[derive(Debug, clap::Parser)]
#[command(name = "herd run", no_binary_name = true)]
struct RunOnly {
    #[command(flatten)]
    args: RunArgs,
}

/// The run's herd run arguments (after `--`), parsed as `herd run` parses them.
pub(crate) fn run_args(args: &[OsString]) -> anyhow::Result<RunArgs> {
    Ok(RunOnly::try_parse_from(args)
        .map_err(|e| {
            anyhow::anyhow!(
                "the herd run arguments after --: {}",
                e.render().to_string().trim_end()
            )
        })?
        .args)
}

/// The run's plan, from its herd run arguments (after `--`).
pub(crate) fn run_plan(args: &[OsString]) -> anyhow::Result<herd_run::RunPlan> {
    Ok(crate::run_args::plan(&run_args(args)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, clap::Parser)]
    #[command(name = "herd cluster")]
    struct Cli {
        #[command(subcommand)]
        command: ClusterCommand,
    }

    fn parse(args: &[&str]) -> Result<ClusterRunArgs, String> {
        let all = ["herd cluster", "run"].iter().chain(args).chain(&["--", "http://127.0.0.1/"]);
        match Cli::try_parse_from(all).map_err(|e| e.to_string())?.command {
            ClusterCommand::Run(a) => Ok(a),
            ClusterCommand::Manifest(_) => Err("manifest".into()),
        }
    }

    #[test]
    fn ssh_hosts_are_read_with_or_without_their_scheme() {
        let a = parse(&["--ssh", "ssh://bench@198.18.3.11:2222,198.18.3.12", "--ssh-config", "c"])
            .unwrap();
        let hosts: Vec<String> = a.ssh.iter().map(ToString::to_string).collect();
        assert_eq!(hosts, ["ssh://bench@198.18.3.11:2222", "ssh://198.18.3.12"]);
        assert_eq!(a.ssh_config, Some(PathBuf::from("c")));
        // A host listed twice is two agents there.
        assert_eq!(parse(&["--ssh", "h,h"]).unwrap().ssh.len(), 2);
        let e = parse(&["--ssh", "http://h"]).unwrap_err();
        assert!(e.contains("only ssh:// hosts are supported"), "{e}");
        let e = parse(&["--ssh=-oProxyCommand=x"]).unwrap_err();
        assert!(e.contains("-oProxyCommand=x"), "{e}");
    }

    #[test]
    fn ssh_excludes_the_other_ways_of_running_and_its_config_needs_it() {
        for other in [&["--local", "2"][..], &["--agents", "2"], &["--netns", "herd-a"]] {
            let mut args = vec!["--ssh", "h"];
            args.extend(other);
            let e = parse(&args).unwrap_err();
            assert!(e.contains("cannot be used with"), "{other:?}: {e}");
        }
        let a = parse(&["--ssh", "h", "--allow-target", "bench.example"]).unwrap();
        assert_eq!(a.kube.allow_target.as_deref(), Some("bench.example"));
    }

    #[test]
    fn the_idle_timeout_and_the_agents_cpus_are_read_and_bounded() {
        let a = parse(&["--ssh", "h"]).unwrap();
        assert_eq!((a.idle_timeout, a.agent_cpus), (None, None));
        let a = parse(&["--ssh", "h", "--idle-timeout", "5s", "--agent-cpus", "1,3-4"]).unwrap();
        assert_eq!(a.idle_timeout, Some(Duration::from_secs(5)));
        assert_eq!(a.agent_cpus, Some(CpuSet::Only(vec![1, 3, 4])));
        for bad in ["1s", "2h", "1999ms"] {
            let e = parse(&["--ssh", "h", "--idle-timeout", bad]).unwrap_err();
            assert!(e.contains(&format!("`{bad}`: give 2s to 1h")), "{bad}: {e}");
        }
        for bad in ["soon", "0s"] {
            let e = parse(&["--ssh", "h", "--idle-timeout", bad]).unwrap_err();
            assert_eq!(e.matches(&format!("`{bad}`")).count(), 1, "named once: {e}");
        }
        let e = parse(&["--ssh", "h", "--agent-cpus", "x"]).unwrap_err();
        assert!(e.contains("is not a CPU list"), "{e}");
        let e = parse(&["--ssh", "h", "--agent-cpus", "all"]).unwrap_err();
        assert!(e.contains("leave --agent-cpus out"), "{e}");
    }
}
