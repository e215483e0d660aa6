//! Static files: bodies small and large, validators, 304, 206/416, HEAD, index.html, 404/405.

use std::fs;

use crate::harness::{numbered_bytes, TempDir, TestServer};

/// A root with a small text file, a large binary (sendfile path), an index, a directory
/// without one, and an empty file.
fn site() -> TempDir {
    let dir = TempDir::new();
    dir.write("index.html", b"<h1>home</h1>\n");
    dir.write("hello.txt", b"hello world\n");
    dir.write("big.bin", &numbered_bytes(300_000));
    dir.write("style.CSS", b"body{}");
    dir.write("noext", b"x");
    dir.write("empty.txt", b"");
    dir.write("docs/index.html", b"docs index");
    dir.write("sub/page.html", b"page");
    dir
}

#[test]
fn small_file_with_headers() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let r = server.get("/hello.txt");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"hello world\n");
    assert_eq!(r.header("Content-Type"), Some("text/plain"));
    assert_eq!(r.header("Content-Length"), Some("12"));
    assert_eq!(r.header("Accept-Ranges"), Some("bytes"));
    assert_eq!(r.header("Server"), Some(concat!("herd/", env!("CARGO_PKG_VERSION"))));
    let date = r.header("Date").unwrap();
    assert!(date.len() == 29 && date.ends_with(" GMT"), "{date}");
    let lm = r.header("Last-Modified").unwrap();
    assert!(lm.len() == 29 && lm.ends_with(" GMT"), "{lm}");
    let etag = r.header("ETag").unwrap();
    let meta = fs::metadata(dir.path().join("hello.txt")).unwrap();
    let mtime = std::os::unix::fs::MetadataExt::mtime(&meta);
    assert_eq!(etag, format!("\"{mtime:x}-c\""));
}

#[test]
fn large_file_is_sent_whole() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let r = server.get("/big.bin");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("application/octet-stream"));
    assert_eq!(r.body, numbered_bytes(300_000));
}

#[test]
fn content_types_and_empty_file() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    assert_eq!(server.get("/style.CSS").header("Content-Type"), Some("text/css"));
    assert_eq!(server.get("/noext").header("Content-Type"), Some("application/octet-stream"));
    let empty = server.get("/empty.txt");
    assert_eq!((empty.status, empty.body.len()), (200, 0));
    assert_eq!(empty.header("Content-Length"), Some("0"));
}

#[test]
fn head_has_the_get_headers_and_no_body() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let mut c = server.client();
    c.send(b"HEAD /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = c.response(true);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("Content-Length"), Some("300000"));
    assert!(head.header("ETag").is_some());
    // Had a body followed, this would read it as the next response's status line.
    c.send(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"hello world\n");
    c.send(b"HEAD /missing HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let missing = c.response(true);
    assert_eq!(missing.status, 404);
    assert_ne!(missing.header("Content-Length"), Some("0"));
    assert!(c.is_closed());
}

#[test]
fn if_none_match_gives_304() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let etag = server.get("/hello.txt").header("ETag").unwrap().to_owned();
    for (value, expect) in [
        (etag.clone(), 304),
        (format!("W/{etag}"), 304),
        (format!("\"nope\", {etag}"), 304),
        ("*".to_owned(), 304),
        ("\"nope\"".to_owned(), 200),
    ] {
        let r = server.get_with("/hello.txt", &format!("If-None-Match: {value}\r\n"));
        assert_eq!(r.status, expect, "If-None-Match: {value}");
        if expect == 304 {
            assert!(r.body.is_empty());
            assert_eq!(r.header("ETag"), Some(etag.as_str()));
            assert_eq!(r.header("Content-Length"), None);
        }
    }
}

