//! The report as one self-contained HTML page: the same document as the terminal's (the
//! matrix coloured by each entry's share of the baseline), then the charts, every cell's
//! details and the disclosure of how the figures were made.
//!
//! Self-contained means it opens from disk and fetches nothing: the style sheet is inline,
//! the charts are inline SVG, there is no script, and a Content-Security-Policy forbids any
//! fetch, so a page that tried one would say so in the browser's console. Like every report
//! it is a pure function of the store: the same store gives the same bytes (no clock, no
//! path of the machine that rendered it).
//!
//! Every figure of the matrix and of the table of rows' req/s carries its stored value
//! unrounded (`data-cell`, `data-step`, `data-measure`, `data-value`, `data-percent`), and
//! every chart point its `data-x`/`data-y`, so the page can be checked against the store.

use std::fmt::Write as _;
use std::io::{self, Write};

use herd_store::StoredExperiment;

use crate::charts::Chart;
use crate::doc::{Align, Block, Doc, Entry, Role, Table};
use crate::svg_chart::{escape, LineChart};

/// One part of the page: an experiment's report, or a comparison.
pub(crate) struct Section<'a> {
    /// The section's id on the page (`experiment-3`), for links to it.
    pub(crate) anchor: String,
    /// `3 seed001-router-overhead: its title`.
    pub(crate) heading: String,
    /// Its short name, for the page's title.
    pub(crate) name: String,
    /// The experiment reported, whose cells and setup follow the document.
    pub(crate) exp: Option<&'a StoredExperiment>,
    pub(crate) doc: Doc,
    pub(crate) charts: Vec<Chart>,
}

impl<'a> Section<'a> {
    /// An experiment's report.
    pub(crate) fn experiment(exp: &'a StoredExperiment, doc: Doc, charts: Vec<Chart>) -> Self {
        Section {
            anchor: format!("experiment-{}", exp.id.0),
            heading: format!("{} {}: {}", exp.id.0, exp.name(), exp.experiment.title),
            name: exp.name().to_owned(),
            exp: Some(exp),
            doc,
            charts,
        }
    }
}

/// Writes the page: `intro` says where the figures come from, in a sentence.
pub(crate) fn write(intro: &str, sections: &[Section<'_>], out: &mut dyn Write) -> io::Result<()> {
    let mut page = String::new();
    let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
    let _ = write!(
        page,
        concat!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ",
            "style-src 'unsafe-inline'; img-src data:\">\n",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
            "<meta name=\"generator\" content=\"herd {}\">\n",
            "<title>herd report: {}</title>\n<style>{}</style>\n</head>\n<body>\n"
        ),
        env!("CARGO_PKG_VERSION"),
        escape(&names.join(", ")),
        STYLE
    );
    let _ = write!(
        page,
        "<header>\n<h1>herd report</h1>\n<p class=\"source\">{}</p>\n",
        escape(intro),
    );
    if sections.len() > 1 {
        page.push_str("<nav><ul>\n");
        for s in sections {
            let _ = writeln!(page, "<li><a href=\"#{}\">{}</a></li>", s.anchor, escape(&s.heading));
        }
        page.push_str("</ul></nav>\n");
    }
    page.push_str("</header>\n<main>\n");
    for s in sections {
        section(&mut page, s);
    }
    page.push_str("</main>\n");
    let coloured = sections
        .iter()
        .any(|s| s.doc.blocks.iter().any(|b| matches!(b, Block::Table(t) if t.role.shares())));
    page.push_str("<footer>\n");
    if coloured {
        page.push_str(&colours());
    }
    page.push_str("<p>Made by herd; the same figures give the same page.</p>\n</footer>\n");
    page.push_str("</body>\n</html>\n");
    out.write_all(page.as_bytes())
}

fn section(page: &mut String, s: &Section<'_>) {
    match s.exp {
        Some(exp) => {
            let _ = writeln!(
                page,
                "<section class=\"experiment\" id=\"{}\" data-experiment=\"{}\">",
                escape(&s.anchor),
                exp.id.0
            );
        }
        None => {
            let _ = writeln!(page, "<section class=\"comparison\" id=\"{}\">", escape(&s.anchor));
        }
    }
    let _ = writeln!(page, "<h2>{}</h2>", escape(&s.heading));
    // The pictures first, as the seeds were read: after the matrix (or the header, without
    // one), before the table of every row and the notes.
    let split = s
        .doc
        .blocks
        .iter()
        .position(|b| matches!(b, Block::Table(t) if t.role.shares()))
        .or_else(|| s.doc.blocks.iter().position(|b| matches!(b, Block::Fields(_))))
        .map_or(0, |i| i + 1);
    let (before, after) = s.doc.blocks.split_at(split);
    blocks(page, before);
    if !s.charts.is_empty() {
        page.push_str("<h3>charts</h3>\n");
        for chart in &s.charts {
            figure_svg(page, &chart.to_svg(), chart.caption());
        }
    }
    blocks(page, after);
    if let Some(exp) = s.exp {
        crate::html_cells::write(page, exp);
        crate::html_disclosure::write(page, exp);
    }
    page.push_str("</section>\n");
}

