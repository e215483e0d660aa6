//! What `herd run` keeps of every request: HdrHistograms of latency (from the intended start,
//! and from the actual send), connect time, time to first byte and schedule lag; statuses;
//! failures by kind; bytes. One per worker, merged after the run; requests that end before the
//! warm-up is over are counted apart and kept out of every figure. When an output shows the
//! run over time, the recorder also cuts it into seconds (interval.rs) and sends them on.

use std::sync::Arc;
use std::time::Instant;

use herd_engine::{Completed, Failed, Recorder, Verdict};
use herd_stats::{Failures, LatencyHistogram, StatusCounts};

use super::client_errors::ClientErrors;
use super::interval::Seconds;

/// What the recorder needs to know of the workload, shared by every worker's recorder.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecorderPlan {
    /// Group of each workload entry (its URL, or its SPECweb99 class); empty: one group.
    pub(crate) group_of: Vec<usize>,
    pub(crate) n_groups: usize,
    /// Body length each entry's response must have, when known.
    pub(crate) expected_bytes: Vec<Option<u64>>,
    /// Keep each connection's receive rate (the run has that many connections).
    pub(crate) conn_rates: Option<u32>,
}

/// Counts per group of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct GroupStats {
    pub(crate) completed: u64,
    pub(crate) failed: u64,
    pub(crate) body_bytes: u64,
    /// Sum of latencies from the intended start, for the mean.
    pub(crate) latency_us: u64,
}

/// What one connection (a simulated user, across reconnections) received, and how long its
/// requests took from start to end (think time excluded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ConnRate {
    pub(crate) bytes: u64,
    pub(crate) nanos: u64,
}

impl ConnRate {
    /// Bits per second; None before any request ended.
    pub(crate) fn bits_per_second(&self) -> Option<f64> {
        (self.nanos > 0).then(|| self.bytes as f64 * 8e9 / self.nanos as f64)
    }
}

#[derive(Debug)]
pub(crate) struct RunRecorder {
    /// Requests ending before this are warm-up.
    measure_from: Option<Instant>,
    plan: Arc<RecorderPlan>,
    pub(crate) groups: Vec<GroupStats>,
    /// Responses whose body length differs from what the workload expects.
    pub(crate) wrong_length: u64,
    /// Per connection, when the plan asks for it.
    pub(crate) conn_rates: Vec<ConnRate>,
    pub(crate) warmup_requests: u64,
    pub(crate) completed: u64,
    /// end − intended start: the latency a user waiting for that request saw.
    pub(crate) latency: LatencyHistogram,
    /// end − actual send start: what a closed-loop tool reports.
    pub(crate) service: LatencyHistogram,
    pub(crate) connect: LatencyHistogram,
    pub(crate) first_byte: LatencyHistogram,
    /// actual start − intended start: how long a due request waited for a free connection
    /// (or for the client itself, when it falls behind).
    pub(crate) lag: LatencyHistogram,
    /// actual start − ready (due with a connection free): the client's own lag, the part of
    /// `lag` that the server did not cause.
    pub(crate) send_lag: LatencyHistogram,
    pub(crate) statuses: StatusCounts,
    pub(crate) failures: Failures,
    /// The failures that were the client's own (no local port, no file descriptor).
    pub(crate) client_errors: ClientErrors,
    pub(crate) bytes_read: u64,
    pub(crate) body_bytes: u64,
    /// The run second by second, only for `--series`, `--hlog` and the live line.
    seconds: Option<Seconds>,
}

impl RunRecorder {
    pub(crate) fn new(measure_from: Option<Instant>, plan: Arc<RecorderPlan>) -> RunRecorder {
        RunRecorder {
            measure_from,
            groups: vec![GroupStats::default(); plan.n_groups.max(1)],
            wrong_length: 0,
            conn_rates: vec![ConnRate::default(); plan.conn_rates.unwrap_or(0) as usize],
            plan,
            warmup_requests: 0,
            completed: 0,
            latency: LatencyHistogram::new(),
            service: LatencyHistogram::new(),
            connect: LatencyHistogram::new(),
            first_byte: LatencyHistogram::new(),
            lag: LatencyHistogram::new(),
            send_lag: LatencyHistogram::new(),
            statuses: StatusCounts::default(),
            failures: Failures::default(),
            client_errors: ClientErrors::default(),
            bytes_read: 0,
            body_bytes: 0,
            seconds: None,
        }
    }

    /// Also cuts the run into seconds and sends them on.
    pub(crate) fn with_seconds(mut self, seconds: Seconds) -> RunRecorder {
        self.seconds = Some(seconds);
        self
    }

