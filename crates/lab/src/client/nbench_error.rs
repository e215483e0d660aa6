//! Why an NBENCH run (Samba's `smbtorture … bench.nbench`) could not be started, or what
//! went wrong in it. smbtorture's own words often mislead (a refused connection reads
//! `NT_STATUS_NO_MEMORY`, and every failure ends in `Unknown error/failure`), so each variant
//! names the real cause and what to do about it, once. The status smbtorture printed is kept
//! in the message where it helps to find the run's output again.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::smbtorture::DBENCH_CLIENT_TXT;

/// What [`super::smbtorture::NbenchJob::argv`] refused, or what [`super::smbtorture::parse`]
/// found in a run's output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NbenchError {
    /// The server's address is outside herd's ranges.
    #[error(
        "refusing to send SMB load to {server}: herd loads only 127.0.0.0/8, ::1 and \
         198.18.0.0/15; give an address in one of them"
    )]
    NotAllowed { server: SocketAddr },
    /// The share name cannot be part of a `//ADDR/SHARE` path.
    #[error(
        "the share name {share:?} cannot go into smbtorture's //ADDR/SHARE: give a non-empty \
         name without `/`, `\\`, spaces or control characters"
    )]
    BadShareName { share: String },
    #[error("smbtorture needs at least 1 client (--num-progs); give 1 or more")]
    NoClients,
    /// smbtorture's `-t` takes whole seconds.
    #[error(
        "smbtorture cannot run for {duration:?}: its -t takes whole seconds, at least 1; give \
         a whole number of seconds"
    )]
    BadDuration { duration: Duration },
    /// The NetBench load file is not there (checked before the run, and read from
    /// smbtorture's `PATH: No such file or directory` after it).
    #[error("{}", loadfile_missing(path))]
    LoadfileMissing { path: PathBuf },
    /// `Failed to open connection - NT_STATUS_NO_MEMORY`: smbtorture's words for a refused
    /// TCP connection.
    #[error(
        "no SMB server answered at {server} (smbtorture reports a refused connection as \
         NT_STATUS_NO_MEMORY): start the server, or check the address and port"
    )]
    NoServer { server: SocketAddr },
    /// `NT_STATUS_BAD_NETWORK_NAME`.
    #[error(
        "the SMB server at {server} has no share `{share}` (NT_STATUS_BAD_NETWORK_NAME): give \
         the name of a share in its smb.conf"
    )]
    NoSuchShare { server: SocketAddr, share: String },
    /// `No compatible protocol selected by server` / `NT_STATUS_INVALID_NETWORK_RESPONSE`:
    /// NBENCH speaks SMB1 only, and Samba 4.17 refuses it by default.
    #[error(
        "the SMB server at {server} refuses SMB1 (NT1), the only dialect smbtorture's NBENCH \
         speaks: set `server min protocol = NT1` in its smb.conf"
    )]
    Smb1Refused { server: SocketAddr },
    /// `NT_STATUS_LOGON_FAILURE`: smbtorture logs on as a guest (`-N`).
    #[error(
        "the SMB server at {server} refused the guest logon (NT_STATUS_LOGON_FAILURE): let \
         guests in (`map to guest = Bad User`, and `guest ok = yes` on the share)"
    )]
    LogonFailure { server: SocketAddr },
    /// `Unable to setup \clients - ERRSRV:ERRbaduid`: NBENCH's first step, deleting and
    /// making `\clients` in the share, was refused: the guest cannot reach or write the
    /// share's directory (seen with the share under a 0700 directory).
    #[error(
        "the SMB server at {server} would not let the guest make \\clients in share \
         `{share}` ({status}): the share's directory must be reachable and writable by the \
         user guests map to (every directory above it searchable by others: keep TMPDIR \
         under /tmp), and the server's log says more"
    )]
    ShareUnusable { server: SocketAddr, share: String, status: String },
    /// A client stopped replaying the load file: an operation did not get the status the
    /// trace expects (`[3] Error: NTCreateX should have succeeded - NT_STATUS_ACCESS_DENIED`).
    #[error(
        "an NBENCH client stopped at line {line} of the load file: {what}; check that the \
         share is writable by the user the server maps the guest to (the server's log says \
         more)"
    )]
    ClientStopped { line: u64, what: String },
    /// smbtorture was ended by a signal before it finished.
    #[error(
        "smbtorture was killed by signal {signal} before it finished, so its figures are \
         incomplete; let it run until it exits (its cleanup after the time limit can take a \
         minute)"
    )]
    Killed { signal: i32 },
    /// The runner stopped smbtorture when its kill timeout ran out.
    #[error(
        "smbtorture had not finished after {after:?} and was stopped; give it at least its \
         time limit + 60 s (its cleanup after the limit has no bound), or look at the server"
    )]
    TimedOut { after: Duration },
    /// A failure none of the above explains: smbtorture's first `error:` report, verbatim.
    #[error("smbtorture failed (exit status {status}): {report}")]
    Failed { status: i32, report: String },
    /// The output is not what a run that succeeded prints.
    #[error("smbtorture {problem}")]
    Output { problem: String },
}

/// The message for a missing load file, naming its path once.
pub(super) fn loadfile_missing(path: &Path) -> String {
    if path == Path::new(DBENCH_CLIENT_TXT) {
        format!("the load file {DBENCH_CLIENT_TXT} does not exist: install the `dbench` package, which ships it")
    } else {
        format!(
            "the load file {} does not exist: give one that does (the `dbench` package ships \
             {DBENCH_CLIENT_TXT})",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message names the cause once: a status or a path is not repeated.
    #[test]
    fn each_message_says_its_cause_once() {
        let server: SocketAddr = "127.0.0.1:4450".parse().unwrap();
        let all = [
            NbenchError::NotAllowed { server: "10.0.0.1:445".parse().unwrap() },
            NbenchError::BadShareName { share: "a/b".into() },
            NbenchError::NoClients,
            NbenchError::BadDuration { duration: Duration::from_millis(1500) },
            NbenchError::LoadfileMissing { path: DBENCH_CLIENT_TXT.into() },
            NbenchError::LoadfileMissing { path: "/srv/client.txt".into() },
            NbenchError::NoServer { server },
            NbenchError::NoSuchShare { server, share: "bench".into() },
            NbenchError::Smb1Refused { server },
            NbenchError::LogonFailure { server },
            NbenchError::ShareUnusable {
                server,
                share: "bench".into(),
                status: "ERRSRV:ERRbaduid".into(),
            },
            NbenchError::ClientStopped { line: 3, what: "NTCreateX".into() },
            NbenchError::Killed { signal: 15 },
            NbenchError::TimedOut { after: Duration::from_secs(64) },
            NbenchError::Failed { status: 1, report: "error: nbench [ x ]".into() },
            NbenchError::Output { problem: "printed no Throughput line".into() },
        ];
        for e in all {
            let text = e.to_string();
            herd_testutil::causes::assert_no_repeated_cause(&text);
            for word in ["NT_STATUS_NO_MEMORY", "NT_STATUS_BAD_NETWORK_NAME", DBENCH_CLIENT_TXT] {
                assert!(text.matches(word).count() <= 1, "{text}");
            }
            assert!(!text.ends_with('.'), "{text}");
        }
    }
}
