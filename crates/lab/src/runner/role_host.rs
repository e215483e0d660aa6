//! The server host of an experiment's `[hosts]` (docs/hosts.md): the machine where every
//! run's server starts, through that host's helper (`herd host`, crates/host) over one ssh
//! connection; and, the same way, its router host, where a proxy path's program runs. [`RoleHost::open`] runs once, before the store opens: the helper's hello
//! (this very build, or an error naming the host), the host's address as the clients reach
//! it, the server programs located there (all missing ones named at once, with their
//! package), the user its workers run as, and the document root copied into the helper's
//! run directory. Each run then writes its rendered files there, starts, probes, reads the
//! CPU time of, and stops its server through the helper. Whatever happens to herd, the
//! helper stops what it started when its link closes or goes silent.
//!
//! Paths on the host are absolute strings of the host's file system; the helper refuses a
//! file or directory outside its run directory, so every path herd writes is made there.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use herd_drivers::{programs_needed, Programs};
use herd_host::protocol::{Ending, Probe, Readiness, StartSpec};
use herd_host::LinkError;

use crate::error::LabError;
use crate::hosts::session::HostSession;
use crate::hosts::ssh::{RemoteOutput, Ssh};
use crate::hosts::{build_id, HostUrl, Hosts, Role, CACHE_DIR};
use crate::matrix::Cell;

/// How long ssh may take to connect to a host.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a quick command on the host (its facts, a version) may take.
const QUICK: Duration = Duration::from_secs(30);
/// The port a server listens on on the server host (a server with a built-in port keeps
/// it): clear of 80 and 8080, which a user's own machine may well use already.
pub(super) const HOST_PORT: u16 = 18080;

/// A host that runs one of the experiment's roles beside the client, reached: the server
/// host ([`RoleHost::open`]), or the router host where a proxy path's program runs
/// ([`RoleHost::open_router`]), with the same helper and requests.
pub(crate) struct RoleHost {
    /// Its part in the experiment: [`Role::Server`] or [`Role::Router`].
    pub(super) role: Role,
    /// Declared before `ssh`: the session ends before its transport's directory goes.
    session: HostSession,
    ssh: Ssh,
    pub(super) url: HostUrl,
    /// Where the clients send load: the host's address.
    pub(super) address: IpAddr,
    /// The helper's run directory on the host: every file of every run goes under it.
    run_dir: PathBuf,
    /// This build of herd there.
    herd: PathBuf,
    /// What the disclosure records of the host and the path to it ([`RoleHost::disclose`]).
    disclosure: Vec<(String, String)>,
    /// The programs of each server (by its name), or on the router host of each proxy (by
    /// the path's name), located on the host.
    pub(super) programs: BTreeMap<String, Programs>,
    /// Who the servers' workers run as there (when the helper runs as root), and who the
    /// helper runs as.
    pub(super) user: Option<String>,
    pub(super) runs_as: Option<String>,
    /// The ids of the programs started and not yet stopped, in start order.
    started: Mutex<Vec<String>>,
}

impl std::fmt::Debug for RoleHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoleHost").field("url", &self.url).field("address", &self.address).finish()
    }
}

/// What one quick command says of the host: its user's home and names, and whether the
/// servers' usual user exists there.
struct Facts {
    home: String,
    user: String,
    root: bool,
    www_data: bool,
}

impl RoleHost {
    /// Reaches `hosts.server` (None: the experiment has no server host), checks its build,
    /// locates the programs `cells` need there. Every failure names the host, before
    /// anything starts.
    pub(crate) fn open(
        hosts: &Hosts,
        cells: &[Cell],
        version: &str,
        scratch: &Path,
    ) -> Result<Option<RoleHost>, LabError> {
        let Some(url) = &hosts.server else { return Ok(None) };
        let locate = |ssh: &Ssh, herd: &Path| locate(ssh, url, cells, herd);
        Self::open_as(Role::Server, url, hosts, version, scratch, &locate).map(Some)
    }

