//! How a QUIC connection, or one request on it, ends badly: each way a variant with what a
//! reader needs, and the engine's [`FailureKind`] it counts as.

use std::fmt;
use std::time::Duration;

use herd_proto::h3::frame::kind;
use herd_proto::h3::{H3Error, MessageError, QpackError};
use herd_stats::FailureKind;
use quinn_proto::ConnectionError;

/// Why a QUIC connection or a request on it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuicFailure {
    /// The socket could not be opened or used (the operation, the OS's words and its error
    /// number, where the OS gave one).
    Socket { op: &'static str, message: String, errno: Option<i32> },
    /// The server's port is closed (ICMP port unreachable): nothing listens on UDP there.
    Refused,
    /// No handshake within the time allowed: a server that does not answer (a silent
    /// peer, a firewall dropping UDP, a TCP-only port).
    HandshakeTimeout(Duration),
    /// The server went silent on an established connection for its idle timeout.
    IdleTimeout,
    /// The TLS handshake failed (a certificate refused, no common cipher suite...).
    Tls(String),
    /// The server did not agree to speak HTTP/3 (ALPN `h3`).
    NoH3,
    /// The server closed the connection: its QUIC or HTTP/3 error code and reason.
    ClosedByPeer { code: u64, application: bool, reason: String },
    /// The server's QUIC stack reset the connection (a stateless reset: it lost its state).
    Reset,
    /// The server broke QUIC's rules (herd's QUIC stack closed the connection).
    Transport(String),
    /// The server broke HTTP/3's rules: a request's response, or the whole connection.
    Protocol(H3Error),
    /// The server reset the request's stream (RESET_STREAM) with this error code.
    StreamReset(u64),
    /// The server did not process the request (its GOAWAY named an earlier stream, or it
    /// reset the stream with H3_REQUEST_REJECTED): it may be sent again on a new
    /// connection.
    Goaway,
    /// herd closed the connection itself (the run ended, or another request's failure).
    Closed,
}

impl QuicFailure {
    /// The failure kind the engine counts it as. [`QuicFailure::Goaway`] is
    /// [`FailureKind::GoAway`] here; the worker is to send such a request again, uncounted,
    /// as it does for HTTP/2's refusals.
    pub fn kind(&self) -> FailureKind {
        match self {
            QuicFailure::Socket { .. }
            | QuicFailure::Refused
            | QuicFailure::HandshakeTimeout(_) => FailureKind::Connect,
            QuicFailure::Tls(_) | QuicFailure::NoH3 => FailureKind::Tls,
            QuicFailure::IdleTimeout => FailureKind::Timeout,
            QuicFailure::Protocol(e) => match e {
                H3Error::FrameTooLarge { frame_type: kind::HEADERS, .. }
                | H3Error::FieldSectionTooLarge { .. }
                | H3Error::Qpack(QpackError::TooLong) => FailureKind::HeadTooLarge,
                H3Error::Message(MessageError::BodyPastLength { .. }) => FailureKind::Overrun,
                _ => FailureKind::Malformed,
            },
            QuicFailure::Transport(_) => FailureKind::Malformed,
            QuicFailure::StreamReset(_) => FailureKind::Reset,
            QuicFailure::Goaway => FailureKind::GoAway,
            QuicFailure::ClosedByPeer { .. } | QuicFailure::Reset | QuicFailure::Closed => {
                FailureKind::Closed
            }
        }
    }

    pub(super) fn socket(op: &'static str, e: &std::io::Error) -> QuicFailure {
        if e.raw_os_error() == Some(libc::ECONNREFUSED) {
            return QuicFailure::Refused;
        }
        QuicFailure::Socket { op, message: e.to_string(), errno: e.raw_os_error() }
    }

    /// The OS's error behind a socket failure, for the run's failure counts (which name it).
    pub(crate) fn os_error(&self) -> Option<std::io::Error> {
        match self {
            QuicFailure::Socket { errno: Some(n), .. } => {
                Some(std::io::Error::from_raw_os_error(*n))
            }
            _ => None,
        }
    }

    /// What quinn's reason for losing the connection means here.
    pub(super) fn from_quinn(e: &ConnectionError) -> QuicFailure {
        match e {
            ConnectionError::TimedOut => QuicFailure::IdleTimeout,
            ConnectionError::Reset => QuicFailure::Reset,
            ConnectionError::LocallyClosed => QuicFailure::Closed,
            ConnectionError::ApplicationClosed(close) => QuicFailure::ClosedByPeer {
                code: close.error_code.into_inner(),
                application: true,
                reason: String::from_utf8_lossy(&close.reason).into_owned(),
            },
            ConnectionError::ConnectionClosed(close) => {
                let code = u64::from(close.error_code);
                // 0x100-0x1ff: a TLS alert (RFC 9001 §4.8).
                if (0x100..0x200).contains(&code) {
                    return QuicFailure::Tls(format!(
                        "the server sent TLS alert {}{}",
                        code - 0x100,
                        reason_suffix(&close.reason)
                    ));
                }
                QuicFailure::ClosedByPeer {
                    code,
                    application: false,
                    reason: String::from_utf8_lossy(&close.reason).into_owned(),
                }
            }
            ConnectionError::TransportError(t) => {
                let code = u64::from(t.code);
                if (0x100..0x200).contains(&code) {
                    QuicFailure::Tls(t.reason.clone())
                } else {
                    QuicFailure::Transport(t.to_string())
                }
            }
            other => QuicFailure::Transport(other.to_string()),
        }
    }
}

