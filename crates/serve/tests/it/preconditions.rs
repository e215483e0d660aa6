//! Conditional requests on files, in RFC 9110's order (§13.2.2): If-Match, else
//! If-Unmodified-Since (a failure → 412); If-None-Match, else If-Modified-Since (→ 304); then
//! If-Range decides whether Range applies. A range request with a stale validator gets 412,
//! never a 206 splicing two versions. Dates are accepted in all three HTTP-date forms
//! (§5.6.7): IMF-fixdate, RFC 850 and asctime. Over HTTP/1.1 and h2c.
//! See: issue 31 (If-Match and If-Unmodified-Since ignored; older date forms ignored).

use std::fs::File;
use std::time::{Duration, SystemTime};

use crate::h2_client::{H2Client, BIG_WINDOWS};
use crate::harness::{Client, TempDir, TestServer};

/// `hello.txt`'s modification time: Thu, 02 Jan 2020 03:04:05 GMT.
const MTIME: u64 = 1_577_934_245;
const LM: &str = "Thu, 02 Jan 2020 03:04:05 GMT";
/// nginx's ETag for it: mtime and size (12) in hex.
const ETAG: &str = "\"5e0d5da5-c\"";
/// One second before LM, in each form.
const BEFORE: [&str; 3] = [
    "Thu, 02 Jan 2020 03:04:04 GMT",
    "Thursday, 02-Jan-20 03:04:04 GMT",
    "Thu Jan  2 03:04:04 2020",
];
/// LM itself, in each form (and asctime's two-digit day).
const AT: [&str; 4] = [
    LM,
    "Thursday, 02-Jan-20 03:04:05 GMT",
    "Thu Jan  2 03:04:05 2020",
    "Thu Jan 02 03:04:05 2020",
];

pub(crate) fn site() -> TempDir {
    let dir = TempDir::new();
    let path = dir.write("hello.txt", b"hello world\n");
    let mtime = SystemTime::UNIX_EPOCH + Duration::from_secs(MTIME);
    File::options().write(true).open(path).unwrap().set_modified(mtime).unwrap();
    dir
}

/// Status and body of a GET of `/hello.txt` with `headers` (lines ending in CRLF).
fn get(server: &TestServer, headers: &str) -> (u16, String) {
    let r = server.get_with("/hello.txt", headers);
    (r.status, r.text())
}

fn status(server: &TestServer, headers: &str) -> u16 {
    get(server, headers).0
}

#[test]
fn the_file_has_the_validators_the_tests_assume() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let r = server.get("/hello.txt");
    assert_eq!((r.header("Last-Modified"), r.header("ETag")), (Some(LM), Some(ETAG)));
}

#[test]
fn if_match_compares_strongly() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    for (value, expect) in [
        (ETAG.to_owned(), 200),
        ("*".to_owned(), 200),
        (format!("\"nope\", {ETAG}"), 200),
        (format!("\"nope\",{ETAG} , \"x\""), 200),
        ("\"nope\"".to_owned(), 412),
        // A weak tag never matches strongly, even with the same opaque part.
        (format!("W/{ETAG}"), 412),
        ("5e0d5da5-c".to_owned(), 412),
        ("garbage".to_owned(), 412),
    ] {
        let (got, body) = get(&server, &format!("If-Match: {value}\r\n"));
        assert_eq!(got, expect, "If-Match: {value}");
        if expect == 412 {
            assert!(body.contains("412 Precondition Failed"), "{body}");
        } else {
            assert_eq!(body, "hello world\n");
        }
    }
    // HEAD too; and a missing file is 404 whatever its preconditions (RFC 9110 §13.2.1).
    let mut c = server.client();
    c.send(b"HEAD /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Match: \"nope\"\r\n\r\n");
    assert_eq!(c.response(true).status, 412);
    c.send(b"GET /missing HTTP/1.1\r\nHost: t\r\nIf-Match: \"nope\"\r\n\r\n");
    assert_eq!(c.response(false).status, 404);
}

#[test]
fn if_unmodified_since_in_every_date_form() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let check = |date: &str, expect: u16| {
        assert_eq!(status(&server, &format!("If-Unmodified-Since: {date}\r\n")), expect, "{date}");
    };
    for date in AT {
        check(date, 200);
    }
    for date in BEFORE {
        check(date, 412);
    }
    check("Fri, 31 Dec 9999 23:59:59 GMT", 200);
    check("Sun, 06 Nov 1994 08:49:37 GMT", 412);
    // Before 1970 is still a date, and the file is newer.
    check("Wed, 31 Dec 1969 23:59:59 GMT", 412);
    // Not a date: ignored (RFC 9110 §13.1.4).
    check("garbage", 200);
    check("Thu, 02 Jan 2020 03:04:04 UTC", 200);
}

