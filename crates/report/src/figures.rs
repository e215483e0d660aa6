//! The figures of one row of an experiment's table: one cell, or one step of a cell with a
//! stepped load, summarised over its repetitions. Numbers only; how they are printed is
//! `table.rs`'s business.
//!
//! Which repetitions count: throughput, latency and server CPU come from the ok ones (a
//! failed repetition has no valid result), while failed requests and non-2xx responses are
//! summed over all of them, so that nothing a repetition saw is hidden.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use herd_stats::{
    ClientVerdict, Failure, LatencySeries, Measurement, RateHold, REPORTED_LATENCY_P50_US,
    REPORTED_LATENCY_P99_US, REPORTED_TIMER_RESOLUTION_S,
};
use herd_store::{Measure, StoredCell, StoredExperiment, StoredRepetition, FINDING_LINK_BOUND};

use herd_stats::repetitions::{self as stats, Bounds};

/// One row: a cell, or a cell's step.
pub(crate) struct Row<'a> {
    pub(crate) cell: &'a StoredCell,
    /// The step's label when any cell of the experiment was measured in steps (`None`
    /// otherwise: no row needs a step column).
    pub(crate) step: Option<String>,
    /// The clients (connections) of the row's measurements, as the first one recorded.
    pub(crate) concurrency: Option<u32>,
    /// The offered rate of an open loop's row (req/s), as the first measurement recorded.
    pub(crate) offered: Option<f64>,
    /// Ok repetitions that measured this row (a repetition interrupted or failed part-way
    /// through a stepped load may lack later steps).
    pub(crate) n_ok: usize,
    /// All the cell's repetitions, failed ones included.
    pub(crate) n_total: usize,
    /// Requests per second of each ok repetition, in repetition order.
    pub(crate) rates: Vec<f64>,
    /// The measured part's length in seconds, of each ok repetition.
    pub(crate) durations: Vec<f64>,
    /// Bytes received per second / 1024, of each ok repetition.
    pub(crate) kib_per_second: Vec<f64>,
    /// Mbit moved per second (NetBench's throughput), of each ok repetition.
    pub(crate) mbit_per_second: Vec<f64>,
    /// The figures the client reported by name (`Measurement::reported`), of each ok
    /// repetition that gave them.
    pub(crate) reported: BTreeMap<String, Vec<f64>>,
    /// Latency percentiles from the intended send (µs) of each ok repetition that has them:
    /// each repetition's own, from its histogram, else from the client's own figures.
    pub(crate) p50_us: Vec<f64>,
    pub(crate) p99_us: Vec<f64>,
    /// From histograms only (no client reports it).
    pub(crate) p999_us: Vec<f64>,
    pub(crate) latency: Option<Latency>,
    /// Failed requests over all repetitions.
    pub(crate) failed: u64,
    /// Failed requests by kind over all repetitions, in [`Failure`]'s order.
    pub(crate) failures: Vec<(Failure, u64)>,
    pub(crate) non_2xx: u64,
    /// Server CPU time per completed request (µs) of each ok repetition that measured it
    /// and ran every step.
    pub(crate) cpu_us: Vec<f64>,
    /// Their median.
    pub(crate) cpu_us_per_request: Option<f64>,
    /// The worst client verdict of all repetitions but those that did not hold their rate
    /// (`None`: no tool gave one); for a step, the step's own verdict where it has one.
    pub(crate) verdict: Option<ClientVerdict>,
    /// Where a coarse client clock alone makes an ok run's rate uncertain by more than
    /// [`COARSE_CLOCK`]: the worst such run.
    pub(crate) coarse_clock: Option<CoarseClock>,
    /// Some measured (ok) repetition had failed requests or non-2xx answers: its rate mixes
    /// served requests with failures, which cost a server less, so it is not comparable
    /// with rows that served every request.
    pub(crate) not_comparable: bool,
    /// A host on the network path found that the link's rate, not the server, capped some
    /// ok repetition (herd_lab's `link-bound` finding).
    pub(crate) link_bound: bool,
    /// Ok repetitions of an open loop that did not hold the offered rate ([`RateHold`]), with
    /// what fell short: left out of every figure of the row.
    pub(crate) not_held: Vec<(u32, RateHold)>,
    /// The figure the lab judged its repetitions by (the file's `[report] measure` where the
    /// row has it, else req/s, or Mbit/s where there are no requests) ended beyond the
    /// experiment's `[repetitions]` bounds (its spread, the width of its 95 % interval): the
    /// lab ran as many as it was allowed and the figure is still less sure than the file
    /// asked.
    pub(crate) unsettled: bool,
    /// The measure `unsettled` judged where it is the file's `[report] measure`; None where
    /// it is the row's requests/s (or Mbit/s).
    pub(crate) judged: Option<Measure>,
}

