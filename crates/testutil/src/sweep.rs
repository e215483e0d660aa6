//! One lock, across test binaries, around whatever sweeps herd's leftovers machine-wide.
//!
//! `herd lab clean`, a `herd lab run --resume` (which cleans first) and herd-topo's
//! `registry::clean` remove every `herd-*` network namespace and cgroup whose maker is gone,
//! whichever test's lab made it. A test that kills a lab and then checks that a clean names
//! what the kill left must not have another sweep take those first — and that other sweep may
//! run in another test binary (the test command runs herd's integration tests beside the
//! others), where an in-process mutex does not reach. So the lock is a file lock (flock) on
//! one file in the system temp directory: every holder, in any process, excludes the others.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;

/// Held while it lives; released when dropped (or when its process ends, however it ends):
/// the lock is the open file's, and closing the file releases it.
#[derive(Debug)]
pub struct SweepLock {
    _file: File,
}

/// Waits for, then holds, the sweep lock.
pub fn lock() -> SweepLock {
    let path = std::env::temp_dir().join("herd-test-sweep.lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the sweep lock {}: {e}", path.display()));
    loop {
        // SAFETY: flock on a descriptor this function owns, open for its whole call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return SweepLock { _file: file };
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            panic!("cannot lock {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_second_holder_waits_for_the_first() {
        let first = lock();
        let t = Instant::now();
        let waiter = std::thread::spawn(move || {
            let _second = lock();
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(200));
        drop(first);
        let waited = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
    }
}
