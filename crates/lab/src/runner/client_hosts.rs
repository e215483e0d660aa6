//! The client hosts of an experiment's `[hosts]`: where herd's client runs as the agents of
//! one spread run (`herd cluster run --ssh`, one agent per host, merged exactly), and where
//! ab, wrk and h2load run, on client 1 alone (they cannot spread a run: `tool_on_host.rs`).
//! The lab reaches each once, before the store opens: its helper's hello (this very build,
//! else an error naming the host) and its disclosure (`herd doctor --json` there, stored as
//! `host.clientN.*`); the tools the cells need are located on client 1 (all missing ones
//! named at once, with their package) and their versions asked there. `[client] cpus` name
//! CPUs of each client host, checked against each one's online CPUs here; the client runs on
//! them there (herd's agents through `--agent-cpus`, the tools through client 1's helper), or
//! on all of each host's CPUs without them. It then holds those sessions for the whole lab
//! run, and each run's client shares their ssh connections (`HERD_SSH_CONTROL_DIR`): no run
//! pays for a login.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_host::LinkError;
use herd_topo::CpuSet;

use crate::client::{self, Tool};
use crate::error::LabError;
use crate::hosts::session::HostSession;
use crate::hosts::ssh::Ssh;
use crate::hosts::{HostUrl, Hosts};
use crate::matrix::Cell;

/// How long ssh may take to connect to a host.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long locating the tools or asking a version there may take.
const QUICK: Duration = Duration::from_secs(30);

/// The client hosts, reached.
pub(crate) struct ClientHosts {
    /// Declared before `ssh`: the sessions end before their transport's directory goes.
    sessions: Vec<HostSession>,
    ssh: Ssh,
    disclosure: Vec<(String, String)>,
    /// The hosts' URLs as text, for the client's command line.
    texts: Vec<String>,
    /// ab, wrk and h2load as the cells need them, located on client 1.
    tools: BTreeMap<Tool, PathBuf>,
    /// Their versions there (`client:ab` → `2.3`), as `preflight::versions` says them here.
    versions: BTreeMap<String, String>,
    /// `[client] cpus`, which name CPUs of each client host (checked there); `All`: every
    /// CPU of each, the server being on a machine of its own.
    cpus: CpuSet,
}

