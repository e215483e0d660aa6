//! Two clients on one cell: where an experiment measured the same server, workload, load …
//! with two clients (herd and ab, herd and h2load), their figures describe the same server
//! and should agree. Where they disagree beyond both intervals (the ratio of their means has
//! a 95 % interval that leaves out 1), the report says so and names the lower one: one of
//! them measured itself, or a stall of its own, not the server. (herd once measured 358 req/s
//! where ab measured 2,078 on the same TLS cell, with a verdict of ok: Nagle's algorithm held
//! every herd request for nginx's delayed ACK.)

use std::collections::BTreeMap;

use herd_stats::repetitions as stats;
use herd_store::{Measure, StoredExperiment};

use crate::doc::Doc;
use crate::figures::Row;

/// Adds the section, when any pair disagrees.
pub(crate) fn add(exp: &StoredExperiment, rows: &[Row<'_>], doc: &mut Doc) {
    doc.section(
        "clients that disagree on the same cell (beyond both 95 % intervals: the lower one \
         measured something besides the server — its own limit or a stall; see its verdict):"
            .to_owned(),
        lines(exp, rows),
    );
}

fn lines(exp: &StoredExperiment, rows: &[Row<'_>]) -> Vec<String> {
    if !exp.experiment.axes.iter().any(|a| a == "client") {
        return Vec::new();
    }
    // Rows alike on every axis but the client (and on the step), in table order.
    let mut groups: BTreeMap<(Vec<String>, Option<String>), Vec<&Row<'_>>> = BTreeMap::new();
    for row in rows {
        let others: Vec<String> = row
            .cell
            .axes
            .iter()
            .filter(|(axis, _)| axis != "client")
            .map(|(axis, value)| format!("{axis}={value}"))
            .collect();
        groups.entry((others, row.step.clone())).or_default().push(row);
    }
    let mut out = Vec::new();
    for ((others, step), group) in &groups {
        for (i, a) in group.iter().enumerate() {
            for b in &group[i + 1..] {
                if let Some(line) = disagreement(others, step.as_deref(), a, b) {
                    out.push(line);
                }
            }
        }
    }
    out
}

/// The sentence for rows `a` and `b` (two clients), if their requests/s disagree.
fn disagreement(others: &[String], step: Option<&str>, a: &Row<'_>, b: &Row<'_>) -> Option<String> {
    let (sa, sb) = (a.samples(Measure::RequestsPerSecond), b.samples(Measure::RequestsPerSecond));
    let r = stats::ratio_of_means_95(sa, sb)?;
    if !r.significant() {
        return None;
    }
    let (low, high, ratio) = if r.ratio < 1.0 { (b, a, r.ratio) } else { (a, b, 1.0 / r.ratio) };
    let name = |row: &Row<'_>| row.cell.axis("client").unwrap_or("-").to_owned();
    let figure = |row: &Row<'_>| {
        let s = row.samples(Measure::RequestsPerSecond);
        let median = stats::median(s).unwrap_or(0.0);
        let ci = stats::confidence_interval_95(s)
            .and_then(|ci| ci.relative_half_width())
            .map_or_else(String::new, |w| format!(" ±{:.1}%", w * 100.0));
        format!("{} {} req/s{ci}", name(row), thousands(median))
    };
    let step = step.filter(|s| !s.is_empty()).map(|s| format!(" {s}")).unwrap_or_default();
    Some(format!(
        "{}{step}: {}, {}: {} measured {:.0} % less than {}",
        others.join(" "),
        figure(a),
        figure(b),
        name(low),
        (1.0 - ratio) * 100.0,
        name(high)
    ))
}

/// A rate rounded to a whole number, with thousands separated by commas.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
