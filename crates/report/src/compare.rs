//! Two runs side by side (`herd report --compare A B`): two experiments, from one store or
//! two, or two sets of cells of one experiment (`server=apache` against `server=nginx`).
//! Rows are paired by their values on the axes both sides share, leaving out the axes the
//! sides were chosen by; each pair gives B's figure over A's with the 95 % confidence
//! interval of that ratio, and a change is called significant only where the interval
//! leaves out 1. What cannot be paired is listed, and so is what differs between the two
//! setups (kernel, sysctls, versions), since a change there may be the cause. Where either
//! side's experiment has an A/A control (`noise_floor.rs`), a change smaller than the
//! smallest difference its noise floor lets a pair of that many runs tell is "within noise",
//! never significant, whatever the interval says: the interval knows only the runs' own
//! spread, the control also what moves between identical sets of runs.

use std::collections::BTreeSet;

use herd_stats::noise;
use herd_stats::repetitions as stats;
use herd_store::{Measure, StoredExperiment};

use crate::doc::{Align, Block, Doc, Entry, Role, Table};
use crate::figures::{self, Row};
use crate::matrix::{self, Then};
use crate::noise_floor::NoiseFloor;
use crate::run_definition::{Definition, Differences};
use crate::table::measure_name;

/// One side of a comparison: an experiment, and the cells of it that take part.
#[derive(Debug, Clone)]
pub struct Side<'a> {
    /// How the report names it (`a.db experiment 3`).
    pub label: String,
    pub exp: &'a StoredExperiment,
    /// `axis = value` every cell of this side has (none: every cell).
    pub only: Vec<(String, String)>,
}

/// The noise floor a comparison is judged by: the wider of the two sides' (the one whose
/// runs vary more), where either measured one.
#[derive(Debug, Clone)]
pub(crate) struct Noise {
    sd_log: f64,
    /// Whose it is: `experiment 3 (quickstart): server=herd load=c8`.
    from: String,
}

impl Noise {
    pub(crate) fn of(
        a: &Side<'_>,
        floor_a: Option<&NoiseFloor>,
        b: &Side<'_>,
        floor_b: Option<&NoiseFloor>,
    ) -> Option<Noise> {
        let side = |side: &Side<'_>, floor: Option<&NoiseFloor>| {
            let floor = floor?;
            Some(Noise {
                sd_log: floor.sd_log()?,
                from: format!("experiment {} ({}): {}", side.exp.id.0, side.exp.name(), floor.of),
            })
        };
        match (side(a, floor_a), side(b, floor_b)) {
            (Some(x), Some(y)) => Some(if y.sd_log > x.sd_log { y } else { x }),
            (x, y) => x.or(y),
        }
    }
}

/// Environment entries that differ from run to run by nature, not by setup (`lab_process`:
/// the herd process that ran it, for `herd lab run --resume`).
const UNSTABLE: [&str; 3] = ["loadavg_at_start", "order_seed", "lab_process"];