impl ClientHosts {
    /// Reaches every client host of `hosts` (None: there are none) and checks `cpus`
    /// (`[client] cpus`) against each one's online CPUs.
    pub(crate) fn open(
        hosts: &Hosts,
        cells: &[Cell],
        cpus: &CpuSet,
        version: &str,
        scratch: &Path,
    ) -> Result<Option<ClientHosts>, LabError> {
        if hosts.clients.is_empty() {
            return Ok(None);
        }
        let ssh = Ssh::new(hosts.ssh_config.as_deref(), CONNECT_TIMEOUT, scratch).map_err(|e| {
            LabError::Setup(format!("[hosts] clients: cannot make ssh's socket directory: {e}"))
        })?;
        let mut sessions = Vec::new();
        for (i, url) in hosts.clients.iter().enumerate() {
            let s = HostSession::open_with(&ssh, url, version, hosts.liveness())
                .map_err(|e| LabError::Setup(format!("[hosts] client {}: {e}", i + 1)))?;
            sessions.push(s);
        }
        for (i, s) in sessions.iter().enumerate() {
            s.check_cpus(cpus).map_err(|why| {
                LabError::Cpus(format!("[client] cpus {cpus} on [hosts] client {}: {why}", i + 1))
            })?;
        }
        let mut disclosure = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            let key = |k: &str| format!("host.client{}.{k}", i + 1);
            disclosure.push((key("url"), s.url.to_string()));
            disclosure.push((key("herd"), s.hello.herd.clone()));
            match s.with(|l| l.doctor()) {
                Ok((text, _)) => match super::role_host::doctor_environment(&text) {
                    Ok(env) => disclosure.extend(env.into_iter().map(|(k, v)| (key(&k), v))),
                    Err(why) => disclosure.push((key("doctor"), why)),
                },
                Err(why) => disclosure.push((key("doctor"), why.to_string())),
            }
        }
        let texts = sessions.iter().map(|s| s.url.to_string()).collect();
        let mut tools = BTreeMap::new();
        let mut versions = BTreeMap::new();
        if let Some(first) = sessions.first() {
            let wanted: BTreeSet<Tool> =
                cells.iter().map(|c| c.client).filter(|&t| t != Tool::Herd).collect();
            let url = &first.url;
            tools = locate(&ssh, url, &wanted).map_err(|missing| {
                LabError::Missing(missing.into_iter().map(|m| format!("{url}: {m}")).collect())
            })?;
            for (&tool, path) in &tools {
                versions
                    .insert(format!("client:{}", tool.name()), tool_version(&ssh, url, tool, path));
            }
            if !tools.is_empty() {
                let each: Vec<String> =
                    tools.iter().map(|(t, p)| format!("{t} {}", p.display())).collect();
                disclosure.push(("host.client1.tools".to_owned(), each.join(", ")));
            }
        }
        let cpus = cpus.clone();
        Ok(Some(ClientHosts { sessions, ssh, disclosure, texts, tools, versions, cpus }))
    }

    /// The CPU list for a program started on a client host (None: every CPU there).
    pub(super) fn start_cpus(&self) -> Option<String> {
        self.cpus.cpus().map(|_| self.cpus.to_string())
    }

    /// How many CPUs a client on one client host may use: `[client] cpus`, else all of
    /// client 1's (what ab, wrk and h2load are judged by).
    pub(super) fn cpu_count(&self) -> Option<usize> {
        match self.cpus.cpus() {
            Some(cpus) => Some(cpus.len()),
            None => self.first().map(|s| s.hello.cpus),
        }
    }

    /// What a run's record says of the client's CPUs: `cpus` (this cell's tool runs on
    /// client 1 alone, or `each`: herd's agents, one on each host) and where.
    pub(crate) fn cpus_record(&self, each: bool) -> String {
        let (set, urls) = (&self.cpus, &self.texts);
        if each {
            format!("{set} on each of {}", urls.join(", "))
        } else {
            format!("{set} on {}", urls.first().map_or("client 1", String::as_str))
        }
    }

    /// Each client host's network card toward `target` (the server host's address) into
    /// the disclosure (`host.clientN.nic`).
    pub(crate) fn disclose_nics(&mut self, target: std::net::IpAddr) {
        for (i, s) in self.sessions.iter().enumerate() {
            let nic = s.with(|l| l.nic(target)).unwrap_or_else(|why| why.to_string());
            self.disclosure.push((format!("host.client{}.nic", i + 1), nic));
        }
    }

    /// Where `tool` (ab, wrk, h2load) is on client 1, if a cell runs it there.
    pub(crate) fn tool(&self, tool: Tool) -> Option<&Path> {
        self.tools.get(&tool).map(PathBuf::as_path)
    }

    /// The versions of the tools on client 1, keyed as `preflight::versions` keys them.
    pub(crate) fn versions(&self) -> &BTreeMap<String, String> {
        &self.versions
    }

    /// Client 1: where ab, wrk and h2load run.
    pub(super) fn first(&self) -> Option<&HostSession> {
        self.sessions.first()
    }

    /// `f` on client 1's link; a lost link (anything but a refusal) is remembered for
    /// [`ClientHosts::lost`] ([`HostSession::call`]).
    pub(super) fn call<R>(
        &self,
        f: impl FnOnce(&mut herd_host::HostLink<std::process::ChildStdin>) -> Result<R, LinkError>,
    ) -> Result<R, String> {
        let Some(first) = self.sessions.first() else {
            return Err("[hosts] names no client host".to_owned());
        };
        first.call(f)
    }

    /// The hosts, in file order: one agent each.
    pub(crate) fn urls(&self) -> Vec<&HostUrl> {
        self.sessions.iter().map(|s| &s.url).collect()
    }

    /// [`ClientHosts::urls`] as text.
    pub(crate) fn url_texts(&self) -> &[String] {
        &self.texts
    }

    /// Where their ssh masters' sockets are, for the client's own ssh to share them.
    pub(crate) fn control_dir(&self) -> &Path {
        self.ssh.control_dir()
    }

    /// What the disclosure records of them.
    pub(crate) fn disclosure(&self) -> &[(String, String)] {
        &self.disclosure
    }

    /// One line for the user.
    pub(crate) fn describe(&self) -> String {
        let each: Vec<String> = self
            .sessions
            .iter()
            .map(|s| {
                let h = &s.hello;
                format!("{} ({}, {} CPUs, kernel {})", s.url, h.hostname, h.cpus, h.kernel)
            })
            .collect();
        let tools: Vec<&str> = self.tools.keys().map(|t| t.name()).collect();
        let alone = match tools.as_slice() {
            [] => String::new(),
            [one] => format!("; {one} runs on client 1 alone (herd's client spreads over all)"),
            [init @ .., last] => format!(
                "; {} and {last} run on client 1 alone (herd's client spreads over all)",
                init.join(", ")
            ),
        };
        let pinned = match self.cpus.cpus() {
            Some(_) => format!("; the client on CPUs {} of each", self.cpus),
            None => String::new(),
        };
        format!("client hosts, one agent each: {}{alone}{pinned}", each.join(", "))
    }

    /// Why a link to one of them is lost, if one is.
    pub(crate) fn lost(&self) -> Option<String> {
        self.sessions.iter().find_map(|s| s.lost().map(|why| format!("{}: {why}", s.url)))
    }

    /// Ends every helper in order.
    pub(crate) fn close(self) {
        let ClientHosts { sessions, ssh, .. } = self;
        for s in sessions {
            let _ = s.bye();
        }
        drop(ssh);
    }
}

