//! Putting one file of a set on disk: deciding whether an existing file can stay (the right
//! size is enough; its content is not read back) and otherwise streaming the pattern of
//! `/bytes/N` into it from one static 64 KiB block, so no file is ever held in memory. Never
//! removes or renames anything and never follows a symbolic link at the file's own name.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use crate::pattern;

/// What is at a file's place before writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Nothing: the file will be created.
    Missing,
    /// A regular file of the right size: it is kept as it is.
    RightSize,
    /// A regular file of another size (an interrupted run, or sizes changed): it is rewritten.
    WrongSize,
    /// A directory, symbolic link, socket, …: herd refuses to touch it.
    NotAFile,
}

/// A write that stopped: how far it got, and why.
#[derive(Debug)]
pub(crate) struct WriteFailure {
    /// Bytes of the file that were written before the error.
    pub(crate) written: u64,
    pub(crate) source: io::Error,
}

/// What is at `path`, judged for a file that should be `bytes` long.
pub(crate) fn existing(path: &Path, bytes: u64) -> io::Result<Existing> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Ok(Existing::NotAFile),
        Ok(m) if m.len() == bytes => Ok(Existing::RightSize),
        Ok(_) => Ok(Existing::WrongSize),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Existing::Missing),
        Err(e) => Err(e),
    }
}

/// Creates (or truncates) `path` and writes `bytes` bytes of the pattern, calling `on_written`
/// with the number of bytes after each block.
pub(crate) fn write_file(
    path: &Path,
    bytes: u64,
    on_written: &mut dyn FnMut(u64),
) -> Result<(), WriteFailure> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        // A symbolic link planted at the name must not redirect the write elsewhere.
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|source| WriteFailure { written: 0, source })?;
    write_pattern(&mut file, bytes, on_written)
}

/// Writes `bytes` bytes of the pattern to `out`. On failure, `written` is exact: partial
/// writes are counted, which `write_all` would not tell.
pub(crate) fn write_pattern(
    out: &mut dyn Write,
    bytes: u64,
    on_written: &mut dyn FnMut(u64),
) -> Result<(), WriteFailure> {
    let mut written = 0u64;
    while written < bytes {
        // The same static block `/bytes/N` streams from: up to 64 KiB per write, continuing the
        // pattern at `written`.
        let mut chunk = pattern::slice(written, bytes - written);
        while !chunk.is_empty() {
            match out.write(chunk) {
                Ok(0) => {
                    let source =
                        io::Error::new(io::ErrorKind::WriteZero, "the write made no progress");
                    return Err(WriteFailure { written, source });
                }
                Ok(n) => {
                    written += n as u64;
                    chunk = &chunk[n..];
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(WriteFailure { written, source }),
            }
        }
        on_written(written);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::{BLOCK_LEN, GENERATED_PATTERN};

    /// A writer that accepts `room` bytes, at most `per_call` per call, then fails like a full
    /// disk.
    struct Full {
        got: Vec<u8>,
        room: usize,
        per_call: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.per_call).min(self.room - self.got.len());
            if n == 0 && !buf.is_empty() {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn is_pattern(bytes: &[u8]) -> bool {
        bytes.iter().enumerate().all(|(i, &b)| b == GENERATED_PATTERN[i % 64])
    }

    #[test]
    fn writes_the_pattern_of_bytes_n() {
        for n in [0, 1, 63, 64, 65, BLOCK_LEN - 1, BLOCK_LEN, BLOCK_LEN + 1, 3 * BLOCK_LEN + 17] {
            let mut out = Vec::new();
            let mut calls = Vec::new();
            write_pattern(&mut out, n as u64, &mut |w| calls.push(w)).unwrap();
            assert_eq!(out.len(), n);
            assert!(is_pattern(&out), "{n}");
            assert_eq!(calls.len(), n.div_ceil(BLOCK_LEN), "{n}");
            assert_eq!(calls.last().copied().unwrap_or(0), n as u64);
        }
    }

    #[test]
    fn short_writes_continue_the_pattern() {
        let mut out = Full { got: Vec::new(), room: usize::MAX, per_call: 1000 };
        write_pattern(&mut out, 200_000, &mut |_| {}).unwrap();
        assert_eq!(out.got.len(), 200_000);
        assert!(is_pattern(&out.got));
    }

    #[test]
    fn a_full_disk_reports_how_far_it_got() {
        let mut out = Full { got: Vec::new(), room: 100_000, per_call: 7000 };
        let err = write_pattern(&mut out, 300_000, &mut |_| {}).unwrap_err();
        assert_eq!(err.written, 100_000);
        assert_eq!(err.source.raw_os_error(), Some(libc::ENOSPC));
        assert!(is_pattern(&out.got));
    }

    #[test]
    fn existing_files_are_judged_by_size_alone() {
        let dir = std::env::temp_dir().join(format!("herd-fileset-write-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        assert_eq!(existing(&path, 10).unwrap(), Existing::Missing);
        fs::write(&path, b"not the pattern").unwrap();
        assert_eq!(existing(&path, 15).unwrap(), Existing::RightSize);
        assert_eq!(existing(&path, 16).unwrap(), Existing::WrongSize);
        assert_eq!(existing(&dir, 0).unwrap(), Existing::NotAFile);
        let link = dir.join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(existing(&link, 15).unwrap(), Existing::NotAFile);
        // Writing through a planted link is refused; the target stays as it was.
        let err = write_file(&link, 5, &mut |_| {}).unwrap_err();
        assert_eq!(err.written, 0);
        assert_eq!(fs::read(&path).unwrap(), b"not the pattern");
        write_file(&path, 100, &mut |_| {}).unwrap();
        assert!(is_pattern(&fs::read(&path).unwrap()) && fs::metadata(&path).unwrap().len() == 100);
        fs::remove_dir_all(&dir).unwrap();
    }
}
