//! A history (`herd report --history NAME`): the experiments stored under one name, oldest
//! first, as one series per cell (and step) of the chosen measure (each run's median over its
//! ok repetitions), with the change points herd_stats finds in it (Hunter's E-Divisive with
//! Student's t-test, `herd_stats::change_points`) and, for each, what differed between the
//! last run before it and the first after it: herd's version, the machine and kernel (the
//! experiment's environment, the host's name included), the programs' versions, and the
//! cell's definition (its config hash, command lines). What the store does not record (an
//! environment variable given to a server) cannot be named; the report says when nothing
//! recorded differs.

use std::collections::BTreeSet;

use herd_stats::change_points::{self, ChangePoint, Settings};
use herd_stats::repetitions as stats;
use herd_store::{Measure, StoredExperiment};

use crate::compare;
use crate::doc::{Align, Block, Doc, Entry, Role, Table};
use crate::figures::{self, Row};
use crate::run_definition::{Definition, Differences};
use crate::table::measure_name;

/// The fewest runs a history must have to be judged: two on each side of a change.
pub const MIN_RUNS: usize = 4;

/// One series: a cell (and step), its value in each run that measured it.
struct Series {
    /// The cell's key and step, as the other reports name a row.
    name: String,
    /// (run's position in the history, value, the row's definition).
    points: Vec<(usize, f64, Option<Definition>)>,
}

/// The history as a document, and how many change points it found; an error says what to
/// give instead (too few runs).
pub(crate) fn doc(
    name: &str,
    runs: &[StoredExperiment],
    measure: Measure,
    settings: &Settings,
) -> Result<(Doc, usize), String> {
    if runs.len() < MIN_RUNS {
        return Err(format!(
            "the history {name} has {} run{}: it takes at least {MIN_RUNS} (experiments stored under that name) to find a change",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        ));
    }
    let series = series(runs, measure);
    let mut doc = Doc::default();
    doc.push(Block::Fields(vec![
        ("history".to_owned(), format!("{name}, {} runs, oldest first", runs.len())),
        (
            "measure".to_owned(),
            format!("{}: each run's median over its ok repetitions", measure_name(measure)),
        ),
        (
            "method".to_owned(),
            format!(
                "E-Divisive means with Student's t-test (Hunter, as Apache Otava): p < {}{}",
                settings.max_p_value,
                if settings.min_magnitude > 0.0 {
                    format!(", change above {} %", settings.min_magnitude * 100.0)
                } else {
                    String::new()
                }
            ),
        ),
    ]));
    let mut table = Table::with_role(Role::Plain);
    for (header, align) in [
        ("run", Align::Right),
        ("experiment", Align::Right),
        ("started", Align::Left),
        ("herd", Align::Left),
        ("kernel", Align::Left),
        ("machine", Align::Left),
    ] {
        table.column(header, align);
    }
    for (i, run) in runs.iter().enumerate() {
        let e = &run.experiment;
        table.text_row(vec![
            (i + 1).to_string(),
            run.id.0.to_string(),
            e.started_at.clone(),
            e.herd_version.clone(),
            env(run, "kernel").to_owned(),
            machine(run),
        ]);
    }
    doc.push(Block::Heading("runs:".to_owned()));
    doc.push(Block::Table(table));

    let mut found = 0usize;
    for s in &series {
        let values: Vec<f64> = s.points.iter().map(|(_, v, _)| *v).collect();
        doc.push(Block::Heading(format!("{}:", s.name)));
        if values.len() < MIN_RUNS {
            doc.push(Block::Text(vec![format!(
                "  measured in {} run{} only: it takes {MIN_RUNS} to judge",
                values.len(),
                if values.len() == 1 { "" } else { "s" }
            )]));
            continue;
        }
        let Some(cps) = change_points::change_points(&values, settings) else {
            doc.push(Block::Text(vec!["  not judged: a value is not a number".to_owned()]));
            continue;
        };
        found += cps.len();
        let mut t = Table::with_role(Role::Plain);
        t.column("run", Align::Right);
        t.column(measure_name(measure), Align::Right);
        t.column("config", Align::Left);
        t.column("", Align::Left);
        for (k, (run, value, def)) in s.points.iter().enumerate() {
            let mark = if cps.iter().any(|c| c.index == k) { "◆ change" } else { "" };
            t.row(vec![
                Entry::from((run + 1).to_string()),
                Entry::from(format!("{value:.1}")),
                Entry::from(def.as_ref().map_or_else(|| "-".to_owned(), config_hash)),
                Entry::from(mark),
            ]);
        }
        doc.push(Block::Table(t));
        let lines: Vec<String> = cps.iter().map(|cp| describe(cp, s, runs, measure)).collect();
        doc.push(Block::Text(if lines.is_empty() {
            vec!["  no change point".to_owned()]
        } else {
            lines
        }));
    }
    doc.push(Block::Legend(LEGEND.iter().map(|l| (*l).to_owned()).collect()));
    Ok((doc, found))
}

