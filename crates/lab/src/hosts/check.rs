//! `herd lab hosts check`: what each host has, asked over one ssh connection per host, all
//! hosts at once (a thread each): whether it answers, its kernel and CPU count, and which
//! herd builds its user's cache holds. Only the same build as this herd will do for a lab run
//! ([`Installed::Same`]); the others are named so that the user sees what is there.
//!
//! Then what the experiment's cells need there, found as a lab run finds it (the runner's
//! own one-command lookups, `runner/role_host.rs` and `runner/client_hosts.rs`, so that the
//! check and the run cannot disagree): on the server host every server's programs, on client
//! 1 ab, wrk and h2load when a cell uses them (herd's agents need nothing but herd). A
//! missing one is named with its package, and the host is not ready.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use super::ssh::{Ssh, SshError};
use super::{build_id, HostUrl, Role, CACHE_DIR};
use crate::client::Tool;
use crate::matrix::Cell;
use crate::runner::{client_hosts, role_host};

/// What one host has, when it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `uname -sr`.
    pub kernel: String,
    /// `nproc`: the CPUs its user may run on.
    pub cpus: String,
    pub installed: Installed,
    /// With this very build there: its helper (`herd host`) started over a session, and what
    /// it said of the host; None without the build.
    pub helper: Option<Result<Helper, String>>,
    /// Its user's home (where the cache of builds is).
    pub home: String,
    /// What the cells need there, found or not (empty: nothing but herd).
    pub needs: Vec<Need>,
}

/// A program the experiment's cells need on a host, as a lab run would locate it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// What needs it: `server nginx`, `client ab`.
    pub what: String,
    /// Where it is there (`nginx /usr/sbin/nginx`, `/usr/bin/ab 2.3`), or why not, with its
    /// package.
    pub found: Result<String, String>,
}

/// What a host's helper says of it: the machine the lab's disclosure records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helper {
    /// Its online CPUs, as a CPU set (`0-3`): what `server_cpus` may name there.
    pub online: String,
    /// How it reads a server's CPU time (`cgroup-v2`, `cgroup-v1`, `per-process`).
    pub accounting: String,
    /// `herd doctor --json`'s record of the machine: `cpu_model`, `memory_total`, … (empty
    /// where doctor said nothing readable).
    pub machine: Vec<(String, String)>,
}

/// Which herd the host's cache holds, beside this herd's build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// `herd-<this build's id>`, and it runs and says this version.
    Same,
    /// Other builds only (their ids).
    Other(Vec<String>),
    None,
    /// This build's file is there but does not run as this herd (what it said instead).
    Broken(String),
}

/// One host's line.
#[derive(Debug)]
pub struct HostCheck {
    pub role: Role,
    pub url: HostUrl,
    pub result: Result<Facts, CheckError>,
}

/// Why a host could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error("{host}: the check's commands failed there (exit {code}): {stderr}")]
    Remote { host: String, code: i32, stderr: String },
}

/// How long one host's check may take once connected (uname, nproc, a `--version`).
pub const CHECK_LIMIT: Duration = Duration::from_secs(30);

impl HostCheck {
    /// Reachable, with this very build, its helper answering and every program the cells
    /// need there: ready for a lab run.
    pub fn ready(&self) -> bool {
        matches!(&self.result, Ok(f) if f.installed == Installed::Same
            && matches!(f.helper, Some(Ok(_)))
            && f.needs.iter().all(|n| n.found.is_ok()))
    }

    /// The programs the cells need there and it lacks.
    pub fn missing(&self) -> impl Iterator<Item = &Need> {
        let needs = match &self.result {
            Ok(f) => f.needs.as_slice(),
            Err(_) => &[],
        };
        needs.iter().filter(|n| n.found.is_err())
    }
}

impl fmt::Display for Installed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Installed::Same => f.write_str("same build"),
            Installed::Other(ids) => write!(f, "other build {}", ids.join(", ")),
            Installed::None => f.write_str("none"),
            Installed::Broken(said) => {
                write!(f, "this build's file is there but does not run: {said}")
            }
        }
    }
}

/// Checks every host at once for `cells` (the experiment's runnable cells); the results in
/// the order given.
pub fn check(
    ssh: &Ssh,
    hosts: &[(Role, &HostUrl)],
    cells: &[Cell],
    version: &str,
) -> Vec<HostCheck> {
    std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|&(role, url)| {
                s.spawn(move || (role, url, check_for(ssh, url, role, cells, version)))
            })
            .collect();
        handles
            .into_iter()
            .zip(hosts)
            .map(|(h, &(role, url))| match h.join() {
                Ok((role, url, result)) => HostCheck { role, url: url.clone(), result },
                // A panicking check is a bug; the host still gets its line.
                Err(_) => HostCheck {
                    role,
                    url: url.clone(),
                    result: Err(CheckError::Remote {
                        host: url.to_string(),
                        code: -1,
                        stderr: "the check panicked".into(),
                    }),
                },
            })
            .collect()
    })
}

