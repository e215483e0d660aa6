//! Content-Type from a file name's extension: a small fixed table of the types a benchmark site
//! serves, matched case-insensitively. Does not sniff contents or read a mime.types file;
//! anything unknown is `application/octet-stream`, as nginx's `default_type` is.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub(crate) const OCTET_STREAM: &[u8] = b"application/octet-stream";

/// Values as nginx's `mime.types` spells them, so that response heads are byte-for-byte
/// comparable in benchmarks (no `charset` parameter).
const TABLE: &[(&str, &str)] = &[
    ("html", "text/html"),
    ("htm", "text/html"),
    ("css", "text/css"),
    ("txt", "text/plain"),
    ("xml", "text/xml"),
    ("csv", "text/csv"),
    ("js", "application/javascript"),
    ("mjs", "application/javascript"),
    ("json", "application/json"),
    ("pdf", "application/pdf"),
    ("wasm", "application/wasm"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("tar", "application/x-tar"),
    ("bin", "application/octet-stream"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("svg", "image/svg+xml"),
    ("ico", "image/x-icon"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("mp4", "video/mp4"),
    ("webm", "video/webm"),
    ("mp3", "audio/mpeg"),
];

/// The Content-Type for a file at `path`.
pub(crate) fn content_type(path: &Path) -> &'static [u8] {
    let Some(ext) = path.extension() else {
        return OCTET_STREAM;
    };
    let ext = ext.as_bytes();
    TABLE
        .iter()
        .find(|(e, _)| e.as_bytes().eq_ignore_ascii_case(ext))
        .map_or(OCTET_STREAM, |(_, t)| t.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, expect: &str) {
        assert_eq!(content_type(Path::new(name)), expect.as_bytes(), "{name}");
    }

    #[test]
    fn known_unknown_and_case() {
        check("index.html", "text/html");
        check("a/b/STYLE.CSS", "text/css");
        check("photo.JpEg", "image/jpeg");
        check("archive.tar.gz", "application/gzip");
        check("README", "application/octet-stream");
        check("x.unknown", "application/octet-stream");
        check(".hidden", "application/octet-stream");
    }
}
