//! Which charts an experiment gets, as the seeds drew theirs: against file size on a log
//! axis where a workload sweeps sizes (seed 002: connections/s and KiB/s, one line per path
//! or server), against clients where loads are stepped (seed 004: throughput and failed
//! requests per step; one pair of charts per workload where the ramps run on several, each
//! with a line per server, protocol, … as the other axes vary). The figures are the rows' medians (`figures.rs`), the same the
//! tables print; an article's figures that have a place on a chart are drawn beside them as
//! published points, one series per cell they name.
//!
//! Offered rates in steps (`rate_steps`) are drawn against the offered rate: p50 and p99 (on
//! a log axis, as latency near saturation spans decades), and the achieved rate against the
//! offered, with a dashed `⊘` line at each rate some repetition did not hold. Every other
//! matrix, a plain comparison of servers and protocols included, gets a dot chart of the
//! table's measure with its 95 % intervals (`svg_dots.rs`), and the efficiency matrix one of
//! its own (`efficiency.rs`).

use herd_stats::repetitions as stats;
use herd_store::{Measure, PublishedFigure, StoredExperiment};

use crate::figures::Row;
use crate::svg_chart::{Axis, LineChart, Mark, Scale, Series, Style, Units};
use crate::svg_dots::{Dot, DotChart};

/// A chart of the page: lines against an x, or dots side by side.
#[derive(Debug, Clone)]
pub(crate) enum Chart {
    Lines(LineChart),
    Dots(DotChart),
}

impl Chart {
    pub(crate) fn title(&self) -> &str {
        match self {
            Chart::Lines(c) => &c.title,
            Chart::Dots(c) => &c.title,
        }
    }

    pub(crate) fn to_svg(&self) -> String {
        match self {
            Chart::Lines(c) => c.to_svg(),
            Chart::Dots(c) => c.to_svg(),
        }
    }

    /// What the figure's caption says of it: the diamonds are explained where there are
    /// some (a caption naming what a chart does not draw sends the reader looking for it),
    /// and the `⊘` lines where there are some.
    pub(crate) fn caption(&self) -> &'static str {
        match self {
            Chart::Lines(c) if c.draws_published() => CHART_CAPTION_PUBLISHED,
            Chart::Lines(c) if !c.marks.is_empty() => CHART_CAPTION_MARKS,
            Chart::Lines(_) => CHART_CAPTION,
            Chart::Dots(_) => DOTS_CAPTION,
        }
    }
}

const CHART_CAPTION: &str =
    "Lines: today's figures, the medians of the ok repetitions (as in the tables).";
/// [`CHART_CAPTION`] for a chart that draws published figures too.
const CHART_CAPTION_PUBLISHED: &str = "Lines: today's figures, the medians of the ok \
    repetitions (as in the tables). Hollow diamonds: the article's published figures.";
/// [`CHART_CAPTION`] for a chart that marks rates not held.
const CHART_CAPTION_MARKS: &str = "Lines: today's figures, the medians of the ok repetitions \
    (as in the tables). Dashed ⊘: an offered rate some repetition did not hold (achieved under \
    99 % of it, or 1 % of requests sent 10 ms or more late), left out of that step's latency.";
const DOTS_CAPTION: &str = "Dots: the medians of the ok repetitions; whiskers: the 95 % \
    confidence interval of their mean (as in the tables). ⊘: a rate not held, left out; - with \
    no dot: no figure.";

/// The axis a size sweep varies (the lab's sweeps are workloads).
const SWEEP_AXIS: &str = "workload";

