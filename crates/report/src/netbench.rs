//! What a NetBench row says besides its Mbit/s: how far into dbench's trace its clients got
//! (load-file lines per client), flagged when the step never left the trace's write-only
//! opening (it then measured writes only, not NetBench's mix), and the CPU time its client
//! and its server used.

use herd_stats::repetitions as stats;
use herd_stats::{REPORTED_CLIENT_CPU_S, REPORTED_LINES_PER_CLIENT, REPORTED_WRITE_ONLY_OPENING};

use crate::doc::Doc;
use crate::figures::Row;

/// Adds the section when any row is a NetBench step.
pub(crate) fn add(rows: &[Row<'_>], doc: &mut Doc) {
    let mut items = Vec::new();
    for row in rows {
        let Some(lines) = row.reported.get(REPORTED_LINES_PER_CLIENT) else { continue };
        let Some(median) = stats::median(lines) else { continue };
        let mut text = format!(
            "{}{}: {median:.0} load-file lines per client",
            row.cell.key,
            row.step_suffix()
        );
        if let Some(cpu) = row.reported.get(REPORTED_CLIENT_CPU_S).and_then(|c| stats::median(c)) {
            text.push_str(&format!(", client CPU {cpu:.1} s"));
        }
        let server: Vec<f64> =
            row.cell.ok_repetitions().filter_map(|r| r.record.server_cpu_seconds).collect();
        if let Some(cpu) = stats::median(&server) {
            text.push_str(&format!(", server CPU {cpu:.1} s per run"));
        }
        let opening = row.reported.get(REPORTED_WRITE_ONLY_OPENING);
        let flagged = opening.map_or(0, |v| v.iter().filter(|&&f| f > 0.0).count());
        if flagged > 0 {
            text.push_str(&format!(
                " — WRITE-ONLY: {flagged} of {} repetitions never left the trace's opening \
                 (its first 609 lines only write): lengthen the step",
                opening.map_or(0, Vec::len)
            ));
        }
        items.push(text);
    }
    doc.section(
        "NetBench (smbtorture's NBENCH): how far each step got into the trace, medians of the ok repetitions:".to_owned(),
        items,
    );
}
