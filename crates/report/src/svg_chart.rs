//! Line charts as SVG text: axes (linear, or logarithmic where the seeds drew them: file
//! size, clients), ticks with labels, one polyline per measured series with a
//! marker on each point, published figures as hollow diamonds, and a legend.
//!
//! Written by hand rather than with plotters: plotters lays out text with a font backend
//! (system fonts through font-kit, or a font file compiled in) and writes absolute glyph
//! positions, so the same data could give other bytes on another machine. Here every number
//! is printed with a fixed precision and text is left to the browser, so the same figures
//! always give the same bytes, and the page needs no font.
//!
//! Every element a reader (or a test) may look for has a class: `chart`, `axis x`/`axis y`,
//! `tick`, `axis-label`, `title`, `series` (with `data-series`), `point`, `published`,
//! `reference`, `legend`, `mark` (with `data-x`: an x the chart marks, such as a rate not held).

use std::fmt::Write as _;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// From zero (or a round value under the smallest, when it is below zero) to a round
    /// maximum.
    Linear,
    /// Powers of ten: rates that span decades.
    Log10,
    /// Powers of two: clients doubled step by step, file sizes.
    Log2,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Units {
    /// 1, 10, 1k, 1M.
    Number,
    /// 1 B, 1 KiB, 1 MiB.
    Bytes,
    /// A percentile drawn at 1/(1 − q), so that each further nine takes the same room on a
    /// log axis (HdrHistogram's spectrum): 0%, 90%, 99%, 99.9%.
    Percentile,
}

#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub(crate) label: String,
    pub(crate) scale: Scale,
    pub(crate) units: Units,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Today's measurements: a line through the points.
    Measured,
    /// An article's figures: markers only, marked as published.
    Published,
    /// A line to read the others against (the offered rate, where achieved equals offered):
    /// thin, grey, no markers.
    Reference,
}

#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) style: Style,
    /// For published figures: the measured series of the same cells, whose colour they
    /// take, so then and now read as one pair.
    pub(crate) twin: Option<String>,
    /// (x, y), in the order they are drawn.
    pub(crate) points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub(crate) struct LineChart {
    pub(crate) title: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) series: Vec<Series>,
    /// Places on the x axis the chart marks with a dashed vertical line and a label (`⊘`: an
    /// offered rate some repetition did not hold).
    pub(crate) marks: Vec<Mark>,
}

/// A marked x: a dashed line across the plot, its label at the top, its `why` as tooltip.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    pub(crate) x: f64,
    pub(crate) label: String,
    pub(crate) why: String,
}

const WIDTH: f64 = 820.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 290.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 52.0;

/// Colour-blind-safe (Okabe and Ito), in series order; their yellow last and darkened, as
/// the pure one barely shows on white.
pub(crate) const PALETTE: [&str; 8] =
    ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000", "#c8b400"];

/// Line patterns, one per round of the palette, so a ninth series is not the first again.
const DASHES: [&str; 3] = ["", " stroke-dasharray=\"7 3\"", " stroke-dasharray=\"2 2\""];

/// The colour and line pattern of the i-th look.
fn look(i: usize) -> (&'static str, &'static str) {
    (PALETTE[i % PALETTE.len()], DASHES[(i / PALETTE.len()) % DASHES.len()])
}

/// Each series' look: the next one, or for published figures with a measured twin, the
/// twin's.
fn looks(series: &[Series]) -> Vec<usize> {
    let mut next = 0;
    let mut out: Vec<usize> = Vec::with_capacity(series.len());
    for s in series {
        let twin = s
            .twin
            .as_ref()
            .and_then(|t| series.iter().position(|m| m.style == Style::Measured && m.name == *t));
        match twin.and_then(|t| out.get(t).copied()) {
            Some(look) => out.push(look),
            None => {
                out.push(next);
                next += 1;
            }
        }
    }
    out
}

/// Room for a legend line, and the most characters it holds (a longer name takes two lines;
/// the whole name is the entry's tooltip).
const LEGEND_LINE: f64 = 18.0;
const LEGEND_CHARS: usize = 38;

