//! How a cell loads its server: the load shapes of the seeds (ab's fixed request count, a
//! duration, a fixed rate, WebBench's client steps), offered rates in steps (latency against
//! offered load), and the request each cell sends.
//!
//! Values only: the client module turns them into a command line.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use herd_stats::units::TimeSpan;

/// How hard and for how long a cell pushes its server.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub shape: Shape,
    /// Reuse connections (ab `-k`); false: one connection per request, `Connection: close`.
    pub keep_alive: bool,
    /// Load before the measured part, discarded: a time or a request count, run by the lab
    /// as a separate client run ([`Load::warmup_run`]).
    pub warmup: Warmup,
    /// A request with no complete answer after this long fails as a timeout.
    pub timeout: Duration,
    /// Requests at once on each connection of a multiplexed protocol (h2, h2c, h3: herd
    /// run's `--streams`, h2load's `-m`); None: one at a time. Never given for HTTP/1, whose
    /// connections carry one request at a time (the experiment file refuses it there).
    pub streams: Option<NonZeroU32>,
}

/// The load shapes.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// ab's `-n N -c C`: C connections in a closed loop until N requests have ended.
    Requests { n_requests: u64, concurrency: u32 },
    /// C connections in a closed loop for a fixed time.
    Duration { duration: Duration, concurrency: u32 },
    /// An open loop: `per_second` requests per second for `duration`, over at most
    /// `connections` connections; latency from each request's intended send time.
    Rate { per_second: f64, duration: Duration, connections: u32 },
    /// WebBench's ramp: `clients` in turn (1, 2, 4 … 512), each for `step` in a closed loop;
    /// one measurement per step.
    Steps { clients: Vec<u32>, step: Duration },
    /// Offered rates in turn (`rate_steps`), each an open loop of `rate_per_second` for `step`
    /// over at most `connections` connections: latency against offered load, one measurement
    /// per step, each step judged for whether it held its rate as a `Rate` cell is.
    RateSteps { rates: Vec<f64>, step: Duration, connections: u32 },
}

impl Load {
    /// The separate, discarded warm-up run: the warm-up's time or count, closed loop, on as
    /// many connections as the load opens at most (a stepped load's largest step; no more
    /// than the warm-up's requests, which ab would refuse). A pinned rate warms up for its
    /// time at its own rate, so that the server settles in the state it is measured in (a
    /// closed loop would run both sides flat out just before). None without a warm-up.
    pub fn warmup_run(&self) -> Option<Load> {
        let concurrency = self.shape.max_connections();
        if let (Shape::Rate { per_second, connections, .. }, Warmup::Duration(d)) =
            (&self.shape, self.warmup)
        {
            let shape =
                Shape::Rate { per_second: *per_second, duration: d, connections: *connections };
            return Some(Load { shape, warmup: Warmup::None, ..self.clone() });
        }
        let shape = match self.warmup {
            Warmup::Requests(n) => Shape::Requests {
                n_requests: n,
                concurrency: concurrency.min(u32::try_from(n).unwrap_or(u32::MAX)).max(1),
            },
            Warmup::Duration(d) => Shape::Duration { duration: d, concurrency },
            Warmup::None => return None,
        };
        Some(Load { shape, warmup: Warmup::None, ..self.clone() })
    }

    /// The measured run: this load without its warm-up, which ran before.
    pub fn measured(&self) -> Load {
        Load { warmup: Warmup::None, ..self.clone() }
    }

    /// The load in words, for the dry run: its shape, and how connections are used, said
    /// plainly ("a new connection per request" for a load without keep-alive).
    pub fn describe(&self) -> String {
        let secs = |d: &Duration| TimeSpan::new(*d).map_or_else(|| "0s".into(), |t| t.to_string());
        let shape = match &self.shape {
            Shape::Requests { n_requests, concurrency } => {
                format!("{n_requests} requests, {concurrency} at a time (closed loop)")
            }
            Shape::Duration { duration, concurrency } => {
                format!("{}, {concurrency} connections (closed loop)", secs(duration))
            }
            Shape::Rate { per_second, duration, connections } => format!(
                "{per_second} requests/s for {} over at most {connections} connections (open \
                 loop, latency from each request's intended send)",
                secs(duration)
            ),
            Shape::Steps { clients, step } => {
                let list: Vec<String> = clients.iter().map(u32::to_string).collect();
                format!("steps of {} clients, {} each (closed loop)", list.join(", "), secs(step))
            }
            Shape::RateSteps { rates, step, connections } => {
                let list: Vec<String> = rates.iter().map(f64::to_string).collect();
                format!(
                    "steps of {} requests/s, {} each, over at most {connections} connections \
                     (open loop, latency from each request's intended send)",
                    list.join(", "),
                    secs(step)
                )
            }
        };
        let connections = match (self.keep_alive, self.streams) {
            (false, _) => "a new connection per request (keep_alive = false)".to_owned(),
            (true, Some(m)) => format!("connections kept alive, {m} streams at once on each"),
            (true, None) => "connections kept alive".to_owned(),
        };
        let warmup = match self.warmup {
            Warmup::None => String::new(),
            Warmup::Duration(d) => format!("; a warm-up of {} before, discarded", secs(&d)),
            Warmup::Requests(n) => format!("; a warm-up of {n} requests before, discarded"),
        };
        format!("{shape}; {connections}{warmup}")
    }
}

