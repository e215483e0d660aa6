//! What `herd run` keeps of every request: HdrHistograms of latency (from the intended start,
//! and from the actual send), connect time, time to first byte and schedule lag; statuses;
//! failures by kind; bytes. One per worker, merged after the run; requests that end before the
//! warm-up is over are counted apart and kept out of every figure. When an output shows the
//! run over time, the recorder also cuts it into seconds (seconds.rs) and sends them on.

use std::ops::AddAssign;
use std::sync::Arc;
use std::time::Instant;

use herd_engine::{Answer, Completed, Failed, Recorder};
use herd_stats::{LatencyHistogram, RunStats};
use serde::{Deserialize, Serialize};

use crate::client_errors::ClientErrors;
use crate::seconds::{MaybeSeconds, Seconds};

/// What the recorder needs to know of the workload, shared by every worker's recorder.
#[derive(Debug, Clone, Default)]
pub struct RecorderPlan {
    /// Group of each workload entry (its URL, or its SPECweb99 class); empty: one group.
    pub group_of: Vec<usize>,
    pub n_groups: usize,
    /// Body length each entry's response must have, when known.
    pub expected_bytes: Vec<Option<u64>>,
    /// Keep each connection's receive rate (the run has that many connections).
    pub conn_rates: Option<u32>,
}

/// Counts per group of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    pub completed: u64,
    pub failed: u64,
    pub body_bytes: u64,
    /// Sum of latencies from the intended start, for the mean.
    pub latency_us: u64,
}

/// What one connection (a simulated user, across reconnections) received, and how long its
/// requests took from start to end (think time excluded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnRate {
    pub bytes: u64,
    pub nanos: u64,
}

impl ConnRate {
    /// Bits per second; None before any request ended.
    pub fn bits_per_second(&self) -> Option<f64> {
        (self.nanos > 0).then(|| self.bytes as f64 * 8e9 / self.nanos as f64)
    }
}

/// It travels as JSON from an agent of a spread run to the coordinator (spread/wire.rs):
/// every count and histogram whole, so that the coordinator's sum is exact. What belongs to
/// the agent's own run (its warm-up clock, its plan, its seconds) stays behind.
#[derive(Debug, Serialize, Deserialize)]
pub struct RunRecorder {
    /// Requests ending before this are warm-up.
    #[serde(skip)]
    measure_from: Option<Instant>,
    #[serde(skip)]
    plan: Arc<RecorderPlan>,
    /// What every recorder counts: responses, failures, statuses, bytes, connections, and
    /// the histograms of connect time and of latency from the intended start (`core.total`:
    /// end − intended start, the latency a user waiting for that request saw).
    pub core: RunStats,
    pub groups: Vec<GroupStats>,
    /// Responses whose body length differs from what the workload expects.
    pub wrong_length: u64,
    /// Per connection, when the plan asks for it.
    pub conn_rates: Vec<ConnRate>,
    pub warmup_requests: u64,
    /// end − actual send start: what a closed-loop tool reports.
    pub service: LatencyHistogram,
    pub first_byte: LatencyHistogram,
    /// actual start − intended start: how long a due request waited for a free connection
    /// (or for the client itself, when it falls behind).
    pub lag: LatencyHistogram,
    /// actual start − ready (due with a connection free): the client's own lag, the part of
    /// `lag` that the server did not cause.
    pub send_lag: LatencyHistogram,
    /// Requests with no lag (no send lag), not yet in `lag` (`send_lag`): [`RunRecorder::settle`].
    zero_lag: u64,
    zero_send_lag: u64,
    /// The failures that were the client's own (no local port, no file descriptor).
    pub client_errors: ClientErrors,
    /// The run second by second, only for `--series`, `--hlog` and the live line.
    #[serde(skip)]
    seconds: MaybeSeconds,
}

