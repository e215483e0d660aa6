//! An HTTP/3 server that misbehaves on purpose, on quinn-proto's server side (the real
//! servers behave): it completes the handshake, opens its control stream with SETTINGS,
//! reads each request, then does what its [`Behaviour`] says. One thread, a plain UDP
//! socket, stopped on drop.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use herd_proto::h3::frame::{self, kind};
use herd_proto::h3::qpack::encode_field_section;
use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{
    ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig, Event, ServerConfig,
    StreamEvent, VarInt,
};

/// What the server does once it has read a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Answers 200 with a 5-byte body.
    Answer,
    /// Sends HEADERS saying 1000 bytes and 10 of them, then closes the connection with
    /// H3_INTERNAL_ERROR and a reason.
    CloseMidBody,
    /// Resets the request's stream with H3_REQUEST_CANCELLED (0x10c).
    ResetStream,
    /// Answers with a frame HTTP/3 forbids on a request stream (SETTINGS).
    FrameOnRequest,
    /// Answers 200 with a body longer than its content-length.
    BodyPastLength,
}

pub struct HostileServer {
    pub addr: SocketAddr,
    pub requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HostileServer {
    pub fn start(behaviour: Behaviour, cert_dir: &std::path::Path) -> HostileServer {
        let certs: Vec<_> =
            rustls::pki_types::CertificateDer::pem_file_iter(cert_dir.join("cert.pem"))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        let key =
            rustls::pki_types::PrivateKeyDer::from_pem_file(cert_dir.join("key.pem")).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        tls.alpn_protocols = vec![b"h3".to_vec()];
        tls.max_early_data_size = u32::MAX;
        let crypto = QuicServerConfig::try_from(Arc::new(tls)).unwrap();
        let config = Arc::new(ServerConfig::with_crypto(Arc::new(crypto)));
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (s, r) = (stop.clone(), requests.clone());
        let thread = std::thread::spawn(move || serve(socket, config, behaviour, &s, &r));
        HostileServer { addr, requests, stop, thread: Some(thread) }
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

use rustls::pki_types::pem::PemObject;

fn headers(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    encode_field_section(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut block);
    let mut out = Vec::new();
    frame::encode(kind::HEADERS, &block, &mut out);
    out
}

fn serve(
    socket: UdpSocket,
    config: Arc<ServerConfig>,
    behaviour: Behaviour,
    stop: &AtomicBool,
    requests: &AtomicUsize,
) {
    let mut endpoint =
        Endpoint::new(Arc::new(EndpointConfig::default()), Some(config), false, None);
    let mut conns: HashMap<ConnectionHandle, quinn_proto::Connection> = HashMap::new();
    // Connections to close once what was written before has left (CloseMidBody).
    let mut close_at: HashMap<ConnectionHandle, Instant> = HashMap::new();
    let mut buf = vec![0u8; 65_536];
    let mut out = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            out.clear();
            match endpoint.handle(now, from, None, None, BytesMut::from(&buf[..n]), &mut out) {
                Some(DatagramEvent::NewConnection(incoming)) => {
                    match endpoint.accept(incoming, now, &mut out, None) {
                        Ok((ch, conn)) => {
                            conns.insert(ch, conn);
                        }
                        Err(e) => {
                            if let Some(t) = e.response {
                                let _ = socket.send_to(&out[..t.size], t.destination);
                            }
                        }
                    }
                }
                Some(DatagramEvent::ConnectionEvent(ch, event)) => {
                    if let Some(conn) = conns.get_mut(&ch) {
                        conn.handle_event(event);
                    }
                }
                Some(DatagramEvent::Response(t)) => {
                    let _ = socket.send_to(&out[..t.size], t.destination);
                }
                None => {}
            }
        }
        let now = Instant::now();
        for (&ch, conn) in conns.iter_mut() {
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
            if close_at.get(&ch).is_some_and(|&t| t <= now) {
                close_at.remove(&ch);
                conn.close(now, VarInt::from_u32(0x102), Bytes::from_static(b"going away"));
            }
            while let Some(event) = conn.poll() {
                match event {
                    Event::Connected => {
                        if let Some(id) = conn.streams().open(Dir::Uni) {
                            let mut control = vec![0x00];
                            frame::encode_settings(&[], &mut control);
                            let _ = conn.send_stream(id).write(&control);
                        }
                    }
                    Event::Stream(StreamEvent::Opened { dir }) => {
                        while let Some(id) = conn.streams().accept(dir) {
                            if drain(conn, id, dir, behaviour, requests) {
                                close_at.insert(ch, now + Duration::from_millis(50));
                            }
                        }
                    }
                    Event::Stream(StreamEvent::Readable { id })
                        if drain(conn, id, id.dir(), behaviour, requests) =>
                    {
                        close_at.insert(ch, now + Duration::from_millis(50));
                    }
                    _ => {}
                }
            }
            while let Some(event) = conn.poll_endpoint_events() {
                if let Some(answer) = endpoint.handle_event(ch, event) {
                    conn.handle_event(answer);
                }
            }
            loop {
                out.clear();
                let Some(t) = conn.poll_transmit(now, 1, &mut out) else { break };
                let _ = socket.send_to(&out[..t.size], t.destination);
            }
        }
        conns.retain(|_, c| !c.is_drained());
    }
}

/// Reads a stream; at a request's end, misbehaves. True: close the connection soon.
fn drain(
    conn: &mut quinn_proto::Connection,
    id: quinn_proto::StreamId,
    dir: Dir,
    behaviour: Behaviour,
    requests: &AtomicUsize,
) -> bool {
    let mut finished = false;
    {
        let mut recv = conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return false };
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(_)) => {}
                Ok(None) => {
                    finished = true;
                    break;
                }
                Err(_) => break,
            }
        }
        let _ = chunks.finalize();
    }
    if !finished || dir != Dir::Bi {
        return false;
    }
    requests.fetch_add(1, Ordering::SeqCst);
    let mut send = conn.send_stream(id);
    match behaviour {
        Behaviour::Answer => {
            let mut bytes = headers(&[(":status", "200"), ("content-length", "5")]);
            frame::encode(kind::DATA, b"hello", &mut bytes);
            let _ = send.write(&bytes);
            let _ = send.finish();
        }
        Behaviour::CloseMidBody => {
            let mut bytes = headers(&[(":status", "200"), ("content-length", "1000")]);
            frame::encode_header(kind::DATA, 1000, &mut bytes);
            bytes.extend_from_slice(&[b'x'; 10]);
            let _ = send.write(&bytes);
            return true;
        }
        Behaviour::ResetStream => {
            let _ = send.reset(VarInt::from_u32(0x10c));
        }
        Behaviour::FrameOnRequest => {
            let mut bytes = headers(&[(":status", "200")]);
            frame::encode_settings(&[], &mut bytes);
            let _ = send.write(&bytes);
            let _ = send.finish();
        }
        Behaviour::BodyPastLength => {
            let mut bytes = headers(&[(":status", "200"), ("content-length", "3")]);
            frame::encode(kind::DATA, b"12345", &mut bytes);
            let _ = send.write(&bytes);
            let _ = send.finish();
        }
    }
    false
}
