//! Which charts an experiment gets, as the seeds drew theirs: against file size on a log
//! axis where a workload sweeps sizes (seed 002: connections/s and KB/s, one line per path
//! or server), against clients where loads are stepped (seed 004: throughput and failed
//! requests per step), and each row's latency percentile spectrum. The figures are the
//! rows' medians (`figures.rs`), the same the tables print; an article's figures that have a
//! place on a chart are drawn beside them as published points.

use herd_stats::repetitions as stats;
use herd_store::{Measure, Published, StoredExperiment};

use crate::figures::Row;
use crate::svg_chart::{Axis, LineChart, Scale, Series, Style, Units};

/// The experiment's charts over all its rows, in a fixed order.
pub(crate) fn experiment_charts(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    measure: Measure,
) -> Vec<LineChart> {
    let published = exp.experiment.published().ok().flatten();
    let mut charts = Vec::new();
    if let Some(sweep) = sweep_axis(exp) {
        let rate = if measure == Measure::ConnectionsPerSecond {
            Measure::ConnectionsPerSecond
        } else {
            Measure::RequestsPerSecond
        };
        for (what, m, y_scale) in
            [(label(rate), rate, Scale::Linear), ("KB/s", Measure::KbPerSecond, Scale::Log10)]
        {
            charts.push(LineChart {
                title: format!("{what} against file size"),
                x: Axis { label: "file size".into(), scale: Scale::Log2, units: Units::Bytes },
                y: Axis { label: what.into(), scale: y_scale, units: Units::Number },
                series: by_series(exp, rows, &[sweep.as_str()], |r| {
                    let size = size_of(r.cell.axis(&sweep)?)?;
                    Some((size, stats::median(r.samples(m))?))
                })
                .into_iter()
                .chain(published_points(exp, published.as_ref(), m, &sweep, |f| {
                    let at = f.at.iter().find(|(a, _)| *a == sweep)?;
                    size_of(&at.1)
                }))
                .collect(),
            });
        }
    }
    if rows.iter().any(|r| r.step.is_some() && r.concurrency.is_some()) {
        let clients = Axis { label: "clients".into(), scale: Scale::Log2, units: Units::Number };
        let mut throughput: Vec<Series> =
            by_series(exp, rows, &[], |r| Some((f64::from(r.concurrency?), r.median_rate()?)));
        for p in published.iter() {
            for f in &p.figures {
                let (Some(peak), Some(at)) =
                    (f.value(Measure::PeakRequestsPerSecond), f.value(Measure::ClientsAtPeak))
                else {
                    continue;
                };
                throughput.push(Series {
                    name: published_name(exp, f, ""),
                    style: Style::Published,
                    points: vec![(at, peak)],
                });
            }
        }
        charts.push(LineChart {
            title: "requests/s against clients".into(),
            x: clients.clone(),
            y: Axis { label: "requests/s".into(), scale: Scale::Linear, units: Units::Number },
            series: throughput,
        });
        charts.push(LineChart {
            title: "failed requests and non-2xx answers against clients (all repetitions)".into(),
            x: clients,
            y: Axis { label: "failed".into(), scale: Scale::Linear, units: Units::Number },
            series: by_series(exp, rows, &[], |r| {
                Some((f64::from(r.concurrency?), r.failed.saturating_add(r.non_2xx) as f64))
            }),
        });
    }
    charts
}

/// One series per combination of the axes that vary, but `besides` and the step: each
/// series' points from its rows, in the rows' order, sorted by x.
fn by_series(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    besides: &[&str],
    point: impl Fn(&Row<'_>) -> Option<(f64, f64)>,
) -> Vec<Series> {
    let axes: Vec<String> = crate::figures::varying_axes(exp)
        .into_iter()
        .filter(|a| !besides.contains(&a.as_str()))
        .collect();
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let Some(p) = point(r) else { continue };
        let name: Vec<String> =
            axes.iter().filter_map(|a| Some(format!("{a}={}", r.cell.axis(a)?))).collect();
        let name = if name.is_empty() { "measured".to_owned() } else { name.join(" ") };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(p),
            None => series.push(Series { name, style: Style::Measured, points: vec![p] }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

/// The published figures of measure `m` that `x_of` can place, one series each.
fn published_points(
    exp: &StoredExperiment,
    published: Option<&Published>,
    m: Measure,
    x_axis: &str,
    x_of: impl Fn(&herd_store::PublishedFigure) -> Option<f64>,
) -> Vec<Series> {
    let Some(p) = published else { return Vec::new() };
    p.figures
        .iter()
        .filter_map(|f| {
            Some(Series {
                name: published_name(exp, f, x_axis),
                style: Style::Published,
                points: vec![(x_of(f)?, f.value(m)?)],
            })
        })
        .collect()
}

/// `published: server=apache-prefork (Apache 1.3.4, Linux 2.2.2)`: the axes that vary,
/// but the one the chart's x axis already shows.
fn published_name(exp: &StoredExperiment, f: &herd_store::PublishedFigure, x_axis: &str) -> String {
    let varying = crate::figures::varying_axes(exp);
    let at: Vec<String> =
        f.at.iter()
            .filter(|(a, _)| varying.contains(a) && a != x_axis)
            .map(|(a, v)| format!("{a}={v}"))
            .collect();
    let ran = f.ran.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
    format!("published: {}{ran}", at.join(" "))
}

/// The axis whose values are a sweep's sizes (`sizes:1`, `sizes:4096` …), when one varies.
fn sweep_axis(exp: &StoredExperiment) -> Option<String> {
    crate::figures::varying_axes(exp).into_iter().find(|a| {
        let sizes: Vec<f64> =
            exp.cells.iter().filter_map(|c| c.axis(a)).filter_map(size_of).collect();
        sizes.len() == exp.cells.len() && sizes.iter().any(|s| *s != sizes[0])
    })
}

/// The size in a sweep's label: `sizes:4096` → 4096.
fn size_of(label: &str) -> Option<f64> {
    let (_, size) = label.rsplit_once(':')?;
    size.parse::<u64>().ok().map(|s| s as f64)
}

fn label(m: Measure) -> &'static str {
    match m {
        Measure::ConnectionsPerSecond => "connections/s",
        _ => "requests/s",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_from_sweep_labels_only() {
        assert_eq!(size_of("sizes:4096"), Some(4096.0));
        assert_eq!(size_of("page"), None);
        assert_eq!(size_of("sizes:big"), None);
    }
}
