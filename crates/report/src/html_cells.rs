//! Every cell's details on the HTML page, one folded block per cell: each repetition's
//! figures step by step (failed repetitions with their reasons), the latency spectrum,
//! status codes and failed requests by kind, what the client's health checks found, the
//! server processes and their CPU time, what the network path saw, and the command lines.
//! Nothing is summarised away here: the tables above give medians, this gives what they
//! are medians of.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use herd_stats::{LatencySeries, Measurement};
use herd_store::{Outcome, StoredCell, StoredExperiment, StoredRepetition};

use crate::doc::{Align, Role, Table};
use crate::html::{figure, list, table};
use crate::placeholders::Own;
use crate::svg_chart::escape;
use crate::table::{ms, rate};

pub(crate) fn write(page: &mut String, exp: &StoredExperiment) {
    if exp.cells.is_empty() {
        return;
    }
    page.push_str("<h3>every cell, repetition by repetition</h3>\n");
    // One cell alone (a single run's page) is shown open: it is the whole story.
    let open = exp.cells.len() == 1;
    let owns = crate::placeholders::of_experiment(exp);
    for (i, cell) in exp.cells.iter().enumerate() {
        let own = owns.get(i).map_or(&[][..], Vec::as_slice);
        details(page, exp, (i, cell, own), open);
    }
}

fn details(
    page: &mut String,
    exp: &StoredExperiment,
    cell: (usize, &StoredCell, &[Own]),
    open: bool,
) {
    let (index, cell, owns) = cell;
    let ok = cell.ok_repetitions().count();
    let failed = measurements(cell)
        .fold(0u64, |n, (_, m)| n.saturating_add(m.failed).saturating_add(m.non_2xx));
    let _ = writeln!(
        page,
        "<details class=\"cell\"{} id=\"experiment-{}-cell-{index}\" data-cell=\"{}\"><summary><strong>{}</strong>: {ok} of {} repetitions ok{}</summary>",
        if open { " open" } else { "" },
        exp.id.0,
        escape(&cell.key),
        escape(&cell.key),
        cell.repetitions.len(),
        if failed > 0 { format!(", {failed} failed requests or non-2xx answers") } else { String::new() }
    );
    repetitions(page, cell);
    match crate::spectrum::chart(cell) {
        Some(chart) => figure(page, &chart, SPECTRUM_CAPTION),
        None => {
            let tools: BTreeSet<&str> =
                cell.repetitions.iter().map(|r| r.record.client.tool.as_str()).collect();
            let _ = writeln!(
                page,
                "<p>No latency spectrum: no ok repetition recorded a histogram ({} gives none); the tables show the client's own p50 and p99.</p>",
                escape(&tools.into_iter().collect::<Vec<_>>().join(", "))
            );
        }
    }
    crate::flame::figure(page, cell);
    counts(page, cell, "status codes", |m| {
        m.statuses.iter().map(|(code, n)| (code.to_string(), *n)).collect()
    });
    counts(page, cell, "failed requests by kind", |m| {
        m.failures.iter().map(|(kind, n)| (kind.to_string(), *n)).collect()
    });
    health(page, cell);
    servers(page, cell);
    network(page, cell);
    command_lines(page, cell, owns);
    page.push_str("</details>\n");
}

const SPECTRUM_CAPTION: &str = "Latency from the intended send time by percentile, both axes logarithmic: each further nine takes the same room. One line per ok repetition (per step, over the ok repetitions, for a stepped load); each line ends at its maximum.";

/// Every repetition's measurements, in repetition and step order.
fn measurements(cell: &StoredCell) -> impl Iterator<Item = (&StoredRepetition, &Measurement)> {
    cell.repetitions.iter().flat_map(|r| r.record.measurements.iter().map(move |m| (r, m)))
}

/// `1` or `1 c64`: a repetition, shown from 1, and its step where there are steps.
fn label(r: &StoredRepetition, m: Option<&Measurement>, stepped: bool) -> String {
    match m {
        Some(m) if stepped => format!("{} {}", r.record.repetition.saturating_add(1), m.label),
        _ => (r.record.repetition.saturating_add(1)).to_string(),
    }
}

/// The columns of a measurement (a run, or a step), after the repetition, its place in the
/// order it ran and its outcome; [`measured`] gives one entry for each.
const MEASURED: [(&str, Align); 13] = [
    ("clients", Align::Right),
    ("rate", Align::Right),
    ("seconds", Align::Right),
    ("completed", Align::Right),
    ("failed", Align::Right),
    ("non-2xx", Align::Right),
    ("req/s", Align::Right),
    ("KiB/s", Align::Right),
    // NetBench's unit (its runs count no requests), and for HTTP the bytes received.
    ("Mbit/s", Align::Right),
    ("p50 ms", Align::Right),
    ("p99 ms", Align::Right),
    ("max ms", Align::Right),
    ("warm-up", Align::Right),
];

