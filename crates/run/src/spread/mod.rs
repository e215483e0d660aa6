//! One run spread over several agents, merged exactly (docs/cluster.md): agent *i* of *N*
//! sends its stripe of the one run (the engine's `Slice`), all agents start at one instant,
//! and the coordinator adds their per-second histograms by interval index and their whole
//! recorders per step, so the result is the one a single machine would have measured.
//!
//! - [`agent`]: `herd agent`, configured from its environment (a Kubernetes Indexed Job's);
//! - [`coordinator`]: the barrier, the start instant, the merge, the per-agent figures;
//! - `wire`: the frames between them; `clock`: the offset between their clocks;
//! - `combine`: the agents' parts of a step as one report.
//!
//! Placement is not here: `herd cluster` starts the agents (processes on this machine, or a
//! Kubernetes Job).

pub mod agent;
mod clock;
mod combine;
pub mod coordinator;
mod stream;
mod wire;

use std::io;
use std::time::Duration;

use crate::error::RunError;
use crate::execute::RunSetup;
use crate::plan::RunPlan;

pub use agent::{run_agent, AgentEnv};
pub use coordinator::{AgentFigures, Coordinator, SpreadReport};
pub use stream::Address;

/// Why a spread run, or one agent's part of it, could not be carried out. Each message names
/// the agent and says what to do where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum SpreadError {
    /// The agent's environment does not say who it is.
    #[error("{name} {problem}")]
    Env { name: &'static str, problem: String },
    #[error(
        "cannot reach the coordinator at {address} (tried for {} s; last: {last}); check \
         HERD_COORDINATOR and that `herd cluster` is running",
        waited.as_secs()
    )]
    Unreachable { address: String, last: String, waited: Duration },
    #[error("the coordinator refused this agent: {0}")]
    Refused(String),
    #[error("lost the coordinator: {0}")]
    Lost(String),
    #[error("the coordinator stopped the run: {0}")]
    Aborted(String),
    /// The agent's own run could not be prepared or carried out (the sentence says why).
    #[error("{0}")]
    Run(String),
    #[error(transparent)]
    Output(#[from] RunError),
    #[error("cannot listen for agents on {address}")]
    Listen {
        address: String,
        #[source]
        source: io::Error,
    },
    #[error("agent {index} failed: {error}")]
    AgentFailed { index: u32, error: String },
    #[error("agent {index} is gone mid-run ({why}): its share of the load is missing, so the run is void")]
    AgentLost { index: u32, why: String },
    #[error(
        "not every agent was armed within {} s: {missing}; raise --arm-timeout if they are slow \
         to start, or see why they did not come",
        within.as_secs()
    )]
    Barrier { within: Duration, missing: String, agents: Vec<u32> },
    #[error("an agent cannot join: {0}")]
    Mismatch(String),
    /// An agent or the link broke the conversation's order (a bug, or not herd on the
    /// other end): the sentence says what came when.
    #[error("the agents' coordination broke: {0}")]
    Broken(String),
    /// A result read back (agent 0's log on Kubernetes) that is not one.
    #[error("{0}")]
    Result(String),
}

impl SpreadError {
    /// The agents this error is about whose own words the coordinator never heard: one
    /// that went away, those that never armed.
    pub fn unheard_agents(&self) -> Vec<u32> {
        match self {
            SpreadError::AgentLost { index, .. } => vec![*index],
            SpreadError::Barrier { agents, .. } => agents.clone(),
            _ => Vec::new(),
        }
    }
}

impl RunPlan {
    /// What each agent of a spread run is given: this plan less what only the coordinator
    /// does, on the merged result (the files written, the thresholds judged). Every place that
    /// starts agents or checks that they agree derives it here, so that they cannot drift.
    pub fn for_agents(&self) -> RunPlan {
        let mut plan = self.clone();
        plan.outputs = Default::default();
        plan.fail_if.clear();
        plan
    }
}