/// The comparison as a document; an error names what to give instead when the sides
/// cannot be compared.
pub(crate) fn doc(
    a: &Side<'_>,
    b: &Side<'_>,
    measure: Measure,
    noise: Option<&Noise>,
) -> Result<Doc, String> {
    check_selection(a)?;
    check_selection(b)?;
    let chosen: BTreeSet<&str> =
        a.only.iter().chain(&b.only).map(|(axis, _)| axis.as_str()).collect();
    let shared: Vec<String> = a
        .exp
        .experiment
        .axes
        .iter()
        .filter(|axis| b.exp.experiment.axes.contains(axis) && !chosen.contains(axis.as_str()))
        .cloned()
        .collect();
    let (rows_a, _) = figures::rows(a.exp);
    let (rows_b, _) = figures::rows(b.exp);
    let rows_a = selected(&rows_a, a);
    let rows_b = selected(&rows_b, b);
    for (side, name, rows) in [(a, "A", &rows_a), (b, "B", &rows_b)] {
        single_valued_elsewhere(side, name, rows, &shared)?;
    }
    // A ramp's step pairs with the same step; a cell measured in one go with the same cell,
    // whether or not its experiment also ramped another.
    let key = |r: &Row<'_>| -> Vec<String> {
        let mut k: Vec<String> =
            shared.iter().map(|axis| r.cell.axis(axis).unwrap_or("-").to_owned()).collect();
        k.push(if r.is_ramp_step() { r.step.clone().unwrap_or_default() } else { String::new() });
        k
    };
    // Each row must have its own place, or a pairing would be a guess.
    for (name, side, rows) in [("A", a, &rows_a), ("B", b, &rows_b)] {
        let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
        if let Some(twice) = rows.iter().find(|r| !seen.insert(key(r))) {
            return Err(format!(
                "{name} ({}) has several rows where the other side has one ({}): choose its cells, e.g. {}:AXIS=VALUE",
                side.label,
                twice.cell.key,
                side.label
            ));
        }
    }
    let pairs: Vec<(&Row<'_>, &Row<'_>)> = rows_a
        .iter()
        .filter_map(|ra| Some((*ra, *rows_b.iter().find(|rb| key(rb) == key(ra))?)))
        .collect();
    if pairs.is_empty() {
        return Err(format!(
            "no row of A ({}) has a row of B ({}) with the same {}: choose cells that differ only where you mean them to (e.g. 3:server=apache 3:server=nginx)",
            a.label,
            b.label,
            if shared.is_empty() { "cell".to_owned() } else { shared.join(", ") }
        ));
    }
    let stepped = pairs.iter().any(|(r, _)| r.is_ramp_step());
    // The axes that tell the pairs apart make columns; where none does, every shared one
    // (a single pair still says where it was measured).
    let varying: Vec<&String> = shared
        .iter()
        .filter(|axis| {
            let values: BTreeSet<&str> =
                pairs.iter().filter_map(|(r, _)| r.cell.axis(axis)).collect();
            values.len() > 1
        })
        .collect();
    let shown: Vec<&String> = if varying.is_empty() { shared.iter().collect() } else { varying };

    let mut doc = Doc::default();
    let mut fields = vec![
        ("compare".to_owned(), format!("B against A, {}", measure_name(measure))),
        ("A".to_owned(), describe(a)),
        ("B".to_owned(), describe(b)),
    ];
    if let Some(noise) = noise {
        fields.push((
            "noise floor".to_owned(),
            format!(
                "runs vary by {:.1} % (A/A control of {}): a change under the smallest \
                 difference that tells at 95 % (80 % power) for the pair's runs is within noise",
                noise.sd_log * 100.0,
                noise.from
            ),
        ));
    }
    doc.push(Block::Fields(fields));
    let mut table = Table::with_role(Role::Compare);
    for axis in &shown {
        table.column(axis, Align::Left);
    }
    if stepped {
        table.column("step", Align::Left);
    }
    if shown.is_empty() && !stepped {
        table.column("rows", Align::Left);
    }
    table.column("A", Align::Right);
    table.column("B", Align::Right);
    table.column("B/A (means)", Align::Right);
    table.column("95 % interval", Align::Right);
    table.column("change", Align::Right);
    // The axes the comparison is about: those its sides were chosen by, with other values.
    let compared: Vec<&str> = a
        .only
        .iter()
        .filter(|(axis, value)| b.only.iter().any(|(o, v)| o == axis && v != value))
        .map(|(axis, _)| axis.as_str())
        .collect();
    let mut significant = 0usize;
    let mut within = 0usize;
    let mut differing: Vec<String> = Vec::new();
    for (ra, rb) in &pairs {
        let definitions = definition(ra).zip(definition(rb));
        let d = definitions.map(|(da, db)| Differences::between(&da, &db)).unwrap_or_default();
        let beyond = d.beyond(&compared);
        if !beyond.is_empty() {
            differing.push(format!("{}{}: {}", ra.cell.key, ra.step_suffix(), beyond.join("; ")));
        }
        let mut entries: Vec<Entry> =
            shown.iter().map(|axis| Entry::from(ra.cell.axis(axis).unwrap_or("-"))).collect();
        if stepped {
            let step = if ra.is_ramp_step() { ra.step.as_deref().unwrap_or("-") } else { "-" };
            entries.push(Entry::from(step));
        }
        if shown.is_empty() && !stepped {
            entries.push(Entry::from("all"));
        }
        entries.push(matrix::figure(ra, None, measure, &Then::NONE));
        entries.push(matrix::figure(rb, None, measure, &Then::NONE));
        match stats::ratio_of_means_95(ra.samples(measure), rb.samples(measure)) {
            Some(r) => {
                // A change between cells defined otherwise than by the compared axis is as
                // much the definition's: no significance mark, `‡` instead. One the A/A
                // control cannot tell from noise is within noise, never significant.
                let (n, m) = (ra.samples(measure).len(), rb.samples(measure).len());
                let noisy = noise.and_then(|x| noise::within_noise(r.ratio, x.sd_log, n, m));
                let noisy = noisy == Some(true) && beyond.is_empty();
                within += usize::from(noisy);
                let marked = r.significant() && beyond.is_empty() && !noisy;
                significant += usize::from(marked);
                // Coloured as the matrix is, by how much better: for seconds, a latency or a
                // cost, a ratio above 1 is worse.
                let speed = if measure.lower_is_better() { 1.0 / r.ratio } else { r.ratio };
                entries.push(Entry {
                    text: format!("{:.3}", r.ratio),
                    percent: Some(speed * 100.0),
                    figure: None,
                    then: None,
                });
                entries.push(Entry::from(format!("{:.3}–{:.3}", r.low, r.high)));
                entries.push(Entry::from(format!(
                    "{:+.1} %{}",
                    (r.ratio - 1.0) * 100.0,
                    if !beyond.is_empty() {
                        " ‡"
                    } else if noisy {
                        " within noise"
                    } else if marked {
                        " *"
                    } else {
                        ""
                    }
                )));
            }
            None => {
                entries.push(Entry::from("-"));
                entries.push(Entry::from(
                    "none: needs 2 ok repetitions a side, with some spread and a mean above 0",
                ));
                entries.push(Entry::from("-"));
            }
        }
        table.row(entries);
    }
    let noisy = if noise.is_some() {
        format!(
            "; within noise where under the A/A control's smallest detectable difference \
             ({within} of {} rows)",
            pairs.len()
        )
    } else {
        String::new()
    };
    doc.push(Block::Heading(format!(
        "{} of B over A: the ratio of the means of the ok repetitions with its 95 % confidence interval; * where the interval leaves out 1 ({significant} of {} rows){noisy}:",
        measure_name(measure),
        pairs.len()
    )));
    doc.push(Block::Table(table));

    let paired = |rows: &[&Row<'_>], other: &[&Row<'_>]| -> Vec<String> {
        rows.iter()
            .filter(|r| !other.iter().any(|o| key(o) == key(r)))
            .map(|r| format!("{}{}", r.cell.key, r.step_suffix()))
            .collect()
    };
    doc.section("only in A (no row of B to compare with):".to_owned(), paired(&rows_a, &rows_b));
    doc.section("only in B:".to_owned(), paired(&rows_b, &rows_a));
    doc.section(
        format!(
            "‡ pairs whose cells are defined otherwise{} (no significance mark: the change may \
             be the definition's, not {}):",
            if compared.is_empty() {
                String::new()
            } else {
                format!(" beyond {}", compared.join(", "))
            },
            if compared.is_empty() { "the run's".to_owned() } else { compared.join(", ") }
        ),
        differing,
    );
    // Versions and the machine: listed, never a difference of definition.
    doc.section(
        "what differs between the two setups (a cause of change as likely as the one you made):"
            .to_owned(),
        setup_differences(a.exp, b.exp),
    );
    let mut legend: Vec<String> = LEGEND.iter().map(|l| (*l).to_owned()).collect();
    if noise.is_some() {
        legend.extend(NOISE_LEGEND.iter().map(|l| (*l).to_owned()));
    }
    doc.push(Block::Legend(legend));
    Ok(doc)
}

