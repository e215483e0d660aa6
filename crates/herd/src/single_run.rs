//! `herd run --html FILE` and `herd ab --html FILE`: one run's page, in the look of `herd
//! report --html`. The run becomes an experiment of one cell and one repetition, built in
//! memory (nothing is stored), with the machine's environment recorded as the lab records
//! it, and herd_report renders it: the same tables, charts (a stepped run's throughput
//! against clients), latency spectrum, status codes, failures, client health and disclosure.

use std::path::Path;

use anyhow::Context as _;
use hdrhistogram::Histogram;
use herd_stats::{ClientJudgement, Failure, HealthFacts, LatencySeries, Measurement};
use herd_store::{
    ClientIo, ClientRecord, ExperimentId, ExperimentStatus, NewExperiment, Outcome, RepetitionId,
    RepetitionRecord, ReportDefaults, StoredCell, StoredExperiment, StoredRepetition,
};

/// One run, as measured.
pub(crate) struct SingleRun {
    /// `herd run`, `herd ab`.
    pub(crate) tool: &'static str,
    /// The URL loaded.
    pub(crate) url: String,
    pub(crate) started_at: String,
    pub(crate) finished_at: String,
    /// Stopped early (Ctrl-C): the page says the experiment was interrupted.
    pub(crate) interrupted: bool,
    /// One per step; one for a run that is not stepped.
    pub(crate) measurements: Vec<Measurement>,
    /// The client's health verdict and its reason, where the tool judges one.
    pub(crate) judgement: Option<ClientJudgement>,
    /// The facts the verdict was judged on.
    pub(crate) health: Option<HealthFacts>,
    /// Which event-loop backend measured, and why `--io auto` fell back.
    pub(crate) io: Option<ClientIo>,
    /// `--trace-context`: the trace id every request carried.
    pub(crate) trace_id: Option<String>,
    /// The machine as `herd_lab::environment::record` found it before the load.
    pub(crate) environment: Vec<(String, String)>,
    /// What the run spoke, and its streams per connection, as the page's axes say them
    /// (`protocol=h2`, `streams=10`); empty for herd ab.
    pub(crate) protocol: Vec<(String, String)>,
}

/// Writes the run's page to `path` (whole or not at all).
pub(crate) fn write(path: &Path, run: SingleRun) -> anyhow::Result<()> {
    let exp = experiment(run);
    let mut page = Vec::new();
    herd_report::write_run_html(&exp, &mut page).context("cannot render the page")?;
    crate::report_cmd::write_page(path, &page)
}

/// The run as an experiment of one cell (`url=…`) and one repetition.
fn experiment(run: SingleRun) -> StoredExperiment {
    let version = env!("HERD_VERSION");
    // Arguments need not be UTF-8 (paths, ab's raw bytes): shown as near as can be.
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut axes = vec![("url".to_owned(), run.url.clone())];
    axes.extend(run.protocol.iter().cloned());
    let key = axes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    let definition = argv.join(" ");
    let record = RepetitionRecord {
        cell_key: key.clone(),
        axes: axes.clone(),
        control_of: None,
        repetition: 0,
        position: 0,
        started_at: run.started_at.clone(),
        finished_at: run.finished_at.clone(),
        outcome: Outcome::Ok,
        client: ClientRecord {
            tool: run.tool.to_owned(),
            version: version.to_owned(),
            argv,
            cpus: None,
            judgement: run.judgement,
            health: run.health,
            io: run.io,
            trace_id: run.trace_id,
        },
        servers: Vec::new(),
        server_cpu_seconds: None,
        time_wait_before: None,
        drain_seconds: 0.0,
        network: None,
        measurements: run.measurements,
    };
    StoredExperiment {
        id: ExperimentId(1),
        experiment: NewExperiment {
            name: run.tool.to_owned(),
            title: format!("{} {}", run.tool, run.url),
            source: "the command line".to_owned(),
            definition,
            plan: "one run, as given on the command line; nothing repeated, nothing stored"
                .to_owned(),
            started_at: run.started_at,
            herd_version: version.to_owned(),
            methodology_version: herd_lab::runner::METHODOLOGY_VERSION,
            axes: vec!["url".to_owned()],
            environment: run.environment,
            reference: None,
            published_json: None,
            axis_values: vec![vec![run.url]],
            report: ReportDefaults::default(),
        },
        status: if run.interrupted {
            ExperimentStatus::Interrupted
        } else {
            ExperimentStatus::Done
        },
        finished_at: Some(run.finished_at),
        note: run
            .interrupted
            .then(|| "stopped early (Ctrl-C): the figures cover the part that ran".to_owned()),
        cells: vec![StoredCell {
            key,
            axes,
            control_of: None,
            repetitions: vec![StoredRepetition { id: RepetitionId(1), record }],
            profile: None,
        }],
    }
}

/// herd ab's run as a measurement: ab's counters, its failures by kind (named as the lab
/// names the real ab's, by `herd_lab::client::ab_failures`), and histograms of every
/// completed request's total, connect and first-byte times (µs, ab's own samples).
pub(crate) fn ab_measurement(r: &herd_ab::results::AbResults) -> Measurement {
    let kinds = [
        (Failure::Connect, r.err_conn),
        (Failure::Receive, r.err_recv),
        (Failure::Length, r.err_length),
        (Failure::Exceptions, r.err_except),
    ];
    let failures = herd_lab::client::ab_failures(&kinds, r.bad, r.epipe);
    let mut histograms = Vec::new();
    type Pick = fn(&herd_ab::results::Sample) -> i64;
    let picks: [(LatencySeries, Pick); 3] = [
        (LatencySeries::Total, |s| s.time_us()),
        (LatencySeries::Connect, |s| s.ctime_us()),
        (LatencySeries::FirstByte, |s| s.wait_us()),
    ];
    for (series, pick) in picks {
        // Three significant digits, as every histogram herd keeps; auto-resizing, so any
        // duration fits and recording cannot fail.
        let Ok(mut h) = Histogram::<u64>::new(3) else { continue };
        h.auto(true);
        for s in &r.samples {
            let _ = h.record(u64::try_from(pick(s)).unwrap_or(0).max(1));
        }
        if !h.is_empty() {
            histograms.push((series, h));
        }
    }
    Measurement {
        step: 1,
        label: String::new(),
        concurrency: Some(r.concurrency),
        rate: None,
        duration_s: r.time_taken_s,
        completed: r.done,
        failed: r.bad + r.epipe,
        failures,
        statuses: Vec::new(),
        non_2xx: r.err_response,
        bytes_total: r.total_read,
        bytes_body: r.total_body_read,
        warmup_requests: 0,
        histograms,
        // herd ab times in nanoseconds: no coarse clock to report (ab prints milliseconds).
        reported: Vec::new(),
        judgement: None,
    }
}
