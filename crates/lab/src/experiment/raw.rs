//! The experiment file exactly as written: serde structs that refuse unknown keys, with the
//! position of every value a later check may have to point at. Validation happens in
//! `experiment::build`, not here.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

pub(crate) type Names = Vec<Spanned<String>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExperiment {
    pub name: Spanned<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Key of the published figures this experiment re-runs (e.g. `seed000`).
    #[serde(default)]
    pub reference: Option<Spanned<String>>,
    #[serde(default)]
    pub published: Option<Spanned<RawPublished>>,
    #[serde(default)]
    pub report: Option<RawReport>,
    pub matrix: RawMatrix,
    #[serde(default)]
    pub client: RawClient,
    #[serde(default)]
    pub router: RawRouter,
    #[serde(default)]
    pub repetitions: RawRepetitions,
    #[serde(default)]
    pub runner: RawRunner,
    #[serde(default)]
    pub servers: BTreeMap<String, RawServer>,
    #[serde(default)]
    pub workloads: BTreeMap<String, RawWorkload>,
    #[serde(default)]
    pub loads: BTreeMap<String, RawLoad>,
    #[serde(default)]
    pub exclude: Vec<Spanned<RawExclude>>,
    /// The user's own machines for the roles, over SSH (`crate::hosts`).
    #[serde(default)]
    pub hosts: Option<Spanned<RawHosts>>,
}

