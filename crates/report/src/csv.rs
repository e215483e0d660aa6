//! A report as CSV: one line per row of the experiment (a cell, or a cell's step) with
//! every figure the tables show, unformatted (Rust's shortest exact decimal), for a
//! spreadsheet or a script. The shown measure's median, its 95 % interval and its share of
//! the baseline come first after the row's place.

use std::io::{self, Write};

use herd_stats::repetitions as stats;
use herd_store::{Measure, StoredExperiment};

use crate::figures::{self, Row};
use crate::matrix::{self, Baseline};

pub(crate) fn write(
    exp: &StoredExperiment,
    baseline: Option<&Baseline>,
    measure: Measure,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (rows, _) = figures::rows(exp);
    let mut header: Vec<String> = vec!["experiment".into()];
    header.extend(exp.experiment.axes.iter().cloned());
    header.extend(COLUMNS.map(String::from));
    line(out, &header)?;
    for row in &rows {
        let mut fields = vec![exp.id.to_string()];
        fields.extend(
            exp.experiment.axes.iter().map(|a| row.cell.axis(a).unwrap_or_default().to_owned()),
        );
        fields.extend(figures(row, &rows, baseline, measure));
        line(out, &fields)?;
    }
    Ok(())
}

/// The columns after the axes; [`figures`] gives one field for each, in this order (the
/// array types keep the two the same length).
const COLUMNS: [&str; 26] = [
    "step",
    "clients",
    "offered_rate",
    "reps_ok",
    "reps",
    "reps_not_held",
    "measure",
    "median",
    "ci95_low",
    "ci95_high",
    "spread",
    "baseline",
    "percent_of_baseline",
    "requests_per_second",
    "seconds",
    "kb_per_second",
    "mbit_per_second",
    "p50_ms",
    "p99_ms",
    "latency_from_client",
    "failed",
    "non_2xx",
    "server_cpu_us_per_request",
    // Not `client`: that is an axis's name.
    "client_verdict",
    "link_bound",
    "not_comparable",
];

fn figures(
    row: &Row<'_>,
    rows: &[Row<'_>],
    baseline: Option<&Baseline>,
    measure: Measure,
) -> [String; COLUMNS.len()] {
    let number = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    let samples = row.samples(measure);
    let ci = stats::confidence_interval_95(samples);
    let base = baseline.and_then(|b| matrix::base_of(row, rows, b));
    [
        row.step.clone().unwrap_or_default(),
        row.concurrency.map(|c| c.to_string()).unwrap_or_default(),
        number(row.offered),
        row.n_ok.to_string(),
        row.n_total.to_string(),
        row.not_held.len().to_string(),
        measure.key().to_owned(),
        number(stats::median(samples)),
        number(ci.map(|ci| ci.mean - ci.half_width)),
        number(ci.map(|ci| ci.mean + ci.half_width)),
        number(stats::relative_std_dev(samples)),
        baseline.map(|b| format!("{}={}", b.axis, b.value)).unwrap_or_default(),
        number(base.and_then(|b| matrix::percent(row, b, measure))),
        number(row.median_rate()),
        number(stats::median(&row.durations)),
        number(stats::median(&row.kib_per_second)),
        number(stats::median(&row.mbit_per_second)),
        number(row.latency.as_ref().map(|l| l.p50_us / 1000.0)),
        number(row.latency.as_ref().map(|l| l.p99_us / 1000.0)),
        row.latency.as_ref().map(|l| l.from_client.to_string()).unwrap_or_default(),
        row.failed.to_string(),
        row.non_2xx.to_string(),
        number(row.cpu_us_per_request),
        row.verdict.map(|v| v.to_string()).unwrap_or_default(),
        row.link_bound.to_string(),
        row.not_comparable.to_string(),
    ]
}

fn line(out: &mut dyn Write, fields: &[String]) -> io::Result<()> {
    let quoted: Vec<String> = fields.iter().map(|f| quote(f)).collect();
    writeln!(out, "{}", quoted.join(","))
}

/// RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(quote("nginx"), "nginx");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
