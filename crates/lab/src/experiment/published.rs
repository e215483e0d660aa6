//! `[published]`: the figures an article published, checked against the matrix, so that
//! every figure compares with at least one cell, compares like with like (a stepped load's
//! peak with a peak, connections per second with a load that opens one per request), and no
//! cell gets two figures of one measure.

use std::collections::BTreeMap;

use herd_store::{Measure, Published, PublishedFigure};

use super::error::{choices, Errors};
use super::raw::{RawExperiment, RawFigure};
use super::{Experiment, ExperimentError};
use crate::client::Tool;
use crate::load::Shape;
use crate::matrix::{self, Cell};

pub(super) fn build(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    e: &Experiment,
) -> Result<Option<Published>, ExperimentError> {
    let Some(spanned) = &raw.published else { return Ok(None) };
    let p = spanned.get_ref();
    if p.source.trim().is_empty() {
        return Err(errs.at(
            spanned.span(),
            "[published] source is empty: say where and when the figures were published",
        ));
    }
    let percent_of = p
        .percent_of
        .as_ref()
        .map(|po| super::build::one_axis_value(errs, e, po, "published", "percent_of"))
        .transpose()?;
    if p.figures.is_empty() {
        return Err(errs.at(
            spanned.span(),
            "[published] has no figures: add [[published.figures]] with `at` and a figure, e.g. requests_per_second = 1018.85",
        ));
    }

    // Refused cells never run: a figure compares with cells that do.
    let cells = matrix::runnable(e);
    // (cell, measure, what ran then) → line of the figure that gave it: one figure of a
    // measure per cell and system (an article's NT and its Samba may both stand beside a cell).
    let mut given: BTreeMap<(usize, Measure, Option<String>), usize> = BTreeMap::new();
    let mut figures = Vec::new();
    for f in &p.figures {
        let at_line =
            |message: String| errs.at(f.span(), format!("[[published.figures]] {message}"));
        let line = super::error::line_of(errs.text, f.span().start);
        let figure = figure(e, f.get_ref()).map_err(at_line)?;
        if figure.value(Measure::Percent).is_some() && percent_of.is_none() {
            return Err(at_line(
                "percent needs [published] percent_of, what it is a percentage of, e.g. percent_of = { path = \"direct\" }".into(),
            ));
        }
        let matched: Vec<&Cell> =
            cells.iter().filter(|c| figure.matches(&c.axis_values())).collect();
        if matched.is_empty() {
            return Err(at_line(format!(
                "at {} matches no cell of the matrix that runs (left out by [[exclude]], or refused?)",
                at_text(&figure.at)
            )));
        }
        for cell in matched {
            for (measure, _) in &figure.values {
                comparable(*measure, cell, percent_of.as_ref(), &cells).map_err(&at_line)?;
                let key = (cell.index, *measure, figure.ran.clone());
                if let Some(before) = given.insert(key, line) {
                    return Err(at_line(format!(
                        "cell {} gets a second `{}` figure (the first is on line {before}): narrow one figure's `at`, or say what ran then (`ran`) where the article measured two systems",
                        cell.key,
                        measure.key()
                    )));
                }
            }
        }
        figures.push(figure);
    }
    Ok(Some(Published {
        source: p.source.trim().to_owned(),
        setup: p.setup.clone(),
        percent_of,
        figures,
    }))
}

/// The figure as stored: `at` in axis order, figures in measure order.
fn figure(e: &Experiment, f: &RawFigure) -> Result<PublishedFigure, String> {
    if f.at.is_empty() {
        return Err(
            "`at` is empty: name the cells it compares with, e.g. at = { server = \"nginx\" }"
                .into(),
        );
    }
    let mut at = Vec::new();
    for (axis, value) in &f.at {
        at.push((super::build::axis_value(&e.axes, axis, value)?, value.clone()));
    }
    at.sort_by_key(|(axis, _)| e.axes.iter().position(|a| a.name == *axis));
    let at: Vec<(String, String)> =
        at.into_iter().map(|(a, v)| (a.as_str().to_owned(), v)).collect();
    let given = [
        (Measure::Seconds, f.seconds),
        (Measure::Percent, f.percent),
        (Measure::RequestsPerSecond, f.requests_per_second),
        (Measure::ConnectionsPerSecond, f.connections_per_second),
        (Measure::KbPerSecond, f.kb_per_second),
        (Measure::MbitPerSecond, f.mbit_per_second),
        (Measure::PeakRequestsPerSecond, f.peak_requests_per_second),
        (Measure::PeakMbitPerSecond, f.peak_mbit_per_second),
        (Measure::ClientsAtPeak, f.clients_at_peak),
    ];
    let mut values = Vec::new();
    for (measure, value) in given {
        let Some(v) = value else { continue };
        if !v.is_finite() || v < 0.0 {
            return Err(format!("{} = {v}: a published figure is a number ≥ 0", measure.key()));
        }
        values.push((measure, v));
    }
    if values.is_empty() {
        let keys: Vec<&str> = Measure::ALL.iter().map(|m| m.key()).collect();
        return Err(format!("at {} gives no figure: add one of {}", at_text(&at), choices(&keys)));
    }
    Ok(PublishedFigure { at, ran: f.ran.clone(), note: f.note.clone(), values })
}

