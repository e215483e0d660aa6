//! [`RunInfo`]: what a run (or step) was besides the recorder's figures and the URL. The
//! engine's side of a run fills it in (execute.rs, spread/agent.rs), the report reads it
//! (step_result.rs, health.rs). A module of its own, below both, so that neither has to reach
//! up to the crate root or into the other for it.

use std::time::Duration;

use crate::client_usage::ClientUsage;
use crate::server_usage::ServerUsage;

/// What a run (or step) was besides the recorder's figures and the URL. An agent of a
/// spread run sends it with its recorder (spread/wire.rs).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct RunInfo {
    pub(crate) connections: u32,
    pub(crate) threads: u32,
    pub(crate) keep_alive: bool,
    pub(crate) rate: Option<f64>,
    pub(crate) elapsed: Duration,
    pub(crate) interrupted: bool,
    /// What the client itself used: the health verdict's own figures.
    pub(crate) client: ClientUsage,
    /// What the server used, where it runs here and herd can read its processes
    /// (server_usage.rs); None for a remote server and for an agent of a spread run.
    #[serde(default)]
    pub(crate) server: Option<ServerUsage>,
    /// HTTP/3: what QUIC did. Not sent by an agent: each agent's own report has its QUIC
    /// figures, and the merged report adds those up (spread/combine.rs).
    #[serde(skip)]
    pub(crate) quic: Option<herd_engine::quic::QuicStats>,
    /// Which event-loop backend measured (the engine's [`herd_engine::Run::io`]). Not sent by
    /// an agent either: each agent's own report says it, and the merged report says theirs
    /// (spread/combine.rs).
    #[serde(skip)]
    pub(crate) io: Option<herd_engine::Resolved>,
    /// How long after its planned start the engine started (a spread run's agents start at
    /// one instant); zero when it started at once.
    #[serde(default)]
    pub(crate) late: Duration,
}
