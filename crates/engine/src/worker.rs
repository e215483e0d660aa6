//! The worker: one thread, one mio event loop, a share of the connections and requests.
//!
//! Each worker runs the same loop whatever the load: open connections, write the prebuilt
//! request, read and frame the response, report the outcome to its recorder, and start
//! the next request (on the same connection when both sides keep it alive). Sockets are
//! registered once, edge-triggered, for reading and writing; a read shorter than the
//! buffer means the socket is drained, so a keep-alive request costs one write, one read
//! and a share of epoll_wait, as the floor client in bench/ does.
//!
//! Connections to (re)open are queued rather than opened recursively, so a server that
//! refuses every connection costs a loop turn per attempt, never stack depth.
//!
//! The schedule ([`Schedule`]) changes one thing: who starts the next request. In a closed
//! loop a connection starts its next request as soon as the last one ends. In an open loop
//! ([`Schedule::Rate`]) a finished connection waits (idle if kept alive, free if closed) and
//! the worker's pacer (pacer.rs) hands each due request to a waiting connection, with its due
//! time as the request's intended start; if none is waiting, the request stays due until one
//! is. It is the same loop, the same state machine and the same recorder calls.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use herd_proto::{Framing, ProtoError};
use herd_stats::FailureKind;
use mio::{Events, Interest, Poll, Token, Waker};

use crate::conn::{Conn, ReadOutcome, State};
use crate::control::Slot;
use crate::pacer::Pacer;
use crate::recorder::{Completed, Failed, Recorder, Verdict};
use crate::rng::Rng;
use crate::stream::{self, Stream};
use crate::thread_usage::{ThreadClock, ThreadUsage};
use crate::{Arrivals, Control, EngineError, Run, RunSpec, Schedule, Think, TlsInfo};

const WAKER: Token = Token(usize::MAX);
/// The pacer's timer (open loop only).
const TIMER: Token = Token(usize::MAX - 1);
/// Large reads: on 1 MiB bodies the read size decides the client's cost (baseline.md:
/// ab's 8 KiB reads cost it x2.6 the floor).
const READ_BUFFER: usize = 256 * 1024;
/// How often progress is published for `Control::finished`.
const PUBLISH_EVERY: u64 = 16;
/// A paced (rate-capped) connection reads at least this much at a time when it can, so
/// that a slow link costs a wake-up per segment, not per byte.
const PACED_CHUNK: f64 = 1460.0;
/// How long a connection waits after a failed connect before trying again, in a closed loop
/// bounded by time (see `fail`).
const CONNECT_BACKOFF: Duration = Duration::from_millis(10);

pub(crate) fn run_all<R, F>(
    spec: &RunSpec,
    control: &Control,
    make: &F,
) -> Result<Run<R>, EngineError>
where
    R: Recorder,
    F: Fn(usize) -> R + Sync,
{
    if spec.connections == 0 {
        return Err(EngineError::NoConnections);
    }
    if spec.max_requests.is_none() && spec.duration.is_none() {
        return Err(EngineError::Unbounded);
    }
    if spec.target.addrs.is_empty() && spec.target.unix.is_none() {
        return Err(EngineError::NoAddress);
    }
    if spec.pipeline > 1
        && (!spec.keep_alive || spec.schedule != Schedule::Closed || spec.think.is_some())
    {
        return Err(EngineError::BadPipeline);
    }
    let n = spec.worker_count();
    control.reset_workers();
    let mut prepared = Vec::with_capacity(n as usize);
    for i in 0..n {
        let poll = Poll::new().map_err(EngineError::Poll)?;
        let waker = Waker::new(poll.registry(), WAKER).map_err(EngineError::Poll)?;
        let slot = control.register(waker);
        prepared.push((i, poll, slot));
    }
    let started = Instant::now();
    let started_wall = SystemTime::now();
    let deadline = spec.duration.map(|d| started + d);
    let mut pacers = Vec::with_capacity(n as usize);
    for (i, poll, _) in &prepared {
        pacers.push(match spec.schedule {
            Schedule::Closed => None,
            Schedule::Rate { per_second, arrivals } => {
                if !(per_second.is_finite() && per_second > 0.0) {
                    return Err(EngineError::BadRate);
                }
                let rate = per_second / f64::from(n);
                // Workers take turns: worker i starts i/n of an interval after worker 0.
                let offset = Duration::from_secs_f64(f64::from(*i) / f64::from(n) / rate);
                // Each worker its own stream of gaps: independent arrivals, replayable.
                let seed = match arrivals {
                    Arrivals::Uniform => None,
                    Arrivals::Poisson { seed } => Some(seed ^ u64::from(*i).wrapping_mul(0x9e37)),
                };
                let pacer = Pacer::new(rate, started + offset, seed).map_err(EngineError::Timer)?;
                let fd = pacer.raw_fd();
                poll.registry()
                    .register(&mut mio::unix::SourceFd(&fd), TIMER, Interest::READABLE)
                    .map_err(EngineError::Poll)?;
                Some(pacer)
            }
        });
    }

    let results: Vec<Result<WorkerEnd<R>, EngineError>> = std::thread::scope(|s| {
        let handles: Vec<_> = prepared
            .into_iter()
            .zip(pacers)
            .map(|((i, poll, slot), pacer)| {
                let (conns, quota) = spec.share(i, n);
                let first_conn = spec.first_connection(i, n);
                let recorder = make(i as usize);
                std::thread::Builder::new()
                    .name(format!("herd-worker-{i}"))
                    .spawn_scoped(s, move || {
                        let share = Share {
                            poll,
                            slot,
                            recorder,
                            n_conns: conns,
                            first_conn,
                            rng: Rng::new(spec.seed ^ u64::from(i).wrapping_mul(0x9e37_79b9)),
                            quota,
                            deadline,
                            pacer,
                        };
                        Worker::new(spec, control, share).run()
                    })
                    .map_err(EngineError::Thread)
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(EngineError::WorkerPanicked)),
                Err(e) => Err(e),
            })
            .collect()
    });

    let mut recorders = Vec::with_capacity(results.len());
    let mut workers = Vec::with_capacity(results.len());
    let mut ended = started;
    let mut interrupted = false;
    let mut tls_info = None;
    for r in results {
        let end = r?;
        ended = ended.max(end.last_activity);
        interrupted |= end.interrupted;
        if tls_info.is_none() {
            tls_info = end.tls_info;
        }
        recorders.push(end.recorder);
        workers.push(end.usage);
    }
    control.reset_workers();
    Ok(Run { started, started_wall, ended, interrupted, recorders, workers, tls_info })
}

