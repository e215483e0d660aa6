//! Whether a closed loop's time went to waiting: a run limited neither by its client nor by its
//! server. In a closed loop every connection sends its next request when the last one is done,
//! so something sets the pace: the client's CPU, the server's CPU, the link, or waiting — a
//! protocol or network stall (Nagle's algorithm against a delayed ACK: 40 ms a request), a
//! round trip, or a server that waits for something else (a sleep, a backend). When neither
//! side was busy and the CPU work of a request explains only a small part of its latency, the
//! figures describe the waiting, not the server's speed, and a verdict of `ok` would vouch for
//! them. [`judge`] says so; the lab and `herd run` both ask it, with the CPU time each
//! measured of the client and of the server.
//!
//! A pure function of figures: no clocks, no files; every bound is tested below.

use std::fmt;

/// What the judgement needs, all over the same measured part of one run (or step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaitingFacts {
    /// Requests that got a response.
    pub completed: u64,
    /// Measured time, seconds.
    pub elapsed_s: f64,
    /// Mean latency from the actual send to the last byte, µs.
    pub latency_mean_us: f64,
    /// CPU seconds the client used (all its threads).
    pub client_cpu_s: f64,
    /// CPU seconds the server used (all its processes).
    pub server_cpu_s: f64,
    /// The quickest connect seen (TCP and any TLS handshake), µs: a bound on one round trip.
    /// None where no connection was timed.
    pub connect_min_us: Option<f64>,
    /// Share of requests that opened a connection (0..1).
    pub new_connection_share: f64,
}

/// The finding: how little of each request's time the two sides' CPU work and the round trip
/// explain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waiting {
    pub latency_mean_us: f64,
    /// Client and server CPU time per request, and the round trips' estimate, µs.
    pub explained_us: f64,
    /// The client's and the server's CPU use, in CPUs (CPU seconds per second).
    pub client_cpus: f64,
    pub server_cpus: f64,
}

/// Each side used less than this many CPUs: neither was busy. Below half of one CPU no side
/// can have been the pace-setter of a run, whatever its threads (a saturated single-threaded
/// server uses a whole one).
pub const IDLE_CPUS: f64 = 0.5;
/// Latency at least this many times what CPU work and round trips explain: two thirds of it
/// or more waited. The explained part is generous (the client's CPU includes its start-up, the
/// round trips count a TLS connect's handshake work again), so a lower factor would still be
/// safe; 3 keeps a request mostly made of work from ever being called waiting.
pub const UNEXPLAINED_FACTOR: f64 = 3.0;
/// And at least this much of it unexplained, µs: smaller gaps are wake-ups and cache misses,
/// not stalls (a delayed ACK is 40,000 µs).
pub const UNEXPLAINED_FLOOR_US: f64 = 1_000.0;

/// Judges one closed-loop run. None: the time went to work (or there is too little to judge).
pub fn judge(f: &WaitingFacts) -> Option<Waiting> {
    let finite = [f.elapsed_s, f.latency_mean_us, f.client_cpu_s, f.server_cpu_s]
        .iter()
        .all(|v| v.is_finite() && *v >= 0.0);
    if f.completed == 0 || f.elapsed_s <= 0.0 || !finite {
        return None;
    }
    let client_cpus = f.client_cpu_s / f.elapsed_s;
    let server_cpus = f.server_cpu_s / f.elapsed_s;
    if client_cpus >= IDLE_CPUS || server_cpus >= IDLE_CPUS {
        return None;
    }
    let per_request_us = |cpu_s: f64| cpu_s * 1e6 / f.completed as f64;
    // One round trip per request, and two more where it opened a connection (TCP, then TLS
    // or the first request): a generous estimate, which only makes the finding rarer.
    let rtt_us = f.connect_min_us.filter(|v| v.is_finite() && *v >= 0.0).unwrap_or(0.0);
    let share = f.new_connection_share.clamp(0.0, 1.0);
    let round_trips_us = rtt_us * (1.0 + 2.0 * share);
    let explained_us =
        per_request_us(f.client_cpu_s) + per_request_us(f.server_cpu_s) + round_trips_us;
    let unexplained = f.latency_mean_us - explained_us;
    (f.latency_mean_us >= UNEXPLAINED_FACTOR * explained_us && unexplained >= UNEXPLAINED_FLOOR_US)
        .then_some(Waiting {
            latency_mean_us: f.latency_mean_us,
            explained_us,
            client_cpus,
            server_cpus,
        })
}

