//! The experiment's matrix in the shape the seeds published it (seed 001's table: paths
//! down, servers across, seconds with the percentage of the direct path in parentheses).
//! Each entry is one figure of a row of the experiment (a cell, or a cell's step): the
//! median of its ok repetitions with the 95 % confidence interval of their mean, then in
//! parentheses its share of the baseline beside it, the same cell with the baseline axis
//! at the baseline value.
//!
//! The baseline axis runs down the table when the other axes that vary (and the steps)
//! make few columns ([`MAX_COLUMNS`] at most, or no more than the baseline axis has values);
//! otherwise it runs across, one column per value, and every combination of the others is
//! a row (seed 002's sizes, seed 004's steps).
//!
//! Nothing is hidden: an entry measured with failures is marked `≠` and says how many
//! requests failed, `!` marks a client verdict other than ok and `^` a link that capped the
//! rate, as in the other tables.

use std::collections::BTreeMap;

use herd_stats::repetitions as stats;
use herd_store::{Measure, PublishedFigure, StoredExperiment};

use crate::doc::{Align, Block, Entry, Figure, Role, Table};
use crate::figures::Row;

/// The most columns the other axes may make for the baseline axis to run down the table.
const MAX_COLUMNS: usize = 6;

/// What the percentages are of: the rows with `axis` at `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Baseline {
    pub(crate) axis: String,
    pub(crate) value: String,
}

/// The matrix's heading and table; nothing for an experiment of one row.
pub(crate) fn blocks(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    baseline: &Baseline,
    measure: Measure,
) -> Vec<Block> {
    if rows.len() < 2 {
        return Vec::new();
    }
    // An article's figures for the shown measure, set beside today's (unreadable ones are
    // said in the then-and-now section).
    let published = exp.experiment.published().ok().flatten();
    let then = Then {
        figures: published.as_ref().map(|p| p.figures.as_slice()).unwrap_or_default(),
        percent_of_baseline: published.as_ref().is_some_and(|p| {
            p.percent_of.as_ref().is_some_and(|(a, v)| *a == baseline.axis && *v == baseline.value)
        }),
    };
    let mut any_then = false;
    let stepped = rows.iter().any(|r| r.step.is_some());
    let others: Vec<String> =
        crate::figures::varying_axes(exp).into_iter().filter(|a| *a != baseline.axis).collect();
    // Each row's place: its values on the other axes (and its step), and on the baseline's.
    let other_key = |r: &Row<'_>| -> Vec<String> {
        let mut key: Vec<String> =
            others.iter().map(|a| r.cell.axis(a).unwrap_or("-").to_owned()).collect();
        if stepped {
            key.push(r.step.clone().unwrap_or_else(|| "-".to_owned()));
        }
        key
    };
    let base_value = |r: &Row<'_>| r.cell.axis(&baseline.axis).unwrap_or("-").to_owned();
    // In the rows' order, which is the experiment's declared order.
    let mut combos: Vec<Vec<String>> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let mut at: BTreeMap<(Vec<String>, String), &Row<'_>> = BTreeMap::new();
    for r in rows {
        let (k, v) = (other_key(r), base_value(r));
        if !combos.contains(&k) {
            combos.push(k.clone());
        }
        if !values.contains(&v) {
            values.push(v.clone());
        }
        at.entry((k, v)).or_insert(r);
    }
    let mut entry = |combo: &[String], value: &str| -> Entry {
        let Some(row) = at.get(&(combo.to_vec(), value.to_owned())) else {
            return Entry::default();
        };
        let entry = figure(row, base_of(row, rows, baseline), measure, &then);
        any_then |= entry.then.is_some();
        entry
    };

    let mut table = Table::with_role(Role::Matrix);
    // The narrower way round: down when the rest makes few columns, or fewer than the
    // baseline's values would.
    if combos.len() <= MAX_COLUMNS || combos.len() <= values.len() {
        table.column(&baseline.axis, Align::Left);
        for combo in &combos {
            // Nothing else varies: one column, of the figure itself.
            // A step's `-` (a row measured without steps) says nothing in a heading.
            let named: Vec<&str> = combo.iter().map(String::as_str).filter(|v| *v != "-").collect();
            let header = if named.is_empty() {
                crate::table::measure_name(measure).to_owned()
            } else {
                named.join(" ")
            };
            table.column(&header, Align::Right);
        }
        for value in &values {
            let mut entries = vec![Entry::from(value.as_str())];
            entries.extend(combos.iter().map(|c| entry(c, value)));
            table.row(entries);
        }
    } else {
        for axis in &others {
            table.column(axis, Align::Left);
        }
        if stepped {
            table.column("step", Align::Left);
        }
        for value in &values {
            table.column(&format!("{}={value}", baseline.axis), Align::Right);
        }
        for combo in &combos {
            let mut entries: Vec<Entry> = combo.iter().map(|v| Entry::from(v.as_str())).collect();
            entries.extend(values.iter().map(|v| entry(combo, v)));
            table.row(entries);
        }
    }
    vec![
        Block::Heading(format!(
            "{} by {}: median ±95 % confidence interval; in parentheses: {} {}={}'s{}",
            crate::table::measure_name(measure),
            axes_named(&baseline.axis, &others, stepped),
            share(measure),
            baseline.axis,
            baseline.value,
            if any_then { "; then …: the article's published figure, not measured" } else { "" },
        )),
        Block::Table(table),
    ]
}

