//! "Then and now": the figures an article published (`herd_store::Published`, stored with
//! the experiment that re-runs it) beside the same figures computed from today's run. One
//! row per cell, so cells the article did not measure (seed 001's `routed`) show today's
//! figures with a blank "then"; columns only for the measures the article gave.

use herd_stats::repetitions as stats;
use herd_store::{Measure, Published, PublishedFigure, StoredCell, StoredExperiment};

use crate::doc::{Align, Block, Doc, Role, Table};
use crate::figures::Row;

/// Adds the section, when the experiment has published figures.
pub(crate) fn add(exp: &StoredExperiment, rows: &[Row<'_>], doc: &mut Doc) {
    let published = match exp.experiment.published() {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(why) => return doc.push(Block::Heading(format!("then and now: {why}"))),
    };
    let reference =
        exp.experiment.reference.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
    doc.push(Block::Heading(format!(
        "then and now{reference}: published figures beside today's (medians of the ok repetitions)"
    )));
    let mut about = vec![format!("published  {}", published.source)];
    if let Some(setup) = &published.setup {
        about.push(format!("then       {setup}"));
    }
    doc.push(Block::Items(about));

    let measures: Vec<Measure> = Measure::ALL
        .into_iter()
        .filter(|m| published.figures.iter().any(|f| f.value(*m).is_some()))
        .collect();
    let axes = crate::figures::varying_axes(exp);
    let with_ran = published.figures.iter().any(|f| f.ran.is_some());
    let mut table = Table::with_role(Role::ThenNow);
    for axis in &axes {
        table.column(axis, Align::Left);
    }
    if with_ran {
        table.column("ran then", Align::Left);
    }
    for m in &measures {
        let label = label(*m, &published);
        table.column(&format!("{label} then"), Align::Right);
        table.column(&format!("{label} now"), Align::Right);
    }
    // Each distinct note once, numbered; rows name theirs in the last column.
    let mut notes: Vec<&str> = Vec::new();
    for note in published.figures.iter().filter_map(|f| f.note.as_deref()) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if !notes.is_empty() {
        table.column("notes", Align::Left);
    }
    // An article that gave its peaks in Mbit/s (NetBench) has today's peak, and the clients
    // at it, read by Mbit/s in every row, those of cells it did not measure too.
    let mbit_peak = published.figures.iter().any(|f| f.value(Measure::PeakMbitPerSecond).is_some());
    for cell in &exp.cells {
        for figures in by_system(&published.figures, cell) {
            let mut entries: Vec<String> =
                axes.iter().map(|a| cell.axis(a).unwrap_or("-").to_owned()).collect();
            if with_ran {
                let mut ran: Vec<&str> = Vec::new();
                for r in figures.iter().filter_map(|f| f.ran.as_deref()) {
                    if !ran.contains(&r) {
                        ran.push(r);
                    }
                }
                entries.push(ran.join("; "));
            }
            for m in &measures {
                let then = figures.iter().find_map(|f| f.value(*m));
                entries.push(then.map_or_else(String::new, |v| format_then(*m, v)));
                entries.push(match now(*m, cell, rows, &published, mbit_peak) {
                    Some(Now { value, not_comparable, client_not_ok }) => format!(
                        "{}{}{}",
                        if not_comparable { "≠" } else { "" },
                        crate::table::format_measure(*m, value),
                        if client_not_ok { "!" } else { "" }
                    ),
                    None => "-".to_owned(),
                });
            }
            if !notes.is_empty() {
                let mut marks: Vec<usize> = figures
                    .iter()
                    .filter_map(|f| {
                        Some(notes.iter().position(|n| Some(*n) == f.note.as_deref())? + 1)
                    })
                    .collect();
                marks.sort_unstable();
                marks.dedup();
                let marks: Vec<String> = marks.iter().map(|n| format!("[{n}]")).collect();
                entries.push(marks.join(""));
            }
            table.text_row(entries);
        }
    }
    doc.push(Block::Table(table));

    if !notes.is_empty() {
        doc.push(Block::Subheading("notes on the published figures:".to_owned()));
        doc.push(Block::Items(
            notes.iter().enumerate().map(|(i, note)| format!("[{}] {note}", i + 1)).collect(),
        ));
    }
    doc.push(Block::Text(vec![
        "(now: - where today's run gave no figure; ≠ where it was measured with failed requests; ! where the client's verdict was not ok: see the table above)".to_owned(),
    ]));
}

/// The published figures of `cell`, one group per system that ran then (an article's NT and
/// its Samba, beside the same cell of today's), each its own row; one empty group (a row
/// with a blank "then") for a cell the article did not measure.
fn by_system<'p>(
    figures: &'p [PublishedFigure],
    cell: &StoredCell,
) -> Vec<Vec<&'p PublishedFigure>> {
    let mut groups: Vec<Vec<&PublishedFigure>> = Vec::new();
    for f in figures.iter().filter(|f| f.matches(&cell.axes)) {
        match groups.iter_mut().find(|g| g.first().is_some_and(|first| first.ran == f.ran)) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    if groups.is_empty() {
        groups.push(Vec::new());
    }
    groups
}