/// A run timed by a clock too coarse for its length (ab's milliseconds on a 3 ms run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CoarseClock {
    pub(crate) resolution_s: f64,
    pub(crate) duration_s: f64,
}

impl CoarseClock {
    /// How far the rate can be off from the clock alone, as a share of it.
    pub(crate) fn relative_error(&self) -> f64 {
        self.resolution_s / self.duration_s
    }
}

/// Clock error, as a share of a run's rate, above which the table flags the rate.
pub(crate) const COARSE_CLOCK: f64 = 0.01;

/// What fell short of holding an open loop's load ([`RateHold`]), in words: `achieved
/// 93.1 % of 5000 req/s; 1 % of requests sent 12.30 ms or more behind their schedule (the
/// worst 45.20 ms)`, or the client's verdict on its own schedule and its reason.
pub(crate) fn shortfall(h: &RateHold) -> String {
    let mut said = Vec::new();
    if h.achieved < RateHold::MIN_SHARE * h.offered {
        said.push(format!(
            "achieved {:.1} % of {} req/s",
            h.achieved / h.offered * 100.0,
            crate::table::rate(h.offered)
        ));
    }
    if let Some(lag) = h.lag_p99_us.filter(|lag| *lag > RateHold::MAX_LAG_US) {
        let worst = h.worst_lag_us.unwrap_or(lag);
        said.push(format!(
            "1 % of requests sent {} ms or more behind their schedule (the worst {} ms)",
            crate::table::ms(lag),
            crate::table::ms(worst)
        ));
    }
    if let Some(j) = &h.client {
        let reason = j.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
        said.push(format!("the client did not keep its own schedule ({}{reason})", j.verdict));
    }
    said.join("; ")
}

/// Latency percentiles in µs: the median over the ok repetitions of each one's own.
pub(crate) struct Latency {
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    /// From the clients' own figures (median over repetitions), not from histograms.
    pub(crate) from_client: bool,
}

/// Every row of the experiment's table, cells in the store's order, steps in order; and
/// whether any cell was measured in steps (then every row names its step).
pub(crate) fn rows(exp: &StoredExperiment) -> (Vec<Row<'_>>, bool) {
    let steps: Vec<BTreeMap<u32, String>> = exp.cells.iter().map(steps_of).collect();
    let stepped = steps.iter().any(|s| s.len() > 1);
    let bounds = bounds(&exp.experiment.definition);
    let judged = judged_measure(&exp.experiment.definition);
    let mut rows = Vec::new();
    for (cell, steps) in exp.cells.iter().zip(steps) {
        let n_steps = steps.len();
        if steps.is_empty() {
            // A cell with no measurement (every repetition failed) sits in the table as its
            // siblings do: in a stepped experiment with an empty step label, not apart.
            rows.push(row(cell, None, stepped.then(String::new), 0));
        }
        for (step, label) in steps {
            rows.push(row(cell, Some(step), stepped.then_some(label), n_steps));
        }
    }
    for row in &mut rows {
        row.judged = judged.filter(|m| !row.samples(*m).is_empty());
        let fallback = if row.rates.is_empty() { &row.mbit_per_second } else { &row.rates };
        let samples = row.judged.map_or(fallback.as_slice(), |m| row.samples(m));
        row.unsettled = bounds.is_some_and(|b| b.exceeded(samples));
    }
    (rows, stepped)
}

/// The lab's default `[repetitions] max_spread_percent`, where a file gives neither bound
/// (herd_lab's experiment builder).
const DEFAULT_MAX_SPREAD_PERCENT: f64 = 5.0;

