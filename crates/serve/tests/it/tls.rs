//! HTTPS: the self-signed certificate verified by a client that trusts the written CA, PEM
//! files (combined and apart), ALPN, and HTTP/1.1 over TLS answering exactly as over TCP
//! (generated bodies small and streamed, files copied and large, pipelining, /echo, closes
//! with close_notify). curl checks the same from outside.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use herd_serve::{AppProtocol, ServeConfig, ServeError, Server, TlsConfig, TlsIdentity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use crate::harness::{self, numbered_bytes, Client, TempDir, TestServer};

/// A TLS server with a self-signed certificate, and the CA file written for clients.
pub(crate) struct TlsServer {
    pub(crate) server: TestServer,
    pub(crate) ca: PathBuf,
    _dir: TempDir,
}

impl TlsServer {
    pub(crate) fn start(root: Option<&Path>, alpn: &[AppProtocol]) -> TlsServer {
        let dir = TempDir::new();
        let ca = dir.path().join("ca.pem");
        let config = ServeConfig {
            tls: Some(TlsConfig {
                identity: TlsIdentity::SelfSigned { write_ca: Some(ca.clone()) },
                alpn: alpn.to_vec(),
            }),
            ..harness::config(root)
        };
        TlsServer { server: TestServer::start_with(config), ca, _dir: dir }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// A verifying client offering `alpn`; the handshake is done when this returns.
    pub(crate) fn client(&self, alpn: &[&[u8]]) -> (Client, Option<Vec<u8>>) {
        let (stream, tcp) = connect(self.addr(), &self.ca, alpn).expect("TLS handshake");
        let negotiated = stream.conn.alpn_protocol().map(<[u8]>::to_vec);
        (Client::over(Box::new(stream), tcp), negotiated)
    }
}

pub(crate) type TlsStream = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;

/// Connects and completes the handshake, verifying the server against `ca` for 127.0.0.1.
pub(crate) fn connect(
    addr: SocketAddr,
    ca: &Path,
    alpn: &[&[u8]],
) -> Result<(TlsStream, std::net::TcpStream), rustls::Error> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = harness::tcp(addr);
    let mut stream = rustls::StreamOwned::new(conn, tcp.try_clone().unwrap());
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock).map_err(|e| match e.into_inner() {
            Some(inner) => match inner.downcast::<rustls::Error>() {
                Ok(tls) => *tls,
                Err(other) => rustls::Error::General(other.to_string()),
            },
            None => rustls::Error::General("I/O error in the handshake".into()),
        })?;
    }
    Ok((stream, tcp))
}

#[test]
fn http11_over_tls_answers_as_over_tcp() {
    let root = TempDir::new();
    let small = numbered_bytes(3000);
    let large = numbered_bytes(300_000);
    root.write("small.bin", &small);
    root.write("large.bin", &large);
    let server = TlsServer::start(Some(root.path()), &[AppProtocol::Http1]);
    let (mut c, alpn) = server.client(&[b"http/1.1"]);
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    let get = |c: &mut Client, target: &str| {
        c.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        c.response(false)
    };
    let r = get(&mut c, "/bytes/100");
    assert_eq!((r.status, r.body.len()), (200, 100));
    assert_eq!(&r.body[..10], b"0123456789");
    let streamed = get(&mut c, "/bytes/1000000");
    let pattern = herd_fileset::GENERATED_PATTERN;
    assert!(streamed.body.iter().enumerate().all(|(i, &b)| b == pattern[i % 64]));
    assert_eq!(streamed.body.len(), 1_000_000);
    assert_eq!(get(&mut c, "/small.bin").body, small);
    assert_eq!(get(&mut c, "/large.bin").body, large);
    let ranged = {
        c.send(b"GET /large.bin HTTP/1.1\r\nHost: t\r\nRange: bytes=100000-199999\r\n\r\n");
        c.response(false)
    };
    assert_eq!((ranged.status, &ranged.body[..]), (206, &large[100_000..200_000]));
    assert_eq!(get(&mut c, "/nope").status, 404);
    // Pipelined, then an echoed body, then a close that ends with close_notify.
    c.send(
        b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\nHEAD /9x9 HTTP/1.1\r\nHost: t\r\n\r\n\
          POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello\
          GET /bytes/2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(c.response(false).body, b"0");
    assert_eq!(c.response(true).header("Content-Length"), Some("1692"));
    assert_eq!(c.response(false).body, b"hello");
    assert_eq!(c.response(false).body, b"01");
    // A clean TLS end (close_notify): read_to_end returns Ok, not UnexpectedEof.
    assert!(c.is_closed());
    let stats = server.server.stop();
    assert_eq!(stats.n_requests, 10);
    assert_eq!(stats.n_connections, 1);
    // Plaintext bytes: at least every body.
    assert!(stats.bytes_written > 1_000_000 + 300_000 + 100_000 + 3000);
}

#[test]
fn a_client_without_alpn_gets_http11() {
    let server = TlsServer::start(None, &[AppProtocol::Http1]);
    let (mut c, alpn) = server.client(&[]);
    assert_eq!(alpn, None);
    c.send(b"GET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"012");
}

#[test]
fn a_client_offering_no_protocol_the_server_speaks_is_refused() {
    let server = TlsServer::start(None, &[AppProtocol::Http1]);
    let err = connect(server.addr(), &server.ca, &[b"spdy/3"]).expect_err("handshake fails");
    assert!(
        matches!(
            err,
            rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)
        ),
        "{err:?}"
    );
    // The server is unharmed.
    let (mut c, _) = server.client(&[b"http/1.1"]);
    c.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).status, 200);
}