    /// Reaches `hosts.router` (None: the experiment has no router host) as
    /// [`RoleHost::open`] reaches the server host, locating the programs of the cells'
    /// proxy paths (HAProxy, nginx, sslh) there.
    pub(crate) fn open_router(
        hosts: &Hosts,
        cells: &[Cell],
        version: &str,
        scratch: &Path,
    ) -> Result<Option<RoleHost>, LabError> {
        let Some(url) = &hosts.router else { return Ok(None) };
        let locate = |ssh: &Ssh, herd: &Path| locate_proxies(ssh, url, cells, herd);
        Self::open_as(Role::Router, url, hosts, version, scratch, &locate).map(Some)
    }

    /// `url`, in `role`, reached: its helper's hello, its user, its address as resolved
    /// here, and the programs `locate` finds there.
    fn open_as(
        role: Role,
        url: &HostUrl,
        hosts: &Hosts,
        version: &str,
        scratch: &Path,
        locate: &Locate<'_>,
    ) -> Result<RoleHost, LabError> {
        let fail = |why: String| LabError::Setup(format!("[hosts] {role} {url}: {why}"));
        let ssh = Ssh::new(hosts.ssh_config.as_deref(), CONNECT_TIMEOUT, scratch)
            .map_err(|e| fail(format!("cannot make ssh's socket directory: {e}")))?;
        let session = HostSession::open_with(&ssh, url, version, hosts.liveness())
            .map_err(|e| LabError::Setup(format!("[hosts] {role}: {e}")))?;
        let facts = facts(&ssh, url).map_err(fail)?;
        let address = address(&ssh.hostname(url)).map_err(fail)?;
        let herd = PathBuf::from(format!("{}/{CACHE_DIR}/herd-{}", facts.home, build_id(version)));
        let programs = locate(&ssh, &herd).map_err(|missing| {
            LabError::Missing(missing.into_iter().map(|m| format!("{url}: {m}")).collect())
        })?;
        let user = (facts.root && facts.www_data).then(|| "www-data".to_owned());
        let hello = session.hello.clone();
        Ok(RoleHost {
            role,
            session,
            ssh,
            url: url.clone(),
            address,
            run_dir: PathBuf::from(hello.run_dir),
            herd,
            disclosure: Vec::new(),
            programs,
            user,
            runs_as: Some(facts.user),
            started: Mutex::new(Vec::new()),
        })
    }

