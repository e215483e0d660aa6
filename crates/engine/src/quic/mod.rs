//! HTTP/3's transport: QUIC (quinn-proto, sans-IO) driven from herd's own mio loop over
//! UDP, with herd-proto's h3 layer above it. The multiplexed worker drives it
//! (link/h3link.rs) for `Wire::Http3`; public also for its integration tests
//! (crates/engine/tests/quic.rs, quic_alloc.rs) and the micro-benchmark example
//! (examples/h3_bench.rs).
//!
//! - [`QuicClient`] (config.rs): what a run's connections share, built once from herd's TLS
//!   settings (TLS 1.3, ALPN `h3`) and [`QuicSettings`].
//! - [`QuicConn`] (conn.rs): one connection: one quinn `Endpoint` and `Connection` over one
//!   connected UDP socket (udp.rs, udp_sys.rs: GSO/GRO and `sendmmsg`/`recvmmsg` where the
//!   kernel has them, detected when it opens). The socket is opened where every connection's
//!   is, socket.rs (`--bind` holds), and handed to the connection. `poll_timeout` is for the
//!   worker's timer heap.
//! - [`H3Conn`] (h3.rs): HTTP/3 on it: requests on their own streams, responses read into
//!   reused [`herd_proto::h3::ResponseReader`]s, events ([`H3Event`]) for the session.
//! - [`IoBuffers`] (buffers.rs): a worker's receive pool and send buffers, shared by its
//!   connections: no allocation per datagram once warm.
//! - [`QuicStats`] (stats.rs) and [`QuicFailure`] (failure.rs): what a connection did, and
//!   each way it can fail, named.
//!
//! How it plugs in: as a link beside HTTP/2's (`link/`): the worker registers each connection's socket with its `Poll`, calls `on_readable` on a
//! readable or error event and `on_writable` on a writable one, `on_timeout` from its timer
//! heap at `poll_timeout`, submits requests while `can_submit`, and turns [`H3Event`]s into
//! the requests' moments (connect time at `Connected`, first byte, done or failed; a
//! [`QuicFailure::Goaway`] sent again uncounted, as HTTP/2's refusals are). Unlike TCP, the
//! kernel never says "connected": the handshake's end is `H3Event::Connected`.

mod buffers;
mod config;
mod conn;
mod failure;
mod h3;
mod stats;
pub(crate) mod udp;
pub(crate) mod udp_sys;

pub use buffers::IoBuffers;
pub use config::{QuicClient, QuicConfigError, QuicSettings};
pub use conn::QuicConn;
pub use failure::QuicFailure;
pub use h3::{H3Conn, H3Event, Refused};
pub use stats::{QuicRtt, QuicStats};
pub use udp::Offload;
