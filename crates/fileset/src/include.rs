//! The four text files of `/include` (`include/1.txt` … `4.txt`), written next to the file sets
//! so that `herd serve --root DIR` joins them from disk and other servers (PHP's `include`) can
//! read the same texts. Like the sets, a file already there with the right size is kept: a
//! user's own texts of another size are never overwritten, since nothing is ever replaced
//! without need; only missing ones are written. The texts themselves come from
//! pages/include_texts.rs.

use std::fs;
use std::io;
use std::path::Path;

use super::{FileSetError, SetSummary};
use crate::pages::include_texts::{text, NAMES, TEXT_BYTES};

/// Writes the include texts that are missing under `dir/include`.
pub fn write_include_texts(dir: &Path) -> Result<SetSummary, FileSetError> {
    let path = dir.join("include");
    fs::create_dir_all(&path).map_err(|source| {
        if source.kind() == io::ErrorKind::NotADirectory {
            FileSetError::ParentNotADirectory { path: path.clone() }
        } else {
            FileSetError::CreateDir { path: path.clone(), source }
        }
    })?;
    let mut summary = SetSummary {
        name: "include",
        path: path.clone(),
        n_files: NAMES.len() as u64,
        total_bytes: 0,
        n_written: 0,
        n_kept: 0,
        manifest: None,
    };
    for (i, name) in NAMES.iter().enumerate() {
        let file = path.join(name);
        match fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_file() => {
                // Any size is kept: these may be the user's own texts.
                summary.total_bytes += meta.len();
                summary.n_kept += 1;
                continue;
            }
            Ok(_) => return Err(FileSetError::NotAFile { path: file }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => return Err(FileSetError::Inspect { path: file, source }),
        }
        let bytes = TEXT_BYTES as u64;
        fs::write(&file, text(i)).map_err(|source| FileSetError::Write {
            path: file.clone(),
            written: 0,
            bytes,
            n_done: i as u64,
            n_files: NAMES.len() as u64,
            cause: source,
        })?;
        summary.total_bytes += bytes;
        summary.n_written += 1;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_missing_texts_and_keeps_existing_ones() {
        let dir = std::env::temp_dir().join(format!("herd-fileset-include-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("include")).unwrap();
        fs::write(dir.join("include/2.txt"), b"mine\n").unwrap();
        let s = write_include_texts(&dir).unwrap();
        assert_eq!((s.n_written, s.n_kept, s.n_files), (3, 1, 4));
        assert_eq!(fs::read(dir.join("include/2.txt")).unwrap(), b"mine\n");
        assert_eq!(fs::read(dir.join("include/4.txt")).unwrap(), text(3));
        let again = write_include_texts(&dir).unwrap();
        assert_eq!((again.n_written, again.n_kept), (0, 4));
        fs::remove_dir_all(&dir).unwrap();
    }
}
