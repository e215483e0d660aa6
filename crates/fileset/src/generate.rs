//! One run of `generate`: check the target, look at what exists (first pass), check free space,
//! then write what is missing (second pass) and the manifest. The layout of each set (which
//! directories, which files, how long) is enumerated lazily here, so a set of 100,000
//! directories costs no memory per file; the two passes enumerate it twice rather than keep a
//! list.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::manifest::{SpecwebManifest, MANIFEST_FILE};
use super::space::{nearest_existing, on_disk, space_at, with_margin};
use super::specweb::{file_bytes, SpecwebMixError, FILES_PER_CLASS, MAX_SPECWEB_DIRS, N_CLASSES};
use super::write::{existing, write_file, Existing};
use super::{FileSet, FileSetError, Phase, Progress, SetSummary};

/// Writes `sets` under `dir`, creating it (and its parents) if needed, and returns what was done
/// for each set, in order. `on_progress` is called often (see [`Progress`]); it should be cheap
/// and decide itself when to show anything.
///
/// Files already present with the right size are kept without being read. Nothing is removed.
/// On error, the files written so far stay, and running again with the same sets continues.
pub fn generate(
    dir: &Path,
    sets: &[FileSet],
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Vec<SetSummary>, FileSetError> {
    if dir.as_os_str().is_empty() {
        return Err(FileSetError::EmptyPath);
    }
    for set in sets {
        if let FileSet::Specweb { n_dirs } = set {
            if n_dirs.get() > MAX_SPECWEB_DIRS {
                return Err(SpecwebMixError::TooManyDirs { n_dirs: n_dirs.get() }.into());
            }
        }
    }
    let dir_exists = target_exists(dir)?;
    let plan = check(dir, dir_exists, sets, on_progress)?;
    if plan.n_new > 0 {
        check_space(dir, &plan, sets)?;
    }
    fs::create_dir_all(dir).map_err(|source| create_error(dir, source))?;

    let mut progress = Progress {
        phase: Phase::Writing,
        n_files_done: 0,
        n_files: plan.n_files,
        bytes_written: 0,
        bytes_to_write: plan.bytes_new,
    };
    let mut summaries = Vec::with_capacity(sets.len());
    for set in sets {
        summaries.push(write_set(dir, set, &mut progress, on_progress)?);
    }
    Ok(summaries)
}

/// One directory of a set and its files (name, bytes).
struct Group {
    rel: PathBuf,
    files: Vec<(String, u64)>,
}

/// What the first pass found.
#[derive(Debug, Default)]
struct Plan {
    n_files: u64,
    /// Files to write (missing or of the wrong size).
    n_new: u64,
    bytes_new: u64,
    /// `bytes_new` in whole blocks of the target's file system.
    disk_new: u64,
    /// Directories in all sets, which may need an inode each.
    n_dirs: u64,
}

/// Whether `dir` exists as a directory; an error if it exists as something else or cannot be
/// looked at.
fn target_exists(dir: &Path) -> Result<bool, FileSetError> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(_) => Err(FileSetError::NotADirectory { path: dir.to_owned() }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            Err(FileSetError::ParentNotADirectory { path: dir.to_owned() })
        }
        Err(source) => Err(FileSetError::Inspect { path: dir.to_owned(), source }),
    }
}

