//! The text `herd run` prints at the end: what was run, throughput, the latency table
//! (p50 p90 p99 p99.9 p99.99 max, microsecond resolution), statuses and failures. In an open
//! loop the table has both the latency from each request's intended start (corrected for
//! coordinated omission) and from its actual send, and the schedule's lag. The last line is
//! the client health verdict (health.rs), per step in a stepped run. Written from the run's
//! [`StepReport`], to the `Write` it is given; chooses nothing.

use std::io::{self, Write};
use std::time::Duration;

use herd_engine::Think;
use herd_stats::ClientVerdict;

use crate::execute::RunSetup;
use crate::health;
use crate::report::{Conforming, GroupRow, LatencySummary, StepReport, QUANTILES};

/// Most groups the per-URL table lists; the rest are summed on one line.
const MAX_GROUP_ROWS: usize = 20;

/// The summary of a run that is not stepped.
pub fn write(out: &mut dyn Write, setup: &RunSetup, r: &StepReport) -> io::Result<()> {
    let url = &setup.url;
    let shape = match r.rate() {
        Some(rate) => format!("open loop at {rate} req/s"),
        None => "closed loop".to_owned(),
    };
    writeln!(
        out,
        "herd run {url}: {} connections, {} threads, {shape}, {}",
        r.connections,
        r.threads,
        if r.keep_alive { "keep-alive" } else { "a connection per request" }
    )?;
    if let Some(p) = r.protocol.filter(|&p| p != herd_stats::Protocol::H1) {
        match r.streams {
            Some(m) => writeln!(
                out,
                "  protocol    {}, {m} stream{} per connection",
                p.describe(),
                if m == 1 { "" } else { "s" }
            )?,
            None => writeln!(out, "  protocol    {}", p.describe())?,
        }
    }
    if let Some(q) = &r.quic {
        // A round-trip time only when one was measured: before the server's first ACK,
        // QUIC's figure is a guess (quinn's 333 ms), not the network's.
        let rtt = match (q.min_rtt_us, q.smoothed_rtt_us) {
            (Some(min), Some(smoothed)) => {
                format!("rtt min {} smoothed {}", micros(min), micros(smoothed))
            }
            _ => "rtt not measured".to_owned(),
        };
        writeln!(
            out,
            "  quic        {rtt}, {} of {} packets lost, {} datagrams in ({:.1} per receive call{})",
            q.packets_lost,
            q.packets_sent,
            q.datagrams_received,
            q.datagrams_per_recv,
            match (q.gso, q.gro) {
                (true, true) => ", GSO and GRO",
                (true, false) => ", GSO",
                (false, true) => ", GRO",
                (false, false) => "",
            }
        )?;
    }
    write_io(out, r)?;
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
        let (kind, mean) = match t {
            Think::Exponential(d) => ("exponential, mean ", d),
            Think::Fixed(d) => ("", d),
        };
        shape.push(format!("think time {kind}{}", micros(us(mean))));
    }
    if let Some(d) = setup.pipeline {
        shape.push(format!(
            "pipelined {d} deep (SYNTHETIC: browsers do not pipeline; latency counts from each \
             batch's start)"
        ));
    }
    if let Some(b) = setup.bandwidth {
        shape.push(format!(
            "receive capped at {} per connection",
            bit_rate(b.bits_per_second() as f64)
        ));
    }
    if !shape.is_empty() {
        writeln!(out, "  clients     {}", shape.join(", "))?;
    }
    let q = &r.requests;
    let bytes_per_second = if r.elapsed_s > 0.0 { r.bytes.read as f64 / r.elapsed_s } else { 0.0 };
    writeln!(
        out,
        "  {} requests in {:.3} s{}: {} completed, {} failed; {:.1} req/s, {}/s read",
        q.completed + q.failed,
        r.elapsed_s,
        if r.interrupted { " (interrupted)" } else { "" },
        q.completed,
        q.failed,
        q.per_second,
        binary_units(bytes_per_second as u64),
    )?;
    if r.warmup_requests > 0 {
        writeln!(out, "  warm-up: {} requests, not counted above or below", r.warmup_requests)?;
    }
    write!(out, "\n  {:<22}", "latency")?;
    for (name, _) in QUANTILES {
        write!(out, "{name:>10}")?;
    }
    writeln!(out, "{:>10}", "max")?;
    let l = &r.latency_us;
    if r.rate().is_some() {
        row(out, "total (from due time)", &l.total)?;
        row(out, "total (from send)", &l.total_from_send)?;
    } else {
        row(out, "total", &l.total)?;
    }
    row(out, "connect", &l.connect)?;
    row(out, "first byte", &l.first_byte)?;
    if r.rate().is_some() {
        row(out, "queued (due → sent)", &l.queued)?;
    }
    let statuses: Vec<String> = r.statuses.iter().map(|(s, n)| format!("{s}: {n}")).collect();
    writeln!(
        out,
        "\n  status      {}",
        if statuses.is_empty() { "none".into() } else { statuses.join(", ") }
    )?;
    let failures: Vec<String> = r.failures.iter().map(|(k, n)| format!("{k}: {n}")).collect();
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
    if let Some(rate) = r.rate() {
        writeln!(
            out,
            "  schedule    asked {rate} req/s, achieved {:.1} req/s",
            q.attempted_per_second
        )?;
    }
    if let Some(c) = &r.conforming {
        write_conforming(out, c)?;
    }
    writeln!(out, "  client      {}", client_line(r))?;
    if let Some(groups) = &r.groups {
        write_groups(out, setup.group_kind, &groups.rows)?;
    }
    Ok(())
}