/// The definition of `row`'s cell, from its first ok repetition (or its first).
fn definition(row: &Row<'_>) -> Option<Definition> {
    let cell = row.cell;
    let rep = cell.ok_repetitions().next().or_else(|| cell.repetitions.first())?;
    Some(Definition::of(&rep.record))
}

const LEGEND: [&str; 11] = [
    "A, B      median of the ok repetitions, ±95 % interval of their mean, marked as in the",
    "          matrix: ≠ failures (n failed: all repetitions), ~ coarse clock, ! client verdict",
    "          not ok, ^ the link capped it",
    "B/A       the mean of B's ok repetitions over A's; for seconds, a latency or a cost,",
    "          above 1 is worse",
    "95 %      the ratio's confidence interval: delta method on its logarithm, Welch's",
    "          degrees of freedom",
    "change    B/A − 1; * where the interval leaves out 1: a change the repetitions' spread",
    "          cannot explain (each row is its own test: among 20 unchanged rows, expect one *);",
    "          ‡ instead where the two cells are defined otherwise than by what is compared",
    "          (load, keep-alive, protocol, server settings: listed above): never significant",
];

const NOISE_LEGEND: [&str; 4] = [
    "within    |ln B/A| under (t₀.₉₇₅ + t₀.₈₀)·s·√(1/n + 1/m): s the run-to-run variation",
    "noise     the A/A control measured (sd of ln figures), n and m the pair's ok runs, t on",
    "          n + m − 2 degrees of freedom; a change this small cannot be told from noise at",
    "          95 % with 80 % power, so it gets no *",
];