/// Whether today's cell can give the measure the figure gives.
fn comparable(
    measure: Measure,
    cell: &Cell,
    percent_of: Option<&(String, String)>,
    cells: &[Cell],
) -> Result<(), String> {
    let stepped = matches!(cell.load.shape, Shape::Steps { .. });
    let key = measure.key();
    if matches!(cell.load.shape, Shape::RateSteps { .. }) {
        // Neither one measurement nor a ramp of clients with a peak: nothing published is.
        return Err(format!(
            "{key} has nothing to compare with in cell {}: its load `{}` is offered rates in \
             steps (`rate_steps`), a measurement per rate",
            cell.key, cell.load_name
        ));
    }
    if measure.needs_steps() && !stepped {
        return Err(format!(
            "{key} compares with the best step of a stepped load; cell {}'s load `{}` is not stepped",
            cell.key, cell.load_name
        ));
    }
    if !measure.needs_steps() && stepped {
        return Err(format!(
            "{key} compares with one measurement; cell {}'s load `{}` is stepped: use peak_requests_per_second or clients_at_peak",
            cell.key, cell.load_name
        ));
    }
    measurable(measure, cell)?;
    if let (Measure::Percent, Some((axis, value))) = (measure, percent_of) {
        let here = cell.axis_values();
        if !cells.iter().any(|c| herd_store::is_sibling(&c.axis_values(), &here, axis, value)) {
            return Err(format!(
                "percent of {axis} = \"{value}\": cell {} has no such cell beside it (left out by [[exclude]]?)",
                cell.key
            ));
        }
    }
    Ok(())
}

/// Whether today's run of `cell` gives `measure` a meaning: connections per second only
/// where each request opens a connection, seconds only where the load runs a fixed number
/// of requests (a timed load's length is its setting, not a result).
pub(super) fn measurable(measure: Measure, cell: &Cell) -> Result<(), String> {
    let key = measure.key();
    if measure == Measure::ConnectionsPerSecond && cell.load.keep_alive {
        return Err(format!(
            "{key} needs a load that opens a connection per request; cell {}'s load `{}` keeps connections alive: use requests_per_second",
            cell.key, cell.load_name
        ));
    }
    if let Some(why) = latency_unknown(measure, cell.client) {
        return Err(format!(
            "{key} is a latency percentile, and {why}: cell {} would show none; use p50 or \
             p99 where the client gives them, or herd as the client",
            cell.key
        ));
    }
    if measure == Measure::Seconds && !matches!(cell.load.shape, Shape::Requests { .. }) {
        return Err(format!(
            "{key} needs a load of a fixed number of requests (its length is the result); cell {}'s load `{}` runs for a set time: use requests_per_second",
            cell.key, cell.load_name
        ));
    }
    Ok(())
}

/// Why `client` cannot give the latency percentile `measure`, if it is one the client lacks:
/// herd and ab record every request (ab to the millisecond, in its `-g` file); wrk prints its
/// own p50 and p99 but no histogram; h2load prints no percentile, smbtorture and tbench no
/// latency at all.
fn latency_unknown(measure: Measure, client: Tool) -> Option<&'static str> {
    let latency =
        matches!(measure, Measure::LatencyP50 | Measure::LatencyP99 | Measure::LatencyP999);
    match client {
        _ if !latency => None,
        Tool::Herd | Tool::Ab => None,
        Tool::Wrk if measure != Measure::LatencyP999 => None,
        Tool::Wrk => Some("wrk prints its own p50 and p99 but no histogram to read p99.9 from"),
        Tool::H2load => Some("h2load prints no latency percentile"),
        Tool::Smbtorture | Tool::Tbench => Some("NetBench's clients measure no request latency"),
    }
}

/// `{ server = "nginx", path = "direct" }`, as the file writes it.
fn at_text(at: &[(String, String)]) -> String {
    let pairs: Vec<String> = at.iter().map(|(a, v)| format!("{a} = \"{v}\"")).collect();
    format!("{{ {} }}", pairs.join(", "))
}
