//! The text `herd run` prints at the end: what was run, throughput, the latency table
//! (p50 p90 p99 p99.9 p99.99 max, microsecond resolution), statuses and failures. In an open
//! loop the table has both the latency from each request's intended start (corrected for
//! coordinated omission) and from its actual send, and the schedule's lag. The last line is
//! the client health verdict (health.rs), per step in a stepped run. Writes to the `Write` it
//! is given; chooses nothing.

use std::io::{self, Write};
use std::time::Duration;

use herd_engine::Think;
use herd_stats::LatencyHistogram;

use super::client_usage::ClientUsage;
use super::health::{self, Level};
use super::recorder::{ConnRate, RunRecorder};
use super::units::think_mean;
use crate::serve_generate::binary_units;

/// The quantiles every table shows.
pub(crate) const QUANTILES: [(&str, f64); 5] =
    [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999)];

/// What was asked of the whole run (every step alike).
#[derive(Debug, Clone, Default)]
pub(crate) struct RunSetup {
    pub(crate) url: String,
    /// The mix, when not the URL alone.
    pub(crate) description: Option<String>,
    pub(crate) group_names: Vec<String>,
    /// What a group is (`URL`, `class`).
    pub(crate) group_kind: &'static str,
    /// Per-connection receive cap, bits per second.
    pub(crate) bandwidth: Option<u64>,
    /// Conforming threshold, bits per second.
    pub(crate) conforming: Option<u64>,
    pub(crate) think: Option<Think>,
    pub(crate) per_connection: Option<(u32, u32)>,
    /// Pipelining depth, when more than 1.
    pub(crate) pipeline: Option<u32>,
}

/// Most groups the per-URL table lists; the rest are summed on one line.
const MAX_GROUP_ROWS: usize = 20;

/// What the summary says about a run (or step) besides the recorder's figures and the URL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunInfo {
    pub(crate) connections: u32,
    pub(crate) threads: u32,
    pub(crate) keep_alive: bool,
    pub(crate) rate: Option<f64>,
    pub(crate) elapsed: Duration,
    pub(crate) interrupted: bool,
    /// What the client itself used: the health verdict's own figures.
    pub(crate) client: ClientUsage,
}

pub(crate) fn write(
    out: &mut dyn Write,
    setup: &RunSetup,
    info: &RunInfo,
    r: &RunRecorder,
) -> io::Result<()> {
    let url = &setup.url;
    let shape = match info.rate {
        Some(rate) => format!("open loop at {rate} req/s"),
        None => "closed loop".to_owned(),
    };
    writeln!(
        out,
        "herd run {url}: {} connections, {} threads, {shape}, {}",
        info.connections,
        info.threads,
        if info.keep_alive { "keep-alive" } else { "a connection per request" }
    )?;
    if let Some(d) = &setup.description {
        writeln!(out, "  requests    {d}")?;
    }
    let mut shape = Vec::new();
    if let Some((lo, hi)) = setup.per_connection {
        shape.push(if lo == hi {
            format!("{lo} requests per connection")
        } else {
            format!("{lo} to {hi} requests per connection")
        });
    }
    if let Some(t) = setup.think {
        let kind = if matches!(t, Think::Exponential(_)) { "exponential, mean " } else { "" };
        shape.push(format!("think time {kind}{}", micros(us(think_mean(t)))));
    }
    if let Some(d) = setup.pipeline {
        shape.push(format!(
            "pipelined {d} deep (SYNTHETIC: browsers do not pipeline; latency counts from each \
             batch's start)"
        ));
    }
    if let Some(b) = setup.bandwidth {
        shape.push(format!("receive capped at {} per connection", bit_rate(b as f64)));
    }
    if !shape.is_empty() {
        writeln!(out, "  clients     {}", shape.join(", "))?;
    }
    let secs = info.elapsed.as_secs_f64();
    let failed = r.failures.total();
    writeln!(
        out,
        "  {} requests in {secs:.3} s{}: {} completed, {failed} failed; {:.1} req/s, {}/s read",
        r.completed + failed,
        if info.interrupted { " (interrupted)" } else { "" },
        r.completed,
        per_second(r.completed, info.elapsed),
        binary_units(per_second(r.bytes_read, info.elapsed) as u64),
    )?;
    if r.warmup_requests > 0 {
        writeln!(out, "  warm-up: {} requests, not counted above or below", r.warmup_requests)?;
    }
    write!(out, "\n  {:<22}", "latency")?;
    for (name, _) in QUANTILES {
        write!(out, "{name:>10}")?;
    }
    writeln!(out, "{:>10}", "max")?;
    if info.rate.is_some() {
        row(out, "total (from due time)", &r.latency)?;
        row(out, "total (from send)", &r.service)?;
    } else {
        row(out, "total", &r.latency)?;
    }
    row(out, "connect", &r.connect)?;
    row(out, "first byte", &r.first_byte)?;
    if info.rate.is_some() {
        row(out, "queued (due → sent)", &r.lag)?;
    }
    let statuses: Vec<String> = r.statuses.iter().map(|(s, n)| format!("{s}: {n}")).collect();
    writeln!(
        out,
        "\n  status      {}",
        if statuses.is_empty() { "none".into() } else { statuses.join(", ") }
    )?;
    let failures: Vec<String> = r
        .failures
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{}: {n}", k.name()))
        .collect();
    writeln!(
        out,
        "  failures    {}",
        if failures.is_empty() { "none".into() } else { failures.join(", ") }
    )?;
    if r.wrong_length > 0 {
        writeln!(
            out,
            "  WRONG       {} responses of status 200 had a body length other than the file's",
            r.wrong_length
        )?;
    }
    if let Some(rate) = info.rate {
        let achieved = per_second(r.completed + failed, info.elapsed);
        writeln!(out, "  schedule    asked {rate} req/s, achieved {achieved:.1} req/s")?;
    }
    if let Some(threshold) = setup.conforming {
        write_conforming(out, threshold, &r.conn_rates)?;
    }
    writeln!(out, "  client      {}", client_line(info, r))?;
    if setup.group_names.len() > 1 {
        write_groups(out, setup, r)?;
    }
    Ok(())
}

