//! Real HTTP/3 servers on 127.0.0.1 for the QUIC driver's tests and its micro-benchmark
//! (Debian's ngtcp2 example server and caddy, each started by PID in a temporary directory
//! with certificates from rcgen), a silent UDP peer, and a one-connection mio loop that
//! drives an [`H3Conn`] through N requests on m streams and says what happened.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers they check

pub mod hostile;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use herd_engine::quic::{
    H3Conn, H3Event, IoBuffers, Offload, QuicClient, QuicFailure, QuicSettings, QuicStats,
};
use herd_engine::{TlsSettings, TlsVersions};
use herd_proto::h3::{encode_request, Part};
use herd_proto::Request;
use mio::{Events, Interest, Poll, Token};

/// A directory under the system's temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(what: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("herd-quic-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA and a certificate it signed for `localhost` and 127.0.0.1, as PEM files in `dir`:
/// `ca.pem`, `cert.pem`, `key.pem`.
pub fn write_certificates(dir: &Path) {
    let ca_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, "herd test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let params =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
}

/// The files every server serves, from `dir/www`.
pub const SMALL: &[u8] = b"hello, quic!\n";

pub fn large() -> Vec<u8> {
    (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect()
}

fn write_docroot(dir: &Path) -> PathBuf {
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("small.txt"), SMALL).unwrap();
    std::fs::write(www.join("large.bin"), large()).unwrap();
    www
}