/// The experiment's charts over all its rows, in a fixed order.
pub(crate) fn experiment_charts(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    measure: Measure,
) -> Vec<Chart> {
    let mut charts: Vec<Chart> =
        line_charts(exp, rows, measure).into_iter().map(Chart::Lines).collect();
    charts.extend(rate_step_charts(exp, rows).into_iter().map(Chart::Lines));
    // The rows no line chart draws: a plain comparison (none swept, none stepped) gets a dot
    // chart of the table's figure, as its matrix shows it; beside a sweep, the rows of
    // other workloads (the quick start's pages beside its sizes) get one of their own.
    let sweep = swept(rows);
    let plain: Vec<&Row<'_>> =
        rows.iter().filter(|r| !(r.is_ramp_step() || sweep && in_sweep(r))).collect();
    if plain.len() >= 2 {
        let title = format!(
            "{} by {}",
            crate::table::measure_name(measure),
            crate::figures::varying_axes(exp).join(", ")
        );
        charts.push(Chart::Dots(dot_chart(exp, &plain, measure, title)));
    }
    charts.extend(crate::efficiency::chart(exp, measure).map(Chart::Dots));
    charts
}

/// The charts against file size and against clients.
fn line_charts(exp: &StoredExperiment, rows: &[Row<'_>], measure: Measure) -> Vec<LineChart> {
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
        // A cost or a latency is drawn as the table shows it: at a pinned rate, requests/s
        // against size is a flat line at the rate, and the cost is what varies.
        let drawn = if measure.lower_is_better() && measure != Measure::Seconds {
            vec![(measure, Scale::Linear)]
        } else {
            vec![(rate, Scale::Linear), (Measure::KbPerSecond, Scale::Log10)]
        };
        let size = |r: &Row<'_>| Some(herd_store::sweep_size(r.cell.axis(SWEEP_AXIS)?)? as f64);
        for (m, y_scale) in drawn {
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
                marks: Vec::new(),
            });
        }
    }
    // Only cells measured in steps draw against clients: a cell of one load beside a ramp
    // would be a lone point (the quick start's sizes beside its ramp).
    if rows.iter().any(|r| r.is_client_step() && r.concurrency.is_some()) {
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
    for w in rows.iter().filter(|r| r.is_client_step()).filter_map(|r| r.cell.axis(SWEEP_AXIS)) {
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
    let in_panel = |r: &Row<'_>| {
        r.is_client_step() && panel.is_none_or(|w| r.cell.axis(SWEEP_AXIS) == Some(w))
    };
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
            marks: Vec::new(),
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
            marks: Vec::new(),
        },
    ]
}

