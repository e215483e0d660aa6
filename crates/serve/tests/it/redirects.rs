//! A directory asked without its trailing slash is redirected (301) to the same path with it,
//! the query string kept, as nginx and Apache do: otherwise a browser resolves the page's
//! relative links against the parent directory. The Location is absolute, built from the
//! connection's scheme and the authority the request names (Host, the absolute-form target,
//! or HTTP/2's `:authority`); without one it is the path alone. Over HTTP/1.1, HTTP/1.0, h2c,
//! and HTTP/1.1 and h2 over TLS.
//! See: issue 31 (directories answered 200 without their slash).

use herd_serve::AppProtocol;

use crate::h2_client::{H2Client, BIG_WINDOWS};
use crate::harness::{Client, TempDir, TestServer};
use crate::tls::{connect, TlsServer};

/// A root with directories with and without `index.html`, one whose name needs escaping, and
/// a nested one.
fn site() -> TempDir {
    let dir = TempDir::new();
    dir.write("docs/index.html", b"docs index");
    dir.write("sub/page.html", b"page");
    dir.write("sp ace/index.html", b"space");
    dir.write("a/b/index.html", b"nested");
    dir.write("hello.txt", b"hello\n");
    dir
}

/// Sends `request` raw on a fresh connection; the response (to a HEAD if `head`).
fn exchange(server: &TestServer, request: &str, head: bool) -> crate::harness::Response {
    let mut c = Client::connect(server.addr());
    c.send(request.as_bytes());
    c.response(head)
}

#[test]
fn a_directory_without_its_slash_is_redirected_with_its_query() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    for (target, location) in [
        ("/docs", "http://t/docs/"),
        ("/docs?x=1&y", "http://t/docs/?x=1&y"),
        ("/sub", "http://t/sub/"),
        ("/a/b", "http://t/a/b/"),
        ("/sp%20ace", "http://t/sp%20ace/"),
        // The path as the server understood it: empty and `.` segments are gone, so the
        // Location can never start with `//` (another host, for a relative reference).
        ("//docs", "http://t/docs/"),
        ("/./a//b", "http://t/a/b/"),
        // Escapes of characters that need none come back as the characters.
        ("/%64ocs", "http://t/docs/"),
    ] {
        let r = server.get(target);
        assert_eq!(r.status, 301, "{target}");
        assert_eq!(r.header("Location"), Some(location), "{target}");
        assert_eq!(r.header("Content-Type"), Some("text/html"), "{target}");
        assert!(r.text().contains("301 Moved Permanently"), "{target}");
    }
    // Where the redirect leads is served (or, without index.html, still 404).
    assert_eq!(server.get("/docs/").text(), "docs index");
    assert_eq!(server.get("/sp%20ace/").text(), "space");
    assert_eq!(server.get("/sub/").status, 404);
    // Files and slashed directories are not redirected.
    assert_eq!(server.get("/hello.txt").status, 200);
    assert_eq!(server.get("/").status, 404);
}

#[test]
fn the_location_names_the_authority_the_request_named() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let location = |request: &str| {
        let r = exchange(&server, request, false);
        assert_eq!(r.status, 301, "{request}");
        r.header("Location").map(str::to_owned)
    };
    // Host's port as sent, and the host lowercased, as Apache does.
    assert_eq!(
        location("GET /docs HTTP/1.1\r\nHost: Example.COM:8080\r\nConnection: close\r\n\r\n"),
        Some("http://example.com:8080/docs/".into())
    );
    assert_eq!(
        location("GET /docs HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n"),
        Some("http://[::1]:81/docs/".into())
    );
    // An absolute-form target's authority wins over Host (RFC 9112 §3.2.2).
    assert_eq!(
        location("GET http://other:81/docs?q HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"),
        Some("http://other:81/docs/?q".into())
    );
    // No Host (HTTP/1.0), or one that is not a host: the path alone, which RFC 9110 §10.2.2
    // allows and every client resolves against the URI it asked for.
    assert_eq!(location("GET /docs HTTP/1.0\r\n\r\n"), Some("/docs/".into()));
    assert_eq!(
        location("GET /docs?a=b HTTP/1.1\r\nHost: a/b@c\r\nConnection: close\r\n\r\n"),
        Some("/docs/?a=b".into())
    );
    // HEAD: the same head, no body.
    let r = exchange(&server, "HEAD /docs HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", true);
    assert_eq!((r.status, r.header("Location")), (301, Some("http://t/docs/")));
}

#[test]
fn h2c_redirects_with_the_authority() {
    let dir = site();
    let server = TestServer::start(Some(dir.path()));
    let mut c = H2Client::connect(server.addr(), BIG_WINDOWS);
    let r = c.get(1, "/docs?x=1");
    assert_eq!(r.status(), 301);
    assert_eq!(r.field("location"), Some("http://t/docs/?x=1"));
    assert!(String::from_utf8_lossy(&r.body).contains("301 Moved Permanently"));
    assert_eq!(c.get(3, "/docs/").body, b"docs index");
}

#[test]
fn over_tls_the_location_says_https() {
    let dir = site();
    let server = TlsServer::start(Some(dir.path()), &[AppProtocol::H2, AppProtocol::Http1]);
    let (mut c, _) = server.client(&[b"http/1.1"]);
    c.send(b"GET /docs HTTP/1.1\r\nHost: localhost:8443\r\nConnection: close\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("Location")), (301, Some("https://localhost:8443/docs/")));

    let (stream, tcp) = connect(server.addr(), &server.ca, &[b"h2"]).expect("TLS handshake");
    let mut h2 = H2Client::over(Box::new(stream), tcp);
    h2.start(BIG_WINDOWS);
    let r = h2.get(1, "/a/b");
    assert_eq!((r.status(), r.field("location")), (301, Some("https://t/a/b/")));
}