/// `[hosts]`: each role's machine as `ssh://[user@]host[:port]`, and an ssh_config.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHosts {
    #[serde(default)]
    pub server: Option<Spanned<String>>,
    #[serde(default)]
    pub clients: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub router: Option<Spanned<String>>,
    #[serde(default)]
    pub ssh_config: Option<Spanned<String>>,
    /// How long a host's helper waits in silence before it takes its link for lost.
    #[serde(default)]
    pub idle_timeout: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMatrix {
    pub server: Spanned<Names>,
    /// HTTP/1.1, over TLS or not, HTTP/2, HTTP/3 (`herd_stats::Protocol`); default h1.
    #[serde(default)]
    pub protocol: Option<Spanned<Names>>,
    pub workload: Spanned<Names>,
    pub load: Spanned<Names>,
    #[serde(default)]
    pub client: Option<Spanned<Names>>,
    #[serde(default)]
    pub server_cpus: Option<Spanned<Names>>,
    #[serde(default)]
    pub path: Option<Spanned<Names>>,
    #[serde(default)]
    pub link: Option<Spanned<Names>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRouter {
    #[serde(default)]
    pub cpus: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClient {
    #[serde(default)]
    pub cpus: Option<Spanned<String>>,
    #[serde(default)]
    pub threads: Option<Spanned<i64>>,
    #[serde(default)]
    pub agents: Option<Spanned<i64>>,
    /// herd's client's event-loop backend: `auto`, `epoll` or `uring` (`--io`).
    #[serde(default)]
    pub io: Option<Spanned<String>>,
    /// herd's client sends a W3C `traceparent` on every request (`--trace-context`).
    #[serde(default)]
    pub trace_context: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRepetitions {
    #[serde(default)]
    pub min: Option<Spanned<i64>>,
    #[serde(default)]
    pub max: Option<Spanned<i64>>,
    #[serde(default)]
    pub max_spread_percent: Option<Spanned<f64>>,
    #[serde(default)]
    pub max_interval_percent: Option<Spanned<f64>>,
    #[serde(default)]
    pub time_budget: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRunner {
    #[serde(default)]
    pub seed: Option<Spanned<i64>>,
    #[serde(default)]
    pub time_wait_below: Option<Spanned<i64>>,
    #[serde(default)]
    pub drain_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub ready_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub calibrate: Option<Spanned<bool>>,
    #[serde(default)]
    pub placement: Option<Spanned<String>>,
    #[serde(default)]
    pub profile: Option<Spanned<String>>,
    /// `server_count = true`: every run's server writes its access log, and its count is
    /// held against the client's.
    #[serde(default)]
    pub server_count: Option<Spanned<bool>>,
    /// `controls = N`: one cell measured N more times as its own A/A twin.
    #[serde(default)]
    pub controls: Option<Spanned<i64>>,
    /// `control = { server = "herd", load = "c8" }`: which cell (axis values that name one).
    #[serde(default)]
    pub control: Option<Spanned<BTreeMap<String, String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub driver: Spanned<String>,
    #[serde(default)]
    pub mpm: Option<Spanned<String>>,
    #[serde(default)]
    pub php: Option<Spanned<String>>,
    #[serde(default)]
    pub workers: Option<Spanned<i64>>,
    #[serde(default)]
    pub binary: Option<Spanned<String>>,
    #[serde(default)]
    pub config: Option<Spanned<String>>,
    /// `driver = "external"`: where it answers.
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// `driver = "external"`: its main process on this machine, for its CPU time.
    #[serde(default)]
    pub pid: Option<Spanned<i64>>,
    /// `driver = "external"` over https: the CA that signed its certificate.
    #[serde(default)]
    pub ca_file: Option<Spanned<String>>,
    /// The most requests one kept-alive connection carries (nginx, Apache, lighttpd).
    #[serde(default)]
    pub keepalive_requests: Option<Spanned<i64>>,
    /// Static files with sendfile(2) or not (nginx, Apache, lighttpd).
    #[serde(default)]
    pub sendfile: Option<Spanned<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    pub kind: Spanned<String>,
    #[serde(default)]
    pub size: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub from: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub to: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub factor: Option<Spanned<i64>>,
    #[serde(default)]
    pub dirs: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLoad {
    #[serde(default)]
    pub requests: Option<Spanned<i64>>,
    #[serde(default)]
    pub concurrency: Option<Spanned<i64>>,
    #[serde(default)]
    pub duration: Option<Spanned<String>>,
    #[serde(default)]
    pub rate: Option<Spanned<f64>>,
    #[serde(default)]
    pub connections: Option<Spanned<i64>>,
    #[serde(default)]
    pub steps: Option<Spanned<Vec<i64>>>,
    /// Offered rates in turn, requests per second, each for `step` (an open loop per step).
    #[serde(default)]
    pub rate_steps: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub step: Option<Spanned<String>>,
    #[serde(default)]
    pub keep_alive: Option<bool>,
    #[serde(default)]
    pub warmup: Option<Spanned<String>>,
    #[serde(default)]
    pub warmup_requests: Option<Spanned<i64>>,
    #[serde(default)]
    pub timeout: Option<Spanned<String>>,
    /// Requests at once on each connection of a multiplexed protocol (h2, h2c, h3).
    #[serde(default)]
    pub streams: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExclude {
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub protocol: Option<String>,
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub load: Option<String>,
    #[serde(default)]
    pub client: Option<String>,
    #[serde(default)]
    pub server_cpus: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub link: Option<String>,
}

/// `[report]`: how the experiment's tables are shown unless `herd report` is told otherwise.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReport {
    #[serde(default)]
    pub baseline: Option<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    pub measure: Option<Spanned<String>>,
}

/// `[published]`: the figures an article published, to set beside today's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPublished {
    pub source: String,
    #[serde(default)]
    pub setup: Option<String>,
    #[serde(default)]
    pub percent_of: Option<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    pub figures: Vec<Spanned<RawFigure>>,
}

/// One `[[published.figures]]`: where it applies, and the figures by measure.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFigure {
    pub at: BTreeMap<String, String>,
    #[serde(default)]
    pub ran: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub seconds: Option<f64>,
    #[serde(default)]
    pub percent: Option<f64>,
    #[serde(default)]
    pub requests_per_second: Option<f64>,
    #[serde(default)]
    pub connections_per_second: Option<f64>,
    #[serde(default)]
    pub kb_per_second: Option<f64>,
    #[serde(default)]
    pub mbit_per_second: Option<f64>,
    #[serde(default)]
    pub peak_requests_per_second: Option<f64>,
    #[serde(default)]
    pub peak_mbit_per_second: Option<f64>,
    #[serde(default)]
    pub clients_at_peak: Option<f64>,
}
