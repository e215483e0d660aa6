//! `herd serve --generate DIR` as a user runs it: the real binary, its stdout, stderr and exit
//! code. Success (one summary line per set, the files on disk, a second run that keeps them)
//! and refusals (a bad size token, flags that make no sense with --generate, a target that
//! cannot be a directory), each with a one-line error. Writes only under the temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::fs;
use std::path::Path;
use std::process::Output;

use util::{herd, run, tempdir, text};

fn generate(args: &[&str]) -> Output {
    run(herd().arg("serve").args(args))
}

/// The only line of stderr, which must not be empty.
fn one_line_error(out: &Output) -> String {
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr should be one line:\n{stderr}");
    assert!(!lines[0].is_empty());
    lines[0].to_owned()
}

/// Clap's usage errors: the first line says what is wrong, then come its usage hints.
fn usage_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    text(&out.stderr).lines().next().unwrap_or("").to_owned()
}

#[test]
fn writes_both_sets_and_says_how_to_serve_them() {
    let dir = tempdir("generate").join("new/sets");
    let d = dir.to_str().unwrap();
    let out = generate(&["--generate", d, "--sizes", "1,2Ki,1Ki,1024", "--specweb-dirs", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "sizes: 3 files, 3073 bytes (3.0 KiB) in {d}/sizes (3 written, 0 kept); \
                 serve them with: herd serve --root {d}"
            ),
            format!(
                "specweb: 36 files, 5119484 bytes (4.9 MiB) in {d}/specweb (36 written, 0 kept, \
                 access mix in {d}/specweb/manifest.toml); serve them with: herd serve --root {d}"
            ),
            format!(
                "include: 4 files, 28000 bytes (27.3 KiB) in {d}/include (4 written, 0 kept); \
                 serve them with: herd serve --root {d}"
            ),
        ]
    );
    assert_eq!(fs::metadata(dir.join("sizes/2048.html")).unwrap().len(), 2048);
    assert_eq!(fs::metadata(dir.join("specweb/dir00000/class3_8")).unwrap().len(), 921_600);

    // The same command again keeps every file.
    let again = generate(&["--generate", d, "--sizes", "1,2Ki,1Ki,1024", "--specweb-dirs", "1"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let stdout = text(&again.stdout);
    assert!(stdout.contains("(0 written, 3 kept)"), "{stdout}");
    assert!(stdout.contains("(0 written, 36 kept,"), "{stdout}");
    assert!(stdout.contains("(0 written, 4 kept)"), "{stdout}");
    fs::remove_dir_all(dir.parent().unwrap().parent().unwrap()).unwrap();
}

#[test]
fn the_default_is_the_size_sweep() {
    let dir = tempdir("generate-default");
    let out = generate(&["--generate", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("sizes: 11 files, 1398101 bytes (1.3 MiB)"), "{stdout}");
    assert_eq!(stdout.lines().count(), 2, "sizes and include: {stdout}");
    for bytes in [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576] {
        assert!(dir.join(format!("sizes/{bytes}.html")).is_file(), "{bytes}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_size_names_the_token_and_the_syntax() {
    let dir = tempdir("generate-bad-size");
    let out = generate(&["--generate", dir.to_str().unwrap(), "--sizes", "1,2x,3"]);
    let line = usage_error(&out);
    assert!(
        line.starts_with(
            "error: invalid value '1,2x,3' for '--sizes <LIST>': `2x` is not a size: "
        ),
        "{line}"
    );
    assert!(line.contains("Ki (1024)") && line.contains("e.g. 1,4Ki,1Mi"), "{line}");
    let line = usage_error(&generate(&["--generate", dir.to_str().unwrap(), "--sizes", "65Gi"]));
    assert!(line.contains("`65Gi` is more than 64 GiB"), "{line}");
    assert!(!dir.join("sizes").exists(), "nothing is written on bad usage");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn serving_flags_are_refused_with_generate() {
    let dir = tempdir("generate-conflict");
    let d = dir.to_str().unwrap();
    for flag in
        [&["--root", d][..], &["--listen", "127.0.0.1:0"], &["--threads", "2"], &["--access-log"]]
    {
        let mut args = vec!["--generate", d];
        args.extend_from_slice(flag);
        let line = usage_error(&generate(&args));
        assert!(
            line.starts_with("error: the argument '--generate <DIR>' cannot be used with"),
            "{flag:?}: {line}"
        );
    }
    assert!(fs::read_dir(&dir).unwrap().next().is_none(), "nothing is written on bad usage");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn set_flags_need_generate() {
    for args in [&["--sizes", "1"][..], &["--specweb-dirs", "1"]] {
        let line = usage_error(&generate(args));
        assert!(line.contains("required arguments were not provided"), "{args:?}: {line}");
    }
    let dir = tempdir("generate-dirs");
    for n in ["0", "100001", "x"] {
        let line =
            usage_error(&generate(&["--generate", dir.to_str().unwrap(), "--specweb-dirs", n]));
        assert!(
            line.starts_with(&format!("error: invalid value '{n}' for '--specweb-dirs <N>'")),
            "{line}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_target_under_a_regular_file_is_refused() {
    let dir = tempdir("generate-under-file");
    let file = dir.join("plain");
    fs::write(&file, b"not a directory").unwrap();

    let below = file.join("sets");
    let out = generate(&["--generate", below.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let line = one_line_error(&out);
    assert_eq!(
        line,
        format!(
            "herd serve: cannot generate file sets in `{b}`: cannot create `{b}`: part of that \
             path is a file, not a directory: choose another place",
            b = below.display()
        )
    );

    let out = generate(&["--generate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_error(&out);
    assert!(
        line.contains(&format!("`{}` exists and is not a directory", file.display())),
        "{line}"
    );
    assert_eq!(fs::read(&file).unwrap(), b"not a directory");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn something_in_the_way_is_left_alone() {
    let dir = tempdir("generate-in-the-way");
    fs::create_dir_all(dir.join("sizes/4.html")).unwrap();
    let out = generate(&["--generate", dir.to_str().unwrap(), "--sizes", "1,4"]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_error(&out);
    assert!(line.contains("sizes/4.html` is in the way"), "{line}");
    assert!(line.contains("move it away and run again"), "{line}");
    assert!(Path::new(&dir.join("sizes/4.html")).is_dir());
    fs::remove_dir_all(&dir).unwrap();
}
