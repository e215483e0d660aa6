//! Repository rules checked as an ordinary test (rust-analyzer's tidy): every Rust file
//! says what it is for, no stray debugging, and ARCHITECTURE.md stays true of the tree: every
//! crate has a section on its code map, every path it names in backquotes exists, and its
//! dependency block is the herd-* `[dependencies]` of the crates' Cargo.toml files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name == "target" || name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let mut files = Vec::new();
    for top in ["crates", "fuzz"] {
        rust_files(&repo().join(top), &mut files);
    }
    assert!(files.len() > 20);
    let missing: Vec<_> = files
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .collect();
    assert!(missing.is_empty(), "files without a leading //! paragraph: {missing:#?}");
}

#[test]
fn every_crate_is_on_the_code_map() {
    let arch = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    for e in std::fs::read_dir(repo().join("crates")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            arch.contains(&format!("`crates/{name}`")),
            "crates/{name} is not in ARCHITECTURE.md's code map"
        );
    }
}

#[test]
fn no_debugging_leftovers() {
    let mut files = Vec::new();
    rust_files(&repo().join("crates"), &mut files);
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        // Built with concat! so that this file does not match itself.
        let banned = [concat!("dbg", "!("), concat!("todo", "!("), concat!("#[", "ignore]")];
        for (i, line) in text.lines().enumerate() {
            for b in banned {
                assert!(!line.contains(b), "{}:{}: {b}", p.display(), i + 1);
            }
        }
    }
}

/// The test command runs no doc tests (`cargo test --lib --bins --tests`: rustdoc spent 29 s of
/// it finding none in 17 crates). So none may exist: a fenced block in a doc comment names a
/// language rustdoc does not run (`text`, `c`, `sh`, …), never Rust or none.
#[test]
fn no_doc_comment_holds_a_doc_test() {
    let mut files = Vec::new();
    rust_files(&repo().join("crates"), &mut files);
    // What rustdoc runs: no language, `rust`, or only rustdoc's attributes.
    let runs = |tag: &str| {
        tag.split(',').map(str::trim).all(|t| {
            [
                "",
                "rust",
                "should_panic",
                "no_run",
                "compile_fail",
                "edition2015",
                "edition2018",
                "edition2021",
                "edition2024",
            ]
            .contains(&t)
        })
    };
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        let mut open = false;
        for (i, line) in text.lines().enumerate() {
            let doc = line.trim_start();
            let Some(body) = doc.strip_prefix("///").or_else(|| doc.strip_prefix("//!")) else {
                continue;
            };
            let Some(tag) = body.trim().strip_prefix("```") else { continue };
            if !open {
                assert!(
                    !runs(tag),
                    "{}:{}: a doc test (```{tag}); the test command runs none: name the block's \
                     language (```text) or make it a #[test]",
                    p.display(),
                    i + 1
                );
            }
            open = !open;
        }
    }
}

/// Top-level directories whose paths ARCHITECTURE.md writes from the repository's root
/// wherever they appear.
const ROOT_DIRS: [&str; 8] =
    ["crates/", "docs/", "fuzz/", "bench/", "scripts/", "experiments/", "deploy/", ".ci/"];

/// File extensions that make a backquoted name a path.
const PATH_EXTENSIONS: [&str; 12] =
    ["rs", "md", "toml", "sql", "sh", "json", "yaml", "py", "c", "conf", "cfg", "php"];

/// How ARCHITECTURE.md's paths are read, for the failure messages.
const PATH_CONVENTION: &str = "ARCHITECTURE.md's paths are read from the repository's root, \
     except inside a \"### `crates/NAME`\" section of the code map, where a path is from \
     crates/NAME/src/ (and tests/... or examples/... from crates/NAME/). A backquoted name is \
     a path when it starts with one of crates/, docs/, fuzz/, bench/, scripts/, experiments/, \
     deploy/, .ci/, ends in `/`, or ends in a file extension (.rs, .md, .toml, ...); fenced \
     code blocks are not read.";

fn architecture() -> String {
    std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap()
}

/// Whether a backquoted span names a path (see [`PATH_CONVENTION`]).
fn is_path(span: &str) -> bool {
    let chars_ok =
        span.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if span.is_empty() || !chars_ok || span.starts_with('-') {
        return false;
    }
    // `name.rs`, not a bare `.rs`: an extension alone is no path.
    let extension = span
        .rsplit_once('.')
        .filter(|(stem, e)| !stem.is_empty() && !stem.ends_with('/') && !e.contains('/'))
        .map(|(_, e)| e);
    ROOT_DIRS.iter().any(|d| span.starts_with(d))
        || span.ends_with('/')
        || extension.is_some_and(|e| PATH_EXTENSIONS.contains(&e))
}

