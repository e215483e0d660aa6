//! `--metrics-listen` for `herd run` and `herd cluster run`: the endpoint started before any
//! load is sent (an address that cannot be bound costs no run), the line that says where it
//! is and which run it serves, and its end, which keeps the final figures up for a scrape.

use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use herd_run::metrics::{FinalScrape, Labels, LiveFigures, MetricsServer, SharedFigures};

use crate::run_args::RunArgs;

/// A run's metrics endpoint.
#[derive(Debug)]
pub(crate) struct RunMetrics {
    pub(crate) figures: SharedFigures,
    server: MetricsServer,
    linger: herd_stats::units::TimeSpan,
    command: &'static str,
}

impl RunMetrics {
    /// Starts the endpoint `args` asks for (None: it asks for none), its series labelled with
    /// a new run id.
    pub(crate) fn start(
        args: &RunArgs,
        command: &'static str,
    ) -> anyhow::Result<Option<RunMetrics>> {
        RunMetrics::start_as(args, command, run_id(), None)
    }

    /// As [`RunMetrics::start`], for one agent of run `run`: its own part of the run,
    /// labelled `agent`.
    pub(crate) fn start_as(
        args: &RunArgs,
        command: &'static str,
        run: String,
        agent: Option<String>,
    ) -> anyhow::Result<Option<RunMetrics>> {
        let Some(addr) = args.metrics_listen else { return Ok(None) };
        let labels = Labels { run, agent, extra: args.metrics_label.clone() };
        let figures = Arc::new(Mutex::new(LiveFigures::new(labels.clone())));
        let server = MetricsServer::start(addr, figures.clone()).with_context(|| {
            format!("--metrics-listen {addr}: cannot listen there (in use, or not an address of this machine)")
        })?;
        eprintln!(
            "{command}: metrics at http://{}/metrics (run=\"{}\")",
            server.local_addr(),
            labels.run
        );
        Ok(Some(RunMetrics { figures, server, linger: args.metrics_linger, command }))
    }

    /// The run is over: its final figures stay up until a scrape read them (at most
    /// `--metrics-linger`; not after Ctrl-C), and it is said if none did.
    pub(crate) fn finish(self, interrupted: bool) {
        let addr = self.server.local_addr();
        let (command, linger) = (self.command, self.linger);
        let wait = if interrupted { std::time::Duration::ZERO } else { linger.get() };
        match self.server.finish(wait) {
            FinalScrape::Read => {}
            _ if interrupted => {}
            FinalScrape::NotRead => eprintln!(
                "{command}: no scrape read the final metrics within {linger} \
                 (--metrics-linger); the run's own output has them"
            ),
            FinalScrape::NeverScraped => eprintln!(
                "{command}: nothing scraped the metrics during the run (is the scraper's \
                 target {}?)",
                addr
            ),
        }
    }
}

/// A run's id for its metrics: 16 hex digits, new each run (the standard library's random
/// hasher keys, which are seeded from the OS).
pub(crate) fn run_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    format!("{:016x}", h.finish())
}
