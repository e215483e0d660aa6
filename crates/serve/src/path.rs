//! Turns the path of a request target into a path relative to the root that cannot climb out of
//! it. The path is split at its `/`s and each segment percent-decoded exactly once, as nginx and
//! Apache do: `/a%2520b.txt` names the file `a%20b.txt`. Refused, before any filesystem access:
//! a path not starting with `/`, `..` segments however written (`..`, `%2e%2e`, `.%2E`), encoded
//! `/` (`%2f`, which would hide a separator inside a segment), `\` raw or encoded, NUL and other
//! control bytes, malformed escapes, and a decoded segment that further decodings would turn
//! into any of those (`%252e%252e` → `%2e%2e` → `..`), so that no layer behind that decodes
//! again can be led out of the root. Empty and `.` segments are dropped, so `//etc` becomes
//! `etc` under the root, never an absolute path.
//!
//! This file does not touch the filesystem. Symlinks are handled where files are opened
//! (root.rs), which refuses any resolution that leaves the root.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A decoded request path, relative to the root, made only of normal segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SafePath {
    rel: PathBuf,
    trailing_slash: bool,
}

/// Why a request path was refused. Each is answered with 400 Bad Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathError {
    /// The path does not start with `/` (`*`, `etc/passwd`, `C:\…`).
    NotAbsolute,
    /// `%` not followed by two hex digits.
    BadEscape,
    /// A `..` segment, written plainly or percent-encoded.
    DotDot,
    /// A decoded segment that decoding again would make `..`, a separator, NUL or a control
    /// byte (`%252e%252e` → `%2e%2e` → `..`). Other escapes left after the one decoding are
    /// part of the name (`%2520` → `%20`).
    DoubleEncoded,
    /// `%2f`: a `/` inside a segment would slip past the segment checks.
    EncodedSlash,
    /// `\`, raw or `%5c`: a separator on Windows, refused so no layer ever treats it as one.
    Backslash,
    /// NUL (`%00`): it truncates paths in C APIs.
    Nul,
    /// Any other byte below 0x20, or 0x7f.
    ControlChar,
}

impl SafePath {
    /// The path relative to the root; empty for `/`.
    pub(crate) fn rel(&self) -> &Path {
        &self.rel
    }

    /// Whether the request path ended with `/` (it names a directory).
    pub(crate) fn trailing_slash(&self) -> bool {
        self.trailing_slash
    }

    /// The decoded segments, in order (none for `/`).
    pub(crate) fn segments(&self) -> impl Iterator<Item = &[u8]> {
        self.rel.iter().map(OsStrExt::as_bytes)
    }
}

/// Decodes and checks `raw`, the path part of a request target (no query string).
pub(crate) fn sanitize(raw: &[u8]) -> Result<SafePath, PathError> {
    let rest = raw.strip_prefix(b"/").ok_or(PathError::NotAbsolute)?;
    let mut rel = PathBuf::new();
    let mut segment = Vec::new();
    for raw_segment in rest.split(|&b| b == b'/') {
        decode_segment(raw_segment, &mut segment)?;
        match segment.as_slice() {
            b"" | b"." => {}
            b".." => return Err(PathError::DotDot),
            seg if decodes_to_danger(seg) => return Err(PathError::DoubleEncoded),
            seg => rel.push(OsStr::from_bytes(seg)),
        }
    }
    Ok(SafePath { rel, trailing_slash: raw.ends_with(b"/") })
}

/// Percent-decodes one segment into `out`, refusing bytes no file name here may contain.
fn decode_segment(raw: &[u8], out: &mut Vec<u8>) -> Result<(), PathError> {
    out.clear();
    let mut i = 0;
    while i < raw.len() {
        let (byte, escaped) = if raw[i] == b'%' {
            let hi = raw.get(i + 1).and_then(|&b| hex(b)).ok_or(PathError::BadEscape)?;
            let lo = raw.get(i + 2).and_then(|&b| hex(b)).ok_or(PathError::BadEscape)?;
            i += 3;
            (hi << 4 | lo, true)
        } else {
            i += 1;
            (raw[i - 1], false)
        };
        match byte {
            b'/' if escaped => return Err(PathError::EncodedSlash),
            b'\\' => return Err(PathError::Backslash),
            0 => return Err(PathError::Nul),
            0x01..=0x1f | 0x7f => return Err(PathError::ControlChar),
            _ => out.push(byte),
        }
    }
    Ok(())
}

/// Whether decoding `seg` again, and again while escapes remain, ever yields `..` or a byte
/// [`decode_segment`] refuses. Each round removes at least one escape, so it ends. Allocates
/// only for a segment still holding an escape after its decoding, which is rare.
fn decodes_to_danger(seg: &[u8]) -> bool {
    if !contains_escape(seg) {
        return false;
    }
    let mut text = seg.to_vec();
    while contains_escape(&text) {
        text = decode_leniently(&text);
        let refused = |&b: &u8| matches!(b, b'/' | b'\\' | 0x00..=0x1f | 0x7f);
        if text == b".." || text.iter().any(refused) {
            return true;
        }
    }
    false
}