/// What one worker is given: its event loop, its part of the run, and its recorder.
struct Share<R> {
    poll: Poll,
    slot: Arc<Slot>,
    recorder: R,
    n_conns: u32,
    /// The run-wide index of this worker's first connection.
    first_conn: u32,
    rng: Rng,
    /// Requests this worker may start; None: until the deadline.
    quota: Option<u64>,
    deadline: Option<Instant>,
    /// Open loop only.
    pacer: Option<Pacer>,
}

struct WorkerEnd<R> {
    recorder: R,
    last_activity: Instant,
    interrupted: bool,
    tls_info: Option<TlsInfo>,
    usage: ThreadUsage,
}

struct Worker<'a, R> {
    spec: &'a RunSpec,
    control: &'a Control,
    poll: Poll,
    slot: Arc<Slot>,
    conns: Vec<Conn>,
    /// Connections waiting to be (re)opened (closed loop).
    to_open: Vec<usize>,
    /// Requests to re-send at once on a new connection, uncounted (the keep-alive race).
    retry: Vec<usize>,
    /// Open loop: the schedule, kept-alive connections waiting for it, and closed ones.
    pacer: Option<Pacer>,
    idle: Vec<usize>,
    free: Vec<usize>,
    /// Per-connection timers (think time, paced reads), earliest first; an entry whose time
    /// no longer matches its connection's `timer_at` is stale and skipped.
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    first_conn: u32,
    /// The run's choices: which request, how many per connection, how long to think.
    rng: Rng,
    recorder: R,
    /// Requests this worker may start; None: until the deadline.
    quota: Option<u64>,
    started: u64,
    finished: u64,
    deadline: Option<Instant>,
    /// Index into the target's addresses; moves on while no connection has succeeded.
    addr: usize,
    any_connected: bool,
    /// Ask the parser for the Server header until one response has delivered it.
    want_server: bool,
    tls_info: Option<TlsInfo>,
    last_activity: Instant,
    stop: bool,
    interrupted: bool,
}

impl<'a, R: Recorder> Worker<'a, R> {
    fn new(spec: &'a RunSpec, control: &'a Control, share: Share<R>) -> Self {
        let Share { poll, slot, recorder, n_conns, first_conn, rng, quota, deadline, pacer } =
            share;
        let now = Instant::now();
        let all: Vec<usize> = (0..n_conns as usize).collect();
        let (to_open, free) = if pacer.is_some() { (Vec::new(), all) } else { (all, Vec::new()) };
        Worker {
            spec,
            control,
            poll,
            slot,
            conns: (0..n_conns).map(|_| Conn::new(spec.limits, now)).collect(),
            to_open,
            retry: Vec::new(),
            pacer,
            idle: Vec::new(),
            free,
            timers: BinaryHeap::new(),
            first_conn,
            rng,
            recorder,
            quota,
            started: 0,
            finished: 0,
            deadline,
            addr: 0,
            any_connected: false,
            want_server: true,
            tls_info: None,
            last_activity: now,
            stop: false,
            interrupted: false,
        }
    }