const LEGEND: [&str; 7] = [
    "run       the experiment's place in the history (stored under the same name), oldest first",
    "config    a hash of the cell's server config files as run (FNV-1a, paths and ports as",
    "          placeholders), so that a change of setup shows; - where no run was ok",
    "◆ change  the first run after a change point: the two sides' means, the relative change and",
    "          Student's t-test p-value between them, then what differed between the last run",
    "          before and the first after (the host's name among them; not recorded: a server's",
    "          environment)",
];

fn describe(cp: &ChangePoint, s: &Series, runs: &[StoredExperiment], measure: Measure) -> String {
    let (before, _, def_before) = &s.points[cp.index - 1];
    let (after, _, def_after) = &s.points[cp.index];
    let (ea, eb) = (&runs[*before], &runs[*after]);
    let mut why = compare::setup_differences(ea, eb);
    if let (Some(a), Some(b)) = (def_before, def_after) {
        let (ha, hb) = (config_hash(a), config_hash(b));
        if ha != hb {
            why.push(format!("config hash {ha} → {hb}"));
        }
        let d = Differences::between(a, b);
        for line in d.client.iter().chain(&d.load).chain(&d.servers).chain(&d.configs) {
            why.push(line.clone());
        }
    }
    let why: Vec<String> = why
        .into_iter()
        .map(|l| l.replace("only A ran", "only before:").replace("only B ran", "only after:"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    format!(
        "  change at run {} (experiment {}, started {}): {:.1} → {:.1} {} ({:+.1} %), p = {:.2e}; {}",
        after + 1,
        eb.id.0,
        eb.experiment.started_at,
        cp.mean_before,
        cp.mean_after,
        measure_name(measure),
        cp.relative_change() * 100.0,
        cp.p_value,
        if why.is_empty() {
            "nothing recorded differs between run {} and run {} (server and herd versions, config, kernel, machine)"
                .replacen("{}", &(before + 1).to_string(), 1)
                .replacen("{}", &(after + 1).to_string(), 1)
        } else {
            format!("between run {} and run {}: {}", before + 1, after + 1, why.join("; "))
        }
    )
}

/// Each cell's (and step's) series over the runs, cells in the order they first appear.
fn series(runs: &[StoredExperiment], measure: Measure) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let (rows, _) = figures::rows(run);
        for row in &rows {
            let name = format!("{}{}", row.cell.key, row.step_suffix());
            let Some(value) = stats::median(row.samples(measure)) else { continue };
            let at = match out.iter().position(|s| s.name == name) {
                Some(at) => at,
                None => {
                    out.push(Series { name, points: Vec::new() });
                    out.len() - 1
                }
            };
            out[at].points.push((i, value, definition(row)));
        }
    }
    out
}

fn definition(row: &Row<'_>) -> Option<Definition> {
    let rep = row.cell.ok_repetitions().next()?;
    Some(Definition::of(&rep.record))
}

/// FNV-1a (64 bits) of the normalised config files, as 8 hex digits: short, and the same
/// for the same files wherever they were run.
fn config_hash(d: &Definition) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in &d.configs {
        for b in path.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{:08x}", h >> 32)
}

fn env<'e>(run: &'e StoredExperiment, key: &str) -> &'e str {
    run.experiment
        .environment
        .iter()
        .find(|(k, _)| k == key)
        .map_or("(not recorded)", |(_, v)| v.as_str())
}

/// The machine as the store records it: CPU model, CPUs online, memory.
fn machine(run: &StoredExperiment) -> String {
    format!(
        "{}, {} CPUs, {}",
        env(run, "cpu_model"),
        env(run, "cpus_online"),
        env(run, "memory_total")
    )
}
