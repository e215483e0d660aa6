//! One run object of herd.run.v1: a whole run, or one step of a stepped run. Field for field
//! what docs/run-json.md describes.

use std::collections::BTreeMap;

use herd_stats::{ClientHealth, ClientJudgement, Failure, LatencySeries, Measurement, Protocol};
use serde::{Deserialize, Serialize};

use super::{FormatV1, IoReport, Latencies};

/// One run, or one step of a stepped run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    pub format: FormatV1,
    /// The URL as given.
    pub url: String,
    pub connections: u32,
    /// Worker threads actually used.
    pub threads: u32,
    pub keep_alive: bool,
    /// What the connections spoke; absent in documents from before HTTP/2.
    #[serde(default)]
    pub protocol: Option<Protocol>,
    /// Requests at once on each connection, for HTTP/2 (`--streams`); null for HTTP/1.
    #[serde(default)]
    pub streams: Option<u32>,
    /// HTTP/3: what QUIC did over the run's connections; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicReport>,
    /// Which event-loop backend measured (`--io`), and why when `auto` fell back to epoll;
    /// absent in documents from before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoReport>,
    /// `--trace-context`: the trace id every request's `traceparent` carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<super::TraceReport>,
    pub schedule: Schedule,
    /// Measured time: from the end of the warm-up (or the start) to the last outcome or the
    /// deadline.
    pub elapsed_s: f64,
    /// Stopped early by Ctrl-C.
    pub interrupted: bool,
    /// Requests that ended during `--warmup`, excluded from everything else.
    pub warmup_requests: u64,
    pub requests: Requests,
    pub bytes: Bytes,
    pub latency_us: Latencies,
    /// Responses by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Failed requests by kind (herd's engine kinds); only kinds that occurred.
    pub failures: BTreeMap<Failure, u64>,
    /// Status-200 responses whose body length differs from the one the workload knows.
    pub wrong_length: u64,
    pub clients: Clients,
    pub conforming: Option<Conforming>,
    pub groups: Option<Groups>,
    /// The client health verdict and the figures it was judged on.
    pub client: ClientHealth,
}

/// What QUIC did over an HTTP/3 run's connections (h2load's QUIC rows and herd's own).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuicReport {
    /// The lowest round-trip time seen (ACK delay left out), µs; None (null) when no
    /// connection measured one (the server never acknowledged a packet).
    pub min_rtt_us: Option<u64>,
    /// The last smoothed round-trip time estimate, µs; None (null) as `min_rtt_us`.
    pub smoothed_rtt_us: Option<u64>,
    pub packets_sent: u64,
    pub packets_lost: u64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Datagrams per receive system call: above 1 when GRO or recvmmsg batched them.
    pub datagrams_per_recv: f64,
    /// Whether the kernel's segmentation offloads were in use.
    pub gso: bool,
    pub gro: bool,
}

impl From<&herd_engine::quic::QuicStats> for QuicReport {
    fn from(q: &herd_engine::quic::QuicStats) -> QuicReport {
        let us = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        QuicReport {
            min_rtt_us: q.rtt.map(|r| us(r.min)),
            smoothed_rtt_us: q.rtt.map(|r| us(r.smoothed)),
            packets_sent: q.packets_sent,
            packets_lost: q.packets_lost,
            datagrams_sent: q.datagrams_sent,
            datagrams_received: q.datagrams_received,
            datagrams_per_recv: q.datagrams_per_recv,
            gso: q.gso,
            gro: q.gro,
        }
    }
}

