//! The terminal table of an experiment: a header, one row per cell (per step for stepped
//! loads), then what the rows cannot show (failed requests by kind, failed runs by kind with
//! their reasons, client verdicts other than ok, what a network path capped) and a legend.
//!
//! Every number has a fixed format, so the same stored experiment always renders to the
//! same bytes; the figures themselves come from `figures.rs`.

use herd_stats::repetitions as stats;
use herd_stats::{ClientVerdict, RateHold};
use herd_store::{Measure, StoredExperiment, StoredRepetition};

use crate::doc::{Align, Block, Doc, Entry, Figure, Role, Table};
use crate::figures::{self, CoarseClock, Row};
use crate::matrix::{self, Baseline};

/// The whole report of an experiment as a document: its header, the matrix (with
/// percentages of `baseline`, when there is one), every row's figures, what the rows cannot
/// show, and the legend.
pub(crate) fn doc(
    exp: &StoredExperiment,
    baseline: Option<&Baseline>,
    measure: Measure,
    noise: Option<&crate::noise_floor::NoiseFloor>,
) -> Doc {
    let mut doc = Doc::default();
    doc.push(Block::Fields(header(exp)));

    let (rows, stepped) = figures::rows(exp);
    if let Some(baseline) = baseline {
        for block in matrix::blocks(exp, &rows, baseline, measure) {
            doc.push(block);
        }
        for block in crate::efficiency::blocks(exp, baseline, measure) {
            doc.push(block);
        }
    }
    let mut table = Table::with_role(Role::Rows);
    for axis in &exp.experiment.axes {
        table.column(axis, Align::Left);
    }
    if stepped {
        table.column("step", Align::Left);
    }
    // The rows lead with requests/s, or with Mbit/s when that is the figure asked for (a
    // NetBench experiment's: its steps move bytes, they count no requests).
    let lead = if measure == Measure::MbitPerSecond { measure } else { Measure::RequestsPerSecond };
    table.column("reps", Align::Right);
    table.column(if lead == Measure::MbitPerSecond { "Mbit/s" } else { "req/s" }, Align::Right);
    table.continuation("±95%", Align::Right);
    table.column("spread", Align::Right);
    table.column("p50 ms", Align::Right);
    table.column("p99 ms", Align::Right);
    table.column("failed", Align::Right);
    table.column("non-2xx", Align::Right);
    table.column("srv cpu µs/req", Align::Right);
    table.column("client", Align::Left);
    for row in &rows {
        table.row(entries(exp, row, stepped, lead));
    }
    doc.push(Block::Heading("every row's figures, over its repetitions:".to_owned()));
    doc.push(Block::Table(table));
    if rows.is_empty() {
        doc.push(Block::Text(vec!["(no repetitions recorded)".to_owned()]));
    }
    if let Some(noise) = noise {
        crate::noise_floor::add(noise, &mut doc);
    }

    failures(&rows, &mut doc);
    crate::netbench::add(&rows, &mut doc);
    coarse_clocks(&rows, &mut doc);
    rates_not_held(&rows, &mut doc);
    crate::failed_runs::add(exp, &mut doc);
    crate::agents::add(&rows, &mut doc);
    crate::server_count::add(&rows, &mut doc);
    verdicts(exp, &mut doc);
    crate::client_agreement::add(exp, &rows, &mut doc);
    path_findings(exp, &mut doc);
    crate::calibration::add(exp, &rows, &mut doc);
    crate::then_now::add(exp, &rows, &mut doc);
    doc.push(Block::Legend(LEGEND.iter().map(|l| (*l).to_owned()).collect()));
    doc
}

fn header(exp: &StoredExperiment) -> Vec<(String, String)> {
    let e = &exp.experiment;
    let mut fields = vec![
        ("experiment".to_owned(), format!("{} {}", exp.id, e.name)),
        ("title".to_owned(), e.title.clone()),
        ("status".to_owned(), exp.status.to_string()),
        ("herd".to_owned(), format!("{} (methodology {})", e.herd_version, e.methodology_version)),
        ("source".to_owned(), e.source.clone()),
        ("started".to_owned(), e.started_at.clone()),
        ("finished".to_owned(), exp.finished_at.clone().unwrap_or_else(|| "-".to_owned())),
    ];
    if let Some(connections) = crate::connections::header(exp) {
        fields.push(("connections".to_owned(), connections));
    }
    // How the servers' CPU time was read (the lab stores it since cgroup accounting came).
    if let Some((_, method)) = e.environment.iter().find(|(k, _)| k == "server_cpu_accounting") {
        fields.push(("server cpu".to_owned(), method.clone()));
    }
    for role in ["server", "router"] {
        if let Some(host) = on_host(&e.environment, role) {
            fields.push((format!("{role} host"), host));
        }
    }
    // Servers herd did not start: their repetitions are not independent restarts.
    let external: Vec<String> = e
        .environment
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("external.").map(|name| format!("{name} at {v}")))
        .collect();
    if !external.is_empty() {
        fields.push((
            "external".to_owned(),
            format!(
                "{}: not started by herd, nor restarted between repetitions (each met the same \
                 running process)",
                external.join(", ")
            ),
        ));
    }
    if let Some(note) = &exp.note {
        fields.push(("note".to_owned(), note.clone()));
    }
    fields
}

