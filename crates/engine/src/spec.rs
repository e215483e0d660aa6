//! The description of a run: what to send, where, how many at once, and when to stop.
//!
//! The types rule out what types can: a run has a stop condition ([`StopAt`]) and at least
//! one connection and thread; think time exists only in a closed loop and pipelining only as
//! its own schedule on kept-alive connections ([`Schedule`]); a rate is positive and finite
//! ([`RequestRate`]). What they cannot say is refused when the run starts: [`RunSpec::check`]
//! refuses an agent's [`Slice`] with no connection or no request, pipelining or think time
//! over HTTP/2 and HTTP/3, a receive-rate cap or a Unix socket with HTTP/3, and an HTTP/2
//! window of 0 or past 2^31 − 1 (each a [`SpecError`]); `run.rs` adds an empty address list
//! and a request HTTP/2 or HTTP/3 cannot carry. The fields are public: a caller that sets
//! them directly gets the same checks.

use std::net::IpAddr;
use std::num::{NonZeroU32, NonZeroU64};
use std::time::Duration;

use herd_proto::Limits;

use crate::{IoChoice, SpecError, Start, Target, Workload};

/// Everything a run needs. Built by the caller (herd ab through `herd_ab::run_spec`, herd
/// run); the engine only reads it.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub target: Target,
    /// The requests, built once, and how often each is sent.
    pub workload: Workload,
    /// Connections open at once (closed-loop concurrency).
    pub connections: NonZeroU32,
    /// Worker threads; connections are spread evenly over them, and there are never more
    /// workers than connections.
    pub threads: NonZeroU32,
    pub stop: StopAt,
    /// A request with no complete response this long after it started is aborted and
    /// counted as [`herd_stats::FailureKind::Timeout`].
    pub timeout: Duration,
    pub limits: Limits,
    pub socket: SocketOptions,
    /// Who starts the next request, and whether connections are kept alive.
    pub schedule: Schedule,
    /// Receive at most this many bytes per second on each connection, by pacing reads (a
    /// modem, SPECweb99's 400 kbit/s clients). Over TLS the cap counts decrypted bytes.
    pub receive_rate: Option<NonZeroU64>,
    /// Seeds every choice of the run (request mix, requests per connection, think times).
    pub seed: u64,
    /// What the connections speak.
    pub wire: Wire,
    /// This process's part of a run spread over several agents ([`Slice::WHOLE`]: all of
    /// it). `connections`, the request count and the rate stay the whole run's.
    pub slice: Slice,
    /// When the run starts: at once, or (the agents of a spread run) at a shared instant
    /// or when a [`crate::StartGate`] opens, so that the agents' seconds line up and an open
    /// loop's arrival k is due at `start + k / rate` on every agent. A later start opens
    /// the kept-alive HTTP/1 and HTTP/2 connections first ([`RunSpec::opens_ahead`]).
    pub start: Start,
    /// What the run does while none of its connections has ever connected.
    pub unreachable: Unreachable,
    /// Which event-loop backend the workers turn (`--io`), settled once by [`crate::run()`]
    /// ([`crate::io_choice::resolve`]) and said in [`crate::Run::io`].
    pub io: IoChoice,
}

/// What a run does while none of its connections has connected (TCP's handshake, or
/// QUIC's): a server that is not there refuses every attempt, and trying for the whole
/// duration measures nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unreachable {
    /// Try to the run's end, each failed connect counted (herd ab: ab's `-r` counts every
    /// one).
    #[default]
    KeepTrying,
    /// Stop once the run's first attempts have all failed to connect ([`Run::reach`] says
    /// so): as many failed connects as this process has connections (in a closed loop they
    /// all open at the start, so each of them has failed once), in an open loop at most
    /// [`Unreachable::OPEN_LOOP_ATTEMPTS`] (its connections open one due request at a time,
    /// at the rate: at 1 request a second, 100 connections would take 100 s). A run whose
    /// bound comes first ends as it would have. A server that comes up after the run gave
    /// up is not waited for: the run has ended; one that comes up before has been reached
    /// and the run goes on to its end, counting failures as any run does.
    ///
    /// [`Run::reach`]: crate::Run::reach
    GiveUp,
}

