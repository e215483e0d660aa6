//! A cell's latency percentile spectrum, as HdrHistogram draws it: latency against the
//! percentile on a log axis of 1/(1 − q), so the median, the 99th and the 99.99th
//! percentile each get their room and the tail is not squeezed into the right edge. One
//! line per ok repetition, so a repetition unlike the others shows; for a stepped load, one
//! line per step over its ok repetitions together (a line per repetition and step would be
//! unreadable). The latencies are the stored `total` histograms: from the intended send
//! time, so a fixed-rate run's queueing is in them.

use hdrhistogram::Histogram;
use herd_stats::LatencySeries;
use herd_store::StoredCell;

use crate::figures::merge;
use crate::svg_chart::{Axis, LineChart, Scale, Series, Style, Units};

/// The percentiles drawn, up to the last one the samples can tell apart; the maximum is
/// drawn after them, at 1/(1 − q) = the number of samples.
const QUANTILES: [f64; 14] = [
    0.0, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99995, 0.99999, 0.999995,
    0.999999,
];

/// The cell's spectrum; None when no ok repetition recorded a histogram (ab and wrk give
/// none: the cell's table then shows the client's own percentiles).
pub(crate) fn chart(cell: &StoredCell) -> Option<LineChart> {
    let ok: Vec<_> = cell.ok_repetitions().collect();
    let stepped = crate::figures::measured_in_steps(cell);
    let mut series = Vec::new();
    if stepped {
        let mut steps: Vec<(u32, String)> = Vec::new();
        for m in ok.iter().flat_map(|r| &r.record.measurements) {
            if !steps.iter().any(|(s, _)| *s == m.step) {
                steps.push((m.step, m.label.clone()));
            }
        }
        steps.sort();
        for (step, label) in steps {
            let histograms: Vec<&Histogram<u64>> = ok
                .iter()
                .flat_map(|r| &r.record.measurements)
                .filter(|m| m.step == step)
                .filter_map(|m| m.histogram(LatencySeries::Total))
                .collect();
            if let Some(merged) = merge(&histograms) {
                series.push(line(format!("step {label}"), &merged));
            }
        }
    } else {
        for r in &ok {
            let histograms: Vec<&Histogram<u64>> = r
                .record
                .measurements
                .iter()
                .filter_map(|m| m.histogram(LatencySeries::Total))
                .collect();
            if let Some(merged) = merge(&histograms) {
                series.push(line(
                    format!("repetition {}", r.record.repetition.saturating_add(1)),
                    &merged,
                ));
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    Some(LineChart {
        title: format!("latency by percentile: {}", cell.key),
        x: Axis { label: "percentile".into(), scale: Scale::Log10, units: Units::Percentile },
        y: Axis { label: "latency (ms)".into(), scale: Scale::Log10, units: Units::Number },
        series,
        marks: Vec::new(),
    })
}

/// The spectrum of one histogram, in ms.
fn line(name: String, h: &Histogram<u64>) -> Series {
    let n = h.len() as f64;
    let mut points: Vec<(f64, f64)> = QUANTILES
        .iter()
        .map(|&q| (1.0 / (1.0 - q), q))
        .filter(|&(x, _)| x < n)
        .map(|(x, q)| (x, h.value_at_quantile(q) as f64 / 1000.0))
        .collect();
    points.push((n.max(1.0), h.max() as f64 / 1000.0));
    Series { name, style: Style::Measured, twin: None, points }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectrum_stops_where_the_samples_do_and_ends_at_the_maximum() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for us in 1..=1000u64 {
            h.record(us * 10).unwrap();
        }
        let s = line("r".into(), &h);
        let xs: Vec<f64> = s.points.iter().map(|p| p.0).collect();
        // 1000 samples: nothing past the 99.9th percentile but the maximum, at x = 1000.
        assert!(xs.iter().all(|&x| x <= 1000.0), "{xs:?}");
        // The maximum, 10 ms, to the histogram's three significant digits.
        let max = s.points.last().map_or(0.0, |p| p.1);
        assert!((max - 10.0).abs() <= 0.01, "max {max}");
        assert_eq!(s.points.last().map(|p| p.0), Some(1000.0));
        assert_eq!(s.points.first().map(|p| p.0), Some(1.0), "the minimum at 0%");
        let median = s.points.iter().find(|p| p.0 == 2.0).map(|p| p.1).unwrap();
        assert!((median - 5.0).abs() < 0.01, "median {median}");
    }
}