impl Shape {
    /// The most connections the shape opens at once (a stepped load's largest step).
    pub fn max_connections(&self) -> u32 {
        match self {
            Shape::Requests { concurrency, .. } | Shape::Duration { concurrency, .. } => {
                *concurrency
            }
            Shape::Rate { connections, .. } | Shape::RateSteps { connections, .. } => *connections,
            Shape::Steps { clients, .. } => clients.iter().copied().max().unwrap_or(1),
        }
    }
}

/// Warm-up before the measured part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Warmup {
    None,
    Duration(Duration),
    Requests(u64),
}

/// What one request of a cell is, with what the answer must be.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Path and query on the server, e.g. `/sizes/6397.html` or `/9x9.php`.
    pub path: String,
    pub method: Method,
    /// For a mix of URLs (a SPECweb99-like set): the directory of the generated set, whose
    /// manifest gives the files and their weights (herd run `--specweb`). herd only.
    pub specweb_dir: Option<PathBuf>,
    /// Status every answer must have.
    pub expect_status: u16,
    /// Body length every answer must have; None for a mix.
    pub expect_body_bytes: Option<u64>,
}

/// The request method and body.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    Get,
    /// POST with this file as the body (ab `-p`, herd run `--body-file`).
    Post {
        body_file: PathBuf,
        content_type: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(shape: Shape, warmup: Warmup) -> Load {
        Load { shape, keep_alive: false, warmup, timeout: Duration::from_secs(30), streams: None }
    }

    #[test]
    fn a_load_says_in_words_whether_it_opens_a_connection_per_request() {
        let ab = load(Shape::Requests { n_requests: 100, concurrency: 5 }, Warmup::Requests(10));
        assert_eq!(
            ab.describe(),
            "100 requests, 5 at a time (closed loop); a new connection per request \
             (keep_alive = false); a warm-up of 10 requests before, discarded"
        );
        let kept = Load {
            keep_alive: true,
            streams: NonZeroU32::new(10),
            ..load(
                Shape::Duration { duration: Duration::from_millis(1500), concurrency: 8 },
                Warmup::Duration(Duration::from_secs(1)),
            )
        };
        assert_eq!(
            kept.describe(),
            "1500ms, 8 connections (closed loop); connections kept alive, 10 streams at once \
             on each; a warm-up of 1s before, discarded"
        );
        let rates = Shape::RateSteps {
            rates: vec![1000.0, 2500.5],
            step: Duration::from_millis(300),
            connections: 8,
        };
        assert_eq!(
            load(rates, Warmup::None).describe(),
            "steps of 1000, 2500.5 requests/s, 300ms each, over at most 8 connections (open \
             loop, latency from each request's intended send); a new connection per request \
             (keep_alive = false)"
        );
    }

    #[test]
    fn the_warmup_run_is_closed_loop_on_the_most_connections() {
        let steps = Shape::Steps { clients: vec![1, 8, 4], step: Duration::from_secs(1) };
        let w = load(steps, Warmup::Duration(Duration::from_secs(2))).warmup_run().unwrap();
        assert_eq!(w.shape, Shape::Duration { duration: Duration::from_secs(2), concurrency: 8 });
        assert_eq!(w.warmup, Warmup::None);
        // Never more connections than requests (ab refuses -c above -n).
        let ab = load(Shape::Requests { n_requests: 1000, concurrency: 100 }, Warmup::Requests(50));
        let w = ab.warmup_run().unwrap();
        assert_eq!(w.shape, Shape::Requests { n_requests: 50, concurrency: 50 });
        assert_eq!(ab.measured().warmup, Warmup::None);
        assert_eq!(ab.measured().shape, ab.shape);
        let rates = Shape::RateSteps {
            rates: vec![1000.0, 2000.0],
            step: Duration::from_secs(1),
            connections: 16,
        };
        let w = load(rates, Warmup::Duration(Duration::from_secs(1))).warmup_run().unwrap();
        assert_eq!(w.shape, Shape::Duration { duration: Duration::from_secs(1), concurrency: 16 });
        assert!(load(Shape::Requests { n_requests: 1, concurrency: 1 }, Warmup::None)
            .warmup_run()
            .is_none());
    }

    #[test]
    fn a_pinned_rate_warms_up_at_its_rate() {
        let rate =
            Shape::Rate { per_second: 10_000.0, duration: Duration::from_secs(1), connections: 64 };
        let w = load(rate.clone(), Warmup::Duration(Duration::from_millis(200))).warmup_run();
        let want = Shape::Rate {
            per_second: 10_000.0,
            duration: Duration::from_millis(200),
            connections: 64,
        };
        assert_eq!(w.map(|w| (w.shape, w.warmup)), Some((want, Warmup::None)));
        // A count of requests has no time to run at a rate: closed loop, as before.
        let w = load(rate, Warmup::Requests(100)).warmup_run().unwrap();
        assert_eq!(w.shape, Shape::Requests { n_requests: 100, concurrency: 64 });
    }
}