/// A `[hosts]` host (`role`: the server's, or the router's) and the path to it, as the lab
/// disclosed them: where the servers or a proxy path's program ran, if not on the machine
/// above.
fn on_host(environment: &[(String, String)], role: &str) -> Option<String> {
    let get = |k: &str| environment.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let url = get(&format!("host.{role}.url"))?;
    let host = |k: &str| get(&format!("host.{role}.{k}")).unwrap_or("unknown");
    let path = |k: &str| get(&format!("path.{role}.{k}")).unwrap_or("unknown");
    Some(format!(
        "{url} ({}, {}, {} CPUs, kernel {}); the path: MTU {}, connect RTT {} µs, one TCP \
         connection {} Mbit/s",
        host("hostname"),
        host("cpu_model"),
        host("cpus_online"),
        host("kernel"),
        path("mtu"),
        path("connect_rtt_us"),
        path("tcp_mbit_per_s"),
    ))
}

fn entries(exp: &StoredExperiment, row: &Row<'_>, stepped: bool, lead: Measure) -> Vec<Entry> {
    let mut entries: Vec<Entry> = exp
        .experiment
        .axes
        .iter()
        .map(|axis| Entry::from(row.cell.axis(axis).unwrap_or("-")))
        .collect();
    if stepped {
        entries.push(Entry::from(row.step.as_deref().unwrap_or("-")));
    }
    let (p50, p99) = match &row.latency {
        Some(l) => {
            let mark = if l.from_client { "*" } else { "" };
            (format!("{}{mark}", ms(l.p50_us)), format!("{}{mark}", ms(l.p99_us)))
        }
        None => ("-".to_owned(), "-".to_owned()),
    };
    let samples = row.samples(lead);
    // `?` where the figure the lab judged repetitions by is: the spread of requests/s, or the
    // column of the file's measure.
    let unsure =
        |column: Option<Measure>| if row.unsettled && row.judged == column { "?" } else { "" };
    let rate_entry = match stats::median(samples) {
        None => Entry::from("-"),
        Some(r) => Entry {
            text: format!(
                "{}{}{}",
                row.mark(),
                if row.coarse_clock.is_some() { "~" } else { "" },
                rate(r)
            ),
            percent: None,
            then: None,
            figure: Some(Figure {
                cell: row.cell.key.clone(),
                step: row.step.clone(),
                measure: lead,
                value: r,
            }),
        },
    };
    entries.push(Entry::from(format!("{}/{}", row.n_ok, row.n_total)));
    entries.push(rate_entry);
    entries.extend(
        [
            stats::confidence_interval_95(samples)
                .and_then(|ci| ci.relative_half_width())
                .map_or_else(String::new, |r| format!("±{:.1}%", r * 100.0)),
            stats::relative_std_dev(samples)
                .map_or_else(|| "-".to_owned(), |r| format!("{:.1}%{}", r * 100.0, unsure(None))),
            format!("{p50}{}", unsure(Some(Measure::LatencyP50))),
            format!("{p99}{}", unsure(Some(Measure::LatencyP99))),
            row.failed.to_string(),
            row.non_2xx.to_string(),
            row.cpu_us_per_request.map_or_else(
                || "-".to_owned(),
                |us| format!("{us:.1}{}", unsure(Some(Measure::CpuPerRequest))),
            ),
            match row.verdict {
                None => "-".to_owned(),
                Some(v @ ClientVerdict::Ok) => v.to_string(),
                Some(v @ (ClientVerdict::Suspect | ClientVerdict::ClientBound)) => format!("{v}!"),
            },
        ]
        .map(Entry::from),
    );
    entries
}

