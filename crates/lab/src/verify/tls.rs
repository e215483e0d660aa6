//! The TLS side of a verifying request: a blocking rustls client that trusts exactly the CA
//! the server's driver made for the run and checks the certificate names the address asked
//! (so a verified cell also proves the client's `--ca-file` will do), offering one ALPN id.
//!
//! Not here: what goes over the connection (`verify.rs` for HTTP/1.1, `h2.rs`).

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use super::VerifyError;

/// A TLS connection over TCP, handshake done.
pub(super) type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// Completes a handshake with `addr` over `sock`, trusting `ca_file` only and offering
/// `alpn`; fails unless the server chose `alpn`.
pub(super) fn connect(
    addr: SocketAddr,
    sock: TcpStream,
    ca_file: &Path,
    alpn: &[u8],
) -> Result<TlsStream, VerifyError> {
    let tls = |why: String| VerifyError::Tls { addr, why };
    let config = config(ca_file, alpn).map_err(tls)?;
    let name = ServerName::IpAddress(addr.ip().into());
    let conn = ClientConnection::new(Arc::new(config), name).map_err(|e| tls(e.to_string()))?;
    let mut stream = StreamOwned::new(conn, sock);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock).map_err(|e| tls(e.to_string()))?;
    }
    let chose = stream.conn.alpn_protocol();
    if chose != Some(alpn) {
        let text = |id: &[u8]| format!("`{}`", String::from_utf8_lossy(id));
        let chose = chose.map_or_else(|| "no protocol".to_owned(), text);
        return Err(VerifyError::Alpn {
            addr,
            chose: format!("{chose} instead of {}", text(alpn)),
        });
    }
    Ok(stream)
}

/// A client configuration that trusts the certificates in `ca_file` and offers `alpn`.
fn config(ca_file: &Path, alpn: &[u8]) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca_file)
        .map_err(|e| format!("cannot read the CA file {}: {e}", ca_file.display()))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("the CA file {}: {e}", ca_file.display()))?;
        roots.add(cert).map_err(|e| format!("the CA file {}: {e}", ca_file.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("the CA file {} holds no certificate", ca_file.display()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(config)
}
