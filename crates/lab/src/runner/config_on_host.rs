//! A user's own config files (`[servers.NAME] config`) judged on the `[hosts]` server host,
//! where the servers will read them, before the store opens: filled in as a run fills them
//! (the host's programs, users and paths), written through the helper into a scratch
//! directory of its run directory, and tested by the server's own config test there
//! (`nginx -t` …, run over ssh). The local check (`preflight::user_configs_pass`) would
//! judge them against this machine's servers, which the runs do not use: a config the
//! host's server refuses fails here, naming the host, with the server's own words, before
//! anything runs.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use super::role_host::RoleHost;
use super::servers_on_host::{spec_on, write_launch};
use crate::error::LabError;
use crate::matrix::Cell;

/// Where the scratch directories go, in the helper's run directory.
const SCRATCH: &str = "config-test";

/// Every user's own config of `cells`, once per server and protocol, judged on `host`.
pub(super) fn check(host: &RoleHost, cells: &[Cell]) -> Result<(), LabError> {
    let mut judged = BTreeSet::new();
    for c in cells.iter().filter(|c| c.server.config.is_some()) {
        if !judged.insert((c.server.name.clone(), c.protocol)) {
            continue;
        }
        config_test(host, c, judged.len())
            .map_err(|why| LabError::Setup(format!("[hosts] server {}: {why}", host.url)))?;
    }
    Ok(())
}

fn config_test(host: &RoleHost, c: &Cell, n: usize) -> Result<(), String> {
    let name = &c.server.name;
    let config = c.server.config.as_ref();
    let path = config.map_or_else(String::new, |u| u.path.display().to_string());
    let scratch = host.path(&format!("{SCRATCH}/{n}"));
    let docroot = scratch.join("www");
    host.make_dir(&docroot, Some(0o755), None)?;
    // A port no run uses: the test does not bind it.
    let listen = SocketAddr::from(([127, 0, 0, 1], 9));
    let spec = spec_on(host, c, listen, &docroot, scratch.join(name))
        .ok_or_else(|| format!("no programs were located for server {name}"))?;
    let launch = crate::server_config::render_with(&spec, config)
        .map_err(|e| format!("server {name}: config {path}: {e}"))?;
    write_launch(host, &launch)?;
    for argv in &launch.validate {
        let words: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let out = host.run(&words)?;
        if out.code != 0 {
            return Err(format!(
                "server {name}: its own config test refused {path} there ({}: exit status \
                 {}):\n{}",
                words.join(" "),
                out.code,
                format!("{}{}", out.stdout, out.stderr).trim_end()
            ));
        }
    }
    Ok(())
}