#[test]
fn a_range_with_a_stale_validator_gets_412_not_206() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let range = "Range: bytes=0-4\r\n";
    assert_eq!(get(&server, &format!("{range}If-Match: \"old\"\r\n")).0, 412);
    for date in BEFORE {
        assert_eq!(status(&server, &format!("{range}If-Unmodified-Since: {date}\r\n")), 412);
    }
    // A current validator: the part.
    assert_eq!(get(&server, &format!("{range}If-Match: {ETAG}\r\n")), (206, "hello".into()));
    assert_eq!(
        get(&server, &format!("{range}If-Unmodified-Since: {LM}\r\n")),
        (206, "hello".into())
    );
}

#[test]
fn preconditions_are_evaluated_in_the_rfcs_order() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let old = BEFORE[0];
    for (headers, expect) in [
        // 1. If-Match before If-None-Match.
        ("If-Match: \"nope\"\r\nIf-None-Match: \"nope\"\r\n".to_owned(), 412),
        // 2. If-Unmodified-Since only without If-Match (§13.1.4): a matching If-Match decides.
        (format!("If-Match: {ETAG}\r\nIf-Unmodified-Since: {old}\r\n"), 200),
        (format!("If-Match: \"nope\"\r\nIf-Unmodified-Since: {LM}\r\n"), 412),
        // 2 before 3: a stale If-Unmodified-Since is 412 even where If-None-Match gives 304.
        (format!("If-None-Match: {ETAG}\r\nIf-Unmodified-Since: {old}\r\n"), 412),
        // 3 and 4 after 1 and 2 held.
        (format!("If-Match: {ETAG}\r\nIf-None-Match: {ETAG}\r\n"), 304),
        (format!("If-Match: *\r\nIf-Modified-Since: {LM}\r\n"), 304),
        (format!("If-Unmodified-Since: {LM}\r\nIf-Modified-Since: {LM}\r\n"), 304),
        // If-None-Match decides over If-Modified-Since.
        (format!("If-None-Match: \"nope\"\r\nIf-Modified-Since: {LM}\r\n"), 200),
        // 304 before the range.
        (format!("If-None-Match: {ETAG}\r\nRange: bytes=0-1\r\n"), 304),
        // 5. Preconditions held, If-Range stale: the whole file.
        (format!("If-Match: {ETAG}\r\nRange: bytes=0-1\r\nIf-Range: \"old\"\r\n"), 200),
        (format!("If-Match: {ETAG}\r\nRange: bytes=0-1\r\nIf-Range: {ETAG}\r\n"), 206),
    ] {
        assert_eq!(status(&server, &headers), expect, "{headers}");
    }
}

#[test]
fn if_modified_since_and_if_range_in_every_date_form() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    for date in AT {
        assert_eq!(status(&server, &format!("If-Modified-Since: {date}\r\n")), 304, "{date}");
        let if_range = format!("Range: bytes=0-4\r\nIf-Range: {date}\r\n");
        assert_eq!(get(&server, &if_range), (206, "hello".into()), "{date}");
    }
    for date in BEFORE {
        assert_eq!(status(&server, &format!("If-Modified-Since: {date}\r\n")), 200, "{date}");
        // If-Range needs the exact date.
        let if_range = format!("Range: bytes=0-4\r\nIf-Range: {date}\r\n");
        assert_eq!(status(&server, &if_range), 200, "{date}");
    }
}

#[test]
fn h2c_honours_the_same_preconditions() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let mut stream = 1;
    let mut status = |extra: &[(&str, &str)]| {
        c.request_with(stream, "GET", "/hello.txt", extra, true);
        let r = c.response(stream);
        stream += 2;
        (r.status(), r.body)
    };
    assert_eq!(status(&[("range", "bytes=0-4"), ("if-match", "\"old\"")]).0, 412);
    assert_eq!(status(&[("range", "bytes=0-4"), ("if-unmodified-since", BEFORE[1])]).0, 412);
    assert_eq!(status(&[("range", "bytes=0-4"), ("if-match", ETAG)]), (206, b"hello".to_vec()));
    assert_eq!(status(&[("if-modified-since", AT[2])]).0, 304);
    assert_eq!(status(&[("if-match", "*"), ("if-unmodified-since", AT[1])]).0, 200);
}

/// The same client connection goes on after a 412 (it is an ordinary response).
#[test]
fn a_412_keeps_the_connection() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let mut c = Client::connect(server.addr());
    c.send(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Match: \"x\"\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("Connection")), (412, None));
    c.send(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"hello world\n");
}
