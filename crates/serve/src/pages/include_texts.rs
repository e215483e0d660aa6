//! The four text files `/include` joins when the root brings none of its own (herd-fileset's
//! `pages::include_texts` makes their bytes): written at start-up into a private temporary
//! directory that the server removes when it stops. Does not serve anything (include.rs does).

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use herd_fileset::pages::include_texts::{text, NAMES};

/// Writes the four texts into `dir`, which must exist.
pub(crate) fn write_into(dir: &Path) -> io::Result<()> {
    for (i, name) in NAMES.iter().enumerate() {
        fs::write(dir.join(name), text(i))?;
    }
    Ok(())
}

/// A private directory holding the texts, removed on drop.
#[derive(Debug)]
pub(crate) struct TempTexts {
    path: PathBuf,
}

impl TempTexts {
    /// Creates `herd-serve-include-<pid>-<n>` under the system's temporary directory, readable
    /// by this user only, and writes the texts into it.
    pub(crate) fn create() -> io::Result<TempTexts> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("herd-serve-include-{}-{n}", std::process::id()));
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let texts = TempTexts { path };
                    write_into(&texts.path)?;
                    return Ok(texts);
                }
                // Left by a crashed process that had the same PID: take the next name.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => {}
                Err(e) => return Err(e),
            }
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempTexts {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dir_is_removed_on_drop() {
        let texts = TempTexts::create().unwrap();
        let path = texts.path().to_owned();
        assert_eq!(fs::read(path.join("4.txt")).unwrap(), text(3));
        drop(texts);
        assert!(!path.exists());
    }
}
