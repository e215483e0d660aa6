//! HTTP/2 over TLS: ALPN chooses h2 (or http/1.1 when the server is told to offer only that);
//! h2load, curl (verifying the self-signed certificate) and nghttp with tiny windows get h2 and
//! the exact bytes; a raw client sees the frames, and a broken preface after ALPN h2 ends in
//! GOAWAY.

use herd_fileset::expected;
use herd_proto::h2::{ErrorCode, SettingId};
use herd_serve::AppProtocol;

use crate::h2_client::{Got, H2Client, BIG_WINDOWS};
use crate::harness::{numbered_bytes, TempDir};
use crate::tls::{connect, TlsServer};
use crate::tools;

const BOTH: [AppProtocol; 2] = [AppProtocol::H2, AppProtocol::Http1];

fn url(server: &TlsServer, path: &str) -> String {
    format!("https://127.0.0.1:{}{path}", server.addr().port())
}

/// A raw HTTP/2 client over TLS that offered `alpn`, with what ALPN chose.
fn h2_client(server: &TlsServer, alpn: &[&[u8]]) -> (H2Client, Option<Vec<u8>>) {
    let (stream, tcp) = connect(server.addr(), &server.ca, alpn).expect("TLS handshake");
    let chosen = stream.conn.alpn_protocol().map(<[u8]>::to_vec);
    (H2Client::over(Box::new(stream), tcp), chosen)
}

#[test]
fn h2load_gets_h2_over_tls() {
    let server = TlsServer::start(None, &BOTH);
    let report = tools::h2load(&["-n", "1000", "-c", "4", "-m", "10", &url(&server, "/bytes/100")]);
    assert!(report.contains("Application protocol: h2\n"), "{report}");
    assert_eq!(tools::h2load_requests(&report), (1000, 1000, 0, 0), "{report}");
    assert!(report.contains("(100000) data"), "{report}");
    let stats = server.server.stop();
    assert_eq!((stats.n_tls_connections, stats.n_h2_connections), (4, 4));
    assert_eq!(stats.n_requests, 1000);
}

#[test]
fn curl_verifies_and_gets_the_same_bytes() {
    let root = TempDir::new();
    let large = numbered_bytes(300_000);
    root.write("large.bin", &large);
    let server = TlsServer::start(Some(root.path()), &BOTH);
    let ca = server.ca.to_str().unwrap().to_owned();
    let get = |path: &str| tools::curl(&["--http2", "--cacert", &ca, &url(&server, path)]);
    assert_eq!(get("/bytes/70000"), expected::generated(70_000));
    assert_eq!(get("/9x9"), expected::nine_by_nine());
    assert!(get("/large.bin") == large, "the file over h2 differs");
    let version = tools::curl(&[
        "--http2",
        "--cacert",
        &ca,
        "-o",
        "/dev/null",
        "-w",
        "%{http_version} %{http_code}",
        &url(&server, "/nope"),
    ]);
    assert_eq!(version, b"2 404");
    let stats = server.server.stop();
    assert_eq!(stats.n_h2_connections, 4);
}

/// `--alpn http/1.1`: a client that prefers h2 gets HTTP/1.1, on the same certificate.
#[test]
fn an_http1_only_server_is_http1_for_h2_clients() {
    let server = TlsServer::start(None, &[AppProtocol::Http1]);
    let version = tools::curl(&[
        "--http2",
        "--cacert",
        server.ca.to_str().unwrap(),
        "-o",
        "/dev/null",
        "-w",
        "%{http_version}",
        &url(&server, "/bytes/5"),
    ]);
    assert_eq!(version, b"1.1");
    let (_, chosen) = server.client(&[b"h2", b"http/1.1"]);
    assert_eq!(chosen.as_deref(), Some(&b"http/1.1"[..]));
    assert_eq!(server.server.stop().n_h2_connections, 0);
}

#[test]
fn tiny_windows_over_tls() {
    let server = TlsServer::start(None, &BOTH);
    let body = tools::nghttp(&["-w", "8", "-W", "8", &url(&server, "/bytes/200000")]);
    assert!(body == expected::generated(200_000), "{} bytes, not the pattern", body.len());
}

#[test]
fn frames_over_tls() {
    let server = TlsServer::start(None, &BOTH);
    let (mut c, chosen) = h2_client(&server, &[b"h2", b"http/1.1"]);
    assert_eq!(chosen.as_deref(), Some(&b"h2"[..]));
    c.start(BIG_WINDOWS);
    assert!(matches!(c.next(), Got::Settings { ack: false, .. }));
    let r = c.get(1, "/bytes/100000");
    assert_eq!(r.status(), 200);
    assert!(r.body == expected::generated(100_000));
    let mut c2 = h2_client(&server, &[b"h2"]).0;
    c2.start(&[(SettingId::INITIAL_WINDOW_SIZE, 100)]);
    c2.request(1, "GET", "/bytes/100", true);
    let data = c2.next_matching(|g| matches!(g, Got::Data { .. }));
    assert_eq!(data, Got::Data { stream: 1, data: expected::generated(100), end_stream: true });
}

/// ALPN said h2, but the client does not send the preface: GOAWAY PROTOCOL_ERROR, then the
/// close (with close_notify).
#[test]
fn a_broken_preface_after_alpn_h2() {
    let server = TlsServer::start(None, &BOTH);
    let (mut c, _) = h2_client(&server, &[b"h2"]);
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    let (code, debug) = c.expect_goaway_and_close();
    assert_eq!(code, ErrorCode::PROTOCOL_ERROR);
    assert!(debug.contains("preface"), "{debug}");
}

/// A TLS client without ALPN may still speak HTTP/2 with prior knowledge.
#[test]
fn prior_knowledge_over_tls_without_alpn() {
    let server = TlsServer::start(None, &BOTH);
    let (mut c, chosen) = h2_client(&server, &[]);
    assert_eq!(chosen, None);
    c.start(BIG_WINDOWS);
    assert_eq!(c.get(1, "/bytes/4").body, b"0123");
}
