//! The conditional headers of a GET or HEAD for a file, evaluated against its validators (a
//! strong ETag and Last-Modified) in the order RFC 9110 §13.2.2 gives:
//!
//! 1. If-Match; else 2. If-Unmodified-Since. False → 412 Precondition Failed.
//! 3. If-None-Match; else 4. If-Modified-Since. False → 304 Not Modified.
//! 5. If-Range, which decides whether a Range header applies (else the whole file, 200).
//!
//! So a range request whose validator is stale gets 412, never a 206 that would splice two
//! versions of the file into one download. Only files that exist are asked (§13.2.1: a 404 or
//! a redirect ignores preconditions), and herd serve changes no file, so the rules for
//! state-changing methods do not arise. Dates are read by http_date.rs, in all three forms; a
//! value that is not a date makes its header ignored, as §13.1.3 and §13.1.4 say. Does not
//! resolve ranges (range.rs) or write responses (static_files.rs).
//!
//! Where nginx 1.22 departs from the RFC, herd serve follows the RFC (docs/serve.md): nginx
//! evaluates If-Unmodified-Since also beside If-Match, answers 412 to an If-Unmodified-Since
//! that is not a date, and by default (`if_modified_since exact`) answers 304 only to the exact
//! Last-Modified date.

use crate::file_cache::FileInfo;
use crate::http_date;
use crate::request::RequestHead;

/// What the preconditions of a request decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// 412 Precondition Failed.
    Failed,
    /// 304 Not Modified.
    NotModified,
    /// Send the file; `range`: a Range header applies, If-Range being absent or holding.
    Send { range: bool },
}

/// Evaluates `req`'s preconditions against the file `v`; `now` (seconds since the epoch) reads
/// RFC 850 dates' two-digit years.
pub(crate) fn evaluate(req: &RequestHead<'_>, v: &FileInfo, now: u64) -> Verdict {
    let date = |value: Option<&[u8]>| value.and_then(|d| http_date::parse(d, now));
    // mtime came from an i64 (a time before 1970 is read as 1970).
    let mtime = i64::try_from(v.mtime).unwrap_or(i64::MAX);

    // §13.1.4: If-Unmodified-Since is ignored when If-Match is present.
    if let Some(list) = req.if_match {
        if !if_match(list, v.etag()) {
            return Verdict::Failed;
        }
    } else if date(req.if_unmodified_since).is_some_and(|since| mtime > since) {
        return Verdict::Failed;
    }

    // §13.1.3: If-Modified-Since is ignored when If-None-Match is present. For GET and HEAD,
    // the only methods that reach a file, a false condition means 304.
    if let Some(list) = req.if_none_match {
        if etag_list(list).any(|tag| tag == Tag::Any || tag.opaque() == Some(v.etag())) {
            return Verdict::NotModified;
        }
    } else if date(req.if_modified_since).is_some_and(|since| mtime <= since) {
        return Verdict::NotModified;
    }

    Verdict::Send { range: if_range_holds(req.if_range, v, now) }
}

/// One member of an entity-tag list (RFC 9110 §8.8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag<'a> {
    /// `*`.
    Any,
    /// `"…"`, its quotes kept; `weak` for `W/"…"`.
    Tag { quoted: &'a [u8], weak: bool },
}

impl<'a> Tag<'a> {
    /// The quoted opaque part, whether the tag is weak or strong: weak comparison.
    fn opaque(self) -> Option<&'a [u8]> {
        match self {
            Tag::Any => None,
            Tag::Tag { quoted, .. } => Some(quoted),
        }
    }
}

/// If-Match: `*` holds for any file that exists; otherwise a listed tag must match the ETag by
/// strong comparison (§8.8.3.2): both strong, the same characters. A weak tag never matches.
fn if_match(list: &[u8], etag: &[u8]) -> bool {
    etag_list(list).any(|tag| match tag {
        Tag::Any => true,
        Tag::Tag { quoted, weak } => !weak && quoted == etag,
    })
}