    /// Its role as the disclosure's keys name it: `server`, `router`.
    pub(super) fn key(&self) -> &'static str {
        match self.role {
            Role::Router => "router",
            _ => "server",
        }
    }

    /// `f` on the helper's link; a lost link is remembered ([`HostSession::call`]).
    fn call<R>(
        &self,
        f: impl FnOnce(&mut herd_host::HostLink<std::process::ChildStdin>) -> Result<R, LinkError>,
    ) -> Result<R, String> {
        self.session.call(f)
    }

    /// How the host reads a program's CPU time (`cgroup-v1`, `cgroup-v2`, `per-process`).
    pub(super) fn accounting(&self) -> &str {
        &self.session.hello.accounting
    }

    /// herd's path there.
    pub(super) fn herd_path(&self) -> String {
        self.herd.display().to_string()
    }

    /// Reads the host's disclosure (`herd doctor --json` there: its machine, kernel,
    /// sysctls, limits) and checks the path to it (`host_path`), for every stored result;
    /// the path's facts in words.
    pub(super) fn disclose(&mut self) -> String {
        let h = self.session.hello.clone();
        let key = self.key();
        let at = |k: &str| format!("host.{key}.{k}");
        let mut d: Vec<(String, String)> = vec![
            (at("url"), self.url.to_string()),
            (at("address"), self.address.to_string()),
            (at("herd"), h.herd.clone()),
            (at("cpu_accounting"), h.accounting.clone()),
        ];
        match self.call(|l| l.doctor()) {
            Ok((text, _)) => match doctor_environment(&text) {
                Ok(env) => d.extend(env.into_iter().map(|(k, v)| (at(&k), v))),
                Err(why) => d.push((at("doctor"), why)),
            },
            Err(why) => d.push((at("doctor"), why)),
        }
        // The card that holds the address the load comes to.
        let address = self.address;
        d.push((at("nic"), self.call(|l| l.nic(address)).unwrap_or_else(|why| why)));
        let path = super::host_path::check(self);
        d.extend(path.entries(key));
        self.disclosure = d;
        path.sentence()
    }

    /// What [`RoleHost::disclose`] found.
    pub(super) fn disclosure(&self) -> &[(String, String)] {
        &self.disclosure
    }

    /// Whether `cpus` are all online on the host; why not, in words about it.
    pub(super) fn check_cpus(&self, cpus: &herd_topo::CpuSet) -> Result<(), String> {
        self.session.check_cpus(cpus)
    }

    /// One line on the host for the user: who, where, what.
    pub(super) fn describe(&self) -> String {
        let h = &self.session.hello;
        format!(
            "{} host {} ({}, {}): {} CPUs online ({}), kernel {}, the {} CPU time: {}, load to \
             {}",
            self.key(),
            self.url,
            h.hostname,
            h.herd,
            h.cpus,
            h.online,
            h.kernel,
            if self.role == Role::Router { "router program's" } else { "servers'" },
            h.accounting,
            self.address
        )
    }

    /// `rel` (a path inside the helper's run directory) as the host names it.
    pub(super) fn path(&self, rel: &str) -> PathBuf {
        self.run_dir.join(rel)
    }

    /// `path` on the host as the helper takes it: relative to its run directory.
    fn relative<'p>(&self, path: &'p Path) -> Result<&'p Path, String> {
        path.strip_prefix(&self.run_dir).map_err(|_| {
            format!("{} is outside the helper's run directory on {}", path.display(), self.url)
        })
    }

    /// Copies every file under `local` to `rel` in the helper's run directory.
    pub(super) fn copy_tree(&self, local: &Path, rel: &str) -> Result<usize, String> {
        let mut copied = 0;
        let mut stack = vec![(local.to_path_buf(), PathBuf::from(rel))];
        while let Some((dir, to)) = stack.pop() {
            self.make_dir(&self.path(&to.display().to_string()), Some(0o755), None)?;
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
                let (from, name) = (entry.path(), entry.file_name());
                if from.is_dir() {
                    stack.push((from, to.join(&name)));
                } else {
                    let bytes = std::fs::read(&from)
                        .map_err(|e| format!("cannot read {}: {e}", from.display()))?;
                    let target = to.join(&name).display().to_string();
                    self.call(|l| l.write_file(&target, &bytes, 0o644))?;
                    copied += 1;
                }
            }
        }
        Ok(copied)
    }

    /// Makes directory `path` (on the host, inside the run directory), given to `owner`.
    pub(super) fn make_dir(
        &self,
        path: &Path,
        mode: Option<u32>,
        owner: Option<&str>,
    ) -> Result<(), String> {
        let rel = self.relative(path)?.display().to_string();
        self.call(|l| l.make_dir(&rel, mode, owner))
    }

    /// Writes `bytes` to `path` (on the host, inside the run directory) with `mode`.
    pub(super) fn write(&self, path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
        let rel = self.relative(path)?.display().to_string();
        self.call(|l| l.write_file(&rel, bytes, mode)).map(|_| ())
    }

    /// Starts `argv` as `id` on `cpus` (None: every CPU), its output in `log` (a plain
    /// name in the run directory); its PID there.
    pub(super) fn start(
        &self,
        id: &str,
        argv: &[String],
        env: &[(String, String)],
        cpus: Option<String>,
        log: &str,
    ) -> Result<u32, String> {
        let spec = StartSpec {
            id: id.to_owned(),
            argv: argv.to_vec(),
            env: env.to_vec(),
            cwd: None,
            cpus,
            log: log.to_owned(),
        };
        let started = self.call(|l| l.start(spec))?;
        if let Ok(mut ids) = self.started.lock() {
            ids.push(id.to_owned());
        }
        Ok(started.pid)
    }

    /// Waits at most `timeout` until `id` accepts a connection on `probe` (asked on the
    /// host itself).
    pub(super) fn ready(
        &self,
        id: &str,
        probe: Probe,
        timeout: Duration,
    ) -> Result<Readiness, String> {
        self.call(|l| l.ready(id, probe, timeout))
    }

    /// CPU seconds of `id` and everything it forked.
    pub(super) fn cpu_seconds(&self, id: &str) -> Option<f64> {
        self.call(|l| l.cpu(id)).ok().map(|(s, _)| s)
    }

    /// The host's sockets in TIME_WAIT and its bound (None: not readable there).
    pub(super) fn time_wait(&self) -> Option<(u64, u64)> {
        self.call(|l| l.time_wait()).ok()
    }

    /// CPU seconds of the process group of `pid` on the host, a process herd did not start
    /// (an external server's).
    pub(super) fn group_cpu_seconds(&self, pid: u32) -> Option<f64> {
        self.call(|l| l.group_cpu(pid)).ok()
    }

    /// How `id` ended, if it has.
    pub(super) fn ended(&self, id: &str) -> Option<Ending> {
        self.call(|l| l.status(id)).ok().flatten()
    }

    /// The end of `log` (a plain name in the run directory).
    pub(super) fn log_tail(&self, log: &str) -> String {
        const TAIL: u64 = 4096;
        let read = self.call(|l| l.read_file(log, 1 << 20));
        match read {
            Ok(part) => {
                let text = part.text;
                let cut = text.len().saturating_sub(TAIL as usize);
                let cut = (cut..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(0);
                super::log_tail::last_lines(&text[cut..])
            }
            Err(e) => format!("(its log on {} cannot be read: {e})", self.url),
        }
    }

    /// At most `max_bytes` of `path` (inside the helper's run directory), with the file's
    /// whole size and whether it was cut.
    pub(super) fn read_file(
        &self,
        path: &str,
        max_bytes: u64,
    ) -> Result<herd_host::client::FilePart, String> {
        self.call(|l| l.read_file(path, max_bytes))
    }

    /// Stops every program started and not yet stopped, the last started first; how many
    /// still ran.
    pub(super) fn stop_all(&self, grace: Duration) -> usize {
        let ids: Vec<String> = match self.started.lock() {
            Ok(mut ids) => std::mem::take(&mut *ids),
            Err(_) => return 0,
        };
        let mut stopped = 0;
        for id in ids.iter().rev() {
            let running = self.ended(id).is_none();
            if self.call(|l| l.stop(id, Some(grace))).is_ok() && running {
                stopped += 1;
            }
        }
        stopped
    }

    /// What `argv` prints on the host (stdout and stderr), for a version probe.
    pub(super) fn capture(&self, argv: &[String]) -> String {
        match self.run(argv) {
            Ok(out) => format!("{}{}", out.stdout, out.stderr),
            Err(e) => e,
        }
    }

    /// Runs `argv` on the host over ssh (not through the helper: a short command whose
    /// exit status and words are the answer, a server's config test); why not, naming the
    /// host.
    pub(super) fn run(&self, argv: &[String]) -> Result<RemoteOutput, String> {
        let words: Vec<&str> = argv.iter().map(String::as_str).collect();
        self.ssh.run(&self.url, &words, None, QUICK).map_err(|e| e.to_string())
    }

    /// Why the link to the host is lost, if it is.
    pub(super) fn lost(&self) -> Option<String> {
        self.session.lost()
    }

    /// Ends the helper in order (everything stopped, its run directory removed).
    pub(crate) fn close(self) -> Result<usize, String> {
        let RoleHost { session, ssh, .. } = self;
        let stopped = session.bye().map_err(|e| e.to_string());
        drop(ssh);
        stopped
    }
}

