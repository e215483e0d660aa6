//! How one run of a cell fails: [`RunFailure`], one variant per way it can, each with what a
//! reader needs to act on it (the process, the address, the limit, the end of a log). The
//! store keeps its kind ([`RunFailure::kind`], a `herd_store::RunFailureKind`) and its
//! message (`Display`), so reports can count failures by kind and still quote each one.
//!
//! Not a failure: Ctrl-C, which ends a run with nothing to keep ([`Stop::Cancelled`]).

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

use herd_stats::Failure;
use herd_store::RunFailureKind;
use herd_topo::net::Path as NetPath;
use herd_topo::proc::describe;

use crate::client::Tool;
use crate::verify::VerifyError;

/// Which client run of a cell: the warm-up, discarded, or the measured one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Warmup,
    Measure,
}

/// What a process was doing when it exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Before it answered its readiness probe.
    Starting,
    /// Ready, while the checks and the client ran.
    Running,
}

/// Why a run of a cell failed.
#[derive(Debug)]
pub(super) enum RunFailure {
    /// The lab could not do its own part: a directory, a port, a file, a configuration, a
    /// network path's namespaces, a process it could not start. The message says which.
    Setup(String),
    /// A process herd started (a server, or a path's router program) did not answer its
    /// readiness probe within `timeout`; `last` is the probe's last answer.
    ServerNotReady { name: String, timeout: Duration, last: String, log_tail: String },
    /// A process herd started exited before the run was over.
    ServerExited { name: String, status: ExitStatus, when: Stage, log_tail: String },
    /// The server answered on its own host, not through `path` from the client's host;
    /// `name` is the process watched meanwhile (the router program, else the server).
    PathUnreachable {
        path: NetPath,
        name: String,
        timeout: Duration,
        last: String,
        log_tail: String,
    },
    /// The workload's request did not get the expected answer (or none).
    /// (`why` boxed: an error of the TLS or HTTP/2 exchange is larger than the others.)
    VerifyFailed { server: String, method: &'static str, path: String, why: Box<VerifyError> },
    /// A client run failed: the warm-up exited unsuccessfully, or the measured run left
    /// output that cannot be read (`problem`). `stderr_tail`: None where the problem quotes
    /// the tool's output already.
    ClientFailed {
        tool: Tool,
        phase: Phase,
        status: ExitStatus,
        problem: Option<String>,
        stderr_tail: Option<String>,
    },
    /// A client run went past `limit` and was stopped.
    ClientTimedOut { tool: Tool, phase: Phase, limit: Duration, stderr_tail: String },
    /// The measured run got no response to any request: the server could not be reached.
    /// `failures`: what the client counted instead, by kind.
    NoResponse { tool: Tool, failures: Vec<(Failure, u64)> },
    /// `[runner] server_count`: the server's own access log does not hold what the client
    /// counted, or could not be counted.
    ServerCount(super::server_count::CountFailure),
}

/// How a run ends early: failed, or interrupted by Ctrl-C.
#[derive(Debug)]
pub(super) enum Stop {
    /// `client`: a client was running and was interrupted (one more process stopped).
    Cancelled {
        client: bool,
    },
    Failed(RunFailure),
}

impl RunFailure {
    /// The kind the store keeps beside the message.
    pub(super) fn kind(&self) -> RunFailureKind {
        match self {
            RunFailure::Setup(_) => RunFailureKind::Setup,
            RunFailure::ServerNotReady { .. } => RunFailureKind::ServerNotReady,
            RunFailure::ServerExited { .. } => RunFailureKind::ServerExited,
            RunFailure::PathUnreachable { .. } => RunFailureKind::PathUnreachable,
            RunFailure::VerifyFailed { .. } => RunFailureKind::Verify,
            RunFailure::ClientFailed { .. } => RunFailureKind::ClientFailed,
            RunFailure::ClientTimedOut { .. } => RunFailureKind::ClientTimedOut,
            RunFailure::NoResponse { .. } => RunFailureKind::NoResponse,
            RunFailure::ServerCount(_) => RunFailureKind::ServerCount,
        }
    }
}

impl From<RunFailure> for Stop {
    fn from(f: RunFailure) -> Stop {
        Stop::Failed(f)
    }
}

impl Phase {
    /// Its name in a message ("the warm-up run of ab").
    pub(super) fn name(self) -> &'static str {
        match self {
            Phase::Warmup => "warm-up",
            Phase::Measure => "measured",
        }
    }
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunFailure::Setup(what) => f.write_str(what),
            RunFailure::ServerNotReady { name, timeout, last, log_tail } => write!(
                f,
                "{name} did not become ready within {timeout:?} ({last}); its log: {log_tail}"
            ),
            RunFailure::ServerExited { name, status, when, log_tail } => {
                let when = match when {
                    Stage::Starting => "at start",
                    Stage::Running => "during the run",
                };
                write!(f, "{name} exited {when} ({}): {log_tail}", describe(status))
            }
            RunFailure::PathUnreachable { path, name, timeout, last, log_tail } => write!(
                f,
                "the {path} path did not reach the server from the client's host within \
                 {timeout:?} ({last}); the log of {name}: {log_tail}"
            ),
            RunFailure::VerifyFailed { server, method, path, why } if why.is_wrong_answer() => {
                write!(f, "verify: {server} answered {method} {path} with {why}")
            }
            RunFailure::VerifyFailed { server, method, path, why } => {
                write!(f, "verify: {method} {path} on {server}: {why}")
            }
            RunFailure::ClientFailed { tool, phase, status, problem, stderr_tail } => {
                let (phase, status) = (phase.name(), describe(status));
                match problem {
                    Some(problem) => write!(f, "the {phase} run of {tool} ({status}): {problem}")?,
                    None => write!(f, "the {phase} run of {tool} failed ({status})")?,
                }
                match stderr_tail {
                    Some(tail) => write!(f, "; stderr: {tail}"),
                    None => Ok(()),
                }
            }
            RunFailure::ClientTimedOut { tool, phase, limit, stderr_tail } => write!(
                f,
                "the {} run of {tool} ran past {limit:?} and was stopped; stderr: {stderr_tail}",
                phase.name()
            ),
            RunFailure::NoResponse { tool, failures } => {
                let counted = if failures.is_empty() {
                    "it counted no failure either".to_owned()
                } else {
                    let kinds: Vec<String> =
                        failures.iter().map(|(kind, n)| format!("{kind} {n}")).collect();
                    format!("{tool} counted {}", kinds.join(", "))
                };
                write!(
                    f,
                    "no request of the measured run got a response: the server could not be \
                     reached ({counted})"
                )
            }
            RunFailure::ServerCount(failure) => failure.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    /// Each failure's message, and the kind stored with it.
    fn check(failure: RunFailure, kind: RunFailureKind, message: &str) {
        assert_eq!(failure.kind(), kind, "{failure:?}");
        assert_eq!(failure.to_string(), message);
    }

