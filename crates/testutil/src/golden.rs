//! Golden files: what a renderer writes, compared byte for byte with a file kept under the
//! crate's `tests/golden/`. `UPDATE_GOLDEN=1 cargo test -p CRATE --test NAME` rewrites the
//! files instead of comparing; the diff is then reviewed like code.
//!
//! One file per output ([`Goldens::check`]) or one directory per output that is a set of
//! files ([`Goldens::check_dir`], the drivers' rendered configs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The environment variable that turns comparing into rewriting, when it is `1`.
pub const UPDATE_VAR: &str = "UPDATE_GOLDEN";

/// The golden files of one crate: `<manifest dir>/tests/golden/`.
#[derive(Debug, Clone)]
pub struct Goldens {
    dir: PathBuf,
}

impl Goldens {
    /// The goldens of the crate whose `CARGO_MANIFEST_DIR` is `manifest_dir`.
    pub fn of(manifest_dir: &str) -> Goldens {
        Goldens { dir: Path::new(manifest_dir).join("tests/golden") }
    }

    /// The path of the golden `name` (relative to `tests/golden/`).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Panics, showing both texts and the first line that differs, unless `got` is the
    /// golden `name` byte for byte. With `UPDATE_GOLDEN=1`, writes `got` there instead.
    pub fn check(&self, name: &str, got: impl AsRef<[u8]>) {
        let (path, got) = (self.path(name), got.as_ref());
        if updating() {
            write(&path, got);
            return;
        }
        let want = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} ({UPDATE_VAR}=1 creates it)", path.display()));
        if want != got {
            panic!("{}", difference(&path, &want, got));
        }
    }

    /// Panics unless the directory `name` holds exactly the files of `want` (paths relative
    /// to it), each byte for byte. With `UPDATE_GOLDEN=1`, replaces the directory with them.
    pub fn check_dir(&self, name: &str, want: &BTreeMap<PathBuf, String>) {
        let dir = self.path(name);
        if updating() {
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                assert!(e.kind() == std::io::ErrorKind::NotFound, "{}: {e}", dir.display());
            }
            for (rel, contents) in want {
                write(&dir.join(rel), contents.as_bytes());
            }
        }
        let mut have = files_under(&dir);
        have.sort();
        let wanted: Vec<&PathBuf> = want.keys().collect();
        let have_refs: Vec<&PathBuf> = have.iter().collect();
        assert_eq!(
            have_refs,
            wanted,
            "{}: golden files ({UPDATE_VAR}=1 rewrites them)",
            dir.display()
        );
        for (rel, contents) in want {
            let path = dir.join(rel);
            let golden = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("{}: {e} ({UPDATE_VAR}=1 creates it)", path.display()));
            if golden != contents.as_bytes() {
                panic!("{}", difference(&path, &golden, contents.as_bytes()));
            }
        }
    }
}

/// Whether this test run rewrites the goldens (`UPDATE_GOLDEN=1`).
pub fn updating() -> bool {
    std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1")
}

fn write(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// The failure message: where, the first differing line (1-based), then both texts.
fn difference(path: &Path, want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let line = first_difference(&w, &g);
    format!(
        "{} differs from its golden at line {line} ({UPDATE_VAR}=1 rewrites it)\n--- golden\n{w}\n--- rendered\n{g}",
        path.display()
    )
}

/// The 1-based number of the first line that differs, counting a missing line as different.
fn first_difference(want: &str, got: &str) -> usize {
    let (mut w, mut g) = (want.split_inclusive('\n'), got.split_inclusive('\n'));
    let mut n = 1;
    loop {
        match (w.next(), g.next()) {
            (Some(a), Some(b)) if a == b => n += 1,
            _ => return n,
        }
    }
}

/// Files under `dir`, relative to it, recursively; none when it does not exist.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
        let Some(name) = path.file_name().map(PathBuf::from) else { continue };
        if path.is_dir() {
            out.extend(files_under(&path).into_iter().map(|p| name.join(p)));
        } else {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_line_is_named() {
        assert_eq!(first_difference("a\nb\nc\n", "a\nb\nx\n"), 3);
        assert_eq!(first_difference("a\n", "a\nb\n"), 2);
        assert_eq!(first_difference("a", "a\n"), 1);
    }

    #[test]
    fn a_difference_fails_and_an_equal_file_passes() {
        let dir = std::env::temp_dir().join(format!("herd-testutil-{}", std::process::id()));
        let goldens = Goldens { dir: dir.clone() };
        write(&goldens.path("one.txt"), b"same\n");
        goldens.check("one.txt", "same\n");
        let differs = std::panic::catch_unwind(|| goldens.check("one.txt", "other\n"));
        let missing = std::panic::catch_unwind(|| goldens.check("none.txt", "x"));
        std::fs::remove_dir_all(&dir).unwrap();
        let message = *differs.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("one.txt differs from its golden at line 1"), "{message}");
        assert!(message.contains("UPDATE_GOLDEN=1 rewrites it"), "{message}");
        let message = *missing.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("UPDATE_GOLDEN=1 creates it"), "{message}");
    }

    #[test]
    fn a_directory_must_hold_exactly_the_files() {
        let dir = std::env::temp_dir().join(format!("herd-testutil-dir-{}", std::process::id()));
        let goldens = Goldens { dir: dir.clone() };
        write(&goldens.path("set/a.conf"), b"a\n");
        write(&goldens.path("set/sub/b.conf"), b"b\n");
        let mut want = BTreeMap::new();
        want.insert(PathBuf::from("a.conf"), "a\n".to_owned());
        want.insert(PathBuf::from("sub/b.conf"), "b\n".to_owned());
        goldens.check_dir("set", &want);
        want.insert(PathBuf::from("c.conf"), "c\n".to_owned());
        let extra = std::panic::catch_unwind(|| goldens.check_dir("set", &want));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(extra.is_err());
    }
}
