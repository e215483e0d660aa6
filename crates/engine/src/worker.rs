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

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use herd_proto::{Framing, ProtoError};
use herd_stats::FailureKind;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use socket2::{Domain, Protocol, Socket, Type};

use crate::conn::{Conn, ReadOutcome, State};
use crate::control::Slot;
use crate::pacer::Pacer;
use crate::recorder::{Completed, Failed, Recorder, Verdict};
use crate::thread_usage::{ThreadClock, ThreadUsage};
use crate::{Arrivals, Control, EngineError, Run, RunSpec, Schedule, TlsInfo};

const WAKER: Token = Token(usize::MAX);
/// The pacer's timer (open loop only).
const TIMER: Token = Token(usize::MAX - 1);
/// Large reads: on 1 MiB bodies the read size decides the client's cost (baseline.md:
/// ab's 8 KiB reads cost it x2.6 the floor).
const READ_BUFFER: usize = 256 * 1024;
/// How often progress is published for `Control::finished`.
const PUBLISH_EVERY: u64 = 16;

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
    if spec.target.addrs.is_empty() {
        return Err(EngineError::NoAddress);
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
                let pacer = Pacer::new(rate, started + offset, seed).map_err(EngineError::Poll)?;
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
                let recorder = make(i as usize);
                std::thread::Builder::new()
                    .name(format!("herd-worker-{i}"))
                    .spawn_scoped(s, move || {
                        let share =
                            Share { poll, slot, recorder, n_conns: conns, quota, deadline, pacer };
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
        let Share { poll, slot, recorder, n_conns, quota, deadline, pacer } = share;
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
            self.dispatch(Instant::now());
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
            if now >= next_check {
                self.expire(now);
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
            let c = &self.conns[i];
            let due = (c.intended, c.ready);
            self.open(i, Some(due));
        }
        // Only as many as are queued now: a connection that fails at once (EMFILE at socket(),
        // EADDRNOTAVAIL at connect()) queues itself again, and retrying it here until it
        // succeeds would never return to the loop that checks the deadline and Ctrl-C.
        for _ in 0..self.to_open.len() {
            let Some(i) = self.to_open.pop() else { break };
            if self.stop {
                return;
            }
            if !self.take_request() {
                self.conns[i].close();
                continue;
            }
            self.open(i, None);
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
                let spec = self.spec;
                let c = &mut self.conns[i];
                c.begin_request(now, spec.timeout, spec.head_request);
                c.intended = due;
                c.ready = ready;
                c.parser.capture_server(self.want_server);
                c.connected = Some(now);
                c.state = State::Writing;
                self.write_request(i);
            } else {
                self.open(i, Some((due, ready)));
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
            Some(p) if quota_left && can_send => p.arm(now).map_err(EngineError::Poll),
            _ => Ok(()),
        }
    }

    /// A connection that finished its request goes back to the schedule (open loop) or
    /// straight to reopening (closed loop).
    fn release(&mut self, i: usize) {
        if self.pacer.is_some() {
            self.conns[i].waiting_since = Instant::now();
            self.free.push(i);
        } else {
            self.to_open.push(i);
        }
    }

    /// Opens connection `i` for a request already taken from the quota, due at `due`'s
    /// intended and ready times (None: now).
    fn open(&mut self, i: usize, due: Option<(Instant, Instant)>) {
        let now = Instant::now();
        let spec = self.spec;
        let c = &mut self.conns[i];
        c.close();
        c.begin_request(now, spec.timeout, spec.head_request);
        if let Some((intended, ready)) = due {
            c.intended = intended;
            c.ready = ready;
        }
        c.parser.capture_server(self.want_server);
        // run_all refused an empty address list; `addr` never passes the last one.
        let Some(&addr) = spec.target.addrs.get(self.addr).or(spec.target.addrs.last()) else {
            return;
        };
        match connect(addr, spec) {
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
        let request = &self.spec.request;
        let c = &mut self.conns[i];
        while c.written_bytes < request.len() {
            match c.write_plain(request) {
                Ok(n) => c.written_bytes += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
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
        c.written = Some(Instant::now());
        c.state = State::Reading;
    }

    fn write_request_tls(&mut self, i: usize) {
        let request = &self.spec.request;
        let c = &mut self.conns[i];
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
            match self.conns[i].read_plain(buf) {
                ReadOutcome::WouldBlock => return,
                ReadOutcome::Eof => return self.on_eof(i),
                ReadOutcome::Error(e) => return self.on_read_error(i, e),
                ReadOutcome::Data(n) => {
                    if !self.on_data(i, &buf[..n]) {
                        // The response completed. If the server's FIN came with it (the
                        // usual case for a server that closes), finish now: no further
                        // edge will report it.
                        if read_closed && n < buf.len() && self.conns[i].state == State::AwaitClose
                        {
                            self.on_eof(i);
                        }
                        return;
                    }
                    if n < buf.len() {
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
        let c = &mut self.conns[i];
        if c.first_byte.is_none() {
            c.first_byte = Some(now);
        }
        c.bytes_read += data.len() as u64;
        if c.state == State::AwaitClose {
            // Bytes after a complete response that the server was going to close.
            self.fail(i, FailureKind::Overrun, None, false);
            return false;
        }
        match c.parser.feed(data) {
            Err(e) => {
                self.fail(i, proto_failure(&e), None, false);
                false
            }
            Ok(feed) if feed.complete => {
                if feed.consumed < data.len() {
                    self.fail(i, FailureKind::Overrun, None, false);
                } else {
                    self.on_complete(i, now);
                }
                false
            }
            Ok(_) => true,
        }
    }

    fn on_complete(&mut self, i: usize, now: Instant) {
        let keep = self.spec.keep_alive;
        let c = &mut self.conns[i];
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
        let c = &mut self.conns[i];
        let Some(head) = c.parser.head() else { return };
        let end = now;
        let server = if self.want_server { c.parser.server() } else { None };
        let done = Completed {
            timing: c.timing(end),
            head,
            body_bytes: c.parser.body_bytes(),
            bytes_read: c.bytes_read,
            bytes_written: c.written_bytes as u64,
            reused: c.responses > 0,
            server,
        };
        let verdict = self.recorder.completed(&done);
        if self.want_server && server.is_some() {
            self.want_server = false;
        }
        self.last_activity = end;
        self.after_outcome(verdict);
        let c = &mut self.conns[i];
        c.responses += 1;
        match next {
            Next::Reuse if !self.stop && self.pacer.is_some() => {
                self.conns[i].state = State::Idle;
                self.conns[i].waiting_since = end;
                self.idle.push(i);
            }
            Next::Reuse if !self.stop => {
                if self.take_request() {
                    let c = &mut self.conns[i];
                    c.begin_request(end, self.spec.timeout, self.spec.head_request);
                    c.parser.capture_server(self.want_server);
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

    /// Records a failure (or, for `retry`, silently re-issues the request on a new
    /// connection) and reopens the connection.
    fn fail(&mut self, i: usize, kind: FailureKind, err: Option<io::Error>, retry: bool) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        if retry {
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
        };
        c.close();
        let verdict = self.recorder.failed(&failed);
        self.last_activity = now;
        self.after_outcome(verdict);
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

/// Writes what rustls has queued: `Ok(true)` when all is sent, `Ok(false)` when the socket
/// is full (an edge will say when to go on).
fn flush_tls(sock: &mut TcpStream, tls: &mut rustls::ClientConnection) -> io::Result<bool> {
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

/// Creates a non-blocking socket and starts connecting; `true` when still in progress.
fn connect(addr: std::net::SocketAddr, spec: &RunSpec) -> io::Result<(TcpStream, bool)> {
    let sock = Socket::new(
        Domain::for_address(addr),
        Type::STREAM.nonblocking().cloexec(),
        Some(Protocol::TCP),
    )?;
    if let Some(size) = spec.socket.buffer_size {
        sock.set_send_buffer_size(size as usize)?;
        sock.set_recv_buffer_size(size as usize)?;
    }
    if let Some(ip) = spec.socket.bind {
        sock.bind(&std::net::SocketAddr::new(ip, 0).into())?;
    }
    let in_progress = match sock.connect(&addr.into()) {
        Ok(()) => false,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => true,
        Err(e) => return Err(e),
    };
    let std_stream: std::net::TcpStream = sock.into();
    Ok((TcpStream::from_std(std_stream), in_progress))
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