/// The run's settings as every agent hashes them: `herd run`'s arguments of its plan for the
/// agents, each file it reads named by a digest of its bytes (`plan_files::content_key`). What
/// is compared is what the run is, not where its files are: an agent reading a copy on
/// another host (`herd cluster run --ssh`) hashes equal, one whose copy differs does not.
pub(crate) fn config_of(plan: &RunPlan) -> String {
    let plan = plan.for_agents().with_files(crate::plan_files::content_key);
    wire::config_hash(&plan.to_args())
}

/// What the summary says of `plan`'s run, without preparing it (no target resolved): for a
/// result read back from agent 0 of a run on Kubernetes.
pub fn setup_for(plan: &RunPlan) -> Result<RunSetup, RunError> {
    crate::execute::spread_setup(plan)
}
#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::path::PathBuf;

    use super::*;
    use crate::plan::{Load, Pace, Stop, DEFAULT_DURATION};

    fn plan() -> RunPlan {
        let url = "http://127.0.0.1:1/".parse().expect("a URL");
        let connections = NonZeroU32::new(8).expect("not zero");
        let stop = Stop::After(DEFAULT_DURATION);
        RunPlan::new(url, Load::Single { connections, stop, pace: Pace::Closed { think: None } })
    }

    #[test]
    fn agents_get_the_run_without_its_outputs_or_thresholds() {
        let mut whole = plan();
        whole.seed = 7;
        whole.fail_if.push("p99<5ms".parse().expect("a threshold"));
        whole.outputs.json = Some(PathBuf::from("/tmp/run.json"));
        whole.outputs.hlog = Some(PathBuf::from("/tmp/run.hlog"));
        let agents = whole.for_agents();
        assert!(agents.fail_if.is_empty());
        assert_eq!(agents.outputs, Default::default());
        // Everything else is the run's own.
        assert_eq!(
            RunPlan { fail_if: whole.fail_if.clone(), outputs: whole.outputs.clone(), ..agents },
            whole
        );
    }

    #[test]
    fn the_agents_hash_does_not_see_what_only_the_coordinator_does() {
        let mut whole = plan();
        whole.fail_if.push("p99<5ms".parse().expect("a threshold"));
        whole.outputs.series = Some(PathBuf::from("/tmp/run.csv"));
        assert_eq!(config_of(&whole), config_of(&plan()));
        whole.seed += 1;
        assert_ne!(config_of(&whole), config_of(&plan()));
    }

    #[test]
    fn the_agents_hash_sees_a_files_bytes_not_its_path() {
        let dir = std::env::temp_dir().join(format!("herd-config-of-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("copy")).expect("a directory");
        let [here, there, other] = ["ca.pem", "copy/ca.pem", "other.pem"].map(|n| dir.join(n));
        std::fs::write(&here, "-----BEGIN CERTIFICATE-----\nA\n").expect("written");
        std::fs::write(&there, "-----BEGIN CERTIFICATE-----\nA\n").expect("written");
        std::fs::write(&other, "-----BEGIN CERTIFICATE-----\nB\n").expect("written");
        let with = |ca: &std::path::Path, body: Option<&std::path::Path>| {
            let mut p = plan();
            p.tls.ca_file = Some(ca.to_owned());
            if let Some(b) = body {
                p.requests.method = "POST".to_owned();
                p.requests.body = crate::plan::Body::File(b.to_owned());
            }
            config_of(&p)
        };
        // The same bytes at two paths: one run.
        assert_eq!(with(&here, None), with(&there, None));
        assert_eq!(with(&here, Some(&there)), with(&there, Some(&here)));
        // Other bytes: another run, whichever file it is.
        assert_ne!(with(&here, None), with(&other, None));
        assert_ne!(with(&here, Some(&here)), with(&here, Some(&other)));
        // A copy gone stale: refused.
        let before = with(&there, None);
        std::fs::write(&there, "-----BEGIN CERTIFICATE-----\nC\n").expect("written");
        assert_ne!(with(&there, None), before);
        // A file that cannot be read is hashed by its path, as the run will fail on it:
        // two missing files at two paths differ, one missing file hashes as itself.
        let missing = dir.join("missing.pem");
        assert_eq!(with(&missing, None), with(&missing, None));
        assert_ne!(with(&missing, None), with(&dir.join("gone.pem"), None));
        assert_ne!(with(&missing, None), with(&here, None));
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