/// The health verdict in one line: `ok (…figures…)`, or the level and its sentence.
fn client_line(r: &StepReport) -> String {
    let c = &r.client;
    let Some(verdict) = c.verdict else {
        return format!("no verdict: {}", c.reason.as_deref().unwrap_or("nothing to judge"));
    };
    if let Some(reason) = c.reason.as_deref().filter(|_| verdict != ClientVerdict::Ok) {
        return format!("{verdict}: {reason}");
    }
    let workers = c.worker_threads;
    let mut figures = vec![format!(
        "{workers} worker thread{} {} busy",
        if workers == 1 { "" } else { "s" },
        health::percent(c.cpu_busy_share)
    )];
    if let Some(w) = c.run_queue_wait_share {
        figures.push(format!("{} waiting for a CPU", health::percent(w)));
    }
    if let (Some(_), Some(p99)) = (r.rate(), c.send_lag_us.p99) {
        figures.push(format!("send lag p99 {}", micros(p99)));
    }
    // The server's CPU where herd could read it: the other half of "who set the pace".
    if let Some(cpu) = c.server_cpu_s.filter(|_| r.elapsed_s > 0.0) {
        figures.push(format!("server {} of a CPU", health::percent(cpu / r.elapsed_s)));
    }
    format!("{verdict} ({})", figures.join(", "))
}

/// Each connection's receive rate, and how many kept at or above the threshold.
fn write_conforming(out: &mut dyn Write, c: &Conforming) -> io::Result<()> {
    let (Some(min), Some(max)) = (c.min_bps, c.max_bps) else {
        return writeln!(out, "  conforming  no connection completed a request");
    };
    let median = c.median_bps.map_or("-".to_owned(), bit_rate);
    writeln!(
        out,
        "  receive     per connection: min {}, median {median}, max {}",
        bit_rate(min),
        bit_rate(max)
    )?;
    writeln!(
        out,
        "  conforming  {} of {} connections kept ≥ {}",
        c.conforming,
        c.connections,
        bit_rate(c.threshold_bps as f64)
    )
}