/// Decodes every valid escape of `text` and keeps everything else as it is, as a careless
/// second decoder would.
fn decode_leniently(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let escape = text.get(i + 1..i + 3).filter(|_| text[i] == b'%');
        match escape.and_then(|e| Some(hex(e[0])? << 4 | hex(e[1])?)) {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    out
}

fn contains_escape(seg: &[u8]) -> bool {
    seg.windows(3).any(|w| w[0] == b'%' && hex(w[1]).is_some() && hex(w[2]).is_some())
}

fn hex(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: &str, expect: Result<&str, PathError>) {
        let got = sanitize(raw.as_bytes());
        match expect {
            Ok(rel) => assert_eq!(got.map(|p| p.rel).as_deref(), Ok(Path::new(rel)), "{raw}"),
            Err(e) => assert_eq!(got, Err(e), "{raw}"),
        }
    }

    #[test]
    fn plain_paths() {
        check("/", Ok(""));
        check("/index.html", Ok("index.html"));
        check("/a/b/c.txt", Ok("a/b/c.txt"));
        check("/a/./b//c/", Ok("a/b/c"));
        check("/%7euser/x%20y.txt", Ok("~user/x y.txt"));
        check("/caf%C3%A9", Ok("café"));
        check("/...", Ok("..."));
        check("/..a/b..", Ok("..a/b.."));
    }

    #[test]
    fn trailing_slash_is_remembered() {
        assert!(sanitize(b"/dir/").unwrap().trailing_slash());
        assert!(!sanitize(b"/dir").unwrap().trailing_slash());
    }

    #[test]
    fn absolute_looking_paths_stay_under_the_root() {
        check("//etc/passwd", Ok("etc/passwd"));
        check("/./etc/passwd", Ok("etc/passwd"));
    }

    #[test]
    fn dot_dot_in_every_spelling() {
        for raw in [
            "/..",
            "/../etc/passwd",
            "/a/../../etc/passwd",
            "/a/..",
            "/%2e%2e/etc/passwd",
            "/%2E%2E/etc/passwd",
            "/.%2e/etc/passwd",
            "/%2e./etc/passwd",
        ] {
            check(raw, Err(PathError::DotDot));
        }
    }

    #[test]
    fn double_encoding() {
        check("/%252e%252e/etc/passwd", Err(PathError::DoubleEncoded));
        check("/%25%32%65%25%32%65/x", Err(PathError::DoubleEncoded));
        check("/%25252e%25252e/x", Err(PathError::DoubleEncoded));
        check("/a%252fb", Err(PathError::DoubleEncoded));
        check("/a%25255cb", Err(PathError::DoubleEncoded));
        check("/a%2500b", Err(PathError::DoubleEncoded));
        check("/a%250ab", Err(PathError::DoubleEncoded));
        check("/..%252f..", Err(PathError::DoubleEncoded));
        check("/100%25", Ok("100%"));
    }

    #[test]
    fn decoded_exactly_once() {
        // See: issue 31. An escape left after the one decoding is part of the name.
        check("/a%2520b.txt", Ok("a%20b.txt"));
        check("/a%252520b.txt", Ok("a%2520b.txt"));
        check("/%2541/%25%25", Ok("%41/%%"));
        check("/%252e", Ok("%2e"));
        check("/%252e%252e%252e", Ok("%2e%2e%2e"));
        check("/x%252e%252e", Ok("x%2e%2e"));
        let p = sanitize(b"/a%2520b/%7e/c%20d").unwrap();
        let segments: Vec<&[u8]> = p.segments().collect();
        assert_eq!(segments, [&b"a%20b"[..], b"~", b"c d"]);
        assert_eq!(sanitize(b"/").unwrap().segments().count(), 0);
    }

    #[test]
    fn separators_nul_and_controls() {
        check("/..%2fetc/passwd", Err(PathError::EncodedSlash));
        check("/..%2Fetc", Err(PathError::EncodedSlash));
        check("/..\\etc\\passwd", Err(PathError::Backslash));
        check("/..%5cetc", Err(PathError::Backslash));
        check("/index.html%00.txt", Err(PathError::Nul));
        check("/a\0b", Err(PathError::Nul));
        check("/a%0ab", Err(PathError::ControlChar));
        check("/a%7fb", Err(PathError::ControlChar));
    }

    #[test]
    fn not_absolute_and_bad_escapes() {
        check("", Err(PathError::NotAbsolute));
        check("*", Err(PathError::NotAbsolute));
        check("etc/passwd", Err(PathError::NotAbsolute));
        check("C:\\x", Err(PathError::NotAbsolute));
        check("/%", Err(PathError::BadEscape));
        check("/%2", Err(PathError::BadEscape));
        check("/%zz", Err(PathError::BadEscape));
        check("/%%32e", Err(PathError::BadEscape));
    }

    #[test]
    fn never_yields_a_parent_or_root_component() {
        // Every accepted path is made of normal components only, whatever the input.
        let pieces = ["/", "..", ".", "%2e", "%2f", "%5c", "a", "%25", "%00", "\\", "2e"];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let raw = format!("/{a}{b}/{c}");
                    if let Ok(p) = sanitize(raw.as_bytes()) {
                        assert!(
                            p.rel()
                                .components()
                                .all(|c| matches!(c, std::path::Component::Normal(_))),
                            "{raw} → {:?}",
                            p.rel()
                        );
                    }
                }
            }
        }
    }
}