#[test]
fn a_plain_client_on_the_tls_port_is_closed() {
    let server = TlsServer::start(None, &[AppProtocol::Http1]);
    let mut c = Client::connect(server.addr());
    c.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    // An alert (not HTTP), then the end.
    let rest = c.read_all();
    assert!(!rest.starts_with(b"HTTP/"), "{rest:?}");
    assert!(rest.len() < 64, "{} bytes", rest.len());
}

/// Certificate and key from PEM files, together in one and in two.
#[test]
fn pem_files_combined_and_apart() {
    let made = TempDir::new();
    let (cert, key) = write_identity(made.path());
    let both = made.path().join("both.pem");
    std::fs::write(&both, [std::fs::read(&cert).unwrap(), std::fs::read(&key).unwrap()].concat())
        .unwrap();
    for (cert, key) in [(cert.clone(), key.clone()), (both.clone(), both.clone())] {
        let config = ServeConfig {
            tls: Some(TlsConfig {
                identity: TlsIdentity::Pem { cert, key },
                alpn: vec![AppProtocol::Http1],
            }),
            ..harness::config(None)
        };
        let server = TestServer::start_with(config);
        let (stream, tcp) = connect(server.addr(), &made.path().join("ca.pem"), &[]).unwrap();
        let mut c = Client::over(Box::new(stream), tcp);
        c.send(b"GET /bytes/4 HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(c.response(false).body, b"0123");
    }
}

/// Writes a CA (`ca.pem`) and a certificate for 127.0.0.1 it signed (`cert.pem`, `key.pem`).
fn write_identity(dir: &Path) -> (PathBuf, PathBuf) {
    let ca_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".into()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    (dir.join("cert.pem"), dir.join("key.pem"))
}

#[test]
fn bad_identities_are_refused_at_bind_naming_the_file() {
    let dir = TempDir::new();
    let (cert, key) = write_identity(dir.path());
    let other = TempDir::new();
    let (_, other_key) = write_identity(other.path());
    let bind = |cert: &Path, key: &Path| {
        Server::bind(ServeConfig {
            tls: Some(TlsConfig {
                identity: TlsIdentity::Pem { cert: cert.to_owned(), key: key.to_owned() },
                alpn: vec![AppProtocol::Http1],
            }),
            ..harness::config(None)
        })
        .expect_err("bind refuses")
    };
    assert!(matches!(bind(&key, &key), ServeError::TlsNoCertificate { path } if path == key));
    assert!(matches!(bind(&cert, &cert), ServeError::TlsNoKey { path } if path == cert));
    let missing = dir.path().join("missing.pem");
    assert!(matches!(bind(&missing, &key), ServeError::TlsRead { path, .. } if path == missing));
    assert!(matches!(bind(&cert, &other_key), ServeError::TlsIdentity { .. }));
    let garbage = dir.write("garbage.pem", b"-----BEGIN CERTIFICATE-----\n!!!\n");
    assert!(matches!(bind(&garbage, &key), ServeError::TlsBadPem { path, .. } if path == garbage));
    let write_ca = Server::bind(ServeConfig {
        tls: Some(TlsConfig {
            identity: TlsIdentity::SelfSigned { write_ca: Some("/nonexistent/dir/ca.pem".into()) },
            alpn: vec![AppProtocol::Http1],
        }),
        ..harness::config(None)
    });
    assert!(matches!(write_ca, Err(ServeError::WriteCa { .. })));
}

/// curl, a client herd did not write, verifies the self-signed certificate with the CA file.
#[test]
fn curl_verifies_the_self_signed_certificate() {
    let server = TlsServer::start(None, &[AppProtocol::Http1]);
    let out = curl(&[
        "--cacert",
        server.ca.to_str().unwrap(),
        &format!("https://127.0.0.1:{}/bytes/64", server.addr().port()),
    ]);
    assert_eq!(out, herd_fileset::GENERATED_PATTERN);
    let out = curl(&[
        "--cacert",
        server.ca.to_str().unwrap(),
        &format!("https://localhost:{}/bytes/10", server.addr().port()),
        "--resolve",
        &format!("localhost:{}:127.0.0.1", server.addr().port()),
    ]);
    assert_eq!(out, b"0123456789");
}

/// Runs curl silently, failing on HTTP errors; returns the body. Panics naming the package
/// if curl is missing.
#[allow(clippy::disallowed_methods)] // the test runs the client it checks against, and waits for it
pub(crate) fn curl(args: &[&str]) -> Vec<u8> {
    let output = Command::new("curl")
        .args(["--silent", "--show-error", "--fail", "--max-time", "10"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run curl ({e}): install the package curl"));
    assert!(output.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}