/// The experiment's `[repetitions]` bounds, read from its file as run (the lab's default
/// where it gives none); None where the file cannot be read (a store's experiment written
/// by hand, or by a test, with no definition).
pub(crate) fn bounds(definition: &str) -> Option<Bounds> {
    let doc: toml::Table = definition.parse().ok()?;
    let percent = |key: &str| {
        let v = doc.get("repetitions")?.get(key)?;
        v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
    };
    let given = Bounds {
        max_spread_percent: percent("max_spread_percent"),
        max_interval_percent: percent("max_interval_percent"),
    };
    Some(match given {
        Bounds { max_spread_percent: None, max_interval_percent: None } => {
            Bounds { max_spread_percent: Some(DEFAULT_MAX_SPREAD_PERCENT), ..given }
        }
        _ => given,
    })
}

/// The file's `[report] measure`: the figure the lab judged repetitions by where a row has
/// it (herd_lab's `runner::cell::figure`).
fn judged_measure(definition: &str) -> Option<Measure> {
    let doc: toml::Table = definition.parse().ok()?;
    Measure::from_key(doc.get("report")?.get("measure")?.as_str()?)
}

impl<'a> Row<'a> {
    pub(crate) fn median_rate(&self) -> Option<f64> {
        stats::median(&self.rates)
    }

    /// Whether the row is a step of a cell measured in steps (a ramp). In an experiment where
    /// some cell ramps, every row names its step, also a cell measured in one go: that one
    /// is not a ramp's step.
    pub(crate) fn is_ramp_step(&self) -> bool {
        self.step.is_some() && measured_in_steps(self.cell)
    }

    /// Whether the row is a step of clients (a ramp: `steps`), drawn against clients.
    pub(crate) fn is_client_step(&self) -> bool {
        self.is_ramp_step() && self.offered.is_none()
    }

    /// Whether the row is a step of offered rates (`rate_steps`), drawn against the rate.
    pub(crate) fn is_rate_step(&self) -> bool {
        self.is_ramp_step() && self.offered.is_some()
    }

    /// The achieved req/s of every ok repetition, those that did not hold the rate included
    /// (the chart of achieved against offered shows how far they fell short).
    pub(crate) fn achieved(&self) -> Vec<f64> {
        let mut all = self.rates.clone();
        all.extend(self.not_held.iter().map(|(_, h)| h.achieved));
        all
    }

    /// `≠` when the rate was measured with failures, else nothing: how every figure derived
    /// from it is marked.
    pub(crate) fn mark(&self) -> &'static str {
        if self.not_comparable {
            "≠"
        } else {
            ""
        }
    }

    /// Whether the client judged the row's runs other than ok (suspect, client-bound).
    pub(crate) fn client_not_ok(&self) -> bool {
        self.verdict > Some(ClientVerdict::Ok)
    }

    /// ` step c100` for a step's row, nothing for a cell's (also in an experiment where other
    /// cells ran in steps, where its step label is empty).
    pub(crate) fn step_suffix(&self) -> String {
        self.step
            .as_ref()
            .filter(|s| !s.is_empty())
            .map(|s| format!(" step {s}"))
            .unwrap_or_default()
    }

    /// The row of the same step whose cell is this one's with `axis` at `value` (the
    /// `direct` row beside a path's, the calibration row beside a server's).
    pub(crate) fn sibling<'r>(
        &self,
        rows: &'r [Row<'a>],
        axis: &str,
        value: &str,
    ) -> Option<&'r Row<'a>> {
        rows.iter().find(|r| {
            r.step == self.step
                && herd_store::is_sibling(&r.cell.axes, &self.cell.axes, axis, value)
        })
    }

    /// The ok repetitions' values of a measure a table shows (one of
    /// `Measure::TABULATED`; any other gives none).
    pub(crate) fn samples(&self, m: Measure) -> &[f64] {
        match m {
            Measure::RequestsPerSecond | Measure::ConnectionsPerSecond => &self.rates,
            Measure::Seconds => &self.durations,
            Measure::KbPerSecond => &self.kib_per_second,
            Measure::MbitPerSecond => &self.mbit_per_second,
            Measure::LatencyP50 => &self.p50_us,
            Measure::LatencyP99 => &self.p99_us,
            Measure::LatencyP999 => &self.p999_us,
            Measure::CpuPerRequest => &self.cpu_us,
            _ => &[],
        }
    }
}

