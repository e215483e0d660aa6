//! Why a run could not be prepared or carried out (a failed request is not an error: it is
//! counted). Each message says what was wrong and what to do; a cause carried as a source is
//! not repeated in the message, since the binary prints the whole chain.

use std::io;
use std::path::PathBuf;

use herd_engine::quic::QuicConfigError;
use herd_engine::{EngineError, ProbeError, TargetError, TlsConfigError};

use crate::plan::PlanError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A combination of settings no run can have.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// What the run was asked to send cannot be built (a bad header, an unreadable body
    /// file, a URL list or SPECweb set that does not parse): the sentence says which and why.
    #[error("{0}")]
    Requests(String),
    #[error("TLS settings")]
    Tls(#[source] TlsConfigError),
    #[error(transparent)]
    Quic(QuicConfigError),
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A `--unix-socket` or `--bind` that cannot be used: the sentence says why.
    #[error("{0}")]
    Connect(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The handshake before the run that asks the server's ALPN choice failed.
    #[error("cannot learn which protocol the server speaks (one TLS handshake before the run)")]
    Probe(#[source] ProbeError),
    /// The server will not speak the protocol asked for: the sentence says what it chose
    /// and what to do.
    #[error("{0}")]
    Protocol(String),
    /// An output file that cannot be created (before the run) ...
    #[error("cannot create {flag} {}", path.display())]
    Create {
        flag: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// ... or written (during it).
    #[error("cannot write {flag} {}", path.display())]
    Output {
        flag: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the thread writing --series, --hlog or the live line failed")]
    OutputThread,
}
