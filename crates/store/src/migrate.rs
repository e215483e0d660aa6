//! The store's schema as numbered SQL migrations, applied in order and tracked by
//! `PRAGMA user_version` (the number of the last one applied).
//!
//! A released migration is never edited: a change to the schema is a new file. Each
//! migration runs in the same write transaction as the `user_version` it sets, so a store
//! is always at exactly one version. Whether a file may be migrated at all (is it herd's, is
//! it older) is decided before, in `open.rs`.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::StoreError;

/// The schema version this herd writes and reads: the number of the last migration.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

struct Migration {
    name: &'static str,
    sql: &'static str,
}

/// Migration `i` (0-based) takes a store from version `i` to `i + 1`.
const MIGRATIONS: &[Migration] = &[
    Migration { name: "0001_init", sql: include_str!("../migrations/0001_init.sql") },
    Migration {
        name: "0002_experiment_note",
        sql: include_str!("../migrations/0002_experiment_note.sql"),
    },
    Migration {
        name: "0003_step_verdict",
        sql: include_str!("../migrations/0003_step_verdict.sql"),
    },
    Migration { name: "0004_path_facts", sql: include_str!("../migrations/0004_path_facts.sql") },
    Migration { name: "0005_published", sql: include_str!("../migrations/0005_published.sql") },
    Migration {
        name: "0006_report_shape",
        sql: include_str!("../migrations/0006_report_shape.sql"),
    },
    Migration {
        name: "0007_failure_kind",
        sql: include_str!("../migrations/0007_failure_kind.sql"),
    },
    Migration { name: "0008_profile", sql: include_str!("../migrations/0008_profile.sql") },
    Migration { name: "0009_control", sql: include_str!("../migrations/0009_control.sql") },
    Migration { name: "0010_client_io", sql: include_str!("../migrations/0010_client_io.sql") },
    Migration {
        name: "0011_client_trace",
        sql: include_str!("../migrations/0011_client_trace.sql"),
    },
];

/// Brings the herd store (or blank SQLite database) behind `conn` to [`SCHEMA_VERSION`].
/// Takes the write lock only when there is something to do, and then looks again, in case
/// another process migrated the store meanwhile.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    if user_version(conn, path)? == i64::from(SCHEMA_VERSION) {
        return Ok(());
    }
    let sqlite = |context: &str| {
        let context = context.to_owned();
        move |e| StoreError::from_sqlite(path, context, e)
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite("begin the migration"))?;
    let found = user_version(&tx, path)?;
    if found > i64::from(SCHEMA_VERSION) {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, written_by: None });
    }
    // `found` is within 0..=SCHEMA_VERSION here, so the cast cannot wrap.
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        tx.execute_batch(m.sql).map_err(sqlite(&format!("apply migration {}", m.name)))?;
        tx.pragma_update(None, "user_version", i as i64 + 1)
            .map_err(sqlite(&format!("set the schema version after {}", m.name)))?;
    }
    tx.execute(
        "INSERT INTO store_meta (key, value) VALUES ('herd_version', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [env!("CARGO_PKG_VERSION")],
    )
    .map_err(sqlite("record the herd version of the schema"))?;
    tx.commit().map_err(sqlite("commit the migration"))
}

pub(crate) fn user_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|e| StoreError::from_sqlite(path, "read the schema version", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_migration_file_is_numbered_in_order() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert!(m.name.starts_with(&format!("{:04}_", i + 1)), "{}", m.name);
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let listed: Vec<String> = MIGRATIONS.iter().map(|m| format!("{}.sql", m.name)).collect();
        assert_eq!(on_disk, listed, "every file in migrations/ is listed in MIGRATIONS");
    }

    #[test]
    fn migrating_twice_changes_nothing() {
        let mut conn = Connection::open_in_memory().unwrap();
        let path = Path::new(":memory:");
        migrate(&mut conn, path).unwrap();
        migrate(&mut conn, path).unwrap();
        assert_eq!(user_version(&conn, path).unwrap(), i64::from(SCHEMA_VERSION));
        let id: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).unwrap();
        assert_eq!(id, i64::from(crate::APPLICATION_ID));
    }
}
