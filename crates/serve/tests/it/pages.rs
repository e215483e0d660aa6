//! The computed pages: `/9x9` against its golden file, `/include` with herd's texts and with a
//! root's own, `/cpu`, `/status/N`, and the 405s and 400s around them.

use std::time::{Duration, Instant};

use crate::harness::{TempDir, TestServer};

const NINE_BY_NINE: &[u8] = include_bytes!("../golden/9x9.html");

#[test]
fn nine_by_nine_matches_its_golden_file() {
    let server = TestServer::start(None);
    let mut c = server.client();
    for _ in 0..3 {
        c.send(b"GET /9x9 HTTP/1.1\r\nHost: t\r\n\r\n");
        let r = c.response(false);
        assert_eq!(r.status, 200);
        assert_eq!(r.header("Content-Type"), Some("text/html"));
        assert_eq!(r.header("Content-Length"), Some("1692"));
        assert_eq!(r.header("Cache-Control"), Some("no-store"));
        assert!(r.body == NINE_BY_NINE, "/9x9 differs from tests/golden/9x9.html:\n{}", r.text());
    }
    c.send(b"HEAD /9x9 HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = c.response(true);
    assert_eq!(head.header("Content-Length"), Some("1692"));
    // Nothing after the head: the next response follows at once.
    c.send(b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"01");
}

/// What `/include` must answer for these four texts.
fn include_page(texts: &[Vec<u8>]) -> Vec<u8> {
    let mut page = b"<html>\n<head>\n<title>herd include</title>\n</head>\n<body>\n".to_vec();
    for (i, t) in texts.iter().enumerate() {
        if i > 0 {
            page.extend_from_slice(b"<p><hr><p>\n");
        }
        page.extend_from_slice(t);
    }
    page.extend_from_slice(b"</body>\n</html>\n");
    page
}

#[test]
fn include_joins_herds_own_texts() {
    let server = TestServer::start(None);
    let r = server.get("/include");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("text/html"));
    let text = r.text();
    assert_eq!(text.matches("<p><hr><p>").count(), 3);
    for part in 1..=4 {
        assert!(text.contains(&format!("Part {part} of the herd include page")), "{text}");
    }
    // Four 7,000-byte texts and the frame: about seed 003's 28 KB page.
    assert_eq!(r.body.len(), 4 * 7000 + 57 + 3 * 11 + 16);
    assert_eq!(server.get("/include").body, r.body, "the page is deterministic");
}

#[test]
fn include_reads_the_roots_texts_on_every_request() {
    let dir = TempDir::new();
    let mut texts: Vec<Vec<u8>> = (1..=4).map(|i| format!("text {i}\n").into_bytes()).collect();
    for (i, t) in texts.iter().enumerate() {
        dir.write(&format!("include/{}.txt", i + 1), t);
    }
    let server = TestServer::start(Some(dir.path()));
    assert_eq!(server.get("/include").body, include_page(&texts));

    texts[2] = b"changed, and longer than before\n".to_vec();
    dir.write("include/3.txt", &texts[2]);
    assert_eq!(server.get("/include").body, include_page(&texts), "no caching between requests");

    std::fs::remove_file(dir.path().join("include/4.txt")).unwrap();
    let r = server.get("/include");
    assert_eq!(r.status, 500);
    assert!(r.text().contains("/include cannot open its texts"), "{}", r.text());
}

#[test]
fn cpu_work_is_deterministic_and_scales() {
    let server = TestServer::start(None);
    let a = server.get("/cpu?n=1000");
    assert_eq!(a.status, 200);
    let text = a.text();
    assert!(text.starts_with("cpu n=1000 result=") && text.ends_with('\n'), "{text}");
    assert_eq!(server.get("/cpu?n=1000").body, a.body);
    assert_ne!(server.get("/cpu?n=1001").body, a.body);
    assert_eq!(server.get("/cpu?n=0&_=cachebuster").status, 200);

    // More units take longer: 100,000 units against 100, best of three to absorb noise.
    let time = |n: u32| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                assert_eq!(server.get(&format!("/cpu?n={n}")).status, 200);
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    let (small, large) = (time(100), time(100_000));
    assert!(large > small * 5 && large > Duration::from_millis(5), "{small:?} vs {large:?}");
}

#[test]
fn bad_parameters_say_what_was_expected() {
    let server = TestServer::start(None);
    for (target, expect) in [
        ("/cpu", "/cpu needs ?n=N"),
        ("/cpu?n=1000001", "/cpu needs ?n=N"),
        ("/cpu?n=-1", "/cpu needs ?n=N"),
        ("/sleep", "/sleep needs ?ms=N"),
        ("/sleep?ms=600001", "/sleep needs ?ms=N"),
        ("/stall?ms=10", "/stall needs ?every=M&ms=N"),
        ("/stall?every=0&ms=10", "/stall needs ?every=M&ms=N"),
        ("/status/99", "/status/N needs"),
        ("/status/600", "/status/N needs"),
        ("/status/2000", "/status/N needs"),
        ("/status/abc", "/status/N needs"),
    ] {
        let r = server.get(target);
        assert_eq!(r.status, 400, "{target}");
        assert_eq!(r.header("Content-Type"), Some("text/plain; charset=utf-8"));
        assert!(r.text().contains(expect), "{target}: {}", r.text());
    }
}

#[test]
fn any_status_on_request() {
    let server = TestServer::start(None);
    let mut c = server.client();
    for code in [200, 201, 299, 302, 404, 418, 500, 503, 599] {
        c.send(format!("GET /status/{code} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        let r = c.response(false);
        assert_eq!(r.status, code);
        assert_eq!(r.body, format!("{code}\n").as_bytes());
    }
    for code in [204, 304] {
        c.send(format!("GET /status/{code} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        let r = c.response(false);
        assert_eq!(r.status, code);
        assert_eq!(r.header("Content-Length"), None, "{code} has no body");
    }
    // The connection survived all of them.
    c.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"0");
}

#[test]
fn methods_each_route_takes() {
    let server = TestServer::start(None);
    let mut c = server.client();
    c.send(b"POST /9x9 HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi");
    let r = c.response(false);
    assert_eq!((r.status, r.header("Allow")), (405, Some("GET, HEAD")));
    c.send(b"DELETE /echo HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("Allow")), (405, Some("GET, HEAD, POST, PUT")));
    c.send(b"GET /9x9 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, NINE_BY_NINE);
}