/// The `environment` object of a herd.doctor.v1 document, as pairs.
pub(super) fn doctor_environment(text: &str) -> Result<Vec<(String, String)>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("herd doctor --json said no JSON: {e}"))?;
    let env = v
        .get("environment")
        .and_then(|e| e.as_object())
        .ok_or("herd doctor --json has no environment")?;
    Ok(env
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect())
}

/// The host's user, home and whether www-data exists, in one command.
fn facts(ssh: &Ssh, url: &HostUrl) -> Result<Facts, String> {
    let script = "printf '%s\\n' \"$HOME\"; id -un; id -u; id -u www-data 2>/dev/null || echo -";
    let out = ssh.run(url, &["sh", "-c", script], None, QUICK).map_err(|e| e.to_string())?;
    let lines: Vec<&str> = out.stdout.lines().map(str::trim).collect();
    match lines.as_slice() {
        [home, user, uid, www, ..] if out.code == 0 && home.starts_with('/') => Ok(Facts {
            home: (*home).to_owned(),
            user: (*user).to_owned(),
            root: *uid == "0",
            www_data: *www != "-",
        }),
        _ => {
            Err(format!("cannot read its user and home (exit {}): {}", out.code, out.stderr.trim()))
        }
    }
}

/// The address clients send load to: `name` resolved here (the first IPv4 one, else the
/// first one).
fn address(name: &str) -> Result<IpAddr, String> {
    if let Ok(ip) = name.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        return Ok(ip);
    }
    let addrs: Vec<IpAddr> = (name, 0)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {name} here: {e}"))?
        .map(|a| a.ip())
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("{name} resolves to no address here"))
}

