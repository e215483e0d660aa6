//! What herd serve, as a null server, reached through each network path (the lab's
//! calibration cells, `herd_store::CALIBRATION_SERVER`): the path's own ceiling, as a
//! share of direct's; over `direct` and an unshaped link, the client's ceiling. A NetBench
//! cell's calibration is tbench against tbench_srv (the same trace over plain TCP), in
//! Mbit/s. And the rows that came close to their path's ceiling, whose figure the path or
//! the client may have set rather than the server.

use herd_store::{Measure, StoredExperiment, CALIBRATION_SERVER};

use crate::doc::{Block, Doc};
use crate::figures::Row;
use crate::table::rate;

/// A server's rate at this share of its path's calibration or more is reported.
const NEAR_CEILING: f64 = 0.9;

pub(crate) fn add(exp: &StoredExperiment, rows: &[Row<'_>], doc: &mut Doc) {
    let varying = crate::figures::varying_axes(exp);
    let is_calibration = |r: &Row<'_>| r.cell.axis("server") == Some(CALIBRATION_SERVER);
    let calibration: Vec<&Row<'_>> =
        rows.iter().filter(|r| is_calibration(r) && r.cell.axis("path").is_some()).collect();
    if calibration.is_empty() {
        return;
    }
    let mut carried = Vec::new();
    for c in &calibration {
        let unit = unit(c);
        let what = match figure(c) {
            None => "no rate (no ok repetition)".to_owned(),
            Some(r) if c.cell.axis("path") == Some("direct") => {
                let shaped = c.cell.axis("link").is_some_and(|l| l != "unshaped");
                let whose = if shaped {
                    "the client's ceiling over this link"
                } else {
                    "the client's ceiling"
                };
                format!("{}{} {unit}, {whose}", c.mark(), rate(r))
            }
            Some(r) => match c.sibling(rows, "path", "direct").and_then(|d| share(c, d)) {
                Some(p) => format!("{}{} {unit}, {p:.1} % of direct", c.mark(), rate(r)),
                None => format!("{}{} {unit}", c.mark(), rate(r)),
            },
        };
        carried.push(format!("{}: {what}", name(c, &varying)));
    }
    let netbench = calibration.iter().any(|c| is_netbench(c));
    let http = calibration.iter().any(|c| !is_netbench(c));
    let with = match (http, netbench) {
        (true, true) => "herd serve as a null server for HTTP cells and tbench against tbench_srv (the NetBench trace over plain TCP) for NetBench ones",
        (false, true) => "tbench against tbench_srv, the NetBench trace over plain TCP",
        _ => "herd serve as a null server",
    };
    doc.push(Block::Heading(format!(
        "what each path carries with {with} (calibration; direct over an unshaped link: the client's ceiling):"
    )));
    doc.push(Block::Items(carried));

    let mut near = Vec::new();
    for row in rows.iter().filter(|r| !is_calibration(r) && r.cell.axis("path").is_some()) {
        let Some(c) = row.sibling(rows, "server", CALIBRATION_SERVER) else { continue };
        let (Some(r), Some(ceiling), Some(p)) = (figure(row), figure(c), share(row, c)) else {
            continue;
        };
        if p >= NEAR_CEILING * 100.0 {
            let whose = if is_netbench(c) { "tbench's" } else { "herd serve's" };
            near.push(format!(
                "{}: {}{} {unit}, {p:.1} % of {whose} {} through the same path",
                name(row, &varying),
                row.mark(),
                rate(r),
                rate(ceiling),
                unit = unit(row),
            ));
        }
    }
    if !near.is_empty() {
        doc.push(Block::Subheading(format!(
            "rates at {:.0} % or more of their path's calibration (the path or the client, not the server, may have set them):",
            NEAR_CEILING * 100.0
        )));
        doc.push(Block::Items(near));
    }
}

/// A NetBench row: one whose client replayed the trace (smbtorture, tbench), reporting its
/// lines per client; its figure is Mbit/s, not requests.
fn is_netbench(row: &Row<'_>) -> bool {
    row.reported.contains_key(herd_stats::REPORTED_LINES_PER_CLIENT)
}

/// What a calibration compares: Mbit/s for NetBench rows, requests per second otherwise.
fn measure_of(row: &Row<'_>) -> Measure {
    if is_netbench(row) {
        Measure::MbitPerSecond
    } else {
        Measure::RequestsPerSecond
    }
}

fn unit(row: &Row<'_>) -> &'static str {
    if is_netbench(row) {
        "Mbit/s"
    } else {
        "req/s"
    }
}

/// The row's median in its measure.
fn figure(row: &Row<'_>) -> Option<f64> {
    herd_stats::repetitions::median(row.samples(measure_of(row)))
}

/// `row`'s figure as a percentage of `of`'s.
fn share(row: &Row<'_>, of: &Row<'_>) -> Option<f64> {
    crate::matrix::percent(row, of, measure_of(row))
}

/// The row's cell by `path` and `link` always and the other axes that vary in the
/// experiment (not `server` for a calibration row), and its step.
fn name(row: &Row<'_>, varying: &[String]) -> String {
    let calibration = row.cell.axis("server") == Some(CALIBRATION_SERVER);
    let key: Vec<String> = row
        .cell
        .axes
        .iter()
        .filter(|(a, _)| a == "path" || a == "link" || varying.contains(a))
        .filter(|(a, _)| !(calibration && a == "server"))
        .map(|(a, v)| format!("{a}={v}"))
        .collect();
    format!("{}{}", key.join(" "), row.step_suffix())
}
