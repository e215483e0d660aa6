//! TLS client settings for https targets, through rustls (ring provider).
//!
//! Like ab, herd measures servers, it does not audit them: by default the server's
//! certificate chain is not checked (signatures of the handshake still are), so that
//! self-signed lab certificates work. A CA file turns full verification on.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme};
use thiserror::Error;

/// Which TLS versions to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersions {
    /// TLS 1.2 and 1.3.
    All,
    Tls12,
    Tls13,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub versions: TlsVersions,
    /// rustls cipher suite names (`TLS13_AES_128_GCM_SHA256`,
    /// `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`); None: the provider's defaults.
    pub cipher_suites: Option<Vec<String>>,
    /// A PEM file holding the client certificate chain and its private key.
    pub client_cert: Option<PathBuf>,
    /// A PEM file of trusted CA certificates; None: do not verify the chain.
    pub ca_file: Option<PathBuf>,
    /// The SNI name to send; None sends none (IP address targets never send one).
    pub sni: Option<String>,
    /// ALPN protocols to offer, e.g. `http/1.1`.
    pub alpn: Vec<Vec<u8>>,
    /// Resume TLS sessions on later connections (TLS 1.3 tickets, TLS 1.2 session IDs), as a
    /// browser does; false: a full handshake on every connection, as ab does (its new
    /// connections measure the full cost of TLS, and so do herd's unless asked otherwise).
    pub resume: bool,
}

#[derive(Debug, Error)]
pub enum TlsConfigError {
    #[error("cannot read {path}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: no certificate found in PEM file")]
    NoCertificate { path: PathBuf },
    #[error("{path}: no private key found in PEM file")]
    NoKey { path: PathBuf },
    #[error("{path}: {message}")]
    BadPem { path: PathBuf, message: String },
    #[error("no supported cipher suite left after selecting {0:?}")]
    NoCipherSuite(Vec<String>),
    #[error("invalid TLS server name {0:?}")]
    ServerName(String),
    #[error("TLS configuration")]
    Rustls(#[from] rustls::Error),
}

/// A ready-to-use client configuration, cheap to clone (shared by every connection).
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient").field("server_name", &self.server_name).finish()
    }
}

/// What a handshake negotiated, in the terms ab's report uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInfo {
    /// `TLSv1.2` or `TLSv1.3` (OpenSSL's spelling).
    pub protocol: String,
    /// OpenSSL's name of the cipher suite, e.g. `TLS_AES_256_GCM_SHA384` or
    /// `ECDHE-RSA-AES128-GCM-SHA256`.
    pub cipher: String,
    /// Secret bits of the bulk cipher (128 or 256).
    pub cipher_bits: u32,
    /// Size of the server certificate's public key in bits, when it could be read.
    pub peer_key_bits: Option<u32>,
    /// The key exchange, as ab prints it after "Server Temp Key:", e.g. `X25519 253 bits`.
    pub temp_key: Option<String>,
}

impl TlsClient {
    /// Builds the client configuration. `host` is the target host, used for SNI unless
    /// `settings.sni` says otherwise.
    pub fn new(settings: &TlsSettings, host: &str) -> Result<TlsClient, TlsConfigError> {
        let mut provider = rustls::crypto::ring::default_provider();
        if let Some(names) = &settings.cipher_suites {
            provider
                .cipher_suites
                .retain(|s| s.suite().as_str().is_some_and(|n| names.iter().any(|want| want == n)));
            if provider.cipher_suites.is_empty() {
                return Err(TlsConfigError::NoCipherSuite(names.clone()));
            }
        }
        let algorithms = provider.signature_verification_algorithms;
        let provider = Arc::new(provider);
        let versions: &[&'static rustls::SupportedProtocolVersion] = match settings.versions {
            TlsVersions::All => &[&rustls::version::TLS13, &rustls::version::TLS12],
            TlsVersions::Tls12 => &[&rustls::version::TLS12],
            TlsVersions::Tls13 => &[&rustls::version::TLS13],
        };
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)?;
        let builder = match &settings.ca_file {
            Some(path) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in read_certs(path)? {
                    roots.add(cert)?;
                }
                builder.with_root_certificates(roots)
            }
            None => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoChainCheck { algorithms })),
        };
        let mut config = match &settings.client_cert {
            Some(path) => {
                let certs = read_certs(path)?;
                let key = PrivateKeyDer::from_pem_file(path).map_err(|e| match e {
                    rustls::pki_types::pem::Error::NoItemsFound => {
                        TlsConfigError::NoKey { path: path.clone() }
                    }
                    other => {
                        TlsConfigError::BadPem { path: path.clone(), message: other.to_string() }
                    }
                })?;
                builder.with_client_auth_cert(certs, key)?
            }
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = settings.alpn.clone();
        if !settings.resume {
            // rustls keeps sessions in memory by default: every connection after the first
            // would resume, a cheaper handshake than ab's (a full one, 1.5 times the server's
            // CPU per request on nginx), and the two would measure different things.
            config.resumption = rustls::client::Resumption::disabled();
        }
        config.enable_sni = settings.sni.is_some();
        let name = settings.sni.as_deref().unwrap_or(host);
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        let server_name = ServerName::try_from(bare.to_string())
            .map_err(|_| TlsConfigError::ServerName(name.to_string()))?;
        Ok(TlsClient { config: Arc::new(config), server_name })
    }

    pub(crate) fn connect(&self) -> Result<ClientConnection, rustls::Error> {
        ClientConnection::new(self.config.clone(), self.server_name.clone())
    }

    /// The configuration and the server's name, for QUIC (quinn drives rustls itself).
    pub(crate) fn parts(&self) -> (Arc<ClientConfig>, &ServerName<'static>) {
        (self.config.clone(), &self.server_name)
    }
}

