//! The worker's wait on io_uring (`herd serve --io uring`, docs/io.md): the same worker and
//! the same turn as on epoll — `Worker::turn_begins`, the connections the wait reported,
//! `Worker::turn_ends`; the same accept and drive, which read `Worker::ring` — waiting on
//! herd-uring's ring instead of epoll. Plain TCP only (HTTP/1 and h2c); a TLS listener stays on
//! epoll (io_backend.rs refuses it).
//!
//! A turn: hand the ring what the last one decided (closes first, so that a token is retired
//! before a new connection in its slot arms a receive; then receives to arm; then each
//! connection's written bytes, one send each), then one `io_uring_enter` that submits them
//! and waits. What comes back: bytes received (into the connection's `RingStream`), a
//! receive's end, a send done, the listener readable. Every connection that got something is
//! driven once after the turn, as epoll's loop drives one per event, and gets its next
//! receive once it has read what came (one receive at a time: ring_stream.rs says why).
//!
//! The listener is polled through the ring and accepted as on epoll (`accept4` until it would
//! block), and Ctrl-C reaches the ring through the worker's epoll set, which holds only the
//! stop waker: the ring polls that set's descriptor ([`herd_uring::Ops::watch`]).
//!
//! A close goes through the ring (its receive cancelled, then the descriptor closed), but only
//! once the ring has sent what the connection wrote: closing earlier would cancel the
//! response on its way out.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use herd_uring::{Event, Ring, RingConfig};
use mio::Poll;

use super::Worker;
use crate::connection::Connection;
use crate::stop::StopHandle;
use crate::transport::Transport;

/// The listener's token; connection `slot` is `slot + 1`.
const LISTENER: u32 = 0;

fn token(slot: usize) -> u32 {
    // Slots are below the open-file limit, far below u32::MAX.
    u32::try_from(slot + 1).unwrap_or(u32::MAX)
}

/// What the loop hands the ring at the start of the next turn.
#[derive(Debug, Default)]
pub(crate) struct Handover {
    /// Connections done: their token and descriptor.
    closes: Vec<(u32, OwnedFd)>,
    /// Connections whose next receive is to be armed.
    arm: Vec<usize>,
    /// Connections that wrote.
    dirty: Vec<usize>,
}

/// Turns the worker on a ring until the stop handle fires and the drain is over.
pub(super) fn run(w: &mut Worker<'_>, poll: &mut Poll, stop: &StopHandle) -> io::Result<()> {
    let mut ring = Ring::new(RingConfig { tokens: 256, ..RingConfig::default() })?;
    w.ring = Some(Handover::default());
    ring.ops().watch(poll.as_raw_fd());
    // The listener's poll is armed (it is one-shot: armed again after each accept).
    let mut listening = false;
    // Connections that got a completion this turn, each once.
    let mut ready: Vec<usize> = Vec::new();
    let mut marked: Vec<bool> = Vec::new();
    let mut again = Vec::new();
    loop {
        if !listening && w.accept_paused_until.is_none() && w.drain_until.is_none() {
            ring.ops().poll_in(LISTENER, w.listener.as_raw_fd());
            listening = true;
        }
        hand_over(w, &mut ring);
        let timeout = w.poll_timeout(Instant::now());
        let mut accept = false;
        let conns = &mut w.conns;
        ring.turn(timeout, None, |ops, c| {
            if c.token == LISTENER {
                accept = true;
                return;
            }
            let slot = c.token as usize - 1;
            let Some(Some(conn)) = conns.get_mut(slot) else { return };
            let Some(r) = conn.ring_stream() else { return };
            let closed = match c.event {
                Event::Received(bytes) => {
                    r.received(bytes);
                    false
                }
                Event::RecvEnded(e) => {
                    r.ended(e.map(|e| e.kind()));
                    true
                }
                Event::Sent => {
                    ops.give_back(c.token, &mut r.outbox);
                    r.sent();
                    false
                }
                Event::SendFailed(e) => {
                    r.sent();
                    r.ended(Some(e.kind()));
                    true
                }
                Event::Connected(_) | Event::Polled(_) => false,
            };
            conn.readable_event(closed);
            if marked.len() <= slot {
                marked.resize(slot + 1, false);
            }
            if !marked[slot] {
                marked[slot] = true;
                ready.push(slot);
            }
        })?;
        let now = Instant::now();
        let mut done = w.turn_begins(poll.registry(), stop, now, &mut again);
        if !done {
            for slot in ready.drain(..) {
                marked[slot] = false;
                w.drive(slot, now);
            }
            if accept {
                listening = false;
                w.accept(poll.registry(), now);
            }
            done = w.turn_ends(poll.registry(), now);
        }
        if done {
            // The last closes go to the ring, which finishes them as it is dropped.
            hand_over(w, &mut ring);
            return Ok(());
        }
    }
}

