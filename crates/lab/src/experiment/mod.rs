//! Experiment files: a comparison written down as TOML (docs/experiment.md), checked whole
//! before anything runs. `parse` returns an [`Experiment`] whose every name resolves and whose
//! every value is in range, or one [`ExperimentError`] naming the line and the choices.

mod build;
mod control;
mod error;
mod hosts;
mod placement;
mod published;
mod raw;
mod report;
mod server;
mod server_count;
mod workload;

use std::collections::BTreeMap;
use std::time::Duration;

pub use herd_stats::repetitions::Bounds;
use herd_stats::Protocol;
use herd_topo::CpuSet;

use crate::client::Tool;
use crate::load::Load;

pub use error::ExperimentError;
pub use placement::{Placed, Placement};
pub use server::{builtin_servers, External, ServerDef};
pub use workload::{specweb_path, static_path, WorkloadDef, WorkloadKind};

/// A checked experiment: what to run, not yet how (see `matrix` and `plan`).
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    /// Key of the published figures it re-runs (`seed000` …), if any.
    pub reference: Option<String>,
    /// The figures that comparison published, checked against the matrix (`[published]`).
    pub published: Option<herd_store::Published>,
    /// How its tables are shown unless `herd report` is told otherwise (`[report]`).
    pub report: herd_store::ReportDefaults,
    /// Where it came from: a path as given, or `bundled:NAME`.
    pub source: String,
    /// The file's text, stored with every result.
    pub text: String,
    /// The matrix's axes in file order; each has at least one value.
    pub axes: Vec<Axis>,
    pub servers: BTreeMap<String, ServerDef>,
    pub workloads: BTreeMap<String, WorkloadDef>,
    pub loads: BTreeMap<String, Load>,
    pub client_cpus: CpuSet,
    /// Where servers run in cells without a `server_cpus` axis: unpinned, unless
    /// [`Experiment::place`] placed them.
    pub server_cpus: CpuSet,
    pub client_threads: Option<u32>,
    /// herd's client's event-loop backend (`[client] io`, herd run's `--io`); the other
    /// clients have their own loops and are not asked.
    pub client_io: herd_engine::IoChoice,
    /// herd's client sends a `traceparent` on every request (`[client] trace_context`), a
    /// new trace id each repetition, stored with it; the other clients send none.
    pub client_trace: bool,
    /// herd's client spread over this many agents (`herd cluster run`), each on a client
    /// host of its own on a network path; None: one process.
    pub client_agents: Option<u8>,
    /// Where a path's router program (HAProxy, nginx, sslh) runs; the kernel's forwarding
    /// and NAT run wherever the packets are sent from, as on any Linux router.
    pub router_cpus: CpuSet,
    pub repetitions: Repetitions,
    pub runner: RunnerSettings,
    /// Combinations left out of the matrix: each a list of (axis, value) that must all match.
    pub exclude: Vec<Vec<(AxisName, String)>>,
    /// `[hosts]`: the user's own machines for the roles; None: this machine alone.
    pub hosts: Option<crate::hosts::Hosts>,
}

/// One axis of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    pub name: AxisName,
    pub values: Vec<String>,
}

/// The axes an experiment may vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AxisName {
    Server,
    /// What the client and the server speak (`herd_stats::Protocol`); none: h1.
    Protocol,
    Workload,
    Load,
    Client,
    ServerCpus,
    /// The network path between client and server (herd_topo::net::Path); none: loopback.
    Path,
    /// The rate every link of the path is shaped to (`100mbit`), or `unshaped`.
    Link,
}

impl AxisName {
    pub const ALL: [AxisName; 8] = [
        AxisName::Server,
        AxisName::Protocol,
        AxisName::Workload,
        AxisName::Load,
        AxisName::Client,
        AxisName::ServerCpus,
        AxisName::Path,
        AxisName::Link,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AxisName::Server => "server",
            AxisName::Protocol => "protocol",
            AxisName::Workload => "workload",
            AxisName::Load => "load",
            AxisName::Client => "client",
            AxisName::ServerCpus => "server_cpus",
            AxisName::Path => "path",
            AxisName::Link => "link",
        }
    }
}

