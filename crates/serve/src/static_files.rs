//! Serves a file under the root: `index.html` for directories asked with their trailing slash
//! (without it, a redirect to it: redirect.rs), validators (Last-Modified, an ETag of mtime and
//! size), conditional requests (preconditions.rs decides: 412, 304, or whether If-Range lets a
//! range apply), one byte range (→ 206/416), and the body copied from memory (files up to
//! [`COPY_BODY_MAX`](crate::write_queue::COPY_BODY_MAX)) or sent with `sendfile`. Files are
//! opened once per worker and kept in its open-file cache (file_cache.rs), which proves on every
//! request that the file is unchanged.
//! Does not list directories or negotiate encodings. Opening is root.rs's job, safe paths
//! path.rs's.
//!
//! Statuses for files that cannot be served: missing, outside the root (symlinks), not a regular
//! file, a directory without `index.html`, or a file named with a trailing slash → 404; not
//! readable → 403; out of descriptors → 503; anything else → 500.

use std::ffi::CString;
use std::fs::{File, Metadata};
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::date::format_http_date;
use crate::file_cache::{Entry, FileCache, FileInfo};
use crate::mime;
use crate::path::{self, SafePath};
use crate::preconditions::{self, Verdict};
use crate::range::{self, RangeSpec};
use crate::redirect;
use crate::request::{Method, RequestHead};
use crate::response::{Reply, Responder, Status};
use crate::root::{OpenError, Root};
use crate::write_queue::Body;

/// Answers a GET or HEAD for the request path `path` (as sent, before decoding; `query` is
/// the target's query) under `root`, through the worker's open-file cache.
pub(crate) fn serve(
    root: &Root,
    cache: &mut FileCache,
    (path, query): (&[u8], &[u8]),
    req: &RequestHead<'_>,
    r: &mut Responder<'_>,
) -> Reply {
    if !cache.validate(root, path) {
        let Ok(safe) = path::sanitize(path) else {
            return r.error(Status::BadRequest, &[]);
        };
        let entry = match open(root, &safe) {
            Ok(Some(entry)) => entry,
            // Not cached: a redirect costs the open of the directory each time, and is rare.
            Ok(None) => return redirect::to_directory(&safe, query, req, r),
            Err(status) => return r.error(status, &[]),
        };
        cache.insert(path, entry);
    }
    match cache.peek(path) {
        Some(entry) => answer(entry, req, r),
        // Just inserted or validated: cannot happen.
        None => r.error(Status::InternalServerError, &[]),
    }
}

/// Answers from a cache entry: 412, 304, 206/416 or 200.
fn answer(entry: &Entry, req: &RequestHead<'_>, r: &mut Responder<'_>) -> Reply {
    let info = &entry.info;
    let range_applies = match preconditions::evaluate(req, info, r.date.secs()) {
        Verdict::Failed => return r.error(Status::PreconditionFailed, &[]),
        Verdict::NotModified => {
            let mut head = r.head(Status::NotModified);
            head.header("Last-Modified", &info.last_modified).header("ETag", info.etag());
            head.finish();
            return Reply { status: Status::NotModified, body_bytes: 0 };
        }
        Verdict::Send { range } => range,
    };

    // RFC 9110 §14.2: Range is ignored for methods other than GET (HEAD included).
    let range = match req.range {
        Some(header) if req.method == Method::Get && range_applies => {
            range::resolve(header, info.size)
        }
        _ => RangeSpec::Whole,
    };
    match range {
        RangeSpec::Whole => send(r, entry, Status::Ok, 0, info.size),
        RangeSpec::Part { first, last } => {
            send(r, entry, Status::PartialContent, first, last - first + 1)
        }
        RangeSpec::Unsatisfiable => {
            let content_range = format!("bytes */{}", info.size);
            r.error(Status::RangeNotSatisfiable, &[("Content-Range", content_range.as_bytes())])
        }
    }
}

/// The header facts of a file: `"<mtime hex>-<size hex>"` as its ETag, nginx's format, which
/// changes whenever a file is replaced or edited (unless within the same second and at the same
/// size, a limit nginx shares).
fn file_info(meta: &Metadata, type_from: &Path) -> FileInfo {
    let size = meta.len();
    let mtime = u64::try_from(meta.mtime()).unwrap_or(0);
    let mut etag = [0u8; 40];
    let mut cursor = &mut etag[..];
    // 2 quotes + 16 + 1 + 16 hex digits = 35 bytes: always fits.
    let _ = write!(cursor, "\"{mtime:x}-{size:x}\"");
    let etag_len = 40 - cursor.len();
    FileInfo {
        size,
        mtime,
        content_type: mime::content_type(type_from),
        etag,
        etag_len,
        last_modified: format_http_date(mtime),
    }
}