/// Closes, receives to arm and bytes to send, in that order.
fn hand_over(w: &mut Worker<'_>, ring: &mut Ring) {
    let Some(h) = w.ring.as_mut() else { return };
    let mut ops = ring.ops();
    for (t, fd) in h.closes.drain(..) {
        ops.close(t, fd);
    }
    for slot in h.arm.drain(..) {
        if let Some(r) =
            w.conns.get_mut(slot).and_then(Option::as_mut).and_then(Connection::ring_stream)
        {
            if r.wants_recv() {
                ops.recv_up_to(token(slot), r.sock.as_raw_fd(), u32::MAX);
                r.recv_armed();
            }
        }
    }
    for slot in h.dirty.drain(..) {
        if let Some(r) =
            w.conns.get_mut(slot).and_then(Option::as_mut).and_then(Connection::ring_stream)
        {
            if !r.outbox.is_empty() {
                r.handed(r.outbox.len());
                ops.hand(token(slot), r.sock.as_raw_fd(), &mut r.outbox);
            }
        }
    }
}

impl Worker<'_> {
    /// After a connection on the ring was driven: what it wrote goes to the ring's send and,
    /// once it has read all that came, its next receive is armed.
    pub(super) fn queue_for_ring(&mut self, slot: usize) {
        let Some(r) =
            self.conns.get_mut(slot).and_then(Option::as_mut).and_then(Connection::ring_stream)
        else {
            return;
        };
        let (wrote, reads) = (!r.outbox.is_empty(), r.wants_recv() && !r.close_when_sent);
        if let Some(h) = self.ring.as_mut() {
            if wrote {
                h.dirty.push(slot);
            }
            if reads {
                h.arm.push(slot);
            }
        }
    }

    /// Whether the connection in `slot` only waits for the ring to send before it closes
    /// (then it is not driven), closing it if the ring is done.
    pub(super) fn closes_once_sent(&mut self, slot: usize) -> bool {
        let Some(r) =
            self.conns.get_mut(slot).and_then(Option::as_mut).and_then(Connection::ring_stream)
        else {
            return false;
        };
        if !r.close_when_sent {
            return false;
        }
        if !r.sending() {
            self.close_now(slot);
        }
        true
    }

    /// [`Worker::close`] on the ring: a connection the ring still sends for closes once
    /// that is done (its drive after the send's completion sees to it).
    pub(super) fn close_on_ring(&mut self, slot: usize) {
        let sending = self
            .conns
            .get_mut(slot)
            .and_then(Option::as_mut)
            .and_then(Connection::ring_stream)
            .map(|r| {
                r.close_when_sent = true;
                r.sending()
            });
        match sending {
            Some(true) => {
                if let Some(h) = self.ring.as_mut() {
                    h.dirty.push(slot);
                }
            }
            _ => self.close_now(slot),
        }
    }

    /// Frees the slot now; the descriptor goes to the ring to close at the next turn.
    fn close_now(&mut self, slot: usize) {
        let Some(conn) = self.conns.get_mut(slot).and_then(Option::take) else { return };
        self.free.push(slot);
        self.n_open -= 1;
        if let Some(generation) = self.generations.get_mut(slot) {
            *generation += 1;
        }
        if let Transport::Ring(r) = conn.into_transport() {
            if let Some(h) = self.ring.as_mut() {
                h.closes.push((token(slot), OwnedFd::from(r.sock)));
            }
        }
    }
}
