//! `herd run --json FILE`: the summary as JSON, format `herd.run.v1` (docs/run-json.md).
//! Latencies are integers in microseconds. Fields are added, never renamed, within v1.
//! Each non-empty histogram carries itself whole (`hdr`, base64 of the V2-compressed
//! encoding that `--hlog` writes), so that a reader can compute any percentile, or merge runs.

use std::io;

use serde_json::{json, Map, Value};

use herd_stats::LatencyHistogram;

use super::health;
use super::hlog_encoding;
use super::recorder::{ConnRate, RunRecorder};
use super::summary::{conforming_count, per_second, RunInfo, RunSetup, QUANTILES};
use super::units::think_mean;

pub(crate) const FORMAT: &str = "herd.run.v1";

/// The run (or one step) as `herd.run.v1`. Fails only if a histogram cannot be encoded (a
/// count beyond what HdrHistogram's V2 encoding holds).
pub(crate) fn to_json(setup: &RunSetup, info: &RunInfo, r: &RunRecorder) -> io::Result<Value> {
    let url = &setup.url;
    let secs = info.elapsed.as_secs_f64();
    let failed = r.failures.total();
    let rate = |n: u64| per_second(n, info.elapsed);
    let statuses: Map<String, Value> =
        r.statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect();
    let failures: Map<String, Value> =
        r.failures.iter().map(|(k, n)| (k.name().to_owned(), json!(n))).collect();
    Ok(json!({
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
            "total": hist(&r.latency)?,
            "total_from_send": hist(&r.service)?,
            "connect": hist(&r.connect)?,
            "first_byte": hist(&r.first_byte)?,
            "queued": hist(&r.lag)?,
        },
        "statuses": statuses,
        "failures": failures,
        "wrong_length": r.wrong_length,
        "clients": {
            "requests_per_connection": setup.per_connection.map(|(lo, hi)| json!({"min": lo, "max": hi})),
            "think": setup.think.map(|t| json!({
                "kind": if matches!(t, herd_engine::Think::Exponential(_)) { "exponential" } else { "fixed" },
                "mean_us": u64::try_from(think_mean(t).as_micros()).unwrap_or(u64::MAX),
            })),
            "bandwidth_bps": setup.bandwidth,
            "pipeline": setup.pipeline,
        },
        "conforming": setup.conforming.map(|t| conforming(t, &r.conn_rates)),
        "groups": groups(setup, r),
        "client": client(info, r),
    }))
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

/// The receive rate of each connection, and how many conformed.
fn conforming(threshold: u64, rates: &[ConnRate]) -> Value {
    let bps: Vec<f64> = rates.iter().filter_map(ConnRate::bits_per_second).collect();
    json!({
        "threshold_bps": threshold,
        "connections": bps.len(),
        "conforming": conforming_count(threshold, rates),
        "min_bps": bps.iter().copied().reduce(f64::min),
        "max_bps": bps.iter().copied().reduce(f64::max),
    })
}

/// Per URL (or SPECweb99 class), when the workload has more than one.
fn groups(setup: &RunSetup, r: &RunRecorder) -> Value {
    if setup.group_names.len() < 2 {
        return Value::Null;
    }
    let rows: Vec<Value> = setup
        .group_names
        .iter()
        .zip(&r.groups)
        .map(|(name, g)| {
            json!({
                "name": name,
                "completed": g.completed,
                "failed": g.failed,
                "body_bytes": g.body_bytes,
                "mean_us": g.latency_us.checked_div(g.completed),
            })
        })
        .collect();
    json!({ "source": setup.description, "rows": rows })
}

fn hist(h: &LatencyHistogram) -> io::Result<Value> {
    let mut m = Map::new();
    m.insert("count".into(), json!(h.len()));
    if h.is_empty() {
        return Ok(Value::Object(m));
    }
    m.insert("min".into(), json!(h.min_micros()));
    m.insert("mean".into(), json!(h.mean_micros()));
    for (name, q) in QUANTILES {
        m.insert(name.into(), json!(h.quantile_micros(q)));
    }
    m.insert("max".into(), json!(h.max_micros()));
    m.insert("hdr".into(), json!(hlog_encoding::to_base64(h.histogram())?));
    Ok(Value::Object(m))
}