    /// The run ended at `end` (the engine's `Run::ended`): sends the last second, and lets
    /// go of the clock (and its histogram) before the recorders are merged.
    pub(crate) fn finish_seconds(&mut self, end: Instant) {
        if let Some(mut s) = self.seconds.take() {
            s.finish(end);
        }
    }

    fn add_conn_rate(&mut self, conn: u32, bytes: u64, took: std::time::Duration) {
        if let Some(r) = self.conn_rates.get_mut(conn as usize) {
            r.bytes += bytes;
            r.nanos += u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        }
    }

    fn warming_up(&mut self, end: Instant) -> bool {
        if self.measure_from.is_some_and(|t| end < t) {
            self.warmup_requests += 1;
            return true;
        }
        false
    }

    pub(crate) fn merge(&mut self, o: &RunRecorder) {
        if self.groups.len() < o.groups.len() {
            self.groups.resize(o.groups.len(), GroupStats::default());
        }
        for (a, b) in self.groups.iter_mut().zip(&o.groups) {
            a.completed += b.completed;
            a.failed += b.failed;
            a.body_bytes += b.body_bytes;
            a.latency_us += b.latency_us;
        }
        self.wrong_length += o.wrong_length;
        if self.conn_rates.len() < o.conn_rates.len() {
            self.conn_rates.resize(o.conn_rates.len(), ConnRate::default());
        }
        for (a, b) in self.conn_rates.iter_mut().zip(&o.conn_rates) {
            a.bytes += b.bytes;
            a.nanos += b.nanos;
        }
        self.warmup_requests += o.warmup_requests;
        self.completed += o.completed;
        self.latency += &o.latency;
        self.service += &o.service;
        self.connect += &o.connect;
        self.first_byte += &o.first_byte;
        self.lag += &o.lag;
        self.send_lag += &o.send_lag;
        self.statuses += &o.statuses;
        self.failures += &o.failures;
        self.client_errors += &o.client_errors;
        self.bytes_read += o.bytes_read;
        self.body_bytes += o.body_bytes;
    }
}

impl Recorder for RunRecorder {
    fn completed(&mut self, c: &Completed<'_>) -> Verdict {
        let t = &c.timing;
        if self.warming_up(t.end) {
            if let Some(s) = &mut self.seconds {
                s.warmup(t.end);
            }
            return Verdict::Continue;
        }
        if let Some(s) = &mut self.seconds {
            s.completed(t.end, t.end - t.intended, c.bytes_read);
        }
        self.completed += 1;
        self.latency.record(t.end - t.intended);
        self.service.record(t.end - t.start);
        self.lag.record(t.start - t.intended);
        self.send_lag.record(t.start - t.ready);
        if !c.reused {
            if let Some(connected) = t.connected {
                self.connect.record(connected - t.start);
            }
        }
        if let Some(first) = t.first_byte {
            self.first_byte.record(first - t.start);
        }
        self.statuses.add(c.head.status);
        self.bytes_read += c.bytes_read;
        self.body_bytes += c.body_bytes;
        let group = self.plan.group_of.get(c.request).copied().unwrap_or(0);
        if let Some(g) = self.groups.get_mut(group) {
            g.completed += 1;
            g.body_bytes += c.body_bytes;
            g.latency_us += u64::try_from((t.end - t.intended).as_micros()).unwrap_or(u64::MAX);
        }
        if let Some(Some(want)) = self.plan.expected_bytes.get(c.request) {
            if *want != c.body_bytes && c.head.status == 200 {
                self.wrong_length += 1;
            }
        }
        self.add_conn_rate(c.conn, c.bytes_read, t.end - t.start);
        Verdict::Continue
    }

    fn failed(&mut self, f: &Failed) -> Verdict {
        let end = f.timing.end;
        if !self.warming_up(end) {
            self.failures.add(f.kind);
            self.client_errors.add(f.os_error);
            self.bytes_read += f.bytes_read;
            let group = self.plan.group_of.get(f.request).copied().unwrap_or(0);
            if let Some(g) = self.groups.get_mut(group) {
                g.failed += 1;
            }
            let t = &f.timing;
            self.add_conn_rate(f.conn, f.bytes_read, t.end - t.start);
            if let Some(s) = &mut self.seconds {
                s.failed(end, f.bytes_read);
            }
        } else if let Some(s) = &mut self.seconds {
            s.warmup(end);
        }
        Verdict::Continue
    }

    fn tick(&mut self, now: Instant) {
        if let Some(s) = &mut self.seconds {
            s.tick(now);
        }
    }
}