/// Reads what a finished handshake negotiated.
pub(crate) fn info(conn: &ClientConnection) -> Option<TlsInfo> {
    let suite = conn.negotiated_cipher_suite()?;
    let protocol = match conn.protocol_version()? {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3",
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2",
        _ => "TLS",
    };
    let rustls_name = suite.suite().as_str().unwrap_or("unknown");
    let (cipher, cipher_bits) = openssl_cipher(rustls_name);
    let temp_key = conn.negotiated_key_exchange_group().map(|g| match g.name() {
        rustls::NamedGroup::X25519 => "X25519 253 bits".to_string(),
        rustls::NamedGroup::X448 => "X448 448 bits".to_string(),
        rustls::NamedGroup::secp256r1 => "ECDH prime256v1 256 bits".to_string(),
        rustls::NamedGroup::secp384r1 => "ECDH secp384r1 384 bits".to_string(),
        rustls::NamedGroup::secp521r1 => "ECDH secp521r1 521 bits".to_string(),
        other => format!("{other:?}"),
    });
    let peer_key_bits =
        conn.peer_certificates().and_then(|c| c.first()).and_then(|c| crate::tls_key::key_bits(c));
    Some(TlsInfo { protocol: protocol.to_string(), cipher, cipher_bits, peer_key_bits, temp_key })
}

/// rustls names the suites as IANA does; ab prints OpenSSL's names.
fn openssl_cipher(rustls_name: &str) -> (String, u32) {
    let table: &[(&str, &str, u32)] = &[
        ("TLS13_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", 128),
        ("TLS13_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", 256),
        ("TLS13_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", 256),
        ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", 128),
        ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", 256),
        ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", 256),
        ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", 128),
        ("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", 256),
        ("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", 256),
    ];
    table
        .iter()
        .find(|(r, _, _)| *r == rustls_name)
        .map(|(_, o, b)| ((*o).to_string(), *b))
        .unwrap_or_else(|| (rustls_name.to_string(), 0))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let iter = CertificateDer::pem_file_iter(path).map_err(|e| pem_error(path, e))?;
    let certs: Vec<_> = iter.collect::<Result<_, _>>().map_err(|e| pem_error(path, e))?;
    if certs.is_empty() {
        return Err(TlsConfigError::NoCertificate { path: path.to_path_buf() });
    }
    Ok(certs)
}

fn pem_error(path: &Path, e: rustls::pki_types::pem::Error) -> TlsConfigError {
    match e {
        rustls::pki_types::pem::Error::Io(source) => {
            TlsConfigError::Read { path: path.to_path_buf(), source }
        }
        other => TlsConfigError::BadPem { path: path.to_path_buf(), message: other.to_string() },
    }
}

/// Accepts any certificate chain but still checks that the server holds the key of the
/// certificate it presents (handshake signatures are verified).
#[derive(Debug)]
struct NoChainCheck {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NoChainCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `herd run https://… --ca-file /missing` said "No such file or directory (os error 2)"
    /// twice: the message held the cause that `source()` returns too.
    #[test]
    fn a_missing_ca_file_names_its_cause_once() {
        let settings = TlsSettings {
            versions: TlsVersions::All,
            cipher_suites: None,
            client_cert: None,
            ca_file: Some(PathBuf::from("/nonexistent/ca.pem")),
            sni: None,
            alpn: Vec::new(),
            resume: false,
        };
        let Err(err) = TlsClient::new(&settings, "localhost") else {
            panic!("a missing CA file was accepted")
        };
        assert!(matches!(err, TlsConfigError::Read { .. }), "{err}");
        let enoent = std::io::Error::from_raw_os_error(2).to_string();
        let printed = herd_testutil::causes::assert_cause_once(&err, &enoent);
        assert_eq!(printed, format!("cannot read /nonexistent/ca.pem: {enoent}"));
    }

    #[test]
    fn a_rustls_error_is_printed_once() {
        let err = TlsConfigError::from(rustls::Error::DecryptError);
        let text = rustls::Error::DecryptError.to_string();
        herd_testutil::causes::assert_cause_once(&err, &text);
    }
}
