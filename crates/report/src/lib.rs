//! herd's reports: what the results store holds, rendered for people. Reports never
//! measure and never look at the clock: each is a pure function of a
//! [`herd_store::StoredExperiment`] and the [`Options`], deterministic down to the byte
//! (stable order, fixed float formatting), writing to the `&mut dyn Write` it is given.
//!
//! Brief overview:
//! - A report is built once as a document (`doc.rs`: headings, tables, lists) and rendered
//!   as terminal text, Markdown ([`Format`]) or HTML ([`write_html`]); CSV gives the same
//!   rows' figures as data.
//! - The HTML page (`html.rs`) adds the charts (`charts.rs`, drawn by `svg_chart.rs` and
//!   `svg_dots.rs`),
//!   every cell's details (`html_cells.rs`: each repetition, the latency spectrum of
//!   `spectrum.rs`, status codes, failures, client health, servers, command lines) and a
//!   disclosure (`html_disclosure.rs`: machine, versions, configs, the experiment file).
//! - The matrix (`matrix.rs`), in the seeds' shape: one figure per cell with its 95 %
//!   confidence interval and, in parentheses, its percentage of the baseline beside it.
//! - Where cells ran at a pinned rate, the efficiency matrix (`efficiency.rs`): the server's
//!   CPU µs per request over the repetitions that held their rate.
//! - Every row's figures (`table.rs`): requests per second (median and interval), spread,
//!   latency percentiles, failures, server CPU per request and the client's verdict, then
//!   what the rows cannot show: failed runs by kind (`failed_runs.rs`: "3 of 40 runs
//!   failed: 2 server not ready, 1 verify", each with its reason), client verdicts, path
//!   findings.
//! - Where the lab calibrated network paths (herd serve as a null server), what each path
//!   carries on its own and which rows came close to it (`calibration.rs`).
//! - Where the experiment re-runs a published comparison, a "then and now" section sets
//!   the article's figures (`herd_store::Published`) beside today's, cell by cell.
//! - A history (`history.rs`, [`write_history`]): the experiments stored under one name as
//!   a series per cell, with the change points `herd_stats::change_points` finds and what
//!   differed at each (versions, machine, kernel, config hash).
//! - Where the experiment has an A/A control (`[runner] controls`), its noise floor
//!   (`noise_floor.rs`): the twin is taken out of the experiment before any table sees it,
//!   and every report says what it measured; `--compare` calls a change under its smallest
//!   detectable difference "within noise".
//! - The statistics over repetitions (median, Student t interval, spread) come from
//!   `herd_stats::repetitions`, shared with the lab runner.

mod agents;
mod calibration;
mod charts;
mod client_agreement;
mod compare;
mod connections;
mod csv;
mod doc;
mod efficiency;
mod failed_runs;
mod figures;
mod flame;
mod history;
mod html;
mod html_cells;
mod html_disclosure;
mod json_facts;
mod markdown;
mod matrix;
mod netbench;
mod noise_floor;
mod placeholders;
mod run_definition;
mod server_count;
mod spectrum;
mod svg_chart;
mod svg_dots;
mod table;
mod text;
mod then_now;

use std::io::{self, Write};

use herd_store::{Measure, StoredExperiment, CALIBRATION_SERVER};

pub use compare::Side;
pub use failed_runs::failed_runs_summary;
pub use flame::write_diff as write_diff_profile;
pub use history::MIN_RUNS as HISTORY_MIN_RUNS;
use matrix::Baseline;

/// How a report is shown; by default, as the experiment itself asks (`[report]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `axis=value`: what the percentages are of. None: the experiment's own baseline,
    /// else the first value of the first axis that varies.
    pub baseline: Option<String>,
    /// The figure the matrix shows (one of [`Measure::TABULATED`]). None: the experiment's
    /// own, else requests per second.
    pub measure: Option<Measure>,
}

/// The formats of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For a terminal: aligned columns.
    Text,
    /// GitHub-flavoured Markdown, with pipe tables.
    Markdown,
    /// One line per row with every figure, unformatted.
    Csv,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The options do not fit this experiment; the message says what to give instead.
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes the report of an experiment.
pub fn write(
    exp: &StoredExperiment,
    options: &Options,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let measure = measure(exp, options.measure)?;
    let (exp, noise) = noise_floor::split(exp, measure);
    let exp = exp.as_ref();
    let baseline = baseline(exp, options.baseline.as_deref())?;
    let doc = || table::doc(exp, baseline.as_ref(), measure, noise.as_ref());
    match format {
        Format::Text => text::write(&doc(), out)?,
        Format::Markdown => markdown::write(&doc(), out)?,
        Format::Csv => csv::write(exp, baseline.as_ref(), measure, out)?,
    }
    Ok(())
}