/// The health verdict in one line: `ok (…figures…)`, or the level and its sentence.
fn client_line(info: &RunInfo, r: &RunRecorder) -> String {
    let inputs = health::inputs(info, r);
    let verdict = health::judge(&inputs);
    if let Some(cause) = verdict.cause.filter(|_| verdict.level != Level::Ok) {
        return format!("{}: {cause}", verdict.level.name());
    }
    let workers = inputs.workers;
    let mut figures = vec![format!(
        "{workers} worker thread{} {} busy",
        if workers == 1 { "" } else { "s" },
        health::percent(inputs.busy)
    )];
    if let Some(w) = inputs.run_queue_wait {
        figures.push(format!("{} waiting for a CPU", health::percent(w)));
    }
    if let (Some(_), Some(p99)) = (info.rate, inputs.send_lag_p99_us) {
        figures.push(format!("send lag p99 {}", micros(p99)));
    }
    format!("{} ({})", verdict.level.name(), figures.join(", "))
}

/// Each connection's receive rate, and how many kept at or above the threshold.
fn write_conforming(out: &mut dyn Write, threshold: u64, rates: &[ConnRate]) -> io::Result<()> {
    let mut bps: Vec<f64> = rates.iter().filter_map(ConnRate::bits_per_second).collect();
    bps.sort_by(f64::total_cmp);
    let conforming = conforming_count(threshold, rates);
    let (Some(min), Some(max)) = (bps.first(), bps.last()) else {
        return writeln!(out, "  conforming  no connection completed a request");
    };
    writeln!(
        out,
        "  receive     per connection: min {}, median {}, max {}",
        bit_rate(*min),
        bit_rate(bps[bps.len() / 2]),
        bit_rate(*max)
    )?;
    writeln!(
        out,
        "  conforming  {conforming} of {} connections kept ≥ {}",
        bps.len(),
        bit_rate(threshold as f64)
    )
}

/// Connections (that completed anything) whose receive rate stayed at or above `threshold`.
pub(crate) fn conforming_count(threshold: u64, rates: &[ConnRate]) -> usize {
    rates.iter().filter_map(ConnRate::bits_per_second).filter(|&b| b >= threshold as f64).count()
}

