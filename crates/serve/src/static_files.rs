//! Serves a file under the root: `index.html` for directories, validators (Last-Modified, an
//! ETag of mtime and size), conditional requests (If-None-Match, If-Modified-Since → 304), one
//! byte range (→ 206/416, guarded by If-Range), and the body copied or sent with `sendfile`
//! (write_queue.rs decides nothing; [`COPY_BODY_MAX`] does). Does not list directories, redirect
//! `/dir` to `/dir/`, or negotiate encodings. Opening is root.rs's job, safe paths path.rs's.
//!
//! Statuses for files that cannot be served: missing, outside the root (symlinks), not a regular
//! file, a directory without `index.html`, or a file named with a trailing slash → 404; not
//! readable → 403; out of descriptors → 503; anything else → 500.

use std::fs::{File, Metadata};
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use crate::date::{format_http_date, parse_http_date};
use crate::mime;
use crate::path::SafePath;
use crate::range::{self, RangeSpec};
use crate::request::{Method, RequestHead};
use crate::response::{Reply, Responder, Status};
use crate::root::{OpenError, Root};
use crate::write_queue::{Body, COPY_BODY_MAX};

/// Answers a GET or HEAD for `path` under `root`.
pub(crate) fn serve(
    root: &Root,
    path: &SafePath,
    req: &RequestHead<'_>,
    r: &mut Responder<'_>,
) -> Reply {
    let (file, meta, type_from) = match open(root, path) {
        Ok(found) => found,
        Err(status) => return r.error(status, &[]),
    };
    let size = meta.len();
    let mtime = u64::try_from(meta.mtime()).unwrap_or(0);
    let v =
        Validators { etag: Etag::new(mtime, size), last_modified: format_http_date(mtime), mtime };

    if not_modified(req, &v) {
        let mut head = r.head(Status::NotModified);
        head.header("Last-Modified", &v.last_modified).header("ETag", v.etag.as_bytes());
        head.finish();
        return Reply { status: Status::NotModified, body_bytes: 0 };
    }

    // RFC 9110 §14.2: Range is ignored for methods other than GET (HEAD included).
    let range = match req.range {
        Some(header) if req.method == Method::Get && if_range_holds(req.if_range, &v) => {
            range::resolve(header, size)
        }
        _ => RangeSpec::Whole,
    };
    let found = Found { file, size, content_type: mime::content_type(&type_from), v };
    match range {
        RangeSpec::Whole => send(r, found, Status::Ok, 0, size),
        RangeSpec::Part { first, last } => {
            send(r, found, Status::PartialContent, first, last - first + 1)
        }
        RangeSpec::Unsatisfiable => {
            let content_range = format!("bytes */{size}");
            r.error(Status::RangeNotSatisfiable, &[("Content-Range", content_range.as_bytes())])
        }
    }
}

/// A file found and about to be sent.
struct Found {
    file: File,
    size: u64,
    content_type: &'static [u8],
    v: Validators,
}

/// A file's validators.
struct Validators {
    etag: Etag,
    last_modified: [u8; 29],
    mtime: u64,
}

/// `"<mtime hex>-<size hex>"`, nginx's format: changes whenever a file is replaced or edited
/// (unless within the same second and at the same size, a limit nginx shares).
struct Etag {
    bytes: [u8; 40],
    len: usize,
}

