//! The connection between an agent and its coordinator: TCP (`host:port`, across machines)
//! or a Unix socket (`unix:/path`, on one machine). The Unix socket is what agents in network
//! namespaces of their own use: a namespace separates addresses, not the file system, so
//! every agent reaches the coordinator's socket file however its network is made.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Duration;

/// Where a coordinator listens, as `HERD_COORDINATOR` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// `host:port`: resolved when connecting (a Service name may resolve only later).
    Tcp(String),
    /// `unix:/path`.
    Unix(PathBuf),
}

impl Address {
    pub fn parse(text: &str) -> Address {
        match text.strip_prefix("unix:") {
            Some(path) => Address::Unix(PathBuf::from(path)),
            None => Address::Tcp(text.to_owned()),
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp(a) => f.write_str(a),
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// One connection, of either kind.
#[derive(Debug)]
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// Connects to `address` (each of its resolved addresses in turn, for TCP).
    pub(crate) fn connect(address: &Address) -> Result<Stream, String> {
        match address {
            Address::Unix(path) => UnixStream::connect(path)
                .map(Stream::Unix)
                .map_err(|e| format!("{}: {e}", path.display())),
            Address::Tcp(text) => {
                let addrs: Vec<SocketAddr> = text
                    .to_socket_addrs()
                    .map_err(|e| format!("cannot resolve it ({e})"))?
                    .collect();
                let mut last = format!("{text} resolves to no address");
                for addr in &addrs {
                    match TcpStream::connect_timeout(addr, Duration::from_secs(2)) {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            return Ok(Stream::Tcp(s));
                        }
                        Err(e) => last = format!("{addr}: {e}"),
                    }
                }
                Err(last)
            }
        }
    }

    pub(crate) fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    pub(crate) fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }

    /// Blocking, without Nagle's delay (frames are small and each one matters at once).
    fn settle(&self) {
        match self {
            Stream::Tcp(s) => {
                let _ = s.set_nonblocking(false);
                let _ = s.set_nodelay(true);
            }
            Stream::Unix(s) => {
                let _ = s.set_nonblocking(false);
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// A coordinator's listening socket, of either kind.
#[derive(Debug)]
pub(crate) enum Listener {
    Tcp(TcpListener),
    /// The socket file is removed when the listener goes.
    Unix(UnixListener, PathBuf),
}

impl Listener {
    pub(crate) fn bind(address: &Address) -> io::Result<Listener> {
        match address {
            Address::Tcp(text) => TcpListener::bind(text.as_str()).map(Listener::Tcp),
            Address::Unix(path) => {
                UnixListener::bind(path).map(|l| Listener::Unix(l, path.to_owned()))
            }
        }
    }

    /// Where agents reach it, as `HERD_COORDINATOR` says it.
    pub(crate) fn address(&self) -> Option<Address> {
        match self {
            Listener::Tcp(l) => l.local_addr().ok().map(|a| Address::Tcp(a.to_string())),
            Listener::Unix(_, path) => Some(Address::Unix(path.clone())),
        }
    }

    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.set_nonblocking(true),
            Listener::Unix(l, _) => l.set_nonblocking(true),
        }
    }

    /// The next connection, blocking and ready for frames.
    pub(crate) fn accept(&self) -> io::Result<Stream> {
        let s = match self {
            Listener::Tcp(l) => Stream::Tcp(l.accept()?.0),
            Listener::Unix(l, _) => Stream::Unix(l.accept()?.0),
        };
        s.settle();
        Ok(s)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_herd_coordinator_says_them() {
        assert_eq!(Address::parse("herd-0.herd:7070"), Address::Tcp("herd-0.herd:7070".into()));
        assert_eq!(Address::parse("unix:/tmp/c.sock"), Address::Unix("/tmp/c.sock".into()));
        assert_eq!(Address::parse("unix:/tmp/c.sock").to_string(), "unix:/tmp/c.sock");
    }

    #[test]
    fn a_unix_socket_carries_frames_and_goes_with_its_listener() {
        let path = std::env::temp_dir().join(format!("herd-stream-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let address = Address::Unix(path.clone());
        let l = Listener::bind(&address).unwrap();
        assert_eq!(l.address(), Some(address.clone()));
        let mut a = Stream::connect(&address).unwrap();
        let mut b = l.accept().unwrap();
        a.write_all(b"hello\n").unwrap();
        let mut buf = [0u8; 6];
        b.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hello\n");
        drop(l);
        assert!(!path.exists(), "the socket file is removed");
    }
}