    fn run(mut self) -> Result<WorkerEnd<R>, EngineError> {
        let clock = ThreadClock::start();
        let mut events = Events::with_capacity(self.conns.len().clamp(16, 1024));
        let mut buf = vec![0u8; READ_BUFFER].into_boxed_slice();
        let check_every =
            (self.spec.timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
        let mut next_check = Instant::now() + check_every;

        loop {
            self.open_pending();
            // Only an open loop has a schedule to keep: no clock read per turn otherwise.
            if self.pacer.is_some() {
                self.dispatch(Instant::now());
            }
            if self.stop {
                break;
            }
            if self.control.is_stopped() {
                self.interrupted = true;
                break;
            }
            // Only once the share is used up can every connection be idle: checking the
            // quota first keeps this O(connections) scan off the per-turn path.
            let share_used = self.quota.is_some_and(|q| self.started >= q);
            if share_used
                && self.to_open.is_empty()
                && self.retry.is_empty()
                && !self.conns.iter().any(Conn::is_busy)
            {
                break; // every request of this worker's share has finished
            }
            let now = Instant::now();
            if self.deadline.is_some_and(|d| now >= d) {
                break;
            }
            let mut wait = next_check.saturating_duration_since(now);
            if let Some(d) = self.deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            if let Some(Reverse((t, _))) = self.timers.peek() {
                wait = wait.min(t.saturating_duration_since(now));
            }
            if !self.to_open.is_empty() || !self.retry.is_empty() {
                wait = Duration::ZERO;
            }
            self.arm_pacer(now)?;
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(EngineError::Poll(e)),
            }
            for ev in events.iter() {
                let t = ev.token();
                if t == WAKER {
                    continue;
                }
                if t == TIMER {
                    if let Some(p) = &mut self.pacer {
                        p.fired();
                    }
                    continue;
                }
                let i = t.0;
                if i >= self.conns.len() {
                    continue;
                }
                self.on_event(
                    i,
                    ev.is_readable(),
                    ev.is_writable(),
                    ev.is_read_closed(),
                    ev.is_error(),
                    &mut buf,
                );
                if self.stop {
                    break;
                }
            }
            let now = Instant::now();
            self.fire_timers(now, &mut buf);
            if now >= next_check {
                self.expire(now);
                // The recorder's clock (Recorder::tick): once per check, off the request path.
                self.recorder.tick(now);
                next_check = now + check_every;
            }
        }
        if let Some(d) = self.deadline {
            if !self.stop && !self.interrupted && Instant::now() >= d {
                self.last_activity = self.last_activity.max(d);
            }
        }
        if self.interrupted {
            self.last_activity = Instant::now();
        }
        self.slot.finished.store(self.finished, Ordering::Relaxed);
        for c in &mut self.conns {
            c.close();
        }
        Ok(WorkerEnd {
            recorder: self.recorder,
            last_activity: self.last_activity,
            interrupted: self.interrupted || self.stop,
            tls_info: self.tls_info,
            usage: clock.stop(),
        })
    }

    /// Takes one request from the quota; false when the share is used up.
    fn take_request(&mut self) -> bool {
        if self.stop {
            return false;
        }
        match self.quota {
            Some(q) if self.started >= q => false,
            _ => {
                self.started += 1;
                true
            }
        }
    }

    fn open_pending(&mut self) {
        while let Some(i) = self.retry.pop() {
            if self.stop {
                return;
            }
            // The same request again: its due time stays, and it was counted when first taken.
            self.open(i, Start::Retry);
        }
        // At most the connections queued now: one that fails at once (no free local port,
        // refused) is queued again for the next turn, never looped on here, so the deadline
        // and Ctrl-C are always checked.
        for _ in 0..self.to_open.len() {
            let Some(i) = self.to_open.pop() else { break };
            if self.stop {
                return;
            }
            if !self.take_request() {
                self.conns[i].close();
                continue;
            }
            self.open(i, Start::Now);
        }
    }

    /// Open loop: hands every request that is due to a waiting connection, oldest first.
    fn dispatch(&mut self, now: Instant) {
        loop {
            let Some(due) = self.pacer.as_ref().map(Pacer::next_due) else { return };
            if due > now || self.stop {
                return;
            }
            let Some(i) = self.waiting_conn() else { return };
            if !self.take_request() {
                self.free.push(i);
                return;
            }
            if let Some(p) = &mut self.pacer {
                p.advance();
            }
            // The client's own lag counts from when both the request and a connection
            // were ready; before that the request waited for the server to free one.
            let ready = due.max(self.conns[i].waiting_since);
            if self.conns[i].state == State::Idle {
                self.prepare(i, now);
                let c = &mut self.conns[i];
                c.intended = due;
                c.ready = ready;
                c.connected = Some(now);
                c.state = State::Writing;
                self.write_request(i);
            } else {
                self.open(i, Start::Due(due, ready));
            }
        }
    }

    /// A kept-alive connection waiting for the schedule, or else a closed one.
    fn waiting_conn(&mut self) -> Option<usize> {
        while let Some(i) = self.idle.pop() {
            // The server may have closed it since (on_event moved it to `free`).
            if self.conns[i].state == State::Idle {
                return Some(i);
            }
        }
        self.free.pop()
    }

    /// Open loop: wake when the next request is due, if a connection can take it.
    fn arm_pacer(&mut self, now: Instant) -> Result<(), EngineError> {
        let quota_left = self.quota.is_none_or(|q| self.started < q);
        let can_send = !self.idle.is_empty() || !self.free.is_empty();
        match &mut self.pacer {
            Some(p) if quota_left && can_send => p.arm(now).map_err(EngineError::Timer),
            _ => Ok(()),
        }
    }

    /// A connection that finished its request goes back to the schedule (open loop) or
    /// straight to reopening (closed loop).
    fn release(&mut self, i: usize) {
        if self.pacer.is_some() {
            self.conns[i].waiting_since = Instant::now();
            self.free.push(i);
        } else if self.spec.think.is_some() && !self.stop {
            self.think(i);
        } else {
            self.to_open.push(i);
        }
    }

    /// Closed loop: the connection pauses before its next request (the socket, if still
    /// open, stays open).
    fn think(&mut self, i: usize) {
        let pause = match self.spec.think {
            Some(Think::Fixed(d)) => d,
            Some(Think::Exponential(mean)) => {
                Duration::from_secs_f64(self.rng.exponential(mean.as_secs_f64()).min(86_400.0))
            }
            None => Duration::ZERO,
        };
        let at = Instant::now() + pause;
        self.conns[i].state = State::Thinking;
        self.set_timer(i, at);
    }

