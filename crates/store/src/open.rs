//! Opening a store file: deciding what a file is before anything writes to it, and
//! creating a new store so that a half-made one never sits at the user's path.
//!
//! An existing file is judged in two steps, none of which can change it: its first bytes
//! (empty? SQLite at all?), then a read-only SQLite connection (whose file is it, which
//! schema version, is it intact). Only a herd store, or a blank SQLite database, is then
//! opened for writing and migrated. A reader ([`open_read_only`]) stops after those steps
//! and keeps the read-only connection: it never writes, and refuses an older store, which
//! only [`migrate_file`] changes, after keeping a copy of it.
//!
//! A new store is built beside the target under a temporary name, closed (which folds the
//! WAL back into the file), and then hard-linked into place, which fails rather than
//! replace a file that appeared meanwhile.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::error::StoreError;
use crate::migrate::{self, SCHEMA_VERSION};

/// `PRAGMA application_id` of herd's stores: "herd" in ASCII.
pub const APPLICATION_ID: u32 = 0x6865_7264;

/// How long a connection waits for another one's lock before giving up.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Every SQLite database starts with these 16 bytes.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// An SQLite header is 100 bytes; a shorter file is not a database.
const HEADER_LEN: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IfMissing {
    Create,
    Fail,
}

/// Opens the store at `path` for reading and writing, migrated to [`SCHEMA_VERSION`].
pub(crate) fn open_file(path: &Path, if_missing: IfMissing) -> Result<Connection, StoreError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(StoreError::NotAFile { path: path.to_path_buf() }),
        Ok(_) => open_present(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match if_missing {
            IfMissing::Fail => Err(StoreError::NotFound { path: path.to_path_buf() }),
            IfMissing::Create => {
                create(path)?;
                open_present(path)
            }
        },
        Err(source) => Err(StoreError::Io { path: path.to_path_buf(), action: "read", source }),
    }
}

/// Sets what every connection of the store needs: wait for locks, WAL (readers never wait
/// for the writer), NORMAL sync (durable at each checkpoint; a crash loses at most the last
/// transactions, never consistency), and foreign keys.
pub(crate) fn configure(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let sqlite = |context: &'static str| move |e| StoreError::from_sqlite(path, context, e);
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite("set the busy timeout"))?;
    // In memory the journal stays "memory"; on a read-only file an existing mode stays.
    let _mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(sqlite("switch to WAL mode"))?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(sqlite("set synchronous"))?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(sqlite("enable foreign keys"))?;
    Ok(())
}

/// What a present file turned out to be.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// A herd store at this schema version (possibly older than ours).
    Herd,
    /// An SQLite database with no tables and no application id: nothing to lose.
    Blank,
}

/// Opens the herd store at `path` for reading only. Nothing is created, written or migrated,
/// so a report reads a store the lab is writing (WAL: readers never wait for the writer), a
/// store in a read-only directory or file, and refuses an older store instead of changing it.
///
/// Without a `-wal` file the store is read as immutable (see [`inspect`]): a writer that
/// starts while a report reads is not seen, which a report taken a moment earlier would not
/// have seen either.
pub(crate) fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    present(path)?;
    check_header(path)?;
    let (kind, conn) = inspect(path)?;
    let found = migrate::user_version(&conn, path)?;
    match kind {
        Kind::Blank => Err(blank(path)),
        Kind::Herd if found < i64::from(SCHEMA_VERSION) => {
            Err(StoreError::Outdated { path: path.to_path_buf(), found })
        }
        Kind::Herd => Ok(conn),
    }
}

/// What [`migrate_file`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Migration {
    /// The store was at [`SCHEMA_VERSION`] already: nothing was written.
    Current,
    /// The store was migrated from schema version `from`; a copy of it as it was is `kept`.
    Migrated { from: i64, kept: PathBuf },
}