/// Every path ARCHITECTURE.md names outside fenced code blocks: (line number, as written,
/// the crate whose section it is in, where it points). A code span may run over a line break
/// (not over a blank line or a heading); one that does holds a space, so it is no path.
fn architecture_paths(text: &str) -> Vec<(usize, String, Option<String>, PathBuf)> {
    let root = repo();
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    let mut fenced = false;
    // The code span being read: where it began, and its text so far.
    let mut span: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            span = None;
            continue;
        }
        if fenced {
            continue;
        }
        if line.trim().is_empty() || line.starts_with('#') {
            span = None;
        }
        if line.starts_with('#') {
            section = line
                .strip_prefix("### `crates/")
                .and_then(|rest| rest.split_once('`'))
                .map(|(name, _)| name.to_owned());
        }
        for (k, piece) in line.split('`').enumerate() {
            if k > 0 {
                // A backquote: a span opens, or the open one closes.
                match span.take() {
                    None => span = Some((i + 1, String::new())),
                    Some((at, code)) => {
                        if is_path(&code) {
                            out.push((
                                at,
                                code.clone(),
                                section.clone(),
                                place(&root, section.as_deref(), &code),
                            ));
                        }
                    }
                }
            }
            if let Some((_, code)) = &mut span {
                if k == 0 {
                    code.push(' ');
                }
                code.push_str(piece);
            }
        }
    }
    out
}

/// Where a path ARCHITECTURE.md names points, read in the crate section it is in (if any).
fn place(root: &Path, section: Option<&str>, span: &str) -> PathBuf {
    let from_root = ROOT_DIRS.iter().any(|d| span.starts_with(d));
    match (section, from_root) {
        (Some(krate), false) if span.starts_with("tests/") || span.starts_with("examples/") => {
            root.join("crates").join(krate).join(span)
        }
        (Some(krate), false) => root.join("crates").join(krate).join("src").join(span),
        _ => root.join(span),
    }
}

#[test]
fn every_path_architecture_names_exists() {
    let text = architecture();
    let paths = architecture_paths(&text);
    assert!(
        paths.len() > 50,
        "ARCHITECTURE.md names only {} paths: is the parser lost?",
        paths.len()
    );
    let root = repo();
    let missing: Vec<String> = paths
        .iter()
        .filter(
            |(_, span, _, place)| {
                if span.ends_with('/') {
                    !place.is_dir()
                } else {
                    !place.exists()
                }
            },
        )
        .map(|(line, span, section, place)| {
            let shown = place.strip_prefix(&root).unwrap_or(place).display();
            let missing = if span.ends_with('/') { "is no directory" } else { "does not exist" };
            match section {
                Some(krate) => format!(
                    "  line {line}: `{span}` (in the section of crates/{krate}: read as {shown}) \
                     {missing}"
                ),
                None => format!("  line {line}: `{span}` (read as {shown}) {missing}"),
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n{}\n\nFix each in ARCHITECTURE.md: \
         correct the name (a file that moved: its new place; a path outside a crate's section: \
         from the repository's root), or drop the mention if the file is gone.\n{PATH_CONVENTION}",
        missing.join("\n")
    );
}

/// The dependency block: the first fenced code block under `## Code Map`, one line per crate,
/// `NAME → a, b, c` or `NAME → nothing`, a `#` comment allowed after it. Crates by their
/// directory under crates/. Err: what is wrong with a line.
fn dependency_block(text: &str) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut lines = text.lines().enumerate().skip_while(|(_, l)| l.trim() != "## Code Map");
    if lines.next().is_none() {
        return Err("ARCHITECTURE.md has no `## Code Map` heading".into());
    }
    let mut lines = lines.skip_while(|(_, l)| !l.trim_start().starts_with("```"));
    if lines.next().is_none() {
        return Err("ARCHITECTURE.md's `## Code Map` has no fenced dependency block".into());
    }
    let mut block = BTreeMap::new();
    for (i, line) in lines {
        if line.trim_start().starts_with("```") {
            return Ok(block);
        }
        let code = line.split_once('#').map_or(line, |(code, _)| code).trim();
        if code.is_empty() {
            continue;
        }
        let Some((name, deps)) = code.split_once('→') else {
            return Err(format!(
                "line {}: `{line}` is not `CRATE → a, b` or `CRATE → nothing`",
                i + 1
            ));
        };
        let name = name.trim().to_owned();
        let deps: Vec<String> = match deps.trim() {
            "nothing" => Vec::new(),
            list => list.split(',').map(|d| d.trim().to_owned()).collect(),
        };
        if name.is_empty() || deps.iter().any(|d| d.is_empty() || d.contains(' ')) {
            return Err(format!(
                "line {}: `{line}` is not `CRATE → a, b` or `CRATE → nothing` (crates by their \
                 directory under crates/, separated by commas)",
                i + 1
            ));
        }
        let set: BTreeSet<String> = deps.iter().cloned().collect();
        if set.len() != deps.len() {
            return Err(format!("line {}: `{line}` names a crate twice", i + 1));
        }
        if block.insert(name.clone(), set).is_some() {
            return Err(format!("line {}: crate `{name}` has a second line", i + 1));
        }
    }
    Err("ARCHITECTURE.md's dependency block has no closing ```".into())
}

/// `name = "…"` of a Cargo.toml's `[package]`.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some(value) = line.strip_prefix("name").map(str::trim_start) {
                if let Some(value) = value.strip_prefix('=') {
                    return Some(value.trim().trim_matches('"').to_owned());
                }
            }
        }
    }
    None
}

