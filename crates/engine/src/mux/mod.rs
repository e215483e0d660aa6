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
//! - link.rs: the seam, [`Link`]: what the worker asks of a connection's protocol. The
//!   worker is written once and built per protocol; it never asks which one it has.
//! - conn.rs: one connection: its state, its room, and its link.
//! - h2link.rs: HTTP/2 as a link, on a TCP transport (plain or TLS); h2/: the HTTP/2
//!   session without I/O (frames in, outcomes out), on herd-proto's codec.
//! - h3link.rs: HTTP/3 as a link, on the QUIC driver (quic/): requests in reused slots, the
//!   driver's events turned into the same outcomes as HTTP/2's. QUIC's timers are the
//!   worker's timers; its UDP socket is in the worker's poll.

mod conn;
mod h2;
mod h2link;
mod h3link;
mod link;
mod request;
mod worker;

pub(crate) use h2link::{H2Ctx, H2Link};
pub(crate) use h3link::add as add_quic;
pub(crate) use h3link::{H3Ctx, H3Link};
pub(crate) use request::RequestFields;
pub(crate) use worker::MuxWorker;