/// First pass: which files must be written, and how much that is.
fn check(
    dir: &Path,
    dir_exists: bool,
    sets: &[FileSet],
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Plan, FileSetError> {
    let at = nearest_existing(dir);
    let block_bytes =
        space_at(&at).map_err(|source| FileSetError::Space { path: at, source })?.block_bytes;
    let mut plan = Plan::default();
    let mut progress = Progress {
        phase: Phase::Checking,
        n_files_done: 0,
        n_files: sets.iter().map(n_files).sum(),
        bytes_written: 0,
        bytes_to_write: 0,
    };
    for set in sets {
        let set_exists = dir_exists && group_dir_exists(&dir.join(set.name()))?;
        for group in groups(set) {
            plan.n_dirs += 1;
            let group_exists = set_exists && group_dir_exists(&dir.join(&group.rel))?;
            for (name, bytes) in &group.files {
                let state = if group_exists {
                    let path = dir.join(&group.rel).join(name);
                    match existing(&path, *bytes) {
                        Ok(Existing::NotAFile) => return Err(FileSetError::NotAFile { path }),
                        Ok(state) => state,
                        Err(source) => return Err(inspect_error(path, source)),
                    }
                } else {
                    Existing::Missing
                };
                plan.n_files += 1;
                if state != Existing::RightSize {
                    plan.n_new += 1;
                    plan.bytes_new += bytes;
                    plan.disk_new += on_disk(*bytes, block_bytes);
                }
                progress.n_files_done += 1;
                on_progress(&progress);
            }
        }
    }
    Ok(plan)
}

/// Whether a set's directory exists (a link to a directory counts: a set may live on another
/// disk); an error if something else is there.
fn group_dir_exists(path: &Path) -> Result<bool, FileSetError> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(_) => Err(FileSetError::DirInTheWay { path: path.to_owned() }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(inspect_error(path.to_owned(), source)),
    }
}

/// Refuses a run whose files would not fit, before anything is written.
fn check_space(dir: &Path, plan: &Plan, sets: &[FileSet]) -> Result<(), FileSetError> {
    let at = nearest_existing(dir);
    let space = space_at(&at).map_err(|source| FileSetError::Space { path: at.clone(), source })?;
    let needed = with_margin(plan.disk_new);
    if needed > space.available_bytes {
        return Err(FileSetError::NoSpace {
            path: dir.to_owned(),
            needed,
            available: space.available_bytes,
        });
    }
    // Each new file needs an inode; so may each directory, the manifests and the target itself.
    let inodes = plan.n_new + plan.n_dirs + sets.len() as u64 + 1;
    if let Some(available) = space.available_inodes.filter(|&free| free < inodes) {
        return Err(FileSetError::NoInodes { path: dir.to_owned(), needed: inodes, available });
    }
    Ok(())
}