impl Unreachable {
    /// An open loop's first attempts: one refusal could be a server in the middle of a
    /// restart, three in a row are the server's answer.
    pub const OPEN_LOOP_ATTEMPTS: u32 = 3;
}

/// Agent `index` of `count` running one run together: it opens the connections j ≡ index
/// (mod count) of the run's, starts the requests k ≡ index (mod count) of a request count,
/// and in an open loop sends exactly the arrivals k ≡ index (mod count) of the one global
/// schedule (request k due at k / rate), so that the agents' requests together are the
/// single machine's, each measured from its own intended send time. Derived from (index,
/// count) alone: the agents never coordinate per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    index: u32,
    count: NonZeroU32,
}

impl Slice {
    /// The whole run, in one process.
    pub const WHOLE: Slice = Slice { index: 0, count: NonZeroU32::MIN };

    /// Agent `index` (from 0) of `count`; Err when the index is not below the count.
    pub fn new(index: u32, count: NonZeroU32) -> Result<Slice, SpecError> {
        if index >= count.get() {
            return Err(SpecError::BadSlice { index, count: count.get() });
        }
        Ok(Slice { index, count })
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count.get()
    }

    /// How many of `total` things numbered from 0 are this agent's: those k ≡ index (mod
    /// count).
    pub fn of(self, total: u64) -> u64 {
        let c = u64::from(self.count.get());
        total / c + u64::from(u64::from(self.index) < total % c)
    }

    /// Stripe `worker` of `workers` on this agent, among all the run's `count × workers`
    /// stripes: the arrivals k ≡ stripe (mod count × workers) are its.
    pub fn stripe(self, worker: u32, workers: u32) -> (u64, u64) {
        let count = u64::from(self.count.get());
        (u64::from(self.index) + count * u64::from(worker), count * u64::from(workers.max(1)))
    }
}

impl Default for Slice {
    fn default() -> Slice {
        Slice::WHOLE
    }
}

/// The protocol on each connection. TLS or not comes from the target ([`Target::tls`]) for
/// HTTP/1 and HTTP/2; HTTP/3 brings its own (QUIC's TLS 1.3).
#[derive(Debug, Clone, Default)]
pub enum Wire {
    /// HTTP/1.x: one request at a time per connection, or a pipelined batch.
    #[default]
    Http1,
    /// HTTP/2 (RFC 9113): with TLS, ALPN `h2`; without, prior knowledge (h2c). Requests go
    /// out as streams, up to `streams` at once on each connection.
    Http2(H2Settings),
    /// HTTP/3 over QUIC (RFC 9114) on UDP to the target's port, up to `streams` requests at
    /// once on each connection.
    Http3(H3Wire),
}

/// HTTP/3's settings for a run: the QUIC client configuration every connection shares.
#[derive(Debug, Clone)]
pub struct H3Wire {
    pub streams: NonZeroU32,
    pub client: crate::quic::QuicClient,
}

/// HTTP/2's own settings for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H2Settings {
    /// Concurrent streams per connection (h2load's `-m`), and never more than the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub streams: NonZeroU32,
    /// The receive window of each stream (SETTINGS_INITIAL_WINDOW_SIZE), at most 2^31 − 1.
    pub stream_window: u32,
    /// The receive window of each connection, at most 2^31 − 1.
    pub connection_window: u32,
}

impl H2Settings {
    /// The largest flow-control window (RFC 9113 §6.9.1).
    pub const MAX_WINDOW: u32 = (1 << 31) - 1;
    /// h2load's default windows (2^30 for streams and connections: `-w 30 -W 30`): large
    /// enough that flow control never paces a benchmark's responses.
    pub const DEFAULT_WINDOW: u32 = 1 << 30;

    pub fn new(streams: NonZeroU32) -> H2Settings {
        H2Settings {
            streams,
            stream_window: Self::DEFAULT_WINDOW,
            connection_window: Self::DEFAULT_WINDOW,
        }
    }
}

