//! Before a resumed experiment runs anything: the server programs its runs left would start,
//! asked their versions now, against what its stored runs recorded. A program upgraded in
//! between (an `apt-get upgrade` between two sessions of a five-hour experiment) would make
//! the figures measured now incomparable with the stored ones: the resume is refused before
//! a run is spent finding it, and the store is left as it was. Each run's record is still
//! compared after it (`runner::run`), for a program that changes while the experiment runs.

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;

use herd_drivers::render;
use herd_topo::Supervisor;

use super::launch::{program_versions, Asker};
use super::preflight::Ready;
use super::resume::ServerVersions;
use super::servers::server_spec;
use crate::matrix::Cell;

/// What the servers of `cells` are now, against `known`: one line per program whose
/// version none of the stored runs recorded.
pub(super) fn changes(
    cells: &[&Cell],
    ready: &Ready,
    (run_dir, docroot): (&Path, &Path),
    sup: &mut Supervisor,
    versions: &mut BTreeMap<String, String>,
    known: &ServerVersions,
) -> Vec<String> {
    let mut asked = HashSet::new();
    let mut changes: Vec<String> = Vec::new();
    for cell in cells {
        let server = &cell.server;
        if !asked.insert((server.name.clone(), server.kind, cell.protocol)) {
            continue;
        }
        // Rendered as its cell would render it, to learn its programs and their probes;
        // nothing is written or started but the probes.
        let listen = SocketAddr::from(([127, 0, 0, 1], server.kind.fixed_port().unwrap_or(8080)));
        let dir = run_dir.join("version-check").join(&server.name);
        let Some(spec) = server_spec(cell, ready, listen, docroot, dir) else { continue };
        // A server that cannot be configured says so when its cell runs.
        let Ok(launch) = render(&spec) else { continue };
        let found = program_versions(&launch, &mut Asker::Here(sup, run_dir), versions);
        for change in known.changes_of(found.iter().map(|(p, v)| (&server.name, p, v))) {
            if !changes.contains(&change) {
                changes.push(change);
            }
        }
    }
    changes
}
