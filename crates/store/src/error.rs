//! Everything that can go wrong with a results store, each case in words a user can act
//! on: which file, what it turned out to be, and what to do next. Foreign and newer files
//! are named as such and promised untouched, because nothing in this crate writes to them.
//!
//! `from_sqlite` sorts SQLite's own error codes into these cases; everything else keeps
//! SQLite's message with the operation that failed.

use std::io;
use std::path::PathBuf;

use rusqlite::ffi::ErrorCode;

use crate::migrate::SCHEMA_VERSION;
use crate::open::BUSY_TIMEOUT;
use crate::record::ExperimentId;

/// This herd's version, for messages about stores from other versions.
const HERD_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// [`crate::Store::open_existing`] on a path with nothing there.
    #[error(
        "no results store at {path} (check the path; a lab run creates one: `herd lab run --store {path} EXPERIMENT`)"
    )]
    NotFound { path: PathBuf },

    #[error(
        "cannot create results store {path}: directory {dir} does not exist (create it first, or choose another path)"
    )]
    DirectoryMissing { path: PathBuf, dir: PathBuf },

    #[error(
        "cannot create results store {path}: cannot write in directory {dir} (choose a writable directory)"
    )]
    DirectoryNotWritable {
        path: PathBuf,
        dir: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("{path} is a directory, not a herd results store; give a file path (--store FILE)")]
    NotAFile { path: PathBuf },

    #[error(
        "{path} is not a herd results store (an empty file); remove it, or choose another path"
    )]
    EmptyFile { path: PathBuf },

    #[error("{path} is not a herd results store (not an SQLite database); it was not touched: choose another path (--store FILE)")]
    NotSqlite { path: PathBuf },

    /// An SQLite database with another program's application id, or with tables and no id.
    #[error(
        "{path} is not a herd results store: it is another program's SQLite database (application_id {application_id:#010x}, {}); it was not touched: choose another path (--store FILE)",
        if .tables.is_empty() { "no tables".to_owned() } else { format!("tables: {}", .tables.join(", ")) }
    )]
    Foreign { path: PathBuf, application_id: u32, tables: Vec<String> },

    /// A herd store whose schema is newer than this herd knows.
    #[error(
        "{path} is a results store from a newer herd (schema version {found}{}); this is herd {HERD_VERSION}, which reads schema versions up to {SCHEMA_VERSION}: use {} to read it (the file was not touched)",
        .written_by.as_ref().map(|v| format!(", written by herd {v}")).unwrap_or_default(),
        .written_by.as_ref().map(|v| format!("herd {v} or newer")).unwrap_or_else(|| "a newer herd".to_owned())
    )]
    TooNew { path: PathBuf, found: i64, written_by: Option<String> },

    /// A herd store of an older schema, met where nothing may write (a report).
    #[error(
        "{path} is a results store of an older herd (schema version {found}; this herd reads \
         version {SCHEMA_VERSION}); it was not touched: migrate it with `herd lab migrate \
         {path}`, which keeps a copy of it as it is, then run this again"
    )]
    Outdated { path: PathBuf, found: i64 },

    /// A migration's copy of the store would replace a file.
    #[error(
        "cannot migrate {path}: {copy} exists already (the copy an earlier migration kept?); \
         move it away and run again ({path} was not touched)"
    )]
    CopyExists { path: PathBuf, copy: PathBuf },

    #[error(
        "{path} is a corrupted results store ({detail}); restore it from a copy, or try to save what is left with `sqlite3 {path} .recover`"
    )]
    Corrupt { path: PathBuf, detail: String },

    #[error(
        "cannot write results store {path}: {detail} (herd needs to write the file, and {path}-wal and {path}-shm beside it)"
    )]
    NotWritable { path: PathBuf, detail: String },

    #[error(
        "results store {path} stayed locked by another process for {} s; try again when it is done",
        BUSY_TIMEOUT.as_secs()
    )]
    Locked { path: PathBuf },

    #[error("no experiment {id} in results store {path}; `herd report {path} --list` shows the ones it holds")]
    UnknownExperiment { path: PathBuf, id: ExperimentId },

    /// [`crate::Store::reopen_experiment`] on an experiment that is `done`.
    #[error(
        "experiment {id} in results store {path} is done: every run it planned is stored, so there is nothing to resume (`herd report {path} --experiment {id}` shows it)"
    )]
    AlreadyDone { path: PathBuf, id: ExperimentId },

    #[error(
        "experiment {experiment}: cell {cell_key:?}: repetition {repetition} is already recorded"
    )]
    DuplicateRepetition { experiment: ExperimentId, cell_key: String, repetition: u32 },

    /// A record the store cannot keep as given: a count above `i64::MAX`, a non-finite
    /// number, axes that do not match the experiment, a step or name given twice.
    #[error("cannot record {what}: {detail}")]
    InvalidRecord { what: String, detail: String },

    #[error("cannot {action} {path}")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: io::Error,
    },

    /// Any other SQLite error, with the operation that failed.
    #[error("results store {path}: {context}")]
    Sqlite {
        path: PathBuf,
        context: String,
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Sorts an SQLite error on the store at `path` during `context` into the cases above.
    pub(crate) fn from_sqlite(
        path: &std::path::Path,
        context: impl Into<String>,
        source: rusqlite::Error,
    ) -> StoreError {
        let path = path.to_path_buf();
        let code = source.sqlite_error_code();
        match code {
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                StoreError::Corrupt { path, detail: source.to_string() }
            }
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                StoreError::Locked { path }
            }
            Some(
                ErrorCode::ReadOnly
                | ErrorCode::CannotOpen
                | ErrorCode::PermissionDenied
                | ErrorCode::DiskFull,
            ) => StoreError::NotWritable { path, detail: source.to_string() },
            _ => StoreError::Sqlite { path, context: context.into(), source },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_testutil::causes::assert_cause_once;

    /// Before: DirectoryNotWritable, Io and Sqlite printed their cause twice (in the message
    /// and as the source).
    #[test]
    fn each_cause_is_printed_once() {
        let os =
            || io::Error::new(io::ErrorKind::PermissionDenied, "Permission denied (os error 13)");
        let cause = os().to_string();
        let path = PathBuf::from("/r/results.db");
        let dir = PathBuf::from("/r");
        for err in [
            StoreError::DirectoryNotWritable { path: path.clone(), dir, source: os() },
            StoreError::Io { path: path.clone(), action: "read", source: os() },
        ] {
            assert_cause_once(&err, &cause);
        }
        let sqlite = rusqlite::Error::InvalidQuery;
        let cause = sqlite.to_string();
        let err = StoreError::from_sqlite(&path, "read the experiments", sqlite);
        let printed = assert_cause_once(&err, &cause);
        assert_eq!(printed, format!("results store /r/results.db: read the experiments: {cause}"));
    }
}
