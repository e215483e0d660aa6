//! Benchmark file sets on disk, written by `herd serve --generate DIR` for `herd serve --root
//! DIR` (or any other server) to serve, and the exact bytes herd serve answers with.
//!
//! A crate of its own, below herd-serve, so that the client (herd-run, which reads a set's
//! manifest for `--specweb`) and the lab (which writes document roots and checks answers) know
//! what a server should send without linking the server.
//!
//! # Brief overview
//!
//! [`generate()`] writes the [`FileSet`]s asked for under a directory and returns one
//! [`SetSummary`] per set, reporting [`Progress`] through a callback as it goes:
//!
//! - [`FileSet::Sizes`]: a size sweep, `DIR/sizes/<bytes>.html` for each size of a [`SizeList`]
//!   (parsed from `1,4Ki,1Mi`; by default powers of 4 from 1 B to 1 MiB).
//! - [`FileSet::Specweb`]: a SPECweb99-like set, `DIR/specweb/dir00000/class0_0` … (4 classes ×
//!   9 files per directory, 102 B to 900 KiB), with `DIR/specweb/manifest.toml`
//!   ([`SpecwebManifest`]) describing the access mix. [`SpecwebMix`] is that mix for a load
//!   generator in Rust: the weight of each file, and a file for each uniform random number.
//!
//! [`write_include_texts`] adds `DIR/include/1.txt` … `4.txt`, the texts `/include` joins.
//!
//! Byte `i` of every file is [`GENERATED_PATTERN`]`[i % 64]`, the body of `/bytes/N`, so a
//! client can check any response against it. docs/fileset.md describes the layout, the mix and
//! its sources, and the manifest format.
//!
//! The bytes of the server's answers: [`pattern`] (`/bytes/N` and every file, from one static
//! block the server streams from too), [`pages`] (the computed pages `/9x9` and `/include`, which
//! the server sends from there) and [`expected`] (those pages whole, for a checker).
//!
//! # Guarantees
//!
//! - Sets may be larger than memory: files are streamed from one static 64 KiB block.
//! - Free space (and inodes) are checked with `statvfs` before anything is written, and the run
//!   is refused if the files still to write, plus a margin, would not fit.
//! - Nothing is ever removed or renamed. A file that already exists with the right size is kept
//!   without reading it (so re-running on a complete set only looks at file sizes); one with
//!   another size, such as the last file of an interrupted run, is rewritten in place.
//! - Anything but a regular file at a file's place, or anything but a directory (or a link to
//!   one) at a set's directory, stops the run before anything is written; links are never
//!   followed at a file's own name.
//!
//! Not done here: serving (that is herd-serve's `Server` with `root` set to the directory),
//! printing (the caller shows progress and summaries), randomness (the caller's generator feeds
//! [`SpecwebMix::sample`]), SPECweb99's dynamic requests (POST, CGI, cookies) and its own
//! scaling rule for the number of directories, and `fsync`: a crash shortly after a run can
//! leave files short, which the next run notices by their size and rewrites.

mod error;
pub mod expected;
mod generate;
mod include;
mod manifest;
pub mod pages;
pub mod pattern;
mod sizes;
mod space;
mod specweb;
mod write;

use std::num::NonZeroU32;
use std::path::PathBuf;

pub use error::FileSetError;
pub use generate::generate;
pub use include::write_include_texts;
pub use manifest::{ManifestClass, ManifestError, ManifestFile, SpecwebManifest};
pub use manifest::{MANIFEST_FILE, MANIFEST_FORMAT};
pub use pattern::GENERATED_PATTERN;
pub use sizes::{SizeList, SizeListError, DEFAULT_SIZES, MAX_FILE_BYTES};
pub use specweb::{file_bytes, file_weight, SpecwebFile, SpecwebMix, SpecwebMixError};
pub use specweb::{BYTES_PER_DIR, CLASS_WEIGHTS, FILES_PER_CLASS, FILES_PER_DIR, N_CLASSES};
pub use specweb::{MAX_SPECWEB_DIRS, SPECWEB99_ZIPF_EXPONENT};

/// One kind of file set to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileSet {
    /// `sizes/<bytes>.html` for each size.
    Sizes(SizeList),
    /// `specweb/dir00000` … with 36 files each, and `specweb/manifest.toml`. At most
    /// [`MAX_SPECWEB_DIRS`] directories.
    Specweb { n_dirs: NonZeroU32 },
}

impl FileSet {
    /// The set's subdirectory of the target, which is also its name in messages.
    pub fn name(&self) -> &'static str {
        match self {
            FileSet::Sizes(_) => "sizes",
            FileSet::Specweb { .. } => "specweb",
        }
    }
}

/// What [`generate()`] did for one set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetSummary {
    /// [`FileSet::name`].
    pub name: &'static str,
    /// The set's directory (`DIR/sizes`, `DIR/specweb`).
    pub path: PathBuf,
    /// Files in the set (the manifest not counted).
    pub n_files: u64,
    /// Bytes in the set's files.
    pub total_bytes: u64,
    /// Files written by this run.
    pub n_written: u64,
    /// Files that were already there with the right size and were kept.
    pub n_kept: u64,
    /// The manifest, for a set that has one.
    pub manifest: Option<PathBuf>,
}

/// Where a run is, for a progress display. [`generate()`] reports after every file while checking
/// and after every 64 KiB block while writing; the caller decides how often to show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    /// Files checked (while checking) or complete, written or kept (while writing).
    pub n_files_done: u64,
    /// Files in all sets.
    pub n_files: u64,
    /// Bytes written so far (0 while checking).
    pub bytes_written: u64,
    /// Bytes this run has to write: the files that were missing or of the wrong size.
    pub bytes_to_write: u64,
}

/// The two passes of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Looking at which files exist already, to know what to write and whether it fits.
    Checking,
    /// Writing the files that are missing or of the wrong size.
    Writing,
}
