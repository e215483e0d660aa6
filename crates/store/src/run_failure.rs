//! Which step of a lab run failed: the kind stored beside a failed repetition's reason
//! ([`crate::Outcome::Failed`]), so a report can say "3 of 40 runs failed: 2 server not
//! ready, 1 verify" without reading the reasons' words.
//!
//! The kind is an enum everywhere in herd and text only in the store's `failure_kind`
//! column ([`RunFailureKind::as_str`] and its [`FromStr`] inverse). The lab decides the kind
//! (herd_lab's `RunFailure`, one variant per way a run fails); this crate only keeps it, and
//! the reports put it in their own words.

use std::fmt;
use std::str::FromStr;

/// The step of a lab run that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunFailureKind {
    /// The lab could not do its own part: a directory, a port, a file, a server's
    /// configuration, a network path's namespaces, a process it could not start.
    Setup,
    /// A server (or a proxy path's router program) did not answer its readiness probe in
    /// time.
    ServerNotReady,
    /// A server or router process exited: at its start, or while the client ran.
    ServerExited,
    /// The servers answered on their own host but not through the network path, from the
    /// client's host.
    PathUnreachable,
    /// The answer to the workload's request was not the expected one (status, length,
    /// content), or did not come.
    Verify,
    /// The client (warm-up or measured run) failed, or its output could not be read.
    ClientFailed,
    /// The client ran past its time limit and was stopped.
    ClientTimedOut,
    /// The client ran, and no request got any response: the server could not be reached.
    NoResponse,
    /// The server's own access log does not hold what the client counted
    /// (`[runner] server_count`): the client miscounted, or something else sent requests.
    ServerCount,
    /// A failure stored before kinds were (schema 6 and older) whose reason matches no kind.
    Unknown,
}

/// A stored kind this herd does not know (a store written by another program, or by hand).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown run failure kind `{text}` (known: {})", RunFailureKind::known())]
pub struct UnknownRunFailureKind {
    pub text: String,
}

impl RunFailureKind {
    pub const ALL: [RunFailureKind; 10] = [
        RunFailureKind::Setup,
        RunFailureKind::ServerNotReady,
        RunFailureKind::ServerExited,
        RunFailureKind::PathUnreachable,
        RunFailureKind::Verify,
        RunFailureKind::ClientFailed,
        RunFailureKind::ClientTimedOut,
        RunFailureKind::NoResponse,
        RunFailureKind::ServerCount,
        RunFailureKind::Unknown,
    ];

    /// The text stored in the `failure_kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            RunFailureKind::Setup => "setup",
            RunFailureKind::ServerNotReady => "server-not-ready",
            RunFailureKind::ServerExited => "server-exited",
            RunFailureKind::PathUnreachable => "path-unreachable",
            RunFailureKind::Verify => "verify",
            RunFailureKind::ClientFailed => "client-failed",
            RunFailureKind::ClientTimedOut => "client-timed-out",
            RunFailureKind::NoResponse => "no-response",
            RunFailureKind::ServerCount => "server-count",
            RunFailureKind::Unknown => "unknown",
        }
    }

    fn known() -> String {
        RunFailureKind::ALL.map(RunFailureKind::as_str).join(", ")
    }
}

impl FromStr for RunFailureKind {
    type Err = UnknownRunFailureKind;

    fn from_str(text: &str) -> Result<RunFailureKind, UnknownRunFailureKind> {
        RunFailureKind::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .ok_or_else(|| UnknownRunFailureKind { text: text.to_owned() })
    }
}

/// The stored text ([`RunFailureKind::as_str`]); reports choose their own words.
impl fmt::Display for RunFailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_stored_text() {
        for k in RunFailureKind::ALL {
            assert_eq!(k.as_str().parse::<RunFailureKind>(), Ok(k));
            assert_eq!(k.to_string().parse::<RunFailureKind>(), Ok(k));
        }
        let mut texts: Vec<&str> = RunFailureKind::ALL.iter().map(|k| k.as_str()).collect();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), RunFailureKind::ALL.len(), "stored texts are distinct");
    }

    #[test]
    fn an_unknown_text_is_an_error_that_names_it() {
        let err = "server not ready".parse::<RunFailureKind>().unwrap_err();
        assert_eq!(err.text, "server not ready");
        assert_eq!(
            err.to_string(),
            "unknown run failure kind `server not ready` (known: setup, server-not-ready, \
             server-exited, path-unreachable, verify, client-failed, client-timed-out, \
             no-response, server-count, unknown)"
        );
        assert!("Verify".parse::<RunFailureKind>().is_err(), "the text is exact");
    }
}
