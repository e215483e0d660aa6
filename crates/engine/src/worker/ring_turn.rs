//! The loop on io_uring (`--io uring`): the same turn as worker/base.rs's — connections to
//! open, due requests, timers, the periodic check, the same [`Worker`] and links — but the
//! wait is the ring's, and what it brings are completions, not readiness: bytes received,
//! a connect or a send done. One `io_uring_enter` a turn submits what the turn decided (the
//! worker's [`RingOp`]s, handed over in order) and waits for what comes back.
//!
//! A turn's wait is capped by the next timer, check, deadline and, in an open loop, the next
//! due request (there is no timerfd to wake it). Ctrl-C ends a wait at once: the ring
//! watches the worker's epoll set, which on the ring holds only the run's waker. By default
//! the turn does not batch its wait (no
//! minimum): a batched wait adds up to its minimum to every latency it measures. The
//! environment's `HERD_URING_MIN_WAIT_US` sets one, to measure what batching buys (docs/io.md):
//! a turn then waits for a batch of completions, or that long once one is there.

use std::os::fd::AsRawFd;
use std::time::Duration;

use super::base::{self, Clock, Pacing};
use super::Worker;
use crate::link::{Link, RingOp};
use crate::uring::{Event as RingEvent, Ops, Ring};
use crate::{EngineError, Recorder};

/// Turns the loop on `ring` until the share is done, the deadline passes, the run stops or
/// Ctrl-C.
pub(super) fn run<'a, R: Recorder, L: Link<'a>>(
    w: &mut Worker<'a, R, L>,
    ring: &mut Ring,
) -> Result<(), EngineError> {
    let mut clock = Clock::new(w);
    let batch = min_wait();
    // Control::stop wakes the poll's waker; the ring sees the poll readable.
    ring.ops().watch(w.base.poll.as_raw_fd());
    while let Some(wait) = base::before_wait(w, &clock, Pacing::Wait)? {
        hand_over(w, &mut ring.ops());
        // Never past what is due: the minimum only where the wait is longer.
        let min_wait = batch.filter(|m| *m < wait);
        ring.turn(Some(wait), min_wait, |ops, c| {
            let i = c.token as usize;
            if i < w.conns.len() {
                if let RingEvent::Sent = c.event {
                    // The buffer the link queued into comes back, with its room: one buffer
                    // per connection, not one on each side.
                    if let Some((_, out)) = w.conns[i].link.outbox() {
                        ops.give_back(c.token, out);
                    }
                    // Sent after its response came (a short send's tail): the pause that
                    // began meanwhile keeps no buffer either.
                    if w.conns[i].thinking().is_some() {
                        super::drop_idle_outbox(&mut w.conns[i].link);
                    }
                }
                w.on_completion(i, c.event);
                hand_over(w, ops);
            }
        })
        .map_err(EngineError::RingTurn)?;
        w.on_polled();
        if w.base.stop || !base::after_wait(w, &mut clock, &mut []) {
            break;
        }
    }
    base::end(w);
    Ok(())
}

/// The room for queued operations kept between turns (the burst at the start needs more,
/// once).
pub(super) const KEEP_OPS: usize = 1024;

/// `HERD_URING_MIN_WAIT_US`: a turn's minimum wait once a completion is there (None: none).
fn min_wait() -> Option<Duration> {
    let us: u64 = std::env::var("HERD_URING_MIN_WAIT_US").ok()?.parse().ok()?;
    (us > 0).then(|| Duration::from_micros(us))
}

/// Hands the worker's queued operations to the ring, in order. A connect the ring refuses at
/// once is a failed connect, which may queue more (a close, the next connection's connect):
/// those follow.
pub(super) fn hand_over<'a, R: Recorder, L: Link<'a>>(w: &mut Worker<'a, R, L>, ops: &mut Ops<'_>) {
    while !w.ring_ops.is_empty() {
        let mut list = std::mem::take(&mut w.ring_ops);
        for op in list.drain(..) {
            match op {
                RingOp::Connect(i, fd, to) => {
                    if let Err(e) = ops.connect(i as u32, fd, &to) {
                        w.on_completion(i, RingEvent::Connected(Err(e)));
                    }
                }
                RingOp::Recv(i, fd) => ops.recv_multishot(i as u32, fd),
                RingOp::RecvUpTo(i, fd, max) => ops.recv_up_to(i as u32, fd, max),
                RingOp::Send(i) => {
                    if let Some((fd, out)) = w.conns[i].link.outbox() {
                        if !out.is_empty() {
                            ops.hand(i as u32, fd, out);
                        }
                    }
                }
                RingOp::Close(i, fd) => ops.close(i as u32, fd),
                RingOp::PollIn(i, fd) => ops.poll_in(i as u32, fd),
                RingOp::PollOut(i, fd) => ops.poll_out(i as u32, fd),
                RingOp::Forget(i) => ops.forget(i as u32),
            }
        }
        // Keep the list's room for the next turn, unless more was queued meanwhile; but not
        // the room of the start's burst (a connect for every connection: 10,000 of them held
        // 0.5 MiB for the run's life), only what a busy turn needs.
        if w.ring_ops.is_empty() {
            list.shrink_to(KEEP_OPS);
            w.ring_ops = list;
        }
    }
}
