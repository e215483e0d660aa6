//! The worker's loop on io_uring (`herd serve --io uring`, docs/io.md): the same worker —
//! its connections, timers, sweep and drain — turning herd-uring's ring instead of epoll.
//! Plain TCP only (HTTP/1 and h2c); a TLS listener stays on epoll (server.rs refuses it).
//!
//! A turn: hand the ring what the last one decided (closes first, so that a token is retired
//! before a new connection in its slot arms a receive; then receives to arm; then each
//! connection's written bytes, one send each), then one `io_uring_enter` that submits them
//! and waits. What comes back: bytes received (into the connection's [`RingStream`]), a
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

use std::cmp::Reverse;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Instant, SystemTime};

use herd_uring::{Event, Ring, RingConfig};
use mio::Poll;

use super::Worker;
use crate::conn::Conn;
use crate::connection::Connection;
use crate::stop::StopHandle;
use crate::transport::{RingStream, Transport};

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
    ring.ops().poll_in(LISTENER, w.listener.as_raw_fd());
    // Connections that got a completion this turn, each once.
    let mut ready: Vec<usize> = Vec::new();
    let mut marked: Vec<bool> = Vec::new();
    let mut again = Vec::new();
    loop {
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
        if stop.is_stopped() && w.drain(poll.registry(), now) {
            hand_over(w, &mut ring);
            return Ok(());
        }
        w.date.refresh(SystemTime::now());
        std::mem::swap(&mut again, &mut w.yielded);
        for slot in again.drain(..) {
            drive(w, slot, now);
        }
        while let Some(&Reverse((when, slot, generation))) = w.timers.peek() {
            if when > now {
                break;
            }
            w.timers.pop();
            if w.generations.get(slot) == Some(&generation) {
                drive(w, slot, now);
            }
        }
        for slot in ready.drain(..) {
            marked[slot] = false;
            drive(w, slot, now);
        }
        if accept || w.accept_paused_until.is_some_and(|until| now >= until) {
            w.accept_paused_until = None;
            accept_all(w, now);
            if w.accept_paused_until.is_none() && w.drain_until.is_none() {
                ring.ops().poll_in(LISTENER, w.listener.as_raw_fd());
            }
        }
        if now >= w.next_sweep {
            w.sweep(now);
        }
        w.log.flush();
        if w.drain_until.is_some() && w.drain(poll.registry(), now) {
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

/// Drives a connection, then queues what it wrote for the ring and, once it has read what
/// came, its next receive; or, if it only waits for the ring to send before it closes,
/// closes it once that is done.
fn drive(w: &mut Worker<'_>, slot: usize, now: Instant) {
    let Some(r) = w.conns.get_mut(slot).and_then(Option::as_mut).and_then(Connection::ring_stream)
    else {
        return;
    };
    if r.close_when_sent {
        if !r.sending() {
            w.close_now(slot);
        }
        return;
    }
    w.drive(slot, now);
    let Some(r) = w.conns.get_mut(slot).and_then(Option::as_mut).and_then(Connection::ring_stream)
    else {
        return;
    };
    let (wrote, reads) = (!r.outbox.is_empty(), r.wants_recv() && !r.close_when_sent);
    if let Some(h) = w.ring.as_mut() {
        if wrote {
            h.dirty.push(slot);
        }
        if reads {
            h.arm.push(slot);
        }
    }
}

/// Accepts until the queue is empty, as epoll's loop does; each connection's receive is
/// armed at the next turn.
fn accept_all(w: &mut Worker<'_>, now: Instant) {
    if w.drain_until.is_some() {
        return;
    }
    loop {
        match w.listener.accept() {
            Ok((stream, peer)) => {
                // As on epoll (worker.rs): no Nagle on any connection, best effort.
                let _ = stream.set_nodelay(true);
                let slot = w.free_slot();
                let io = Transport::Ring(Box::new(RingStream::new(stream)));
                let h2 = w.shared.h2_allowed(&io);
                let conn = Conn::new(io, peer, w.shared.limits(), now, h2);
                w.conns[slot] = Some(Connection::Http1(conn));
                w.n_open += 1;
                w.counters.add_connection();
                if let Some(h) = w.ring.as_mut() {
                    h.arm.push(slot);
                }
            }
            Err(e) => {
                if !w.accept_failed(&e, now) {
                    return;
                }
            }
        }
    }
}

impl Worker<'_> {
    /// [`Worker::close`] on the ring: a connection the ring still sends for closes once
    /// that is done ([`drive`] sees to it after the send's completion).
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
