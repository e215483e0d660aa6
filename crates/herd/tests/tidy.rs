//! Repository rules checked as an ordinary test (rust-analyzer's tidy): every Rust file
//! says what it is for, every crate is on ARCHITECTURE.md's code map, no stray debugging.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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
