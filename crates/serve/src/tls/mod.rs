//! TLS on the listener: the rustls server configuration made once at `Server::bind` from a
//! [`TlsConfig`](crate::TlsConfig), shared by every worker, and one `ServerConnection` per
//! accepted connection (transport.rs drives it). The certificate comes from PEM files
//! (`identity.rs`) or is made at start-up (`self_signed.rs`).
//!
//! ALPN offers the configured protocols; which one a connection speaks is decided when its
//! handshake ends (conn.rs). Session resumption uses rustls's defaults (an in-memory cache of
//! 256 sessions and TLS 1.3 tickets), so a client that reconnects can skip the full handshake,
//! as it can with nginx.

mod identity;
mod self_signed;

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::ServerConfig;

use crate::config::{TlsConfig, TlsIdentity};
use crate::error::ServeError;

pub(crate) use self_signed::SelfSigned;

/// The server configuration for `config`, the listener bound at `bound`.
pub(crate) fn server_config(
    config: &TlsConfig,
    bound: SocketAddr,
) -> Result<Arc<ServerConfig>, ServeError> {
    let (certs, key) = match &config.identity {
        TlsIdentity::Pem { cert, key } => identity::load(cert, key)?,
        TlsIdentity::SelfSigned { write_ca } => {
            let made =
                SelfSigned::make(bound).map_err(|source| ServeError::SelfSigned { source })?;
            if let Some(path) = write_ca {
                std::fs::write(path, made.ca_pem.as_bytes())
                    .map_err(|source| ServeError::WriteCa { path: path.clone(), source })?;
            }
            (vec![made.cert], made.key)
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|source| identity_error(config, source))?
        .with_no_client_auth();
    let mut server =
        builder.with_single_cert(certs, key).map_err(|source| identity_error(config, source))?;
    server.alpn_protocols = config.alpn.iter().map(|p| p.alpn_id().as_bytes().to_vec()).collect();
    Ok(Arc::new(server))
}

fn identity_error(config: &TlsConfig, source: rustls::Error) -> ServeError {
    match &config.identity {
        TlsIdentity::Pem { cert, key } => {
            ServeError::TlsIdentity { cert: cert.clone(), key: key.clone(), source }
        }
        // Our own certificate refused by rustls is a bug of ours, not the user's.
        TlsIdentity::SelfSigned { .. } => ServeError::TlsIdentity {
            cert: "(self-signed)".into(),
            key: "(self-signed)".into(),
            source,
        },
    }
}