    fn set_timer(&mut self, i: usize, at: Instant) {
        self.conns[i].timer_at = Some(at);
        self.timers.push(Reverse((at, i)));
    }

    /// Runs the timers that are due: a thinking connection sends its next request, a paced
    /// one reads again.
    fn fire_timers(&mut self, now: Instant, buf: &mut [u8]) {
        while let Some(&Reverse((at, i))) = self.timers.peek() {
            if at > now || self.stop {
                return;
            }
            self.timers.pop();
            if self.conns[i].timer_at != Some(at) {
                continue; // stale: the connection moved on since
            }
            self.conns[i].timer_at = None;
            match self.conns[i].state {
                State::Thinking if self.conns[i].sock.is_some() => {
                    if self.take_request() {
                        self.prepare(i, now);
                        let c = &mut self.conns[i];
                        c.connected = Some(now);
                        c.state = State::Writing;
                        self.write_request(i);
                    } else {
                        self.conns[i].close();
                    }
                }
                State::Thinking => {
                    self.conns[i].state = State::Closed;
                    self.to_open.push(i);
                }
                State::Writing | State::Reading | State::AwaitClose => {
                    self.on_readable(i, false, buf);
                }
                _ => {}
            }
        }
    }

    /// Chooses connection `i`'s next request and starts timing it at `now`; with
    /// pipelining, takes the rest of the batch too.
    fn prepare(&mut self, i: usize, now: Instant) {
        let spec = self.spec;
        let req = spec.workload.pick(&mut self.rng);
        self.begin(i, req, now);
        if spec.pipeline > 1 {
            self.fill_batch(i);
        }
    }

    /// Pipelining: appends up to `pipeline − 1` more requests (from the quota) after the
    /// current one, and lays out the batch's bytes. No allocation once the buffers have grown.
    fn fill_batch(&mut self, i: usize) {
        let spec = self.spec;
        let (first, first_last) = (self.conns[i].req, self.conns[i].last);
        {
            let c = &mut self.conns[i];
            c.queued.clear();
            c.batch.clear();
            if let Some(p) = spec.workload.get(first) {
                c.batch.extend_from_slice(p.wire(first_last));
            }
        }
        let mut last = first_last;
        let mut pos = 1u32;
        while pos < spec.pipeline && !last && self.take_request() {
            let req = spec.workload.pick(&mut self.rng);
            let c = &mut self.conns[i];
            last = c.responses.saturating_add(pos + 1) >= c.limit;
            if let Some(p) = spec.workload.get(req) {
                c.batch.extend_from_slice(p.wire(last));
            }
            c.queued.push_back((req, last));
            pos += 1;
        }
    }

    fn begin(&mut self, i: usize, req: usize, now: Instant) {
        let spec = self.spec;
        let head = spec.workload.get(req).is_some_and(|p| p.head);
        let c = &mut self.conns[i];
        c.req = req;
        c.begin_request(now, spec.timeout, head);
        c.last = !spec.keep_alive || c.responses.saturating_add(1) >= c.limit;
        c.parser.capture_server(self.want_server);
    }

    /// How many bytes connection `i` may read now under the receive-rate cap (None: no
    /// cap). At 0 its timer is set for when a chunk will be allowed.
    fn read_allowance(&mut self, i: usize) -> Option<usize> {
        // The clock only when reads are paced: this runs on every read.
        let rate = self.spec.receive_rate? as f64;
        let now = Instant::now();
        let burst = paced_burst(rate);
        let c = &mut self.conns[i];
        let earned = rate * now.saturating_duration_since(c.rx_last).as_secs_f64();
        c.rx_tokens = (c.rx_tokens + earned).min(burst);
        c.rx_last = now;
        let chunk = burst.min(PACED_CHUNK);
        if c.rx_tokens >= chunk {
            return Some(c.rx_tokens as usize);
        }
        if c.timer_at.is_none() {
            let at = now + Duration::from_secs_f64((chunk - c.rx_tokens) / rate);
            self.set_timer(i, at);
        }
        Some(0)
    }

    /// Opens connection `i` for a request already taken from the quota.
    fn open(&mut self, i: usize, start: Start) {
        let now = Instant::now();
        let spec = self.spec;
        let (req, intended, ready) = {
            let c = &self.conns[i];
            (c.req, c.intended, c.ready)
        };
        let limit = match spec.per_connection {
            Some((lo, hi)) => self.rng.between(lo, hi).max(1),
            None => u32::MAX,
        };
        let c = &mut self.conns[i];
        c.close();
        c.limit = limit;
        c.rx_tokens = spec.receive_rate.map_or(0.0, |r| paced_burst(r as f64));
        c.rx_last = now;
        match start {
            Start::Now => self.prepare(i, now),
            Start::Due(t, r) => {
                self.prepare(i, now);
                let c = &mut self.conns[i];
                c.intended = t;
                c.ready = r;
            }
            Start::Retry => {
                self.begin(i, req, now);
                let c = &mut self.conns[i];
                c.intended = intended;
                c.ready = ready;
            }
        }
        let connecting = match &spec.target.unix {
            Some(path) => stream::connect_unix(path),
            None => {
                // run_all refused an empty address list; `addr` never passes the last one.
                let addrs = &spec.target.addrs;
                let Some(&addr) = addrs.get(self.addr).or(addrs.last()) else { return };
                let bind = bind_for(&spec.socket.bind, self.first_conn as usize + i);
                stream::connect_tcp(addr, spec, bind)
            }
        };
        match connecting {
            Ok((mut stream, in_progress)) => {
                let reg = self.poll.registry().register(
                    &mut stream,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                );
                if let Err(e) = reg {
                    self.fail(i, FailureKind::Connect, Some(e), false);
                    return;
                }
                let c = &mut self.conns[i];
                c.sock = Some(stream);
                c.state = State::Connecting;
                if !in_progress {
                    self.on_connected(i);
                }
            }
            Err(e) => self.connect_failed(i, e),
        }
    }

