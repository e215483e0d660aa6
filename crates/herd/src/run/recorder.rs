//! What `herd run` keeps of every request: HdrHistograms of latency (from the intended start,
//! and from the actual send), connect time, time to first byte and schedule lag; statuses;
//! failures by kind; bytes. One per worker, merged after the run; requests that end before the
//! warm-up is over are counted apart and kept out of every figure.

use std::time::Instant;

use herd_engine::{Completed, Failed, Recorder, Verdict};
use herd_stats::{Failures, LatencyHistogram, StatusCounts};

use super::client_errors::ClientErrors;

#[derive(Debug, Clone)]
pub(crate) struct RunRecorder {
    /// Requests ending before this are warm-up.
    measure_from: Option<Instant>,
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
    pub(crate) first_end: Option<Instant>,
    pub(crate) last_end: Option<Instant>,
}

impl RunRecorder {
    pub(crate) fn new(measure_from: Option<Instant>) -> RunRecorder {
        RunRecorder {
            measure_from,
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
            first_end: None,
            last_end: None,
        }
    }

    fn warming_up(&mut self, end: Instant) -> bool {
        if self.measure_from.is_some_and(|t| end < t) {
            self.warmup_requests += 1;
            return true;
        }
        self.first_end = Some(self.first_end.map_or(end, |t| t.min(end)));
        self.last_end = Some(self.last_end.map_or(end, |t| t.max(end)));
        false
    }

    pub(crate) fn merge(&mut self, o: &RunRecorder) {
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
        self.first_end = match (self.first_end, o.first_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_end = self.last_end.max(o.last_end);
    }
}

impl Recorder for RunRecorder {
    fn completed(&mut self, c: &Completed<'_>) -> Verdict {
        let t = &c.timing;
        if self.warming_up(t.end) {
            return Verdict::Continue;
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
        Verdict::Continue
    }

    fn failed(&mut self, f: &Failed) -> Verdict {
        if !self.warming_up(f.timing.end) {
            self.failures.add(f.kind);
            self.client_errors.add(f.os_error);
            self.bytes_read += f.bytes_read;
        }
        Verdict::Continue
    }
}
