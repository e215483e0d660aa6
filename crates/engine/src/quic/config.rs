//! What every QUIC connection of a run shares, built once: the TLS configuration (herd's own,
//! tls.rs, narrowed to what QUIC allows: TLS 1.3, ALPN `h3`), quinn's transport settings,
//! and the endpoint configuration.

use std::sync::Arc;
use std::time::Duration;

use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{ClientConfig, EndpointConfig, IdleTimeout, TransportConfig, VarInt};
use thiserror::Error;

use super::udp::Offload;
use crate::socket::Datagram;
use crate::tls::{TlsClient, TlsConfigError, TlsSettings, TlsVersions};

/// How herd's QUIC connections are set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicSettings {
    /// herd's TLS settings (CA file or none, client certificate, SNI, cipher suites). The
    /// versions must include TLS 1.3; the ALPN list is replaced by `h3`.
    pub tls: TlsSettings,
    /// How long the handshake may take before the connection fails with
    /// [`super::QuicFailure::HandshakeTimeout`].
    pub handshake_timeout: Duration,
    /// Silence after which an established connection is given up (QUIC's idle timeout,
    /// which both sides advertise; the lower one holds).
    pub idle_timeout: Duration,
    pub offload: Offload,
    /// SO_SNDBUF and SO_RCVBUF for each connection's socket.
    pub buffer_size: Option<u32>,
    /// The receive window of each stream, and a connection's is this times 16: large, as
    /// h2load's are, so that flow control never paces a benchmark.
    pub stream_window: u32,
}

impl QuicSettings {
    /// Defaults around `tls`: a 10 s handshake, a 30 s idle timeout, both offloads where
    /// the kernel has them, 16 MiB stream windows.
    pub fn new(tls: TlsSettings) -> QuicSettings {
        QuicSettings {
            tls,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            offload: Offload::default(),
            buffer_size: None,
            stream_window: 16 << 20,
        }
    }
}

/// A QUIC configuration herd cannot use, and what to change.
#[derive(Debug, Error)]
pub enum QuicConfigError {
    #[error("HTTP/3 runs on TLS 1.3 only; drop the TLS 1.2 choice")]
    Tls12,
    #[error(
        "QUIC's Initial packets need the cipher suite TLS13_AES_128_GCM_SHA256; \
         keep it in the cipher suite list"
    )]
    NoInitialSuite,
    #[error("an idle timeout of {0:?} is beyond what QUIC can say (2^62 ms)")]
    IdleTimeout(Duration),
    #[error(transparent)]
    Tls(#[from] TlsConfigError),
}

/// The shared configuration of a run's QUIC connections; cheap to clone.
#[derive(Clone)]
pub struct QuicClient {
    pub(super) endpoint: Arc<EndpointConfig>,
    pub(super) client: ClientConfig,
    pub(super) server_name: String,
    pub(super) handshake_timeout: Duration,
    /// How each connection's UDP socket is set up (socket.rs opens it).
    datagram: Datagram,
}

impl std::fmt::Debug for QuicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicClient").field("server_name", &self.server_name).finish()
    }
}

/// What herd advertises for the server's unidirectional streams: its control stream, the
/// two QPACK streams, and room for reserved ones it sends to keep clients honest.
const SERVER_UNI_STREAMS: u32 = 16;

impl QuicClient {
    /// What each connection's UDP socket asks of the kernel: the carrier to open it with
    /// (`socket::connect`).
    pub(crate) fn datagram(&self) -> Datagram {
        self.datagram
    }

    /// Builds the configuration for connections to `host` (the SNI name and the name the
    /// certificate is checked against, unless `settings.tls.sni` says otherwise).
    pub fn new(settings: &QuicSettings, host: &str) -> Result<QuicClient, QuicConfigError> {
        let versions = match settings.tls.versions {
            TlsVersions::Tls12 => return Err(QuicConfigError::Tls12),
            TlsVersions::All | TlsVersions::Tls13 => TlsVersions::Tls13,
        };
        let tls = TlsSettings { versions, alpn: vec![b"h3".to_vec()], ..settings.tls.clone() };
        let tls = TlsClient::new(&tls, host)?;
        let (rustls_config, server_name) = tls.parts();
        let crypto = QuicClientConfig::try_from(rustls_config)
            .map_err(|_| QuicConfigError::NoInitialSuite)?;

        let mut transport = TransportConfig::default();
        let idle = IdleTimeout::try_from(settings.idle_timeout)
            .map_err(|_| QuicConfigError::IdleTimeout(settings.idle_timeout))?;
        let window = VarInt::from_u32(settings.stream_window);
        transport
            .max_idle_timeout(Some(idle))
            // A server opens no request streams in HTTP/3.
            .max_concurrent_bidi_streams(VarInt::from_u32(0))
            .max_concurrent_uni_streams(VarInt::from_u32(SERVER_UNI_STREAMS))
            .stream_receive_window(window)
            .receive_window(
                VarInt::from_u64(u64::from(settings.stream_window) * 16).unwrap_or(VarInt::MAX),
            )
            .datagram_receive_buffer_size(None)
            .enable_segmentation_offload(settings.offload.gso);
        let mut client = ClientConfig::new(Arc::new(crypto));
        client.transport_config(Arc::new(transport));
        Ok(QuicClient {
            endpoint: Arc::new(EndpointConfig::default()),
            client,
            server_name: server_name.to_str().into_owned(),
            handshake_timeout: settings.handshake_timeout,
            datagram: Datagram { offload: settings.offload, buffer_size: settings.buffer_size },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(versions: TlsVersions, suites: Option<&[&str]>) -> TlsSettings {
        TlsSettings {
            versions,
            cipher_suites: suites.map(|s| s.iter().map(|n| n.to_string()).collect()),
            client_cert: None,
            ca_file: None,
            sni: None,
            alpn: vec![b"http/1.1".to_vec()],
            resume: false,
        }
    }

    #[test]
    fn what_quic_cannot_use_is_refused_with_what_to_change() {
        let err = QuicClient::new(&QuicSettings::new(tls(TlsVersions::Tls12, None)), "localhost")
            .unwrap_err();
        assert!(matches!(err, QuicConfigError::Tls12), "{err}");
        let only_256 = Some(&["TLS13_AES_256_GCM_SHA384"][..]);
        let err = QuicClient::new(&QuicSettings::new(tls(TlsVersions::All, only_256)), "localhost")
            .unwrap_err();
        assert!(matches!(err, QuicConfigError::NoInitialSuite), "{err}");
        assert!(err.to_string().contains("TLS13_AES_128_GCM_SHA256"));
        let ok = QuicClient::new(&QuicSettings::new(tls(TlsVersions::All, None)), "127.0.0.1");
        assert_eq!(ok.unwrap().server_name, "127.0.0.1");
    }
}