/// If-Range: the range applies only if the validator still matches, strongly for an ETag
/// (§13.1.5; a weak one never does) and exactly for a date. Absent, it holds.
fn if_range_holds(if_range: Option<&[u8]>, v: &FileInfo, now: u64) -> bool {
    match if_range {
        None => true,
        Some(value) if value.starts_with(b"\"") => value == v.etag(),
        Some(value) if value.starts_with(b"W/") => false,
        Some(value) => {
            http_date::parse(value, now).is_some_and(|date| i64::try_from(v.mtime) == Ok(date))
        }
    }
}

/// The members of an entity-tag list like `"a", W/"b"` or `*`, in order, up to the first that
/// is not one (a malformed list matches nothing past that point). An entity-tag may contain
/// commas, so members are read quote to quote, not split at commas.
fn etag_list(list: &[u8]) -> impl Iterator<Item = Tag<'_>> {
    let mut rest = list;
    std::iter::from_fn(move || {
        rest = rest.trim_ascii_start();
        while let Some(after) = rest.strip_prefix(b",") {
            rest = after.trim_ascii_start();
        }
        if rest.is_empty() {
            return None;
        }
        if let Some(after) = rest.strip_prefix(b"*") {
            rest = after;
            return Some(Tag::Any);
        }
        let (weak, body) = match rest.strip_prefix(b"W/") {
            Some(after) => (true, after),
            None => (false, rest),
        };
        let Some(inner) = body.strip_prefix(b"\"") else {
            rest = b"";
            return None;
        };
        let Some(close) = inner.iter().position(|&b| b == b'"') else {
            rest = b"";
            return None;
        };
        let quoted = &body[..close + 2];
        rest = &body[close + 2..];
        Some(Tag::Tag { quoted, weak })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::format_http_date;
    use crate::request::{BodyFraming, Method};

    const ETAG: &[u8] = b"\"5f3c1a2b-18f9\"";
    const MTIME: u64 = 0x5f3c_1a2b;
    const NOW: u64 = 1_780_272_000;

    fn validators() -> FileInfo {
        let mut etag = [0u8; 40];
        etag[..ETAG.len()].copy_from_slice(ETAG);
        FileInfo {
            size: 0x18f9,
            mtime: MTIME,
            content_type: b"text/html",
            etag,
            etag_len: ETAG.len(),
            last_modified: format_http_date(MTIME),
        }
    }

    /// A GET with the headers `(name, value)`.
    fn verdict(headers: &[(&str, &str)]) -> Verdict {
        let mut req = RequestHead {
            method: Method::Get,
            target: b"/f",
            minor_version: 1,
            keep_alive: true,
            body: BodyFraming::None,
            host: None,
            tls: false,
            if_match: None,
            if_unmodified_since: None,
            if_none_match: None,
            if_modified_since: None,
            if_range: None,
            range: None,
            content_type: None,
            expect_continue: false,
        };
        for (name, value) in headers {
            let slot = match *name {
                "if-match" => &mut req.if_match,
                "if-unmodified-since" => &mut req.if_unmodified_since,
                "if-none-match" => &mut req.if_none_match,
                "if-modified-since" => &mut req.if_modified_since,
                "if-range" => &mut req.if_range,
                _ => panic!("{name}"),
            };
            *slot = Some(value.as_bytes());
        }
        evaluate(&req, &validators(), NOW)
    }

    fn lm() -> String {
        String::from_utf8(format_http_date(MTIME).to_vec()).unwrap()
    }

    const SEND: Verdict = Verdict::Send { range: true };

    #[test]
    fn lists() {
        fn tags(list: &str) -> Vec<Tag<'_>> {
            etag_list(list.as_bytes()).collect()
        }
        let strong = |quoted: &'static str| Tag::Tag { quoted: quoted.as_bytes(), weak: false };
        let weak = |quoted: &'static str| Tag::Tag { quoted: quoted.as_bytes(), weak: true };
        assert_eq!(tags("*"), [Tag::Any]);
        assert_eq!(
            tags(r#""a", W/"b","c,d" ,, "e""#),
            [strong("\"a\""), weak("\"b\""), strong("\"c,d\""), strong("\"e\"")]
        );
        assert_eq!(tags(r#""a", b, "c""#), [strong("\"a\"")]);
        assert_eq!(tags(r#""a", "unclosed"#), [strong("\"a\"")]);
        assert_eq!(tags(""), []);
        assert_eq!(tags("W/"), []);
    }

    #[test]
    fn if_match_is_strong() {
        let e = std::str::from_utf8(ETAG).unwrap();
        assert_eq!(verdict(&[("if-match", e)]), SEND);
        assert_eq!(verdict(&[("if-match", "*")]), SEND);
        assert_eq!(verdict(&[("if-match", &format!("\"x\", {e}"))]), SEND);
        assert_eq!(verdict(&[("if-match", &format!("W/{e}"))]), Verdict::Failed);
        assert_eq!(verdict(&[("if-match", "\"x\"")]), Verdict::Failed);
        assert_eq!(verdict(&[("if-match", "5f3c1a2b-18f9")]), Verdict::Failed);
        assert_eq!(verdict(&[("if-match", "")]), Verdict::Failed);
    }

    #[test]
    fn if_none_match_is_weak() {
        let e = std::str::from_utf8(ETAG).unwrap();
        for list in [e.to_owned(), format!("W/{e}"), format!("\"x\", {e}"), "*".to_owned()] {
            assert_eq!(verdict(&[("if-none-match", &list)]), Verdict::NotModified, "{list}");
        }
        for list in ["\"x\"", "5f3c1a2b-18f9", ""] {
            assert_eq!(verdict(&[("if-none-match", list)]), SEND, "{list}");
        }
    }

    #[test]
    fn dates_compare_with_the_modification_time() {
        let lm = lm();
        let before = String::from_utf8(format_http_date(MTIME - 1).to_vec()).unwrap();
        assert_eq!(verdict(&[("if-unmodified-since", &lm)]), SEND);
        assert_eq!(verdict(&[("if-unmodified-since", &before)]), Verdict::Failed);
        assert_eq!(verdict(&[("if-unmodified-since", "no date")]), SEND);
        assert_eq!(verdict(&[("if-modified-since", &lm)]), Verdict::NotModified);
        assert_eq!(verdict(&[("if-modified-since", &before)]), SEND);
        assert_eq!(verdict(&[("if-modified-since", "no date")]), SEND);
    }

    #[test]
    fn the_rfcs_order() {
        let (e, lm) = (std::str::from_utf8(ETAG).unwrap(), lm());
        let old = "Thu, 01 Jan 1970 00:00:00 GMT";
        for (headers, expect) in [
            (vec![("if-match", "\"x\""), ("if-none-match", "\"x\"")], Verdict::Failed),
            (vec![("if-match", e), ("if-unmodified-since", old)], SEND),
            (vec![("if-match", "\"x\""), ("if-unmodified-since", &lm)], Verdict::Failed),
            (vec![("if-none-match", e), ("if-unmodified-since", old)], Verdict::Failed),
            (vec![("if-match", e), ("if-none-match", e)], Verdict::NotModified),
            (vec![("if-none-match", "\"x\""), ("if-modified-since", &lm)], SEND),
            (vec![("if-none-match", e), ("if-modified-since", old)], Verdict::NotModified),
            (vec![("if-match", e), ("if-range", "\"x\"")], Verdict::Send { range: false }),
            (vec![("if-none-match", e), ("if-range", "\"x\"")], Verdict::NotModified),
        ] {
            assert_eq!(verdict(&headers), expect, "{headers:?}");
        }
    }

    #[test]
    fn if_range() {
        let e = std::str::from_utf8(ETAG).unwrap();
        let with = |value: &str| verdict(&[("if-range", value)]);
        assert_eq!(with(e), SEND);
        assert_eq!(with(&lm()), SEND);
        assert_eq!(with("Tuesday, 18-Aug-20 18:12:59 GMT"), SEND);
        assert_eq!(with("Tue Aug 18 18:12:59 2020"), SEND);
        let ignored = Verdict::Send { range: false };
        assert_eq!(with(&format!("W/{e}")), ignored);
        assert_eq!(with("\"other\""), ignored);
        assert_eq!(with("Thu, 01 Jan 1970 00:00:00 GMT"), ignored);
        assert_eq!(with("garbage"), ignored);
    }
}
