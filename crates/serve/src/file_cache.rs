//! A worker's cache of open files, like nginx's `open_file_cache` but never stale: a static
//! request for a path served before costs one `statat` (to prove the path still names the same,
//! unchanged file) instead of `openat2` + `fstat` + `pread` + `close`, and no allocation. Small
//! files (up to [`COPY_BODY_MAX`]) keep their bytes in memory; larger ones keep their open
//! descriptor for `sendfile`. Does not decide statuses or headers (static_files.rs does).
//!
//! Why this is safe: an entry is created only by the full, safe open of root.rs. A later request
//! uses it only if `statat(root, path)` reports the same device, inode, size, modification and
//! change times (nanoseconds) as the file opened then. A path that now resolves elsewhere (a
//! swapped symlink, a renamed file) reports another inode and falls back to the safe open; a
//! path that resolves to the same inode reaches the very file that open judged servable. Any
//! write or metadata change moves mtime or ctime, so content is never served stale.
//!
//! Bounds: at most [`MAX_ENTRIES`] per worker (descriptors and at most 16 KiB each of memory);
//! when full, the cache is emptied and refilled, which costs one slow request per hot path.

use std::collections::HashMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::Arc;

use rustix::fs::AtFlags;

use crate::root::Root;
use crate::write_queue::COPY_BODY_MAX;

/// Most entries one worker keeps.
pub(crate) const MAX_ENTRIES: usize = 256;

/// What `statat` must still report for an entry to be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    fn of_stat(st: &rustix::fs::Stat) -> Identity {
        // The kernel's stat fields are unsigned or signed depending on the architecture.
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Identity {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as u64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }
}

/// A file ready to serve.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) file: Arc<File>,
    /// The whole content, for files of at most [`COPY_BODY_MAX`] bytes.
    pub(crate) content: Option<Box<[u8]>>,
    /// What the response headers say about it (static_files.rs fills it).
    pub(crate) info: FileInfo,
    /// The path under the root that was opened (a directory's `index.html` included), for
    /// `statat`.
    stat_path: CString,
    id: Identity,
}

/// The header facts of a file, computed once per entry.
#[derive(Debug, Clone)]
pub(crate) struct FileInfo {
    pub(crate) size: u64,
    pub(crate) mtime: u64,
    pub(crate) content_type: &'static [u8],
    pub(crate) etag: [u8; 40],
    pub(crate) etag_len: usize,
    pub(crate) last_modified: [u8; 29],
}

impl FileInfo {
    pub(crate) fn etag(&self) -> &[u8] {
        &self.etag[..self.etag_len]
    }
}

impl Entry {
    /// An entry for `file`, opened safely as `stat_path` under the root, with metadata `meta`.
    /// Reads a small file's content now.
    pub(crate) fn new(
        file: File,
        meta: &std::fs::Metadata,
        stat_path: CString,
        info: FileInfo,
    ) -> io::Result<Entry> {
        let content = if meta.size() <= COPY_BODY_MAX {
            // At most 16 KiB: fits in usize.
            let mut bytes = vec![0u8; meta.size() as usize].into_boxed_slice();
            file.read_exact_at(&mut bytes, 0)?;
            Some(bytes)
        } else {
            None
        };
        Ok(Entry { file: Arc::new(file), content, info, stat_path, id: Identity::of(meta) })
    }
}

/// One worker's entries, by request path (as sent, before decoding).
#[derive(Debug, Default)]
pub(crate) struct FileCache {
    entries: HashMap<Box<[u8]>, Entry>,
}

impl FileCache {
    /// Whether there is an entry for `path` whose file is unchanged; a stale one is dropped.
    pub(crate) fn validate(&mut self, root: &Root, path: &[u8]) -> bool {
        let Some(entry) = self.entries.get(path) else {
            return false;
        };
        let stat = rustix::fs::statat(root.dir().as_fd(), &entry.stat_path, AtFlags::empty());
        if stat.is_ok_and(|st| Identity::of_stat(&st) == entry.id) {
            return true;
        }
        self.entries.remove(path);
        false
    }

    /// The entry for `path`, without checking it: call [`validate`](Self::validate) first.
    pub(crate) fn peek(&self, path: &[u8]) -> Option<&Entry> {
        self.entries.get(path)
    }

    /// Stores `entry` for `path`.
    pub(crate) fn insert(&mut self, path: &[u8], entry: Entry) {
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(path.into(), entry);
    }

    /// Drops every entry, closing their descriptors (when descriptors run short).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }
}