/// When a run stops (requests in flight at a deadline are abandoned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAt {
    /// After this many requests (completed or failed).
    Requests(NonZeroU64),
    /// This long after the start.
    Deadline(Duration),
    /// Whichever comes first (ab's `-n` with `-t`).
    Either { requests: NonZeroU64, deadline: Duration },
}

/// When requests are sent, and on which connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// Closed loop: each connection sends its next request as soon as the previous one ends
    /// (ab, wrk), or after a pause (`think`, as a user reading a page). Latency is measured
    /// from the actual send.
    Closed { reuse: Reuse, think: Option<Think> },
    /// Closed loop with HTTP/1.1 pipelining: each connection, always kept alive, writes up to
    /// `depth` requests at once before reading their responses. Each response's latency
    /// counts from the batch's start. Synthetic: browsers do not pipeline.
    Pipelined { depth: NonZeroU32, per_connection: Option<PerConnection> },
    /// Open loop: `rate` requests per second in total, whatever the server's pace; a request
    /// that finds every connection busy waits for one, and its latency is measured from when
    /// it was due (its intended send time), not from when it was sent, so a stalled server
    /// cannot hide the requests it delayed.
    Rate { rate: RequestRate, arrivals: Arrivals, reuse: Reuse },
}

/// Whether a connection carries more than one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// A new connection for every request, each asking the server to close.
    Close,
    /// Reuse a connection while the server allows it, and at most `per_connection` requests
    /// (None: as many as the server allows).
    KeepAlive { per_connection: Option<PerConnection> },
}

/// Requests a kept-alive connection carries before herd closes it and opens a new one, drawn
/// uniformly in `lo..=hi` for each connection (SPECweb99's clients: 5 to 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerConnection {
    lo: NonZeroU32,
    hi: NonZeroU32,
}

/// A request rate: herd's one unit for it (positive, finite, at most 10,000,000 a second).
pub use herd_stats::units::RequestRate;

/// How an open loop spaces its requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Arrivals {
    /// Evenly: request k is due at k / rate.
    #[default]
    Uniform,
    /// A Poisson process: exponentially distributed gaps with mean 1 / rate, as independent
    /// users would arrive; the same `seed` gives the same schedule.
    Poisson { seed: u64 },
}

/// A pause between a connection's requests (closed loop), as a user reading a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Think {
    Fixed(Duration),
    /// Exponentially distributed with this mean, drawn per pause from the run's seed.
    Exponential(Duration),
}

/// Socket options applied to every connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// Local addresses to connect from (ab's `-B` gives one): connection `k` of the run
    /// binds `bind[k % len]`, with IP_BIND_ADDRESS_NO_PORT so that the port is chosen at
    /// connect() per destination, not reserved per address: each source address brings its
    /// own ephemeral port range. HTTP/3's connections bind theirs the same way (their UDP
    /// socket's port chosen at bind). Empty: the kernel chooses.
    pub bind: Vec<IpAddr>,
    /// SO_SNDBUF and SO_RCVBUF (ab's `-b`).
    pub buffer_size: Option<u32>,
}

impl RunSpec {
    /// A run of `stop` against `target` with everything else at its plainest: one
    /// connection on one thread, a closed loop without keep-alive, a 30 s timeout, default
    /// limits and socket options, no receive cap, seed 0. Set the rest with struct update
    /// syntax: `RunSpec { connections, ..RunSpec::new(target, workload, stop) }`.
    pub fn new(target: Target, workload: Workload, stop: StopAt) -> RunSpec {
        RunSpec {
            target,
            workload,
            connections: NonZeroU32::MIN,
            threads: NonZeroU32::MIN,
            stop,
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
            socket: SocketOptions::default(),
            schedule: Schedule::Closed { reuse: Reuse::Close, think: None },
            receive_rate: None,
            seed: 0,
            wire: Wire::Http1,
            slice: Slice::WHOLE,
            start: Start::Now,
            unreachable: Unreachable::KeepTrying,
            io: IoChoice::Auto,
        }
    }

