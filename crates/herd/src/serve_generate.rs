//! `herd serve --generate DIR`: writes benchmark file sets with `herd_fileset` and exits.
//! Turns the flags into `FileSet`s, shows progress on stderr every few seconds of a long run
//! (never per file), prints one summary line per set on stdout, and leaves the wording of errors
//! to the library, adding only what failed. It writes no file itself.
//!
//! Output: stdout carries one line per set (files, bytes, path, and the `herd serve --root`
//! command that serves it); stderr carries progress lines. Exit code 0 when every set is
//! complete, 1 on an error (files written so far stay; the same command continues the work).

use std::io::{self, Write as _};
use std::num::NonZeroU32;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use herd_fileset::{self as fileset, FileSet, Phase, Progress, SetSummary, SizeList};
use herd_run::summary::binary_units;

/// How often a progress line may appear. The first one waits as long, so short runs show none.
const PROGRESS_EVERY: Duration = Duration::from_secs(3);

/// Writes the sets the flags ask for under `dir`: the size sweep (`sizes`, or the default sweep
/// when neither flag is given) and the SPECweb99-like set (`specweb_dirs`).
pub(crate) fn run(
    dir: &Path,
    sizes: Option<SizeList>,
    specweb_dirs: Option<u32>,
) -> anyhow::Result<()> {
    let mut sets = Vec::new();
    if sizes.is_some() || specweb_dirs.is_none() {
        sets.push(FileSet::Sizes(sizes.unwrap_or_default()));
    }
    if let Some(n_dirs) = specweb_dirs.and_then(NonZeroU32::new) {
        sets.push(FileSet::Specweb { n_dirs });
    }

    let started = Instant::now();
    let mut last_shown = started;
    let mut show = |p: &Progress| {
        let now = Instant::now();
        if now.duration_since(last_shown) >= PROGRESS_EVERY {
            last_shown = now;
            // Progress is a courtesy: a closed stderr must not stop the work.
            let _ = writeln!(io::stderr(), "herd serve: {}", progress_line(p, now - started));
        }
    };
    let mut summaries = fileset::generate(dir, &sets, &mut show)
        .with_context(|| format!("cannot generate file sets in `{}`", dir.display()))?;
    // The texts /include joins, so that the root serves the same page herd's own texts give.
    summaries.push(
        fileset::write_include_texts(dir)
            .with_context(|| format!("cannot write the include texts in `{}`", dir.display()))?,
    );

    let mut stdout = io::stdout().lock();
    let written = summaries
        .iter()
        .try_for_each(|s| writeln!(stdout, "{}", summary_line(s, dir)))
        .and_then(|()| stdout.flush());
    match written {
        // A reader that went away (`| head -1`) is not a failure of the generation.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write the summary to stdout")
        }
        _ => Ok(()),
    }
}

/// `sizes: 11 files, 1398101 bytes (1.3 MiB) in /tmp/sets/sizes (11 written, 0 kept); serve
/// them with: herd serve --root /tmp/sets`, and for a set with a manifest, where it is.
fn summary_line(s: &SetSummary, dir: &Path) -> String {
    let manifest = match &s.manifest {
        Some(path) => format!(", access mix in {}", path.display()),
        None => String::new(),
    };
    format!(
        "{}: {} files, {} bytes ({}) in {} ({} written, {} kept{manifest}); serve them with: \
         herd serve --root {}",
        s.name,
        s.n_files,
        s.total_bytes,
        binary_units(s.total_bytes),
        s.path.display(),
        s.n_written,
        s.n_kept,
        dir.display()
    )
}

/// `writing: 1234 of 3600 files, 1.2 GiB of 4.8 GiB (25 %) after 12 s`.
fn progress_line(p: &Progress, elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    match p.phase {
        Phase::Checking => {
            format!("checking existing files: {} of {} after {secs} s", p.n_files_done, p.n_files)
        }
        Phase::Writing => {
            let pct =
                p.bytes_written.saturating_mul(100).checked_div(p.bytes_to_write).unwrap_or(100);
            format!(
                "writing: {} of {} files, {} of {} ({pct} %) after {secs} s",
                p.n_files_done,
                p.n_files,
                binary_units(p.bytes_written),
                binary_units(p.bytes_to_write)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn units() {
        assert_eq!(binary_units(0), "0 B");
        assert_eq!(binary_units(1023), "1023 B");
        assert_eq!(binary_units(1024), "1.0 KiB");
        assert_eq!(binary_units(5_119_484), "4.9 MiB");
        assert_eq!(binary_units(64 << 30), "64.0 GiB");
        assert_eq!(binary_units(u64::MAX), "16384.0 PiB");
    }

    #[test]
    fn lines() {
        let s = SetSummary {
            name: "specweb",
            path: PathBuf::from("/t/specweb"),
            n_files: 72,
            total_bytes: 10_238_968,
            n_written: 70,
            n_kept: 2,
            manifest: Some(PathBuf::from("/t/specweb/manifest.toml")),
        };
        assert_eq!(
            summary_line(&s, Path::new("/t")),
            "specweb: 72 files, 10238968 bytes (9.8 MiB) in /t/specweb (70 written, 2 kept, \
             access mix in /t/specweb/manifest.toml); serve them with: herd serve --root /t"
        );
        let p = Progress {
            phase: Phase::Writing,
            n_files_done: 10,
            n_files: 72,
            bytes_written: 1 << 20,
            bytes_to_write: 4 << 20,
        };
        assert_eq!(
            progress_line(&p, Duration::from_secs(7)),
            "writing: 10 of 72 files, 1.0 MiB of 4.0 MiB (25 %) after 7 s"
        );
        let p = Progress { phase: Phase::Checking, bytes_to_write: 0, ..p };
        assert_eq!(
            progress_line(&p, Duration::from_secs(3)),
            "checking existing files: 10 of 72 after 3 s"
        );
    }
}