impl fmt::Display for Waiting {
    /// One sentence: what was seen, what it means, what to do.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the time went to waiting: each request took {} on average, of which the client's \
             and the server's CPU and the round trips explain {}, and neither side was busy \
             (client {:.0} %, server {:.0} % of a CPU) — a protocol or network stall (Nagle \
             against a delayed ACK, a window), or a server waiting on something else; the \
             figures show the wait, not the server's speed: compare another client on the \
             same cell",
            ms(self.latency_mean_us),
            ms(self.explained_us),
            self.client_cpus * 100.0,
            self.server_cpus * 100.0,
        )
    }
}

/// µs as milliseconds with three decimals.
fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nginx over TLS, a new connection per request, before TCP_NODELAY: 358 req/s on one
    /// connection, 44 ms a request, the client 11 % busy, nginx a few per cent.
    fn stalled() -> WaitingFacts {
        WaitingFacts {
            completed: 358,
            elapsed_s: 1.0,
            latency_mean_us: 44_000.0,
            client_cpu_s: 0.11,
            server_cpu_s: 0.05,
            connect_min_us: Some(900.0),
            new_connection_share: 1.0,
        }
    }

    #[test]
    fn the_tls_stall_is_waiting() {
        let w = judge(&stalled()).unwrap();
        // 307 µs + 140 µs of CPU a request, 2.7 ms of round trips (generous).
        assert!((w.explained_us - (307.3 + 139.7 + 2_700.0)).abs() < 1.0, "{w:?}");
        assert_eq!(
            w.to_string(),
            "the time went to waiting: each request took 44.000 ms on average, of which the \
             client's and the server's CPU and the round trips explain 3.147 ms, and neither \
             side was busy (client 11 %, server 5 % of a CPU) — a protocol or network stall \
             (Nagle against a delayed ACK, a window), or a server waiting on something else; \
             the figures show the wait, not the server's speed: compare another client on the \
             same cell"
        );
    }

    /// The same cell once fixed: 620 req/s, 1.6 ms each, CPU-bound on the path.
    #[test]
    fn a_fast_handshake_is_not_waiting() {
        let f = WaitingFacts {
            completed: 620,
            latency_mean_us: 1_600.0,
            client_cpu_s: 0.35,
            server_cpu_s: 0.40,
            connect_min_us: Some(900.0),
            ..stalled()
        };
        assert_eq!(judge(&f), None);
    }

    #[test]
    fn a_busy_side_explains_the_latency() {
        // A server at one CPU with 64 connections queued: latency is its queue.
        let server_bound = WaitingFacts { server_cpu_s: 0.95, ..stalled() };
        assert_eq!(judge(&server_bound), None);
        let client_bound = WaitingFacts { client_cpu_s: 0.5, ..stalled() };
        assert_eq!(judge(&client_bound), None);
        let just_idle = WaitingFacts { client_cpu_s: 0.49, ..stalled() };
        assert!(judge(&just_idle).is_some());
    }

    #[test]
    fn the_bounds_hold_at_their_edges() {
        // Explained: 100 µs a request; latency 3× that is waiting only with 1 ms unexplained.
        let base = WaitingFacts {
            completed: 1000,
            elapsed_s: 1.0,
            latency_mean_us: 0.0,
            client_cpu_s: 0.05,
            server_cpu_s: 0.05,
            connect_min_us: None,
            new_connection_share: 0.0,
        };
        let at = |latency| judge(&WaitingFacts { latency_mean_us: latency, ..base });
        assert_eq!(at(299.0), None);
        assert_eq!(at(1_099.0), None, "11× but only 999 µs unexplained");
        assert!(at(1_100.0).is_some());
        // With more CPU per request, the factor decides.
        let heavy = WaitingFacts { client_cpu_s: 0.4, server_cpu_s: 0.2, ..base }; // 600 µs
        let at = |latency| judge(&WaitingFacts { latency_mean_us: latency, ..heavy });
        assert_eq!(at(1_799.0), None, "1.2 ms unexplained but under 3×");
        assert!(at(1_800.0).is_some());
    }

    #[test]
    fn round_trips_count_as_explained() {
        // A 10 ms network round trip on kept-alive connections explains a 12 ms request.
        let wan = WaitingFacts {
            latency_mean_us: 12_000.0,
            connect_min_us: Some(10_000.0),
            new_connection_share: 0.0,
            ..stalled()
        };
        assert_eq!(judge(&wan), None);
    }

    #[test]
    fn nothing_to_judge() {
        assert_eq!(judge(&WaitingFacts { completed: 0, ..stalled() }), None);
        assert_eq!(judge(&WaitingFacts { elapsed_s: 0.0, ..stalled() }), None);
        assert_eq!(judge(&WaitingFacts { latency_mean_us: f64::NAN, ..stalled() }), None);
        assert_eq!(judge(&WaitingFacts { server_cpu_s: -1.0, ..stalled() }), None);
    }
}