/// The row beside `row` that is its baseline; None for a baseline row itself.
pub(crate) fn base_of<'r, 'a>(
    row: &Row<'a>,
    rows: &'r [Row<'a>],
    baseline: &Baseline,
) -> Option<&'r Row<'a>> {
    if row.cell.axis(&baseline.axis) == Some(baseline.value.as_str()) {
        return None;
    }
    row.sibling(rows, &baseline.axis, &baseline.value)
}

/// The article's figures, where the experiment re-runs one.
pub(crate) struct Then<'p> {
    figures: &'p [PublishedFigure],
    /// Its percentages are of the matrix's baseline, so they can stand beside ours.
    percent_of_baseline: bool,
}

impl Then<'_> {
    /// No article: entries without a published figure.
    pub(crate) const NONE: Then<'static> = Then { figures: &[], percent_of_baseline: false };
}

/// The entry of `row`, with its share of `base` (None: it is the baseline, or has none) and
/// the article's figure for its cell, if any. The matrix's entries and the comparison's are
/// made here, so they carry the same marks.
pub(crate) fn figure(
    row: &Row<'_>,
    base: Option<&Row<'_>>,
    measure: Measure,
    then: &Then<'_>,
) -> Entry {
    let samples = row.samples(measure);
    let Some(median) = stats::median(samples) else {
        let none = if row.not_held.is_empty() { "-" } else { "-⊘" };
        return Entry::from(failed_suffix(none.to_owned(), row));
    };
    let mut text = format!(
        "{}{}{}{}{}",
        row.mark(),
        if row.coarse_clock.is_some() { "~" } else { "" },
        crate::table::format_measure(measure, median),
        if row.client_not_ok() { "!" } else { "" },
        if row.link_bound { "^" } else { "" },
    );
    if !row.not_held.is_empty() {
        text.push('⊘');
    }
    if let Some(w) = stats::confidence_interval_95(samples).and_then(|ci| ci.relative_half_width())
    {
        text.push_str(&format!(" ±{:.1}%", w * 100.0));
    }
    if row.unsettled {
        text.push('?');
    }
    let shown = base.and_then(|b| percent(row, b, measure));
    if let Some(p) = shown {
        text.push_str(&format!(" ({p:.1} %)"));
    }
    // The entry's share colours it by how much better it is: for a latency or a cost, the
    // baseline's figure over the row's (120 % of the baseline's p99 is 83 % as good).
    let lower = measure.lower_is_better() && measure != Measure::Seconds;
    let percent = shown.map(|p| if lower { 1e4 / p } else { p });
    let figure =
        Figure { cell: row.cell.key.clone(), step: row.step.clone(), measure, value: median };
    // A ramp's step has no published twin: the articles give a ramp's peak, drawn on its
    // chart instead.
    let published = then
        .figures
        .iter()
        .filter(|_| !row.is_ramp_step())
        .find_map(|f| Some((f.matches(&row.cell.axes).then_some(f)?, f.value(measure)?)));
    let published = published.map(|(f, value)| {
        let mut shown = crate::then_now::format_then(measure, value);
        // The baseline's own (100 %) says nothing, as today's entry beside it gives none.
        let shared = then.percent_of_baseline && base.is_some();
        if let Some(p) = f.value(Measure::Percent).filter(|_| shared) {
            shown.push_str(&format!(" ({p:.1} %)"));
        }
        shown
    });
    Entry { text: failed_suffix(text, row), percent, figure: Some(figure), then: published }
}

/// The row's figure as a percentage of the baseline's. For seconds it is the speed's
/// (requests per second) share, as seed 001 gave it: the baseline's time over the row's
/// when both ran as many requests, and still right when they did not.
pub(crate) fn percent(row: &Row<'_>, base: &Row<'_>, measure: Measure) -> Option<f64> {
    let of = if measure == Measure::Seconds { Measure::RequestsPerSecond } else { measure };
    let (r, b) = (stats::median(row.samples(of))?, stats::median(base.samples(of))?);
    let ratio = r / b;
    ratio.is_finite().then_some(ratio * 100.0)
}

fn failed_suffix(text: String, row: &Row<'_>) -> String {
    let failed = row.failed.saturating_add(row.non_2xx);
    if failed == 0 {
        text
    } else {
        format!("{text} {failed} failed")
    }
}

fn share(measure: Measure) -> &'static str {
    match measure {
        Measure::Seconds => "speed (requests/s) as a percentage of",
        m if m.lower_is_better() => "percentage (lower is better) of",
        _ => "percentage of",
    }
}

/// `path and server`, `server, workload and step`.
fn axes_named(baseline: &str, others: &[String], stepped: bool) -> String {
    let mut names: Vec<&str> = vec![baseline];
    names.extend(others.iter().map(String::as_str));
    if stepped {
        names.push("step");
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => baseline.to_owned(),
    }
}