/// The axes whose value differs between cells (the others say nothing row by row); all of
/// them when none does.
pub(crate) fn varying_axes(exp: &StoredExperiment) -> Vec<String> {
    let axes = &exp.experiment.axes;
    let varying: Vec<String> = axes
        .iter()
        .filter(|a| {
            let mut values = exp.cells.iter().map(|c| c.axis(a));
            let first = values.next().flatten();
            values.any(|v| v != first)
        })
        .cloned()
        .collect();
    if varying.is_empty() {
        axes.clone()
    } else {
        varying
    }
}

/// Whether some repetition of the cell measured more than one step.
pub(crate) fn measured_in_steps(cell: &StoredCell) -> bool {
    cell.repetitions.iter().any(|r| r.record.measurements.len() > 1)
}

/// Step number → label over all the cell's repetitions (the first label seen wins).
fn steps_of(cell: &StoredCell) -> BTreeMap<u32, String> {
    let mut steps = BTreeMap::new();
    for rep in &cell.repetitions {
        for m in &rep.record.measurements {
            steps.entry(m.step).or_insert_with(|| m.label.clone());
        }
    }
    steps
}

/// The row of `cell` at `step` (None: the cell measured nothing), of the cell's `n_steps`.
fn row(cell: &StoredCell, step: Option<u32>, label: Option<String>, n_steps: usize) -> Row<'_> {
    // An open loop's repetition that did not hold its load (its rate, or the client its own
    // schedule) measured another load: it counts as a repetition that gave no figure.
    let not_held =
        left_out(cell.ok_repetitions().map(|r| (r.record.repetition, shortfall_at(r, step))));
    let ok: Vec<_> = cell
        .ok_repetitions()
        .filter(|r| !not_held.iter().any(|(rep, _)| *rep == r.record.repetition))
        .collect();

    let rates = ok.iter().filter_map(|r| measurement_at(r, step)?.requests_per_second()).collect();
    let ok_measurements: Vec<&Measurement> =
        ok.iter().filter_map(|r| measurement_at(r, step)).collect();

    let (mut failed, mut non_2xx, mut failures) = (0u64, 0u64, BTreeMap::<Failure, u64>::new());
    for m in cell.repetitions.iter().filter_map(|r| measurement_at(r, step)) {
        failed = failed.saturating_add(m.failed);
        non_2xx = non_2xx.saturating_add(m.non_2xx);
        for &(kind, n) in &m.failures {
            let total = failures.entry(kind).or_insert(0);
            *total = total.saturating_add(n);
        }
    }
    // Server CPU is measured per repetition: only repetitions that ran every step give a
    // figure per request comparable with the others.
    let cpu: Vec<f64> = ok
        .iter()
        .filter(|r| r.record.measurements.len() == n_steps)
        .filter_map(|r| r.record.server_cpu_us_per_request())
        .collect();
    // A step judged on its own has its own verdict; otherwise the repetition's applies. A
    // repetition that never reached this step says nothing about it, nor does one that did not
    // hold its rate: it is left out of the figures the verdict qualifies (and listed under
    // ⊘ with what fell short).
    let verdict = cell
        .repetitions
        .iter()
        .filter(|r| step.is_none() || measurement_at(r, step).is_some())
        .filter(|r| !not_held.iter().any(|(rep, _)| *rep == r.record.repetition))
        .filter_map(|r| {
            let own = measurement_at(r, step).and_then(|m| m.judgement.as_ref());
            own.or(r.record.client.judgement.as_ref()).map(|j| j.verdict)
        })
        .max();

    let percentiles = ok_measurements.iter().map(|m| percentiles(m)).collect::<Vec<_>>();
    let p50_us: Vec<f64> = percentiles.iter().filter_map(|p| p.p50_us).collect();
    let p99_us: Vec<f64> = percentiles.iter().filter_map(|p| p.p99_us).collect();
    let p999_us: Vec<f64> = percentiles.iter().filter_map(|p| p.p999_us).collect();
    let latency = match (stats::median(&p50_us), stats::median(&p99_us)) {
        (Some(p50_us), Some(p99_us)) => {
            Some(Latency { p50_us, p99_us, from_client: percentiles.iter().any(|p| p.from_client) })
        }
        _ => None,
    };

    let coarse_clock = ok_measurements
        .iter()
        .filter_map(|m| {
            let resolution_s = m.reported(REPORTED_TIMER_RESOLUTION_S)?;
            (m.duration_s > 0.0).then_some(CoarseClock { resolution_s, duration_s: m.duration_s })
        })
        .filter(|c| c.relative_error() > COARSE_CLOCK)
        .max_by(|a, b| a.relative_error().total_cmp(&b.relative_error()));

    Row {
        cell,
        durations: ok_measurements.iter().map(|m| m.duration_s).collect(),
        kib_per_second: ok_measurements.iter().filter_map(|m| m.kib_per_second()).collect(),
        mbit_per_second: ok_measurements.iter().filter_map(|m| m.mbit_per_second()).collect(),
        reported: {
            let mut by_name: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for (name, v) in ok_measurements.iter().flat_map(|m| &m.reported) {
                by_name.entry(name.clone()).or_default().push(*v);
            }
            by_name
        },
        step: label,
        concurrency: cell
            .repetitions
            .iter()
            .filter_map(|r| measurement_at(r, step))
            .find_map(|m| m.concurrency),
        offered: cell
            .repetitions
            .iter()
            .filter_map(|r| measurement_at(r, step))
            .find_map(|m| m.rate.filter(|r| *r > 0.0)),
        n_ok: ok_measurements.len(),
        n_total: cell.repetitions.len(),
        rates,
        p50_us,
        p99_us,
        p999_us,
        latency,
        failed,
        failures: failures.into_iter().collect(),
        non_2xx,
        cpu_us_per_request: stats::median(&cpu),
        cpu_us: cpu,
        verdict,
        coarse_clock,
        not_comparable: ok_measurements.iter().any(|m| m.failed > 0 || m.non_2xx > 0),
        link_bound: ok.iter().any(|r| {
            r.record
                .network_findings()
                .iter()
                .any(|f| f.split(':').next() == Some(FINDING_LINK_BOUND))
        }),
        not_held,
        unsettled: false,
        judged: None,
    }
}

