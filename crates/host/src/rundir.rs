//! A helper's run directory, and what crashed helpers left. Each helper makes
//! `herd-host-<pid>-<n>` under the temporary directory (`$TMPDIR`, else `/tmp`), mode 0711
//! (others may pass through, not list: a server's workers that drop to their own user, as
//! nginx's do to www-data, must reach the document root and configs inside; a TLS key in it
//! is its owner's alone), with an `owner` file (its PID and start time) and, inside, a herd-topo [`Registry`] that
//! records every program it starts and every cgroup it makes; the programs' logs go beside it.
//!
//! The directory is the leftovers record: a helper that ends in order (its channel closed, a
//! signal, `bye`) stops its programs and removes it; a helper killed with SIGKILL cannot, and
//! its programs run on. A later helper's `clean` ([`clean`]) then finds every `herd-host-`
//! directory of this user whose owner is gone and lets herd-topo's `registry` stop
//! exactly the recorded programs (PID and start time, so a reused PID is never touched) and
//! remove their cgroups, then removes the directory.
//!
//! Why not `$XDG_RUNTIME_DIR`: systemd-logind removes it when the user's last session ends,
//! and a helper killed with its SSH session is that case, so the record of what it left
//! running would go with it while the programs stayed.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use herd_topo::registry::{self, Registry};

use crate::protocol::Cleaned;

/// Run directories of helpers start with this; nothing else is touched by [`clean`].
pub const PREFIX: &str = "herd-host-";

/// A helper's own run directory and the registry in it.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    registry: Registry,
}

impl RunDir {
    /// Makes a fresh run directory under `parent`.
    pub fn create(parent: &Path) -> io::Result<RunDir> {
        let pid = std::process::id();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!("{PREFIX}{pid}-{nanos:08x}"));
        fs::DirBuilder::new().mode(0o711).create(&dir)?;
        // The umask may have taken the others' bit.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o711))?;
        let made = fs::write(dir.join("owner"), format!("{}\n", registry::owner()))
            .and_then(|()| Registry::create(&dir));
        match made {
            Ok(registry) => Ok(RunDir { dir, registry }),
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The registry a supervisor records its starts in.
    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }

    /// Removes the directory and everything in it (its programs stopped first).
    pub fn remove(self) -> io::Result<()> {
        fs::remove_dir_all(&self.dir)
    }
}

/// Stops what crashed helpers of this user left under `parent` and removes their run
/// directories; a directory whose helper still runs (or this helper's own) is left alone.
pub fn clean(parent: &Path, own: &Path) -> Cleaned {
    let mut out = Cleaned::default();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let Ok(entries) = fs::read_dir(parent) else { return out };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .filter(|e| e.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me))
        .map(|e| e.path())
        .filter(|p| p != own)
        .collect();
    dirs.sort();
    for dir in dirs {
        if owner_runs(&dir) {
            out.in_use.push(dir.display().to_string());
            continue;
        }
        // Only what this directory recorded: another user's or a lab run's leftovers on
        // the host are not this helper's to judge.
        let c = registry::clean_recorded(&dir);
        out.stopped.extend(c.stopped.iter().map(|(pid, name)| format!("{pid} {name}")));
        out.cgroups.extend(c.cgroups.iter().map(|p| p.display().to_string()));
        out.errors.extend(c.errors.iter().map(|(p, e)| format!("{}: {e}", p.display())));
        match fs::remove_dir_all(&dir) {
            Ok(()) => out.dirs.push(dir.display().to_string()),
            // Gone meanwhile: its own helper finished ending, or another clean came first
            // (two herds of one user on a host). Nothing is left, which is what was wanted.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => out.errors.push(format!("{}: {e}", dir.display())),
        }
    }
    out
}

/// Whether the helper that made `dir` still runs. Without a readable `owner` (a helper that
/// died between making the directory and writing it), the PID in the name decides.
fn owner_runs(dir: &Path) -> bool {
    if let Ok(text) = fs::read_to_string(dir.join("owner")) {
        if let Some(alive) = registry::owner_alive(text.trim()) {
            return alive;
        }
    }
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let pid = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()?.parse::<u32>().ok());
    match pid {
        Some(pid) => Path::new(&format!("/proc/{pid}")).exists(),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_topo::{Spawn, Supervisor};
    use std::ffi::OsString;
    use std::time::Duration;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("herd-hosttest-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_run_dir_is_unlisted_and_names_its_owner() {
        let parent = scratch("create");
        let run = RunDir::create(&parent).unwrap();
        let meta = fs::metadata(run.dir()).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o711);
        let owner = fs::read_to_string(run.dir().join("owner")).unwrap();
        assert_eq!(registry::owner_alive(owner.trim()), Some(true), "{owner}");
        assert!(run.registry().dir().starts_with(run.dir()));
        let dir = run.dir().to_path_buf();
        run.remove().unwrap();
        assert!(!dir.exists());
        fs::remove_dir_all(&parent).unwrap();
    }

    /// A helper's directory whose owner is gone: its recorded program is stopped and the
    /// directory removed; a live owner's and this helper's own stay.
    #[test]
    fn clean_stops_what_a_gone_helper_left_and_only_that() {
        let parent = scratch("clean");
        let dead = RunDir::create(&parent).unwrap();
        let log = dead.dir().join("sleeper.log");
        let argv: Vec<OsString> = ["sleep", "30"].iter().map(OsString::from).collect();
        let mut sup = Supervisor::new(Some(dead.registry()));
        let pid = sup.start(&Spawn::logged("sleeper", &argv, &log)).unwrap();
        let gone = format!("{} 1\n", std::process::id() + 1_000_000);
        fs::write(dead.dir().join("owner"), &gone).unwrap();
        fs::write(dead.registry().dir().join("owner"), &gone).unwrap();
        let alive = parent.join(format!("{PREFIX}1-0"));
        fs::create_dir(&alive).unwrap();
        fs::write(alive.join("owner"), format!("1 {}\n", herd_topo::proc::start_time(1).unwrap()))
            .unwrap();
        let own = parent.join(format!("{PREFIX}{}-0", std::process::id() + 1_000_001));
        fs::create_dir(&own).unwrap();
        let c = clean(&parent, &own);
        assert_eq!(c.stopped, vec![format!("{pid} sleeper")], "{c:?}");
        assert_eq!(c.dirs, vec![dead.dir().display().to_string()], "{c:?}");
        assert_eq!(c.in_use, vec![alive.display().to_string()], "{c:?}");
        assert!(!dead.dir().exists() && alive.exists() && own.exists());
        assert!(sup.stop_with_status(pid, Duration::from_secs(1)).is_some());
        drop(sup);
        fs::remove_dir_all(&parent).unwrap();
    }
}