fn measured(m: &Measurement) -> [String; 13] {
    let h = m.histogram(LatencySeries::Total);
    let quantile = |q: f64| h.map_or("-".into(), |h| ms(h.value_at_quantile(q) as f64));
    [
        m.concurrency.map_or("-".into(), |c| c.to_string()),
        m.rate.map_or("-".into(), |r| format!("{r}/s")),
        format!("{:.3}", m.duration_s),
        m.completed.to_string(),
        m.failed.to_string(),
        m.non_2xx.to_string(),
        m.requests_per_second().map_or("-".into(), rate),
        m.kib_per_second().map_or("-".into(), |k| format!("{k:.1}")),
        m.mbit_per_second().map_or("-".into(), |b| format!("{b:.1}")),
        quantile(0.5),
        quantile(0.99),
        h.map_or("-".into(), |h| ms(h.max() as f64)),
        m.warmup_requests.to_string(),
    ]
}

fn repetitions(page: &mut String, cell: &StoredCell) {
    let stepped = crate::figures::measured_in_steps(cell);
    let mut t = Table::with_role(Role::Repetitions);
    t.column(if stepped { "repetition step" } else { "repetition" }, Align::Left);
    t.column("ran", Align::Right);
    t.column("outcome", Align::Left);
    t.columns(&MEASURED);
    t.column("srv cpu µs/req", Align::Right);
    t.column("TIME_WAIT before", Align::Right);
    t.column("drain s", Align::Right);
    t.column("client", Align::Left);
    let mut reasons = Vec::new();
    for r in &cell.repetitions {
        let rec = &r.record;
        let outcome = match &rec.outcome {
            Outcome::Ok => "ok".to_owned(),
            Outcome::Failed { kind, reason } => {
                let kind = crate::failed_runs::words(*kind);
                let n = rec.repetition.saturating_add(1);
                reasons.push(format!("repetition {n} ({kind}): {reason}"));
                format!("failed: {kind}")
            }
        };
        // A repetition that failed before measuring gets one row of its own.
        let none = [None];
        let steps: Vec<Option<&Measurement>> = if rec.measurements.is_empty() {
            none.to_vec()
        } else {
            rec.measurements.iter().map(Some).collect()
        };
        for m in steps {
            let mut entries = vec![
                label(r, m, stepped),
                rec.position.saturating_add(1).to_string(),
                outcome.clone(),
            ];
            match m {
                Some(m) => entries.extend(measured(m)),
                None => entries.extend(MEASURED.map(|_| "-".to_owned())),
            }
            entries
                .push(rec.server_cpu_us_per_request().map_or("-".into(), |us| format!("{us:.1}")));
            entries.push(rec.time_wait_before.map_or("-".into(), |n| n.to_string()));
            entries.push(format!("{:.1}", rec.drain_seconds));
            let judged = m.and_then(|m| m.judgement.as_ref()).or(rec.client.judgement.as_ref());
            entries.push(judged.map_or_else(|| "-".into(), |j| j.verdict.to_string()));
            t.text_row(entries);
        }
    }
    table(page, &t);
    if !reasons.is_empty() {
        page.push_str("<h4>failed repetitions</h4>\n");
        list(page, &reasons);
    }
}

