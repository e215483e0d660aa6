//! Multiplexed connections: HTTP/2 and HTTP/3, where one connection carries many requests
//! at once as streams.
//!
//! HTTP/1's worker (worker.rs) asks one question per connection — is its request done? —
//! and its connection has one current request. Here a connection has room or not, and its
//! requests are streams, so the worker is its own loop ([`MuxWorker`], worker.rs) over the
//! same parts: the transport (plain or TLS), the pacer, the timers, the receive-rate cap,
//! the quota and the recorder, with the same [`crate::Completed`] and [`crate::Failed`]
//! for every request, so that every figure herd reports exists for every protocol.
//!
//! - request.rs: the workload's requests in HTTP/2's terms, derived once per run.
//! - conn.rs: one connection: its state and its protocol's link (HTTP/2 on a transport, or
//!   HTTP/3 on the QUIC driver), and the records of its requests' outcomes.
//! - h2/: the HTTP/2 session without I/O (frames in, outcomes out), on herd-proto's codec.
//! - h3link.rs: an HTTP/3 connection on the QUIC driver (quic/): requests in reused slots,
//!   the driver's events turned into the same outcomes as HTTP/2's. QUIC's timers are the
//!   worker's timers; its UDP socket is in the worker's poll.

mod conn;
mod h2;
mod h3link;
mod request;
mod worker;

pub(crate) use h3link::add as add_quic;
pub(crate) use request::RequestFields;
pub(crate) use worker::MuxWorker;