/// The rows of the efficiency matrix: one per cell loaded at a pinned rate (`rate`, or every
/// step of `rate_steps`) with server CPU known. The server's CPU time is measured over a whole
/// repetition, every step of it, so a repetition counts only where each of its steps held its
/// rate; one that did not is listed in `not_held` (its first step that fell short) and left
/// out, as the main table leaves out a rate not held.
pub(crate) fn efficiency_rows(exp: &StoredExperiment) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    for cell in &exp.cells {
        let steps = steps_of(cell);
        let pinned = !steps.is_empty()
            && cell
                .repetitions
                .iter()
                .flat_map(|r| &r.record.measurements)
                .all(|m| m.rate.is_some_and(|r| r > 0.0));
        let Some(&first) = steps.keys().next().filter(|_| pinned) else { continue };
        let n_steps = steps.len();
        let mut r = row(cell, Some(first), None, n_steps);
        let shortfall = |rep: &StoredRepetition| {
            let run = rep.record.client.judgement.as_ref();
            rep.record.measurements.iter().filter_map(|m| RateHold::of(m, run)).find(|h| !h.held())
        };
        r.not_held = left_out(cell.ok_repetitions().map(|r| (r.record.repetition, shortfall(r))));
        let counted: Vec<&StoredRepetition> = cell
            .ok_repetitions()
            .filter(|rep| rep.record.measurements.len() == n_steps)
            .filter(|rep| !r.not_held.iter().any(|(n, _)| *n == rep.record.repetition))
            .collect();
        r.cpu_us =
            counted.iter().filter_map(|rep| rep.record.server_cpu_us_per_request()).collect();
        r.not_comparable = counted
            .iter()
            .flat_map(|rep| &rep.record.measurements)
            .any(|m| m.failed > 0 || m.non_2xx > 0);
        r.cpu_us_per_request = stats::median(&r.cpu_us);
        let all = cell.repetitions.iter().flat_map(|rep| &rep.record.measurements);
        (r.failed, r.non_2xx) = all.fold((0u64, 0u64), |(f, n), m| {
            (f.saturating_add(m.failed), n.saturating_add(m.non_2xx))
        });
        if r.cpu_us.is_empty() && r.not_held.is_empty() {
            // No server CPU measured at all: nothing to say of its efficiency.
            continue;
        }
        rows.push(r);
    }
    rows
}