/// The programs of every server of `cells`, located on the host: every candidate path asked
/// at once; the missing ones, all named.
fn locate(
    ssh: &Ssh,
    url: &HostUrl,
    cells: &[Cell],
    herd: &Path,
) -> Result<BTreeMap<String, Programs>, Vec<String>> {
    let each = locate_each(ssh, url, cells, herd).map_err(|e| vec![e])?;
    all_located(
        each.into_iter().map(|(name, found)| (name.clone(), format!("server {name}"), found)),
    )
}

/// What each of a host's servers or paths found: their programs by name, or every one
/// missing, each named (`what`) with why.
fn all_located(
    each: impl Iterator<Item = (String, String, Result<Located, String>)>,
) -> Result<BTreeMap<String, Programs>, Vec<String>> {
    let mut programs = BTreeMap::new();
    let mut missing = Vec::new();
    for (name, what, found) in each {
        match found {
            Ok(p) => {
                programs.insert(name, p.programs);
            }
            Err(why) => missing.push(format!("{what}: {why}")),
        }
    }
    super::client_hosts::all_or_missing(programs, missing)
}

/// One server's programs, located on a host.
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) programs: Programs,
    /// Their names, in the order the server needs them (`apache2`, `php-fpm8.2`).
    pub(crate) names: Vec<&'static str>,
}

/// Each server of `cells` (by name) with its programs located on the host, or why not
/// (the program missing there and its package, or the user's own binary absent): every
/// candidate path asked in one ssh command. Err: that command could not run.
/// `herd lab hosts check` says the same of each server as a lab run would find.
pub(crate) fn locate_each(
    ssh: &Ssh,
    url: &HostUrl,
    cells: &[Cell],
    herd: &Path,
) -> Result<BTreeMap<String, Result<Located, String>>, String> {
    type Needed = Vec<&'static herd_drivers::Program>;
    let mut wanted: BTreeMap<&str, (&crate::experiment::ServerDef, Needed)> = BTreeMap::new();
    for c in cells {
        let entry = wanted.entry(c.server.name.as_str()).or_insert((&c.server, Vec::new()));
        for p in programs_needed(c.server.kind, c.server.php) {
            if !entry.1.iter().any(|n| std::ptr::eq(*n, p)) {
                entry.1.push(p);
            }
        }
    }
    let mut paths: BTreeSet<String> = BTreeSet::new();
    for (def, needed) in wanted.values() {
        for p in needed {
            paths.extend(p.candidates_for(herd).iter().map(|c| c.display().to_string()));
        }
        paths.extend(def.binary.iter().map(|b| b.display().to_string()));
    }
    paths.insert(herd.display().to_string());
    let there = executables(ssh, url, &paths)?;
    let mut each = BTreeMap::new();
    for (name, (def, needed)) in wanted {
        let names = needed.iter().map(|p| p.name).collect();
        // herd serve is this very build there, which the drivers take as given.
        let herd_missing =
            needed.iter().any(|p| std::ptr::eq(*p, &herd_drivers::HERD)) && !there.contains(herd);
        let found = match def.binary.as_ref().filter(|b| !there.contains(*b)) {
            Some(b) => Err(format!("its binary {} is not an executable file there", b.display())),
            None if herd_missing => Err(format!(
                "this herd build is not at {} there: `herd lab hosts install FILE` copies it",
                herd.display()
            )),
            None => {
                let exists = |p: &Path| there.contains(p);
                crate::matrix::server_programs_with(def, &needed, herd, &exists)
                    .map(|programs| Located { programs, names })
                    .map_err(|e| e.to_string())
            }
        };
        each.insert(name.to_owned(), found);
    }
    Ok(each)
}

