//! Which charts an experiment gets, as the seeds drew theirs: against file size on a log
//! axis where a workload sweeps sizes (seed 002: connections/s and KiB/s, one line per path
//! or server), against clients where loads are stepped (seed 004: throughput and failed
//! requests per step; one pair of charts per workload where the ramps run on several, each
//! with a line per server, protocol, … as the other axes vary). The figures are the rows' medians (`figures.rs`), the same the
//! tables print; an article's figures that have a place on a chart are drawn beside them as
//! published points, one series per cell they name.

use herd_stats::repetitions as stats;
use herd_store::{Measure, PublishedFigure, StoredExperiment};

use crate::figures::Row;
use crate::svg_chart::{Axis, LineChart, Scale, Series, Style, Units};

/// The axis a size sweep varies (the lab's sweeps are workloads).
const SWEEP_AXIS: &str = "workload";

/// The experiment's charts over all its rows, in a fixed order.
pub(crate) fn experiment_charts(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    measure: Measure,
) -> Vec<LineChart> {
    // Published figures that cannot be read are said in the then-and-now section; the
    // charts then show today's alone.
    let figures: Vec<PublishedFigure> =
        exp.experiment.published().ok().flatten().map(|p| p.figures).unwrap_or_default();
    let stepped = rows.iter().any(|r| r.step.is_some());
    let mut charts = Vec::new();
    if swept(rows) {
        let rate = if measure == Measure::ConnectionsPerSecond {
            Measure::ConnectionsPerSecond
        } else {
            Measure::RequestsPerSecond
        };
        let size = |r: &Row<'_>| Some(herd_store::sweep_size(r.cell.axis(SWEEP_AXIS)?)? as f64);
        for (m, y_scale) in [(rate, Scale::Linear), (Measure::KbPerSecond, Scale::Log10)] {
            let what = crate::table::measure_name(m);
            let mut series = by_series(exp, rows, SWEEP_AXIS, stepped, |r| {
                Some((size(r)?, stats::median(r.samples(m))?))
            });
            series.extend(published(exp, &figures, SWEEP_AXIS, |f| {
                let (_, label) = f.at.iter().find(|(a, _)| a == SWEEP_AXIS)?;
                Some((herd_store::sweep_size(label)? as f64, f.value(m)?))
            }));
            charts.push(LineChart {
                title: format!("{what} against file size"),
                x: Axis { label: "file size".into(), scale: Scale::Log2, units: Units::Bytes },
                y: Axis { label: what.into(), scale: y_scale, units: Units::Number },
                series,
            });
        }
    }
    // Only cells measured in steps draw against clients: a cell of one load beside a ramp
    // would be a lone point (the quick start's sizes beside its ramp).
    if rows.iter().any(|r| r.is_ramp_step() && r.concurrency.is_some()) {
        for panel in ramp_panels(rows) {
            charts.extend(ramp_charts(exp, rows, &figures, panel, measure));
        }
    }
    charts
}

