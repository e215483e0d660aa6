//! Test servers on 127.0.0.1:0 (a thread per connection, behaviour given as a closure)
//! and a counting recorder.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use herd_engine::{Completed, Control, Failed, Recorder, RunSpec, SocketOptions, Target, Verdict};
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

/// A port on 127.0.0.1 with nothing listening.
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

pub fn spec(port: u16, connections: u32, requests: u64) -> RunSpec {
    RunSpec {
        target: Target::resolve("127.0.0.1", port, None).unwrap(),
        workload: herd_engine::Workload::single(herd_engine::Prepared::new(
            b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
            false,
        )),
        connections,
        threads: 2,
        keep_alive: false,
        max_requests: Some(requests),
        duration: None,
        timeout: Duration::from_secs(5),
        limits: herd_proto::Limits::default(),
        schedule: herd_engine::Schedule::Closed,
        socket: SocketOptions::default(),
        per_connection: None,
        think: None,
        receive_rate: None,
        seed: 0,
        pipeline: 1,
    }
}

pub fn run(spec: &RunSpec) -> Counts {
    let control = Control::new();
    let r = herd_engine::run(spec, &control, |_| Counts::default()).unwrap();
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
    fn completed(&mut self, c: &Completed<'_>) -> Verdict {
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
        *self.statuses.entry(c.head.status).or_default() += 1;
        Verdict::Continue
    }

    fn failed(&mut self, f: &Failed) -> Verdict {
        *self.failures.entry(f.kind).or_default() += 1;
        Verdict::Continue
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
            let mut tls = rustls::StreamOwned::new(conn, s);
            loop {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match tls.read(&mut b) {
                        Ok(1) => head.push(b[0]),
                        _ => return,
                    }
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
            }
        });
        TlsServer { port: inner.port, _inner: inner }
    }
}

pub fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}