/// How a host's programs are located: every candidate path asked there at once.
type Locate<'a> = dyn Fn(&Ssh, &Path) -> Result<BTreeMap<String, Programs>, Vec<String>> + 'a;

/// The programs of every proxy path of `cells` (HAProxy, nginx, sslh), located on the
/// router host, by the path's name; the missing ones, all named with their package.
fn locate_proxies(
    ssh: &Ssh,
    url: &HostUrl,
    cells: &[Cell],
    herd: &Path,
) -> Result<BTreeMap<String, Programs>, Vec<String>> {
    let each = locate_proxies_each(ssh, url, cells, herd).map_err(|e| vec![e])?;
    all_located(
        each.into_iter()
            .map(|(kind, found)| (kind.name().to_owned(), format!("path {kind}"), found)),
    )
}

/// Each proxy path's programs on the router host, found or why not, asked in one command;
/// Err: the command could not run. `herd lab hosts check` says the same of the router host
/// as a lab run would find.
pub(crate) fn locate_proxies_each(
    ssh: &Ssh,
    url: &HostUrl,
    cells: &[Cell],
    herd: &Path,
) -> Result<BTreeMap<herd_drivers::ProxyKind, Result<Located, String>>, String> {
    let kinds: BTreeSet<herd_drivers::ProxyKind> = cells.iter().filter_map(Cell::proxy).collect();
    let mut paths: BTreeSet<String> = BTreeSet::new();
    for kind in &kinds {
        for p in herd_drivers::proxy_programs_needed(*kind) {
            paths.extend(p.candidates_for(herd).iter().map(|c| c.display().to_string()));
        }
    }
    let there = executables(ssh, url, &paths)?;
    let exists = |p: &Path| there.contains(p);
    Ok(kinds
        .into_iter()
        .map(|kind| {
            let needed = herd_drivers::proxy_programs_needed(kind);
            let found = Programs::locate_with(&needed, herd, &exists)
                .map(|programs| Located {
                    programs,
                    names: needed.iter().map(|p| p.name).collect(),
                })
                .map_err(|e| e.to_string());
            (kind, found)
        })
        .collect())
}

/// Which of `paths` are executable files on the host, asked in one command: how every
/// program herd needs on a host is looked for.
pub(crate) fn executables(
    ssh: &Ssh,
    url: &HostUrl,
    paths: &BTreeSet<String>,
) -> Result<BTreeSet<PathBuf>, String> {
    let script = "for f in \"$@\"; do [ -f \"$f\" ] && [ -x \"$f\" ] && printf '%s\\n' \"$f\"; \
                  done; exit 0";
    let mut argv = vec!["sh", "-c", script, "sh"];
    argv.extend(paths.iter().map(String::as_str));
    let out = ssh.run(url, &argv, None, QUICK).map_err(|e| e.to_string())?;
    Ok(out.stdout.lines().map(PathBuf::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_taken_as_written_and_a_name_resolved() {
        assert_eq!(address("198.18.3.2").unwrap(), IpAddr::from([198, 18, 3, 2]));
        assert_eq!(address("[::1]").unwrap(), "::1".parse::<IpAddr>().unwrap());
        assert!(address("localhost").unwrap().is_loopback());
        let e = address("no-such-host.invalid").unwrap_err();
        assert!(e.contains("no-such-host.invalid"), "{e}");
    }
}
