//! A driver's [`Launch`] put on disk before its processes start (directories, the ones its
//! workers write given to their user, the ones everyone writes opened (1777), the rendered configs, a TLS listener's certificate
//! files, which are never recorded), the records of what it started
//! (argv, configs, versions), and the versions asked once per experiment.
//!
//! Not here: starting the processes (`servers.rs`, `router.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use herd_drivers::{Launch, ProcessSpec, RenderedFile, TlsFiles, VersionProbe};
use herd_topo::Supervisor;

use super::preflight;
use herd_topo::user::user_ids;

/// Creates the launch's directories and writes its files; the directories a server writes
/// after dropping to `user` are given to that user. The error says which path and why.
pub(super) fn write_launch(launch: &Launch, user: Option<&str>) -> Result<(), String> {
    for d in launch.dirs.iter().chain(&launch.user_dirs) {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        open_dir(d);
    }
    // Directories a server writes after dropping to its user (lighttpd's uploads, h2o's
    // temporary buffers) belong to that user.
    if let Some(user) = user {
        let (uid, gid) = user_ids(user).ok_or_else(|| format!("no user {user} on this machine"))?;
        for d in &launch.user_dirs {
            std::os::unix::fs::chown(d, Some(uid), Some(gid))
                .map_err(|e| format!("cannot give {} to {user}: {e}", d.display()))?;
        }
    }
    // Directories every user writes (samba's share, written as guests): 1777, as /tmp.
    for d in &launch.shared_dirs {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777))
            .map_err(|e| format!("cannot open {} to every user: {e}", d.display()))?;
    }
    for f in &launch.files {
        if let Some(parent) = f.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&f.path, &f.contents)
            .map_err(|e| format!("cannot write {}: {e}", f.path.display()))?;
    }
    Ok(())
}

/// Writes a TLS listener's certificate files (the launch's directories exist already),
/// readable by their owner only: the servers read them at their start, as root or as the
/// lab's own user, and no one else needs the private key.
pub(super) fn write_tls(tls: &TlsFiles) -> Result<(), String> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    for f in &tls.files {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&f.path)
            .map_err(|e| format!("cannot create {}: {e}", f.path.display()))?;
        file.write_all(f.contents.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", f.path.display()))?;
    }
    Ok(())
}

/// Creates `d` (and its parents), open to every user ([`open_dir`]).
pub(super) fn create_dir(d: &Path) -> Result<(), String> {
    std::fs::create_dir_all(d).map_err(|err| format!("cannot create {}: {err}", d.display()))?;
    open_dir(d);
    Ok(())
}

/// 0755, so that workers running as www-data can enter (best effort).
pub(super) fn open_dir(d: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
}

/// The rendered files as the store keeps them: (path under `dir`, contents).
pub(super) fn config_records(files: &[RenderedFile], dir: &Path) -> Vec<(String, String)> {
    files
        .iter()
        .map(|f| {
            let name = f.path.strip_prefix(dir).unwrap_or(&f.path).display().to_string();
            (name, f.contents.clone())
        })
        .collect()
}

/// A command line as the store keeps it.
/// How a launch's process is started: its argv and environment, its log for both outputs, on
/// `cpus`, in namespace `netns` (None: herd's own).
pub(super) fn spawn_of<'a>(
    p: &'a ProcessSpec,
    cpus: &'a herd_topo::CpuSet,
    netns: Option<&'a str>,
) -> herd_topo::Spawn<'a> {
    herd_topo::Spawn {
        name: &p.name,
        argv: &p.argv,
        env: &p.env,
        stdout: &p.log,
        stderr: &p.log,
        cpus,
        netns,
    }
}

pub(super) fn argv_record(p: &ProcessSpec) -> Vec<String> {
    p.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect()
}

/// Whether `v` asks the program that `p` runs: the same executable, or a probe made for it
/// by name through another one (tbench_srv prints no version; the tbench beside it does).
pub(super) fn same_program(p: &ProcessSpec, v: &VersionProbe) -> bool {
    (!p.argv.is_empty() && p.argv.first() == v.argv.first()) || p.name == v.program
}

/// Where a version probe runs: here (through the supervisor, its output in a scratch
/// directory), or on a `[hosts]` host (the server's, or the router's), where the programs
/// are.
pub(super) enum Asker<'a> {
    Here(&'a mut Supervisor, &'a Path),
    Host(&'a super::role_host::RoleHost),
}

impl Asker<'_> {
    /// What `argv` printed, whatever its exit status.
    fn capture(&mut self, argv: &[std::ffi::OsString]) -> String {
        match self {
            Asker::Here(sup, dir) => preflight::run_capture(sup, dir, "version", argv),
            Asker::Host(host) => {
                let words: Vec<String> =
                    argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                host.capture(&words)
            }
        }
    }
}

/// The program of each process of `launch`, then of each version probe no process runs
/// (php-cgi, started by the server itself), with its version: the order the run's records
/// keep (`CellRun::record_programs`). A process whose program has no probe is `n/a`.
pub(super) fn program_versions(
    launch: &Launch,
    ask: &mut Asker<'_>,
    versions: &mut BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in &launch.processes {
        let found = match launch.versions.iter().find(|v| same_program(p, v)) {
            Some(v) => version(v, ask, versions),
            None => "n/a".to_string(),
        };
        out.push((p.name.clone(), found));
    }
    for v in &launch.versions {
        if !launch.processes.iter().any(|p| same_program(p, v)) {
            out.push((v.program.clone(), version(v, ask, versions)));
        }
    }
    out
}

/// The version `probe` finds, asked once per experiment (`versions` keeps the answers).
pub(super) fn version(
    probe: &VersionProbe,
    ask: &mut Asker<'_>,
    versions: &mut BTreeMap<String, String>,
) -> String {
    // A program on the router host is another install than the server host's (or this
    // machine's) of the same name: asked there, and kept apart.
    let key = match ask {
        Asker::Host(h) if h.role == crate::hosts::Role::Router => {
            format!("{} on the router host", probe.program)
        }
        _ => probe.program.clone(),
    };
    if let Some(known) = versions.get(&key) {
        return known.clone();
    }
    let text = ask.capture(&probe.argv);
    let found = (probe.parse)(&text).unwrap_or_else(|| preflight::unknown(&text));
    versions.insert(key, found.clone());
    found
}