/// The workloads whose stepped rows get charts of their own, in the rows' order: each one
/// when the ramps span several (the rates of a small page and of 1 MiB on one axis would
/// flatten the smaller, and the lines to compare, protocols or servers, are those of one
/// page), else one panel of every row (None).
fn ramp_panels<'r>(rows: &'r [Row<'_>]) -> Vec<Option<&'r str>> {
    let mut workloads: Vec<&str> = Vec::new();
    for w in rows.iter().filter(|r| r.is_ramp_step()).filter_map(|r| r.cell.axis(SWEEP_AXIS)) {
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    if workloads.len() > 1 {
        workloads.into_iter().map(Some).collect()
    } else {
        vec![None]
    }
}

/// Throughput and failures against clients, of the stepped rows of `panel`'s workload (of
/// every stepped row: None); in a panel, the workload is in the title, not the series' names.
/// Throughput is requests/s, or Mbit/s where the experiment measures that (NetBench's own
/// chart: throughput in Mbit/s against clients), with the article's peaks in the same unit.
fn ramp_charts(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    figures: &[PublishedFigure],
    panel: Option<&str>,
    measure: Measure,
) -> [LineChart; 2] {
    let (rate, peak) = match measure {
        Measure::MbitPerSecond => (Measure::MbitPerSecond, Measure::PeakMbitPerSecond),
        _ => (Measure::RequestsPerSecond, Measure::PeakRequestsPerSecond),
    };
    let what = crate::table::measure_name(rate);
    let in_panel =
        |r: &Row<'_>| r.is_ramp_step() && panel.is_none_or(|w| r.cell.axis(SWEEP_AXIS) == Some(w));
    let (named_by, title) = match panel {
        Some(w) => (SWEEP_AXIS, format!(", {SWEEP_AXIS}={w}")),
        None => ("", String::new()),
    };
    let clients = Axis { label: "clients".into(), scale: Scale::Log2, units: Units::Number };
    let mut throughput = by_series(exp, rows, named_by, false, |r| {
        in_panel(r).then_some(())?;
        Some((f64::from(r.concurrency?), stats::median(r.samples(rate))?))
    });
    let at_panel = |f: &PublishedFigure| match panel {
        Some(w) => f.at.iter().all(|(a, v)| a != SWEEP_AXIS || herd_store::names_value(v, w)),
        None => true,
    };
    throughput.extend(published(exp, figures, named_by, |f| {
        at_panel(f).then_some(())?;
        Some((f.value(Measure::ClientsAtPeak)?, f.value(peak)?))
    }));
    [
        LineChart {
            title: format!("{what} against clients{title}"),
            x: clients.clone(),
            y: Axis { label: what.into(), scale: Scale::Linear, units: Units::Number },
            series: throughput,
        },
        LineChart {
            title: format!(
                "failed requests and non-2xx answers against clients{title} (all repetitions)"
            ),
            x: clients,
            y: Axis { label: "failed".into(), scale: Scale::Linear, units: Units::Number },
            series: by_series(exp, rows, named_by, false, |r| {
                in_panel(r).then_some(())?;
                Some((f64::from(r.concurrency?), r.failed.saturating_add(r.non_2xx) as f64))
            }),
        },
    ]
}

/// Whether the rows sweep file sizes: at least two sizes on the sweep axis.
fn swept(rows: &[Row<'_>]) -> bool {
    let mut sizes = rows.iter().filter_map(|r| herd_store::sweep_size(r.cell.axis(SWEEP_AXIS)?));
    sizes.next().is_some_and(|first| sizes.any(|s| s != first))
}

/// One series per combination of the axes that vary but `x_axis` (and of the step, with
/// `with_step`): each series' points from its rows, sorted by x. Rows `point` cannot place
/// (another workload beside the sweep) are left out.
fn by_series(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    x_axis: &str,
    with_step: bool,
    point: impl Fn(&Row<'_>) -> Option<(f64, f64)>,
) -> Vec<Series> {
    let axes: Vec<String> =
        crate::figures::varying_axes(exp).into_iter().filter(|a| a != x_axis).collect();
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let Some(p) = point(r) else { continue };
        let mut name: Vec<String> =
            axes.iter().filter_map(|a| Some(format!("{a}={}", r.cell.axis(a)?))).collect();
        if with_step {
            // A cell measured in one go has no step label to name.
            name.extend(r.step.as_ref().filter(|s| !s.is_empty()).map(|s| format!("step {s}")));
        }
        let name = if name.is_empty() { "measured".to_owned() } else { name.join(" ") };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(p),
            None => {
                series.push(Series { name, style: Style::Measured, twin: None, points: vec![p] })
            }
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

/// The published figures `point` can place, one series per cell they name (its axes that
/// vary, but `x_axis`, and what ran then).
fn published(
    exp: &StoredExperiment,
    figures: &[PublishedFigure],
    x_axis: &str,
    point: impl Fn(&PublishedFigure) -> Option<(f64, f64)>,
) -> Vec<Series> {
    let varying = crate::figures::varying_axes(exp);
    let mut series: Vec<Series> = Vec::new();
    for f in figures {
        let Some(p) = point(f) else { continue };
        let at: Vec<String> =
            f.at.iter()
                .filter(|(a, _)| varying.contains(a) && a != x_axis)
                .map(|(a, v)| format!("{a}={v}"))
                .collect();
        let ran = f.ran.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
        let name = format!("published: {}{ran}", at.join(" "));
        // The measured series of the same cells, named as `by_series` names it, where the
        // figure names every axis that series is drawn by.
        let twin: Option<Vec<String>> = varying
            .iter()
            .filter(|a| *a != x_axis)
            .map(|a| f.at.iter().find(|(n, _)| n == a).map(|(_, v)| format!("{a}={v}")))
            .collect();
        let twin = twin.filter(|t| !t.is_empty()).map(|t| t.join(" "));
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(p),
            None => series.push(Series { name, style: Style::Published, twin, points: vec![p] }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}