/// Migrates the herd store at `path` to [`SCHEMA_VERSION`], after keeping a copy of it as it
/// was beside it (`<path>.schema-<version>.bak`, a consistent snapshot even while another
/// process has it open). Anything but a herd store is refused untouched, as by
/// [`open_file`]; so is a store whose copy cannot be made.
pub(crate) fn migrate_file(path: &Path) -> Result<Migration, StoreError> {
    present(path)?;
    check_header(path)?;
    let (kind, conn) = inspect(path)?;
    if kind == Kind::Blank {
        return Err(blank(path));
    }
    let from = migrate::user_version(&conn, path)?;
    if from >= i64::from(SCHEMA_VERSION) {
        return Ok(Migration::Current);
    }
    let kept = sidecar(path, &format!(".schema-{from}.bak"));
    if fs::symlink_metadata(&kept).is_ok() {
        return Err(StoreError::CopyExists { path: path.to_path_buf(), copy: kept });
    }
    // VACUUM INTO writes a snapshot through SQLite, WAL included, and refuses to overwrite.
    conn.execute("VACUUM INTO ?1", [kept.to_string_lossy()]).map_err(|e| {
        StoreError::from_sqlite(path, format!("keep a copy as {}", kept.display()), e)
    })?;
    drop(conn);
    open_present(path)?;
    Ok(Migration::Migrated { from, kept })
}

/// Refuses a directory or a missing path before anything looks at the file.
fn present(path: &Path) -> Result<(), StoreError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(StoreError::NotAFile { path: path.to_path_buf() }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(StoreError::NotFound { path: path.to_path_buf() })
        }
        Err(source) => Err(StoreError::Io { path: path.to_path_buf(), action: "read", source }),
    }
}

/// An SQLite database with no tables yet: not a store to read or migrate (a lab run makes it
/// one).
fn blank(path: &Path) -> StoreError {
    StoreError::Foreign { path: path.to_path_buf(), application_id: 0, tables: Vec::new() }
}

fn open_present(path: &Path) -> Result<Connection, StoreError> {
    check_header(path)?;
    let (kind, _) = inspect(path)?;
    let mut conn = Connection::open_with_flags(path, read_write_flags())
        .map_err(|e| StoreError::from_sqlite(path, "open", e))?;
    configure(&conn, path)?;
    if kind == Kind::Blank || migrate::user_version(&conn, path)? < i64::from(SCHEMA_VERSION) {
        migrate::migrate(&mut conn, path)?;
    }
    Ok(conn)
}

/// Looks at the first bytes without SQLite: an empty file or one that is not SQLite at all
/// gets its own message rather than SQLite's "file is not a database".
fn check_header(path: &Path) -> Result<(), StoreError> {
    let io_err = |source| StoreError::Io { path: path.to_path_buf(), action: "read", source };
    let mut header = Vec::with_capacity(HEADER_LEN);
    fs::File::open(path)
        .map_err(io_err)?
        .take(HEADER_LEN as u64)
        .read_to_end(&mut header)
        .map_err(io_err)?;
    if header.is_empty() {
        return Err(StoreError::EmptyFile { path: path.to_path_buf() });
    }
    if header.len() < HEADER_LEN || !header.starts_with(SQLITE_MAGIC) {
        return Err(StoreError::NotSqlite { path: path.to_path_buf() });
    }
    Ok(())
}

/// Reads the application id, schema version and table names through a read-only
/// connection, and checks a herd store's integrity; returns what the file is, and the
/// connection.
fn inspect(path: &Path) -> Result<(Kind, Connection), StoreError> {
    let sqlite = |context: &'static str| move |e| StoreError::from_sqlite(path, context, e);
    let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // Even a read-only connection to a WAL database creates `-wal` and `-shm` files and
    // leaves them behind. Without a `-wal` file the main file holds everything, so it can
    // be read as immutable, which creates nothing; with one (a store in use, or left by a
    // crash), the WAL has to be read and its files exist already.
    let conn = if sidecar(path, "-wal").exists() {
        Connection::open_with_flags(path, read_only)
    } else {
        Connection::open_with_flags(immutable_uri(path), read_only | OpenFlags::SQLITE_OPEN_URI)
    }
    .map_err(sqlite("open"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite("set the busy timeout"))?;
    let application_id: i32 = conn
        .pragma_query_value(None, "application_id", |row| row.get(0))
        .map_err(sqlite("read the application id"))?;
    // The id is 32 bits in the header; SQLite shows it signed.
    let application_id = application_id as u32;
    let version = migrate::user_version(&conn, path)?;
    let tables = table_names(&conn).map_err(sqlite("list the tables"))?;

    if application_id != APPLICATION_ID {
        if application_id == 0 && tables.is_empty() && version == 0 {
            return Ok((Kind::Blank, conn));
        }
        return Err(StoreError::Foreign { path: path.to_path_buf(), application_id, tables });
    }
    if version > i64::from(SCHEMA_VERSION) {
        // A newer herd says which version wrote it; if that cannot be read, say less.
        let written_by = conn
            .query_row("SELECT value FROM store_meta WHERE key = 'herd_version'", [], |row| {
                row.get::<_, String>(0)
            })
            .optional()
            .ok()
            .flatten();
        return Err(StoreError::TooNew { path: path.to_path_buf(), found: version, written_by });
    }
    let check: String = conn
        .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
        .map_err(sqlite("check the store's integrity"))?;
    if check != "ok" {
        return Err(StoreError::Corrupt { path: path.to_path_buf(), detail: check });
    }
    Ok((Kind::Herd, conn))
}

fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_schema
         WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
         ORDER BY name",
    )?;
    let names = stmt.query_map([], |row| row.get(0))?.collect();
    names
}