/// How many times each cell runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repetitions {
    /// Every cell runs at least this often: 3 or more for results; fewer give no spread to
    /// judge a figure by, which the lab says before it starts ([`Repetitions::smoke`]).
    pub min: u32,
    /// Cells whose figures exceed a bound get more repetitions, up to this many.
    pub max: u32,
    /// The bounds on the figure the tables show (`runner::cell::figure`: `[report] measure`
    /// where a run gives it, else req/s): its relative standard deviation across
    /// repetitions (`max_spread_percent`, 5 % where the file gives neither bound), the
    /// half-width of its 95 % interval (`max_interval_percent`), or both.
    pub bounds: Bounds,
    /// `time_budget`: repetitions past `min` only while a round of them would end within
    /// this much of the lab run's time (the runner's `budget.rs`); the first `min` rounds
    /// always run whole.
    pub time_budget: Option<Duration>,
}

/// What the lab says of an experiment run with fewer than three repetitions of each cell.
pub const SMOKE_RUN: &str = "fewer than 3 repetitions of each cell ([repetitions] min): no \
     spread and no interval to judge a figure by, a smoke run of the file rather than a \
     result; give min = 3 or more to measure";

impl Repetitions {
    /// The sentence to say before the run, when it is a smoke run.
    pub fn smoke(&self) -> Option<String> {
        (self.min < 3).then(|| SMOKE_RUN.to_owned())
    }
}

/// How the runner behaves between and around cells.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerSettings {
    /// Seeds the shuffled cell order; None: drawn at start and recorded.
    pub seed: Option<u64>,
    /// Before each run, wait until fewer sockets than this sit in TIME_WAIT (default: half
    /// of net.ipv4.tcp_max_tw_buckets; see `timewait`).
    pub time_wait_below: Option<u64>,
    /// ... but no longer than this (the wait and the count are recorded).
    pub drain_timeout: Duration,
    /// A server that does not answer within this after its start fails the cell.
    pub ready_timeout: Duration,
    /// `placement`: where servers and client run when the experiment names no CPUs.
    pub placement: Placement,
    /// `profile`: record the servers' stacks in one extra, profiled run of each cell.
    pub profile: Option<Profiler>,
    /// `controls`: one cell run again as its own A/A twin, for the noise floor.
    pub controls: Option<Controls>,
    /// `server_count`: every run's server writes its access log, read after it stopped, and
    /// the lines of the workload's request must be what the client counted (off: logging
    /// costs the server time, and the lab measures servers, not their logging).
    pub server_count: bool,
}

/// `[runner] controls = N` (and `control = {…}`): the A/A control of an experiment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controls {
    /// How often the twin runs: in rounds 0 to N − 1, beside the matrix's cells.
    pub runs: u32,
    /// The key of the cell it twins (`crate::matrix::Cell::key`), one that runs.
    pub of: String,
}

/// How a cell's servers are profiled (`[runner] profile`, `herd lab run --profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profiler {
    /// Debian's `perf record -g`, attached to the servers' processes by PID.
    Perf,
}

impl Experiment {
    /// `herd lab run --profile`: profile the servers as `[runner] profile` would, refused
    /// (as that is) for an experiment with a NetBench workload.
    pub fn profile_with(&mut self, p: Profiler) -> Result<(), String> {
        if let Some(name) = self.workloads.iter().find(|(_, w)| w.is_netbench()).map(|(n, _)| n) {
            return Err(format!(
                "--profile cannot follow NetBench's servers (workload `{name}`): profile HTTP servers only"
            ));
        }
        self.runner.profile = Some(p);
        Ok(())
    }
}

/// The `link` value of a link left as the kernel makes it.
pub const UNSHAPED: &str = "unshaped";

/// Clients the matrix uses when it has no `client` axis.
pub const DEFAULT_CLIENT: Tool = Tool::Herd;

/// What cells speak when the matrix has no `protocol` axis: HTTP/1.1 in the clear, as every
/// experiment did before the axis existed.
pub const DEFAULT_PROTOCOL: Protocol = Protocol::H1;

/// Reads an experiment from its text; `source` names it in errors (a path or `bundled:NAME`).
pub fn parse(text: &str, source: &str) -> Result<Experiment, ExperimentError> {
    build::build(text, source)
}

#[cfg(test)]
mod tests;
