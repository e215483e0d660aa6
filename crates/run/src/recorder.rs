//! What `herd run` keeps of every request: HdrHistograms of latency (from the intended start,
//! and from the actual send), connect time, time to first byte and schedule lag; statuses;
//! failures by kind; bytes. One per worker, merged after the run; requests that end before the
//! warm-up is over are counted apart and kept out of every figure. When an output shows the
//! run over time, the recorder also cuts it into seconds (interval.rs) and sends them on.

use std::ops::AddAssign;
use std::sync::Arc;
use std::time::Instant;

use herd_engine::{Answer, Completed, Failed, Recorder};
use herd_stats::{LatencyHistogram, RunStats};

use crate::client_errors::ClientErrors;
use crate::interval::Seconds;

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
    /// What every recorder counts: responses, failures, statuses, bytes, connections, and
    /// the histograms of connect time and of latency from the intended start (`core.total`:
    /// end − intended start, the latency a user waiting for that request saw).
    pub(crate) core: RunStats,
    pub(crate) groups: Vec<GroupStats>,
    /// Responses whose body length differs from what the workload expects.
    pub(crate) wrong_length: u64,
    /// Per connection, when the plan asks for it.
    pub(crate) conn_rates: Vec<ConnRate>,
    pub(crate) warmup_requests: u64,
    /// end − actual send start: what a closed-loop tool reports.
    pub(crate) service: LatencyHistogram,
    pub(crate) first_byte: LatencyHistogram,
    /// actual start − intended start: how long a due request waited for a free connection
    /// (or for the client itself, when it falls behind).
    pub(crate) lag: LatencyHistogram,
    /// actual start − ready (due with a connection free): the client's own lag, the part of
    /// `lag` that the server did not cause.
    pub(crate) send_lag: LatencyHistogram,
    /// The failures that were the client's own (no local port, no file descriptor).
    pub(crate) client_errors: ClientErrors,
    /// The run second by second, only for `--series`, `--hlog` and the live line.
    seconds: Option<Seconds>,
}

impl RunRecorder {
    pub(crate) fn new(measure_from: Option<Instant>, plan: Arc<RecorderPlan>) -> RunRecorder {
        RunRecorder {
            measure_from,
            core: RunStats::new(),
            groups: vec![GroupStats::default(); plan.n_groups.max(1)],
            wrong_length: 0,
            conn_rates: vec![ConnRate::default(); plan.conn_rates.unwrap_or(0) as usize],
            plan,
            warmup_requests: 0,
            service: LatencyHistogram::new(),
            first_byte: LatencyHistogram::new(),
            lag: LatencyHistogram::new(),
            send_lag: LatencyHistogram::new(),
            client_errors: ClientErrors::default(),
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
}

impl AddAssign<&RunRecorder> for RunRecorder {
    fn add_assign(&mut self, o: &RunRecorder) {
        // Destructured without `..`: a field added to the recorder does not compile until it
        // is merged here (or said here to need no merge).
        let RunRecorder {
            measure_from: _,
            plan: _,
            core,
            groups,
            wrong_length,
            conn_rates,
            warmup_requests,
            service,
            first_byte,
            lag,
            send_lag,
            client_errors,
            // Each worker's clock is finished before the merge (`finish_seconds`).
            seconds: _,
        } = o;
        self.core += core;
        if self.groups.len() < groups.len() {
            self.groups.resize(groups.len(), GroupStats::default());
        }
        for (a, b) in self.groups.iter_mut().zip(groups) {
            *a += b;
        }
        self.wrong_length += wrong_length;
        if self.conn_rates.len() < conn_rates.len() {
            self.conn_rates.resize(conn_rates.len(), ConnRate::default());
        }
        for (a, b) in self.conn_rates.iter_mut().zip(conn_rates) {
            *a += b;
        }
        self.warmup_requests += warmup_requests;
        self.service += service;
        self.first_byte += first_byte;
        self.lag += lag;
        self.send_lag += send_lag;
        self.client_errors += client_errors;
    }
}

impl AddAssign<&GroupStats> for GroupStats {
    fn add_assign(&mut self, o: &GroupStats) {
        let GroupStats { completed, failed, body_bytes, latency_us } = o;
        self.completed += completed;
        self.failed += failed;
        self.body_bytes += body_bytes;
        self.latency_us += latency_us;
    }
}

impl AddAssign<&ConnRate> for ConnRate {
    fn add_assign(&mut self, o: &ConnRate) {
        let ConnRate { bytes, nanos } = o;
        self.bytes += bytes;
        self.nanos += nanos;
    }
}

impl Recorder for RunRecorder {
    // Inlined into the worker's loop, as it was when the recorder lived in the binary: a call
    // per request measured 1 % more instructions per keep-alive request (bench/instructions.sh).
    #[inline]
    fn completed(&mut self, c: &Completed<'_>) -> Answer {
        let t = &c.timing;
        if self.warming_up(t.end) {
            if let Some(s) = &mut self.seconds {
                s.warmup(t.end);
            }
            return Answer::Continue;
        }
        if let Some(s) = &mut self.seconds {
            s.completed(t.end, t.end - t.intended, c.bytes_read);
        }
        self.core.count_response(
            c.head.status,
            c.bytes_read,
            c.bytes_written,
            c.body_bytes,
            c.reused,
        );
        self.core.total.record(t.end - t.intended);
        self.service.record(t.end - t.start);
        self.lag.record(t.start - t.intended);
        self.send_lag.record(t.start - t.ready);
        if !c.reused {
            if let Some(connected) = t.connected {
                self.core.connect.record(connected - t.start);
            }
        }
        if let Some(first) = t.first_byte {
            self.first_byte.record(first - t.start);
        }
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
        Answer::Continue
    }

    fn failed(&mut self, f: &Failed) -> Answer {
        let end = f.timing.end;
        if !self.warming_up(end) {
            self.core.count_failure(f.kind, f.bytes_read, f.bytes_written);
            self.client_errors.add(f.os_error);
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
        Answer::Continue
    }

    fn tick(&mut self, now: Instant) {
        if let Some(s) = &mut self.seconds {
            s.tick(now);
        }
    }
}
