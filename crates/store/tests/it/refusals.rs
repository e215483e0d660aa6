//! Files that are not a store this herd may write: each gives its own error, and none of
//! them is changed by the attempt (compared byte for byte, and no files appear beside it).

use std::fs;
use std::path::Path;

use herd_store::{Store, StoreError};

use crate::util::*;

/// Opens `path` both ways, expecting the same refusal, and checks the directory and the
/// file's bytes are exactly as before. Returns the error's message.
fn check_refused(dir: &TempDir, path: &Path, matches: fn(&StoreError) -> bool) -> String {
    let before = fs::read(path).unwrap();
    let listing = dir.listing();
    let err = Store::open(path).unwrap_err();
    assert!(matches(&err), "{err:?}");
    let err2 = Store::open_existing(path).unwrap_err();
    assert_eq!(err2.to_string(), err.to_string());
    assert!(fs::read(path).unwrap() == before, "{} was modified", path.display());
    assert_eq!(dir.listing(), listing, "nothing appeared beside the file");
    err.to_string()
}

/// A real store with one experiment, closed.
fn real_store(path: &Path) {
    let mut store = Store::open(path).unwrap();
    let id = store.begin_experiment(&new_experiment("real")).unwrap();
    for rep in 0..3 {
        store.record_repetition(id, &repetition("nginx", "c100", rep)).unwrap();
    }
}

#[test]
fn an_empty_file_is_refused() {
    let dir = TempDir::new("empty");
    let path = dir.join("results.db");
    fs::write(&path, b"").unwrap();
    let msg = check_refused(&dir, &path, |e| matches!(e, StoreError::EmptyFile { .. }));
    assert_eq!(
        msg,
        format!(
            "{} is not a herd results store (an empty file); remove it, or choose another path",
            path.display()
        )
    );
}

#[test]
fn garbage_is_not_sqlite() {
    let dir = TempDir::new("garbage");
    let path = dir.join("results.db");
    let garbage: Vec<u8> =
        (0..8192u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    fs::write(&path, &garbage).unwrap();
    let msg = check_refused(&dir, &path, |e| matches!(e, StoreError::NotSqlite { .. }));
    assert_eq!(
        msg,
        format!(
            "{} is not a herd results store (not an SQLite database); it was not touched: choose another path (--store FILE)",
            path.display()
        )
    );

    fs::write(&path, "name,rps\nnginx,1018.85\n").unwrap();
    check_refused(&dir, &path, |e| matches!(e, StoreError::NotSqlite { .. }));
}

#[test]
fn a_store_truncated_inside_its_header_is_not_sqlite() {
    let dir = TempDir::new("trunc-header");
    let path = dir.join("results.db");
    real_store(&path);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..60]).unwrap();
    check_refused(&dir, &path, |e| matches!(e, StoreError::NotSqlite { .. }));
}

#[test]
fn a_truncated_store_is_corrupt() {
    let dir = TempDir::new("trunc");
    let path = dir.join("results.db");
    real_store(&path);
    let bytes = fs::read(&path).unwrap();
    // Keep the first page (header and schema) and lose the rest.
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let msg = check_refused(&dir, &path, |e| matches!(e, StoreError::Corrupt { .. }));
    assert!(
        msg.starts_with(&format!("{} is a corrupted results store (", path.display())),
        "{msg}"
    );
    assert!(
        msg.ends_with(&format!(
            "restore it from a copy, or try to save what is left with `sqlite3 {} .recover`",
            path.display()
        )),
        "{msg}"
    );
}

#[test]
fn a_store_with_damaged_pages_is_corrupt() {
    let dir = TempDir::new("damaged");
    let path = dir.join("results.db");
    real_store(&path);
    let mut bytes = fs::read(&path).unwrap();
    // Overwrite the second page onward with noise, keeping the size.
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0];
    }
    fs::write(&path, &bytes).unwrap();
    check_refused(&dir, &path, |e| matches!(e, StoreError::Corrupt { .. }));
}

