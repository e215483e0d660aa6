//! The trace context a run sent (`--trace-context`): the trace id every request's
//! `traceparent` carried, to join a server's traces and logs to the run.

use serde::{Deserialize, Serialize};

/// `trace` in herd.run.v1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceReport {
    /// 32 lowercase hex digits.
    pub trace_id: String,
    /// The sampled flag every request carried.
    pub sampled: bool,
}

impl From<&herd_engine::TraceContext> for TraceReport {
    fn from(t: &herd_engine::TraceContext) -> TraceReport {
        TraceReport { trace_id: t.trace_id(), sampled: t.sampled() }
    }
}