/// When requests were sent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Schedule {
    Closed,
    Rate { requests_per_second: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Requests {
    pub completed: u64,
    pub failed: u64,
    /// Completed per second.
    pub per_second: f64,
    /// Completed + failed per second: the achieved rate.
    pub attempted_per_second: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bytes {
    /// Every byte read (heads, bodies, chunk framing), failures included.
    pub read: u64,
    /// Decoded body bytes of completed responses.
    pub body: u64,
}

/// How the clients behaved; None where not asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clients {
    pub requests_per_connection: Option<PerConnection>,
    pub think: Option<ThinkReport>,
    /// Per-connection receive cap, bits per second.
    pub bandwidth_bps: Option<u64>,
    /// Pipelining depth when more than 1 (synthetic).
    pub pipeline: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerConnection {
    pub min: u32,
    pub max: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkReport {
    /// `fixed` or `exponential`.
    pub kind: ThinkKind,
    pub mean_us: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkKind {
    Fixed,
    Exponential,
}

/// SPECweb99's conforming connections.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Conforming {
    pub threshold_bps: u64,
    /// Connections that completed a request.
    pub connections: u64,
    /// Of those, the ones whose receive rate stayed at or above the threshold.
    pub conforming: u64,
    pub min_bps: Option<f64>,
    /// The median connection's receive rate (the summary's "median"); absent in documents
    /// from before it was written.
    #[serde(default)]
    pub median_bps: Option<f64>,
    pub max_bps: Option<f64>,
}

/// Per URL (`--urls`) or SPECweb99 class (`--specweb`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Groups {
    /// The mix.
    pub source: Option<String>,
    pub rows: Vec<GroupRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRow {
    pub name: String,
    pub completed: u64,
    pub failed: u64,
    pub body_bytes: u64,
    /// Mean latency from the intended start, µs; None when none completed.
    pub mean_us: Option<u64>,
}

impl StepReport {
    /// Failed requests, all kinds.
    pub fn failed(&self) -> u64 {
        self.requests.failed
    }

    /// Completed requests per second.
    pub fn requests_per_second(&self) -> f64 {
        self.requests.per_second
    }

    /// The asked rate of an open loop.
    pub fn rate(&self) -> Option<f64> {
        match self.schedule {
            Schedule::Closed => None,
            Schedule::Rate { requests_per_second } => Some(requests_per_second),
        }
    }

    /// The step's name in a stepped run: `c=16` for a step of 16 connections, `r=2000` for a
    /// step of `--rate-steps` (whose steps share one count of connections, so only the rate
    /// tells them apart).
    pub fn step_label(&self) -> String {
        match self.rate() {
            Some(rate) => format!("r={rate}"),
            None => format!("c={}", self.connections),
        }
    }

    /// No request got a response: nothing was measured of the server but its absence.
    pub fn no_response(&self) -> bool {
        self.requests.completed == 0
    }

    /// The client verdict on this result, its reason prefixed with the step (`step 3 (c=4):
    /// …`) when `label` names one; None when there was nothing to judge.
    pub fn judgement(&self, label: Option<&str>, step: u32) -> Option<ClientJudgement> {
        let verdict = self.client.verdict?;
        let reason = self.client.reason.as_ref().map(|r| match label {
            Some(label) => format!("step {step} ({label}): {r}"),
            None => r.clone(),
        });
        Some(ClientJudgement { verdict, reason })
    }

    /// This result as the lab and the pages measure every client: step `step` (1, 2, …),
    /// labelled `c=N` when the run is stepped. A wrong length counts as failed too (as ab
    /// counts it), under [`Failure::Length`].
    pub fn measurement(&self, step: u32, stepped: bool) -> Measurement {
        let mut failures: Vec<(Failure, u64)> =
            self.failures.iter().map(|(&k, &n)| (k, n)).collect();
        if self.wrong_length > 0 {
            failures.push((Failure::Length, self.wrong_length));
        }
        failures.sort();
        let non_2xx =
            self.statuses.iter().filter(|(s, _)| !(200..300).contains(*s)).map(|(_, n)| n).sum();
        let mut histograms = Vec::with_capacity(LatencySeries::ALL.len());
        for &series in LatencySeries::ALL {
            let h = match self.latency_us.get(series).histogram() {
                Some(h) => h.clone(),
                // Every series is there, empty when nothing was measured: an empty histogram
                // of the same resolution as every other (3 significant digits).
                None => match hdrhistogram::Histogram::new(3) {
                    Ok(h) => h,
                    Err(_) => continue,
                },
            };
            histograms.push((series, h));
        }
        let mut reported = vec![
            ("requests_per_second".to_owned(), self.requests.per_second),
            ("attempted_per_second".to_owned(), self.requests.attempted_per_second),
        ];
        if self.interrupted {
            reported.push((herd_stats::REPORTED_INTERRUPTED.to_owned(), 1.0));
        }
        Measurement {
            step,
            label: if stepped { self.step_label() } else { String::new() },
            concurrency: Some(self.connections),
            rate: self.rate(),
            duration_s: self.elapsed_s,
            completed: self.requests.completed,
            failed: self.requests.failed + self.wrong_length,
            failures,
            statuses: self.statuses.iter().map(|(&s, &n)| (s, n)).collect(),
            non_2xx,
            bytes_total: self.bytes.read,
            bytes_body: self.bytes.body,
            warmup_requests: self.warmup_requests,
            histograms,
            reported,
            judgement: None,
        }
    }
}