fn describe(side: &Side<'_>) -> String {
    let e = &side.exp.experiment;
    let only: Vec<String> = side.only.iter().map(|(a, v)| format!("{a}={v}")).collect();
    format!(
        "{}: experiment {} {} (started {}){}",
        side.label,
        side.exp.id.0,
        e.name,
        e.started_at,
        if only.is_empty() { String::new() } else { format!(", cells with {}", only.join(" ")) }
    )
}

/// Each `axis=value` of the side names an axis of its experiment and a value its cells have.
fn check_selection(side: &Side<'_>) -> Result<(), String> {
    for (axis, value) in &side.only {
        let axes = &side.exp.experiment.axes;
        if !axes.contains(axis) {
            return Err(format!(
                "{}: `{axis}` is not an axis of experiment {} ({}): use {}",
                side.label,
                side.exp.id.0,
                side.exp.name(),
                axes.join(", ")
            ));
        }
        let values: BTreeSet<&str> = side.exp.cells.iter().filter_map(|c| c.axis(axis)).collect();
        if !values.contains(value.as_str()) {
            return Err(format!(
                "{}: no cell has {axis}={value}: its values are {}",
                side.label,
                values.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(())
}

fn selected<'r, 'a>(rows: &'r [Row<'a>], side: &Side<'_>) -> Vec<&'r Row<'a>> {
    rows.iter()
        .filter(|r| side.only.iter().all(|(axis, value)| r.cell.axis(axis) == Some(value.as_str())))
        .collect()
}

/// An axis of a side that is not shared and that the side's own selection does not fix
/// (the other side's axis, or one only the other side chose) must take one value there, or
/// its rows could not be told apart.
fn single_valued_elsewhere(
    side: &Side<'_>,
    name: &str,
    rows: &[&Row<'_>],
    shared: &[String],
) -> Result<(), String> {
    for axis in &side.exp.experiment.axes {
        if shared.contains(axis) || side.only.iter().any(|(a, _)| a == axis) {
            continue;
        }
        let values: BTreeSet<&str> = rows.iter().filter_map(|r| r.cell.axis(axis)).collect();
        if values.len() > 1 {
            return Err(format!(
                "{name} ({}): its cells take {} values on `{axis}` ({}), which the other side does not tell apart: choose one, e.g. {}:{axis}={}",
                side.label,
                values.len(),
                values.iter().copied().collect::<Vec<_>>().join(", "),
                side.label,
                values.iter().next().copied().unwrap_or("VALUE")
            ));
        }
    }
    Ok(())
}

/// The setup facts that differ: environment entries (kernel, CPUs, sysctls …), herd's
/// version, and the versions of the programs each side ran.
pub(crate) fn setup_differences(a: &StoredExperiment, b: &StoredExperiment) -> Vec<String> {
    let mut lines = Vec::new();
    let (ea, eb) = (&a.experiment, &b.experiment);
    if ea.herd_version != eb.herd_version || ea.methodology_version != eb.methodology_version {
        lines.push(format!(
            "herd: {} (methodology {}) → {} (methodology {})",
            ea.herd_version, ea.methodology_version, eb.herd_version, eb.methodology_version
        ));
    }
    let get = |env: &[(String, String)], k: &str| {
        env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone())
    };
    let mut keys: Vec<&str> = Vec::new();
    for (k, _) in ea.environment.iter().chain(&eb.environment) {
        if !keys.contains(&k.as_str()) && !UNSTABLE.contains(&k.as_str()) {
            keys.push(k);
        }
    }
    for k in keys {
        let (va, vb) = (get(&ea.environment, k), get(&eb.environment, k));
        if va != vb {
            let show = |v: Option<String>| v.unwrap_or_else(|| "(not recorded)".to_owned());
            lines.push(format!("{k}: {} → {}", show(va), show(vb)));
        }
    }
    let programs = |e: &StoredExperiment| -> BTreeSet<String> {
        let mut set = BTreeSet::new();
        for r in e.cells.iter().flat_map(|c| &c.repetitions) {
            set.insert(format!("client {} {}", r.record.client.tool, r.record.client.version));
            for s in &r.record.servers {
                set.insert(format!("{} {}", s.program, s.version));
            }
        }
        set
    };
    let (pa, pb) = (programs(a), programs(b));
    for p in pa.difference(&pb) {
        lines.push(format!("only A ran {p}"));
    }
    for p in pb.difference(&pa) {
        lines.push(format!("only B ran {p}"));
    }
    lines
}
