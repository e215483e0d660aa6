//! What every test needs: a server on a free port that stops when dropped, a client that
//! sends raw bytes and reads responses framed by Content-Length, and a temporary root directory.
//! No assertions about the server live here.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use herd_serve::{ServeConfig, ServeError, ServeStats, Server, StopHandle};

/// Long enough for a loaded CI machine, short enough that a hang fails quickly.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) struct TestServer {
    addr: SocketAddr,
    stop: StopHandle,
    thread: Option<JoinHandle<Result<ServeStats, ServeError>>>,
}

impl TestServer {
    /// Two workers, serving `root` if given.
    pub(crate) fn start(root: Option<&Path>) -> TestServer {
        TestServer::start_with(config(root))
    }

    pub(crate) fn start_with(config: ServeConfig) -> TestServer {
        let server = Server::bind(config).expect("bind");
        let addr = server.local_addr();
        let stop = StopHandle::new();
        let run_stop = stop.clone();
        let thread = std::thread::spawn(move || server.run(run_stop));
        TestServer { addr, stop, thread: Some(thread) }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server and returns its counters.
    pub(crate) fn stop(mut self) -> ServeStats {
        self.stop.stop();
        self.thread.take().unwrap().join().unwrap().unwrap()
    }

    pub(crate) fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// One request on a fresh connection, closed after the response.
    pub(crate) fn get(&self, target: &str) -> Response {
        let mut c = self.client();
        c.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes());
        c.response(false)
    }

    /// A request with extra header lines (each ending in CRLF).
    pub(crate) fn get_with(&self, target: &str, headers: &str) -> Response {
        let mut c = self.client();
        c.send(
            format!("GET {target} HTTP/1.1\r\nHost: t\r\n{headers}Connection: close\r\n\r\n")
                .as_bytes(),
        );
        c.response(false)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A TCP connection with the tests' timeouts.
pub(crate) fn tcp(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream
}

/// The configuration tests start from: 127.0.0.1:0, two workers.
pub(crate) fn config(root: Option<&Path>) -> ServeConfig {
    ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        root: root.map(Path::to_owned),
        threads: 2,
        ..ServeConfig::default()
    }
}

pub(crate) struct Client {
    reader: BufReader<Counted>,
}

/// A stream that counts the bytes read from it, so tests can compare with the server's count.
/// The stream is TCP or TLS over it; `tcp` is the socket, for shutdown.
pub(crate) struct Counted {
    stream: Box<dyn ReadWrite>,
    tcp: TcpStream,
    n_read: u64,
}

pub(crate) trait ReadWrite: Read + Write + Send {}
impl<T: Read + Write + Send> ReadWrite for T {}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.stream.read(buf)?;
        self.n_read += n as u64;
        Ok(n)
    }
}

impl Client {
    pub(crate) fn connect(addr: SocketAddr) -> Client {
        let stream = tcp(addr);
        let tcp = stream.try_clone().unwrap();
        Client { reader: BufReader::new(Counted { stream: Box::new(stream), tcp, n_read: 0 }) }
    }

    /// A client over another stream (TLS) on the socket `tcp`.
    pub(crate) fn over(stream: Box<dyn ReadWrite>, tcp: TcpStream) -> Client {
        Client { reader: BufReader::new(Counted { stream, tcp, n_read: 0 }) }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let stream = &mut self.reader.get_mut().stream;
        stream.write_all(bytes).and_then(|()| stream.flush()).expect("send");
    }

    /// Like [`send`](Self::send), but reports failure (the server closed the connection).
    pub(crate) fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stream = &mut self.reader.get_mut().stream;
        stream.write_all(bytes).and_then(|()| stream.flush())
    }

    /// Bytes read from the socket so far (some may still sit in the read buffer).
    pub(crate) fn bytes_read(&self) -> u64 {
        self.reader.get_ref().n_read
    }

    pub(crate) fn shutdown_write(&mut self) {
        self.reader.get_mut().tcp.shutdown(Shutdown::Write).unwrap();
    }

    /// Reads one response; `head_request` says there is no body whatever Content-Length says.
    pub(crate) fn response(&mut self, head_request: bool) -> Response {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        assert!(line.starts_with("HTTP/1.1 "), "status line {line:?}");
        let status = line[9..12].parse().expect("status code");
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("header line");
            assert!(line.ends_with("\r\n"), "header line {line:?}");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(": ").expect("header syntax");
            headers.push((name.to_owned(), value.to_owned()));
        }
        let mut response = Response { status, headers, body: Vec::new() };
        if head_request || status == 304 || status == 204 || status < 200 {
            return response;
        }
        if response.header("Transfer-Encoding") == Some("chunked") {
            response.body = self.chunked_body();
        } else {
            let len: usize =
                response.header("Content-Length").expect("Content-Length").parse().unwrap();
            response.body.resize(len, 0);
            self.reader.read_exact(&mut response.body).expect("body");
        }
        response
    }

    /// Reads a chunked body strictly (CRLF everywhere, no extensions, no trailers): what
    /// herd serve sends.
    fn chunked_body(&mut self) -> Vec<u8> {
        let mut body = Vec::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("chunk size line");
            let size = line.strip_suffix("\r\n").expect("chunk size line ends in CRLF");
            let size = usize::from_str_radix(size, 16).expect("chunk size in hex");
            let start = body.len();
            body.resize(start + size + 2, 0);
            self.reader.read_exact(&mut body[start..]).expect("chunk data");
            assert_eq!(&body[start + size..], b"\r\n", "chunk data ends in CRLF");
            body.truncate(start + size);
            if size == 0 {
                return body;
            }
        }
    }

    /// Everything until the server closes (EOF or reset).
    pub(crate) fn read_all(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        let _ = self.reader.read_to_end(&mut all);
        all
    }

    /// Whether the server closed the connection (EOF, or a reset if it closed with input
    /// unread) with nothing more sent. Panics if it stays open past the read timeout.
    pub(crate) fn is_closed(&mut self) -> bool {
        let mut rest = Vec::new();
        match self.reader.read_to_end(&mut rest) {
            Ok(_) => rest.is_empty(),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => rest.is_empty(),
            Err(e) => panic!("connection still open: {e}"),
        }
    }
}

#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub(crate) fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name =
            format!("herd-serve-test-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        let path = std::env::temp_dir().join(name);
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` at `rel`, creating parent directories.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// `n` bytes that differ from their neighbours, so an offset error shows.
pub(crate) fn numbered_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}