fn failures(rows: &[Row<'_>], doc: &mut Doc) {
    let items: Vec<String> = rows
        .iter()
        .filter(|r| !r.failures.is_empty())
        .map(|row| {
            let kinds: Vec<String> = row.failures.iter().map(|(k, n)| format!("{k} {n}")).collect();
            format!("{}{}: {}", row.cell.key, row.step_suffix(), kinds.join(", "))
        })
        .collect();
    doc.section(
        "failed requests by kind (all repetitions; ≠ marks a rate measured with failures: not comparable with rows that served every request):".to_owned(),
        items,
    );
}

fn coarse_clocks(rows: &[Row<'_>], doc: &mut Doc) {
    let coarse: Vec<(&Row<'_>, CoarseClock)> =
        rows.iter().filter_map(|r| Some((r, r.coarse_clock?))).collect();
    let items: Vec<String> = coarse
        .into_iter()
        .map(|(row, c)| {
            format!(
                "{}{}: runs as short as {:.1} ms, timed to {} ms by the client: each rate is uncertain by up to ±{:.0} % from the clock alone, whatever the spread says; use more requests",
                row.cell.key,
                row.step_suffix(),
                c.duration_s * 1e3,
                c.resolution_s * 1e3,
                c.relative_error() * 100.0
            )
        })
        .collect();
    doc.section("rates the client's clock cannot resolve (~):".to_owned(), items);
}

/// The open loops that did not hold their rate (⊘), a line per repetition: what fell short.
fn rates_not_held(rows: &[Row<'_>], doc: &mut Doc) {
    let lines = rows
        .iter()
        .flat_map(|row| {
            row.not_held.iter().map(move |(rep, hold)| {
                format!(
                    "{}{}, repetition {}: {}",
                    row.cell.key,
                    row.step_suffix(),
                    rep + 1,
                    figures::shortfall(hold)
                )
            })
        })
        .collect();
    doc.section(
        format!(
            "rates not held (⊘; below {:.0} % of the offered rate, 1 % of requests {} ms or \
             more behind their schedule, or a client verdict other than ok): left out of every \
             figure of the row:",
            RateHold::MIN_SHARE * 100.0,
            RateHold::MAX_LAG_US / 1000.0
        ),
        lines,
    );
}

fn verdicts(exp: &StoredExperiment, doc: &mut Doc) {
    // One line per cell: how many repetitions were not ok, and the worst one's reason (the
    // store keeps every repetition's own).
    let mut lines = Vec::new();
    for cell in &exp.cells {
        let verdict_of =
            |r: &&StoredRepetition| r.record.client.judgement.as_ref().map(|j| j.verdict);
        let flagged: Vec<_> =
            cell.repetitions.iter().filter(|r| verdict_of(r) > Some(ClientVerdict::Ok)).collect();
        let Some(worst) = flagged.iter().copied().max_by_key(verdict_of) else {
            continue;
        };
        let Some(judged) = &worst.record.client.judgement else { continue };
        let verdict = judged.verdict;
        let reason = judged.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
        lines.push(format!(
            "{}: {} of {} repetitions not ok; worst, repetition {}: {verdict}{reason}",
            cell.key,
            flagged.len(),
            cell.repetitions.len(),
            worst.record.repetition + 1
        ));
    }
    doc.section("client verdicts other than ok:".to_owned(), lines);
}

/// What a network path's hosts saw that capped or disturbed a cell (link-bound, conntrack
/// full, port exhaustion, SYN retransmits, listen overflows), said plainly: per cell and kind
/// of finding (its words before the colon), in how many repetitions, with the first one's
/// words. A stored record that cannot be read is a finding too.
fn path_findings(exp: &StoredExperiment, doc: &mut Doc) {
    let mut lines = Vec::new();
    for cell in &exp.cells {
        // kind, repetitions with it, the first such repetition, its words
        let mut kinds: Vec<(String, usize, u32, String)> = Vec::new();
        for r in &cell.repetitions {
            for f in r.record.network_findings() {
                let kind = f.split(':').next().unwrap_or(f).to_owned();
                match kinds.iter_mut().find(|(k, ..)| *k == kind) {
                    Some((_, n, ..)) => *n += 1,
                    None => kinds.push((kind, 1, r.record.repetition + 1, f.clone())),
                }
            }
        }
        for (_, n, first, words) in kinds {
            lines.push(format!(
                "{}: {n} of {} repetitions; repetition {first}: {words}",
                cell.key,
                cell.repetitions.len()
            ));
        }
    }
    doc.section("what the network path capped or disturbed:".to_owned(), lines);
}

const LEGEND: [&str; 21] = [
    "matrix    one figure per row: median of the ok repetitions, ±95 % interval of their mean;",
    "          (x %): its share of the baseline beside it (for seconds, the share of its",
    "          requests/s: its speed; for a latency or a cost, lower is better);",
    "          ! client verdict not ok; ^ the link capped it; ⊘ some repetition did not",
    "          hold its offered rate, or its client its own schedule: left out, listed above;",
    "          ? the figure the lab judged repetitions by (the file's measure, else req/s)",
    "          stayed beyond its [repetitions] bounds after the most repetitions allowed;",
    "          n failed: failed requests and non-2xx answers, all repetitions",
    "reps      ok repetitions that measured the row (an open loop's: at the rate it offered),",
    "          of all the cell's repetitions",
    "req/s     median of the ok repetitions; ±95%: the 95 % confidence interval of their mean",
    "          (Student t), blank with fewer than 2; spread: relative standard deviation;",
    "          ~: runs too short for the client's clock (see above the legend);",
    "          ≠: failed requests or non-2xx answers in the measured runs: not comparable",
    "p50, p99  latency from the intended send time: each ok repetition's own percentile,",
    "          median of the repetitions; *: the client's own figure (it gives no histogram)",
    "failed    failed requests and non-2xx responses, summed over all repetitions, failed ones too",
    "srv cpu   server CPU time per completed request, median of the ok repetitions",
    "          (a stepped load's: over all its steps, from repetitions that ran them all)",
    "client    the worst client verdict of the repetitions (of the step, where each step",
    "          was judged), ! when not ok",
];

/// A measure's figure as every table prints it: seconds to the millisecond as ab prints
/// them, percentages to a tenth, clients whole, rates as [`rate`].
pub(crate) fn format_measure(m: Measure, v: f64) -> String {
    match m {
        Measure::Seconds => format!("{v:.3}"),
        Measure::Percent => format!("{v:.1}"),
        Measure::ClientsAtPeak => format!("{v:.0}"),
        // Held in µs, printed in ms as the latency columns are.
        Measure::LatencyP50 | Measure::LatencyP99 | Measure::LatencyP999 => ms(v),
        Measure::CpuPerRequest => cpu_us(v),
        _ => rate(v),
    }
}

/// Server CPU µs per request: two decimals below 100, whole above.
pub(crate) fn cpu_us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A measure's name in headings and on chart axes.
pub(crate) fn measure_name(m: Measure) -> &'static str {
    match m {
        Measure::Seconds => "seconds",
        Measure::Percent => "percent",
        Measure::RequestsPerSecond => "requests/s",
        Measure::ConnectionsPerSecond => "connections/s",
        // Bytes / 1024 a second (ab's "Transfer rate" in "Kbytes/sec"): KiB/s, as the
        // cells' details say it.
        Measure::KbPerSecond => "KiB/s",
        Measure::MbitPerSecond => "Mbit/s",
        Measure::PeakRequestsPerSecond => "peak requests/s",
        Measure::PeakMbitPerSecond => "peak Mbit/s",
        Measure::ClientsAtPeak => "clients at peak",
        Measure::LatencyP50 => "p50 latency (ms)",
        Measure::LatencyP99 => "p99 latency (ms)",
        Measure::LatencyP999 => "p99.9 latency (ms)",
        Measure::CpuPerRequest => "server CPU per request (µs)",
    }
}

/// Requests per second: whole numbers from 1000 up, one decimal below.
pub(crate) fn rate(per_second: f64) -> String {
    if per_second >= 1000.0 {
        format!("{per_second:.0}")
    } else {
        format!("{per_second:.1}")
    }
}

/// A latency in µs as milliseconds with four significant digits or more.
pub(crate) fn ms(us: f64) -> String {
    let ms = us / 1000.0;
    if ms < 10.0 {
        format!("{ms:.3}")
    } else if ms < 100.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_latencies_have_fixed_formats() {
        assert_eq!(rate(12_345.4), "12345");
        assert_eq!(rate(999.94), "999.9");
        assert_eq!(rate(0.5), "0.5");
        assert_eq!(ms(81.0), "0.081");
        assert_eq!(ms(9_999.0), "9.999");
        assert_eq!(ms(12_346.0), "12.35");
        assert_eq!(ms(123_456.0), "123.5");
        assert_eq!(ms(5_000_000.0), "5000.0");
    }
}
