//! A store in a file: created where asked (and nowhere else), closed and reopened,
//! reopened after a simulated crash, and the errors for paths that cannot hold a store.

use std::fs;
use std::path::Path;

use herd_store::{ExperimentStatus, Store, StoreError, APPLICATION_ID, SCHEMA_VERSION};

use crate::util::*;

#[test]
fn a_store_survives_close_and_reopen() {
    let dir = TempDir::new("reopen");
    let path = dir.join("results.db");
    let (id, records) = {
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.path(), path);
        let id = store.begin_experiment(&new_experiment("reopen")).unwrap();
        let records = [repetition("nginx", "c100", 0), failed_repetition("nginx", "c100", 1)];
        for r in &records {
            store.record_repetition(id, r).unwrap();
        }
        store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:30:00Z", None).unwrap();
        (id, records)
    };
    // Closing the last connection folds the WAL back into the file.
    assert_eq!(dir.listing(), ["results.db"]);

    let store = Store::open_existing(&path).unwrap();
    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.status, ExperimentStatus::Done);
    let back: Vec<_> = got.cells[0].repetitions.iter().map(|r| r.record.clone()).collect();
    assert_eq!(back, records);
    drop(store);

    // And `open` on an existing store appends to it.
    let mut store = Store::open(&path).unwrap();
    let second = store.begin_experiment(&new_experiment("second")).unwrap();
    assert_eq!(store.latest_experiment().unwrap(), Some(second));
    assert_eq!(store.experiments().unwrap().len(), 2);
}

#[test]
fn a_new_store_is_marked_as_herds() {
    let dir = TempDir::new("marked");
    let path = dir.join("results.db");
    drop(Store::open(&path).unwrap());
    let bytes = fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"SQLite format 3\0"));
    // The header's application id (offset 68) and user version (offset 60), big-endian.
    assert_eq!(&bytes[68..72], b"herd");
    assert_eq!(u32::from_be_bytes(bytes[60..64].try_into().unwrap()), SCHEMA_VERSION);
    assert_eq!(u32::from_be_bytes(bytes[68..72].try_into().unwrap()), APPLICATION_ID);
    // WAL mode is recorded in the header (read and write versions 2).
    assert_eq!((bytes[18], bytes[19]), (2, 2));
    assert_eq!(dir.listing(), ["results.db"], "no temporary file is left behind");
}

#[test]
fn a_relative_path_works() {
    let dir = TempDir::new("relative");
    let cwd = std::env::current_dir().unwrap();
    // Tests run in threads of one process: change nothing global, build a relative path.
    let relative = pathdiff(dir.path(), &cwd).join("results.db");
    drop(Store::open(&relative).unwrap());
    assert_eq!(dir.listing(), ["results.db"]);
}

/// `to` as a path relative to `from`, through `..` components.
fn pathdiff(to: &Path, from: &Path) -> std::path::PathBuf {
    let mut up = std::path::PathBuf::new();
    for _ in from.components().skip(1) {
        up.push("..");
    }
    up.join(to.strip_prefix("/").unwrap())
}

#[test]
fn a_store_reopened_after_a_crash_keeps_every_committed_repetition() {
    let dir = TempDir::new("crash");
    let path = dir.join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.begin_experiment(&new_experiment("crash")).unwrap();
    let records = [repetition("nginx", "c1", 0), repetition("nginx", "c1", 1)];
    for r in &records {
        store.record_repetition(id, r).unwrap();
    }
    // The process "dies" now: the connection is never closed, the WAL never folded back.
    // What a crash leaves on disk is the file and its WAL as they are at this moment.
    let crashed = TempDir::new("crash-copy");
    for name in ["results.db", "results.db-wal"] {
        fs::copy(dir.join(name), crashed.join(name)).unwrap();
    }
    std::mem::forget(store);

    let store = Store::open_existing(&crashed.join("results.db")).unwrap();
    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.status, ExperimentStatus::Running, "it never finished");
    let back: Vec<_> = got.cells[0].repetitions.iter().map(|r| r.record.clone()).collect();
    assert_eq!(back, records);
}

#[test]
fn open_existing_on_a_missing_path_says_so() {
    let dir = TempDir::new("missing");
    let path = dir.join("results.db");
    let err = Store::open_existing(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "no results store at {p} (check the path; a lab run creates one: `herd lab run --store {p} EXPERIMENT`)",
            p = path.display()
        )
    );
    assert!(dir.listing().is_empty(), "nothing was created");
}

#[test]
fn a_missing_directory_is_named() {
    let dir = TempDir::new("nodir");
    let path = dir.join("not/there/results.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::DirectoryMissing { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot create results store {}: directory {} does not exist (create it first, or choose another path)",
            path.display(),
            dir.join("not/there").display()
        )
    );
}

#[test]
fn an_unwritable_directory_is_named() {
    // sysfs refuses new files even to root, so this holds whoever runs the tests.
    let path = Path::new("/sys/herd-results.db");
    let err = Store::open(path).unwrap_err();
    assert!(matches!(err, StoreError::DirectoryNotWritable { .. }), "{err:?}");
    let msg = err.to_string();
    assert_eq!(
        msg,
        "cannot create results store /sys/herd-results.db: cannot write in directory /sys \
         (choose a writable directory)"
    );
    // The OS error follows, once, as the cause.
    let cause = std::error::Error::source(&err).unwrap().to_string();
    herd_testutil::causes::assert_cause_once(&err, &cause);
}

#[test]
fn a_directory_is_not_a_store() {
    let dir = TempDir::new("isdir");
    let err = Store::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::NotAFile { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a directory, not a herd results store; give a file path (--store FILE)",
            dir.path().display()
        )
    );
}