fn reason_suffix(reason: &[u8]) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(": {}", String::from_utf8_lossy(reason))
    }
}

impl fmt::Display for QuicFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuicFailure::Socket { op, message, .. } => write!(f, "UDP socket: {op}: {message}"),
            QuicFailure::Refused => f.write_str(
                "connection refused: nothing listens on that UDP port (ICMP unreachable)",
            ),
            QuicFailure::HandshakeTimeout(d) => write!(
                f,
                "no QUIC handshake within {:.1} s: the server does not answer on UDP",
                d.as_secs_f64()
            ),
            QuicFailure::IdleTimeout => f.write_str("the server went silent (QUIC idle timeout)"),
            QuicFailure::Tls(reason) => write!(f, "TLS handshake: {reason}"),
            QuicFailure::NoH3 => f.write_str("the server did not agree to HTTP/3 (ALPN h3)"),
            QuicFailure::ClosedByPeer { code, application, reason } => {
                let layer = if *application { "HTTP/3" } else { "QUIC" };
                write!(f, "the server closed the connection ({layer} error {code:#x}")?;
                if !reason.is_empty() {
                    write!(f, ": {reason}")?;
                }
                f.write_str(")")
            }
            QuicFailure::Reset => f.write_str("the server reset the connection (stateless reset)"),
            QuicFailure::Transport(reason) => write!(f, "QUIC protocol error: {reason}"),
            QuicFailure::Protocol(e) => write!(f, "HTTP/3 protocol error: {e}"),
            QuicFailure::StreamReset(code) => {
                write!(f, "the server reset the request's stream (error {code:#x})")
            }
            QuicFailure::Goaway => f.write_str(
                "the server refused the request unprocessed (GOAWAY, or REQUEST_REJECTED)",
            ),
            QuicFailure::Closed => f.write_str("the connection was closed by herd"),
        }
    }
}

impl std::error::Error for QuicFailure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_failure_keeps_the_os_error() {
        // (A socket that cannot open fails before QUIC starts: socket::connect's io::Error,
        // as TCP's; the worker may try another address then.)
        let unreachable = std::io::Error::from_raw_os_error(libc::ENETUNREACH);
        let open = QuicFailure::socket("open", &unreachable);
        assert_eq!(open.os_error().and_then(|e| e.raw_os_error()), Some(libc::ENETUNREACH));
        assert_eq!(open.kind(), FailureKind::Connect);
        let send = QuicFailure::socket("send", &unreachable);
        assert_eq!(send.os_error().and_then(|e| e.raw_os_error()), Some(libc::ENETUNREACH));
        // Without an OS error (no randomness to seed with) there is nothing to count it by.
        let seed = QuicFailure::Socket { op: "open", message: "x".into(), errno: None };
        assert!(seed.os_error().is_none());
        // A refused port is its own failure, as before.
        let refused = std::io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(QuicFailure::socket("open", &refused), QuicFailure::Refused);
    }

    #[test]
    fn each_failure_counts_as_its_kind() {
        let too_large = H3Error::FrameTooLarge { frame_type: kind::HEADERS, len: 9, limit: 8 };
        let cases = [
            (QuicFailure::Refused, FailureKind::Connect),
            (
                QuicFailure::HandshakeTimeout(std::time::Duration::from_secs(1)),
                FailureKind::Connect,
            ),
            (QuicFailure::NoH3, FailureKind::Tls),
            (QuicFailure::IdleTimeout, FailureKind::Timeout),
            (QuicFailure::Protocol(too_large), FailureKind::HeadTooLarge),
            (
                QuicFailure::Protocol(H3Error::Message(MessageError::BodyPastLength { want: 1 })),
                FailureKind::Overrun,
            ),
            (QuicFailure::Protocol(H3Error::PushRefused), FailureKind::Malformed),
            (QuicFailure::StreamReset(0x10c), FailureKind::Reset),
            (QuicFailure::Goaway, FailureKind::GoAway),
            (QuicFailure::Reset, FailureKind::Closed),
        ];
        for (failure, kind) in cases {
            assert_eq!(failure.kind(), kind, "{failure}");
        }
    }

    #[test]
    fn tls_alerts_and_closes_are_told_apart() {
        use quinn_proto::{ConnectionClose, TransportErrorCode};
        let alert = ConnectionError::ConnectionClosed(ConnectionClose {
            error_code: TransportErrorCode::crypto(42),
            frame_type: None,
            reason: bytes::Bytes::from_static(b"bad certificate"),
        });
        assert_eq!(
            QuicFailure::from_quinn(&alert),
            QuicFailure::Tls("the server sent TLS alert 42: bad certificate".into())
        );
        assert_eq!(QuicFailure::from_quinn(&ConnectionError::TimedOut), QuicFailure::IdleTimeout);
    }
}
