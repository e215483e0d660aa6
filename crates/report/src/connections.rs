//! Which loads opened a new connection per request, said in the report's header: the figure
//! of a load without keep-alive is mostly the cost of connecting (and of a TLS handshake),
//! a different question from a kept-alive load's, and a reader comparing the two must see it.
//! Read from what each run did, its client's command line, so that a store written by an
//! older herd (whose loads had another default) says what really ran: herd without
//! `--no-keep-alive`, ab with `-k`, wrk and h2load always keep connections alive.

use std::collections::BTreeMap;

use herd_store::{RepetitionRecord, StoredExperiment};

/// The header's line: each load, by its axis value, and how it used connections; None when
/// no run says (no load axis, no HTTP client).
pub(crate) fn header(exp: &StoredExperiment) -> Option<String> {
    // load → (some run opened one per request, some kept them alive)
    let mut loads: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for cell in &exp.cells {
        let Some(load) = cell.axis("load") else { continue };
        for rep in &cell.repetitions {
            if let Some(per_request) = per_request(&rep.record) {
                let e = loads.entry(load).or_default();
                if per_request {
                    e.0 = true;
                } else {
                    e.1 = true;
                }
            }
        }
    }
    let named = |want: fn(&(bool, bool)) -> bool| -> Vec<&str> {
        loads.iter().filter(|(_, v)| want(v)).map(|(k, _)| *k).collect()
    };
    let (per, kept, both) = (named(|v| v.0 && !v.1), named(|v| v.1 && !v.0), named(|v| v.0 && v.1));
    let mut parts = Vec::new();
    if !per.is_empty() {
        parts.push(format!("a new connection per request in {}", per.join(", ")));
    }
    if !kept.is_empty() {
        parts.push(format!("kept alive in {}", kept.join(", ")));
    }
    if !both.is_empty() {
        parts.push(format!("both, by client, in {}", both.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Whether the run opened a new connection per request, from its client's command line;
/// None for a client that speaks no HTTP (smbtorture, tbench) or a run that recorded none.
pub(crate) fn per_request(r: &RepetitionRecord) -> Option<bool> {
    let argv = &r.client.argv;
    let has = |flag: &str| argv.iter().any(|a| a == flag);
    match r.client.tool.as_str() {
        "herd" if !argv.is_empty() => Some(has("--no-keep-alive")),
        "ab" if !argv.is_empty() => Some(!has("-k")),
        "wrk" | "h2load" => Some(false),
        _ => None,
    }
}