    #[test]
    fn each_failure_says_what_failed_and_has_its_kind() {
        let exit = |code: i32| ExitStatus::from_raw(code << 8);
        check(
            RunFailure::Setup("cannot create /tmp/x: Permission denied (os error 13)".into()),
            RunFailureKind::Setup,
            "cannot create /tmp/x: Permission denied (os error 13)",
        );
        check(
            RunFailure::ServerNotReady {
                name: "nginx".into(),
                timeout: Duration::from_secs(15),
                last: "cannot connect to 127.0.0.1:4000: Connection refused (os error 111)".into(),
                log_tail: "(empty)".into(),
            },
            RunFailureKind::ServerNotReady,
            "nginx did not become ready within 15s (cannot connect to 127.0.0.1:4000: \
             Connection refused (os error 111)); its log: (empty)",
        );
        check(
            RunFailure::ServerExited {
                name: "php-fpm".into(),
                status: exit(78),
                when: Stage::Starting,
                log_tail: "ERROR: unable to bind".into(),
            },
            RunFailureKind::ServerExited,
            "php-fpm exited at start (exit status 78): ERROR: unable to bind",
        );
        check(
            RunFailure::ServerExited {
                name: "nginx".into(),
                status: ExitStatus::from_raw(9),
                when: Stage::Running,
                log_tail: "(empty)".into(),
            },
            RunFailureKind::ServerExited,
            "nginx exited during the run (killed by signal 9): (empty)",
        );
        check(
            RunFailure::PathUnreachable {
                path: NetPath::Routed,
                name: "nginx".into(),
                timeout: Duration::from_secs(15),
                last: "no route".into(),
                log_tail: "(empty)".into(),
            },
            RunFailureKind::PathUnreachable,
            "the routed path did not reach the server from the client's host within 15s \
             (no route); the log of nginx: (empty)",
        );
        check(
            RunFailure::ClientFailed {
                tool: Tool::Ab,
                phase: Phase::Warmup,
                status: exit(22),
                problem: None,
                stderr_tail: Some("apr_socket_recv: Connection refused (111)".into()),
            },
            RunFailureKind::ClientFailed,
            "the warm-up run of ab failed (exit status 22); stderr: apr_socket_recv: \
             Connection refused (111)",
        );
        check(
            RunFailure::ClientFailed {
                tool: Tool::Wrk,
                phase: Phase::Measure,
                status: exit(1),
                problem: Some("wrk gave no summary".into()),
                stderr_tail: Some("(empty)".into()),
            },
            RunFailureKind::ClientFailed,
            "the measured run of wrk (exit status 1): wrk gave no summary; stderr: (empty)",
        );
        check(
            RunFailure::ClientFailed {
                tool: Tool::Herd,
                phase: Phase::Measure,
                status: exit(2),
                problem: Some("herd wrote no run.json; its stderr: \"boom\"".into()),
                stderr_tail: None,
            },
            RunFailureKind::ClientFailed,
            "the measured run of herd (exit status 2): herd wrote no run.json; its stderr: \"boom\"",
        );
        check(
            RunFailure::ClientTimedOut {
                tool: Tool::Herd,
                phase: Phase::Measure,
                limit: Duration::from_secs(70),
                stderr_tail: "(empty)".into(),
            },
            RunFailureKind::ClientTimedOut,
            "the measured run of herd ran past 70s and was stopped; stderr: (empty)",
        );
        check(
            RunFailure::NoResponse { tool: Tool::Herd, failures: vec![(Failure::Connect, 200)] },
            RunFailureKind::NoResponse,
            "no request of the measured run got a response: the server could not be reached \
             (herd counted connect 200)",
        );
        check(
            RunFailure::ServerCount(super::super::server_count::CountFailure::Mismatch {
                server: "nginx".into(),
                request: "GET /sizes/101.html".into(),
                logged: 601,
                least: 301,
                most: 301,
                sent: "1 verification, 300 measured completed".into(),
            }),
            RunFailureKind::ServerCount,
            "server count: the access log of nginx has 601 lines of GET /sizes/101.html, the \
             client's counts allow exactly 301 (1 verification, 300 measured completed): more \
             than the client sent: suspect something else sent this request to the server, or \
             the client sent more than it counted",
        );
    }

    #[test]
    fn verify_says_what_came_back_or_why_nothing_did() {
        let wrong = RunFailure::VerifyFailed {
            server: "nginx".into(),
            method: "GET",
            path: "/9x9.php".into(),
            why: Box::new(VerifyError::Status { got: 404, want: 200, body_start: "<html>".into() }),
        };
        check(
            wrong,
            RunFailureKind::Verify,
            "verify: nginx answered GET /9x9.php with status 404 instead of 200 (body starts: \
             \"<html>\")",
        );
        let addr = "127.0.0.1:4000".parse().unwrap();
        let none = RunFailure::VerifyFailed {
            server: "nginx".into(),
            method: "GET",
            path: "/9x9.php".into(),
            why: Box::new(VerifyError::NoAnswer { addr }),
        };
        check(
            none,
            RunFailureKind::Verify,
            "verify: GET /9x9.php on nginx: 127.0.0.1:4000 closed the connection without answering",
        );
    }
}
