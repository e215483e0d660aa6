//! `[runner] server_count` beside the table: for each row, the lines of its request in the
//! server's own access log against what the client sent (the verification, the warm-up and
//! the measured run), one figure per ok repetition. A run whose count fell outside what the
//! client's counts allow failed, and is listed with the failed runs instead.

use herd_stats::{
    REPORTED_SERVER_COUNT_LEAST, REPORTED_SERVER_COUNT_LOGGED, REPORTED_SERVER_COUNT_MOST,
};

use crate::doc::Doc;
use crate::figures::Row;

/// Adds the section when any row's runs were counted by their server.
pub(crate) fn add(rows: &[Row<'_>], doc: &mut Doc) {
    let mut items = Vec::new();
    for row in rows {
        let figure = |name: &str| row.reported.get(name).map(Vec::as_slice).unwrap_or_default();
        let (logged, least, most) = (
            figure(REPORTED_SERVER_COUNT_LOGGED),
            figure(REPORTED_SERVER_COUNT_LEAST),
            figure(REPORTED_SERVER_COUNT_MOST),
        );
        let runs: Vec<String> = logged
            .iter()
            .zip(least)
            .zip(most)
            .map(|((logged, least), most)| {
                if least == most {
                    format!("{logged:.0} of {least:.0}")
                } else {
                    format!("{logged:.0} within {least:.0} to {most:.0}")
                }
            })
            .collect();
        if !runs.is_empty() {
            items.push(format!("{}{}: {}", row.cell.key, row.step_suffix(), runs.join("; ")));
        }
    }
    doc.section(
        "server count ([runner] server_count): the lines of each row's request in the server's \
         own access log, against what the client sent (the verification, the warm-up and the \
         measured run; a range for a timed load, whose last requests may be answered uncounted), \
         each ok repetition:"
            .to_owned(),
        items,
    );
}
