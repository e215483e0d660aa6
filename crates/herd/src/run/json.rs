//! `herd run --json FILE`: the summary as JSON, format `herd.run.v1` (docs/run-json.md).
//! Latencies are integers in microseconds. Fields are added, never renamed, within v1.

use serde_json::{json, Map, Value};

use herd_stats::LatencyHistogram;

use super::health;
use super::recorder::RunRecorder;
use super::summary::{per_second, RunInfo, QUANTILES};

pub(crate) const FORMAT: &str = "herd.run.v1";

pub(crate) fn to_json(url: &str, info: &RunInfo, r: &RunRecorder) -> Value {
    let secs = info.elapsed.as_secs_f64();
    let failed = r.failures.total();
    let rate = |n: u64| per_second(n, info.elapsed);
    let statuses: Map<String, Value> =
        r.statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect();
    let failures: Map<String, Value> =
        r.failures.iter().map(|(k, n)| (k.name().to_owned(), json!(n))).collect();
    json!({
        "format": FORMAT,
        "url": url,
        "connections": info.connections,
        "threads": info.threads,
        "keep_alive": info.keep_alive,
        "schedule": match info.rate {
            Some(r) => json!({"kind": "rate", "requests_per_second": r}),
            None => json!({"kind": "closed"}),
        },
        "elapsed_s": secs,
        "interrupted": info.interrupted,
        "warmup_requests": r.warmup_requests,
        "requests": {
            "completed": r.completed,
            "failed": failed,
            "per_second": rate(r.completed),
            "attempted_per_second": rate(r.completed + failed),
        },
        "bytes": {"read": r.bytes_read, "body": r.body_bytes},
        "latency_us": {
            "total": hist(&r.latency),
            "total_from_send": hist(&r.service),
            "connect": hist(&r.connect),
            "first_byte": hist(&r.first_byte),
            "queued": hist(&r.lag),
        },
        "statuses": statuses,
        "failures": failures,
        "client": client(info, r),
    })
}

/// The client health verdict and the figures it was judged on (docs/client-health.md).
fn client(info: &RunInfo, r: &RunRecorder) -> Value {
    let i = health::inputs(info, r);
    let verdict = health::judge(&i);
    let usage = &info.client;
    json!({
        "verdict": verdict.level.name(),
        "reason": verdict.cause.map(|c| c.to_string()),
        "worker_threads": i.workers,
        "cpu_busy_share": i.busy,
        "run_queue_wait_share": i.run_queue_wait,
        "throttled_share": i.throttled,
        "throttled_periods": usage.throttled_periods.map(|(t, _)| t),
        "quota_periods": usage.throttled_periods.map(|(_, p)| p),
        "send_lag_us": {"p50": i.send_lag_p50_us, "p99": i.send_lag_p99_us},
        "port_errors": i.errors.ports(),
        "fd_errors": i.errors.fds(),
        "process_cpu_s": usage.process.map(|p| json!({
            "user": p.user.as_secs_f64(),
            "system": p.system.as_secs_f64(),
        })),
        "involuntary_switches": usage.process.map(|p| p.involuntary_switches),
    })
}

fn hist(h: &LatencyHistogram) -> Value {
    let mut m = Map::new();
    m.insert("count".into(), json!(h.len()));
    if h.is_empty() {
        return Value::Object(m);
    }
    m.insert("min".into(), json!(h.min_micros()));
    m.insert("mean".into(), json!(h.mean_micros()));
    for (name, q) in QUANTILES {
        m.insert(name.into(), json!(h.quantile_micros(q)));
    }
    m.insert("max".into(), json!(h.max_micros()));
    Value::Object(m)
}