    fn connect_failed(&mut self, i: usize, e: io::Error) {
        // Like ab, move to the next resolved address while none has answered yet; the
        // request is retried there and not counted as failed.
        if !self.any_connected && self.addr + 1 < self.spec.target.addrs.len() {
            self.addr += 1;
            self.conns[i].close();
            self.retry.push(i);
            return;
        }
        self.fail(i, FailureKind::Connect, Some(e), false);
    }

    fn on_event(
        &mut self,
        i: usize,
        readable: bool,
        writable: bool,
        read_closed: bool,
        error: bool,
        buf: &mut [u8],
    ) {
        match self.conns[i].state {
            State::Closed => {}
            State::Idle => {
                if readable || read_closed || error {
                    // A kept-alive connection the server closed (or wrote to) between requests.
                    self.conns[i].close();
                    self.free.push(i);
                }
            }
            State::Thinking => {
                if readable || read_closed || error {
                    // The server closed it during the pause: the next request opens anew.
                    self.conns[i].drop_socket();
                }
            }
            State::Connecting => {
                if error || (read_closed && !writable) {
                    let e = self.take_socket_error(i);
                    self.connect_failed(i, e);
                } else if writable || readable {
                    self.on_connected(i);
                }
            }
            State::Handshaking => self.drive_handshake(i),
            State::Writing => {
                if writable || error {
                    self.write_request(i);
                }
                if readable && self.conns[i].state == State::Writing {
                    // The server answered before the request was fully written (an early
                    // error response): read it.
                    self.on_readable(i, read_closed, buf);
                }
            }
            State::Reading | State::AwaitClose => {
                if readable || read_closed || error {
                    self.on_readable(i, read_closed, buf);
                }
            }
        }
    }

    fn take_socket_error(&mut self, i: usize) -> io::Error {
        let err = self.conns[i].sock.as_ref().and_then(|s| s.take_error().ok().flatten());
        err.unwrap_or_else(|| io::Error::from(io::ErrorKind::ConnectionRefused))
    }

    /// TCP is connected: start TLS, or write the request.
    fn on_connected(&mut self, i: usize) {
        self.any_connected = true;
        match &self.spec.target.tls {
            Some(tls) => match tls.connect() {
                Ok(session) => {
                    let c = &mut self.conns[i];
                    c.tls = Some(Box::new(session));
                    c.state = State::Handshaking;
                    self.drive_handshake(i);
                }
                Err(_) => self.fail(i, FailureKind::Tls, None, false),
            },
            None => {
                let now = Instant::now();
                let c = &mut self.conns[i];
                c.connected = Some(now);
                c.state = State::Writing;
                self.write_request(i);
            }
        }
    }

