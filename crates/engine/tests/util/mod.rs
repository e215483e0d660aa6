//! Test servers on 127.0.0.1:0 (a thread per connection, behaviour given as a closure)
//! and a counting recorder.
#![allow(dead_code, unreachable_pub)]

pub mod h2_peer;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::num::{NonZeroU32, NonZeroU64};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use herd_engine::{
    Answer, Arrivals, Completed, Control, Failed, Recorder, RequestRate, Reuse, RunSpec, Schedule,
    StopAt, Target,
};
use herd_stats::FailureKind;

/// A TCP server that runs `handler` on a thread for every accepted connection.
pub struct TestServer {
    pub port: u16,
    accepted: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub fn start<F>(handler: F) -> TestServer
    where
        F: Fn(TcpStream) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let handler = Arc::new(handler);
        let (a, st) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            for s in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(s) = s else { continue };
                a.fetch_add(1, Ordering::SeqCst);
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let h = handler.clone();
                std::thread::spawn(move || h(s));
            }
        });
        TestServer { port, accepted, stop }
    }

    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Reads one request head (up to the blank line) and returns it as text.
pub fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Answers every request on the connection with `response` until the client closes.
pub fn serve_keep_alive(s: &mut TcpStream, response: &[u8]) {
    loop {
        let head = read_head(s);
        if head.is_empty() {
            return;
        }
        if s.write_all(response).is_err() {
            return;
        }
    }
}

/// Closes with a TCP reset (SO_LINGER 0).
pub fn reset(s: TcpStream) {
    let sock = socket2::Socket::from(s);
    let _ = sock.set_linger(Some(Duration::ZERO));
    drop(sock);
}

/// `requests` requests over `connections` connections (2 threads, 5 s timeout, a closed loop
/// without keep-alive, `GET / HTTP/1.0`).
pub fn spec(port: u16, connections: u32, requests: u64) -> RunSpec {
    spec_until(port, connections, StopAt::Requests(NonZeroU64::new(requests).unwrap()))
}

/// As [`spec`], stopping at `stop`.
pub fn spec_until(port: u16, connections: u32, stop: StopAt) -> RunSpec {
    RunSpec {
        connections: NonZeroU32::new(connections).unwrap(),
        threads: NonZeroU32::new(2).unwrap(),
        stop,
        timeout: Duration::from_secs(5),
        ..RunSpec::for_tests(Target::resolve("127.0.0.1", port, None).unwrap())
    }
}

/// A closed loop on kept-alive connections.
pub const KEEP_ALIVE: Schedule =
    Schedule::Closed { reuse: Reuse::KeepAlive { per_connection: None }, think: None };

/// An open loop at `per_second`.
pub fn rate(per_second: f64, arrivals: Arrivals, reuse: Reuse) -> Schedule {
    Schedule::Rate { rate: RequestRate::new(per_second).unwrap(), arrivals, reuse }
}

/// A non-zero count.
pub fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).unwrap()
}

pub fn run(spec: &RunSpec) -> Counts {
    let control = Control::new();
    let r = herd_engine::run(spec, &control, |_, _| Counts::default()).unwrap();
    let mut c = Counts::default();
    for w in &r.recorders {
        c.merge(w);
    }
    c
}

#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub completed: u64,
    pub new_connections: u64,
    pub reused: u64,
    pub body_bytes: u64,
    pub statuses: BTreeMap<u16, u64>,
    pub failures: BTreeMap<FailureKind, u64>,
    pub max_connect_us: u128,
}

impl Counts {
    pub fn failures_total(&self) -> u64 {
        self.failures.values().sum()
    }

    pub fn merge(&mut self, o: &Counts) {
        self.completed += o.completed;
        self.new_connections += o.new_connections;
        self.reused += o.reused;
        self.body_bytes += o.body_bytes;
        for (k, v) in &o.statuses {
            *self.statuses.entry(*k).or_default() += v;
        }
        for (k, v) in &o.failures {
            *self.failures.entry(*k).or_default() += v;
        }
        self.max_connect_us = self.max_connect_us.max(o.max_connect_us);
    }
}

impl Recorder for Counts {
    fn completed(&mut self, c: &Completed<'_>) -> Answer {
        self.completed += 1;
        if c.reused {
            self.reused += 1;
        } else {
            self.new_connections += 1;
            if let Some(t) = c.timing.connected {
                self.max_connect_us = self.max_connect_us.max((t - c.timing.start).as_micros());
            }
        }
        self.body_bytes += c.body_bytes;
        *self.statuses.entry(c.status).or_default() += 1;
        Answer::Continue
    }

    fn failed(&mut self, f: &Failed) -> Answer {
        *self.failures.entry(f.kind).or_default() += 1;
        Answer::Continue
    }
}

/// The client's TLS for the test servers (no verification: a self-signed certificate).
pub fn tls_settings() -> herd_engine::TlsSettings {
    herd_engine::TlsSettings {
        versions: herd_engine::TlsVersions::All,
        cipher_suites: None,
        client_cert: None,
        ca_file: None,
        sni: Some("localhost".into()),
        alpn: vec![],
        resume: false,
    }
}

/// A TLS server (rustls, self-signed P-256 certificate for "localhost") answering every
/// request on a connection with `response`.
pub struct TlsServer {
    pub port: u16,
    _inner: TestServer,
}

impl TlsServer {
    pub fn start(response: &'static [u8]) -> TlsServer {
        TlsServer::start_with(response, false)
    }

    /// Like `start`, but sends close_notify and closes after each response.
    pub fn start_closing(response: &'static [u8]) -> TlsServer {
        TlsServer::start_with(response, true)
    }

    fn start_with(response: &'static [u8], close: bool) -> TlsServer {
        TlsServer::serve(move |tls| loop {
            if read_tls_head(tls).is_empty() {
                return;
            }
            if tls.write_all(response).is_err() {
                return;
            }
            let _ = tls.flush();
            if close {
                tls.conn.send_close_notify();
                let _ = tls.flush();
                return;
            }
        })
    }

    /// Runs `handler` on every connection, once its TLS session is set up (the handshake
    /// completes on the first read or write).
    pub fn serve<F>(handler: F) -> TlsServer
    where
        F: Fn(&mut TlsStream) + Send + Sync + 'static,
    {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let cert_der = cert.der().clone();
        let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert_der], key_der)
            .unwrap();
        let config = Arc::new(config);
        let inner = TestServer::start(move |s| {
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            handler(&mut rustls::StreamOwned::new(conn, s));
        });
        TlsServer { port: inner.port, _inner: inner }
    }
}

/// A test server's side of a TLS connection.
pub type TlsStream = rustls::StreamOwned<rustls::ServerConnection, TcpStream>;

/// Reads one request head over TLS (empty when the client has gone).
pub fn read_tls_head(tls: &mut TlsStream) -> Vec<u8> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tls.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return Vec::new(),
        }
    }
    head
}

pub fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}