/// A table of counts by kind (status code, failure kind): a row per repetition (and step),
/// a column per kind seen.
fn counts(
    page: &mut String,
    cell: &StoredCell,
    what: &str,
    of: impl Fn(&Measurement) -> Vec<(String, u64)>,
) {
    let stepped = crate::figures::measured_in_steps(cell);
    let mut kinds: Vec<String> = Vec::new();
    for (_, m) in measurements(cell) {
        for (k, _) in of(m) {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    let _ = writeln!(page, "<h4>{}</h4>", escape(what));
    if kinds.is_empty() {
        let _ = writeln!(page, "<p>None recorded.</p>");
        return;
    }
    kinds.sort();
    let mut t = Table::with_role(Role::Counts);
    t.column(if stepped { "repetition step" } else { "repetition" }, Align::Left);
    for k in &kinds {
        t.column(k, Align::Right);
    }
    for (r, m) in measurements(cell) {
        let counted = of(m);
        let mut entries = vec![label(r, Some(m), stepped)];
        entries.extend(kinds.iter().map(|k| {
            counted.iter().find(|(have, _)| have == k).map_or("0".into(), |(_, n)| n.to_string())
        }));
        t.text_row(entries);
    }
    table(page, &t);
}

/// The client's verdict per repetition and the facts it was judged on: a row per
/// repetition (and step, where each step was judged), a column per fact.
fn health(page: &mut String, cell: &StoredCell) {
    page.push_str("<h4>client health</h4>\n");
    let mut verdicts = Vec::new();
    let mut rows: Vec<(String, crate::json_facts::Facts)> = Vec::new();
    for r in &cell.repetitions {
        let c = &r.record.client;
        let n = r.record.repetition.saturating_add(1);
        verdicts.push(format!(
            "repetition {n}: {} {}: {}{}",
            c.tool,
            c.version,
            c.judgement.as_ref().map_or("no verdict", |j| j.verdict.as_str()),
            c.judgement
                .as_ref()
                .and_then(|j| j.reason.as_deref())
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        ));
        let labels: Vec<&str> = r.record.measurements.iter().map(|m| m.label.as_str()).collect();
        for (step, facts) in crate::json_facts::flatten(c.health.as_ref(), &labels) {
            rows.push((step.map_or_else(|| n.to_string(), |s| format!("{n} {s}")), facts));
        }
    }
    list(page, &verdicts);
    let mut keys: Vec<&str> = Vec::new();
    for (_, facts) in &rows {
        for (k, _) in facts {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    if keys.is_empty() {
        return;
    }
    let mut t = Table::with_role(Role::Health);
    t.column("repetition", Align::Left);
    for k in &keys {
        t.column(k, Align::Right);
    }
    for (label, facts) in &rows {
        let mut entries = vec![label.clone()];
        entries.extend(keys.iter().map(|k| {
            facts
                .iter()
                .find(|(have, _)| have == k)
                .map_or_else(|| "-".to_owned(), |(_, v)| v.clone())
        }));
        t.text_row(entries);
    }
    table(page, &t);
}

fn servers(page: &mut String, cell: &StoredCell) {
    page.push_str("<h4>server processes</h4>\n");
    let mut t = Table::with_role(Role::Servers);
    t.columns(&[
        ("repetition", Align::Left),
        ("name", Align::Left),
        ("program", Align::Left),
        ("version", Align::Left),
        ("cpus", Align::Left),
        ("cpu seconds", Align::Right),
    ]);
    for r in &cell.repetitions {
        for s in &r.record.servers {
            t.text_row(vec![
                (r.record.repetition.saturating_add(1)).to_string(),
                s.name.clone(),
                s.program.clone(),
                s.version.clone(),
                s.cpus.clone().unwrap_or_else(|| "any".into()),
                s.cpu_seconds.map_or("-".into(), |c| format!("{c:.3}")),
            ]);
        }
    }
    if t.rows.is_empty() {
        page.push_str("<p>None recorded.</p>\n");
    } else {
        table(page, &t);
    }
}

fn network(page: &mut String, cell: &StoredCell) {
    let findings: Vec<String> =
        cell.repetitions
            .iter()
            .flat_map(|r| {
                r.record.network_findings().iter().map(move |f| {
                    format!("repetition {}: {f}", r.record.repetition.saturating_add(1))
                })
            })
            .collect();
    if !findings.is_empty() {
        page.push_str("<h4>what the network path capped or disturbed</h4>\n");
        list(page, &findings);
    }
}

/// Each repetition's command lines as they ran, and what the disclosure's placeholders
/// stand for in it (the disclosure shows each server command line and file once).
fn command_lines(page: &mut String, cell: &StoredCell, owns: &[Own]) {
    let mut text = String::new();
    for (j, r) in cell.repetitions.iter().enumerate() {
        let values = owns.get(j).and_then(Own::describe).map(|d| format!(" ({d})"));
        let _ = writeln!(
            text,
            "# repetition {}{}\nclient ({}{}{}{}): {}",
            r.record.repetition.saturating_add(1),
            values.unwrap_or_default(),
            r.record.client.tool,
            r.record.client.cpus.as_deref().map(|c| format!(", cpus {c}")).unwrap_or_default(),
            r.record.client.io.as_ref().map(|io| format!(", I/O: {io}")).unwrap_or_default(),
            // The trace its requests carried, to find the server's traces of this repetition.
            r.record.client.trace_id.as_ref().map(|t| format!(", trace {t}")).unwrap_or_default(),
            shell_words(&r.record.client.argv)
        );
        for s in &r.record.servers {
            let _ = writeln!(text, "{} ({}): {}", s.name, s.program, shell_words(&s.argv));
        }
    }
    let _ = writeln!(
        page,
        "<details class=\"commands\"><summary>command lines</summary><pre>{}</pre></details>",
        escape(text.trim_end())
    );
}

/// The arguments as a shell would need them: plain words as they are, others quoted.
pub(crate) fn shell_words(argv: &[String]) -> String {
    let word = |a: &String| {
        let plain = !a.is_empty()
            && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
        if plain {
            a.clone()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    argv.iter().map(word).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let argv: Vec<String> =
            ["nginx", "-g", "daemon off;", "it's", ""].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(shell_words(&argv), r"nginx -g 'daemon off;' 'it'\''s' ''");
    }
}