impl LineChart {
    /// Whether the chart draws an article's published figure: a hollow diamond at a point
    /// its axes can show.
    pub(crate) fn draws_published(&self) -> bool {
        self.series
            .iter()
            .filter(|s| s.style == Style::Published)
            .any(|s| s.points.iter().any(|&(x, y)| fits(self.x.scale, x) && fits(self.y.scale, y)))
    }

    /// The chart as an `<svg>` element, the same bytes for the same chart.
    pub(crate) fn to_svg(&self) -> String {
        let legend: Vec<Vec<String>> = self.series.iter().map(|s| legend_lines(&s.name)).collect();
        let legend_lines_n: usize = legend.iter().map(Vec::len).sum();
        // A long legend makes the chart taller, never overflows it.
        let height = HEIGHT.max(TOP + 8.0 + legend_lines_n as f64 * LEGEND_LINE + 8.0);
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        // Points an axis cannot show (zero or less on a log axis) are left out, and said.
        let shown = |s: &Series| -> Vec<(f64, f64)> {
            s.points
                .iter()
                .copied()
                .filter(|&(x, y)| fits(self.x.scale, x) && fits(self.y.scale, y))
                .collect()
        };
        let xs: Vec<f64> = self.series.iter().flat_map(&shown).map(|p| p.0).collect();
        let ys: Vec<f64> = self.series.iter().flat_map(&shown).map(|p| p.1).collect();
        // The marks span the x axis too: a chart whose every point was left out (each rate
        // not held) still shows where and why.
        let marked = self.marks.iter().map(|m| m.x).filter(|&x| fits(self.x.scale, x));
        let spanned: Vec<f64> = xs.iter().copied().chain(marked).collect();
        let xr = Range::of(self.x.scale, self.x.units, &spanned);
        let yr = Range::of(self.y.scale, self.y.units, &ys);
        let px = |x: f64| LEFT + xr.fraction(x) * plot_w;
        let py = |y: f64| TOP + plot_h - yr.fraction(y) * plot_h;

        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{}">"#,
            escape(&self.title)
        );
        let _ = write!(svg, r#"<title>{}</title>"#, escape(&self.title));
        let _ = write!(
            svg,
            r#"<text class="title" x="{LEFT}" y="20" font-size="14" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        // Frame and grid.
        let plot = Plot { left: LEFT, top: TOP, width: plot_w, height: plot_h };
        plot.frame_and_x_axis(&mut svg, (&xr, self.x.units), px, HEIGHT - 12.0, &self.x.label);
        let _ = write!(svg, r#"<g class="axis y">"#);
        for t in yr.ticks() {
            let y = py(t);
            let _ = write!(
                svg,
                r##"<line class="tick" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
                LEFT + plot_w,
                LEFT - 6.0,
                y + 4.0,
                escape(&tick_label(self.y.units, t))
            );
        }
        let _ = write!(
            svg,
            r#"<text class="axis-label" x="16" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text></g>"#,
            TOP + plot_h / 2.0,
            TOP + plot_h / 2.0,
            escape(&self.y.label)
        );

        let mut left_out = 0usize;
        let _ = write!(svg, r#"<g class="legend">"#);
        let looks = looks(&self.series);
        let mut ly = TOP + 8.0;
        for ((s, lines), &l) in self.series.iter().zip(&legend).zip(&looks) {
            let (colour, dash) = look(l);
            let lx = WIDTH - RIGHT + 14.0;
            match s.style {
                Style::Measured => {
                    let _ = write!(
                        svg,
                        r#"<line x1="{lx}" y1="{ly}" x2="{:.1}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>"#,
                        lx + 18.0
                    );
                }
                Style::Published => {
                    let _ = write!(svg, "{}", diamond(lx + 9.0, ly, colour));
                }
                Style::Reference => {
                    let _ = write!(
                        svg,
                        r##"<line x1="{lx}" y1="{ly}" x2="{:.1}" y2="{ly}" stroke="#888" stroke-width="1" stroke-dasharray="4 3"/>"##,
                        lx + 18.0
                    );
                }
            }
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" font-size="11"><title>{}</title>"#,
                lx + 24.0,
                ly + 4.0,
                escape(&s.name)
            );
            for (n, line) in lines.iter().enumerate() {
                if n == 0 {
                    let _ = write!(svg, "{}", escape(line));
                } else {
                    let _ = write!(
                        svg,
                        r#"<tspan x="{:.1}" dy="{LEGEND_LINE}">{}</tspan>"#,
                        lx + 24.0,
                        escape(line)
                    );
                }
            }
            svg.push_str("</text>");
            ly += lines.len() as f64 * LEGEND_LINE;
        }
        let _ = write!(svg, "</g>");
        for (s, &l) in self.series.iter().zip(&looks) {
            let (colour, dash) = look(l);
            let points = shown(s);
            left_out += s.points.len() - points.len();
            match s.style {
                Style::Measured => {
                    let coords: Vec<String> =
                        points.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
                    let _ = write!(
                        svg,
                        r#"<g class="series" data-series="{}"><polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>"#,
                        escape(&s.name),
                        coords.join(" ")
                    );
                    for &(x, y) in &points {
                        let _ = write!(
                            svg,
                            r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="3" fill="{colour}" data-x="{}" data-y="{}"/>"#,
                            px(x),
                            py(y),
                            x,
                            y
                        );
                    }
                    let _ = write!(svg, "</g>");
                }
                Style::Published => {
                    let _ = write!(
                        svg,
                        r#"<g class="series published" data-series="{}">"#,
                        escape(&s.name)
                    );
                    for &(x, y) in &points {
                        let _ = write!(
                            svg,
                            r#"<g class="point" data-x="{x}" data-y="{y}">{}</g>"#,
                            diamond(px(x), py(y), colour)
                        );
                    }
                    let _ = write!(svg, "</g>");
                }
                Style::Reference => {
                    let coords: Vec<String> =
                        points.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
                    let _ = write!(
                        svg,
                        r##"<g class="series reference" data-series="{}"><polyline points="{}" fill="none" stroke="#888" stroke-width="1" stroke-dasharray="4 3"/></g>"##,
                        escape(&s.name),
                        coords.join(" ")
                    );
                }
            }
        }
        for m in self.marks.iter().filter(|m| fits(self.x.scale, m.x)) {
            let x = px(m.x);
            let _ = write!(
                svg,
                r##"<g class="mark" data-x="{}"><title>{}</title><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#d55e00" stroke-width="1" stroke-dasharray="3 3"/><text x="{x:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="#d55e00">{}</text></g>"##,
                m.x,
                escape(&m.why),
                TOP + plot_h,
                TOP - 4.0,
                escape(&m.label)
            );
        }
        if xs.is_empty() {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">no figures to draw</text>"#,
                LEFT + plot_w / 2.0,
                TOP + plot_h / 2.0
            );
        }
        if left_out > 0 {
            let _ = write!(
                svg,
                r#"<text class="left-out" x="{LEFT}" y="{:.1}" font-size="10">{left_out} point(s) not drawn: zero or less on a log axis, or not a number</text>"#,
                height - 2.0
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

/// A series' name as legend lines: one, or two broken at a space where it is long, the
/// second cut short with `…` if it still does not fit (the whole name is the tooltip).
fn legend_lines(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= LEGEND_CHARS {
        return vec![name.to_owned()];
    }
    let room = &chars[..LEGEND_CHARS];
    let brk = room.iter().rposition(|c| *c == ' ').filter(|&b| b > 0).unwrap_or(LEGEND_CHARS);
    let first: String = chars[..brk].iter().collect();
    let rest: Vec<char> = chars[brk..].iter().copied().skip_while(|c| *c == ' ').collect();
    let second: String = if rest.len() > LEGEND_CHARS {
        rest[..LEGEND_CHARS - 1].iter().chain(['…'].iter()).collect()
    } else {
        rest.iter().collect()
    };
    vec![first, second]
}

fn fits(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

fn diamond(x: f64, y: f64, colour: &str) -> String {
    format!(
        r#"<path d="M{:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z" fill="white" stroke="{colour}" stroke-width="2"/>"#,
        x,
        y - 6.0,
        x + 6.0,
        y,
        x,
        y + 6.0,
        x - 6.0,
        y
    )
}

/// An axis's shown range and its tick step, in the scale's own terms (exponents for log
/// axes), both ends on a tick.
pub(crate) struct Range {
    scale: Scale,
    lo: f64,
    hi: f64,
    step: f64,
}

impl Range {
    pub(crate) fn of(scale: Scale, units: Units, values: &[f64]) -> Range {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !min.is_finite() {
            return Range { scale, lo: 0.0, hi: 1.0, step: 1.0 };
        }
        let (lo, hi, step) = match scale {
            Scale::Linear => {
                let (lo, hi) = (min.min(0.0), max.max(0.0));
                // All zeros (a clean run's failures) still get an axis of 0 to 1.
                let step = if hi > lo { nice_ceiling((hi - lo) / 5.0) } else { 1.0 };
                (lo, hi, step)
            }
            Scale::Log10 | Scale::Log2 => {
                let log = |v: f64| if scale == Scale::Log10 { v.log10() } else { v.log2() };
                let (lo, hi) = (log(min).floor(), log(max).ceil());
                // Fewer labels where they are wide (`256 KiB`).
                let intervals = if units == Units::Number { 10.0 } else { 7.0 };
                (lo, hi, log_step(lo, hi.max(lo + 1.0), intervals))
            }
        };
        let lo = (lo / step).floor() * step;
        let hi = ((hi / step).ceil() * step).max(lo + step);
        Range { scale, lo, hi, step }
    }

    pub(crate) fn fraction(&self, v: f64) -> f64 {
        let v = match self.scale {
            Scale::Linear => v,
            Scale::Log10 => v.log10(),
            Scale::Log2 => v.log2(),
        };
        (v - self.lo) / (self.hi - self.lo)
    }

    pub(crate) fn ticks(&self) -> Vec<f64> {
        let n = ((self.hi - self.lo) / self.step).round() as i32;
        let at = |i: i32| self.lo + f64::from(i) * self.step;
        match self.scale {
            Scale::Linear => (0..=n).map(at).collect(),
            // Whole exponents: powi gives exact powers.
            Scale::Log10 => (0..=n).map(|i| 10f64.powi(at(i) as i32)).collect(),
            Scale::Log2 => (0..=n).map(|i| 2f64.powi(at(i) as i32)).collect(),
        }
    }
}

/// The step between labelled powers on a log axis: every power while that makes at most
/// `intervals` once both ends are widened to a multiple of it, else every 2nd, 4th (2^4 =
/// 16: 1 B, 16 B, 256 B, 4 KiB …), 5th or 10th.
fn log_step(lo: f64, hi: f64, intervals: f64) -> f64 {
    let widened = |s: f64| ((hi / s).ceil() - (lo / s).floor()).max(1.0);
    [1.0, 2.0, 4.0, 5.0, 10.0].into_iter().find(|&s| widened(s) <= intervals).unwrap_or(10.0)
}

/// The smallest 1, 2 or 5 × 10^k at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|c| *c >= v).unwrap_or(v)
}

pub(crate) fn tick_label(units: Units, v: f64) -> String {
    match units {
        Units::Number => si(v),
        Units::Bytes => bytes(v),
        Units::Percentile => percentile(v),
    }
}

/// The percentile drawn at `x` = 1/(1 − q): 0%, 90%, 99%, 99.9% (as many decimals as nines
/// past the second).
fn percentile(x: f64) -> String {
    if x <= 1.0 {
        return "0%".to_owned();
    }
    let decimals = (x.log10().round() as usize).saturating_sub(2);
    format!("{:.*}%", decimals, 100.0 * (1.0 - 1.0 / x))
}

/// 1, 250, 1.5k, 20k, 3M.
fn si(v: f64) -> String {
    let (scaled, suffix) = match v.abs() {
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let text = format!("{scaled:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{suffix}")
}

/// 1 B, 16 B, 4 KiB, 1 MiB.
fn bytes(v: f64) -> String {
    let (scaled, suffix) = match v {
        a if a >= 1024.0 * 1024.0 * 1024.0 => (v / (1024.0 * 1024.0 * 1024.0), "GiB"),
        a if a >= 1024.0 * 1024.0 => (v / (1024.0 * 1024.0), "MiB"),
        a if a >= 1024.0 => (v / 1024.0, "KiB"),
        _ => (v, "B"),
    };
    let text = format!("{scaled:.1}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {suffix}")
}

/// Text as XML character data or an attribute value.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The plot area of a chart, in the SVG's units.
pub(crate) struct Plot {
    pub(crate) left: f64,
    pub(crate) top: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

impl Plot {
    /// The frame, and the x axis below it: a grid line and a label (in `units`) at each of
    /// `range`'s ticks (at `px` of the tick), and the axis's `label` centred at `label_y`. Both kinds of chart
    /// draw them alike.
    pub(crate) fn frame_and_x_axis(
        &self,
        svg: &mut String,
        (range, units): (&Range, Units),
        px: impl Fn(f64) -> f64,
        label_y: f64,
        label: &str,
    ) {
        let Plot { left, top, width, height } = *self;
        let _ = write!(
            svg,
            r##"<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#999"/>"##
        );
        let _ = write!(svg, r#"<g class="axis x">"#);
        for t in range.ticks() {
            let x = px(t);
            let _ = write!(
                svg,
                r##"<line class="tick" x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#e5e5e5"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
                top + height,
                top + height + 16.0,
                escape(&tick_label(units, t))
            );
        }
        let _ = write!(
            svg,
            r#"<text class="axis-label" x="{:.1}" y="{label_y:.1}" font-size="12" text-anchor="middle">{}</text></g>"#,
            left + width / 2.0,
            escape(label)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_read_as_the_seeds_wrote_them() {
        assert_eq!(si(1.0), "1");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(20_000.0), "20k");
        assert_eq!(si(3_000_000.0), "3M");
        assert_eq!(bytes(1.0), "1 B");
        assert_eq!(bytes(4096.0), "4 KiB");
        assert_eq!(bytes(1_048_576.0), "1 MiB");
        assert_eq!(legend_lines("server=nginx"), ["server=nginx"]);
        assert_eq!(
            legend_lines("published: server=apache (Apache 1.3.4, Linux 2.2.2)"),
            ["published: server=apache (Apache", "1.3.4, Linux 2.2.2)"]
        );
        let long = "x".repeat(100);
        let lines = legend_lines(&long);
        assert_eq!(lines[0].len(), LEGEND_CHARS);
        assert!(lines[1].ends_with('…') && lines[1].chars().count() == LEGEND_CHARS);
        let nines: Vec<String> = [1.0, 10.0, 100.0, 1e3, 1e4, 1e6].map(percentile).to_vec();
        assert_eq!(nines, ["0%", "90%", "99%", "99.9%", "99.99%", "99.9999%"]);
    }

    #[test]
    fn ranges_are_round_and_log_ranges_whole_powers() {
        let r = Range::of(Scale::Linear, Units::Number, &[120.0, 3_400.0]);
        assert_eq!((r.lo, r.hi), (0.0, 4_000.0));
        assert_eq!(r.ticks(), [0.0, 1_000.0, 2_000.0, 3_000.0, 4_000.0]);
        // All zeros: 0 to 1, not 0 to nothing.
        let r = Range::of(Scale::Linear, Units::Number, &[0.0, 0.0]);
        assert_eq!(r.ticks(), [0.0, 1.0]);
        // Below zero: round ends, a tick at zero.
        let r = Range::of(Scale::Linear, Units::Number, &[-3.0, 2.0]);
        assert_eq!(r.ticks(), [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]);
        // The step is chosen once: 8 B to 128 KiB keeps the 16× grid.
        let r = Range::of(Scale::Log2, Units::Bytes, &[8.0, 131_072.0]);
        let labels: Vec<String> = r.ticks().iter().map(|t| bytes(*t)).collect();
        assert_eq!(labels, ["1 B", "16 B", "256 B", "4 KiB", "64 KiB", "1 MiB"]);
        let r = Range::of(Scale::Log10, Units::Number, &[1.0, 1_048_576.0]);
        assert_eq!((r.lo, r.hi), (0.0, 7.0));
        assert_eq!(r.ticks().first(), Some(&1.0));
        // Sizes from 1 B to 1 MiB: every 16th power of two.
        let r = Range::of(Scale::Log2, Units::Bytes, &[1.0, 1_048_576.0]);
        let labels: Vec<String> = r.ticks().iter().map(|t| bytes(*t)).collect();
        assert_eq!(labels, ["1 B", "16 B", "256 B", "4 KiB", "64 KiB", "1 MiB"]);
        let r = Range::of(Scale::Log2, Units::Number, &[1.0, 512.0]);
        assert_eq!(r.ticks(), [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0]);
        // One value alone still spans a range.
        let r = Range::of(Scale::Log10, Units::Number, &[100.0]);
        assert_eq!((r.lo, r.hi), (2.0, 3.0));
    }

    #[test]
    fn published_figures_take_their_measured_twins_colour() {
        let series = |name: &str, style, twin: Option<&str>| Series {
            name: name.into(),
            style,
            twin: twin.map(str::to_owned),
            points: vec![(1.0, 1.0)],
        };
        let all = [
            series("a", Style::Measured, None),
            series("b", Style::Measured, None),
            series("published: b", Style::Published, Some("b")),
            series("published: c", Style::Published, Some("c")),
            series("d", Style::Measured, None),
        ];
        // b's figure is drawn in b's colour; c has no measured series: a colour of its own.
        assert_eq!(looks(&all), [0, 1, 1, 2, 3]);
    }

    #[test]
    fn text_is_escaped_and_points_a_log_axis_cannot_show_are_said() {
        let chart = LineChart {
            title: "a <b> & \"c\"".into(),
            x: Axis { label: "size".into(), scale: Scale::Log10, units: Units::Bytes },
            y: Axis { label: "req/s".into(), scale: Scale::Linear, units: Units::Number },
            series: vec![Series {
                name: "nginx".into(),
                style: Style::Measured,
                twin: None,
                points: vec![(0.0, 5.0), (1.0, 10.0), (16.0, 20.0)],
            }],
            marks: Vec::new(),
        };
        let svg = chart.to_svg();
        assert!(svg.contains("a &lt;b&gt; &amp; &quot;c&quot;"), "{svg}");
        assert!(svg.contains("1 point(s) not drawn: zero or less on a log axis"), "{svg}");
        assert_eq!(svg.matches(r#"<circle class="point""#).count(), 2, "{svg}");
        assert_eq!(chart.to_svg(), svg, "the same chart, the same bytes");
    }

    #[test]
    fn a_chart_whose_every_point_was_left_out_still_marks_where_and_why() {
        let chart = LineChart {
            title: "latency against offered load (p50, p99)".into(),
            x: Axis { label: "offered".into(), scale: Scale::Linear, units: Units::Number },
            y: Axis { label: "ms".into(), scale: Scale::Log10, units: Units::Number },
            series: Vec::new(),
            marks: [200.0, 400.0]
                .map(|x| Mark { x, label: "⊘".into(), why: format!("{x} not held") })
                .into(),
        };
        let svg = chart.to_svg();
        assert!(svg.contains("no figures to draw"), "{svg}");
        for x in ["200", "400"] {
            assert!(svg.contains(&format!(r#"<g class="mark" data-x="{x}">"#)), "{svg}");
            assert!(svg.contains(&format!("{x} not held")), "{svg}");
        }
    }
}