/// Opens the file for `path` (the file itself, or a directory's `index.html`) into a cache
/// entry; `None` for a directory asked without its trailing slash, to be redirected.
fn open(root: &Root, path: &SafePath) -> Result<Option<Entry>, Status> {
    let Some((file, meta, opened)) = open_file(root, path)? else {
        return Ok(None);
    };
    let info = file_info(&meta, &opened);
    // Sanitized paths contain no NUL.
    let stat_path = CString::new(stat_path(&opened)).map_err(|_| Status::BadRequest)?;
    let entry = Entry::new(file, &meta, stat_path, info);
    entry.map(Some).map_err(|_| Status::InternalServerError)
}

/// The path `statat` checks: `.` for the root itself.
fn stat_path(opened: &Path) -> Vec<u8> {
    if opened.as_os_str().is_empty() {
        b".".to_vec()
    } else {
        opened.as_os_str().as_bytes().to_vec()
    }
}

/// Opens the file for `path`. Returns the file, its metadata and its path under the root, whose
/// extension also gives the Content-Type; `None` for a directory asked without its slash,
/// which is redirected whether it has an `index.html` or not, as nginx does.
fn open_file(root: &Root, path: &SafePath) -> Result<Option<(File, Metadata, PathBuf)>, Status> {
    let file = root.open_file(path.rel()).map_err(status_for)?;
    let meta = file.metadata().map_err(|_| Status::InternalServerError)?;
    if meta.is_file() {
        if path.trailing_slash() {
            return Err(Status::NotFound);
        }
        return Ok(Some((file, meta, path.rel().to_owned())));
    }
    if !meta.is_dir() {
        return Err(Status::NotFound);
    }
    if !path.trailing_slash() {
        return Ok(None);
    }
    let index = path.rel().join("index.html");
    let file = root.open_file(&index).map_err(status_for)?;
    let meta = file.metadata().map_err(|_| Status::InternalServerError)?;
    if !meta.is_file() {
        return Err(Status::NotFound);
    }
    Ok(Some((file, meta, index)))
}

fn status_for(e: OpenError) -> Status {
    match e {
        OpenError::NotFound | OpenError::Outside => Status::NotFound,
        OpenError::Denied => Status::Forbidden,
        OpenError::Exhausted => Status::ServiceUnavailable,
        OpenError::Other => Status::InternalServerError,
    }
}

/// Sends `len` bytes of the file from `offset` with `status`.
fn send(r: &mut Responder<'_>, entry: &Entry, status: Status, offset: u64, len: u64) -> Reply {
    let info = &entry.info;
    let mut head = r.head(status);
    head.header("Content-Type", info.content_type)
        .header_u64("Content-Length", len)
        .header("Last-Modified", &info.last_modified)
        .header("ETag", info.etag())
        .header("Accept-Ranges", b"bytes");
    if status == Status::PartialContent {
        let last = offset + len - 1;
        head.header_fmt("Content-Range", format_args!("bytes {offset}-{last}/{}", info.size));
    }
    head.finish();
    if r.head_only || len == 0 {
        return Reply { status, body_bytes: 0 };
    }
    match &entry.content {
        // A small file's bytes go behind the head: one send for both.
        Some(content) => {
            // offset + len <= size <= 16 KiB: in bounds and fits in usize.
            let start = offset as usize;
            r.wq.buf_mut().extend_from_slice(&content[start..start + len as usize]);
        }
        None => r.wq.set_body(Body::File { file: entry.file.clone(), offset, remaining: len }),
    }
    Reply { status, body_bytes: len }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn etag_format() {
        let dir = std::env::temp_dir().join(format!("herd-etag-{}", std::process::id()));
        std::fs::write(&dir, b"abc").unwrap();
        let meta = std::fs::metadata(&dir).unwrap();
        let info = file_info(&meta, Path::new("a.txt"));
        let expect = format!("\"{:x}-3\"", meta.mtime());
        assert_eq!(info.etag(), expect.as_bytes());
        assert_eq!(info.content_type, b"text/plain");
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn types_come_from_the_served_name() {
        assert_eq!(mime::content_type(Path::new("d/index.html")), b"text/html");
    }
}
