//! One worker: a thread with its own mio event loop, its own listening socket and its own
//! connections, sharing nothing mutable with other workers (its counters are only read by
//! others). It accepts, drives connections when their sockets report events, re-drives those
//! that yielded, closes idle ones, and returns when the stop handle fires. Does not speak HTTP
//! (conn.rs does).
//!
//! Idle connections are found by a sweep over all connections every `idle_timeout / 4` (at
//! most once a second), not by a timer per connection: a connection's deadline moves on every
//! request, and moving a timer costs more than a sweep of a few thousand entries. A connection is
//! therefore closed between `idle_timeout` and `idle_timeout × 1.25` after its last progress.
//!
//! Held responses (`/sleep`, `/stall`) are the one thing that needs a precise timer: a binary
//! heap of (instant, slot, generation), where the generation tells a timer for a closed
//! connection from one for the connection that reused its slot.
//!
//! Stopping: the listener is closed and HTTP/1 connections are closed at once (a response in
//! flight is cut off); HTTP/2 connections get GOAWAY and finish the streams they have open,
//! for at most [`DRAIN`], before the worker returns.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::TcpListener as StdTcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use herd_uring::choice::Backend;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Registry, Token, Waker};

use crate::access_log::AccessLog;
use crate::conn::{Conn, Drive};
use crate::connection::Connection;
use crate::date::DateCache;
use crate::file_cache::FileCache;
use crate::server::Shared;
use crate::stats::WorkerCounters;
use crate::stop::StopHandle;
use crate::transport::{RingStream, TlsStream, Transport};

/// What a connection needs from its worker while it is driven.
pub(crate) struct Ctx<'w> {
    pub(crate) shared: &'w Shared,
    pub(crate) counters: &'w WorkerCounters,
    pub(crate) date: &'w DateCache,
    pub(crate) log: &'w mut AccessLog,
    /// This worker's open-file cache.
    pub(crate) files: &'w mut FileCache,
    /// The time of this event-loop turn.
    pub(crate) now: Instant,
}

const WAKER: Token = Token(0);
const LISTENER: Token = Token(1);
/// Connection `i` is registered as token `FIRST_CONN + i`.
const FIRST_CONN: usize = 2;

/// After `accept` fails for lack of resources (descriptors, memory), wait this long before
/// trying again rather than spinning on the error.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long a stopping worker lets HTTP/2 connections finish their open streams.
const DRAIN: Duration = Duration::from_secs(5);

/// Runs worker `id`, on the backend the server settled, until `stop` fires or epoll or the
/// ring fails.
pub(crate) fn run(
    id: usize,
    listener: StdTcpListener,
    shared: &Shared,
    stop: &StopHandle,
) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    if stop.register(waker) {
        return Ok(());
    }
    let mut listener = TcpListener::from_std(listener);
    if shared.io.backend == Backend::Epoll {
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
    }
    let now = Instant::now();
    let sweep_every =
        (shared.config.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut worker = Worker {
        shared,
        counters: &shared.counters[id],
        listener,
        conns: Vec::new(),
        generations: Vec::new(),
        timers: BinaryHeap::new(),
        free: Vec::new(),
        n_open: 0,
        yielded: Vec::new(),
        date: DateCache::new(SystemTime::now()),
        log: AccessLog::new(shared.config.access_log),
        files: FileCache::default(),
        sweep_every,
        next_sweep: now + sweep_every,
        accept_paused_until: None,
        drain_until: None,
        ring: None,
    };
    if shared.io.backend == Backend::Uring {
        return ring_loop::run(&mut worker, &mut poll, stop);
    }
    worker.event_loop(&mut poll, stop)
}

mod ring_loop;

struct Worker<'s> {
    shared: &'s Shared,
    counters: &'s WorkerCounters,
    listener: TcpListener,
    /// Connections by slot; a slot's token is `FIRST_CONN + slot`.
    conns: Vec<Option<Connection>>,
    /// Bumped each time a slot's connection closes.
    generations: Vec<u64>,
    /// Held responses to release: (when, slot, generation).
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    /// Empty slots, reused before `conns` grows.
    free: Vec<usize>,
    n_open: usize,
    /// Slots whose `drive` yielded: driven again next turn, before new events.
    yielded: Vec<usize>,
    date: DateCache,
    log: AccessLog,
    files: FileCache,
    sweep_every: Duration,
    next_sweep: Instant,
    accept_paused_until: Option<Instant>,
    /// Stopping: HTTP/2 connections may finish until then.
    drain_until: Option<Instant>,
    /// On an io_uring worker: what the loop hands its ring at the next turn (None on epoll).
    ring: Option<ring_loop::Handover>,
}

