//! Flame graphs of the servers' profiles (`[runner] profile = "perf"`), drawn by inferno from
//! the folded stacks the store keeps: one per profiled cell in the HTML page's cell details,
//! and a differential one of two cells (`herd report --diff-profile A B`, [`write_diff`]).
//!
//! inferno's SVG carries a script (search, zoom) and element ids of its own; the page has no
//! script and a Content-Security-Policy that forbids one, so the page shows each graph as an
//! image (`<img src="data:image/svg+xml;base64,…">`), where the script does not run and ids
//! cannot clash; the differential graph, a file of its own, keeps its script. Colours are
//! inferno's deterministic ones (by function name), so the same store gives the same bytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use base64::Engine as _;
use herd_store::{names_value, StoredCell, StoredExperiment};
use inferno::flamegraph::{self, Options};

use crate::svg_chart::escape;
use crate::ReportError;

/// A flame graph of `folded` (`a;b;c N` lines) as an SVG document.
pub(crate) fn svg(folded: &str, title: &str) -> io::Result<Vec<u8>> {
    let mut options = options(title);
    let mut out = Vec::new();
    flamegraph::from_lines(&mut options, folded.lines(), &mut out)?;
    Ok(out)
}

/// The cell's profile as a figure of the page's cell details, if it has one.
pub(crate) fn figure(page: &mut String, cell: &StoredCell) {
    let Some(p) = &cell.profile else { return };
    let rate = p
        .requests_per_second
        .map(|r| format!(", at {r:.0} requests per second under the profiler"))
        .unwrap_or_default();
    let caption = format!(
        "Where the servers' CPU time went: {} -g on every server process during one extra run of this cell{rate}. That run is not a repetition: no figure above includes it.",
        p.tool
    );
    match svg(&p.folded, &format!("{}: servers' stacks ({})", cell.key, p.tool)) {
        Ok(svg) => {
            let _ = writeln!(
                page,
                "<figure class=\"profile\" data-profile-weight=\"{}\"><img alt=\"flame graph of {}\" style=\"width:100%\" src=\"data:image/svg+xml;base64,{}\"><figcaption>{}</figcaption></figure>",
                p.weight,
                escape(&cell.key),
                base64::engine::general_purpose::STANDARD.encode(svg),
                escape(&caption)
            );
        }
        Err(err) => {
            let _ = writeln!(
                page,
                "<p>The profile could not be drawn: {}</p>",
                escape(&err.to_string())
            );
        }
    }
}

/// `herd report --diff-profile A B`: the differential flame graph from cell `a`'s profile to
/// cell `b`'s (inferno's `differential`: B's stacks, red where B spent more than A, blue
/// where less, both normalised to the same total). A cell is named by its key or by
/// `axis=value` pairs joined by commas that name exactly one cell.
pub fn write_diff(
    exp: &StoredExperiment,
    a: &str,
    b: &str,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let (cell_a, cell_b) = (profiled(exp, a)?, profiled(exp, b)?);
    let (Some(pa), Some(pb)) = (&cell_a.profile, &cell_b.profile) else {
        return Err(ReportError::Options("a profiled cell lost its profile".into()));
    };
    let mut diff = Vec::new();
    let diff_options = inferno::differential::Options { normalize: true, strip_hex: false };
    inferno::differential::from_readers(
        diff_options,
        pa.folded.as_bytes(),
        pb.folded.as_bytes(),
        &mut diff,
    )?;
    let text = String::from_utf8_lossy(&diff);
    let mut options = options(&format!("{} against {}", cell_b.key, cell_a.key));
    options.subtitle = Some(format!(
        "red: more of the servers' CPU time in {} than in {}; blue: less",
        cell_b.key, cell_a.key
    ));
    flamegraph::from_lines(&mut options, text.lines(), out)?;
    Ok(())
}

/// The cell `name` names, with a profile; the error lists the profiled cells.
fn profiled<'e>(exp: &'e StoredExperiment, name: &str) -> Result<&'e StoredCell, ReportError> {
    let listed = || {
        let cells: Vec<&str> =
            exp.cells.iter().filter(|c| c.profile.is_some()).map(|c| c.key.as_str()).collect();
        if cells.is_empty() {
            format!(
                "experiment {} has no profiles: run it with `[runner] profile = \"perf\"` or `herd lab run --profile`",
                exp.id
            )
        } else {
            format!("the profiled cells of experiment {}: {}", exp.id, cells.join(", "))
        }
    };
    let found: Vec<&StoredCell> = match exp.cell(name) {
        Some(c) => vec![c],
        None => {
            let pairs: Option<Vec<(&str, &str)>> =
                name.split(',').map(|p| p.trim().split_once('=')).collect();
            let pairs = pairs.ok_or_else(|| {
                ReportError::Options(format!(
                    "--diff-profile {name}: no such cell; name one by its key or by axis=value pairs ({})",
                    listed()
                ))
            })?;
            exp.cells
                .iter()
                .filter(|c| {
                    pairs
                        .iter()
                        .all(|(axis, value)| c.axis(axis).is_some_and(|v| names_value(value, v)))
                })
                .collect()
        }
    };
    match found.as_slice() {
        [c] if c.profile.is_some() => Ok(c),
        [c] => Err(ReportError::Options(format!(
            "--diff-profile {name}: cell {} has no profile ({})",
            c.key,
            listed()
        ))),
        [] => Err(ReportError::Options(format!(
            "--diff-profile {name}: no cell of experiment {} matches ({})",
            exp.id,
            listed()
        ))),
        many => Err(ReportError::Options(format!(
            "--diff-profile {name}: {} cells match ({}); add axis=value pairs to name one",
            many.len(),
            many.iter().map(|c| c.key.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

fn options(title: &str) -> Options<'static> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.deterministic = true;
    options.count_name = "weight".into();
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flame_graph_names_every_frame_and_is_the_same_twice() {
        let folded = "herd;main;herd_serve::worker::run 30\nherd;main;write 10\n";
        let one = svg(folded, "t").unwrap();
        let text = String::from_utf8(one.clone()).unwrap();
        assert!(text.contains("herd_serve::worker::run"), "{text}");
        assert_eq!(one, svg(folded, "t").unwrap());
    }
}