/// Latency (p50 and p99) and the achieved rate against the offered rate, of the rows of
/// offered rates in steps; none without such rows. One line per cell and percentile; each
/// offered rate some repetition did not hold is marked on both charts.
fn rate_step_charts(exp: &StoredExperiment, rows: &[Row<'_>]) -> Vec<LineChart> {
    let stepped: Vec<&Row<'_>> = rows.iter().filter(|r| r.is_rate_step()).collect();
    if stepped.is_empty() {
        return Vec::new();
    }
    // The lines are named by the axes that vary between the cells of rate steps (none for
    // one cell: the percentile alone names its lines).
    let axes: Vec<String> = exp
        .experiment
        .axes
        .iter()
        .filter(|a| {
            let mut values = stepped.iter().map(|r| r.cell.axis(a));
            let first = values.next().flatten();
            values.any(|v| v != first)
        })
        .cloned()
        .collect();
    let offered =
        Axis { label: "offered requests/s".into(), scale: Scale::Linear, units: Units::Number };
    let mut latency = Vec::new();
    for (name, samples) in [("p50", Measure::LatencyP50), ("p99", Measure::LatencyP99)] {
        let series = named_series(&axes, rows, false, |r| {
            r.is_rate_step().then_some(())?;
            Some((r.offered?, stats::median(r.samples(samples))? / 1000.0))
        });
        latency.extend(series.into_iter().map(|mut s| {
            s.name =
                if s.name == "measured" { name.to_owned() } else { format!("{name} {}", s.name) };
            s
        }));
    }
    let mut achieved = named_series(&axes, rows, false, |r| {
        r.is_rate_step().then_some(())?;
        Some((r.offered?, stats::median(&r.achieved())?))
    });
    let mut diagonal: Vec<(f64, f64)> =
        stepped.iter().filter_map(|r| r.offered).map(|o| (o, o)).collect();
    diagonal.sort_by(|a, b| a.0.total_cmp(&b.0));
    diagonal.dedup();
    achieved.push(Series {
        name: "offered (a rate held is on this line)".into(),
        style: Style::Reference,
        twin: None,
        points: diagonal,
    });
    let mut marks: Vec<Mark> = Vec::new();
    for r in stepped.iter().filter(|r| !r.not_held.is_empty()) {
        let Some(x) = r.offered else { continue };
        let why: Vec<String> = r
            .not_held
            .iter()
            .map(|(rep, h)| {
                format!("{} repetition {}: {}", r.cell.key, rep + 1, crate::figures::shortfall(h))
            })
            .collect();
        match marks.iter_mut().find(|m| m.x == x) {
            Some(m) => {
                m.why.push_str("; ");
                m.why.push_str(&why.join("; "));
            }
            None => marks.push(Mark { x, label: "⊘".into(), why: why.join("; ") }),
        }
    }
    marks.sort_by(|a, b| a.x.total_cmp(&b.x));
    vec![
        LineChart {
            title: "latency against offered load (p50, p99)".into(),
            x: offered.clone(),
            y: Axis { label: "latency (ms)".into(), scale: Scale::Log10, units: Units::Number },
            series: latency,
            marks: marks.clone(),
        },
        LineChart {
            title: "achieved against offered load".into(),
            x: offered,
            y: Axis {
                label: "achieved requests/s".into(),
                scale: Scale::Linear,
                units: Units::Number,
            },
            series: achieved,
            marks,
        },
    ]
}

/// A dot chart of `rows`' `measure`, each row named by the axes that vary (and its step):
/// the median and the 95 % interval of the mean the matrix prints, in the table's unit.
pub(crate) fn dot_chart(
    exp: &StoredExperiment,
    rows: &[&Row<'_>],
    measure: Measure,
    title: String,
) -> DotChart {
    let axes = crate::figures::varying_axes(exp);
    // Latency is held in µs and printed in ms.
    let unit = match measure {
        Measure::LatencyP50 | Measure::LatencyP99 | Measure::LatencyP999 => 1000.0,
        _ => 1.0,
    };
    let dots = rows
        .iter()
        .map(|r| {
            let mut label: Vec<String> =
                axes.iter().filter_map(|a| Some(format!("{a}={}", r.cell.axis(a)?))).collect();
            label.extend(r.step.as_ref().filter(|s| !s.is_empty()).map(|s| format!("step {s}")));
            let samples = r.samples(measure);
            let interval = stats::confidence_interval_95(samples)
                .map(|ci| ((ci.mean - ci.half_width) / unit, (ci.mean + ci.half_width) / unit));
            let held = if r.not_held.is_empty() { "" } else { " ⊘" };
            Dot {
                label: label.join(" "),
                value: stats::median(samples).map(|v| v / unit),
                interval,
                marks: format!("{}{held}", if r.mark().is_empty() { "" } else { " ≠" }),
                missing: if r.not_held.is_empty() {
                    "-".into()
                } else {
                    "⊘ rate not held".into()
                },
            }
        })
        .collect();
    DotChart {
        title,
        axis: crate::table::measure_name(measure).to_owned(),
        lower_is_better: measure.lower_is_better(),
        dots,
    }
}

/// Whether the rows sweep file sizes: at least two sizes on the sweep axis.
/// Whether the row is one size of a sweep.
fn in_sweep(row: &Row<'_>) -> bool {
    row.cell.axis(SWEEP_AXIS).and_then(herd_store::sweep_size).is_some()
}

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
    named_series(&axes, rows, with_step, point)
}

/// One series per combination of `axes` (and of the step, with `with_step`), as
/// [`by_series`]; `measured` where no axis names them.
fn named_series(
    axes: &[String],
    rows: &[Row<'_>],
    with_step: bool,
    point: impl Fn(&Row<'_>) -> Option<(f64, f64)>,
) -> Vec<Series> {
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