    fn drive_handshake(&mut self, i: usize) {
        loop {
            let c = &mut self.conns[i];
            let (Some(sock), Some(tls)) = (c.sock.as_mut(), c.tls.as_mut()) else { return };
            match flush_tls(sock, tls) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    let kind = connect_or(e.raw_os_error(), FailureKind::Tls);
                    self.fail(i, kind, Some(e), false);
                    return;
                }
            }
            if !tls.is_handshaking() {
                let now = Instant::now();
                if self.tls_info.is_none() {
                    self.tls_info = crate::tls::info(tls);
                }
                c.connected = Some(now);
                c.state = State::Writing;
                self.write_request(i);
                return;
            }
            match tls.read_tls(sock) {
                Ok(0) => {
                    self.fail(i, FailureKind::Tls, None, false);
                    return;
                }
                Ok(_) => {
                    if tls.process_new_packets().is_err() {
                        // Send the alert rustls queued, best effort, then give up.
                        let _ = tls.write_tls(sock);
                        self.fail(i, FailureKind::Tls, None, false);
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let kind = connect_or(e.raw_os_error(), FailureKind::Tls);
                    self.fail(i, kind, Some(e), false);
                    return;
                }
            }
        }
    }

    fn write_request(&mut self, i: usize) {
        if self.conns[i].tls.is_some() {
            return self.write_request_tls(i);
        }
        let spec = self.spec;
        let c = &mut self.conns[i];
        // A pipelined batch is written from its own buffer, moved out for the loop (no
        // allocation) so that the connection can be updated meanwhile.
        let batch = std::mem::take(&mut c.batch);
        let request = if batch.is_empty() {
            spec.workload.get(c.req).map_or(&[][..], |p| p.wire(c.last))
        } else {
            &batch[..]
        };
        while c.written_bytes < request.len() {
            match c.write_plain(request) {
                Ok(n) => c.written_bytes += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    c.batch = batch;
                    return;
                }
                Err(e) => {
                    c.batch = batch;
                    let fresh = c.responses == 0 && c.written_bytes == 0;
                    let kind = if fresh {
                        connect_or(e.raw_os_error(), FailureKind::Write)
                    } else {
                        FailureKind::Write
                    };
                    let retry = c.responses > 0 && c.written_bytes == 0;
                    self.fail(i, kind, Some(e), retry);
                    return;
                }
            }
        }
        c.batch = batch;
        c.written = Some(Instant::now());
        c.state = State::Reading;
    }

    fn write_request_tls(&mut self, i: usize) {
        let spec = self.spec;
        let c = &mut self.conns[i];
        let request = if c.batch.is_empty() {
            spec.workload.get(c.req).map_or(&[][..], |p| p.wire(c.last))
        } else {
            &c.batch[..]
        };
        let (Some(sock), Some(tls)) = (c.sock.as_mut(), c.tls.as_mut()) else { return };
        if c.written_bytes == 0 {
            if io::Write::write_all(&mut tls.writer(), request).is_err() {
                self.fail(i, FailureKind::Tls, None, false);
                return;
            }
            c.written_bytes = request.len();
        }
        match flush_tls(sock, tls) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                let retry = c.responses > 0;
                self.fail(i, FailureKind::Write, Some(e), retry);
                return;
            }
        }
        c.written = Some(Instant::now());
        c.state = State::Reading;
    }

    fn on_readable(&mut self, i: usize, read_closed: bool, buf: &mut [u8]) {
        if self.conns[i].tls.is_some() {
            return self.on_readable_tls(i, buf);
        }
        loop {
            let limit = match self.read_allowance(i) {
                // Paced: the timer set by read_allowance resumes reading.
                Some(0) => return,
                Some(n) => n.min(buf.len()),
                None => buf.len(),
            };
            match self.conns[i].read_plain(&mut buf[..limit]) {
                ReadOutcome::WouldBlock => return,
                ReadOutcome::Eof => return self.on_eof(i),
                ReadOutcome::Error(e) => return self.on_read_error(i, e),
                ReadOutcome::Data(n) => {
                    self.conns[i].rx_tokens -= n as f64;
                    if !self.on_data(i, &buf[..n]) {
                        // The response completed. If the server's FIN came with it (the
                        // usual case for a server that closes), finish now: no further
                        // edge will report it.
                        if read_closed && n < limit && self.conns[i].state == State::AwaitClose {
                            self.on_eof(i);
                        }
                        return;
                    }
                    if n < limit {
                        // Drained. With EPOLLRDHUP already reported, the FIN is behind the
                        // data we just read: no need for a read that returns 0.
                        if read_closed {
                            self.on_eof(i);
                        }
                        return;
                    }
                }
            }
        }
    }

    fn on_readable_tls(&mut self, i: usize, buf: &mut [u8]) {
        loop {
            let c = &mut self.conns[i];
            let (Some(sock), Some(tls)) = (c.sock.as_mut(), c.tls.as_mut()) else { return };
            let mut eof = false;
            let mut drained = false;
            match tls.read_tls(sock) {
                Ok(0) => eof = true,
                Ok(_) => {
                    if tls.process_new_packets().is_err() {
                        let _ = tls.write_tls(sock); // the alert, best effort
                        self.fail(i, FailureKind::Tls, None, false);
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => drained = true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.on_read_error(i, e),
            }
            // Hand decrypted bytes to the parser after every read, so that a large body
            // never piles up inside rustls.
            match self.drain_plaintext(i, buf) {
                Drain::Ended => return,
                Drain::Eof => eof = true,
                Drain::More => {}
            }
            if eof {
                return self.on_eof(i);
            }
            if drained {
                // Edge-triggered: the socket is empty, a new edge will come with new bytes.
                return;
            }
        }
    }

    /// Feeds every decrypted byte to the parser.
    fn drain_plaintext(&mut self, i: usize, buf: &mut [u8]) -> Drain {
        loop {
            let Some(tls) = self.conns[i].tls.as_mut() else { return Drain::Ended };
            match io::Read::read(&mut tls.reader(), buf) {
                Ok(0) => return Drain::Eof, // close_notify
                Ok(n) => {
                    // A response that completed on a connection the server will close
                    // goes on being read: its close_notify may already sit in rustls,
                    // where no new edge would ever announce it.
                    if !self.on_data(i, &buf[..n]) && self.conns[i].state != State::AwaitClose {
                        return Drain::Ended;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Drain::More,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Drain::Eof,
                Err(e) => {
                    self.on_read_error(i, e);
                    return Drain::Ended;
                }
            }
        }
    }

    /// Feeds response bytes; returns false when the connection is done with this read
    /// (response completed or failed).
    fn on_data(&mut self, i: usize, data: &[u8]) -> bool {
        let now = Instant::now();
        let mut data = data;
        loop {
            let c = &mut self.conns[i];
            if c.first_byte.is_none() {
                c.first_byte = Some(now);
            }
            if c.state == State::AwaitClose {
                c.bytes_read += data.len() as u64;
                // Bytes after a complete response that the server was going to close.
                self.fail(i, FailureKind::Overrun, None, false);
                return false;
            }
            match c.parser.feed(data) {
                Err(e) => {
                    c.bytes_read += data.len() as u64;
                    self.fail(i, proto_failure(&e), None, false);
                    return false;
                }
                Ok(feed) if feed.complete => {
                    c.bytes_read += feed.consumed as u64;
                    let rest = data.get(feed.consumed..).unwrap_or_default();
                    if !c.queued.is_empty() {
                        // Pipelined: this response is done, the next one's bytes follow.
                        if !self.complete_pipelined(i, now) {
                            return false;
                        }
                        if rest.is_empty() || self.conns[i].state != State::Reading {
                            return self.conns[i].state == State::Reading;
                        }
                        data = rest;
                        continue;
                    }
                    if !rest.is_empty() {
                        c.bytes_read += rest.len() as u64;
                        self.fail(i, FailureKind::Overrun, None, false);
                    } else {
                        self.on_complete(i, now);
                    }
                    return false;
                }
                Ok(_) => {
                    c.bytes_read += data.len() as u64;
                    return true;
                }
            }
        }
    }

    /// Pipelining: records the current response and moves to the next queued request,
    /// whose timing starts with the batch's.
    /// Returns false when the connection ended here (the server closes after this response,
    /// or the run stopped).
    fn complete_pipelined(&mut self, i: usize, now: Instant) -> bool {
        let reusable = self.conns[i].parser.head().is_some_and(|h| h.reusable);
        self.record_completed(i, now);
        if self.stop {
            self.conns[i].close();
            return false;
        }
        self.conns[i].responses += 1;
        if !reusable {
            // The server ends the connection after this response: the requests queued
            // behind it will never be answered. Counted now, once each; any bytes that
            // follow are ignored with the connection.
            let template = Failed {
                kind: FailureKind::Closed,
                timing: self.conns[i].timing(now),
                bytes_read: 0,
                bytes_written: 0,
                os_error: None,
                reused: true,
                request: 0,
                conn: self.first_conn + i as u32,
            };
            self.fail_queued(i, &template);
            self.conns[i].close();
            self.release(i);
            return false;
        }
        let spec = self.spec;
        let c = &mut self.conns[i];
        if let Some((req, last)) = c.queued.pop_front() {
            c.req = req;
            c.last = last;
            c.first_byte = None;
            c.bytes_read = 0;
            c.parser.reset(spec.workload.get(req).is_some_and(|p| p.head));
        }
        true
    }

    /// Pipelining: records a failure like `template` for every request queued on `i`.
    fn fail_queued(&mut self, i: usize, template: &Failed) {
        while let Some((request, _)) = self.conns[i].queued.pop_front() {
            let f = Failed { request, bytes_read: 0, bytes_written: 0, ..*template };
            let verdict = self.recorder.failed(&f);
            self.after_outcome(verdict);
        }
    }

    fn on_complete(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        // The last request of a connection (no keep-alive, or its share used) ends it.
        let keep = self.spec.keep_alive && !c.last;
        let Some((reusable, framing)) = c.parser.head().map(|h| (h.reusable, h.framing)) else {
            return;
        };
        if keep && reusable {
            self.complete(i, now, Next::Reuse);
        } else if reusable || framing == Framing::UntilClose {
            // The server would keep the connection, but we do not want it (or the body
            // ended at EOF already): close it ourselves.
            self.complete(i, now, Next::Reopen);
        } else {
            c.completed_at = Some(now);
            c.state = State::AwaitClose;
        }
    }

    fn on_eof(&mut self, i: usize) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        match c.state {
            State::AwaitClose => self.complete(i, now, Next::Reopen),
            State::Reading | State::Writing => match c.parser.finish() {
                Ok(true) => self.complete(i, now, Next::Reopen),
                Ok(false) => {
                    // Nothing of a response arrived. On a reused connection this is the
                    // keep-alive race (the server closed it as we sent): retry, uncounted.
                    let retry = c.responses > 0;
                    self.fail(i, FailureKind::Closed, None, retry);
                }
                Err(_) => self.fail(i, FailureKind::Closed, None, false),
            },
            State::Connecting | State::Handshaking => {
                let kind = if c.state == State::Connecting {
                    FailureKind::Connect
                } else {
                    FailureKind::Tls
                };
                self.fail(i, kind, None, false)
            }
            State::Idle => {
                c.close();
                self.free.push(i);
            }
            State::Thinking => c.drop_socket(),
            State::Closed => {}
        }
    }

    fn on_read_error(&mut self, i: usize, e: io::Error) {
        let c = &self.conns[i];
        let kind = match c.state {
            State::Connecting => FailureKind::Connect,
            _ => FailureKind::Receive,
        };
        let retry = c.responses > 0 && c.bytes_read == 0 && kind == FailureKind::Receive;
        self.fail(i, kind, Some(e), retry);
    }

    /// Records a complete response and moves the connection on.
    fn complete(&mut self, i: usize, now: Instant, next: Next) {
        if !self.record_completed(i, now) {
            return;
        }
        let end = now;
        let c = &mut self.conns[i];
        c.responses += 1;
        match next {
            Next::Reuse if !self.stop && self.pacer.is_some() => {
                self.conns[i].state = State::Idle;
                self.conns[i].waiting_since = end;
                self.idle.push(i);
            }
            Next::Reuse if !self.stop && self.spec.think.is_some() => self.think(i),
            Next::Reuse if !self.stop => {
                if self.take_request() {
                    self.prepare(i, end);
                    let c = &mut self.conns[i];
                    c.connected = Some(end);
                    c.state = State::Writing;
                    self.write_request(i);
                } else {
                    self.conns[i].close();
                }
            }
            _ => {
                self.conns[i].close();
                self.release(i);
            }
        }
    }

    /// Hands the current response to the recorder; false if there is none.
    fn record_completed(&mut self, i: usize, end: Instant) -> bool {
        let spec = self.spec;
        let c = &mut self.conns[i];
        let Some(head) = c.parser.head() else { return false };
        let server = if self.want_server { c.parser.server() } else { None };
        let bytes_written = if c.batch.is_empty() {
            c.written_bytes as u64
        } else {
            spec.workload.get(c.req).map_or(0, |p| p.wire(c.last).len() as u64)
        };
        let done = Completed {
            timing: c.timing(end),
            head,
            body_bytes: c.parser.body_bytes(),
            bytes_read: c.bytes_read,
            bytes_written,
            reused: c.responses > 0,
            server,
            request: c.req,
            conn: self.first_conn + i as u32,
        };
        let verdict = self.recorder.completed(&done);
        if self.want_server && server.is_some() {
            self.want_server = false;
        }
        self.last_activity = end;
        self.after_outcome(verdict);
        true
    }

    /// Records a failure (or, for `retry`, silently re-issues the request on a new
    /// connection) and reopens the connection.
    fn fail(&mut self, i: usize, kind: FailureKind, err: Option<io::Error>, retry: bool) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        if retry {
            // Pipelined requests behind the retried one go back to the quota, untried.
            self.started = self.started.saturating_sub(c.queued.len() as u64);
            c.close();
            self.retry.push(i);
            return;
        }
        let failed = Failed {
            kind,
            timing: c.timing(now),
            bytes_read: c.bytes_read,
            bytes_written: c.written_bytes as u64,
            os_error: err.as_ref().and_then(io::Error::raw_os_error),
            reused: c.responses > 0,
            request: c.req,
            conn: self.first_conn + i as u32,
        };
        let verdict = self.recorder.failed(&failed);
        self.last_activity = now;
        self.after_outcome(verdict);
        // Pipelined requests written behind it fail with it: none will be answered.
        self.fail_queued(i, &failed);
        self.conns[i].close();
        if kind == FailureKind::Connect && self.quota.is_none() && self.pacer.is_none() {
            // A duration-bound closed loop would otherwise reconnect as fast as the CPU allows
            // against a server that refuses, or with no local port left: each connection
            // waits a little before trying again (its failures are counted all the same).
            self.conns[i].state = State::Thinking;
            self.set_timer(i, now + CONNECT_BACKOFF);
            return;
        }
        self.release(i);
    }

    fn after_outcome(&mut self, verdict: Verdict) {
        self.finished += 1;
        if self.finished % PUBLISH_EVERY == 0 {
            self.slot.finished.store(self.finished, Ordering::Relaxed);
        }
        if verdict == Verdict::Abort {
            self.stop = true;
            self.control.stop();
        }
    }

    /// Aborts requests past their deadline.
    fn expire(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if !c.is_busy() || now < c.deadline {
                continue;
            }
            match c.state {
                State::AwaitClose => {
                    // The response was complete; the server just never closed.
                    let end = c.completed_at.unwrap_or(now);
                    self.complete(i, end, Next::Reopen)
                }
                State::Connecting => {
                    let e = io::Error::from(io::ErrorKind::TimedOut);
                    self.fail(i, FailureKind::Connect, Some(e), false)
                }
                _ => self.fail(i, FailureKind::Timeout, None, false),
            }
            if self.stop {
                return;
            }
        }
    }
}

