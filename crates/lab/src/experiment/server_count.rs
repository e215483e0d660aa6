//! `[runner] server_count = true`: the server's own count of every run held against the
//! client's (issue 34: "the merged counts equal the server's log"). Each run's server then
//! writes its access log, and the runner counts the lines of the workload's request once
//! the server has stopped (`runner/server_count.rs`).
//!
//! Off by default: logging costs the server time, and the lab measures servers, not their
//! logging. What cannot be checked is refused here, before anything starts, with the
//! reason: a server herd does not start (`driver = "external"`: its log is not herd's), a
//! server reading the user's own config file (which decides its own log), one whose driver
//! writes no access log (Samba, tbench: not HTTP), NetBench's workloads (no HTTP request to
//! count) and a SPECweb mix (its requests spread over many targets, none the client counts
//! apart).

use super::error::Errors;
use super::raw::RawExperiment;
use super::workload::WorkloadKind;
use super::{Experiment, ExperimentError};

/// Whether the check is on: `[runner] server_count = true`, refused (at the key's line)
/// where a server or workload of the matrix cannot be checked.
pub(super) fn build(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    e: &Experiment,
) -> Result<bool, ExperimentError> {
    let Some(on) = &raw.runner.server_count else { return Ok(false) };
    if !*on.get_ref() {
        return Ok(false);
    }
    match refusal(e) {
        Some(why) => Err(errs.at(
            on.span(),
            format!(
                "[runner] server_count: {why}; leave it out of the matrix, or server_count out"
            ),
        )),
        None => Ok(true),
    }
}

/// Why the server-count check cannot follow `e`'s matrix (its servers and workloads), if
/// it cannot.
fn refusal(e: &Experiment) -> Option<String> {
    for (name, def) in &e.servers {
        if def.external.is_some() || def.kind == herd_drivers::ServerKind::External {
            return Some(format!(
                "server `{name}` is external (driver = \"external\"): herd does not start it \
                 and cannot read its access log"
            ));
        }
        if def.config.is_some() {
            return Some(format!(
                "server `{name}` reads your own config file, which decides its own access log \
                 (herd writes the log it reads into the configs it renders)"
            ));
        }
        if !def.kind.speaks_http() {
            return Some(format!(
                "server `{name}` ({}) is not an HTTP server and writes no access log",
                def.kind.name()
            ));
        }
    }
    for (name, w) in &e.workloads {
        match w.kind {
            WorkloadKind::Netbench => {
                return Some(format!(
                    "workload `{name}` is NetBench's (SMB): it sends no HTTP request to count"
                ))
            }
            WorkloadKind::Specweb { .. } => {
                return Some(format!(
                    "workload `{name}` is a SPECweb mix: its requests spread over many \
                     targets, and the client counts none of them apart"
                ))
            }
            _ => {}
        }
    }
    None
}
