//! `herd run`: the flags become a plan (run_args.rs), herd_run prepares and executes it, and
//! this file does what only the binary does: Ctrl-C, the live line on a terminal, printing the
//! summary (a line per step as each ends), `--fail-if`, writing `--json` and `--html`, and the
//! exit code. The run itself, its report and its text are herd_run's (docs/run.md).
//!
//! Exit codes: 0 when the run completed; 1 when it could not start (bad URL, refused address,
//! TLS settings); 2 for bad usage (clap); 3 when a `--fail-if` condition did not hold; 4 when
//! no request got a response (nothing listens there, every connection was refused or timed
//! out: the summary and `--json` are still written, with no client verdict); 130 when Ctrl-C
//! stopped it, as `herd lab` (the summary of what was measured is still printed, the outputs
//! written: an interrupted run is a result, not a failure to start).

use std::io::{self, Write as _};
use std::sync::Arc;

use anyhow::Context as _;
use herd_engine::Control;
use herd_run::{summary, RunReport};

pub(crate) use crate::run_args::RunArgs;
use crate::run_metrics::RunMetrics;
use crate::run_outputs::{RunOutputs, StepLines};
use crate::single_run::SingleRun;
use crate::tui::Tui;

/// How a `herd run` ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Done,
    Interrupted,
    /// A `--fail-if` condition did not hold.
    ThresholdFailed,
    /// No request got a response.
    NoResponse,
}

/// Runs `herd run`.
pub(crate) fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let mut plan = crate::run_args::plan(&args)?;
    // Set by `herd lab` for the server host an experiment's `[hosts]` names.
    crate::run_args::opt_in_from_env(&mut plan)?;
    let prepared = herd_run::prepare(&plan)?;
    if let Some(t) = &plan.trace {
        eprintln!(
            "herd run: trace {} (a traceparent on every request, {})",
            t.trace_id(),
            if t.sampled() { "sampled" } else { "not sampled" }
        );
    }
    // Best effort: without it, large -c runs report fd errors plainly.
    let _ = herd_engine::raise_nofile_limit();
    let control = stop_on_ctrl_c();
    let stepped = plan.is_stepped();
    let outputs = &plan.outputs;
    // Before anything is written or sent: a page that could not be written must cost
    // neither a run nor the files of an earlier one (--series, --hlog).
    if let Some(path) = &outputs.html {
        crate::report_cmd::check_page_path(path)?;
    }
    let started_at = herd_lab::runner::now_rfc3339();
    let environment =
        outputs.html.as_ref().map(|_| herd_lab::environment::record(env!("HERD_VERSION")));
    // Opened before any load is sent: a path that cannot be written, or a metrics address
    // that cannot be bound, stops the run here.
    let metrics = RunMetrics::start(&args, "herd run")?;
    let tui = Tui::for_run(args.tui, "herd run", &plan)?;
    let RunOutputs { writer, json, metrics, mut tui } = RunOutputs::open(&plan, metrics, tui)?;
    if let Some(t) = &mut tui {
        t.show(control.clone())?;
    }
    let setup = prepared.setup().clone();
    let mut out = io::stdout().lock();
    let mut lines = StepLines::new(&plan);
    // While the view has the terminal, a stepped run's step lines wait for it to close.
    let mut held = Vec::new();
    let viewed = tui.is_some();
    let report = herd_run::execute(&prepared, &control, writer.as_ref(), |k, step| match viewed {
        true => lines.print(&mut held, k, &setup, step),
        false => lines.print(&mut out, k, &setup, step),
    });
    if let Some(t) = tui {
        t.finish();
    }
    let report = report?;
    out.write_all(&held).context("cannot write the summary")?;
    lines.finish()?;
    let last = report.last().context("no step was run")?;
    if !stepped {
        summary::write(&mut out, &setup, last).context("cannot write the summary")?;
    }
    let mut outcome = judge(&mut out, &plan, last)?;
    json.write(&report.to_json_pretty())?;
    if let Some(path) = &outputs.html {
        let run = SingleRun {
            trace_id: last.trace.as_ref().map(|t| t.trace_id.clone()),
            tool: "herd run",
            url: plan.url.text.clone(),
            started_at,
            finished_at: herd_lab::runner::now_rfc3339(),
            interrupted: last.interrupted,
            measurements: report.measurements(),
            judgement: report.judgement(),
            health: Some(report.health()),
            io: last.io.as_ref().map(|io| herd_store::ClientIo {
                backend: io.backend_name().to_owned(),
                fallback: io.fallback.clone(),
            }),
            environment: environment.unwrap_or_default(),
            // Plain HTTP/1.1 is what a page without the axis always meant.
            protocol: last
                .protocol
                .filter(|&p| p != herd_stats::Protocol::H1)
                .iter()
                .map(|p| ("protocol".to_owned(), p.to_string()))
                .chain(last.streams.map(|m| ("streams".to_owned(), m.to_string())))
                .collect(),
        };
        crate::single_run::write(path, run)
            .with_context(|| format!("--html {}", path.display()))?;
    }
    if let Some(o) = writer {
        o.finish()?;
    }
    if let Some(m) = metrics {
        m.finish(outcome == Outcome::Interrupted);
    }
    if outcome == Outcome::Done && report.steps().iter().any(|s| s.no_response()) {
        eprintln!("herd run: {}", no_response(&report));
        outcome = Outcome::NoResponse;
    }
    if outcome == Outcome::Interrupted {
        eprintln!("herd run: {}", interrupted(outputs));
    }
    Ok(outcome)
}