/// Writes one self-contained HTML page with the reports of `exps`, in that order: for each,
/// the document of the other formats (its matrix coloured by share of the baseline), the
/// charts, every cell's details and the disclosure. `source` names where the figures come
/// from on the page (the store's file name); `options` apply to every experiment.
pub fn write_html(
    exps: &[StoredExperiment],
    options: &Options,
    source: &str,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    // Each without its A/A twins, first: the page's sections borrow them.
    let mut split = Vec::new();
    for exp in exps {
        let measure = measure(exp, options.measure)?;
        let (exp, noise) = noise_floor::split(exp, measure);
        split.push((exp, noise, measure));
    }
    let mut sections = Vec::new();
    for (exp, noise, measure) in &split {
        let (exp, measure) = (exp.as_ref(), *measure);
        let baseline = baseline(exp, options.baseline.as_deref())?;
        let (rows, _) = figures::rows(exp);
        let charts = charts::experiment_charts(exp, &rows, measure);
        let doc = table::doc(exp, baseline.as_ref(), measure, noise.as_ref());
        sections.push(html::Section::experiment(exp, doc, charts));
    }
    let intro = format!(
        "From {source}: {} experiment{}, rendered from the store alone; nothing was measured again.",
        exps.len(),
        if exps.len() == 1 { "" } else { "s" }
    );
    html::write(&intro, &sections, out)?;
    Ok(())
}

/// Writes the page of a single run (`herd run --html`, `herd ab --html`): `exp` is the run
/// as an experiment of one cell and one repetition, made in memory; the page is the one
/// [`write_html`] gives, its cell's details open.
pub fn write_run_html(exp: &StoredExperiment, out: &mut dyn Write) -> Result<(), ReportError> {
    let measure = measure(exp, None)?;
    let (rows, _) = figures::rows(exp);
    let charts = charts::experiment_charts(exp, &rows, measure);
    let doc = table::doc(exp, None, measure, None);
    let intro = format!("One run of {}, as measured; nothing was stored.", exp.name());
    html::write(&intro, &[html::Section::experiment(exp, doc, charts)], out)?;
    Ok(())
}

/// Writes the comparison of two sides (`herd report --compare A B`) as terminal text,
/// Markdown or one page; the measure is the one given, else A's experiment's own, else
/// requests per second.
pub fn write_compare(
    a: &Side<'_>,
    b: &Side<'_>,
    measure: Option<Measure>,
    format: CompareFormat,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let measure = self::measure(a.exp, measure)?;
    // Each side without its A/A twins; the noise floor either measured judges the changes.
    let (exp_a, noise_a) = noise_floor::split(a.exp, measure);
    let (exp_b, noise_b) = noise_floor::split(b.exp, measure);
    let a = Side { exp: exp_a.as_ref(), ..a.clone() };
    let b = Side { exp: exp_b.as_ref(), ..b.clone() };
    let noise = compare::Noise::of(&a, noise_a.as_ref(), &b, noise_b.as_ref());
    let doc = compare::doc(&a, &b, measure, noise.as_ref()).map_err(ReportError::Options)?;
    match format {
        CompareFormat::Text => text::write(&doc, out)?,
        CompareFormat::Markdown => markdown::write(&doc, out)?,
        CompareFormat::Html => {
            let section = html::Section {
                anchor: "comparison".to_owned(),
                heading: format!("{} against {}", b.label, a.label),
                name: format!("{} against {}", b.label, a.label),
                exp: None,
                doc,
                charts: Vec::new(),
            };
            let intro = format!(
                "{} against {}, from their stores alone; nothing was measured again.",
                b.label, a.label
            );
            html::write(&intro, &[section], out)?;
        }
    }
    Ok(())
}

/// Writes a history (`herd report --history NAME`): `runs` are the experiments stored under
/// `name`, oldest first; each cell's series of `measure` (the given one, else the latest
/// run's own, else requests per second) with its change points and what differed at each.
/// Returns how many change points were found, for `--fail-on-change`.
pub fn write_history(
    name: &str,
    runs: &[StoredExperiment],
    measure: Option<Measure>,
    settings: &herd_stats::change_points::Settings,
    markdown: bool,
    out: &mut dyn Write,
) -> Result<usize, ReportError> {
    let measure = match runs.last() {
        Some(latest) => self::measure(latest, measure)?,
        None => measure.unwrap_or(Measure::RequestsPerSecond),
    };
    // A history follows the matrix's cells: A/A twins left out.
    let without: Vec<StoredExperiment>;
    let runs = if runs.iter().any(|r| r.cells.iter().any(|c| c.control_of.is_some())) {
        without = runs.iter().map(|r| noise_floor::split(r, measure).0.into_owned()).collect();
        &without[..]
    } else {
        runs
    };
    let (doc, found) = history::doc(name, runs, measure, settings).map_err(ReportError::Options)?;
    if markdown {
        markdown::write(&doc, out)?;
    } else {
        text::write(&doc, out)?;
    }
    Ok(found)
}

