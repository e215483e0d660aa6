//! The Debian package (scripts/package.sh), installed as a user would: into a fresh Debian
//! 12 root made from Debian's packages (mmdebstrap), with `apt-get install ./herd_….deb`.
//! It pulls in no Rust, installs the man pages and completions the binary makes, every
//! bundled experiment plans there, and `herd lab run` measures herd serve and stores the
//! result, which `herd report` reads back. The package is of this test build's binary: a
//! dist build takes minutes (`scripts/package.sh` alone builds one).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // the test runs the packaging tools it checks

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{require_root, tempdir, text};

/// A one-cell experiment: herd serve, 2,000 requests, one repetition (a smoke run).
const SMOKE: &str = r#"
name = "package-smoke"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["n"]
[workloads.page]
kind = "static"
size = 1000
[loads.n]
requests = 2000
concurrency = 4
[repetitions]
min = 1
max = 1
"#;

/// The fresh root: /proc unmounted and everything removed when the test ends, however.
struct Root(PathBuf);

impl Drop for Root {
    fn drop(&mut self) {
        let proc = self.0.join("proc");
        let _ = Command::new("umount").arg("-l").arg(&proc).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn in_root(root: &Path, args: &[&str]) -> Output {
    Command::new("chroot").arg(root).args(args).env("LC_ALL", "C").output().unwrap()
}

#[test]
fn the_deb_installs_into_a_fresh_debian_and_runs_the_lab() {
    require_root();
    let dir = tempdir("package");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = dir.join("out");
    let built = Command::new(repo.join("scripts/package.sh"))
        .env("HERD_BIN", env!("CARGO_BIN_EXE_herd"))
        .env("OUT", &out)
        .env("IMAGES", "0")
        // gzip, not xz: the same files, packed in 2 s instead of 12 (a debug binary is 40 MB).
        .env("COMPRESS", "gzip")
        .output()
        .unwrap();
    let said = ok("scripts/package.sh", built);
    assert!(said.contains("Depends: libc6"), "{said}");
    let deb = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .expect("a .deb");
    let tarball = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-linux.tar.gz"));
    assert!(tarball.is_some(), "no tarball in {}", out.display());

    // The images' recipes against this .deb (building them needs buildah or podman, which
    // the test command does not install: scripts/build-images.sh, docs/install.md).
    let recipes = Command::new(repo.join("scripts/build-images.sh"))
        .arg("--check")
        .arg(&deb)
        .output()
        .unwrap();
    assert!(ok("scripts/build-images.sh --check", recipes).contains("recipes checked"));

    let root = Root(dir.join("root"));
    match std::env::var_os("HERD_FRESH_ROOT_TAR") {
        // scripts/test.sh makes the root with mmdebstrap while the tests build (half a
        // minute of the test command otherwise); it is unpacked here, used once.
        Some(tar) => {
            std::fs::create_dir_all(&root.0).unwrap();
            ok(
                "tar -x (the fresh Debian 12 root scripts/test.sh made)",
                Command::new("tar").arg("-xf").arg(&tar).arg("-C").arg(&root.0).output().unwrap(),
            );
        }
        None => {
            ok(
                "mmdebstrap (a fresh Debian 12 root from Debian's packages)",
                Command::new("mmdebstrap")
                    .args(["--variant=apt", "--quiet", "bookworm"])
                    .arg(&root.0)
                    .output()
                    .unwrap(),
            );
        }
    }
    let before = ok("dpkg -l", in_root(&root.0, &["dpkg-query", "-W", "-f", "${Package}\n"]));
    std::fs::copy(&deb, root.0.join("tmp/herd.deb")).unwrap();
    ok(
        "apt-get install ./herd.deb",
        in_root(&root.0, &["apt-get", "install", "-y", "-q", "/tmp/herd.deb"]),
    );
    let after = ok("dpkg -l", in_root(&root.0, &["dpkg-query", "-W", "-f", "${Package}\n"]));
    let added: Vec<&str> = after.lines().filter(|p| !before.lines().any(|b| b == *p)).collect();
    assert_eq!(added, ["herd"], "the package pulled in more than itself");
    assert!(!after.lines().any(|p| p.contains("rust") || p.contains("cargo")), "{after}");

    // Man pages and completions: those the installed binary makes, byte for byte.
    let man1 = root.0.join("usr/share/man/man1");
    for page in ["herd.1.gz", "herd-run.1.gz", "herd-ab.1.gz", "herd-lab-run.1.gz"] {
        assert!(man1.join(page).is_file(), "no {page}");
    }
    let bash = std::fs::read(root.0.join("usr/share/bash-completion/completions/herd")).unwrap();
    let made = in_root(&root.0, &["herd", "completions", "bash"]);
    assert!(made.status.success() && made.stdout == bash, "the bash completions differ");
    assert!(root.0.join("usr/share/zsh/vendor-completions/_herd").is_file());
    assert!(root.0.join("usr/share/fish/vendor_completions.d/herd.fish").is_file());
    assert!(root.0.join("usr/share/herd/experiments/quickstart.toml").is_file());
    assert!(root.0.join("usr/share/doc/herd/copyright").is_file());

    ok(
        "mount /proc",
        Command::new("mount")
            .args(["-t", "proc", "proc"])
            .arg(root.0.join("proc"))
            .output()
            .unwrap(),
    );
    // Every bundled experiment plans there (a real server missing is said in the plan).
    let list = ok("herd lab list", in_root(&root.0, &["herd", "lab", "list"]));
    let names: Vec<&str> =
        list.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| *n != "run").collect();
    assert!(names.contains(&"quickstart") && names.len() >= 5, "{list}");
    for name in &names {
        ok(name, in_root(&root.0, &["herd", "lab", "run", "--dry-run", name]));
    }
    // A real lab run: herd serve measured, stored, reported.
    std::fs::write(root.0.join("tmp/smoke.toml"), SMOKE).unwrap();
    let run = in_root(
        &root.0,
        &["herd", "lab", "run", "--no-progress", "--store", "/tmp/r.db", "/tmp/smoke.toml"],
    );
    let stderr = text(&run.stderr);
    ok("herd lab run", run);
    assert!(stderr.contains("herd lab: 1 run in /tmp/r.db"), "{stderr}");
    let report = ok("herd report", in_root(&root.0, &["herd", "report", "/tmp/r.db"]));
    assert!(report.contains("herd") && report.contains("package-smoke"), "{report}");
    drop(root);
    std::fs::remove_dir_all(&dir).unwrap();
}
