//! What `herd run` sends, as the engine's [`Workload`]: the URL alone, a weighted list
//! (`--urls FILE`, run/url_list.rs) or a SPECweb99-like mix over a `herd serve --generate` file
//! set (`--specweb DIR`, weights from its manifest). Each entry belongs to a group (its URL, or
//! its SPECweb99 class) that the summary breaks results down by, and may carry the body length
//! the response must have.

use std::fs;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use herd_engine::{Prepared, Workload};
use herd_fileset::{SpecwebManifest, MANIFEST_FILE, N_CLASSES};

use crate::request::{check_method, RequestTemplate};
use crate::url::RunUrl;
use crate::url_list;

/// Most SPECweb99 directories a run prebuilds requests for (36 each).
pub(crate) const MAX_SPECWEB_DIRS: u32 = 1000;

/// The run's workload and how to report it.
#[derive(Debug, Clone)]
pub(crate) struct BuiltWorkload {
    pub(crate) workload: Workload,
    /// Group of each entry (index into `group_names`).
    pub(crate) group_of: Vec<usize>,
    pub(crate) group_names: Vec<String>,
    /// What a group is: `URL` or `class`.
    pub(crate) group_kind: &'static str,
    /// Body length each entry's response must have, when known (SPECweb99 files).
    pub(crate) expected_bytes: Vec<Option<u64>>,
    /// What the mix is, for the summary's first line (None: a single URL).
    pub(crate) description: Option<String>,
}

/// Where the requests come from.
pub(crate) enum Source<'a> {
    Single,
    List(&'a Path),
    Specweb(&'a Path),
}

/// Builds the workload. `closing_needed`: some connection's last request must ask the
/// server to close (requests per connection); `always_close`: every request (no keep-alive).
pub(crate) fn build(
    source: Source<'_>,
    url: &RunUrl,
    method: &str,
    template: &RequestTemplate,
    closing_needed: bool,
    always_close: bool,
) -> Result<BuiltWorkload, String> {
    check_method(method)?;
    let prepare = |m: &str, target: &str| {
        let head = m.eq_ignore_ascii_case("HEAD");
        if always_close {
            Prepared::new(template.encode(m, target, true), head)
        } else {
            let mut p = Prepared::new(template.encode(m, target, false), head);
            if closing_needed {
                p.closing = Some(template.encode(m, target, true));
            }
            p
        }
    };
    match source {
        Source::Single => Ok(BuiltWorkload {
            workload: Workload::single(prepare(method, &url.target)),
            group_of: vec![0],
            group_names: vec![format!("{method} {}", url.target)],
            group_kind: "URL",
            expected_bytes: vec![None],
            description: None,
        }),
        Source::List(path) => {
            let text = fs::read_to_string(path)
                .map_err(|e| format!("--urls {}: cannot read the list: {e}", path.display()))?;
            let entries = url_list::parse(&text, url)
                .map_err(|e| format!("--urls {}: {e}", path.display()))?;
            let mut weighted = Vec::with_capacity(entries.len());
            let mut names = Vec::with_capacity(entries.len());
            for e in &entries {
                let m = e.method.as_deref().unwrap_or(method);
                weighted.push((prepare(m, &e.target), e.weight));
                names.push(format!("{m} {}", e.target));
            }
            let n = entries.len();
            Ok(BuiltWorkload {
                workload: Workload::weighted(weighted).map_err(|e| e.to_string())?,
                group_of: (0..n).collect(),
                group_names: names,
                group_kind: "URL",
                expected_bytes: vec![None; n],
                description: Some(format!("{n} URLs from {}", path.display())),
            })
        }
        Source::Specweb(path) => specweb(path, url, method, &prepare),
    }
}

fn specweb(
    path: &Path,
    url: &RunUrl,
    method: &str,
    prepare: &dyn Fn(&str, &str) -> Prepared,
) -> Result<BuiltWorkload, String> {
    let manifest_path = find_manifest(path)?;
    let text = fs::read_to_string(&manifest_path)
        .map_err(|e| format!("--specweb: cannot read {}: {e}", manifest_path.display()))?;
    let manifest = SpecwebManifest::parse(&text)
        .map_err(|e| format!("--specweb {}: {e}", manifest_path.display()))?;
    let mix = manifest.mix().map_err(|e| format!("--specweb: {e}"))?;
    if manifest.n_dirs > MAX_SPECWEB_DIRS {
        return Err(format!(
            "--specweb: the set has {} directories; herd run prebuilds each request and takes \
             at most {MAX_SPECWEB_DIRS} (generate a smaller set with --specweb-dirs)",
            manifest.n_dirs
        ));
    }
    let n_dirs = NonZeroU32::new(manifest.n_dirs)
        .ok_or_else(|| "--specweb: the set has no directory".to_owned())?;
    // The set sits in `specweb/` under the directory the URL's path names.
    let prefix = url.target.split('?').next().unwrap_or("/").trim_end_matches('/');
    let mut weighted = Vec::with_capacity(manifest.n_dirs as usize * 36);
    let mut group_of = Vec::with_capacity(weighted.capacity());
    let mut expected = Vec::with_capacity(weighted.capacity());
    for dir in 0..n_dirs.get() {
        for class in &manifest.classes {
            let c = usize::from(class.class);
            for f in &class.files {
                let target = format!("{prefix}/specweb/dir{dir:05}/{}", f.name);
                weighted.push((prepare(method, &target), mix.weight(dir, c, usize::from(f.file))));
                group_of.push(c.min(N_CLASSES - 1));
                expected.push(Some(f.bytes));
            }
        }
    }
    let group_names = (0..N_CLASSES)
        .map(|c| {
            let hi = match c {
                0 => "< 1 KB",
                1 => "< 10 KB",
                2 => "< 100 KB",
                _ => "< 1 MB",
            };
            format!("class {c} ({hi})")
        })
        .collect();
    Ok(BuiltWorkload {
        workload: Workload::weighted(weighted).map_err(|e| e.to_string())?,
        group_of,
        group_names,
        group_kind: "class",
        expected_bytes: expected,
        description: Some(format!(
            "SPECweb99-like mix over {} directories ({} files) from {}",
            manifest.n_dirs,
            manifest.n_files,
            manifest_path.display()
        )),
    })
}

/// The manifest of the set at `path`: the `--generate` directory, its `specweb/`
/// subdirectory, or the manifest itself.
pub(crate) fn find_manifest(path: &Path) -> Result<PathBuf, String> {
    let candidates =
        [path.join("specweb").join(MANIFEST_FILE), path.join(MANIFEST_FILE), path.to_path_buf()];
    for c in &candidates {
        if c.is_file() {
            return Ok(c.clone());
        }
    }
    Err(format!(
        "--specweb {}: no {MANIFEST_FILE} there; give the directory written by \
         `herd serve --generate DIR --specweb-dirs N` (or its specweb/ directory)",
        path.display()
    ))
}
