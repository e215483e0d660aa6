//! A request's end: hand its outcome to the recorder, then move its connection on (the next
//! request on it, the schedule, think time, or a new connection). Timeouts end requests too,
//! from the loop's periodic check.

use std::io;
use std::time::{Duration, Instant};

use herd_stats::FailureKind;

use super::Worker;
use crate::conn::State;
use crate::recorder::Failed;
use crate::session::After;
use crate::Recorder;

/// How long a connection waits after a failed connect before trying again, in a closed loop
/// bounded by time (see `fail`).
pub(crate) const CONNECT_BACKOFF: Duration = Duration::from_millis(10);

/// Whether a connection whose response completed carries the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    Reuse,
    Reopen,
}

impl<R: Recorder> Worker<'_, R> {
    /// The response in progress on `i` completed at `now` (no request behind it).
    pub(super) fn on_complete(&mut self, i: usize, now: Instant) {
        match self.conns[i].after() {
            Some(After::Reuse) => self.complete(i, now, Next::Reuse),
            Some(After::Close) => self.complete(i, now, Next::Reopen),
            Some(After::AwaitClose) => self.conns[i].await_close(now),
            None => {}
        }
    }

    /// Pipelining: records the current response and moves to the next queued request,
    /// whose timing starts with the batch's.
    /// Returns false when the connection ended here (the server closes after this response,
    /// or the run stopped).
    pub(super) fn complete_pipelined(&mut self, i: usize, now: Instant) -> bool {
        // A request with others queued behind it is never its connection's last, so the
        // server's word alone decides.
        let reusable = self.conns[i].after() == Some(After::Reuse);
        self.record_completed(i, now);
        if self.base.stop {
            self.close(i);
            return false;
        }
        if !reusable {
            // The server ends the connection after this response: the requests queued
            // behind it will never be answered. Counted now, once each; any bytes that
            // follow are ignored with the connection.
            let template = Failed {
                kind: FailureKind::Closed,
                timing: self.conns[i].current().timing(now),
                bytes_read: 0,
                bytes_written: 0,
                os_error: None,
                reused: true,
                request: 0,
                conn: self.base.first_conn + i as u32,
            };
            self.fail_queued(i, &template);
            self.close(i);
            self.release(i);
            return false;
        }
        self.conns[i].finish(&self.base.spec.workload);
        true
    }

    /// Pipelining: records a failure like `template` for every request queued on `i`.
    fn fail_queued(&mut self, i: usize, template: &Failed) {
        while let Some(request) = self.conns[i].take_queued() {
            let f = Failed { request, bytes_read: 0, bytes_written: 0, ..*template };
            let answer = self.base.recorder.failed(&f);
            self.base.after_outcome(answer);
        }
    }

    /// Records a complete response and moves the connection on.
    pub(super) fn complete(&mut self, i: usize, now: Instant, next: Next) {
        if !self.record_completed(i, now) {
            return;
        }
        if next == Next::Reopen || self.base.stop {
            self.close(i);
            self.release(i);
            return;
        }
        // Kept: it has carried one more response (closing resets that count).
        self.conns[i].finish(&self.base.spec.workload);
        if self.base.pacer.is_some() {
            self.conns[i].idle(now);
            self.idle.push(i);
        } else if self.think.is_some() {
            self.think(i);
        } else if self.base.take_request() {
            self.start_on_open(i, now, None);
        } else {
            self.close(i);
        }
    }

    /// Hands the current response to the recorder; false if there is none.
    fn record_completed(&mut self, i: usize, end: Instant) -> bool {
        let conn = self.base.first_conn + i as u32;
        let c = &self.conns[i];
        let Some(done) = c.completed(end, self.want_server, conn, &self.base.spec.workload) else {
            return false;
        };
        let got_server = done.server.is_some();
        let answer = self.base.recorder.completed(&done);
        if got_server {
            self.want_server = false;
        }
        self.base.last_activity = end;
        self.base.after_outcome(answer);
        true
    }

    /// Records a failure (or, for `retry`, silently re-issues the request on a new
    /// connection) and reopens the connection.
    pub(super) fn fail(
        &mut self,
        i: usize,
        kind: FailureKind,
        err: Option<io::Error>,
        retry: bool,
    ) {
        let now = Instant::now();
        if retry {
            // Pipelined requests behind the retried one go back to the quota, untried.
            self.base.started = self.base.started.saturating_sub(self.conns[i].queued() as u64);
            self.close(i);
            self.retry.push(i);
            return;
        }
        let failed = self.conns[i].failed(kind, now, err.as_ref(), self.base.first_conn + i as u32);
        let answer = self.base.recorder.failed(&failed);
        self.base.last_activity = now;
        self.base.after_outcome(answer);
        // Pipelined requests written behind it fail with it: none will be answered.
        self.fail_queued(i, &failed);
        self.close(i);
        if kind == FailureKind::Connect {
            self.base.connect_failed(failed.os_error);
        }
        if kind == FailureKind::Connect && self.base.quota.is_none() && self.base.pacer.is_none() {
            // A duration-bound closed loop would otherwise reconnect as fast as the CPU allows
            // against a server that refuses, or with no local port left: each connection
            // waits a little before trying again (its failures are counted all the same).
            self.conns[i].think();
            self.base.timers.set(i, now + CONNECT_BACKOFF);
            return;
        }
        self.release(i);
    }

    /// Aborts requests that have run past their timeout.
    pub(super) fn expire(&mut self, now: Instant) {
        let timeout = self.base.spec.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if !c.is_busy() || !c.current().timed_out(now, timeout) {
                continue;
            }
            match c.state() {
                State::AwaitClose => {
                    // The response was complete; the server just never closed.
                    let end = c.completed_at().unwrap_or(now);
                    self.complete(i, end, Next::Reopen)
                }
                State::Connecting => {
                    let e = io::Error::from(io::ErrorKind::TimedOut);
                    self.fail(i, FailureKind::Connect, Some(e), false)
                }
                _ => self.fail(i, FailureKind::Timeout, None, false),
            }
            if self.base.stop {
                return;
            }
        }
    }
}
