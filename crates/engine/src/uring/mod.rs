//! io_uring, for the completion backend issue 35 builds beside epoll: whether this machine
//! allows it ([`probe`]), and the pieces the backend stands on, each with every `unsafe` it
//! needs and why that is sound.
//!
//! - probe.rs: can a ring be made the way the backend makes it, and does a multishot receive
//!   into a provided-buffer ring really work here? If not, why not, in one line.
//! - buf_ring.rs: a provided-buffer ring: the receive buffers the kernel picks from, sized to
//!   a loop turn's completions rather than to the connection count.

mod buf_ring;
pub mod probe;

pub(crate) use buf_ring::BufRing;