#[test]
fn another_programs_database_is_refused() {
    let dir = TempDir::new("foreign");
    let path = dir.join("notes.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO note (text) VALUES ('keep me');")
            .unwrap();
    }
    let msg =
        check_refused(&dir, &path, |e| matches!(e, StoreError::Foreign { application_id: 0, .. }));
    assert_eq!(
        msg,
        format!(
            "{} is not a herd results store: it is another program's SQLite database (application_id 0x00000000, tables: note); it was not touched: choose another path (--store FILE)",
            path.display()
        )
    );
}

#[test]
fn another_programs_marked_database_is_refused_even_without_tables() {
    let dir = TempDir::new("foreign-id");
    let path = dir.join("fossil.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        // Fossil's application id; the database is otherwise empty.
        conn.execute_batch("PRAGMA application_id = 252006673; PRAGMA user_version = 3; VACUUM;")
            .unwrap();
    }
    let msg = check_refused(
        &dir,
        &path,
        |e| matches!(e, StoreError::Foreign { application_id: 0x0f05_5111, tables, .. } if tables.is_empty()),
    );
    assert!(msg.contains("(application_id 0x0f055111, no tables)"), "{msg}");
}

#[test]
fn a_store_from_a_newer_herd_is_refused() {
    let dir = TempDir::new("future");
    let path = dir.join("results.db");
    real_store(&path);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA user_version = 999; UPDATE store_meta SET value = '9.9.0' WHERE key = 'herd_version';")
            .unwrap();
    }
    let msg = check_refused(&dir, &path, |e| matches!(e, StoreError::TooNew { found: 999, .. }));
    assert_eq!(
        msg,
        format!(
            "{} is a results store from a newer herd (schema version 999, written by herd 9.9.0); this is herd {}, which reads schema versions up to {}: use herd 9.9.0 or newer to read it (the file was not touched)",
            path.display(),
            env!("CARGO_PKG_VERSION"),
            herd_store::SCHEMA_VERSION
        )
    );
}

#[test]
fn a_newer_store_that_does_not_say_who_wrote_it_is_refused_too() {
    let dir = TempDir::new("future-anon");
    let path = dir.join("results.db");
    real_store(&path);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA user_version = 999; DROP TABLE store_meta;").unwrap();
    }
    let msg =
        check_refused(&dir, &path, |e| matches!(e, StoreError::TooNew { written_by: None, .. }));
    assert!(msg.contains("(schema version 999); this is herd"), "{msg}");
    assert!(msg.contains("use a newer herd to read it (the file was not touched)"), "{msg}");
}

#[test]
fn a_blank_sqlite_database_becomes_a_store() {
    let dir = TempDir::new("blank");
    let path = dir.join("results.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("VACUUM;").unwrap();
    }
    assert!(fs::read(&path).unwrap().starts_with(b"SQLite format 3\0"));
    let mut store = Store::open(&path).unwrap();
    store.begin_experiment(&new_experiment("blank")).unwrap();
}

#[test]
fn a_histogram_that_does_not_decode_is_corruption() {
    let dir = TempDir::new("blob");
    let path = dir.join("results.db");
    real_store(&path);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE histogram SET data = x'00010203' WHERE name = 'connect' AND measurement_id = 1",
            [],
        )
        .unwrap();
    }
    let store = Store::open_existing(&path).unwrap();
    let err = store.load_experiment(herd_store::ExperimentId(1)).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("(experiment 1: histogram \"connect\" of measurement 1 does not decode: "),
        "{err}"
    );
}

#[test]
fn a_value_no_herd_writes_is_corruption() {
    let dir = TempDir::new("negative");
    let path = dir.join("results.db");
    real_store(&path);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE measurement SET completed = -5 WHERE id = 1", []).unwrap();
    }
    let store = Store::open_existing(&path).unwrap();
    let err = store.load_experiment(herd_store::ExperimentId(1)).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
}