#[test]
fn if_modified_since_gives_304() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let first = server.get("/hello.txt");
    let lm = first.header("Last-Modified").unwrap();
    let check = |headers: String, expect: u16| {
        assert_eq!(server.get_with("/hello.txt", &headers).status, expect, "{headers}");
    };
    check(format!("If-Modified-Since: {lm}\r\n"), 304);
    check("If-Modified-Since: Fri, 31 Dec 9999 23:59:59 GMT\r\n".into(), 304);
    check("If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n".into(), 200);
    check("If-Modified-Since: yesterday\r\n".into(), 200);
    // If-None-Match decides when both are present.
    check(format!("If-None-Match: \"nope\"\r\nIf-Modified-Since: {lm}\r\n"), 200);
}

#[test]
fn single_ranges_give_206() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let check = |range: &str, body: &[u8], content_range: &str| {
        let r = server.get_with("/hello.txt", &format!("Range: {range}\r\n"));
        assert_eq!(r.status, 206, "{range}");
        assert_eq!(r.body, body, "{range}");
        assert_eq!(r.header("Content-Range"), Some(content_range), "{range}");
        assert_eq!(r.header("Content-Length"), Some(body.len().to_string().as_str()));
    };
    check("bytes=0-4", b"hello", "bytes 0-4/12");
    check("bytes=6-", b"world\n", "bytes 6-11/12");
    check("bytes=-3", b"ld\n", "bytes 9-11/12");
    check("bytes=6-100", b"world\n", "bytes 6-11/12");

    // A range of a large file goes through sendfile with an offset.
    let r = server.get_with("/big.bin", "Range: bytes=100000-199999\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &numbered_bytes(300_000)[100_000..200_000]);
    assert_eq!(r.header("Content-Range"), Some("bytes 100000-199999/300000"));
}

#[test]
fn ranges_ignored_or_unsatisfiable() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    for ignored in ["bytes=0-1,4-5", "bytes=x-y", "bytes=5-2", "lines=1-2"] {
        let r = server.get_with("/hello.txt", &format!("Range: {ignored}\r\n"));
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello world\n"[..]), "{ignored}");
    }
    let r = server.get_with("/hello.txt", "Range: bytes=12-\r\n");
    assert_eq!(r.status, 416);
    assert_eq!(r.header("Content-Range"), Some("bytes */12"));

    // HEAD ignores Range (RFC 9110 §14.2).
    let mut c = server.client();
    c.send(b"HEAD /hello.txt HTTP/1.1\r\nHost: t\r\nRange: bytes=0-1\r\n\r\n");
    let head = c.response(true);
    assert_eq!((head.status, head.header("Content-Length")), (200, Some("12")));
}

#[test]
fn if_range_guards_the_range() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let first = server.get("/hello.txt");
    let (etag, lm) = (first.header("ETag").unwrap(), first.header("Last-Modified").unwrap());
    let status = |if_range: &str| {
        server
            .get_with("/hello.txt", &format!("Range: bytes=0-1\r\nIf-Range: {if_range}\r\n"))
            .status
    };
    assert_eq!(status(etag), 206);
    assert_eq!(status(lm), 206);
    assert_eq!(status("\"old\""), 200);
    assert_eq!(status(&format!("W/{etag}")), 200);
    assert_eq!(status("Thu, 01 Jan 1970 00:00:00 GMT"), 200);
}

#[test]
fn directories_serve_index_html_or_404() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let home = server.get("/");
    assert_eq!((home.status, home.text().as_str()), (200, "<h1>home</h1>\n"));
    assert_eq!(home.header("Content-Type"), Some("text/html"));
    assert_eq!(server.get("/docs/").text(), "docs index");
    // Without its slash, a directory is redirected to it (redirects.rs).
    let moved = server.get("/docs");
    assert_eq!((moved.status, moved.header("Location")), (301, Some("http://t/docs/")));
    assert_eq!(server.get("/sub/").status, 404);
    assert_eq!(server.get("/sub/page.html").text(), "page");
    // A file named as a directory does not exist.
    assert_eq!(server.get("/hello.txt/").status, 404);
}