impl RunRecorder {
    pub fn new(measure_from: Option<Instant>, plan: Arc<RecorderPlan>) -> RunRecorder {
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
            zero_lag: 0,
            zero_send_lag: 0,
            client_errors: ClientErrors::default(),
            seconds: MaybeSeconds::default(),
        }
    }

    /// Also cuts the run into seconds and sends them on.
    pub fn with_seconds(mut self, seconds: Seconds) -> RunRecorder {
        self.seconds.set(seconds);
        self
    }

    /// The run ended at `end` (the engine's `Run::ended`): sends the last second, and lets
    /// go of the clock (and its histogram) before the recorders are merged.
    pub fn finish_seconds(&mut self, end: Instant) {
        self.seconds.finish(end);
    }

    /// Records the zero lags counted by `completed` into `lag` and `send_lag`; call it before
    /// reading them (after the workers' recorders are merged).
    pub fn settle(&mut self) {
        self.lag.record_n_micros(0, std::mem::take(&mut self.zero_lag));
        self.send_lag.record_n_micros(0, std::mem::take(&mut self.zero_send_lag));
    }

    /// Whether every counted zero is in the histograms.
    pub fn is_settled(&self) -> bool {
        self.zero_lag == 0 && self.zero_send_lag == 0
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
            zero_lag,
            zero_send_lag,
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
        self.zero_lag += zero_lag;
        self.zero_send_lag += zero_send_lag;
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
    // Called through the engine's one copy of the workers (herd_engine's `AnyRecorder`), not
    // inlined into a copy of them: about 60 instructions a keep-alive request (1.5 %,
    // bench/instructions.sh), for a build that no longer compiles the workers again here
    // (herd-run: 55 s → 20 s at opt-level 3 on 2 cores).
    fn completed(&mut self, c: &Completed<'_>) -> Answer {
        let t = &c.timing;
        if self.warming_up(t.end) {
            if let Some(s) = self.seconds.get() {
                s.warmup(t.end);
            }
            return Answer::Continue;
        }
        let total = t.end - t.intended;
        if let Some(s) = self.seconds.get() {
            let late = t.start.saturating_duration_since(t.ready) >= crate::seconds::LATE_SEND;
            s.completed(t.end, total, c.bytes_read, late);
        }
        self.core.count_response(c.status, c.bytes_read, c.bytes_written, c.body_bytes, c.reused);
        self.core.total.record(total);
        // A request that started when it was due (every one of a closed loop but a retry) has
        // no lag, and its latency from the send is its total: zeros are counted here and
        // recorded at once by `settle`, the same histograms for two records and two clock
        // subtractions less a request (bench/instructions.sh).
        let service = if t.start == t.intended {
            self.zero_lag += 1;
            total
        } else {
            self.lag.record(t.start - t.intended);
            t.end - t.start
        };
        self.service.record(service);
        if t.start == t.ready {
            self.zero_send_lag += 1;
        } else {
            self.send_lag.record(t.start - t.ready);
        }
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
            g.latency_us += u64::try_from(total.as_micros()).unwrap_or(u64::MAX);
        }
        if let Some(Some(want)) = self.plan.expected_bytes.get(c.request) {
            if *want != c.body_bytes && c.status == 200 {
                self.wrong_length += 1;
            }
        }
        self.add_conn_rate(c.conn, c.bytes_read, service);
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
            if let Some(s) = self.seconds.get() {
                s.failed(end, f.kind, f.bytes_read);
            }
        } else if let Some(s) = self.seconds.get() {
            s.warmup(end);
        }
        Answer::Continue
    }

    fn tick(&mut self, now: Instant) {
        self.seconds.tick(now);
    }

    fn open_connections(&mut self, open: usize) {
        self.seconds.open_connections(open);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use herd_engine::{Completed, Recorder, Timing};

    use super::*;

    fn completed(r: &mut RunRecorder, intended: Instant, ready: Instant, start: Instant) {
        let timing = Timing {
            intended,
            ready,
            start,
            connected: None,
            written: None,
            first_byte: None,
            end: start + Duration::from_micros(300),
        };
        let c = Completed {
            timing: &timing,
            status: 200,
            reusable: true,
            body_bytes: 10,
            bytes_read: 50,
            bytes_written: 20,
            reused: true,
            server: None,
            request: 0,
            conn: 0,
        };
        r.completed(&c);
    }

    #[test]
    fn counted_zero_lags_settle_into_the_histograms_a_record_each_would_give() {
        let t0 = Instant::now();
        let later = |us| t0 + Duration::from_micros(us);
        let (mut a, mut b) = (
            RunRecorder::new(None, Default::default()),
            RunRecorder::new(None, Default::default()),
        );
        // Closed loop: due, ready and started at once.
        completed(&mut a, t0, t0, t0);
        completed(&mut a, t0, t0, t0);
        // Open loop: due at t0, a connection free 40 µs later, sent 50 µs later.
        completed(&mut b, t0, later(40), later(50));
        completed(&mut b, t0, t0, t0);
        a += &b;
        assert!(!a.is_settled());
        a.settle();
        assert!(a.is_settled());
        let mut lag = LatencyHistogram::new();
        let mut send_lag = LatencyHistogram::new();
        for us in [0, 0, 50, 0] {
            lag.record_micros(us);
        }
        for us in [0, 0, 10, 0] {
            send_lag.record_micros(us);
        }
        assert_eq!(a.lag, lag);
        assert_eq!(a.send_lag, send_lag);
        // Latency from the send: the total where the request started when it was due.
        let mut service = LatencyHistogram::new();
        for us in [300, 300, 300, 300] {
            service.record_micros(us);
        }
        assert_eq!(a.service, service);
        assert_eq!(a.core.total.max_micros(), 350);
    }
}