impl Etag {
    fn new(mtime: u64, size: u64) -> Etag {
        let mut bytes = [0u8; 40];
        let mut cursor = &mut bytes[..];
        // 2 quotes + 16 + 1 + 16 hex digits = 35 bytes: always fits.
        let _ = write!(cursor, "\"{mtime:x}-{size:x}\"");
        let len = 40 - cursor.len();
        Etag { bytes, len }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Opens the file for `path`: the file itself, or a directory's `index.html`. Returns the file,
/// its metadata and the path whose extension gives the Content-Type.
fn open(root: &Root, path: &SafePath) -> Result<(File, Metadata, PathBuf), Status> {
    let file = root.open_file(path.rel()).map_err(status_for)?;
    let meta = file.metadata().map_err(|_| Status::InternalServerError)?;
    if meta.is_file() {
        if path.trailing_slash() {
            return Err(Status::NotFound);
        }
        return Ok((file, meta, path.rel().to_owned()));
    }
    if !meta.is_dir() {
        return Err(Status::NotFound);
    }
    let index = path.rel().join("index.html");
    let file = root.open_file(&index).map_err(status_for)?;
    let meta = file.metadata().map_err(|_| Status::InternalServerError)?;
    if !meta.is_file() {
        return Err(Status::NotFound);
    }
    Ok((file, meta, index))
}

fn status_for(e: OpenError) -> Status {
    match e {
        OpenError::NotFound | OpenError::Outside => Status::NotFound,
        OpenError::Denied => Status::Forbidden,
        OpenError::Exhausted => Status::ServiceUnavailable,
        OpenError::Other => Status::InternalServerError,
    }
}

/// RFC 9110 §13.2.2: If-None-Match decides when present; otherwise If-Modified-Since.
fn not_modified(req: &RequestHead<'_>, v: &Validators) -> bool {
    if let Some(list) = req.if_none_match {
        return etag_list_matches(list, v.etag.as_bytes());
    }
    match req.if_modified_since.and_then(parse_http_date) {
        Some(since) => v.mtime <= since,
        None => false,
    }
}

/// Weak comparison against a list like `"a", W/"b"` or `*`.
fn etag_list_matches(list: &[u8], etag: &[u8]) -> bool {
    list.split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .any(|tag| tag == b"*" || tag.strip_prefix(b"W/").unwrap_or(tag) == etag)
}

/// If-Range: the range applies only if the validator still matches, strongly for an ETag and
/// exactly for a date. Absent, it holds.
fn if_range_holds(if_range: Option<&[u8]>, v: &Validators) -> bool {
    match if_range {
        None => true,
        Some(value) if value.starts_with(b"\"") => value == v.etag.as_bytes(),
        // A weak ETag never matches for ranges.
        Some(value) if value.starts_with(b"W/") => false,
        Some(value) => parse_http_date(value) == Some(v.mtime),
    }
}

/// Sends `len` bytes of the file from `offset` with `status`.
fn send(r: &mut Responder<'_>, found: Found, status: Status, offset: u64, len: u64) -> Reply {
    let Found { file, size, content_type, v } = found;
    let mark = r.wq.mark();
    let mut head = r.head(status);
    head.header("Content-Type", content_type)
        .header_u64("Content-Length", len)
        .header("Last-Modified", &v.last_modified)
        .header("ETag", v.etag.as_bytes())
        .header("Accept-Ranges", b"bytes");
    if status == Status::PartialContent {
        let last = offset + len - 1;
        head.header_fmt("Content-Range", format_args!("bytes {offset}-{last}/{size}"));
    }
    head.finish();
    if r.head_only || len == 0 {
        return Reply { status, body_bytes: 0 };
    }
    if len <= COPY_BODY_MAX {
        // len <= 16 KiB fits in usize.
        if r.wq.append_file(&file, offset, len as usize).is_err() {
            // The file shrank or failed since fstat: take the head back and say so.
            r.wq.truncate(mark);
            return r.error(Status::InternalServerError, &[]);
        }
    } else {
        r.wq.set_body(Body::File { file, offset, remaining: len });
    }
    Reply { status, body_bytes: len }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn validators() -> Validators {
        Validators {
            etag: Etag::new(0x5f3c1a2b, 0x18f9),
            last_modified: format_http_date(0x5f3c1a2b),
            mtime: 0x5f3c1a2b,
        }
    }

    #[test]
    fn etag_format() {
        assert_eq!(validators().etag.as_bytes(), b"\"5f3c1a2b-18f9\"");
        assert_eq!(Etag::new(u64::MAX, u64::MAX).as_bytes().len(), 35);
    }

    #[test]
    fn etag_lists() {
        let tag = b"\"5f3c1a2b-18f9\"";
        assert!(etag_list_matches(b"\"5f3c1a2b-18f9\"", tag));
        assert!(etag_list_matches(b"W/\"5f3c1a2b-18f9\"", tag));
        assert!(etag_list_matches(b"\"x\", \"5f3c1a2b-18f9\"", tag));
        assert!(etag_list_matches(b"*", tag));
        assert!(!etag_list_matches(b"\"x\"", tag));
        assert!(!etag_list_matches(b"5f3c1a2b-18f9", tag));
        assert!(!etag_list_matches(b"", tag));
    }

    #[test]
    fn if_range() {
        let v = validators();
        assert!(if_range_holds(None, &v));
        assert!(if_range_holds(Some(b"\"5f3c1a2b-18f9\""), &v));
        assert!(!if_range_holds(Some(b"W/\"5f3c1a2b-18f9\""), &v));
        assert!(!if_range_holds(Some(b"\"other\""), &v));
        assert!(if_range_holds(Some(&v.last_modified), &v));
        assert!(!if_range_holds(Some(b"Thu, 01 Jan 1970 00:00:00 GMT"), &v));
        assert!(!if_range_holds(Some(b"garbage"), &v));
    }

    #[test]
    fn types_come_from_the_served_name() {
        assert_eq!(mime::content_type(Path::new("d/index.html")), b"text/html");
    }
}
