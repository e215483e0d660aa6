//! `herd report` reads a results store without writing it: a store of an older schema is
//! refused with how to migrate it and left byte for byte as it was, `herd lab migrate`
//! migrates it after keeping a copy, and a store this user cannot write (a read-only file
//! in a read-only directory) or one another process is writing is reported all the same.
//! Before, `herd report` opened the store read-write and migrated it.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use herd_store::SCHEMA_VERSION;
use util::{herd, run, tempdir, text};

const MIGRATION_0001: &str = include_str!("../../../store/migrations/0001_init.sql");
const V1_DATA: &str = include_str!("../../../store/tests/data/store_v1.sql");

/// A store as herd 0.1.0 left it: schema version 1, one experiment (`lighttpd-2009`).
fn build_v1(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch(&format!("BEGIN; {MIGRATION_0001} {V1_DATA} COMMIT;")).unwrap();
}

/// A current store holding the version-1 experiment, in a directory of its own.
fn current_store(tag: &str) -> (PathBuf, PathBuf) {
    let dir = tempdir(tag);
    let path = dir.join("results.db");
    build_v1(&path);
    herd_store::Store::migrate_file(&path).unwrap();
    std::fs::remove_file(dir.join("results.db.schema-1.bak")).unwrap();
    (dir, path)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `herd report STORE`: exit status, stdout, stderr.
fn report(cmd: &mut Command, store: &Path) -> (Option<i32>, String, String) {
    let out = run(cmd.arg("report").arg(store));
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn an_older_store_is_refused_untouched_until_herd_lab_migrate_migrates_it() {
    let dir = tempdir("report-v1");
    let path = dir.join("results.db");
    build_v1(&path);
    let before = std::fs::read(&path).unwrap();
    let files = listing(&dir);

    let (code, _, stderr) = report(&mut herd(), &path);
    assert_eq!(code, Some(1), "{stderr}");
    let want = format!(
        "{} is a results store of an older herd (schema version 1; this herd reads version \
         {SCHEMA_VERSION}); it was not touched: migrate it with `herd lab migrate {}`",
        path.display(),
        path.display()
    );
    assert!(stderr.contains(&want), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "herd report changed the store");
    assert_eq!(listing(&dir), files, "herd report created files beside the store");

    let out = run(herd().args(["lab", "migrate"]).arg(&path));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kept = dir.join("results.db.schema-1.bak");
    assert_eq!(
        stdout,
        format!(
            "herd lab migrate: migrated {} from schema version 1 to {SCHEMA_VERSION}; the store \
             as it was is kept as {}\n",
            path.display(),
            kept.display()
        )
    );
    let (code, stdout, stderr) = report(&mut herd(), &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("lighttpd-2009"), "{stdout}");

    let out = run(herd().args(["lab", "migrate"]).arg(&path));
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("already: nothing to do"), "{}", text(&out.stdout));
    let _ = std::fs::remove_dir_all(dir);
}

/// A read-only file in a read-only directory: no `-wal` or `-shm` can be made beside it.
/// Run as `nobody` when the tests run as root (root may write anything).
#[test]
fn a_store_this_user_cannot_write_is_reported() {
    let (dir, path) = current_store("report-ro");
    let before = std::fs::read(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_herd")]);
        c
    } else {
        herd()
    };
    let (code, stdout, stderr) = report(&mut cmd, &path);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, Some(0), "setpriv (util-linux) or herd report failed: {stderr}");
    assert!(stdout.contains("lighttpd-2009"), "{stdout}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let _ = std::fs::remove_dir_all(dir);
}

/// Another process (this test) holds the write lock with a transaction open: the report
/// reads the last committed state (WAL: a reader does not wait for the writer; one that
/// waited would give up after the store's busy timeout and fail).
#[test]
fn a_store_another_process_is_writing_is_reported() {
    let (dir, path) = current_store("report-busy");
    let mut writer = rusqlite::Connection::open(&path).unwrap();
    let tx = writer.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).unwrap();
    tx.execute("UPDATE experiment SET title = 'not committed' WHERE id = 7", []).unwrap();
    let (code, stdout, stderr) = report(&mut herd(), &path);
    tx.rollback().unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("lighttpd against nginx, as in 2009"), "{stdout}");
    let _ = std::fs::remove_dir_all(dir);
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