impl Worker<'_> {
    fn event_loop(&mut self, poll: &mut Poll, stop: &StopHandle) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut again = Vec::new();
        loop {
            let timeout = self.poll_timeout(Instant::now());
            if let Err(e) = poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            let now = Instant::now();
            if self.turn_begins(poll.registry(), stop, now, &mut again) {
                return Ok(());
            }
            for event in events.iter() {
                match event.token() {
                    WAKER => {}
                    LISTENER => self.accept(poll.registry(), now),
                    Token(t) => {
                        let slot = t - FIRST_CONN;
                        let closed = event.is_read_closed() || event.is_error();
                        if event.is_readable() || closed {
                            if let Some(Some(conn)) = self.conns.get_mut(slot) {
                                conn.readable_event(closed);
                            }
                        }
                        self.drive(slot, now);
                    }
                }
            }
            if self.turn_ends(poll.registry(), now) {
                return Ok(());
            }
        }
    }

    /// What every turn does once its wait is over, on either backend, before the
    /// connections the wait reported: the stop (true: the worker is done), the date, the
    /// connections that yielded last turn, the held responses now due.
    fn turn_begins(
        &mut self,
        registry: &Registry,
        stop: &StopHandle,
        now: Instant,
        again: &mut Vec<usize>,
    ) -> bool {
        // The waker's only message is "stop"; checking the flag covers it.
        if stop.is_stopped() && self.drain(registry, now) {
            return true;
        }
        self.date.refresh(SystemTime::now());
        std::mem::swap(again, &mut self.yielded);
        for slot in again.drain(..) {
            self.drive(slot, now);
        }
        while let Some(&Reverse((when, slot, generation))) = self.timers.peek() {
            if when > now {
                break;
            }
            self.timers.pop();
            if self.generations.get(slot) == Some(&generation) {
                self.drive(slot, now);
            }
        }
        false
    }

    /// What every turn does last, on either backend: accepting again after a pause, the idle
    /// sweep, the access log; true once a drain is over.
    fn turn_ends(&mut self, registry: &Registry, now: Instant) -> bool {
        if self.accept_paused_until.is_some_and(|until| now >= until) {
            self.accept_paused_until = None;
            // Edge-triggered (and on the ring, not polled while paused): connections that
            // queued meanwhile raise no new event.
            self.accept(registry, now);
        }
        if now >= self.next_sweep {
            self.sweep(now);
        }
        self.log.flush();
        // Connections that finished draining this turn: done without another wait.
        self.drain_until.is_some() && self.drain(registry, now)
    }

    /// The server is stopping: on the first call, stops accepting, closes the HTTP/1
    /// connections and sends GOAWAY on the HTTP/2 ones. Returns whether the worker is done:
    /// no connection is left that has more to send, or the drain time is over.
    fn drain(&mut self, registry: &Registry, now: Instant) -> bool {
        if self.drain_until.is_none() {
            self.drain_until = Some(now + DRAIN);
            let _ = registry.deregister(&mut self.listener);
            for slot in 0..self.conns.len() {
                let finishes = self.conns[slot].as_mut().is_some_and(Connection::go_away);
                if finishes {
                    self.drive(slot, now);
                } else {
                    self.close(slot);
                }
            }
        }
        for slot in 0..self.conns.len() {
            if self.conns[slot].as_ref().is_some_and(Connection::only_lingering) {
                self.close(slot);
            }
        }
        self.n_open == 0 || self.drain_until.is_some_and(|until| now >= until)
    }

    /// How long epoll may wait: not at all if connections yielded, otherwise until the first
    /// of the next held response, the next sweep if any connection is open, and the end of an
    /// accept pause; forever if there is none.
    fn poll_timeout(&self, now: Instant) -> Option<Duration> {
        if !self.yielded.is_empty() {
            return Some(Duration::ZERO);
        }
        let timer = self.timers.peek().map(|Reverse((when, _, _))| *when);
        let sweep = (self.n_open > 0).then_some(self.next_sweep);
        [timer, sweep, self.accept_paused_until, self.drain_until]
            .into_iter()
            .flatten()
            .min()
            .map(|deadline| deadline.saturating_duration_since(now))
    }

    /// Accepts until the queue is empty (edge-triggered).
    fn accept(&mut self, registry: &Registry, now: Instant) {
        if self.accept_paused_until.is_some() || self.drain_until.is_some() {
            return;
        }
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    // Without Nagle's algorithm on every connection, as every socket herd's
                    // client opens (docs/socket-options.md): a response's last small write
                    // (a TLS record, an HTTP/2 frame, the next pipelined answer) would wait
                    // behind an unacknowledged one for the client's delayed ACK, 40 ms.
                    // Best effort: a socket refusing it still serves, with those stalls.
                    let _ = stream.set_nodelay(true);
                    let slot = self.free_slot();
                    let Some(io) = self.transport(stream, slot, registry) else {
                        // Dropping the stream closed it; the client sees a reset.
                        self.free.push(slot);
                        continue;
                    };
                    let h2 = self.shared.h2_allowed(&io);
                    let conn = Conn::new(io, peer, self.shared.limits(), now, h2);
                    self.conns[slot] = Some(Connection::Http1(conn));
                    self.n_open += 1;
                    self.counters.add_connection();
                    // The request usually arrived with the handshake's last ACK or right after:
                    // read it now rather than on the event the registration raises, which then
                    // finds nothing to do and costs no system call. (On the ring this finds
                    // nothing yet and arms the connection's first receive.)
                    self.drive(slot, now);
                }
                Err(e) => {
                    if !self.accept_failed(&e, now) {
                        return;
                    }
                }
            }
        }
    }

    /// The transport of a connection accepted into `slot`: on the ring, its bytes through the
    /// ring; on epoll, its socket registered, plain or TLS. None when that failed (the stream
    /// is dropped: closed).
    fn transport(
        &mut self,
        mut stream: TcpStream,
        slot: usize,
        registry: &Registry,
    ) -> Option<Transport> {
        if self.ring.is_some() {
            return Some(Transport::Ring(Box::new(RingStream::new(stream))));
        }
        let interest = Interest::READABLE | Interest::WRITABLE;
        registry.register(&mut stream, Token(FIRST_CONN + slot), interest).ok()?;
        let Some(config) = &self.shared.tls else { return Some(Transport::Plain(stream)) };
        // rustls refuses only a configuration it accepted at bind: drop this connection
        // rather than the server.
        let session = rustls::ServerConnection::new(config.clone()).ok()?;
        self.counters.add_tls_connection();
        Some(Transport::Tls(Box::new(TlsStream::new(stream, session))))
    }

    /// A slot for a new connection: a closed one's, else one more.
    fn free_slot(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.generations.push(0);
            self.conns.len() - 1
        })
    }

    /// What a failed `accept` means: true to go on accepting (a signal, a connection its
    /// client already aborted), false to stop for now: the queue is empty, or (EMFILE, ENFILE,
    /// ENOBUFS, ENOMEM, a firewall's EPERM) it is not drained, so accepting pauses instead of
    /// spinning, and the cached descriptors go first: connections matter more than open files.
    fn accept_failed(&mut self, e: &io::Error, now: Instant) -> bool {
        match e.kind() {
            io::ErrorKind::WouldBlock => false,
            io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted => true,
            _ => {
                self.files.clear();
                self.accept_paused_until = Some(now + ACCEPT_BACKOFF);
                false
            }
        }
    }

    fn drive(&mut self, slot: usize, now: Instant) {
        if self.ring.is_some() && self.closes_once_sent(slot) {
            return;
        }
        let Some(Some(conn)) = self.conns.get_mut(slot) else {
            // A stale event for a connection closed earlier this turn.
            return;
        };
        let mut ctx = Ctx {
            shared: self.shared,
            counters: self.counters,
            date: &self.date,
            log: &mut self.log,
            files: &mut self.files,
            now,
        };
        match conn.drive(&mut ctx) {
            Drive::Wait => {}
            Drive::Yield => self.yielded.push(slot),
            Drive::Close => self.close(slot),
            Drive::Sleep(until) => {
                let generation = self.generations.get(slot).copied().unwrap_or_default();
                self.timers.push(Reverse((until, slot, generation)));
            }
            Drive::Upgrade => self.upgrade(slot, now),
        }
        if self.ring.is_some() {
            self.queue_for_ring(slot);
        }
    }

    /// The HTTP/1 connection in `slot` turned out to speak HTTP/2: it becomes an HTTP/2 one,
    /// driven at once (its first bytes are read).
    fn upgrade(&mut self, slot: usize, now: Instant) {
        if let Some(Some(Connection::Http1(_))) = self.conns.get(slot) {
            if let Some(Connection::Http1(conn)) = self.conns[slot].take() {
                let h2 = conn.into_h2(self.shared.limits(), now);
                self.conns[slot] = Some(Connection::Http2(Box::new(h2)));
                self.counters.add_h2_connection();
                self.drive(slot, now);
            }
        }
    }

    fn close(&mut self, slot: usize) {
        if self.ring.is_some() {
            return self.close_on_ring(slot);
        }
        // Dropping the connection closes its socket, which also removes it from epoll
        // (deregistering first would cost a system call and change nothing).
        if self.conns.get_mut(slot).and_then(Option::take).is_some() {
            self.free.push(slot);
            self.n_open -= 1;
            if let Some(generation) = self.generations.get_mut(slot) {
                *generation += 1;
            }
        }
    }

    /// Closes connections past their deadline.
    fn sweep(&mut self, now: Instant) {
        self.next_sweep = now + self.sweep_every;
        let idle = self.shared.config.idle_timeout;
        for slot in 0..self.conns.len() {
            if self.conns[slot].as_ref().is_some_and(|c| now >= c.deadline(idle)) {
                self.close(slot);
            }
        }
    }
}
