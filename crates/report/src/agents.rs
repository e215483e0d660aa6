//! A row whose client was herd spread over agents (`[client] agents`, herd cluster run): the
//! matrix shows the merged figures, exact; this section shows each agent's own share beside
//! them, medians of the ok repetitions: its requests per second, its p99, how late it
//! started after the shared instant, and its clock's offset from the coordinator's. An agent far from the others (a slower host, a later
//! start) is seen here, not averaged away.

use std::collections::BTreeMap;

use herd_stats::repetitions as stats;
use herd_stats::AgentFigure;

use crate::doc::Doc;
use crate::figures::Row;

/// Adds the section when any row was measured over agents.
pub(crate) fn add(rows: &[Row<'_>], doc: &mut Doc) {
    let mut items = Vec::new();
    for row in rows {
        // Agent → figure → median over the repetitions.
        let mut agents: BTreeMap<u32, BTreeMap<AgentFigure, f64>> = BTreeMap::new();
        for (name, values) in &row.reported {
            let Some((index, figure)) = AgentFigure::parse(name) else { continue };
            if let Some(median) = stats::median(values) {
                agents.entry(index).or_default().insert(figure, median);
            }
        }
        if agents.is_empty() {
            continue;
        }
        let parts: Vec<String> = agents
            .iter()
            .map(|(index, figures)| {
                let mut text = format!("agent {index}");
                if let Some(rps) = figures.get(&AgentFigure::RequestsPerSecond) {
                    text.push_str(&format!(" {rps:.0} req/s"));
                }
                if let Some(p99) = figures.get(&AgentFigure::P99Us) {
                    text.push_str(&format!(", p99 {:.3} ms", p99 / 1e3));
                }
                if let Some(late) = figures.get(&AgentFigure::StartLateUs) {
                    text.push_str(&format!(", started {:.3} ms late", late / 1e3));
                }
                if let Some(offset) = figures.get(&AgentFigure::ClockOffsetUs) {
                    text.push_str(&format!(", clock {:+.3} ms", offset / 1e3));
                }
                text
            })
            .collect();
        items.push(format!("{}{}: {}", row.cell.key, row.step_suffix(), parts.join("; ")));
    }
    doc.section(
        "rows measured over agents (herd cluster run; the matrix shows their merged figures): each agent's own, medians of the ok repetitions:"
            .to_owned(),
        items,
    );
}