/// The run's stop switch, thrown by Ctrl-C: the run ends early and keeps what it measured.
/// Shared with `herd cluster run` and `herd agent`.
pub(crate) fn stop_on_ctrl_c() -> Arc<Control> {
    let control = Arc::new(Control::new());
    let handler = control.clone();
    // Only fails if a handler is already installed, which happens only in tests.
    let _ = ctrlc::set_handler(move || handler.stop());
    control
}

/// What to say after a run Ctrl-C stopped: that its result stands for the time it ran, and
/// which files hold it.
pub(crate) fn interrupted(outputs: &herd_run::plan::Outputs) -> String {
    let files = [
        ("--json", &outputs.json),
        ("--html", &outputs.html),
        ("--series", &outputs.series),
        ("--hlog", &outputs.hlog),
    ];
    let written: Vec<String> = files
        .iter()
        .filter_map(|(flag, path)| path.as_ref().map(|p| format!("{flag} {}", p.display())))
        .collect();
    let written = if written.is_empty() {
        String::new()
    } else {
        format!("; written: {}", written.join(", "))
    };
    format!("interrupted: the summary covers what was measured until then{written}")
}

/// How a run ended by its last result, `--fail-if` judged on it (each condition printed):
/// the whole of a single run, or the last step of a stepped one. Shared with `herd cluster
/// run`, which judges the merged result the same way.
pub(crate) fn judge(
    out: &mut impl io::Write,
    plan: &herd_run::RunPlan,
    last: &herd_run::StepReport,
) -> anyhow::Result<Outcome> {
    let mut outcome = if last.interrupted { Outcome::Interrupted } else { Outcome::Done };
    for t in &plan.fail_if {
        let (measured, holds) = t.check(last);
        writeln!(out, "  fail-if     {t}: {measured} {}", if holds { "ok" } else { "FAILED" })?;
        if !holds && outcome == Outcome::Done {
            outcome = Outcome::ThresholdFailed;
        }
    }
    out.flush().context("cannot write the summary")?;
    Ok(outcome)
}

/// What to say when a run (or a step) got no response at all: what failed, and where.
pub(crate) fn no_response(report: &RunReport) -> String {
    let silent: Vec<&herd_run::StepReport> =
        report.steps().iter().filter(|s| s.no_response()).collect();
    let failures: Vec<String> = silent
        .iter()
        .flat_map(|s| s.failures.iter())
        .fold(Vec::<(herd_stats::Failure, u64)>::new(), |mut all, (&k, &n)| {
            match all.iter_mut().find(|(a, _)| *a == k) {
                Some((_, m)) => *m += n,
                None => all.push((k, n)),
            }
            all
        })
        .into_iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let failed: u64 = silent.iter().map(|s| s.requests.failed).sum();
    let which = if report.is_stepped() {
        let steps: Vec<String> = report
            .steps()
            .iter()
            .zip(1..)
            .filter(|(s, _)| s.no_response())
            .map(|(_, k): (_, usize)| k.to_string())
            .collect();
        format!(" in step {}", steps.join(", "))
    } else {
        String::new()
    };
    if failed == 0 {
        return format!(
            "no request got a response{which}, and none failed: every request was still \
             waiting when the run ended; is the server at {} answering (a longer -d or \
             --timeout shows how long it takes)?",
            report.url()
        );
    }
    format!(
        "no request got a response{which}: {failed} failed ({}); is the server running at {} \
         and does it accept connections from here?",
        failures.join(", "),
        report.url()
    )
}