/// The repetitions left out of a row, from each one's shortfall (None: it held its load):
/// every one whose rate fell short, and those whose client alone judged itself not ok where
/// two or more held their load wholly, enough for a figure and its interval without them. A
/// row whose every repetition met a late client (a low rate on a virtual machine, whose
/// sleeping client wakes late now and then) keeps them, marked `!` by their verdict, rather
/// than showing nothing.
fn left_out(shortfalls: impl Iterator<Item = (u32, Option<RateHold>)>) -> Vec<(u32, RateHold)> {
    let short: Vec<(u32, Option<RateHold>)> = shortfalls.collect();
    let clean = short.iter().filter(|(_, h)| h.is_none()).count();
    short
        .into_iter()
        .filter_map(|(rep, h)| Some((rep, h?)))
        .filter(|(_, h)| !h.rate_held() || clean >= 2)
        .collect()
}

/// How the repetition's open loop at that step fell short of its load, if it did.
fn shortfall_at(rep: &StoredRepetition, step: Option<u32>) -> Option<RateHold> {
    let run = rep.record.client.judgement.as_ref();
    measurement_at(rep, step).and_then(|m| RateHold::of(m, run)).filter(|h| !h.held())
}

/// The repetition's measurement of that step, if it has one.
fn measurement_at(rep: &StoredRepetition, step: Option<u32>) -> Option<&Measurement> {
    let step = step?;
    rep.record.measurements.iter().find(|m| m.step == step)
}

/// One measurement's latency percentiles (µs).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Percentiles {
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    p999_us: Option<f64>,
    /// Read from the client's own figures: it gave no histogram.
    from_client: bool,
}

/// The measurement's percentiles from its `total` histogram (latency from the intended
/// send); without one, the client's own p50 and p99.
fn percentiles(m: &Measurement) -> Percentiles {
    match m.histogram(LatencySeries::Total).filter(|h| !h.is_empty()) {
        Some(h) => {
            let at = |q| Some(h.value_at_quantile(q) as f64);
            Percentiles {
                p50_us: at(0.5),
                p99_us: at(0.99),
                p999_us: at(0.999),
                from_client: false,
            }
        }
        None => {
            let (p50_us, p99_us) =
                (m.reported(REPORTED_LATENCY_P50_US), m.reported(REPORTED_LATENCY_P99_US));
            let from_client = p50_us.is_some() || p99_us.is_some();
            Percentiles { p50_us, p99_us, p999_us: None, from_client }
        }
    }
}

/// All the histograms' values in one; `None` when there are no values at all.
pub(crate) fn merge(histograms: &[&Histogram<u64>]) -> Option<Histogram<u64>> {
    let (first, rest) = histograms.split_first()?;
    let mut merged = (*first).clone();
    // Growing the range as needed means adding a histogram of other bounds cannot fail.
    merged.auto(true);
    for h in rest {
        merged.add(*h).ok()?;
    }
    (!merged.is_empty()).then_some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_are_the_files_or_the_labs_default() {
        let spread = |s| Some(Bounds { max_spread_percent: Some(s), max_interval_percent: None });
        assert_eq!(bounds("[repetitions]\nmax_spread_percent = 10.0\n"), spread(10.0));
        assert_eq!(bounds("[repetitions]\nmax_spread_percent = 3\n"), spread(3.0));
        assert_eq!(bounds("name = \"x\"\n"), spread(DEFAULT_MAX_SPREAD_PERCENT));
        assert_eq!(bounds(""), spread(DEFAULT_MAX_SPREAD_PERCENT));
        assert_eq!(bounds("not [ toml"), None);
        assert_eq!(
            bounds("[repetitions]\nmax_interval_percent = 4.5\n"),
            Some(Bounds { max_spread_percent: None, max_interval_percent: Some(4.5) })
        );
        let measure = "[report]\nmeasure = \"cpu_per_request\"\n";
        assert_eq!(judged_measure(measure), Some(Measure::CpuPerRequest));
        assert_eq!(judged_measure("[report]\n"), None);
    }
}