    /// A run for tests: one `GET / HTTP/1.0` request to `target` ([`RunSpec::new`]'s
    /// defaults otherwise).
    pub fn for_tests(target: Target) -> RunSpec {
        let request = crate::Prepared::new(
            format!("GET / HTTP/1.0\r\nHost: {}\r\n\r\n", target.host).into_bytes(),
            false,
        );
        RunSpec::new(target, Workload::single(request), StopAt::Requests(NonZeroU64::MIN))
    }

    /// What no type can say about a run's protocol: HTTP/2 has no pipelining (it has
    /// streams) and no think time (a pause belongs to a connection, and an HTTP/2 connection
    /// carries many users' requests at once); windows fit in 31 bits.
    pub fn check(&self) -> Result<(), SpecError> {
        // An agent with no connection, or a request count with nothing left for it, has no
        // part in the run: say so rather than run nothing.
        let (index, count) = (self.slice.index(), self.slice.count());
        if self.agent_connections() == 0 {
            let connections = self.connections.get();
            return Err(SpecError::EmptySlice {
                index,
                count,
                what: "connections",
                of: connections.into(),
            });
        }
        if let Some(n) = self.stop.requests() {
            if self.slice.of(n.get()) == 0 {
                return Err(SpecError::EmptySlice { index, count, what: "requests", of: n.get() });
            }
        }
        if matches!(self.wire, Wire::Http1) {
            return Ok(());
        }
        match self.schedule {
            Schedule::Pipelined { .. } => return Err(SpecError::PipelinedHttp2),
            Schedule::Closed { think: Some(_), .. } => return Err(SpecError::ThinkHttp2),
            _ => {}
        }
        let h2 = match &self.wire {
            Wire::Http2(h2) => h2,
            Wire::Http3(_) if self.receive_rate.is_some() => {
                return Err(SpecError::ReceiveRateHttp3)
            }
            Wire::Http3(_) if self.target.unix.is_some() => return Err(SpecError::UnixHttp3),
            _ => return Ok(()),
        };
        for window in [h2.stream_window, h2.connection_window] {
            if window == 0 || window > H2Settings::MAX_WINDOW {
                return Err(SpecError::BadWindow(window));
            }
        }
        Ok(())
    }

    /// Worker threads the run will use: never more than this agent's connections.
    pub fn worker_count(&self) -> u32 {
        self.threads.get().min(self.agent_connections()).max(1)
    }

    /// The connections this agent opens ([`Slice`]): all of them without one.
    pub fn agent_connections(&self) -> u32 {
        let mine = self.slice.of(u64::from(self.connections.get()));
        u32::try_from(mine).unwrap_or(u32::MAX)
    }

    /// The requests this agent starts of a request count ([`Slice`]).
    pub fn agent_requests(&self) -> Option<u64> {
        self.stop.requests().map(|n| self.slice.of(n.get()))
    }

    /// Whether connections carry more than one request.
    pub fn keep_alive(&self) -> bool {
        self.schedule.reuse() != Reuse::Close
    }

    /// With [`Unreachable::GiveUp`], the failed connects (none having connected) after which
    /// the run stops; None when it keeps trying.
    pub(crate) fn first_attempts(&self) -> Option<u64> {
        if self.unreachable == Unreachable::KeepTrying {
            return None;
        }
        let connections = self.agent_connections().max(1);
        Some(u64::from(match self.schedule {
            Schedule::Rate { .. } => connections.min(Unreachable::OPEN_LOOP_ATTEMPTS),
            Schedule::Closed { .. } | Schedule::Pipelined { .. } => connections,
        }))
    }

    /// Whether the workers open their connections before a later start (warm.rs): when they
    /// are kept alive and speak HTTP/1 or HTTP/2 (TCP, and TLS with ALPN `h2`). A connection
    /// per request cannot be opened ahead without hiding its connect; HTTP/3 connects at the
    /// start.
    pub fn opens_ahead(&self) -> bool {
        !matches!(self.start, Start::Now)
            && self.keep_alive()
            && matches!(self.wire, Wire::Http1 | Wire::Http2(_))
    }

