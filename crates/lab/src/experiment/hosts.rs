//! `[hosts]` checked: every URL an `ssh://` host (`crate::hosts::HostUrl`), at least one
//! host, no machine in two roles, and the ssh_config a file that exists, read from the
//! experiment file's directory when relative (as a user expects of a file beside it).
//!
//! One machine in two roles is refused: hosts are there so that the client and the server
//! do not share CPUs, caches and a network card, and a machine named twice would quietly
//! bring that back. (Two logins to one machine are one machine: host and port decide.)

use std::path::{Path, PathBuf};

use toml::Spanned;

use super::error::{line_of, Errors};
use super::raw::RawExperiment;
use super::ExperimentError;
use crate::hosts::{HostUrl, Hosts, Role};

pub(super) fn build(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    source: &str,
) -> Result<Option<Hosts>, ExperimentError> {
    let Some(section) = &raw.hosts else { return Ok(None) };
    let h = section.get_ref();
    let url = |role: Role, s: &Spanned<String>| {
        s.get_ref()
            .parse::<HostUrl>()
            .map_err(|e| errs.at(s.span(), format!("[hosts] {role}: {e}")))
    };
    let mut seen: Vec<(Role, HostUrl, usize)> = Vec::new();
    let mut note = |role: Role, u: &HostUrl, s: &Spanned<String>| {
        if let Some((other, _, line)) = seen.iter().find(|(_, o, _)| o.same_machine(u)) {
            return Err(errs.at(
                s.span(),
                format!(
                    "[hosts] {role}: `{u}` is the {other}'s machine already (line {line}): \
                     each role needs a machine of its own, or they would share its CPUs and \
                     network card; leave [hosts] out to run every role on this machine"
                ),
            ));
        }
        seen.push((role, u.clone(), line_of(errs.text, s.span().start)));
        Ok(())
    };
    let server = match &h.server {
        Some(s) => {
            let u = url(Role::Server, s)?;
            note(Role::Server, &u, s)?;
            Some(u)
        }
        None => None,
    };
    let mut clients = Vec::new();
    if let Some(list) = &h.clients {
        if list.get_ref().is_empty() {
            return Err(errs.at(
                list.span(),
                "[hosts] clients is empty: name one or more client hosts, or leave the key out \
                 (the client runs on this machine)",
            ));
        }
        for (i, s) in list.get_ref().iter().enumerate() {
            let u = url(Role::Client(i + 1), s)?;
            note(Role::Client(i + 1), &u, s)?;
            clients.push(u);
        }
    }
    let router = match &h.router {
        Some(s) => {
            let u = url(Role::Router, s)?;
            note(Role::Router, &u, s)?;
            Some(u)
        }
        None => None,
    };
    if server.is_none() && clients.is_empty() && router.is_none() {
        return Err(errs.at(
            section.span(),
            "[hosts] names no host: give `server`, `clients` or `router` as \
             ssh://[user@]host[:port], or leave [hosts] out to run on this machine",
        ));
    }
    let ssh_config = match &h.ssh_config {
        Some(c) => Some(ssh_config(errs, c, source)?),
        None => None,
    };
    let idle = match &h.idle_timeout {
        Some(t) => {
            let d = herd_stats::units::parse_duration(t.get_ref())
                .map_err(|e| errs.at(t.span(), format!("[hosts] idle_timeout {e}")))?;
            crate::hosts::session::Liveness::for_idle(d)
                .map_err(|why| errs.at(t.span(), format!("[hosts] idle_timeout: {why}")))?;
            d
        }
        None => crate::hosts::session::Liveness::LAB.idle,
    };
    Ok(Some(Hosts { server, clients, router, ssh_config, idle }))
}

/// The ssh_config's path: as written when absolute, else beside the experiment file.
fn ssh_config(
    errs: &Errors<'_>,
    c: &Spanned<String>,
    source: &str,
) -> Result<PathBuf, ExperimentError> {
    let written = Path::new(c.get_ref());
    let path = if written.is_absolute() || source.starts_with("bundled:") {
        written.to_path_buf()
    } else {
        Path::new(source).parent().unwrap_or(Path::new("")).join(written)
    };
    if !path.is_file() {
        return Err(errs.at(
            c.span(),
            format!(
                "[hosts] ssh_config: no file {} (a relative path is read from the experiment \
                 file's directory)",
                path.display()
            ),
        ));
    }
    Ok(path)
}
