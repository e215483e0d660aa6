//! The efficiency matrix: what a server spends to serve a request at a load it is known to
//! keep up with. A closed loop's CPU per request mixes cost with how hard the client pushed;
//! at a pinned rate (`rate`, or each step of `rate_steps`) every server got the same load, so
//! the server's CPU µs per request compares them as costs, lower is better. Only repetitions
//! that held their rate count (`figures::efficiency_rows`); a cell with one that did not is
//! marked `⊘`. Shown after the main matrix, in the matrix's shape and with its marks, unless
//! the main matrix already shows CPU per request; the page draws it as a dot chart.

use herd_store::{Measure, StoredExperiment};

use crate::doc::Block;
use crate::matrix::Baseline;
use crate::svg_dots::DotChart;

/// The efficiency matrix's heading and table; nothing when the experiment has fewer than two
/// cells at a pinned rate with server CPU known, or when `measure` is already CPU per request.
pub(crate) fn blocks(exp: &StoredExperiment, baseline: &Baseline, measure: Measure) -> Vec<Block> {
    if measure == Measure::CpuPerRequest {
        return Vec::new();
    }
    let rows = crate::figures::efficiency_rows(exp);
    let mut blocks = crate::matrix::blocks(exp, &rows, baseline, Measure::CpuPerRequest);
    for block in &mut blocks {
        if let Block::Heading(h) = block {
            *h = format!(
                "efficiency at pinned rates, lower is better: {h}; over the repetitions that \
                 held their rate (⊘: some did not, left out)"
            );
        }
    }
    blocks
}

/// The efficiency matrix as a dot chart; None where [`blocks`] gives no matrix.
pub(crate) fn chart(exp: &StoredExperiment, measure: Measure) -> Option<DotChart> {
    if measure == Measure::CpuPerRequest {
        return None;
    }
    let rows = crate::figures::efficiency_rows(exp);
    if rows.len() < 2 {
        return None;
    }
    let rows: Vec<_> = rows.iter().collect();
    let title = "efficiency at pinned rates: server CPU µs per request".to_owned();
    Some(crate::charts::dot_chart(exp, &rows, Measure::CpuPerRequest, title))
}
