//! Network namespaces by name, as iproute2 keeps them: a file under `/run/netns` bind-mounted
//! on the namespace, so that `ip netns exec NAME …` and herd find the same one. herd makes
//! them with `ip netns add` (the plan's printed command) and does everything else here, without
//! a program: entering one from a thread (a socket made there belongs to the namespace), the
//! processes inside one, and deleting one, which is what runs on Drop and in `herd lab clean`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where iproute2 keeps named namespaces.
pub const NETNS_DIR: &str = "/run/netns";

/// Every namespace herd makes starts with this; nothing else is ever deleted.
pub const PREFIX: &str = "herd-";

/// The file that names `name`.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

/// Opens the namespace `name` (for `setns`).
pub fn open(name: &str) -> io::Result<File> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` is not a namespace name"),
        ));
    }
    File::open(path(name)).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            io::Error::new(e.kind(), format!("no network namespace {name} ({NETNS_DIR}/{name})"))
        } else {
            e
        }
    })
}

/// Whether the namespace `name` exists.
pub fn exists(name: &str) -> bool {
    path(name).exists()
}

/// Runs `f` on a thread of its own that has joined the namespace `name`: sockets it opens
/// live there (a readiness probe, a verification request, `/proc/thread-self/net/…`). The
/// namespace of a thread is its own, so the rest of herd stays where it is.
pub fn within<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    let ns = open(name)?;
    std::thread::scope(|s| {
        let joined = s.spawn(move || {
            // SAFETY: setns on this thread only, with a descriptor that lives for the call.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(f())
        });
        match joined.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The names under `/run/netns` that start with herd's prefix, sorted.
pub fn list_herd() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let mut names: Vec<String> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.starts_with(PREFIX))
        .collect();
    names.sort();
    names
}

/// The processes whose network namespace is `name` (as `ip netns pids` finds them: the same
/// namespace inode).
pub fn pids(name: &str) -> Vec<u32> {
    let Ok(target) = std::fs::metadata(path(name)) else { return Vec::new() };
    let key = (target.dev(), target.ino());
    let Ok(proc_dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    proc_dir
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| (m.dev(), m.ino()) == key)
        })
        .collect()
}

/// Kills what still runs in the namespace `name`, by PID, until nothing does or `grace` has
/// passed: a process forked meanwhile (a respawned worker, sslh-fork's child per connection)
/// is killed on the next look. Only for namespaces herd made: nobody else has a process in
/// one. Returns the PIDs it killed (a kill refused, EPERM for a user who is not root, is not
/// counted).
pub fn sweep(name: &str, grace: Duration) -> Vec<u32> {
    let own = std::process::id();
    let mut killed: Vec<u32> = Vec::new();
    let deadline = Instant::now() + grace;
    loop {
        let left: Vec<u32> = pids(name).into_iter().filter(|&p| p != own && p > 1).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return killed;
        }
        for pid in left {
            let Ok(p) = libc::pid_t::try_from(pid) else { continue };
            // SAFETY: kill(2) on one positive PID.
            if unsafe { libc::kill(p, libc::SIGKILL) } == 0 && !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Why [`remove`] left a namespace.
#[derive(Debug)]
pub enum RemoveError {
    /// Processes survived SIGKILL (stuck in the kernel): the name is kept, since deleting it
    /// would leave the namespace alive with nothing to find it by.
    Survivors(Vec<u32>),
    /// The name could not be deleted.
    Delete(io::Error),
}

impl std::fmt::Display for RemoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoveError::Survivors(pids) => write!(
                f,
                "processes {pids:?} survived SIGKILL (stuck in the kernel?); it is kept for `herd lab clean`"
            ),
            RemoveError::Delete(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                f.write_str("removing a network namespace needs root: run `sudo herd lab clean`")
            }
            RemoveError::Delete(e) => write!(f, "{e}"),
        }
    }
}

/// Kills what runs in the herd namespace `name` ([`sweep`], for up to `grace`) and deletes
/// it: what teardown and `herd lab clean` both do. Ok with the PIDs killed.
pub fn remove(name: &str, grace: Duration) -> Result<Vec<u32>, RemoveError> {
    let killed = sweep(name, grace);
    let own = std::process::id();
    let left: Vec<u32> = pids(name).into_iter().filter(|&p| p != own).collect();
    if !left.is_empty() {
        return Err(RemoveError::Survivors(left));
    }
    delete(name).map_err(RemoveError::Delete)?;
    Ok(killed)
}

/// Deletes the namespace `name` as `ip netns delete` does: unmount its file, remove it. The
/// kernel frees the namespace, and with it every link, address, rule and qdisc made inside,
/// once no process is left in it (see [`sweep`]).
pub fn delete(name: &str) -> io::Result<()> {
    if !name.starts_with(PREFIX) || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to delete {name}: not a herd namespace"),
        ));
    }
    let p = path(name);
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: umount2 with a valid C string; MNT_DETACH so a busy mount still goes.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
        let err = io::Error::last_os_error();
        // Not a mount point (a half-made namespace): the file alone remains to remove.
        if err.raw_os_error() != Some(libc::EINVAL) && err.raw_os_error() != Some(libc::ENOENT) {
            return Err(err);
        }
    }
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_paths_are_refused() {
        for bad in ["", "a/b", "..", "."] {
            assert_eq!(open(bad).unwrap_err().kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        assert_eq!(delete("other-ns").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(delete("herd-../x").unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_missing_namespace_is_named() {
        let err = open("herd-no-such-namespace").unwrap_err();
        assert!(err.to_string().contains("no network namespace herd-no-such-namespace"), "{err}");
        assert!(pids("herd-no-such-namespace").is_empty());
        assert!(!exists("herd-no-such-namespace"));
    }
}