#[test]
fn missing_files_and_other_methods() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let r = server.get("/nope.txt");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("Content-Type"), Some("text/html"));
    assert!(r.text().contains("404 Not Found"));

    // A POST with a body gets 405, and the body is skipped so the connection stays usable.
    let mut c = server.client();
    c.send(b"POST /hello.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello=world");
    c.send(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    let post = c.response(false);
    assert_eq!(post.status, 405);
    assert_eq!(post.header("Allow"), Some("GET, HEAD"));
    assert_eq!(c.response(false).body, b"hello world\n");

    // A chunked body is decoded and skipped too.
    c.send(
        b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    );
    c.send(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    let chunked = c.response(false);
    assert_eq!((chunked.status, chunked.header("Connection")), (405, None));
    assert_eq!(c.response(false).body, b"hello world\n");
}

#[test]
fn without_a_root_only_generated_pages_exist() {
    let server = TestServer::start(None);
    assert_eq!(server.get("/").status, 404);
    assert_eq!(server.get("/index.html").status, 404);
    assert_eq!(server.get("/bytes/3").body, b"012");
}

#[test]
fn changes_are_served_at_once_despite_the_open_file_cache() {
    let dir = TempDir::new();
    let path = dir.write("f.txt", b"one");
    let big = dir.write("big.bin", &numbered_bytes(100_000));
    let server = TestServer::start_with(herd_serve::ServeConfig {
        threads: 1,
        ..crate::harness::config(Some(dir.path()))
    });
    assert_eq!(server.get("/f.txt").body, b"one");
    assert_eq!(server.get("/big.bin").body, numbered_bytes(100_000));

    // Rewritten in place, same size, within the same second.
    fs::write(&path, b"two").unwrap();
    assert_eq!(server.get("/f.txt").body, b"two");
    // Replaced by rename, as deployments do.
    let tmp = dir.write("f.tmp", b"three!");
    fs::rename(&tmp, &path).unwrap();
    let r = server.get("/f.txt");
    assert_eq!((r.body.as_slice(), r.header("Content-Length")), (&b"three!"[..], Some("6")));
    // A large file (served with sendfile from the cached descriptor) replaced too.
    let tmp = dir.write("big.tmp", &numbered_bytes(50_000));
    fs::rename(&tmp, &big).unwrap();
    assert_eq!(server.get("/big.bin").body, numbered_bytes(50_000));
    // Deleted: 404, not the cached bytes.
    fs::remove_file(&path).unwrap();
    assert_eq!(server.get("/f.txt").status, 404);
}

#[test]
fn more_files_than_the_cache_holds_are_all_served() {
    let dir = TempDir::new();
    for i in 0..600 {
        dir.write(&format!("d/{i}.txt"), format!("file {i}").as_bytes());
    }
    let server = TestServer::start_with(herd_serve::ServeConfig {
        threads: 1,
        ..crate::harness::config(Some(dir.path()))
    });
    let mut c = server.client();
    for round in 0..2 {
        for i in (0..600).rev() {
            c.send(format!("GET /d/{i}.txt HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
            assert_eq!(c.response(false).body, format!("file {i}").as_bytes(), "round {round}");
        }
    }
}

#[test]
fn a_name_with_a_percent_escape_in_it_is_served() {
    // See: issue 31. The path is decoded once: `/a%2520b.txt` names `a%20b.txt`, as in nginx
    // and Apache, and `/a%20b.txt` names `a b.txt`.
    let dir = TempDir::new();
    dir.write("a%20b.txt", b"percent");
    dir.write("a b.txt", b"space");
    dir.write("100%/x%41.txt", b"nested");
    let server = TestServer::start(Some(dir.path()));
    assert_eq!(server.get("/a%2520b.txt").text(), "percent");
    assert_eq!(server.get("/a%20b.txt").text(), "space");
    assert_eq!(server.get("/100%25/x%2541.txt").text(), "nested");
    assert_eq!(server.get("/a%2520c.txt").status, 404);
}