/// A server process started for a test, stopped (by its PID) on drop.
pub struct Server {
    pub addr: SocketAddr,
    pub name: &'static str,
    child: Child,
    pub dir: TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn require(path: &str, package: &str) {
    assert!(
        Path::new(path).exists(),
        "{path} is missing: apt-get install {package} (scripts/test.sh installs it)"
    );
}

use herd_testutil::ports::free_tcp_udp_port as free_port;

impl Server {
    /// Debian's ngtcp2 example server (`gtlsserver`, package ngtcp2-server).
    pub fn ngtcp2() -> Server {
        require("/usr/sbin/gtlsserver", "ngtcp2-server");
        let dir = TempDir::new("ngtcp2");
        write_certificates(&dir.0);
        let www = write_docroot(&dir.0);
        let port = free_port();
        let child = Command::new("/usr/sbin/gtlsserver")
            .arg("-q")
            .arg("-d")
            .arg(&www)
            .args(["127.0.0.1", &port.to_string()])
            .arg(dir.0.join("key.pem"))
            .arg(dir.0.join("cert.pem"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server =
            Server { addr: SocketAddr::from(([127, 0, 0, 1], port)), name: "ngtcp2", child, dir };
        server.wait_ready();
        server
    }

    /// caddy (package caddy), HTTP/3 on by default, serving the docroot over h1/h2/h3.
    pub fn caddy() -> Server {
        require("/usr/bin/caddy", "caddy");
        let dir = TempDir::new("caddy");
        write_certificates(&dir.0);
        let www = write_docroot(&dir.0);
        let port = free_port();
        let http_port = free_port();
        let caddyfile = format!(
            "{{\n\tadmin off\n\tauto_https disable_redirects\n\thttp_port {http_port}\n\
             \thttps_port {port}\n}}\n\
             https://127.0.0.1:{port}, https://localhost:{port} {{\n\
             \tbind 127.0.0.1\n\ttls {cert} {key}\n\troot * {www}\n\tfile_server\n}}\n",
            cert = dir.0.join("cert.pem").display(),
            key = dir.0.join("key.pem").display(),
            www = www.display(),
        );
        let config = dir.0.join("Caddyfile");
        std::fs::write(&config, caddyfile).unwrap();
        let log = std::fs::File::create(dir.0.join("caddy.log")).unwrap();
        let child = Command::new("/usr/bin/caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&config)
            .env("HOME", &dir.0)
            .env("XDG_DATA_HOME", dir.0.join("data"))
            .env("XDG_CONFIG_HOME", dir.0.join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let server =
            Server { addr: SocketAddr::from(([127, 0, 0, 1], port)), name: "caddy", child, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(server.addr).is_err() {
            assert!(Instant::now() < deadline, "caddy did not listen: {}", server.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        server.wait_ready();
        server
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("caddy.log")).unwrap_or_default()
    }

    /// Until one HTTP/3 request succeeds (the server's UDP socket is up).
    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let plan = Plan { requests: 1, streams: 1, ..Plan::new(self, "/small.txt") };
            let mut settings = plan.settings.clone();
            settings.handshake_timeout = Duration::from_millis(500);
            let out = run(self.addr, &Plan { settings, ..plan });
            if out.ok == 1 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} never answered over HTTP/3: {:?}",
                self.name,
                out.failures
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A UDP socket that reads everything sent to it and never answers.
pub struct SilentPeer {
    pub addr: SocketAddr,
    pub received: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl SilentPeer {
    pub fn start() -> SilentPeer {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let addr = socket.local_addr().unwrap();
        let received = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (received.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 65_536];
            while !s.load(Ordering::SeqCst) {
                if socket.recv(&mut buf).is_ok() {
                    r.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        SilentPeer { addr, received, stop }
    }
}

impl Drop for SilentPeer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// What to send over one connection.
#[derive(Clone)]
pub struct Plan {
    pub requests: usize,
    pub streams: usize,
    pub path: String,
    pub authority: String,
    pub settings: QuicSettings,
    /// Gives up after this long (the test fails if it is reached: nothing may hang).
    pub limit: Duration,
    /// Body bytes to expect in every response, checked byte for byte.
    pub expect_body: Option<Vec<u8>>,
    /// Waits this long after the handshake before the first request.
    pub hold_first: Duration,
}

impl Plan {
    pub fn new(server: &Server, path: &str) -> Plan {
        Plan::to(server.addr, path, Some(server.dir.0.join("ca.pem")))
    }

    /// `ca`: verify the server's chain with it; None: `-k`.
    pub fn to(addr: SocketAddr, path: &str, ca: Option<PathBuf>) -> Plan {
        let tls = TlsSettings {
            versions: TlsVersions::All,
            cipher_suites: None,
            client_cert: None,
            ca_file: ca,
            sni: Some("localhost".into()),
            alpn: Vec::new(),
            resume: false,
        };
        Plan {
            requests: 1,
            streams: 1,
            path: path.into(),
            authority: format!("localhost:{}", addr.port()),
            settings: QuicSettings::new(tls),
            limit: Duration::from_secs(30),
            expect_body: None,
            hold_first: Duration::ZERO,
        }
    }

    pub fn offload(mut self, offload: Offload) -> Plan {
        self.settings.offload = offload;
        self
    }
}

/// What one connection did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub ok: usize,
    pub statuses: std::collections::BTreeMap<u16, usize>,
    /// Responses whose body differed from the expected one.
    pub wrong_bodies: usize,
    pub body_bytes: u64,
    pub failures: Vec<QuicFailure>,
    pub closed: Option<QuicFailure>,
    pub handshake: Option<Duration>,
    /// Submit to FirstByte and to end, per request, in submit order.
    pub first_byte: Vec<Duration>,
    pub latency: Vec<Duration>,
    /// When the connection started, to its end or the last response.
    pub elapsed: Duration,
    pub stats: QuicStats,
    pub hit_limit: bool,
    /// The server's header fields of the first response (name, value).
    pub first_fields: Vec<(String, String)>,
}

/// One connection to `addr` carrying `plan.requests` requests, at most `plan.streams` at a
/// time, then closed. Bounded by `plan.limit`.
pub fn run(addr: SocketAddr, plan: &Plan) -> Outcome {
    let host = plan.settings.tls.sni.clone().unwrap_or_else(|| addr.ip().to_string());
    let client = QuicClient::new(&plan.settings, &host).unwrap();
    let request = Request {
        method: "GET".into(),
        target: plan.path.clone(),
        version: "HTTP/1.1",
        headers: vec![("User-Agent".into(), "herd-test".into())],
        body: Vec::new(),
    };
    let mut bytes = Vec::new();
    encode_request(&request, "https", &plan.authority, &mut bytes).unwrap();
    let request = Bytes::from(bytes);

    let start = Instant::now();
    let deadline = start + plan.limit;
    let mut out = Outcome::default();
    let mut conn = match H3Conn::connect(&client, addr, plan.streams, start) {
        Ok(conn) => conn,
        Err(e) => {
            out.closed = Some(e);
            return out;
        }
    };
    let mut poll = Poll::new().unwrap();
    let mut events = Events::with_capacity(8);
    poll.registry()
        .register(conn.quic().socket(), Token(0), Interest::READABLE | Interest::WRITABLE)
        .unwrap();
    let mut io = IoBuffers::new();
    conn.flush(start, &mut io);

    let mut submitted = 0usize;
    let mut sent_at: Vec<Instant> = Vec::with_capacity(plan.requests);
    let mut bodies: std::collections::HashMap<u64, Vec<u8>> = std::collections::HashMap::new();
    let mut first: Vec<Option<Instant>> = Vec::with_capacity(plan.requests);
    let mut done = 0usize;
    let mut closed = false;
    let expect = plan.expect_body.clone();
    type Bodies = std::collections::HashMap<u64, Vec<u8>>;
    let handle = |event: H3Event<'_>,
                  now: Instant,
                  out: &mut Outcome,
                  first: &mut Vec<Option<Instant>>,
                  sent_at: &[Instant],
                  bodies: &mut Bodies| match event {
        H3Event::Connected { handshake } => out.handshake = Some(handshake),
        H3Event::FirstByte { tag } => first[tag as usize] = Some(now),
        H3Event::Part { tag, part } => {
            match part {
                // Gathered only to be checked (the benchmark does not pay for it).
                Part::Body(piece) if expect.is_some() => {
                    bodies.entry(tag).or_default().extend_from_slice(piece)
                }
                Part::Field(n, v) if tag == 0 => out.first_fields.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )),
                _ => {}
            }
        }
        H3Event::Response { tag, result } => {
            let body = bodies.remove(&tag).unwrap_or_default();
            match result {
                Ok(r) => {
                    out.ok += 1;
                    *out.statuses.entry(r.status).or_default() += 1;
                    out.body_bytes += r.body_bytes;
                    if let Some(want) = &expect {
                        assert_eq!(r.body_bytes, body.len() as u64, "counted = handed out");
                        out.wrong_bodies += usize::from(*want != body);
                    }
                }
                Err(e) => out.failures.push(e),
            }
            let t = tag as usize;
            out.latency.push(now - sent_at[t]);
            if let Some(f) = first[t] {
                out.first_byte.push(f - sent_at[t]);
            }
        }
        H3Event::Ready => {}
        H3Event::Closed(f) => out.closed = Some(f.clone()),
    };
    while !closed {
        let now = Instant::now();
        if now >= deadline {
            out.hit_limit = true;
            break;
        }
        // Start what may start.
        let held = out.handshake.is_some_and(|h| start.elapsed() < h + plan.hold_first);
        while !held && submitted < plan.requests && conn.can_submit() {
            if conn.submit(&request, false, submitted as u64).is_err() {
                break;
            }
            sent_at.push(Instant::now());
            first.push(None);
            submitted += 1;
        }
        conn.flush(Instant::now(), &mut io);
        let mut wake = conn.poll_timeout().unwrap_or(deadline).min(deadline);
        if let Some(h) = out.handshake.filter(|_| submitted == 0) {
            wake = wake.min(start + h + plan.hold_first);
        }
        let timeout = wake.saturating_duration_since(Instant::now());
        poll.poll(&mut events, Some(timeout)).unwrap();
        let now = Instant::now();
        let mut before = done;
        for event in events.iter() {
            // A socket error (ICMP port unreachable) is read by a receive.
            if event.is_readable() || event.is_error() {
                conn.on_readable(now, &mut io, |e| {
                    if matches!(e, H3Event::Response { .. }) {
                        before += 1;
                    }
                    handle(e, now, &mut out, &mut first, &sent_at, &mut bodies);
                });
            }
            if event.is_writable() {
                conn.on_writable(now, &mut io);
            }
        }
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.on_timeout(now, &mut io, |e| {
                if matches!(e, H3Event::Response { .. }) {
                    before += 1;
                }
                handle(e, now, &mut out, &mut first, &sent_at, &mut bodies);
            });
        }
        done = before;
        if done >= plan.requests && !conn.is_closed() {
            out.elapsed = start.elapsed();
            out.stats = conn.stats();
            conn.close(Instant::now(), &mut io, |e| {
                handle(e, now, &mut out, &mut first, &sent_at, &mut bodies)
            });
        }
        closed = conn.is_closed() && (done >= plan.requests || out.closed.is_some());
    }
    if out.elapsed.is_zero() {
        out.elapsed = start.elapsed();
        out.stats = conn.stats();
    }
    if out.closed == Some(QuicFailure::Closed) {
        out.closed = None;
    }
    out
}