/// One host in its `role`: [`check_one`], then what `cells` need there.
pub fn check_for(
    ssh: &Ssh,
    url: &HostUrl,
    role: Role,
    cells: &[Cell],
    version: &str,
) -> Result<Facts, CheckError> {
    let mut facts = check_one(ssh, url, version)?;
    let herd = format!("{}/{CACHE_DIR}/herd-{}", facts.home, build_id(version));
    facts.needs = needs(ssh, url, role, cells, Path::new(&herd));
    Ok(facts)
}

/// One host: a script for its login shell, its answer read line by line.
pub fn check_one(ssh: &Ssh, url: &HostUrl, version: &str) -> Result<Facts, CheckError> {
    let out = ssh.run(url, &["sh", "-c", &script(&build_id(version))], None, CHECK_LIMIT)?;
    if out.code != 0 {
        return Err(CheckError::Remote {
            host: url.to_string(),
            code: out.code,
            stderr: out.stderr.trim().to_owned(),
        });
    }
    let mut facts = read_answer(&out.stdout, &build_id(version), version);
    if facts.installed == Installed::Same {
        facts.helper = Some(helper(ssh, url, version));
    }
    Ok(facts)
}

/// What `cells` need on the host in `role` (herd at `herd` there), each found or not, looked
/// up as the lab run looks it up.
fn needs(ssh: &Ssh, url: &HostUrl, role: Role, cells: &[Cell], herd: &Path) -> Vec<Need> {
    let cannot = |what: &str, e: String| {
        vec![Need { what: what.to_owned(), found: Err(format!("cannot look there: {e}")) }]
    };
    match role {
        Role::Server => match role_host::locate_each(ssh, url, cells, herd) {
            Ok(each) => each
                .into_iter()
                .map(|(name, found)| Need {
                    what: format!("server {name}"),
                    found: found.map(|l| located(&l)),
                })
                .collect(),
            Err(e) => cannot("server programs", e),
        },
        Role::Client(1) => {
            let wanted: BTreeSet<Tool> =
                cells.iter().map(|c| c.client).filter(|&t| t != Tool::Herd).collect();
            match client_hosts::locate_each(ssh, url, &wanted) {
                Ok((found, _)) => wanted
                    .iter()
                    .map(|&tool| Need {
                        what: format!("client {tool}"),
                        found: match found.get(&tool) {
                            Some(path) => Ok(format!(
                                "{} {}",
                                path.display(),
                                client_hosts::tool_version(ssh, url, tool, path)
                            )),
                            None => Err(format!(
                                "not installed there (apt-get install {}); ab, wrk and h2load \
                                 run on client 1",
                                tool.package()
                            )),
                        },
                    })
                    .collect(),
                Err(e) => cannot("client tools", e),
            }
        }
        Role::Router => match role_host::locate_proxies_each(ssh, url, cells, herd) {
            Ok(each) => each
                .into_iter()
                .map(|(kind, found)| Need {
                    what: format!("path {kind}"),
                    found: found.map(|l| located(&l)),
                })
                .collect(),
            Err(e) => cannot("router programs", e),
        },
        // herd's agents need nothing but herd.
        Role::Client(_) => Vec::new(),
    }
}

/// Programs found, in words: `nginx /usr/sbin/nginx, php-fpm8.2 /usr/sbin/php-fpm8.2`.
fn located(l: &role_host::Located) -> String {
    let each: Vec<String> = l
        .names
        .iter()
        .filter_map(|n| Some(format!("{n} {}", l.programs.get(n)?.display())))
        .collect();
    each.join(", ")
}

/// The helper started, its hello and disclosure read, then ended in order.
fn helper(ssh: &Ssh, url: &HostUrl, version: &str) -> Result<Helper, String> {
    let session =
        super::session::HostSession::open(ssh, url, version).map_err(|e| e.to_string())?;
    let doctor = session.with(|l| l.doctor()).map_err(|e| e.to_string());
    let machine = doctor.map(|(text, _)| machine_of(&text)).unwrap_or_default();
    let hello = session.hello.clone();
    session.bye().map_err(|e| e.to_string())?;
    Ok(Helper { online: hello.online, accounting: hello.accounting, machine })
}

/// The `environment` of a `herd doctor --json` (herd.doctor.v1), as pairs; none from
/// anything else.
fn machine_of(doctor_json: &str) -> Vec<(String, String)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(doctor_json) else { return Vec::new() };
    let Some(env) = v.get("environment").and_then(|e| e.as_object()) else { return Vec::new() };
    env.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
}