/// The keys of a Cargo.toml's `[dependencies]` (and target-specific `[target.….dependencies]`,
/// and `[dependencies.NAME]` tables); dev- and build-dependencies apart.
fn dependency_keys(manifest: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']').trim();
            in_deps = header == "dependencies" || header.ends_with(".dependencies");
            if let Some(name) = header.strip_prefix("dependencies.") {
                keys.insert(name.trim().to_owned());
            }
            continue;
        }
        if !in_deps || line.starts_with('#') {
            continue;
        }
        let key: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        let rest = line[key.len()..].trim_start();
        if !key.is_empty() && (rest.starts_with('=') || rest.starts_with('.')) {
            keys.insert(key);
        }
    }
    keys
}

/// What the Cargo.toml files say: each crate (its directory under crates/) and the crates of
/// the workspace in its `[dependencies]`.
fn cargo_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let mut manifests = BTreeMap::new();
    for e in std::fs::read_dir(repo().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        manifests.insert(name, text);
    }
    let by_package: BTreeMap<String, String> = manifests
        .iter()
        .map(|(dir, text)| {
            let package = package_name(text)
                .unwrap_or_else(|| panic!("crates/{dir}/Cargo.toml has no [package] name"));
            (package, dir.clone())
        })
        .collect();
    manifests
        .iter()
        .map(|(dir, text)| {
            let deps = dependency_keys(text)
                .into_iter()
                .filter_map(|key| by_package.get(&key).cloned())
                .collect();
            (dir.clone(), deps)
        })
        .collect()
}

fn block_line(name: &str, deps: &BTreeSet<String>) -> String {
    let list = if deps.is_empty() {
        "nothing".to_owned()
    } else {
        deps.iter().cloned().collect::<Vec<_>>().join(", ")
    };
    format!("{name:<8} → {list}")
}

#[test]
fn architecture_dependency_block_is_the_cargo_tomls() {
    let cargo = cargo_dependencies();
    assert!(cargo.len() > 10, "found only {} crates under crates/", cargo.len());
    let block = dependency_block(&architecture())
        .unwrap_or_else(|e| panic!("ARCHITECTURE.md's dependency block cannot be read: {e}"));
    let mut wrong = Vec::new();
    for (name, deps) in &cargo {
        let Some(written) = block.get(name) else {
            wrong.push(format!(
                "  crates/{name} has no line: add `{}`",
                block_line(name, deps).split_whitespace().collect::<Vec<_>>().join(" ")
            ));
            continue;
        };
        for extra in written.difference(deps) {
            wrong.push(format!(
                "  {name} → {extra}: crates/{name}/Cargo.toml's [dependencies] has no herd-{extra} \
                 (a dev-dependency does not count): remove `{extra}` from {name}'s line"
            ));
        }
        for missing in deps.difference(written) {
            wrong.push(format!(
                "  {name} → {missing}: crates/{name}/Cargo.toml's [dependencies] has it, \
                 ARCHITECTURE.md does not: add `{missing}` to {name}'s line (and name what {name} \
                 uses it for in its section)"
            ));
        }
    }
    for name in block.keys().filter(|n| !cargo.contains_key(*n)) {
        wrong.push(format!(
            "  `{name}` has a line but there is no crates/{name}/Cargo.toml: remove the line"
        ));
    }
    let expected: Vec<String> = cargo.iter().map(|(n, d)| block_line(n, d)).collect();
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md's dependency block (the first ``` block under `## Code Map`) differs \
         from the [dependencies] of the crates' Cargo.toml files:\n{}\n\nThe Cargo.toml files \
         are the truth: change the block, not them (unless the code is wrong). As they say it:\n\
         {}",
        wrong.join("\n"),
        expected.join("\n")
    );
}
