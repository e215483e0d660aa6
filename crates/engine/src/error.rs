//! Errors that prevent a run from starting or continuing (not per-request failures,
//! which are counted, see herd_stats::FailureKind).

use std::io;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot create the event loop: {0}")]
    Poll(#[source] io::Error),
    #[error("cannot set the open loop's timer: {0}")]
    Timer(#[source] io::Error),
    #[error("cannot start worker thread: {0}")]
    Thread(#[source] io::Error),
    #[error("a worker thread panicked")]
    WorkerPanicked,
    #[error("the run needs a bound: give a request count or a duration")]
    Unbounded,
    #[error("the run needs at least one connection")]
    NoConnections,
    #[error("the target has no address to connect to")]
    NoAddress,
    #[error("the request rate must be a positive, finite number of requests per second")]
    BadRate,
    #[error("pipelining needs a closed loop with keep-alive and no think time")]
    BadPipeline,
}