/// A chart with its caption.
pub(crate) fn figure(page: &mut String, chart: &LineChart, caption: &str) {
    figure_svg(page, &chart.to_svg(), caption);
}

/// A chart's SVG with its caption.
fn figure_svg(page: &mut String, svg: &str, caption: &str) {
    let _ = writeln!(
        page,
        "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

fn blocks(page: &mut String, blocks: &[Block]) {
    for block in blocks {
        match block {
            Block::Fields(fields) => {
                page.push_str("<dl class=\"fields\">\n");
                for (label, value) in fields {
                    let _ = writeln!(page, "<dt>{}</dt><dd>{}</dd>", escape(label), escape(value));
                }
                page.push_str("</dl>\n");
            }
            Block::Heading(h) => {
                let _ = writeln!(page, "<h3>{}</h3>", escape(h.trim_end_matches(':')));
            }
            Block::Subheading(h) => {
                let _ = writeln!(page, "<h4>{}</h4>", escape(h.trim_end_matches(':')));
            }
            Block::Items(items) => list(page, items),
            Block::Table(t) => table(page, t),
            Block::Text(lines) => {
                let lines: Vec<String> = lines.iter().map(|l| escape(l)).collect();
                let _ = writeln!(page, "<p>{}</p>", lines.join("<br>"));
            }
            Block::Legend(lines) => {
                let _ = writeln!(page, "<pre class=\"legend\">{}</pre>", escape(&lines.join("\n")));
            }
        }
    }
}

/// A list; a long one folded, so the notes do not push the cells' details off the page.
pub(crate) fn list(page: &mut String, items: &[String]) {
    let folded = items.len() > FOLD_AFTER;
    if folded {
        let _ =
            writeln!(page, "<details class=\"list\"><summary>{} entries</summary>", items.len());
    }
    page.push_str("<ul>\n");
    for item in items {
        let _ = writeln!(page, "<li>{}</li>", escape(item));
    }
    page.push_str("</ul>\n");
    if folded {
        page.push_str("</details>\n");
    }
}

/// The longest list shown unfolded.
const FOLD_AFTER: usize = 8;

/// A table; entries that are a share of a baseline are coloured by it.
pub(crate) fn table(page: &mut String, t: &Table) {
    match t.role.class() {
        None => page.push_str("<div class=\"scroll\"><table>\n<thead><tr>"),
        Some(class) => {
            let _ = write!(page, "<div class=\"scroll\"><table class=\"{class}\">\n<thead><tr>");
        }
    }
    for c in &t.columns {
        let _ = write!(page, "<th{}>{}</th>", align(c.align), header(&c.header));
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        page.push_str("<tr>");
        for (c, e) in t.columns.iter().zip(row) {
            entry(page, c.align, e, t.role == Role::Matrix);
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table></div>\n");
}

/// A column's heading, escaped, with a break opportunity after each `_`: the health
/// table's field names (`involuntary_switches`) would otherwise be words too long for a
/// printed page's columns.
fn header(text: &str) -> String {
    escape(text).replace('_', "_<wbr>")
}

fn align(a: Align) -> &'static str {
    match a {
        Align::Left => "",
        Align::Right => " class=\"num\"",
    }
}

/// An entry; in the matrix, a figure with no share is the baseline's own, outlined.
fn entry(page: &mut String, a: Align, e: &Entry, matrix: bool) {
    let mut classes: Vec<&str> = Vec::new();
    if a == Align::Right {
        classes.push("num");
    }
    let mut data = String::new();
    if let Some(p) = e.percent {
        classes.push(share_class(p));
        let _ = write!(data, " data-percent=\"{p}\"");
    } else if matrix && e.figure.is_some() {
        classes.push("base");
    }
    if let Some(f) = &e.figure {
        let _ = write!(data, " data-cell=\"{}\"", escape(&f.cell));
        if let Some(step) = &f.step {
            let _ = write!(data, " data-step=\"{}\"", escape(step));
        }
        let _ = write!(data, " data-measure=\"{}\" data-value=\"{}\"", f.measure.key(), f.value);
    }
    let class = if classes.is_empty() {
        String::new()
    } else {
        format!(" class=\"{}\"", classes.join(" "))
    };
    // The article's figure on a line of its own, set apart as published.
    let text = match &e.then {
        Some(then) => {
            format!("{}<br><span class=\"then\">then {}</span>", escape(&e.text), escape(then))
        }
        None => escape(&e.text),
    };
    let _ = write!(page, "<td{class}{data}>{text}</td>");
}

/// The colour bands of a share of the baseline, best first: from what percentage, the
/// class the style sheet colours, and how the footer names it.
const BANDS: [(f64, &str, &str); 7] = [
    (105.0, "share above", "105 % and more"),
    (95.0, "share s95", "95–105 %"),
    (80.0, "share s80", "80–95 %"),
    (60.0, "share s60", "60–80 %"),
    (40.0, "share s40", "40–60 %"),
    (20.0, "share s20", "20–40 %"),
    (f64::NEG_INFINITY, "share s0", "under 20 %"),
];

/// The colour band of a share of the baseline.
fn share_class(percent: f64) -> &'static str {
    BANDS.iter().find(|(from, ..)| percent >= *from).map_or("share s0", |(_, class, _)| class)
}

/// The footer's key to the colours, from the bands themselves.
fn colours() -> String {
    let bands: Vec<String> = BANDS
        .iter()
        .map(|(_, class, name)| format!("<span class=\"{class}\">{name}</span>"))
        .collect();
    format!(
        "<p>Colours in the matrix: an entry's share of its baseline (the figure in parentheses; B/A in a comparison): {}; <span class=\"base\">outlined</span>: the baseline itself. For seconds the share is of the speed (requests/s), so a slower path is a smaller share.</p>\n",
        bands.join(" ")
    )
}

/// The page's style: plain, printable, readable without colour (every share is also
/// written as a number). On screen wide tables scroll and entries keep to one line; paper
/// cannot scroll, so in print tables are set smaller, entries and preformatted text wrap
/// (text anywhere it must, a long command line too; a number and a heading never inside a
/// word, a heading's words break after `_`: `header`; but the client health table's
/// headings, one per fact the client recorded and more with every fact added, break anywhere),
/// and folded details print open: nothing is cut off at the page's edge.
const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1a1a1a;margin:0 auto;max-width:1200px;padding:0 24px 48px}
h1{font-size:24px;margin:24px 0 4px}h2{font-size:20px;margin:36px 0 8px;border-bottom:2px solid #333;padding-bottom:4px}
h3{font-size:16px;margin:24px 0 8px}h4{font-size:14px;margin:16px 0 6px}
.source{color:#555;margin:0 0 12px}nav ul{margin:4px 0;padding-left:20px}
dl.fields{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}dl.fields dt{color:#555}dl.fields dd{margin:0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top;white-space:nowrap}
th{background:#f3f3f3;font-weight:600}.num{text-align:right}
td.base{outline:2px solid #555;outline-offset:-2px}
.share.above{background:#cfe3f3}.share.s95{background:#d9efd9}.share.s80{background:#eef3c8}
.share.s60{background:#fbe6b5}.share.s40{background:#f7cc99}.share.s20{background:#f0a982}.share.s0{background:#e37f72}
footer .share,footer .base{padding:1px 6px;display:inline-block}footer .base{outline:2px solid #555}
span.then{color:#555;font-style:italic;font-size:12px}
pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px;line-height:1.35}
pre.legend{background:none;padding:0;color:#444}
figure.chart{margin:12px 0}figure.chart svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}
figcaption{color:#555;font-size:12px}
details{margin:4px 0}details>summary{cursor:pointer}details.cell{border:1px solid #ddd;padding:4px 10px}
details.cell[open]{padding-bottom:10px}code{font-size:12px}
footer{margin-top:36px;border-top:1px solid #ccc;color:#444;font-size:13px}
@media print{details{display:block}details>summary{display:none}details::details-content{content-visibility:visible;display:block}
body{max-width:none;padding:0}.scroll{overflow:visible}table{font-size:10px}
th,td{white-space:normal;padding:2px 3px}td{overflow-wrap:anywhere}th,td.num{overflow-wrap:normal}
table.health th{overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere}}
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_fall_in_bands_and_a_baseline_figure_is_outlined() {
        assert_eq!(share_class(100.0), "share s95");
        assert_eq!(share_class(94.99), "share s80");
        assert_eq!(share_class(12.3), "share s0");
        assert_eq!(share_class(120.0), "share above");
        let mut page = String::new();
        let e = Entry {
            text: "1.5 <x>".into(),
            percent: None,
            then: Some("2 & 3".into()),
            figure: Some(crate::doc::Figure {
                cell: "server=a&b".into(),
                step: None,
                measure: herd_store::Measure::Seconds,
                value: 1.25,
            }),
        };
        entry(&mut page, Align::Right, &e, true);
        assert_eq!(
            page,
            "<td class=\"num base\" data-cell=\"server=a&amp;b\" data-measure=\"seconds\" data-value=\"1.25\">1.5 &lt;x&gt;<br><span class=\"then\">then 2 &amp; 3</span></td>"
        );
    }
}
