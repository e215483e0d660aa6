//! The description of a run: what to send, where, how many at once, and when to stop.

use std::net::IpAddr;
use std::time::Duration;

use herd_proto::Limits;

use crate::{Target, Workload};

/// Socket options applied to every connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// Local addresses to connect from (ab's `-B` gives one): connection `k` of the run
    /// binds `bind[k % len]`, with IP_BIND_ADDRESS_NO_PORT so that the port is chosen at
    /// connect() per destination, not reserved per address: each source address brings its
    /// own ephemeral port range. Empty: the kernel chooses.
    pub bind: Vec<IpAddr>,
    /// SO_SNDBUF and SO_RCVBUF (ab's `-b`).
    pub buffer_size: Option<u32>,
}

/// When requests are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Schedule {
    /// Closed loop: each connection sends its next request as soon as the previous one ends
    /// (ab, wrk). Latency is measured from the actual send.
    #[default]
    Closed,
    /// Open loop: `per_second` requests per second in total, evenly spaced, whatever the
    /// server's pace; a request that finds every connection busy waits for one, and its
    /// latency is measured from when it was due (its intended send time), not from when it
    /// was sent, so a stalled server cannot hide the requests it delayed.
    Rate { per_second: f64, arrivals: Arrivals },
}

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

/// Everything a run needs. Built by the caller (herd ab, herd run, the lab); the engine
/// only reads it.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub target: Target,
    /// The requests, built once, and how often each is sent.
    pub workload: Workload,
    /// Connections open at once (closed-loop concurrency).
    pub connections: u32,
    /// Worker threads; connections are spread evenly over them.
    pub threads: u32,
    /// Reuse a connection when the server allows it; otherwise one connection per request.
    pub keep_alive: bool,
    /// Stop after this many requests (completed or failed).
    pub max_requests: Option<u64>,
    /// Stop after this long; requests in flight at the deadline are abandoned.
    pub duration: Option<Duration>,
    /// A request with no complete response this long after it started is aborted and
    /// counted as [`herd_stats::FailureKind::Timeout`].
    pub timeout: Duration,
    pub limits: Limits,
    pub socket: SocketOptions,
    pub schedule: Schedule,
    /// Requests a connection carries before herd closes it and opens a new one, drawn
    /// uniformly in `lo..=hi` for each connection (SPECweb99's clients: 5 to 15). None: as
    /// many as the server allows.
    pub per_connection: Option<(u32, u32)>,
    /// Closed loop: a pause before each of a connection's requests but the first.
    pub think: Option<Think>,
    /// Receive at most this many bytes per second on each connection, by pacing reads (a
    /// modem, SPECweb99's 400 kbit/s clients). Plain HTTP only.
    pub receive_rate: Option<u64>,
    /// Seeds every choice of the run (request mix, requests per connection, think times).
    pub seed: u64,
    /// Requests written at once on a connection before reading their responses (HTTP/1.1
    /// pipelining; 1: none). Closed loop and keep-alive only. Each response's latency counts
    /// from the batch's start. Synthetic: browsers do not pipeline.
    pub pipeline: u32,
}

impl RunSpec {
    /// Worker threads the run will use: never more than connections.
    pub fn worker_count(&self) -> u32 {
        self.threads.clamp(1, self.connections.max(1))
    }

    /// How many connections and requests worker `i` of `n` gets: connections spread as
    /// evenly as possible, requests in proportion to connections, so that workers finish
    /// together without sharing a counter.
    pub fn share(&self, i: u32, n: u32) -> (u32, Option<u64>) {
        let conns = self.connections / n + u32::from(i < self.connections % n);
        let reqs = self.max_requests.map(|total| {
            // Requests per connection, then the remainder to the first connections overall.
            let c = u64::from(self.connections);
            let first_conn = u64::from(self.first_connection(i, n));
            let per = total / c;
            let rem = total % c;
            let extra = rem.saturating_sub(first_conn).min(u64::from(conns));
            per * u64::from(conns) + extra
        });
        (conns, reqs)
    }

    /// The run-wide index of worker `i` of `n`'s first connection.
    pub fn first_connection(&self, i: u32, n: u32) -> u32 {
        i * (self.connections / n) + i.min(self.connections % n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Target;

    fn spec(connections: u32, max: u64) -> RunSpec {
        RunSpec {
            target: Target::loopback_for_tests(1),
            workload: Workload::single(crate::Prepared::new(
                b"GET / HTTP/1.0\r\n\r\n".to_vec(),
                false,
            )),
            connections,
            threads: 2,
            keep_alive: false,
            max_requests: Some(max),
            duration: None,
            timeout: Duration::from_secs(1),
            limits: Limits::default(),
            schedule: Schedule::Closed,
            socket: SocketOptions::default(),
            per_connection: None,
            think: None,
            receive_rate: None,
            seed: 0,
            pipeline: 1,
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
}
