//! Names the commit herd was built from, for `herd --version` and every stored result
//! (HERD_VERSION: `0.1.0 (commit 1a2b3c4d5e6f)`): a change point in a history is then
//! attributed to the herd commit that differed, not to one version number for every build.
//! Without git, or outside a checkout (a source tarball), the version stands alone.

use std::process::Command;

// At build time, before herd exists: git rev-parse ends by itself, nothing to supervise.
#[allow(clippy::disallowed_methods)]
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_owned())
}

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let full = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => format!("{version} (commit {commit})"),
        None => version.to_owned(),
    };
    println!("cargo:rustc-env=HERD_VERSION={full}");
    // Build again when HEAD moves: a checkout (HEAD) or a commit on the branch (its ref, loose
    // or packed). A worktree's HEAD is in its own git dir, its refs in the common one.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        println!("cargo:rerun-if-changed={common}/packed-refs");
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={common}/{head_ref}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