    /// How many connections and requests worker `i` of `n` gets: connections spread as
    /// evenly as possible, requests in proportion to connections, so that workers finish
    /// together without sharing a counter.
    /// Both of this agent's part ([`RunSpec::agent_connections`], [`RunSpec::agent_requests`]).
    pub fn share(&self, i: u32, n: u32) -> (u32, Option<u64>) {
        let connections = self.agent_connections();
        let conns = connections / n + u32::from(i < connections % n);
        let reqs = self.agent_requests().map(|total| {
            // Requests per connection, then the remainder to the first connections overall.
            let c = u64::from(connections);
            let first_conn = u64::from(self.first_connection(i, n));
            let per = total / c;
            let rem = total % c;
            let extra = rem.saturating_sub(first_conn).min(u64::from(conns));
            per * u64::from(conns) + extra
        });
        (conns, reqs)
    }

    /// The index of worker `i` of `n`'s first connection among this agent's.
    pub fn first_connection(&self, i: u32, n: u32) -> u32 {
        let connections = self.agent_connections();
        i * (connections / n) + i.min(connections % n)
    }
}

impl StopAt {
    /// The stop condition of a request count, a duration, or both; an error when neither is
    /// given (a run must end).
    pub fn new(
        requests: Option<NonZeroU64>,
        deadline: Option<Duration>,
    ) -> Result<StopAt, SpecError> {
        match (requests, deadline) {
            (Some(requests), Some(deadline)) => Ok(StopAt::Either { requests, deadline }),
            (Some(n), None) => Ok(StopAt::Requests(n)),
            (None, Some(d)) => Ok(StopAt::Deadline(d)),
            (None, None) => Err(SpecError::Unbounded),
        }
    }

    pub fn requests(&self) -> Option<NonZeroU64> {
        match *self {
            StopAt::Requests(n) | StopAt::Either { requests: n, .. } => Some(n),
            StopAt::Deadline(_) => None,
        }
    }

    pub fn deadline(&self) -> Option<Duration> {
        match *self {
            StopAt::Deadline(d) | StopAt::Either { deadline: d, .. } => Some(d),
            StopAt::Requests(_) => None,
        }
    }
}

impl Schedule {
    /// Whether connections are kept alive, and for how many requests.
    pub fn reuse(&self) -> Reuse {
        match *self {
            Schedule::Closed { reuse, .. } | Schedule::Rate { reuse, .. } => reuse,
            Schedule::Pipelined { per_connection, .. } => Reuse::KeepAlive { per_connection },
        }
    }
}

impl Reuse {
    pub fn per_connection(&self) -> Option<PerConnection> {
        match *self {
            Reuse::Close => None,
            Reuse::KeepAlive { per_connection } => per_connection,
        }
    }
}

impl PerConnection {
    /// Between `lo` and `hi` requests per connection, both at least 1 and `lo` ≤ `hi`.
    pub fn new(lo: u32, hi: u32) -> Result<PerConnection, SpecError> {
        match (NonZeroU32::new(lo), NonZeroU32::new(hi)) {
            (Some(l), Some(h)) if l <= h => Ok(PerConnection { lo: l, hi: h }),
            _ => Err(SpecError::BadPerConnection { lo, hi }),
        }
    }

    pub fn lo(&self) -> NonZeroU32 {
        self.lo
    }

