//! [`Store`], an open results store, and the ways to open one. Writing is in `write.rs`,
//! reading in `read.rs`; both are `impl Store` blocks on the connection kept here.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::error::StoreError;
use crate::migrate;
use crate::open::{self, IfMissing, Migration};

/// An open results store: one SQLite connection, the schema at [`crate::SCHEMA_VERSION`].
///
/// A `Store` is one connection and is not shared between threads; a reader in another
/// thread or process opens its own, and in WAL mode reads while the lab writes.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    /// The file, or `:memory:`; errors name it.
    pub(crate) path: PathBuf,
}

impl Store {
    /// Opens the store at `path`, creating it if nothing is there and migrating a store
    /// written by an older herd. A file that is not a herd store is refused and not touched.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = open::open_file(path, IfMissing::Create)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// Opens a store that must exist already, as a report does; otherwise like
    /// [`Store::open`] (an older store is migrated).
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        let conn = open::open_file(path, IfMissing::Fail)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// Opens a store that must exist already for reading only, as a report does: nothing
    /// is written, so it works while the lab writes the store, and on a read-only file or
    /// directory. A store of an older schema is refused ([`StoreError::Outdated`]), not
    /// migrated: [`Store::migrate_file`] does that. Writing through it fails.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let conn = open::open_read_only(path)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// Migrates the store at `path` to [`crate::SCHEMA_VERSION`], first keeping a copy of it
    /// as it was beside it (named in the result). A store at that version already is not
    /// written to.
    pub fn migrate_file(path: &Path) -> Result<Migration, StoreError> {
        open::migrate_file(path)
    }

    /// A new, empty store in memory, gone when dropped.
    pub fn in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let mut conn =
            Connection::open_in_memory().map_err(|e| StoreError::from_sqlite(&path, "open", e))?;
        open::configure(&conn, &path)?;
        migrate::migrate(&mut conn, &path)?;
        Ok(Store { conn, path })
    }

    /// The store's file (`:memory:` for [`Store::in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }
}