/// Builds a new store at a temporary name beside `path`, then links it into place.
fn create(path: &Path) -> Result<(), StoreError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(StoreError::DirectoryMissing { path: path.to_path_buf(), dir }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(StoreError::DirectoryMissing { path: path.to_path_buf(), dir });
        }
        Err(source) => {
            return Err(StoreError::DirectoryNotWritable { path: path.to_path_buf(), dir, source })
        }
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.herd-new-{}", std::process::id()));
    remove_with_sidecars(&tmp);
    fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(
        |source| match source.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                StoreError::DirectoryNotWritable {
                    path: path.to_path_buf(),
                    dir: dir.clone(),
                    source,
                }
            }
            _ => StoreError::Io { path: path.to_path_buf(), action: "create", source },
        },
    )?;

    let built = build(&tmp, path).and_then(|()| link_into_place(&tmp, path));
    remove_with_sidecars(&tmp);
    built
}

/// Makes a fresh store at `tmp`; errors name the final `path`, which is what the user gave.
fn build(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    let mut conn = Connection::open_with_flags(tmp, read_write_flags())
        .map_err(|e| StoreError::from_sqlite(path, "create", e))?;
    configure(&conn, path)?;
    migrate::migrate(&mut conn, path)?;
    conn.close().map_err(|(_, e)| StoreError::from_sqlite(path, "close the new store", e))
}

/// Puts the finished store at `path` unless something is there by now, in which case that
/// file is left alone and judged like any other.
fn link_into_place(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    match fs::hard_link(tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        // Some file systems have no hard links; a rename is the next best thing.
        Err(_) if !path.exists() => fs::rename(tmp, path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            action: "create",
            source,
        }),
        Err(_) => Ok(()),
    }
}

fn remove_with_sidecars(file: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        // Nothing to remove is the usual case; anything else only leaves a stray file.
        let _ = fs::remove_file(sidecar(file, suffix));
    }
}

/// The file SQLite keeps beside `file` under that suffix (`-wal`, `-shm`, `-journal`).
fn sidecar(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `file:` URI for `path` opened as immutable: every byte outside the unreserved set is
/// percent-encoded, so `?`, `#` and `%` in a file name stay part of the name.
fn immutable_uri(path: &Path) -> String {
    use std::fmt::Write as _;
    use std::os::unix::ffi::OsStrExt as _;

    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            let _ = write!(uri, "%{b:02X}");
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Read-write, never create (a missing file is decided above), no URI parsing of the path.
fn read_write_flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_uri_escapes_what_a_uri_would_read() {
        assert_eq!(
            immutable_uri(Path::new("/tmp/a b/r?#%.db")),
            "file:/tmp/a%20b/r%3F%23%25.db?immutable=1"
        );
        assert_eq!(
            immutable_uri(Path::new("/x/résultats.db")),
            "file:/x/r%C3%A9sultats.db?immutable=1"
        );
    }

    #[test]
    fn application_id_spells_herd() {
        assert_eq!(&APPLICATION_ID.to_be_bytes(), b"herd");
    }
}
