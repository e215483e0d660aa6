//! The merged result of a spread run, said as `herd run` says a single one's: the summary,
//! each agent's own line, `--fail-if` judged on the merged result, `--json`. The same whether
//! the agents ran here (cluster_cmd.rs) or on Kubernetes (cluster_k8s.rs).

use std::io;

use anyhow::Context as _;
use herd_run::spread::SpreadReport;
use herd_run::{summary, RunPlan};

use crate::run_cmd::{interrupted, judge, no_response, Outcome};
use crate::run_outputs::JsonFile;

/// The merged result as herd run prints it, each agent's line after it, thresholds judged
/// on the merged result, `--json` written.
pub(crate) fn report(
    out: &mut impl io::Write,
    plan: &RunPlan,
    result: &SpreadReport,
    json: JsonFile,
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
    json.write(&result.to_json_pretty())?;
    if outcome == Outcome::Done && report.steps().iter().any(|s| s.no_response()) {
        eprintln!("herd cluster run: {}", no_response(report));
        outcome = Outcome::NoResponse;
    }
    if outcome == Outcome::Interrupted {
        eprintln!("herd cluster run: {}", interrupted(&plan.outputs));
    }
    Ok(outcome)
}
