//! Dot charts as SVG text: one line per row of a matrix (a server, protocol, … as the table
//! names it), a dot at the row's median and a whisker over the 95 % confidence interval of
//! the mean, the figure and its interval the table prints. A plain comparison has no x to
//! draw lines against (no sizes, no clients), so its figures are set side by side on one
//! value axis; a row with no figure says why (`⊘`: its rate was not held) where its dot
//! would be.
//!
//! Drawn by hand for the reasons `svg_chart.rs` gives (the same figures, the same bytes),
//! with its axis ranges and tick labels. Classes for a reader or a test: `chart dots`,
//! `axis x`, `tick`, `axis-label`, `title`, `row` (with `data-row`, `data-value`,
//! `data-low`, `data-high`), `point`, `whisker`, `no-figure`.

use std::fmt::Write as _;

use crate::svg_chart::{escape, Plot, Range, Scale, Units, PALETTE};

/// One row: its name, and its figure with the interval, if it has one.
#[derive(Debug, Clone)]
pub(crate) struct Dot {
    pub(crate) label: String,
    /// The median, in the chart's unit; None: no figure (`missing` says why).
    pub(crate) value: Option<f64>,
    /// The 95 % interval of the mean, (low, high), where there are repetitions to give one.
    pub(crate) interval: Option<(f64, f64)>,
    /// Marks after the label (`⊘`, `≠`, `!`), as the table prints them.
    pub(crate) marks: String,
    /// Why there is no figure, where there is none.
    pub(crate) missing: String,
}

#[derive(Debug, Clone)]
pub(crate) struct DotChart {
    pub(crate) title: String,
    /// The value axis' label, with its unit; "lower is better" is added where it is.
    pub(crate) axis: String,
    pub(crate) lower_is_better: bool,
    pub(crate) dots: Vec<Dot>,
}

const WIDTH: f64 = 820.0;
const LEFT: f64 = 300.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;
const ROW: f64 = 22.0;
/// The most characters of a row's label; the whole label is its tooltip.
const LABEL_CHARS: usize = 44;

impl DotChart {
    /// The axis' label as drawn: lower-is-better said in so many words.
    fn axis_label(&self) -> String {
        if self.lower_is_better {
            format!("{} (lower is better)", self.axis)
        } else {
            format!("{} (higher is better)", self.axis)
        }
    }

    /// The chart as an `<svg>` element, the same bytes for the same chart.
    pub(crate) fn to_svg(&self) -> String {
        let plot_h = ROW * self.dots.len().max(1) as f64;
        let height = TOP + plot_h + BOTTOM;
        let plot_w = WIDTH - LEFT - RIGHT;
        let mut values: Vec<f64> = Vec::new();
        for d in &self.dots {
            values.extend(d.value);
            if let Some((lo, hi)) = d.interval {
                values.extend([lo, hi]);
            }
        }
        values.retain(|v| v.is_finite());
        // From zero, as a bar would be: the reader compares lengths, not differences.
        let range = Range::of(Scale::Linear, Units::Number, &values);
        let px = |v: f64| LEFT + range.fraction(v).clamp(0.0, 1.0) * plot_w;

        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg class="chart dots" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{}">"#,
            escape(&self.title)
        );
        let _ = write!(svg, r#"<title>{}</title>"#, escape(&self.title));
        let _ = write!(
            svg,
            r#"<text class="title" x="12" y="20" font-size="14" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        let plot = Plot { left: LEFT, top: TOP, width: plot_w, height: plot_h };
        plot.frame_and_x_axis(
            &mut svg,
            (&range, Units::Number),
            px,
            height - 10.0,
            &self.axis_label(),
        );
        let colour = PALETTE[0];
        for (i, d) in self.dots.iter().enumerate() {
            let y = TOP + ROW * (i as f64 + 0.5);
            let shown: String = if d.label.chars().count() > LABEL_CHARS {
                d.label.chars().take(LABEL_CHARS - 1).chain(['…']).collect()
            } else {
                d.label.clone()
            };
            let mut attrs = format!(r#" data-row="{}""#, escape(&d.label));
            if let Some(v) = d.value {
                let _ = write!(attrs, r#" data-value="{v}""#);
            }
            if let Some((lo, hi)) = d.interval {
                let _ = write!(attrs, r#" data-low="{lo}" data-high="{hi}""#);
            }
            let _ = write!(
                svg,
                r#"<g class="row"{attrs}><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end"><title>{}</title>{}{}</text>"#,
                LEFT - 8.0,
                y + 4.0,
                escape(&d.label),
                escape(&shown),
                escape(&d.marks)
            );
            if let Some((lo, hi)) = d.interval.filter(|(l, h)| l.is_finite() && h.is_finite()) {
                let _ = write!(
                    svg,
                    r#"<path class="whisker" d="M{:.1} {:.1} V{:.1} M{:.1} {y:.1} H{:.1} M{:.1} {:.1} V{:.1}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
                    px(lo),
                    y - 5.0,
                    y + 5.0,
                    px(lo),
                    px(hi),
                    px(hi),
                    y - 5.0,
                    y + 5.0
                );
            }
            match d.value.filter(|v| v.is_finite()) {
                Some(v) => {
                    let _ = write!(
                        svg,
                        r#"<circle class="point" cx="{:.1}" cy="{y:.1}" r="4" fill="{colour}"/>"#,
                        px(v)
                    );
                }
                None => {
                    let _ = write!(
                        svg,
                        r##"<text class="no-figure" x="{:.1}" y="{:.1}" font-size="11" fill="#d55e00">{}</text>"##,
                        LEFT + 6.0,
                        y + 4.0,
                        escape(&d.missing)
                    );
                }
            }
            svg.push_str("</g>");
        }
        if self.dots.is_empty() {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">no figures to draw</text>"#,
                LEFT + plot_w / 2.0,
                TOP + plot_h / 2.0
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(label: &str, value: Option<f64>, interval: Option<(f64, f64)>) -> Dot {
        Dot { label: label.into(), value, interval, marks: String::new(), missing: "⊘".into() }
    }

    #[test]
    fn each_row_is_drawn_where_its_figure_is_and_a_missing_one_says_why() {
        let chart = DotChart {
            title: "p99 by server".into(),
            axis: "p99 latency (ms)".into(),
            lower_is_better: true,
            dots: vec![
                dot("server=nginx", Some(10.0), Some((8.0, 12.0))),
                dot("server=apache", Some(40.0), None),
                dot("server=<x>", None, None),
            ],
        };
        let svg = chart.to_svg();
        assert!(svg.contains("p99 latency (ms) (lower is better)"), "{svg}");
        assert_eq!(svg.matches(r#"<circle class="point""#).count(), 2, "{svg}");
        assert_eq!(svg.matches(r#"class="whisker""#).count(), 1, "{svg}");
        assert!(svg.contains(r#"data-row="server=nginx" data-value="10" data-low="8""#), "{svg}");
        assert!(svg.contains(r#"class="no-figure""#) && svg.contains("server=&lt;x&gt;"), "{svg}");
        // 0 to 40 on the axis: nginx's dot a quarter of the way along.
        let quarter = LEFT + (WIDTH - LEFT - RIGHT) / 4.0;
        assert!(svg.contains(&format!(r#"cx="{quarter:.1}""#)), "{svg}");
        assert_eq!(chart.to_svg(), svg, "the same chart, the same bytes");
        let higher = DotChart { lower_is_better: false, ..chart };
        assert!(higher.to_svg().contains("(higher is better)"));
    }
}