    pub fn hi(&self) -> NonZeroU32 {
        self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(connections: u32, max: u64) -> RunSpec {
        RunSpec {
            connections: NonZeroU32::new(connections).unwrap(),
            threads: NonZeroU32::new(2).unwrap(),
            stop: StopAt::Requests(NonZeroU64::new(max).unwrap()),
            ..RunSpec::for_tests(Target::loopback_for_tests(1))
        }
    }

    #[test]
    fn shares_add_up() {
        for c in 1..20u32 {
            for n in 1..=c.min(5) {
                for total in [c as u64, 7, 100, 1001, 12345] {
                    if total < c as u64 {
                        continue;
                    }
                    let s = spec(c, total);
                    let (mut cs, mut rs) = (0, 0);
                    for i in 0..n {
                        let (ci, ri) = s.share(i, n);
                        assert!(ci >= 1);
                        cs += ci;
                        rs += ri.unwrap();
                    }
                    assert_eq!(cs, c);
                    assert_eq!(rs, total, "c={c} n={n} total={total}");
                }
            }
        }
    }

    /// Agents' parts, each split over its workers, add up to the run's connections and
    /// requests: connections and requests striped j ≡ agent (mod agents).
    #[test]
    fn agents_shares_add_up_to_the_run() {
        for c in 1..14u32 {
            for agents in 1..=c.min(4) {
                for total in [u64::from(c), 7, 1001] {
                    if total < u64::from(agents) {
                        continue;
                    }
                    let (mut cs, mut rs) = (0u64, 0u64);
                    for a in 0..agents {
                        let slice = Slice::new(a, NonZeroU32::new(agents).unwrap()).unwrap();
                        let s = RunSpec { slice, ..spec(c, total) };
                        s.check().unwrap();
                        assert_eq!(u64::from(s.agent_connections()), slice.of(u64::from(c)));
                        let n = s.worker_count();
                        for i in 0..n {
                            let (ci, ri) = s.share(i, n);
                            cs += u64::from(ci);
                            rs += ri.unwrap();
                        }
                    }
                    assert_eq!((cs, rs), (u64::from(c), total), "c={c} agents={agents}");
                }
            }
        }
    }

    #[test]
    fn slices_say_what_is_wrong() {
        let three = NonZeroU32::new(3).unwrap();
        let e = Slice::new(3, three).unwrap_err();
        assert_eq!(e.to_string(), "agent 3 of 3: agents are numbered 0 to 2");
        assert_eq!((Slice::new(2, three).unwrap().of(7), Slice::WHOLE.of(7)), (2, 7));
        let s = RunSpec { slice: Slice::new(2, three).unwrap(), ..spec(2, 100) };
        assert_eq!(
            s.check().unwrap_err().to_string(),
            "agent 2 of 3 has none of the run's 2 connections: give at least as many \
             connections as agents, or fewer agents"
        );
        let s = RunSpec { slice: Slice::new(2, three).unwrap(), ..spec(3, 2) };
        assert!(s.check().unwrap_err().to_string().contains("none of the run's 2 requests"));
    }

    #[test]
    fn never_more_workers_than_connections() {
        let mut s = spec(3, 10);
        s.threads = NonZeroU32::new(8).unwrap();
        assert_eq!(s.worker_count(), 3);
        s.threads = NonZeroU32::MIN;
        assert_eq!(s.worker_count(), 1);
    }

    #[test]
    fn a_stop_condition_needs_a_bound() {
        let n = NonZeroU64::new(5).unwrap();
        let d = Duration::from_secs(1);
        assert_eq!(StopAt::new(None, None), Err(SpecError::Unbounded));
        assert_eq!(StopAt::new(Some(n), None), Ok(StopAt::Requests(n)));
        assert_eq!(StopAt::new(None, Some(d)), Ok(StopAt::Deadline(d)));
        let both = StopAt::new(Some(n), Some(d)).unwrap();
        assert_eq!((both.requests(), both.deadline()), (Some(n), Some(d)));
    }

    #[test]
    fn bad_rates_and_ranges_are_refused() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(RequestRate::new(bad), None, "{bad}");
        }
        assert_eq!(RequestRate::new(0.5).map(|r| r.per_second()), Some(0.5));
        for (lo, hi) in [(0, 5), (5, 0), (6, 5)] {
            assert_eq!(PerConnection::new(lo, hi), Err(SpecError::BadPerConnection { lo, hi }));
        }
        let r = PerConnection::new(5, 15).unwrap();
        assert_eq!((r.lo().get(), r.hi().get()), (5, 15));
    }

    #[test]
    fn pipelining_implies_keep_alive() {
        let mut s = spec(1, 1);
        assert!(!s.keep_alive());
        s.schedule = Schedule::Pipelined { depth: NonZeroU32::MIN, per_connection: None };
        assert!(s.keep_alive());
        assert_eq!(s.schedule.reuse(), Reuse::KeepAlive { per_connection: None });
    }
}
