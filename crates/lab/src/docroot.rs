//! The files every server of a lab run serves, written once before the first cell: the
//! readiness file, the static sizes, SPECweb99-like sets, the include texts, the PHP pages and
//! POST bodies. With them, what each workload's answer must be (status, length, SHA-256), so
//! that a cell is verified before it is measured.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::num::NonZeroU32;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_fileset::expected;
use herd_fileset::{self as fileset, FileSet, SizeList};
use sha2::{Digest, Sha256};

use crate::experiment::{WorkloadDef, WorkloadKind};

/// What a workload's answer must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The path verified (for a mix, one file of it).
    pub path: Option<String>,
    pub status: u16,
    pub body_bytes: u64,
    /// SHA-256 of the body, hex.
    pub sha256: String,
}

/// The prepared document root.
#[derive(Debug)]
pub struct Docroot {
    pub dir: PathBuf,
    /// By workload name.
    pub expected: BTreeMap<String, Expected>,
}

/// Writes what `workloads` need under `dir` (created, readable by all).
pub fn prepare<'a>(
    dir: &Path,
    workloads: impl IntoIterator<Item = &'a WorkloadDef>,
) -> io::Result<Docroot> {
    fs::create_dir_all(dir)?;
    write(dir, herd_drivers::READY_FILE, b"ready\n")?;
    let texts = expected::include_texts();
    fs::create_dir_all(dir.join("include"))?;
    for (i, t) in texts.iter().enumerate() {
        write(dir, &format!("include/{}.txt", i + 1), t)?;
    }
    write(dir, "9x9.php", herd_drivers::php_pages::NINE_BY_NINE.as_bytes())?;
    write(dir, "include.php", herd_drivers::php_pages::INCLUDE.as_bytes())?;
    write(dir, "echo.php", herd_drivers::php_pages::ECHO.as_bytes())?;

    let mut sizes = Vec::new();
    let mut out = Docroot { dir: dir.to_path_buf(), expected: BTreeMap::new() };
    for w in workloads {
        let e = match w.kind {
            // Files over SMB, in the server's share: nothing to serve from the docroot.
            WorkloadKind::Netbench => continue,
            WorkloadKind::Static { size } => {
                sizes.push(size);
                Expected {
                    path: None,
                    status: 200,
                    body_bytes: size,
                    sha256: generated_sha256(size),
                }
            }
            WorkloadKind::NineByNine => of_bytes(&expected::nine_by_nine()),
            WorkloadKind::Include => {
                of_bytes(&expected::include([&texts[0], &texts[1], &texts[2], &texts[3]]))
            }
            WorkloadKind::Post { size } => {
                let body = body_file(dir, size);
                fs::create_dir_all(dir.join("bodies"))?;
                fs::write(&body, expected::generated(size as usize))?;
                Expected {
                    path: None,
                    status: 200,
                    body_bytes: size,
                    sha256: generated_sha256(size),
                }
            }
            WorkloadKind::Specweb { dirs } => {
                let base = dir.join(format!("sw{dirs}"));
                let n_dirs = NonZeroU32::new(dirs).unwrap_or(NonZeroU32::MIN);
                fileset::generate(&base, &[FileSet::Specweb { n_dirs }], &mut |_| {})
                    .map_err(io::Error::other)?;
                // Verified on one file of the set; herd run checks every length during the run.
                let size = fileset::file_bytes(1, 0);
                Expected {
                    path: Some(format!("/sw{dirs}/specweb/dir00000/class1_0")),
                    status: 200,
                    body_bytes: size,
                    sha256: generated_sha256(size),
                }
            }
        };
        out.expected.insert(w.name.clone(), e);
    }
    if !sizes.is_empty() {
        let list = SizeList::new(sizes).map_err(io::Error::other)?;
        fileset::generate(dir, &[FileSet::Sizes(list)], &mut |_| {}).map_err(io::Error::other)?;
    }
    open_up(dir)?;
    Ok(out)
}

/// The body a POST workload of `size` bytes sends (and gets back).
pub fn body_file(docroot: &Path, size: u64) -> PathBuf {
    docroot.join("bodies").join(format!("post-{size}.bin"))
}

/// Where the SPECweb99-like set of `dirs` directories was generated (herd run `--specweb`).
pub fn specweb_dir(docroot: &Path, dirs: u32) -> PathBuf {
    docroot.join(format!("sw{dirs}")).join("specweb")
}

fn of_bytes(body: &[u8]) -> Expected {
    Expected { path: None, status: 200, body_bytes: body.len() as u64, sha256: sha256_hex(body) }
}

/// SHA-256 of `len` bytes of the generated pattern, without holding them all.
fn generated_sha256(len: u64) -> String {
    let block = expected::generated(64 * 1024);
    let mut h = Sha256::new();
    let mut left = len;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        h.update(&block[..n]);
        left -= n as u64;
    }
    hex(&h.finalize())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) -> io::Result<()> {
    fs::write(dir.join(rel), bytes)
}

/// Directories 0755 and files 0644 all the way down: servers that drop to an unprivileged
/// user (www-data) when herd runs as root must read everything.
fn open_up(dir: &Path) -> io::Result<()> {
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755))?;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            open_up(&path)?;
        } else {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_hash_equals_the_whole() {
        for len in [0u64, 1, 6397, 65536, 200_000] {
            assert_eq!(
                generated_sha256(len),
                sha256_hex(&expected::generated(len as usize)),
                "{len}"
            );
        }
    }
}
