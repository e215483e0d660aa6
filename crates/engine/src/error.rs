//! Errors that prevent a run from starting or continuing (not per-request failures, which
//! are counted, see herd_stats::FailureKind), and the values a [`crate::RunSpec`] refuses.
//!
//! A message never repeats its source: callers print the chain (`{:#}` with anyhow), and a
//! cause written into the message as well would be printed twice.

use std::io;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot create the event loop")]
    Poll(#[source] io::Error),
    #[error("cannot set the open loop's timer")]
    Timer(#[source] io::Error),
    #[error(
        "cannot make a worker's io_uring ring, though the probe at start could (--io epoll runs \
         without one)"
    )]
    Ring(#[source] io::Error),
    /// The ring failed mid-run (`io_uring_enter` refused a turn): the run stops with this.
    #[error("a worker's io_uring ring failed during the run (--io epoll runs without one)")]
    RingTurn(#[source] io::Error),
    #[error("cannot start a worker thread")]
    Thread(#[source] io::Error),
    #[error("a worker thread panicked")]
    WorkerPanicked,
    #[error("the target has no address to connect to")]
    NoAddress,
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The `--io` asked for cannot run here, or not for this protocol yet.
    #[error(transparent)]
    Io(#[from] crate::IoError),
    #[error("request {index} of the workload cannot be sent over HTTP/2 or HTTP/3: {reason}")]
    Http2Request { index: usize, reason: &'static str },
}

/// A value that would make a run the engine cannot carry out.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SpecError {
    #[error("the run needs a bound: give a request count or a duration")]
    Unbounded,
    #[error("the run needs at least one connection")]
    NoConnections,
    #[error("requests per connection {lo}-{hi}: give at least 1, and the lower bound first")]
    BadPerConnection { lo: u32, hi: u32 },
    #[error("HTTP/2 and HTTP/3 have streams instead of pipelining: give the streams per connection, not a pipeline depth")]
    PipelinedHttp2,
    #[error("think time is not available over HTTP/2 and HTTP/3 (a connection carries many requests at once); use a rate instead")]
    ThinkHttp2,
    #[error("flow-control window of {0} bytes: give 1 to 2^31 − 1 (RFC 9113 §6.9.1)")]
    BadWindow(u32),
    #[error("the receive-rate cap paces TCP reads; HTTP/3 runs over UDP and has none: drop it")]
    ReceiveRateHttp3,
    #[error("HTTP/3 runs over UDP to a host and port, not over a Unix socket")]
    UnixHttp3,
    #[error("agent {index} of {count}: agents are numbered 0 to {}", count.saturating_sub(1))]
    BadSlice { index: u32, count: u32 },
    #[error("agent {index} of {count} has none of the run's {of} {what}: give at least as many {what} as agents, or fewer agents")]
    EmptySlice { index: u32, count: u32, what: &'static str, of: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_stats::{causes, with_causes};

    #[test]
    fn each_cause_is_printed_once() {
        let cause = || io::Error::other("the kernel said no");
        for e in
            [EngineError::Poll(cause()), EngineError::Timer(cause()), EngineError::Thread(cause())]
        {
            let links: Vec<String> = causes(&e).map(|c| c.to_string()).collect();
            assert_eq!(links.len(), 2, "{links:?}");
            let printed = with_causes(&e);
            assert_eq!(printed, links.join(": "));
            assert_eq!(printed.matches("the kernel said no").count(), 1, "{printed}");
            // The way the binary prints it: `herd: {err:#}`.
            let shown = format!("{:#}", anyhow::Error::from(e));
            assert_eq!(shown.matches("the kernel said no").count(), 1, "{shown}");
            assert!(shown.starts_with("cannot "), "{shown}");
        }
    }
}
