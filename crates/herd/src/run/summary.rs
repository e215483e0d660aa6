//! The text `herd run` prints at the end: what was run, throughput, the latency table
//! (p50 p90 p99 p99.9 p99.99 max, microsecond resolution), statuses and failures. In an open
//! loop the table has both the latency from each request's intended start (corrected for
//! coordinated omission) and from its actual send, and the schedule's lag. The last line is
//! the client health verdict (health.rs), per step in a stepped run. Writes to the `Write` it
//! is given; chooses nothing.

use std::io::{self, Write};
use std::time::Duration;

use herd_stats::LatencyHistogram;

use super::client_usage::ClientUsage;
use super::health::{self, Level};
use super::recorder::RunRecorder;

/// The quantiles every table shows.
pub(crate) const QUANTILES: [(&str, f64); 5] =
    [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999)];

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
    url: &str,
    info: &RunInfo,
    r: &RunRecorder,
) -> io::Result<()> {
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
    let secs = info.elapsed.as_secs_f64();
    let failed = r.failures.total();
    writeln!(
        out,
        "  {} requests in {secs:.3} s{}: {} completed, {failed} failed; {:.1} req/s, {}/s read",
        r.completed + failed,
        if info.interrupted { " (interrupted)" } else { "" },
        r.completed,
        per_second(r.completed, info.elapsed),
        bytes(per_second(r.bytes_read, info.elapsed)),
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
    if let Some(rate) = info.rate {
        let achieved = per_second(r.completed + failed, info.elapsed);
        writeln!(out, "  schedule    asked {rate} req/s, achieved {achieved:.1} req/s")?;
    }
    writeln!(out, "  client      {}", client_line(info, r))
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

/// One line per step of a stepped run, printed as the step ends.
pub(crate) fn write_step(
    out: &mut dyn Write,
    step: usize,
    url: &str,
    info: &RunInfo,
    r: &RunRecorder,
) -> io::Result<()> {
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

fn bytes(b: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_units() {
        assert_eq!(micros(55), "55µs");
        assert_eq!(micros(1234), "1.234ms");
        assert_eq!(micros(2_500_000), "2.500s");
        assert_eq!(bytes(1536.0), "1.5 KiB");
    }
}
