//! Multiplexed connections: HTTP/2 (and, next, HTTP/3), where one connection carries many
//! requests at once as streams.
//!
//! HTTP/1's worker (worker.rs) asks one question per connection — is its request done? —
//! and its connection has one current request. Here a connection has room or not, and its
//! requests are streams, so the worker is its own loop ([`MuxWorker`], worker.rs) over the
//! same parts: the transport (plain or TLS), the pacer, the timers, the receive-rate cap,
//! the quota and the recorder, with the same [`crate::Completed`] and [`crate::Failed`]
//! for every request, so that every figure herd reports exists for every protocol.
//!
//! - request.rs: the workload's requests in HTTP/2's terms, derived once per run.
//! - conn.rs: one connection: transport, session, state.
//! - h2/: the HTTP/2 session without I/O (frames in, outcomes out), on herd-proto's codec.

mod conn;
mod h2;
mod request;
mod worker;

pub(crate) use request::H2Request;
pub(crate) use worker::MuxWorker;