/// What draining rustls's plaintext found.
enum Drain {
    /// The request ended (completed or failed); stop reading this connection.
    Ended,
    /// The peer closed the TLS stream.
    Eof,
    /// Everything decrypted so far was consumed; more may come.
    More,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Reuse,
    Reopen,
}

/// How a request opening a new connection is timed.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// A new request, due now (closed loop).
    Now,
    /// A new request due at the schedule's time, ready at the second (open loop).
    Due(Instant, Instant),
    /// The same request again after the keep-alive race: its request and times stay.
    Retry,
}

/// The bucket size of a paced connection: 20 ms of its rate, at least a full segment.
fn paced_burst(rate: f64) -> f64 {
    (rate * 0.02).max(PACED_CHUNK)
}

/// The source address of run-wide connection `k`.
fn bind_for(bind: &[IpAddr], k: usize) -> Option<IpAddr> {
    match bind.len() {
        0 => None,
        n => bind.get(k % n).copied(),
    }
}

/// Writes what rustls has queued: `Ok(true)` when all is sent, `Ok(false)` when the socket
/// is full (an edge will say when to go on).
fn flush_tls(sock: &mut Stream, tls: &mut rustls::ClientConnection) -> io::Result<bool> {
    while tls.wants_write() {
        match tls.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A write or TLS error on a connection that never carried a byte is a connect failure
/// when the OS says so (refused, unreachable, reset during the handshake).
fn connect_or(errno: Option<i32>, otherwise: FailureKind) -> FailureKind {
    match errno {
        Some(libc::ECONNREFUSED | libc::ENETUNREACH | libc::EHOSTUNREACH | libc::ETIMEDOUT) => {
            FailureKind::Connect
        }
        _ => otherwise,
    }
}

fn proto_failure(e: &ProtoError) -> FailureKind {
    match e {
        ProtoError::HeadTooLarge { .. } => FailureKind::HeadTooLarge,
        ProtoError::Truncated => FailureKind::Closed,
        _ => FailureKind::Malformed,
    }
}