/// Requests, failures and mean latency per URL (or SPECweb99 class).
fn write_groups(out: &mut dyn Write, setup: &RunSetup, r: &RunRecorder) -> io::Result<()> {
    let total: u64 = r.groups.iter().map(|g| g.completed + g.failed).sum();
    writeln!(
        out,
        "\n  {:<40} {:>10} {:>7} {:>8} {:>12}",
        format!("requests by {}", setup.group_kind),
        "completed",
        "share",
        "failed",
        "mean"
    )?;
    let rows = r.groups.iter().zip(&setup.group_names);
    for (g, name) in rows.clone().take(MAX_GROUP_ROWS) {
        let n = g.completed + g.failed;
        let share = if total > 0 { 100.0 * n as f64 / total as f64 } else { 0.0 };
        let mean = g.latency_us.checked_div(g.completed).map_or("-".into(), micros);
        let name = if name.chars().count() > 40 {
            format!("{}…", name.chars().take(39).collect::<String>())
        } else {
            name.clone()
        };
        writeln!(out, "  {name:<40} {:>10} {share:>6.1}% {:>8} {mean:>12}", g.completed, g.failed)?;
    }
    let rest: Vec<_> = rows.skip(MAX_GROUP_ROWS).map(|(g, _)| *g).collect();
    if !rest.is_empty() {
        let completed: u64 = rest.iter().map(|g| g.completed).sum();
        let failed: u64 = rest.iter().map(|g| g.failed).sum();
        let share =
            if total > 0 { 100.0 * (completed + failed) as f64 / total as f64 } else { 0.0 };
        let label = format!("({} more URLs)", rest.len());
        writeln!(out, "  {label:<40} {completed:>10} {share:>6.1}% {failed:>8}")?;
    }
    Ok(())
}

/// `400.0 kbit/s`, `1.50 Mbit/s`.
pub(crate) fn bit_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.2} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.1} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// One line per step of a stepped run, printed as the step ends.
pub(crate) fn write_step(
    out: &mut dyn Write,
    step: usize,
    setup: &RunSetup,
    info: &RunInfo,
    r: &RunRecorder,
) -> io::Result<()> {
    let url = &setup.url;
    if step == 1 {
        writeln!(
            out,
            "herd run {url}: steps of {}s, {}",
            info.elapsed.as_secs_f64().round(),
            if info.keep_alive { "keep-alive" } else { "a connection per request" }
        )?;
        writeln!(
            out,
            "  {:>4} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}  client",
            "step", "conns", "rate", "req/s", "p50", "p99", "p99.9", "max", "failed"
        )?;
    }
    let rps = per_second(r.completed, info.elapsed);
    let q = |h: &LatencyHistogram, q: f64| {
        if h.is_empty() {
            "-".to_owned()
        } else {
            micros(h.quantile_micros(q))
        }
    };
    let verdict = health::judge(&health::inputs(info, r));
    writeln!(
        out,
        "  {step:>4} {:>8} {:>10} {rps:>10.1} {:>10} {:>10} {:>10} {:>10} {:>8}  {}{}",
        info.connections,
        info.rate.map_or("closed".to_owned(), |r| format!("{r}/s")),
        q(&r.latency, 0.5),
        q(&r.latency, 0.99),
        q(&r.latency, 0.999),
        if r.latency.is_empty() { "-".to_owned() } else { micros(r.latency.max_micros()) },
        r.failures.total(),
        verdict.level.name(),
        if info.interrupted { " (interrupted)" } else { "" }
    )?;
    // The verdict is per step; its reason goes under the step's row.
    match verdict.cause.filter(|_| verdict.level != Level::Ok) {
        Some(cause) => writeln!(out, "{:>8}{cause}", ""),
        None => Ok(()),
    }
}

fn row(out: &mut dyn Write, name: &str, h: &LatencyHistogram) -> io::Result<()> {
    write!(out, "  {name:<22}")?;
    if h.is_empty() {
        return writeln!(out, "{:>10}", "-");
    }
    for (_, q) in QUANTILES {
        write!(out, "{:>10}", micros(h.quantile_micros(q)))?;
    }
    writeln!(out, "{:>10}", micros(h.max_micros()))
}

/// `55µs`, `1.234ms`, `2.500s`: microsecond resolution, short.
pub(crate) fn micros(us: u64) -> String {
    if us < 1000 {
        format!("{us}µs")
    } else if us < 1_000_000 {
        format!("{:.3}ms", us as f64 / 1e3)
    } else {
        format!("{:.3}s", us as f64 / 1e6)
    }
}

/// `n` per second of `elapsed`; 0 for an empty interval.
pub(crate) fn per_second(n: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_units() {
        assert_eq!(micros(55), "55µs");
        assert_eq!(micros(1234), "1.234ms");
        assert_eq!(micros(2_500_000), "2.500s");
        assert_eq!(bit_rate(400_000.0), "400.0 kbit/s");
        assert_eq!(bit_rate(1_500_000.0), "1.50 Mbit/s");
    }
}
