//! Free space before writing: how much room files take on disk (whole blocks), how much the
//! file system has for this user (`statvfs`'s `f_bavail`, so root's reserve does not count), and
//! the margin kept free. Decides nothing itself; `generate` compares the numbers and refuses.

use std::io;
use std::path::{Path, PathBuf};

/// What the file system under a path can still take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Space {
    /// Bytes an unprivileged user may still write.
    pub(crate) available_bytes: u64,
    /// The allocation unit (`f_frsize`): every file occupies a whole number of these.
    pub(crate) block_bytes: u64,
    /// Inodes an unprivileged user may still create, if the file system counts them (btrfs and
    /// some network file systems report 0 total, meaning "no fixed limit").
    pub(crate) available_inodes: Option<u64>,
}

/// Space on the file system holding `path`, which must exist.
pub(crate) fn space_at(path: &Path) -> io::Result<Space> {
    let st = rustix::fs::statvfs(path)?;
    Ok(Space {
        available_bytes: st.f_bavail.saturating_mul(st.f_frsize),
        block_bytes: st.f_frsize.max(1),
        available_inodes: (st.f_files > 0).then_some(st.f_favail),
    })
}

/// The deepest existing ancestor of `path` (`path` itself if it exists), where `statvfs` can
/// look before the directory is created. A relative path with no existing part means ".".
pub(crate) fn nearest_existing(path: &Path) -> PathBuf {
    path.ancestors()
        .find(|p| !p.as_os_str().is_empty() && p.symlink_metadata().is_ok())
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}

/// Room a file of `bytes` takes: whole blocks. Ignores indirect blocks and inline data, which
/// the margin covers.
pub(crate) fn on_disk(bytes: u64, block_bytes: u64) -> u64 {
    bytes.div_ceil(block_bytes).saturating_mul(block_bytes)
}

/// `needed` plus what is kept free: 1 % (file system metadata, directories, the manifest) and
/// 16 MiB, so that a set that only just fits does not leave the disk full for everything else.
pub(crate) fn with_margin(needed: u64) -> u64 {
    needed.saturating_add(needed / 100).saturating_add(16 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_blocks() {
        assert_eq!(on_disk(0, 4096), 0);
        assert_eq!(on_disk(1, 4096), 4096);
        assert_eq!(on_disk(4096, 4096), 4096);
        assert_eq!(on_disk(4097, 4096), 8192);
        assert_eq!(on_disk(u64::MAX, 4096), u64::MAX);
    }

    #[test]
    fn margin() {
        assert_eq!(with_margin(0), 16 << 20);
        assert_eq!(with_margin(100 << 20), (101 << 20) + (16 << 20));
        assert_eq!(with_margin(u64::MAX), u64::MAX);
    }

    #[test]
    fn nearest_existing_ancestor() {
        let tmp = std::env::temp_dir();
        assert_eq!(nearest_existing(&tmp), tmp);
        assert_eq!(nearest_existing(&tmp.join("herd-no-such-dir/a/b")), tmp);
        assert_eq!(nearest_existing(Path::new("herd-no-such-dir/a")), PathBuf::from("."));
    }

    #[test]
    fn statvfs_reports_something() {
        let space = space_at(&std::env::temp_dir()).unwrap();
        assert!(space.block_bytes >= 512, "{space:?}");
        let err = space_at(Path::new("/herd-no-such-dir")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