/// Requests, failures and mean latency per URL (or SPECweb99 class).
fn write_groups(out: &mut dyn Write, kind: &str, rows: &[GroupRow]) -> io::Result<()> {
    let total: u64 = rows.iter().map(|g| g.completed + g.failed).sum();
    writeln!(
        out,
        "\n  {:<40} {:>10} {:>7} {:>8} {:>12}",
        format!("requests by {kind}"),
        "completed",
        "share",
        "failed",
        "mean"
    )?;
    for g in rows.iter().take(MAX_GROUP_ROWS) {
        let n = g.completed + g.failed;
        let share = if total > 0 { 100.0 * n as f64 / total as f64 } else { 0.0 };
        let mean = g.mean_us.map_or("-".into(), micros);
        let name = if g.name.chars().count() > 40 {
            format!("{}…", g.name.chars().take(39).collect::<String>())
        } else {
            g.name.clone()
        };
        writeln!(out, "  {name:<40} {:>10} {share:>6.1}% {:>8} {mean:>12}", g.completed, g.failed)?;
    }
    let rest = rows.get(MAX_GROUP_ROWS..).unwrap_or_default();
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
pub fn bit_rate(bps: f64) -> String {
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

/// `1.2 MiB`: bytes in binary units, one decimal.
pub fn binary_units(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Which event-loop backend measured, in one line (none for a document that does not say).
fn write_io(out: &mut dyn Write, r: &StepReport) -> io::Result<()> {
    match &r.io {
        Some(io) => writeln!(out, "  I/O         {io}"),
        None => Ok(()),
    }
}

/// One line per step of a stepped run, printed as the step ends (`step` from 1).
pub fn write_step(
    out: &mut dyn Write,
    step: usize,
    setup: &RunSetup,
    r: &StepReport,
) -> io::Result<()> {
    let url = &setup.url;
    if step == 1 {
        // The planned length: the first step's measured one is shorter when it ended early,
        // and rounding it to seconds said `steps of 0s` of a 300 ms step.
        let length = match setup.step {
            Some(step) => step.to_string(),
            None => format!("{}s", r.elapsed_s.round()),
        };
        writeln!(
            out,
            "herd run {url}: steps of {length}, {}",
            if r.keep_alive { "keep-alive" } else { "a connection per request" }
        )?;
        write_io(out, r)?;
        writeln!(
            out,
            "  {:>4} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}  client",
            "step", "conns", "rate", "req/s", "p50", "p99", "p99.9", "max", "failed"
        )?;
    }
    let total = &r.latency_us.total;
    let q = |q: f64| total.quantile(q).map_or("-".to_owned(), micros);
    let verdict = r.client.verdict.map_or("no verdict", ClientVerdict::as_str);
    writeln!(
        out,
        "  {step:>4} {:>8} {:>10} {:>10.1} {:>10} {:>10} {:>10} {:>10} {:>8}  {verdict}{}",
        r.connections,
        r.rate().map_or("closed".to_owned(), |r| format!("{r}/s")),
        r.requests.per_second,
        q(0.5),
        q(0.99),
        q(0.999),
        total.max().map_or("-".to_owned(), micros),
        r.requests.failed,
        if r.interrupted { " (interrupted)" } else { "" }
    )?;
    // The verdict is per step; its reason goes under the step's row.
    match r.client.reason.as_deref().filter(|_| r.client.verdict != Some(ClientVerdict::Ok)) {
        Some(reason) => writeln!(out, "{:>8}{reason}", ""),
        None => Ok(()),
    }
}

fn row(out: &mut dyn Write, name: &str, h: &LatencySummary) -> io::Result<()> {
    write!(out, "  {name:<22}")?;
    let Some(f) = h.figures() else {
        return writeln!(out, "{:>10}", "-");
    };
    for us in f.quantiles {
        write!(out, "{:>10}", micros(us))?;
    }
    writeln!(out, "{:>10}", micros(f.max))
}

/// `55µs`, `1.234ms`, `2.500s`: microsecond resolution, short.
pub fn micros(us: u64) -> String {
    if us < 1000 {
        format!("{us}µs")
    } else if us < 1_000_000 {
        format!("{:.3}ms", us as f64 / 1e3)
    } else {
        format!("{:.3}s", us as f64 / 1e6)
    }
}

/// `n` per second of `elapsed`; 0 for an empty interval.
pub fn per_second(n: u64, elapsed: Duration) -> f64 {
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

    use std::time::Duration;

    use crate::report::QuicReport;
    use crate::step_result::tests::report_of;
    use herd_record::RunRecorder;

    fn quic(rtt: Option<(u64, u64)>) -> QuicReport {
        QuicReport {
            min_rtt_us: rtt.map(|r| r.0),
            smoothed_rtt_us: rtt.map(|r| r.1),
            packets_sent: 15,
            packets_lost: 0,
            datagrams_sent: 15,
            datagrams_received: 0,
            datagrams_per_recv: 0.0,
            gso: false,
            gro: false,
        }
    }

    fn summary_of(r: &StepReport) -> String {
        let mut out = Vec::new();
        write(&mut out, &RunSetup::default(), r).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Issue 31: against a port without a QUIC listener the summary said `rtt min 333.000ms`,
    /// quinn's initial guess, of a run that never heard the server.
    #[test]
    fn a_round_trip_time_is_printed_only_when_measured() {
        let mut r = report_of(&RunRecorder::new(None, Default::default()), Duration::from_secs(1));
        r.quic = Some(quic(None));
        let text = summary_of(&r);
        assert!(text.contains("  quic        rtt not measured, 0 of 15 packets lost"), "{text}");
        assert!(!text.contains("rtt min"), "{text}");
        r.quic = Some(quic(Some((55, 1234))));
        let text = summary_of(&r);
        assert!(text.contains("  quic        rtt min 55µs smoothed 1.234ms, 0 of 15"), "{text}");
    }

    /// The header of a stepped run gives the planned step length, not the first step's
    /// measured one rounded to seconds (`steps of 0s` of 300 ms steps, or of a step that
    /// ended at once).
    #[test]
    fn a_stepped_run_says_its_planned_step_length() {
        let r = report_of(&RunRecorder::new(None, Default::default()), Duration::from_millis(3));
        let setup = RunSetup { step: Some("300ms".parse().unwrap()), ..RunSetup::default() };
        let mut out = Vec::new();
        write_step(&mut out, 1, &setup, &r).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("herd run : steps of 300ms, keep-alive\n"), "{text}");
    }

    /// One line says which backend measured and, when `auto` fell back, why; a document
    /// from before `--io` says nothing of it.
    #[test]
    fn the_summary_says_which_backend_measured_in_one_line() {
        use crate::report::{IoAsked, IoBackend, IoReport};
        let mut r = report_of(&RunRecorder::new(None, Default::default()), Duration::from_secs(1));
        assert!(!summary_of(&r).contains("I/O"));
        r.io = Some(IoReport {
            asked: IoAsked::Auto,
            backend: IoBackend::Epoll,
            fallback: Some("io_uring not yet for HTTP/2".into()),
        });
        let text = summary_of(&r);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("I/O")).collect();
        assert_eq!(lines, ["  I/O         epoll (auto: io_uring not yet for HTTP/2)"], "{text}");
        r.io = Some(IoReport { asked: IoAsked::Epoll, fallback: None, ..r.io.unwrap() });
        assert!(summary_of(&r).contains("\n  I/O         epoll\n"));
        let mut out = Vec::new();
        write_step(&mut out, 1, &RunSetup::default(), &r).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().nth(1), Some("  I/O         epoll"), "{text}");
        let mut out = Vec::new();
        write_step(&mut out, 2, &RunSetup::default(), &r).unwrap();
        assert!(!String::from_utf8(out).unwrap().contains("I/O"), "once, at the first step");
    }
}
