//! What a connection speaks, behind one seam ([`Link`], seam.rs) that the one worker
//! (worker.rs) drives: HTTP/1 (h1link.rs), HTTP/2 (h2link.rs) and HTTP/3 (h3link.rs), with
//! the same [`crate::Completed`] and [`crate::Failed`] for every request, so that every
//! figure herd reports exists for every protocol.
//!
//! - seam.rs: [`Link`], what the worker asks of a connection's protocol, and [`Outcomes`],
//!   where a link reports each request's end.
//! - tcp.rs: a TCP connection, plain or TLS, as HTTP/1 and HTTP/2 open and read it.
//! - h1link.rs: HTTP/1 as a link, over session/ (HTTP/1's protocol without I/O).
//! - h2link.rs: HTTP/2 as a link; h2/: the HTTP/2 session without I/O (frames in, outcomes
//!   out), on herd-proto's codec; request.rs: the workload's requests in HTTP/2's and
//!   HTTP/3's terms, derived once per run.
//! - h3link.rs: HTTP/3 as a link, on the QUIC driver (quic/): requests in reused slots, the
//!   driver's events turned into the same outcomes as HTTP/2's. QUIC's timers are the
//!   worker's timers; its UDP socket is in the worker's poll.

mod h1link;
mod h2;
mod h2link;
mod h3link;
mod request;
mod seam;
mod tcp;

pub(crate) use h1link::{H1Ctx, H1Link};
pub(crate) use h2link::{H2Ctx, H2Link};
pub(crate) use h3link::add as add_quic;
pub(crate) use h3link::{H3Ctx, H3Link};
pub(crate) use request::RequestFields;
pub(crate) use seam::{
    Dial, Link, Opening, Outcomes, Progress, Readiness, Received, RingOp, RingRecv, Via,
};
