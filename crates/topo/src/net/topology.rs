//! A [`Plan`] applied: its namespaces made and wired, held by a [`Topology`] that deletes them
//! again, last made first, when it is torn down or dropped (on success, on error, on a panic
//! that unwinds, after Ctrl-C). Every namespace is written to the run's registry before it is
//! made, so that after a kill -9 `herd lab clean` finds it.
//!
//! Deleting a namespace does not stop the processes in it (they keep it alive, with its links
//! and rules), so the teardown first kills, by PID, whatever still runs inside: the lab stops
//! its servers and proxies gracefully before that, and the sweep is the backstop for what they
//! left (a worker, an sslh child).

use std::ffi::OsString;
use std::io;
use std::path::{Path as FsPath, PathBuf};
use std::time::Duration;

use super::netns;
use super::plan::{Host, Plan};
use crate::proc::Supervisor;
use crate::registry::Registry;

/// How long one command of a plan may take (they take milliseconds).
const STEP_LIMIT: Duration = Duration::from_secs(10);

/// How long the processes left in a namespace get to die after SIGKILL.
const SWEEP_GRACE: Duration = Duration::from_secs(3);

/// A path that exists: its namespaces are deleted when this is torn down or dropped.
#[derive(Debug)]
pub struct Topology {
    plan: Plan,
    /// The namespaces made so far, in creation order.
    made: Vec<String>,
}

/// Why a path could not be built. Whatever was made before the failure is gone again.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("network namespace {netns} already exists (left by a crashed run?): run `herd lab clean`{cleanup}")]
    Exists { netns: String, cleanup: String },
    /// The OS error is the `source()`: printed as a chain, it follows the cleanup note.
    #[error("cannot record network namespace {netns} in the run's registry {dir}, so `herd lab clean` could not remove it after a crash{cleanup}")]
    Registry { netns: String, dir: PathBuf, source: io::Error, cleanup: String },
    #[error("building the {path} path failed at `{command}`: {how}{cleanup}")]
    Step { path: String, command: String, how: String, cleanup: String },
}

/// Makes the namespaces of `plan` and runs its commands, in order. `scratch` is a writable
/// directory for the commands' output (read back on failure). On any failure, what was made
/// is deleted before the error returns.
pub fn apply(
    plan: &Plan,
    registry: Option<&Registry>,
    scratch: &FsPath,
) -> Result<Topology, TopologyError> {
    let mut topo = Topology { plan: plan.clone(), made: Vec::new() };
    let mut sup = Supervisor::new(None);
    let log = scratch.join(format!("{}-step.log", plan.tag));
    let mut step = |topo: &mut Topology, argv: Vec<String>| -> Result<(), TopologyError> {
        let args = resolved(&argv);
        let captured = sup.capture("netconf", &args, &log, STEP_LIMIT);
        match captured.into_result() {
            Ok(_) => Ok(()),
            Err(how) => {
                let problems = topo.teardown();
                Err(TopologyError::Step {
                    path: topo.plan.path.to_string(),
                    command: argv
                        .iter()
                        .map(|a| super::shell_word(a))
                        .collect::<Vec<_>>()
                        .join(" "),
                    how: how.trim_end().to_string(),
                    cleanup: cleanup_note(&problems),
                })
            }
        }
    };
    for &h in &plan.hosts {
        let name = plan.netns(h);
        if netns::exists(&name) {
            let cleanup = cleanup_note(&topo.teardown());
            return Err(TopologyError::Exists { netns: name, cleanup });
        }
        if let Some(r) = registry {
            if let Err(source) = r.record_netns(&name) {
                let cleanup = cleanup_note(&topo.teardown());
                let dir = r.dir().to_path_buf();
                return Err(TopologyError::Registry { netns: name, dir, source, cleanup });
            }
        }
        // Counted as made before the command runs: a half-made namespace is deleted too.
        topo.made.push(name.clone());
        step(&mut topo, vec!["ip".into(), "netns".into(), "add".into(), name])?;
    }
    for argv in &plan.steps {
        step(&mut topo, argv.clone())?;
    }
    Ok(topo)
}

impl Topology {
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The namespace of `host`, for programs started there ([`Spawn::netns`]) and for
    /// [`netns::within`].
    ///
    /// [`Spawn::netns`]: crate::Spawn::netns
    pub fn netns(&self, host: Host) -> String {
        self.plan.netns(host)
    }

    /// Deletes every namespace, last made first, after killing what still runs in it.
    /// Returns what could not be removed (empty when all went).
    pub fn teardown(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        while let Some(name) = self.made.pop() {
            if let Err(e) = netns::remove(&name, SWEEP_GRACE) {
                problems.push(format!("{name}: {e}"));
            }
        }
        problems
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

/// `argv` with its program, and the program `ip netns exec NS` runs, found where preflight
/// found them (`machine::find_program`: PATH, then the system directories), so that a run
/// whose PATH lacks /usr/sbin (cron, some sudo setups) builds what preflight passed. The
/// printed plan keeps the bare names a person would type.
fn resolved(argv: &[String]) -> Vec<OsString> {
    let find = |name: &str| {
        super::machine::find_program(name).map_or_else(|| OsString::from(name), OsString::from)
    };
    let mut out: Vec<OsString> = argv.iter().map(OsString::from).collect();
    if let Some(first) = argv.first() {
        out[0] = find(first);
    }
    if argv.len() > 4 && argv[1] == "netns" && argv[2] == "exec" {
        out[4] = find(&argv[4]);
    }
    out
}

fn cleanup_note(problems: &[String]) -> String {
    if problems.is_empty() {
        String::new()
    } else {
        format!(
            " (and removing what was made failed: {}; run `herd lab clean`)",
            problems.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry's OS error is printed once (before: in the message and as the source).
    #[test]
    fn a_registry_failure_prints_its_cause_once() {
        let cause = io::Error::from_raw_os_error(libc::ENOSPC);
        let text = cause.to_string();
        let err = TopologyError::Registry {
            netns: "herd-1-0-server".into(),
            dir: "/run/herd/1".into(),
            source: cause,
            cleanup: cleanup_note(&["herd-1-0-client: busy".to_owned()]),
        };
        let printed = herd_testutil::causes::assert_cause_once(&err, &text);
        assert!(printed.ends_with(&format!("run `herd lab clean`): {text}")), "{printed}");
    }
}