/// The check's script: each fact a line of its own, `key value`. `id` is a safe word
/// (`build_id`). The cache's temporary files start with a dot, so `herd-*` skips them.
fn script(id: &str) -> String {
    format!(
        r#"d="$HOME/{CACHE_DIR}"
echo "home $HOME"
echo "kernel $(uname -sr)"
echo "cpus $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
for f in "$d"/herd-*; do [ -f "$f" ] && echo "build ${{f##*/herd-}}"; done
if [ -x "$d/herd-{id}" ]; then echo "runs $("$d/herd-{id}" --version 2>&1 | head -n 1)"; fi
exit 0"#
    )
}

/// The facts from the script's lines.
fn read_answer(stdout: &str, id: &str, version: &str) -> Facts {
    let mut kernel = String::new();
    let mut home = String::new();
    let mut cpus = String::new();
    let mut builds: Vec<String> = Vec::new();
    let mut runs: Option<String> = None;
    for line in stdout.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "kernel" => kernel = value.to_owned(),
            "home" => home = value.to_owned(),
            "cpus" => cpus = value.to_owned(),
            "build" => builds.push(value.to_owned()),
            "runs" => runs = Some(value.to_owned()),
            _ => {}
        }
    }
    let want = format!("herd {version}");
    let installed = if builds.iter().any(|b| b == id) {
        match runs {
            Some(said) if said.trim() == want => Installed::Same,
            Some(said) => Installed::Broken(format!("`--version` says `{}`", said.trim())),
            None => Installed::Broken("not executable".into()),
        }
    } else if builds.is_empty() {
        Installed::None
    } else {
        Installed::Other(builds)
    };
    Facts { kernel, cpus, installed, helper: None, home, needs: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "0.1.0 (commit 1a2b3c4d5e6f)";
    const ID: &str = "0.1.0-1a2b3c4d5e6f";

    #[test]
    fn the_answer_says_which_build_is_there() {
        let a = read_answer(
            "home /home/bench\nkernel Linux 6.1.0-28-amd64\ncpus 4\nbuild 0.1.0-1a2b3c4d5e6f\n\
             build 0.0.9\nruns herd 0.1.0 (commit 1a2b3c4d5e6f)\n",
            ID,
            V,
        );
        assert_eq!(
            a,
            Facts {
                kernel: "Linux 6.1.0-28-amd64".into(),
                cpus: "4".into(),
                installed: Installed::Same,
                helper: None,
                home: "/home/bench".into(),
                needs: Vec::new(),
            }
        );
        let a = read_answer("kernel Linux 6.1\ncpus 2\nbuild 0.0.9\nbuild 0.1.0-ffff\n", ID, V);
        assert_eq!(a.installed, Installed::Other(vec!["0.0.9".into(), "0.1.0-ffff".into()]));
        assert_eq!(a.installed.to_string(), "other build 0.0.9, 0.1.0-ffff");
        assert_eq!(read_answer("kernel Linux 6.1\ncpus 2\n", ID, V).installed, Installed::None);
        let a = read_answer("build 0.1.0-1a2b3c4d5e6f\nruns cannot execute binary file\n", ID, V);
        assert!(matches!(a.installed, Installed::Broken(ref s) if s.contains("cannot execute")));
    }

    #[test]
    fn the_machine_is_read_from_doctors_json() {
        let json = r#"{"format":"herd.doctor.v1","checks":[],"environment":{"cpu_model":"EPYC","memory_total":"8 GiB","n":3}}"#;
        assert_eq!(
            machine_of(json),
            [("cpu_model".to_owned(), "EPYC".to_owned()), ("memory_total".into(), "8 GiB".into())]
        );
        assert!(machine_of("ok  nginx\n").is_empty());
    }

    #[test]
    fn the_script_runs_in_a_shell_against_an_empty_and_a_filled_cache() {
        let home = std::env::temp_dir().join(format!("herd-check-home-{}", std::process::id()));
        let run = || {
            #[allow(clippy::disallowed_methods)] // the script alone, in a shell of the test's
            let out = std::process::Command::new("sh")
                .args(["-c", &script(ID)])
                .env("HOME", &home)
                .output()
                .unwrap();
            assert!(out.status.success());
            read_answer(&String::from_utf8_lossy(&out.stdout), ID, V)
        };
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        let empty = run();
        assert_eq!(empty.installed, Installed::None);
        assert!(empty.kernel.starts_with("Linux "), "{empty:?}");
        assert!(empty.cpus.parse::<u32>().unwrap() >= 1);
        assert_eq!(Path::new(&empty.home), home);
        let cache = home.join(CACHE_DIR);
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join(".herd-x.tmp"), "").unwrap();
        std::fs::write(cache.join("herd-0.0.9"), "").unwrap();
        assert_eq!(run().installed, Installed::Other(vec!["0.0.9".into()]));
        let this = cache.join(format!("herd-{ID}"));
        std::fs::write(&this, format!("#!/bin/sh\necho 'herd {V}'\n")).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&this, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(run().installed, Installed::Same);
        let _ = std::fs::remove_dir_all(&home);
    }
}
