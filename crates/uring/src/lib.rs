//! io_uring, for the completion backend beside epoll, of herd's client (herd-engine) and of
//! herd serve: whether this machine allows it ([`probe`]), and the pieces the backend stands
//! on, each with every `unsafe` it needs and why that is sound.
//!
//! - choice.rs: `--io auto|epoll|uring`'s words, and the probe's answer kept for the process.
//! - probe.rs: can a ring be made the way the backend makes it, and does a multishot receive
//!   into a provided-buffer ring really work here? If not, why not, in one line.
//! - buf_ring.rs: a provided-buffer ring: the receive buffers the kernel picks from, sized to
//!   a loop turn's completions rather than to the connection count.
//! - ring.rs: the ring a completion-backend worker turns: operations queued by token,
//!   one `io_uring_enter` a turn, completions handed back with stale ones (a closed token's)
//!   dropped; with completion.rs (what a completion says, whose it is) and send_queue.rs (a
//!   connection's bytes on their way out, owned by the ring).

mod buf_ring;
pub mod choice;
mod completion;
pub mod probe;
mod ring;
mod send_queue;

pub(crate) use buf_ring::BufRing;
pub use ring::{Completion, Counters, Event, Ops, Ring, RingConfig, Setup, TaskRun};
