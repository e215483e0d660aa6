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
use super::role_host::RoleHost;
use super::servers::server_spec;
use super::servers_on_host::{spec_on, DOCROOT};
use crate::matrix::Cell;

/// What the servers of `cells` are now, against `known`: one line per program whose
/// version none of the stored runs recorded. With a `[hosts]` server host, asked there,
/// of the programs located there, as each run asks them.
pub(super) fn changes(
    cells: &[&Cell],
    ready: &Ready,
    (run_dir, docroot): (&Path, &Path),
    (sup, host): (&mut Supervisor, Option<&RoleHost>),
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
        let spec = match host {
            Some(host) => {
                let dir = host.path("version-check").join(&server.name);
                spec_on(host, cell, listen, &host.path(DOCROOT), dir)
            }
            None => {
                let dir = run_dir.join("version-check").join(&server.name);
                server_spec(cell, ready, listen, docroot, dir)
            }
        };
        let Some(spec) = spec else { continue };
        // A server that cannot be configured says so when its cell runs.
        let Ok(launch) = render(&spec) else { continue };
        let mut ask = match host {
            Some(host) => Asker::Host(host),
            None => Asker::Here(&mut *sup, run_dir),
        };
        let found = program_versions(&launch, &mut ask, versions);
        for change in known.changes_of(found.iter().map(|(p, v)| (&server.name, p, v))) {
            if !changes.contains(&change) {
                changes.push(change);
            }
        }
    }
    changes
}
