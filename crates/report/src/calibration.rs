//! What herd serve, as a null server, reached through each network path (the lab's
//! calibration cells, `herd_store::CALIBRATION_SERVER`): the path's own ceiling, as a
//! share of direct's; over `direct`, the client's ceiling. And the rows that came close to
//! their path's ceiling, whose rate the path or the client may have set rather than the
//! server.

use std::io::{self, Write};

use herd_store::{StoredCell, StoredExperiment, CALIBRATION_SERVER};

use crate::figures::Row;
use crate::table::rate;

/// A server's rate at this share of its path's calibration or more is reported.
const NEAR_CEILING: f64 = 0.9;

pub(crate) fn write(
    exp: &StoredExperiment,
    rows: &[Row<'_>],
    out: &mut dyn Write,
) -> io::Result<()> {
    let axes = crate::figures::varying_axes(exp);
    let is_calibration = |r: &Row<'_>| r.cell.axis("server") == Some(CALIBRATION_SERVER);
    let calibration: Vec<&Row<'_>> =
        rows.iter().filter(|r| is_calibration(r) && r.cell.axis("path").is_some()).collect();
    if calibration.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nwhat each path carries with herd serve as a null server (calibration; over direct, the client's ceiling):"
    )?;
    for c in &calibration {
        let what = match c.median_rate() {
            None => "no rate (no ok repetition)".to_owned(),
            Some(r) if c.cell.axis("path") == Some("direct") => {
                format!("{}{} req/s, the client's ceiling", mark(c), rate(r))
            }
            Some(r) => {
                let direct = calibration
                    .iter()
                    .find(|d| d.step == c.step && differs_only_in(d.cell, c.cell, "path", "direct"))
                    .and_then(|d| d.median_rate())
                    .filter(|d| *d > 0.0);
                match direct {
                    Some(d) => {
                        format!("{}{} req/s, {:.1} % of direct", mark(c), rate(r), r / d * 100.0)
                    }
                    None => format!("{}{} req/s", mark(c), rate(r)),
                }
            }
        };
        writeln!(out, "  {}: {what}", name(c, &axes, true))?;
    }

    let mut near = Vec::new();
    for row in rows.iter().filter(|r| !is_calibration(r) && r.cell.axis("path").is_some()) {
        let Some(c) = calibration.iter().find(|c| {
            c.step == row.step && differs_only_in(c.cell, row.cell, "server", CALIBRATION_SERVER)
        }) else {
            continue;
        };
        let (Some(r), Some(ceiling)) = (row.median_rate(), c.median_rate()) else { continue };
        if ceiling > 0.0 && r >= NEAR_CEILING * ceiling {
            near.push(format!(
                "  {}: {}{} req/s, {:.1} % of herd serve's {} through the same path",
                name(row, &axes, false),
                mark(row),
                rate(r),
                r / ceiling * 100.0,
                rate(ceiling)
            ));
        }
    }
    if !near.is_empty() {
        writeln!(
            out,
            "rates at {:.0} % or more of their path's calibration (the path or the client, not the server, may have set them):",
            NEAR_CEILING * 100.0
        )?;
        for line in near {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Whether `a` is `b` with `axis` set to `value` (b's own value on it may differ).
fn differs_only_in(a: &StoredCell, b: &StoredCell, axis: &str, value: &str) -> bool {
    a.axes.len() == b.axes.len()
        && a.axes
            .iter()
            .zip(&b.axes)
            .all(|((an, av), (bn, bv))| an == bn && if an == axis { av == value } else { av == bv })
}

/// The row's cell by the axes that vary in the experiment (not `server` for a calibration
/// row), and its step.
fn name(row: &Row<'_>, axes: &[String], calibration: bool) -> String {
    let key: Vec<String> = row
        .cell
        .axes
        .iter()
        .filter(|(a, _)| axes.contains(a) && !(calibration && a == "server"))
        .map(|(a, v)| format!("{a}={v}"))
        .collect();
    let step = row.step.as_ref().map(|s| format!(" step {s}")).unwrap_or_default();
    format!("{}{step}", key.join(" "))
}

/// ≠ as in the table: measured with failures.
fn mark(row: &Row<'_>) -> &'static str {
    if row.not_comparable {
        "≠"
    } else {
        ""
    }
}
