//! The errors that stop a server from starting or running. Per-request problems (malformed
//! requests, missing files, limits) are not here: they are answered with a status and counted.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Why [`Server::bind`](crate::Server::bind) or [`Server::run`](crate::Server::run) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Another socket (another program, or another herd serve) already listens on the address.
    #[error("{addr} is already in use")]
    AddrInUse { addr: SocketAddr },
    /// Binding needs a privilege the process lacks (ports below 1024).
    #[error("permission denied listening on {addr}")]
    BindDenied { addr: SocketAddr },
    /// Any other failure to create, bind or listen on a socket (e.g. an address not on this host).
    #[error("cannot listen on {addr}")]
    Bind { addr: SocketAddr, source: io::Error },
    /// The configured root does not exist.
    #[error("root `{}` does not exist", .path.display())]
    RootMissing { path: PathBuf },
    /// The configured root exists but is not a directory.
    #[error("root `{}` is not a directory", .path.display())]
    RootNotDirectory { path: PathBuf },
    /// The configured root cannot be read by this process.
    #[error("root `{}`: permission denied", .path.display())]
    RootDenied { path: PathBuf },
    /// Any other failure to open the root.
    #[error("cannot open the root `{}`", .path.display())]
    Root { path: PathBuf, source: io::Error },
    /// The texts `/include` joins could not be written to the temporary directory.
    #[error("cannot write the /include texts under `{}` (set TMPDIR to a writable directory)", .path.display())]
    IncludeTexts { path: PathBuf, source: io::Error },
    /// A TLS certificate or key file cannot be read.
    #[error("cannot read `{}`", .path.display())]
    TlsRead { path: PathBuf, source: io::Error },
    /// The certificate file holds no PEM certificate.
    #[error("`{}` holds no PEM certificate (-----BEGIN CERTIFICATE-----)", .path.display())]
    TlsNoCertificate { path: PathBuf },
    /// The key file holds no PEM private key.
    #[error("`{}` holds no PEM private key (PKCS#8, PKCS#1 or SEC1)", .path.display())]
    TlsNoKey { path: PathBuf },
    /// A PEM file is malformed.
    #[error("`{}` is not valid PEM: {message}", .path.display())]
    TlsBadPem { path: PathBuf, message: String },
    /// rustls refused the certificate and key (a key that does not match the certificate,
    /// or of a kind it does not support).
    #[error("the TLS certificate `{}` and key `{}` cannot be used", .cert.display(), .key.display())]
    TlsIdentity { cert: PathBuf, key: PathBuf, source: rustls::Error },
    /// The self-signed certificate could not be made.
    #[error("cannot make the self-signed TLS certificate")]
    SelfSigned { source: rcgen::Error },
    /// The self-signed certificate's CA could not be written where asked.
    #[error("cannot write the CA certificate to `{}`", .path.display())]
    WriteCa { path: PathBuf, source: io::Error },
    /// A limit in the configuration cannot work.
    #[error("invalid setting {name} = {value}: {reason}")]
    InvalidConfig { name: &'static str, value: String, reason: &'static str },
    /// `--io uring` on a TLS listener: herd serve's io_uring carries plain TCP only.
    #[error(
        "--io uring: herd serve's io_uring backend carries plain TCP only (HTTP/1 and h2c), \
         not TLS; use --io epoll or --io auto"
    )]
    IoUringTls,
    /// `--io uring` where this machine refuses io_uring; the reason is the probe's.
    #[error("--io uring: io_uring is refused here: {why}; use --io epoll or --io auto")]
    IoUringRefused { why: String },
    /// A worker thread could not be started.
    #[error("cannot start worker thread {worker}")]
    Spawn { worker: usize, source: io::Error },
    /// A worker's event loop failed (epoll or the ring itself, not a connection).
    #[error("worker {worker} failed")]
    Worker { worker: usize, source: io::Error },
    /// A worker thread panicked: a bug in herd, reported instead of propagated.
    #[error("worker {worker} panicked")]
    WorkerPanicked { worker: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant with an OS error prints it once in the chain (before: Bind, Root,
    /// IncludeTexts, Spawn and Worker printed it twice, in the message and as the source).
    #[test]
    fn each_cause_is_printed_once() {
        let os = || io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
        let cause = os().to_string();
        let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        for err in [
            ServeError::Bind { addr, source: os() },
            ServeError::Root { path: "/srv".into(), source: os() },
            ServeError::IncludeTexts { path: "/tmp/herd".into(), source: os() },
            ServeError::Spawn { worker: 1, source: os() },
            ServeError::Worker { worker: 1, source: os() },
            ServeError::TlsRead { path: "/etc/cert.pem".into(), source: os() },
            ServeError::WriteCa { path: "/tmp/ca.pem".into(), source: os() },
        ] {
            herd_testutil::causes::assert_cause_once(&err, &cause);
        }
    }
}

#[cfg(test)]
mod tls_tests {
    use super::*;

    #[test]
    fn rustls_and_rcgen_causes_are_printed_once() {
        let err = ServeError::TlsIdentity {
            cert: "c.pem".into(),
            key: "k.pem".into(),
            source: rustls::Error::General("key mismatch".into()),
        };
        herd_testutil::causes::assert_cause_once(&err, "key mismatch");
        let err = ServeError::SelfSigned { source: rcgen::Error::CouldNotParseKeyPair };
        herd_testutil::causes::assert_cause_once(
            &err,
            &rcgen::Error::CouldNotParseKeyPair.to_string(),
        );
    }
}