/// The formats of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    Text,
    Markdown,
    Html,
}

/// The experiment's charts as SVG documents (title, `<svg>` text), in a fixed order: against
/// file size where a workload sweeps sizes, against clients where loads are stepped, against
/// the offered rate where rates are stepped, the other rows' figures as dots, and the
/// efficiency matrix's.
pub fn charts(
    exp: &StoredExperiment,
    measure: Option<Measure>,
) -> Result<Vec<(String, String)>, ReportError> {
    let measure = self::measure(exp, measure)?;
    let (exp, _) = noise_floor::split(exp, measure);
    let (rows, _) = figures::rows(&exp);
    Ok(charts::experiment_charts(&exp, &rows, measure)
        .into_iter()
        .map(|c| (c.title().to_owned(), c.to_svg()))
        .collect())
}

/// The terminal report as the experiment asks for it (what `herd lab run` prints at the end).
pub fn experiment_table(exp: &StoredExperiment, out: &mut dyn Write) -> Result<(), ReportError> {
    write(exp, &Options::default(), Format::Text, out)
}

/// The measure given, else the experiment's own, else requests per second.
fn measure(exp: &StoredExperiment, given: Option<Measure>) -> Result<Measure, ReportError> {
    let (measure, whose) = match (given, exp.experiment.report.measure) {
        (Some(m), _) => (m, "--measure".to_owned()),
        (None, Some(m)) => (m, format!("experiment {}'s [report] measure", exp.id)),
        (None, None) => return Ok(Measure::RequestsPerSecond),
    };
    Measure::tabulated(measure.key()).map_err(|why| ReportError::Options(format!("{whose}: {why}")))
}

/// The measure named by `key` (`seconds`, `requests_per_second` …), if a table can show it.
pub fn parse_measure(key: &str) -> Result<Measure, String> {
    Measure::tabulated(key)
}

/// The baseline the options name, checked against the experiment; else the experiment's
/// own, where its cells have that value; else the first value of the first axis that
/// varies, never the lab's calibration server (None when nothing varies).
fn baseline(exp: &StoredExperiment, given: Option<&str>) -> Result<Option<Baseline>, ReportError> {
    let e = &exp.experiment;
    let Some(given) = given else {
        if let Some((axis, value)) = &e.report.baseline {
            // An interrupted run may lack the baseline's cells: then the default serves.
            if values_of(exp, axis).contains(value) {
                return Ok(Some(Baseline { axis: axis.clone(), value: value.clone() }));
            }
        }
        let first = e.axes.iter().find_map(|axis| {
            let values = values_of(exp, axis);
            let value = values.iter().find(|v| *v != CALIBRATION_SERVER)?;
            (values.len() > 1).then(|| Baseline { axis: axis.clone(), value: value.clone() })
        });
        return Ok(first);
    };
    let Some((axis, value)) = given.split_once('=') else {
        return Err(ReportError::Options(format!(
            "--baseline {given}: give an axis and one of its values, e.g. --baseline path=direct"
        )));
    };
    if !e.axes.iter().any(|a| a == axis) {
        return Err(ReportError::Options(format!(
            "--baseline {given}: `{axis}` is not an axis of experiment {} ({}): use {}",
            exp.id,
            e.name,
            quoted(&e.axes)
        )));
    }
    let values = values_of(exp, axis);
    if !values.iter().any(|v| v == value) {
        return Err(ReportError::Options(format!(
            "--baseline {given}: `{value}` is not a value of {axis} in experiment {} ({}): use {}",
            exp.id,
            e.name,
            quoted(&values)
        )));
    }
    Ok(Some(Baseline { axis: axis.to_owned(), value: value.to_owned() }))
}

/// The values an axis takes in the stored cells, in the cells' (declared) order.
fn values_of(exp: &StoredExperiment, axis: &str) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for v in exp.cells.iter().filter_map(|c| c.axis(axis)) {
        if !values.iter().any(|have| have == v) {
            values.push(v.to_owned());
        }
    }
    values
}

fn quoted(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    q.join(", ")
}
