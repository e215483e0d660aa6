//! Why generating a file set failed, in words that say what was wrong and what to do. Every
//! variant names the path involved; write failures also say how far the file and the set got.
//! Nothing here prints: the `herd` binary shows the message once.

use std::io;
use std::path::PathBuf;

use super::specweb::SpecwebMixError;

/// Why [`generate()`](super::generate()) stopped. Files written before the error stay on disk,
/// and a second run with the same arguments continues where this one stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileSetError {
    /// The target is the empty path.
    #[error("the directory for the file sets is an empty path: give a directory, e.g. /tmp/sets")]
    EmptyPath,
    /// The target exists and is a file (or another non-directory).
    #[error(
        "`{}` exists and is not a directory: choose a directory, or a path that does not exist yet",
        .path.display()
    )]
    NotADirectory { path: PathBuf },
    /// Part of the target's path is a regular file, so the directory cannot be created.
    #[error(
        "cannot create `{}`: part of that path is a file, not a directory: choose another place",
        .path.display()
    )]
    ParentNotADirectory { path: PathBuf },
    /// Creating the target or one of the set's directories failed.
    #[error("cannot create directory `{}`{}", .path.display(), advice(.source))]
    CreateDir { path: PathBuf, source: io::Error },
    /// Looking at an existing path failed (a directory that cannot be searched, …).
    #[error("cannot inspect `{}`{}", .path.display(), advice(.source))]
    Inspect { path: PathBuf, source: io::Error },
    /// Something other than a regular file sits where a file of the set goes.
    #[error(
        "`{}` is in the way: it is a directory, link or other special file where the set has a \
         regular file; herd never removes anything, so move it away and run again",
        .path.display()
    )]
    NotAFile { path: PathBuf },
    /// Something other than a directory sits where a set's directory goes (`DIR/sizes`, …).
    #[error(
        "`{}` is in the way: the set's files go in a directory of that name, and this is not \
         one; herd never removes anything, so move it away and run again",
        .path.display()
    )]
    DirInTheWay { path: PathBuf },
    /// `statvfs` failed.
    #[error(
        "cannot read the free space of the file system holding `{}`",
        .path.display()
    )]
    Space { path: PathBuf, source: io::Error },
    /// The files still to write would not fit, with the margin.
    #[error(
        "not enough free space for the file set in `{}`: it needs {needed} bytes (the files still \
         to write in whole blocks, plus 1 % and 16 MiB kept free) but {available} bytes are \
         available: free space, choose another file system, or generate fewer files",
        .path.display()
    )]
    NoSpace { path: PathBuf, needed: u64, available: u64 },
    /// The file system has fewer free inodes than files and directories to create.
    #[error(
        "not enough free inodes for the file set in `{}`: it needs {needed}, {available} are \
         available: choose another file system, or generate fewer files",
        .path.display()
    )]
    NoInodes { path: PathBuf, needed: u64, available: u64 },
    /// Writing a file of the set failed part-way (disk full, I/O error, permission).
    ///
    /// The OS error is `cause`, written into the message and not returned by `source()`:
    /// what to do next depends on it and must follow it, so the message is whole on its own
    /// and a printed chain still names the cause once.
    #[error(
        "cannot write `{}` after {written} of its {bytes} bytes ({n_done} of {n_files} files \
         complete): {cause}; nothing was removed: {}then run the same command again to finish",
        .path.display(), fix(.cause)
    )]
    Write { path: PathBuf, written: u64, bytes: u64, n_done: u64, n_files: u64, cause: io::Error },
    /// Writing `specweb/manifest.toml` failed.
    #[error("cannot write the manifest `{}`{}", .path.display(), advice(.source))]
    Manifest { path: PathBuf, source: io::Error },
    /// The SPECweb set asked for is impossible (too many directories).
    #[error(transparent)]
    Specweb(#[from] SpecwebMixError),
}

/// The next step for an I/O error the user can act on, in parentheses after what failed (the
/// error itself follows, as the `source()`).
fn advice(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            " (choose a directory this user can write to)"
        }
        _ if is_full(e) => " (free some space or choose another file system)",
        _ => "",
    }
}

/// What to fix before running again after a failed write, ending in ", " when there is advice.
fn fix(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            "make the directory writable, "
        }
        _ if is_full(e) => "free some space, ",
        _ => "fix the cause, ",
    }
}

/// Disk full or quota exceeded.
fn is_full(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_testutil::causes::assert_cause_once;

    #[test]
    fn write_errors_say_where_how_far_and_what_next() {
        let err = FileSetError::Write {
            path: "/d/specweb/dir00001/class3_8".into(),
            written: 65536,
            bytes: 921600,
            n_done: 40,
            n_files: 72,
            cause: io::Error::from_raw_os_error(libc::ENOSPC),
        };
        let msg = err.to_string();
        assert!(
            msg.starts_with(
                "cannot write `/d/specweb/dir00001/class3_8` after 65536 of its 921600 bytes \
                 (40 of 72 files complete): No space left on device"
            ),
            "{msg}"
        );
        assert!(
            msg.ends_with(
                "nothing was removed: free some space, then run the same command again to finish"
            ),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn advice_comes_with_what_failed_and_the_cause_once_after_it() {
        let denied = io::Error::from_raw_os_error(libc::EACCES);
        let text = denied.to_string();
        let err = FileSetError::CreateDir { path: "/x".into(), source: denied };
        let printed = assert_cause_once(&err, &text);
        assert_eq!(
            printed,
            format!(
                "cannot create directory `/x` (choose a directory this user can write to): {text}"
            )
        );
        let other = io::Error::from_raw_os_error(libc::EIO);
        let text = other.to_string();
        let printed =
            assert_cause_once(&FileSetError::CreateDir { path: "/x".into(), source: other }, &text);
        assert_eq!(printed, format!("cannot create directory `/x`: {text}"));
        let msg = FileSetError::NoSpace { path: "/x".into(), needed: 10, available: 5 }.to_string();
        assert!(msg.contains("needs 10 bytes") && msg.contains("5 bytes are available"), "{msg}");
    }

    /// Every variant with a cause prints it once in the chain (before: CreateDir, Inspect,
    /// Space, Write and Manifest printed their OS error twice, Specweb its mix error twice).
    #[test]
    fn each_cause_is_printed_once() {
        let os = || io::Error::from_raw_os_error(libc::ENOSPC);
        let cause = os().to_string();
        let path = PathBuf::from("/d/sizes");
        for err in [
            FileSetError::CreateDir { path: path.clone(), source: os() },
            FileSetError::Inspect { path: path.clone(), source: os() },
            FileSetError::Space { path: path.clone(), source: os() },
            FileSetError::Write {
                path: path.clone(),
                written: 1,
                bytes: 2,
                n_done: 0,
                n_files: 1,
                cause: os(),
            },
            FileSetError::Manifest { path: path.clone(), source: os() },
        ] {
            assert_cause_once(&err, &cause);
        }
        let mix = SpecwebMixError::TooManyDirs { n_dirs: 1_000_000 };
        let text = mix.to_string();
        assert_cause_once(&FileSetError::Specweb(mix), &text);
    }
}
