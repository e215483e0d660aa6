//! The served directory, and opening files under it so that no resolution, symlinks included,
//! ever ends outside it. Paths come already sanitized (path.rs); this file adds the filesystem
//! half of the guarantee and does not decide statuses (static_files.rs maps [`OpenError`]).
//!
//! How: `openat2(root_fd, rel, …, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`. The kernel walks the
//! path, symlinks included, and fails with `EXDEV` as soon as the walk would leave the root. It
//! is one system call and has no check-then-open race. An *absolute* symlink also gets `EXDEV`,
//! even one pointing back inside the root, so on `EXDEV` the path is canonicalized and, if the
//! result is inside the root, opened again with `RESOLVE_NO_SYMLINKS` (a symlink swapped in
//! between fails rather than escapes). Kernels without `openat2` (before 5.6, or seccomp filters
//! that refuse it) get canonicalize, a prefix check and `O_NOFOLLOW`: safe against everything but
//! a concurrent rename race inside the root.
//!
//! A file outside the root is reported as [`OpenError::Outside`], answered as 404, exactly like a
//! missing file, so that a client learns nothing about what lies outside.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::ServeError;
use crate::sys;

/// An open root directory.
#[derive(Debug)]
pub(crate) struct Root {
    dir: File,
    canonical: PathBuf,
    resolve: Resolve,
}

/// Why a file under the root could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Missing, or a path through a non-directory, or a name too long, or too many symlinks.
    NotFound,
    /// The path resolves outside the root.
    Outside,
    /// The process may not read it.
    Denied,
    /// Out of file descriptors: the client may retry.
    Exhausted,
    /// Anything else (EIO, …).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolve {
    Openat2,
    Canonicalize,
}

/// Flags for every file opened to be served. `O_NONBLOCK` keeps opening a FIFO from blocking
/// the worker until a writer appears; it has no effect on reading regular files.
const OPEN_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;

impl Root {
    /// Opens `path` as the root, with start-up errors a user can act on.
    pub(crate) fn open(path: &Path) -> Result<Root, ServeError> {
        let root_error = |source: io::Error| match source.kind() {
            io::ErrorKind::NotFound => ServeError::RootMissing { path: path.to_owned() },
            io::ErrorKind::PermissionDenied => ServeError::RootDenied { path: path.to_owned() },
            _ if source.raw_os_error() == Some(libc::ENOTDIR) => {
                ServeError::RootNotDirectory { path: path.to_owned() }
            }
            _ => ServeError::Root { path: path.to_owned(), source },
        };
        let canonical = fs::canonicalize(path).map_err(root_error)?;
        if !fs::metadata(&canonical).map_err(root_error)?.is_dir() {
            return Err(ServeError::RootNotDirectory { path: path.to_owned() });
        }
        // Opening for reading checks now, not on the first request, that we may read it.
        let dir = File::open(&canonical).map_err(root_error)?;
        let resolve = match sys::openat2(dir.as_fd(), c".", OPEN_FLAGS, beneath()) {
            Ok(_) => Resolve::Openat2,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                Resolve::Canonicalize
            }
            Err(e) => return Err(root_error(e)),
        };
        Ok(Root { dir, canonical, resolve })
    }

    /// The open root directory, for `*at` calls on paths already proven safe.
    pub(crate) fn dir(&self) -> &File {
        &self.dir
    }

    /// Opens `rel` (relative, normal components only; empty for the root itself) for reading.
    pub(crate) fn open_file(&self, rel: &Path) -> Result<File, OpenError> {
        match self.resolve {
            Resolve::Openat2 => match self.open_beneath(rel, beneath()) {
                // EXDEV: an escape, or an absolute symlink; see the file comment.
                Err(e) if e.raw_os_error() == Some(libc::EXDEV) => self.open_canonical(rel),
                other => other.map_err(classify),
            },
            Resolve::Canonicalize => self.open_canonical(rel),
        }
    }

    fn open_beneath(&self, rel: &Path, resolve: u64) -> io::Result<File> {
        let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
        let c_rel = CString::new(rel.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        sys::openat2(self.dir.as_fd(), &c_rel, OPEN_FLAGS, resolve)
            .map(|fd: OwnedFd| File::from(fd))
    }

    fn open_canonical(&self, rel: &Path) -> Result<File, OpenError> {
        let canonical = fs::canonicalize(self.canonical.join(rel)).map_err(classify)?;
        let inside = canonical.strip_prefix(&self.canonical).map_err(|_| OpenError::Outside)?;
        match self.resolve {
            Resolve::Openat2 => {
                self.open_beneath(inside, beneath() | libc::RESOLVE_NO_SYMLINKS).map_err(classify)
            }
            Resolve::Canonicalize => OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_NONBLOCK)
                .open(&canonical)
                .map_err(classify),
        }
    }
}

fn beneath() -> u64 {
    libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS
}

fn classify(e: io::Error) -> OpenError {
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ENOTDIR | libc::ENAMETOOLONG | libc::ELOOP) => {
            OpenError::NotFound
        }
        Some(libc::EXDEV) => OpenError::Outside,
        Some(libc::EACCES | libc::EPERM) => OpenError::Denied,
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM) => OpenError::Exhausted,
        _ => OpenError::Other,
    }
}