/// Today's figure, and what the rows under it say about it.
struct Now {
    value: f64,
    /// Measured with failed requests or non-2xx answers.
    not_comparable: bool,
    /// The client judged the run other than ok (client-bound, suspect): the figure may be
    /// the client's ceiling, not the server's.
    client_not_ok: bool,
}

/// The measure computed from today's repetitions of `cell`: its one row's figures, or for a
/// peak its best step's. The best step is the one with the most requests/s, or Mbit/s for
/// a Mbit/s peak and for the clients at it when the article gave that peak (`mbit_peak`).
fn now(
    m: Measure,
    cell: &StoredCell,
    rows: &[Row<'_>],
    published: &Published,
    mbit_peak: bool,
) -> Option<Now> {
    let cell_rows: Vec<&Row<'_>> = rows.iter().filter(|r| r.cell.key == cell.key).collect();
    let of = |row: &Row<'_>, value: f64| Now {
        value,
        not_comparable: row.not_comparable,
        client_not_ok: row.client_not_ok(),
    };
    if m.needs_steps() {
        let by_mbit = m == Measure::PeakMbitPerSecond || (m == Measure::ClientsAtPeak && mbit_peak);
        let figure = |r: &Row<'_>| {
            if by_mbit {
                stats::median(r.samples(Measure::MbitPerSecond))
            } else {
                r.median_rate()
            }
        };
        let (peak, best) = cell_rows
            .iter()
            .filter_map(|r| Some((*r, figure(r)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let value = if m == Measure::ClientsAtPeak { f64::from(peak.concurrency?) } else { best };
        return Some(of(peak, value));
    }
    // A single figure compares with a cell measured once, not in steps.
    let [row] = cell_rows[..] else { return None };
    Some(match m {
        Measure::Percent => {
            let (axis, value) = published.percent_of.as_ref()?;
            let base = row.sibling(rows, axis, value)?;
            Now {
                value: crate::matrix::percent(row, base, Measure::RequestsPerSecond)?,
                not_comparable: row.not_comparable || base.not_comparable,
                client_not_ok: row.client_not_ok() || base.client_not_ok(),
            }
        }
        _ => of(row, stats::median(row.samples(m))?),
    })
}

fn label(m: Measure, p: &Published) -> String {
    match (m, &p.percent_of) {
        (Measure::Percent, Some((_, value))) => format!("% of {value}"),
        (Measure::Percent, None) => "%".into(),
        _ => crate::table::measure_name(m).into(),
    }
}

/// A published rate as printed (1018.85), the rest as today's.
pub(crate) fn format_then(m: Measure, v: f64) -> String {
    match m {
        Measure::Seconds | Measure::Percent | Measure::ClientsAtPeak => {
            crate::table::format_measure(m, v)
        }
        _ => v.to_string(),
    }
}
