//! `[runner] controls = N` and `control = { … }`: which cell an experiment measures again as
//! its own A/A twin, and how often (issue 33; Abedi & Brecht, ICPE 2017: common methods
//! called two identical systems 38 % apart). The twin's runs against its cell's say how far
//! two identical configurations come apart on this machine, and so what difference a report
//! can tell from noise (`herd_stats::noise`).
//!
//! N is 2 to 20: one run gives no spread of its own, and beyond 20 the twin would cost more
//! than the cells it is there to judge. The cell is the one `control` names (axis values, as
//! few as name one cell that runs), else the `[report] baseline`'s when that names exactly
//! one cell (the one every other is compared with), else the matrix's first cell that runs.
//! It is resolved here, once, so that a file naming no cell or several is refused before
//! anything runs, and the twin's key is fixed with the experiment.

use super::build::axis_value;
use super::error::Errors;
use super::raw::RawExperiment;
use super::{Controls, Experiment, ExperimentError};
use crate::matrix::{runnable, Cell};

/// The fewest and the most runs of the twin.
const RUNS: std::ops::RangeInclusive<i64> = 2..=20;

pub(super) fn build(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    e: &Experiment,
) -> Result<Option<Controls>, ExperimentError> {
    let r = &raw.runner;
    let Some(n) = &r.controls else {
        return match &r.control {
            Some(c) => Err(errs.at(
                c.span(),
                "[runner] control picks the cell of the A/A control: add [runner] controls = N \
                 (how often its twin runs, 2 to 20, e.g. controls = 3)",
            )),
            None => Ok(None),
        };
    };
    let runs = *n.get_ref();
    if !RUNS.contains(&runs) {
        return Err(errs.at(
            n.span(),
            format!(
                "[runner] controls = {runs}: the A/A control's twin runs 2 to 20 times (one gives \
                 no spread); write e.g. controls = 3, or leave controls out for no control"
            ),
        ));
    }
    let cells = runnable(e);
    let of = match &r.control {
        Some(table) => {
            let mut wanted = Vec::new();
            for (axis, value) in table.get_ref() {
                axis_value(&e.axes, axis, value)
                    .map_err(|why| errs.at(table.span(), format!("[runner] control: {why}")))?;
                wanted.push((axis.as_str(), value.as_str()));
            }
            if wanted.is_empty() {
                return Err(errs.at(
                    table.span(),
                    "[runner] control is empty: name the cell by its axis values, e.g. control = \
                     { server = \"nginx\" }, or leave it out for the baseline's cell",
                ));
            }
            let matching: Vec<&Cell> = cells.iter().filter(|c| matches(c, &wanted)).collect();
            match matching.as_slice() {
                [one] => one.key.clone(),
                [] => {
                    return Err(errs.at(
                        table.span(),
                        "[runner] control names no cell that runs: name one of the matrix's cells \
                         (`herd lab run --dry-run` lists them)",
                    ))
                }
                [first, ..] => {
                    let keys: Vec<&str> = matching.iter().take(3).map(|c| c.key.as_str()).collect();
                    return Err(errs.at(
                        table.span(),
                        format!(
                            "[runner] control names {} cells ({}{}): add axis values until it \
                             names one, e.g. control = {{ {} }}",
                            matching.len(),
                            keys.join("; "),
                            if matching.len() > 3 { "; …" } else { "" },
                            selector(first)
                        ),
                    ));
                }
            }
        }
        None => match default_cell(e, &cells) {
            Some(c) => c.key.clone(),
            None => return Ok(None), // no cell runs: the lab refuses the experiment itself
        },
    };
    // Within RUNS, checked above.
    Ok(Some(Controls { runs: runs as u32, of }))
}

/// The baseline's cell when the baseline names exactly one cell that runs, else the first.
fn default_cell<'c>(e: &Experiment, cells: &'c [Cell]) -> Option<&'c Cell> {
    if let Some((axis, value)) = &e.report.baseline {
        let of_baseline: Vec<&Cell> =
            cells.iter().filter(|c| matches(c, &[(axis.as_str(), value.as_str())])).collect();
        if let [one] = of_baseline.as_slice() {
            return Some(one);
        }
    }
    cells.first()
}

fn matches(c: &Cell, wanted: &[(&str, &str)]) -> bool {
    wanted.iter().all(|(axis, value)| {
        c.values.iter().any(|(a, v)| a.as_str() == *axis && herd_store::names_value(value, v))
    })
}

/// `server = "nginx", load = "c8"`: the cell's every axis value, as a selector to copy.
fn selector(c: &Cell) -> String {
    let pairs: Vec<String> =
        c.values.iter().map(|(a, v)| format!("{} = \"{v}\"", a.as_str())).collect();
    pairs.join(", ")
}