/// Second pass for one set: every file that is not already right, then the manifest.
fn write_set(
    dir: &Path,
    set: &FileSet,
    progress: &mut Progress,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<SetSummary, FileSetError> {
    let mut summary = SetSummary {
        name: set.name(),
        path: dir.join(set.name()),
        n_files: 0,
        total_bytes: 0,
        n_written: 0,
        n_kept: 0,
        manifest: None,
    };
    for group in groups(set) {
        let group_dir = dir.join(&group.rel);
        fs::create_dir_all(&group_dir).map_err(|source| create_error(&group_dir, source))?;
        for (name, bytes) in &group.files {
            let path = group_dir.join(name);
            match existing(&path, *bytes) {
                Ok(Existing::RightSize) => summary.n_kept += 1,
                Ok(Existing::NotAFile) => return Err(FileSetError::NotAFile { path }),
                Ok(Existing::Missing | Existing::WrongSize) => {
                    let before = progress.bytes_written;
                    write_file(&path, *bytes, &mut |written| {
                        progress.bytes_written = before + written;
                        on_progress(progress);
                    })
                    .map_err(|failure| FileSetError::Write {
                        path: path.clone(),
                        written: failure.written,
                        bytes: *bytes,
                        n_done: progress.n_files_done,
                        n_files: progress.n_files,
                        cause: failure.source,
                    })?;
                    summary.n_written += 1;
                }
                Err(source) => return Err(inspect_error(path, source)),
            }
            summary.n_files += 1;
            summary.total_bytes += bytes;
            progress.n_files_done += 1;
            on_progress(progress);
        }
    }
    if let FileSet::Specweb { n_dirs } = set {
        let path = summary.path.join(MANIFEST_FILE);
        let text = SpecwebManifest::new(*n_dirs).to_toml().map_err(|e| FileSetError::Manifest {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        write_manifest(&path, &text)?;
        summary.manifest = Some(path);
    }
    Ok(summary)
}

/// Writes the manifest unless it is already there with this content, so that a complete set on
/// a read-only file system can be re-checked.
fn write_manifest(path: &Path, text: &str) -> Result<(), FileSetError> {
    match existing(path, text.len() as u64) {
        Ok(Existing::NotAFile) => return Err(FileSetError::NotAFile { path: path.to_owned() }),
        Ok(Existing::RightSize) if fs::read(path).is_ok_and(|old| old == text.as_bytes()) => {
            return Ok(());
        }
        Ok(_) => {}
        Err(source) => return Err(inspect_error(path.to_owned(), source)),
    }
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|source| FileSetError::Manifest { path: path.to_owned(), source })
}

/// The directories of a set, in writing order, each with its files.
fn groups(set: &FileSet) -> Box<dyn Iterator<Item = Group> + '_> {
    match set {
        FileSet::Sizes(sizes) => Box::new(std::iter::once(Group {
            rel: PathBuf::from(set.name()),
            files: sizes.as_slice().iter().map(|&b| (format!("{b}.html"), b)).collect(),
        })),
        FileSet::Specweb { n_dirs } => Box::new((0..n_dirs.get()).map(|d| {
            Group {
                rel: Path::new("specweb").join(format!("dir{d:05}")),
                files: (0..N_CLASSES)
                    .flat_map(|c| {
                        (0..FILES_PER_CLASS)
                            .map(move |f| (format!("class{c}_{f}"), file_bytes(c, f)))
                    })
                    .collect(),
            }
        })),
    }
}

fn n_files(set: &FileSet) -> u64 {
    match set {
        FileSet::Sizes(sizes) => sizes.as_slice().len() as u64,
        FileSet::Specweb { n_dirs } => {
            u64::from(n_dirs.get()) * (N_CLASSES * FILES_PER_CLASS) as u64
        }
    }
}

fn create_error(path: &Path, source: io::Error) -> FileSetError {
    if source.kind() == io::ErrorKind::NotADirectory {
        FileSetError::ParentNotADirectory { path: path.to_owned() }
    } else {
        FileSetError::CreateDir { path: path.to_owned(), source }
    }
}

fn inspect_error(path: PathBuf, source: io::Error) -> FileSetError {
    FileSetError::Inspect { path, source }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;
    use crate::{SizeList, BYTES_PER_DIR, GENERATED_PATTERN, MANIFEST_FORMAT};

    /// A fresh directory under the system temp dir, removed on drop.
    struct Tmp(PathBuf);

    impl Tmp {
        fn new(tag: &str) -> Tmp {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("herd-fileset-{tag}-{}-{n}", std::process::id()));
            let _ = fs::remove_dir_all(&path);
            Tmp(path)
        }
    }

    impl Drop for Tmp {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn sizes(list: &str) -> FileSet {
        FileSet::Sizes(list.parse::<SizeList>().unwrap())
    }

    fn specweb(n: u32) -> FileSet {
        FileSet::Specweb { n_dirs: NonZeroU32::new(n).unwrap() }
    }

    fn run(dir: &Path, sets: &[FileSet]) -> Result<Vec<SetSummary>, FileSetError> {
        generate(dir, sets, &mut |_| {})
    }

    fn is_pattern(bytes: &[u8]) -> bool {
        bytes.iter().enumerate().all(|(i, &b)| b == GENERATED_PATTERN[i % 64])
    }

    #[test]
    fn writes_both_sets_with_parents_and_summaries() {
        let tmp = Tmp::new("both");
        let target = tmp.0.join("a/b");
        let out = run(&target, &[sizes("1,1Ki,100000"), specweb(2)]).unwrap();
        assert_eq!(
            out[0],
            SetSummary {
                name: "sizes",
                path: target.join("sizes"),
                n_files: 3,
                total_bytes: 1 + 1024 + 100_000,
                n_written: 3,
                n_kept: 0,
                manifest: None,
            }
        );
        assert_eq!(out[1].n_files, 72);
        assert_eq!(out[1].total_bytes, 2 * BYTES_PER_DIR);
        assert_eq!(out[1].manifest, Some(target.join("specweb/manifest.toml")));
        let body = fs::read(target.join("sizes/100000.html")).unwrap();
        assert!(body.len() == 100_000 && is_pattern(&body));
        let body = fs::read(target.join("specweb/dir00001/class2_4")).unwrap();
        assert!(body.len() == 51_200 && is_pattern(&body));
        let manifest = fs::read_to_string(target.join("specweb/manifest.toml")).unwrap();
        let manifest = SpecwebManifest::parse(&manifest).unwrap();
        assert_eq!((manifest.format.as_str(), manifest.n_dirs), (MANIFEST_FORMAT, 2));
    }

    #[test]
    fn keeps_files_of_the_right_size_without_reading_them() {
        let tmp = Tmp::new("keep");
        run(&tmp.0, &[sizes("10,20,30")]).unwrap();
        // Same size, other content: kept as is (content is not re-read).
        fs::write(tmp.0.join("sizes/10.html"), b"0000000000").unwrap();
        // Wrong size, as after an interrupted run: rewritten.
        fs::write(tmp.0.join("sizes/20.html"), b"short").unwrap();
        let mut last = None;
        let out = generate(&tmp.0, &[sizes("10,20,30")], &mut |p| last = Some(*p)).unwrap();
        assert_eq!((out[0].n_written, out[0].n_kept), (1, 2));
        assert_eq!(fs::read(tmp.0.join("sizes/10.html")).unwrap(), b"0000000000");
        assert!(is_pattern(&fs::read(tmp.0.join("sizes/20.html")).unwrap()));
        let last = last.unwrap();
        assert_eq!((last.phase, last.n_files_done, last.n_files), (Phase::Writing, 3, 3));
        assert_eq!((last.bytes_written, last.bytes_to_write), (20, 20));
    }

    #[test]
    fn a_complete_set_is_checked_not_rewritten() {
        let tmp = Tmp::new("again");
        run(&tmp.0, &[specweb(1)]).unwrap();
        let manifest = tmp.0.join("specweb/manifest.toml");
        let before = fs::metadata(&manifest).unwrap().modified().unwrap();
        let out = run(&tmp.0, &[specweb(1)]).unwrap();
        assert_eq!((out[0].n_written, out[0].n_kept), (0, 36));
        assert_eq!(fs::metadata(&manifest).unwrap().modified().unwrap(), before);
    }

    #[test]
    fn extra_files_are_left_alone() {
        let tmp = Tmp::new("extra");
        fs::create_dir_all(tmp.0.join("sizes")).unwrap();
        fs::write(tmp.0.join("sizes/mine.txt"), b"keep me").unwrap();
        fs::write(tmp.0.join("index.html"), b"hello").unwrap();
        run(&tmp.0, &[sizes("1")]).unwrap();
        assert_eq!(fs::read(tmp.0.join("sizes/mine.txt")).unwrap(), b"keep me");
        assert_eq!(fs::read(tmp.0.join("index.html")).unwrap(), b"hello");
    }

    #[test]
    fn refuses_a_file_as_target_or_parent() {
        let tmp = Tmp::new("file");
        fs::create_dir_all(&tmp.0).unwrap();
        let file = tmp.0.join("f");
        fs::write(&file, b"x").unwrap();
        let err = run(&file, &[sizes("1")]).unwrap_err();
        assert!(matches!(err, FileSetError::NotADirectory { path } if path == file));
        let below = file.join("sub");
        assert!(matches!(
            run(&below, &[sizes("1")]),
            Err(FileSetError::ParentNotADirectory { path }) if path == below
        ));
        assert_eq!(fs::read(&file).unwrap(), b"x");
    }

    #[test]
    fn refuses_something_in_the_way_before_writing() {
        let tmp = Tmp::new("way");
        fs::create_dir_all(tmp.0.join("sizes/4.html")).unwrap();
        let err = run(&tmp.0, &[sizes("1,4")]).unwrap_err();
        assert!(matches!(&err, FileSetError::NotAFile { path } if path.ends_with("sizes/4.html")));
        // Refused in the first pass: nothing was written.
        assert!(!tmp.0.join("sizes/1.html").exists());
        assert!(err.to_string().contains("herd never removes anything"), "{err}");
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let tmp = Tmp::new("big");
        // 100,000 directories of 4.88 MiB is 488 GiB; a test machine with that much free space
        // would defeat this test, so ask for files of the maximum size instead: 2,000 × 64 GiB.
        let list: Vec<u64> = (0..2000).map(|i| crate::MAX_FILE_BYTES - i).collect();
        let err = run(&tmp.0, &[FileSet::Sizes(SizeList::new(list).unwrap())]).unwrap_err();
        let FileSetError::NoSpace { needed, available, .. } = err else {
            panic!("expected NoSpace, got {err:?}");
        };
        assert!(needed > available);
        assert!(!tmp.0.exists(), "nothing is created when the set does not fit");
    }

    #[test]
    fn refuses_a_file_where_a_set_directory_goes() {
        let tmp = Tmp::new("dirway");
        fs::create_dir_all(&tmp.0).unwrap();
        fs::write(tmp.0.join("specweb"), b"mine").unwrap();
        let err = run(&tmp.0, &[sizes("1"), specweb(1)]).unwrap_err();
        assert!(
            matches!(&err, FileSetError::DirInTheWay { path } if path == &tmp.0.join("specweb"))
        );
        assert!(!tmp.0.join("sizes").exists(), "refused before writing anything");
        assert_eq!(fs::read(tmp.0.join("specweb")).unwrap(), b"mine");
    }

    #[test]
    fn a_set_directory_may_be_a_link_to_another_disk() {
        let tmp = Tmp::new("link");
        fs::create_dir_all(tmp.0.join("elsewhere")).unwrap();
        fs::create_dir_all(tmp.0.join("sets")).unwrap();
        std::os::unix::fs::symlink(tmp.0.join("elsewhere"), tmp.0.join("sets/sizes")).unwrap();
        run(&tmp.0.join("sets"), &[sizes("5")]).unwrap();
        assert_eq!(fs::read(tmp.0.join("elsewhere/5.html")).unwrap(), b"01234");
    }

    #[test]
    fn refuses_an_empty_path() {
        assert!(matches!(run(Path::new(""), &[sizes("1")]), Err(FileSetError::EmptyPath)));
    }

    #[test]
    fn too_many_directories() {
        let tmp = Tmp::new("many");
        let err = run(&tmp.0, &[specweb(MAX_SPECWEB_DIRS + 1)]).unwrap_err();
        assert!(matches!(err, FileSetError::Specweb(SpecwebMixError::TooManyDirs { .. })));
    }

    #[test]
    fn layout_of_groups() {
        let g: Vec<Group> = groups(&specweb(3)).collect();
        assert_eq!(g.len(), 3);
        assert_eq!(g[2].rel, Path::new("specweb/dir00002"));
        assert_eq!(g[0].files.len(), 36);
        assert_eq!(g[0].files[0], ("class0_0".to_owned(), 102));
        assert_eq!(g[0].files[35], ("class3_8".to_owned(), 921_600));
        assert_eq!(n_files(&specweb(3)), 108);
        let g: Vec<Group> = groups(&sizes("1Ki,1")).collect();
        assert_eq!(g[0].files, [("1.html".to_owned(), 1), ("1024.html".to_owned(), 1024)]);
    }
}