/// `wanted` located on the host: every candidate path asked in one command; the missing
/// ones, all named with their package.
fn locate(
    ssh: &Ssh,
    url: &HostUrl,
    wanted: &BTreeSet<Tool>,
) -> Result<BTreeMap<Tool, PathBuf>, Vec<String>> {
    let (found, missing) = locate_each(ssh, url, wanted).map_err(|e| vec![e])?;
    all_or_missing(found, missing)
}

/// What was found, if nothing is `missing`; else every missing one, named.
pub(super) fn all_or_missing<T>(found: T, missing: Vec<String>) -> Result<T, Vec<String>> {
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(missing)
    }
}

/// `wanted` on the host, asked in one ssh command: those found (at their first candidate
/// there), and the missing ones, each named with its package. Err: the command could not
/// run. `herd lab hosts check` says the same of client 1 as a lab run would find.
pub(crate) fn locate_each(
    ssh: &Ssh,
    url: &HostUrl,
    wanted: &BTreeSet<Tool>,
) -> Result<(BTreeMap<Tool, PathBuf>, Vec<String>), String> {
    if wanted.is_empty() {
        return Ok((BTreeMap::new(), Vec::new()));
    }
    let paths: BTreeSet<String> = wanted
        .iter()
        .flat_map(|&t| client::candidates(t).iter().map(|c| (*c).to_owned()))
        .collect();
    let there = super::role_host::executables(ssh, url, &paths)?;
    let there: BTreeSet<&str> = there.iter().filter_map(|p| p.to_str()).collect();
    Ok(pick(wanted, &there))
}

/// Each of `wanted` at its first candidate among `there` (the executable files found on
/// the host), and the missing ones named with their package.
fn pick(wanted: &BTreeSet<Tool>, there: &BTreeSet<&str>) -> (BTreeMap<Tool, PathBuf>, Vec<String>) {
    let mut found = BTreeMap::new();
    let mut missing = Vec::new();
    for &tool in wanted {
        match client::candidates(tool).iter().find(|c| there.contains(*c)) {
            Some(path) => {
                found.insert(tool, PathBuf::from(path));
            }
            None => missing.push(format!(
                "client {tool}: not installed there (apt-get install {}); ab, wrk and h2load \
                 run on client 1",
                tool.package()
            )),
        }
    }
    (found, missing)
}

/// `tool`'s version on the host, asked there as `preflight::versions` asks it here.
pub(crate) fn tool_version(ssh: &Ssh, url: &HostUrl, tool: Tool, path: &Path) -> String {
    let argv: Vec<String> =
        client::version_argv(tool, path).iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let text = match ssh.run(url, &words, None, QUICK) {
        Ok(out) => format!("{}{}", out.stdout, out.stderr),
        Err(e) => e.to_string(),
    };
    client::parse_version(tool, &text).unwrap_or_else(|| super::preflight::unknown(&text))
}

impl std::fmt::Debug for ClientHosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientHosts").field("hosts", &self.urls()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_picked_at_their_first_candidate_and_every_missing_one_is_named() {
        let wanted: BTreeSet<Tool> = [Tool::Ab, Tool::Wrk, Tool::H2load].into();
        let there: BTreeSet<&str> = ["/usr/local/bin/ab", "/usr/sbin/ab", "/usr/bin/wrk"].into();
        let (found, missing) = pick(&wanted, &there);
        assert_eq!(
            missing,
            ["client h2load: not installed there (apt-get install nghttp2-client); ab, wrk and \
              h2load run on client 1"]
        );
        assert_eq!(found.keys().copied().collect::<Vec<_>>(), [Tool::Ab, Tool::Wrk]);
        let there: BTreeSet<&str> = ["/usr/local/bin/ab", "/usr/sbin/ab", "/usr/bin/h2load"].into();
        let wanted: BTreeSet<Tool> = [Tool::Ab, Tool::H2load].into();
        let (found, missing) = pick(&wanted, &there);
        assert!(missing.is_empty(), "{missing:?}");
        assert_eq!(found[&Tool::Ab], Path::new("/usr/sbin/ab"), "the first candidate found");
        assert_eq!(found[&Tool::H2load], Path::new("/usr/bin/h2load"));
        let none: BTreeSet<&str> = BTreeSet::new();
        let (found, both) = pick(&[Tool::Ab, Tool::Wrk].into(), &none);
        assert!(found.is_empty());
        assert_eq!(both.len(), 2, "{both:?}");
        assert!(both[0].contains("apache2-utils") && both[1].contains("apt-get install wrk"));
        let (found, missing) = pick(&BTreeSet::new(), &none);
        assert!(found.is_empty() && missing.is_empty());
    }
}
