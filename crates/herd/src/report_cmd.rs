//! `herd report`: the tables of stored experiments (the latest by default) as terminal
//! text, Markdown or CSV, or one self-contained HTML page with charts; a comparison
//! (`--compare`, `report_compare.rs`); or a history's change points (`--history NAME`, exit 3
//! with `--fail-on-change` when there is one). Read from the store only: nothing is measured
//! again.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use herd_report::{CompareFormat, Format, Options};
use herd_store::{ExperimentId, Store};

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The results store written by `herd lab run`.
    #[arg(value_name = "STORE", default_value = "herd-results.db")]
    store: PathBuf,
    /// The experiment to show (its number, from `--list`); repeat it, or give several
    /// separated by commas, to show more; default: the latest.
    #[arg(long, value_name = "ID", value_delimiter = ',', conflicts_with = "all")]
    experiment: Vec<i64>,
    /// Show every stored experiment, oldest first.
    #[arg(long)]
    all: bool,
    /// List the stored experiments instead.
    #[arg(long, conflicts_with_all = ["experiment", "all", "baseline", "measure", "md", "csv", "html"])]
    list: bool,
    /// What the percentages are of, as AXIS=VALUE (e.g. path=direct); default: the
    /// experiment's own ([report] baseline), else the first value of the first axis that varies.
    #[arg(long, value_name = "AXIS=VALUE")]
    baseline: Option<String>,
    /// The figure the matrix shows: requests_per_second, seconds, kb_per_second,
    /// mbit_per_second or connections_per_second (requests/s, named so for loads that open a connection per
    /// request); p50, p99 or p99.9 (latency from the intended send, each repetition's own,
    /// in ms); cpu_per_request (the server's CPU µs per request). Default: the experiment's
    /// own ([report] measure), else requests_per_second.
    #[arg(long, value_name = "MEASURE", value_parser = herd_report::parse_measure)]
    measure: Option<herd_store::Measure>,
    /// The same tables as Markdown.
    #[arg(long, conflicts_with_all = ["csv", "html"])]
    md: bool,
    /// Every row's figures as CSV, one line per cell (and step); one experiment only (its
    /// axes are columns).
    #[arg(long, conflicts_with = "html")]
    csv: bool,
    /// Write one self-contained HTML page instead (tables, charts, every cell's details and
    /// the disclosure), to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Compare two runs: B's figures over A's with 95 % intervals and which changes are
    /// significant. Each is [STORE][:ID][:AXIS=VALUE,…]: a store's latest experiment
    /// (`old.db`), an experiment (`old.db:3`, or `3` in STORE), or some of its cells
    /// (`3:server=apache` against `3:server=nginx`).
    #[arg(
        long,
        num_args = 2,
        value_names = ["A", "B"],
        action = clap::ArgAction::Set,
        conflicts_with_all = ["experiment", "all", "list", "baseline", "csv"]
    )]
    compare: Vec<String>,
    /// Draw a differential flame graph of two profiled cells of one experiment (the latest,
    /// or --experiment ID): B's servers' stacks, red where B spent more CPU time than A,
    /// blue where less. Each cell is named by its key or by AXIS=VALUE pairs joined by
    /// commas (`server=nginx`). Needs a run with `[runner] profile = "perf"`.
    #[arg(
        long,
        num_args = 2,
        value_names = ["CELL_A", "CELL_B"],
        action = clap::ArgAction::Set,
        conflicts_with_all = ["all", "list", "baseline", "measure", "md", "csv", "html", "compare"]
    )]
    diff_profile: Vec<String>,
    /// With --diff-profile: write the SVG to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE", requires = "diff_profile")]
    output: Option<PathBuf>,
    /// The experiments stored under NAME, oldest first, as a history: each cell's series of
    /// the measure (each run's median) with its change points (E-Divisive means with
    /// Student's t-test, as Apache Otava) and what differed at each.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["experiment", "all", "list", "baseline", "csv", "html", "compare", "diff_profile"]
    )]
    history: Option<String>,
    /// With --history: exit 3 when any change point is found (for CI gates).
    #[arg(long, requires = "history")]
    fail_on_change: bool,
    /// With --history: the largest p-value a change point may have [default: 0.001]
    #[arg(long, value_name = "P", requires = "history", value_parser = p_value)]
    max_p_value: Option<f64>,
    /// With --history: count only changes larger than PERCENT (e.g. 5) [default: 0, any]
    #[arg(long, value_name = "PERCENT", requires = "history", value_parser = percent)]
    min_change: Option<f64>,
}

/// How a report ended, for the exit code.
pub(crate) enum Outcome {
    Shown,
    /// `--history … --fail-on-change` found a change point (exit 3).
    ChangeFound,
}

fn p_value(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err(format!(
            "`{text}` is not a p-value: give a number above 0 and at most 1, e.g. 0.001"
        )),
    }
}

fn percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if (0.0..1000.0).contains(&p) => Ok(p),
        _ => Err(format!("`{text}` is not a percentage: give a number from 0, e.g. 5")),
    }
}

pub(crate) fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    if let Some(name) = &args.history {
        return history(&args, name);
    }
    show(args).map(|()| Outcome::Shown)
}

/// `--history NAME`: the experiments of that name, oldest first, judged for change points.
fn history(args: &ReportArgs, name: &str) -> anyhow::Result<Outcome> {
    let store = Store::open_read_only(&args.store).context("cannot read the results store")?;
    let all = store.experiments()?;
    let ids: Vec<ExperimentId> = all.iter().filter(|e| e.name == name).map(|e| e.id).collect();
    if ids.is_empty() {
        let names: std::collections::BTreeSet<&str> = all.iter().map(|e| e.name.as_str()).collect();
        if names.is_empty() {
            anyhow::bail!(
                "{} holds no experiment yet: run `herd lab run` first",
                args.store.display()
            );
        }
        anyhow::bail!(
            "--history {name}: no experiment in {} is named so; its experiments are named {}",
            args.store.display(),
            names.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    // Ids grow with each experiment begun: their order is the order they were run in.
    let mut runs = Vec::with_capacity(ids.len());
    for id in ids {
        runs.push(store.load_experiment(id)?);
    }
    let settings = herd_stats::change_points::Settings {
        max_p_value: args.max_p_value.unwrap_or(0.001),
        min_magnitude: args.min_change.unwrap_or(0.0) / 100.0,
        ..herd_stats::change_points::Settings::default()
    };
    let mut out = Vec::new();
    let found = herd_report::write_history(name, &runs, args.measure, &settings, args.md, &mut out)
        .with_context(|| format!("--history {name}"))?;
    print(&out)?;
    Ok(if found > 0 && args.fail_on_change { Outcome::ChangeFound } else { Outcome::Shown })
}

fn show(args: ReportArgs) -> anyhow::Result<()> {
    if let [a, b] = args.compare.as_slice() {
        let format = if args.md {
            CompareFormat::Markdown
        } else if args.html.is_some() {
            CompareFormat::Html
        } else {
            CompareFormat::Text
        };
        let page = crate::report_compare::run(&args.store, a, b, args.measure, format)?;
        return match &args.html {
            Some(path) => {
                write_page(path, &page)?;
                eprintln!(
                    "herd report: wrote {} (the comparison); open it in a browser",
                    path.display()
                );
                Ok(())
            }
            None => print(&page),
        };
    }
    let store = Store::open_read_only(&args.store).context("cannot read the results store")?;
    let mut out = Vec::new();
    if args.list {
        for e in store.experiments()? {
            writeln!(
                out,
                "{:>4}  {:<20} {:<12} {}  {}",
                e.id.0, e.name, e.status, e.started_at, e.title
            )?;
        }
        return print(&out);
    }
    let ids = chosen(&store, &args)?;
    if let [a, b] = args.diff_profile.as_slice() {
        let [id] = ids.as_slice() else {
            anyhow::bail!(
                "--diff-profile compares two cells of one experiment: give one --experiment ID"
            );
        };
        let exp = store.load_experiment(*id)?;
        herd_report::write_diff_profile(&exp, a, b, &mut out)?;
        return match &args.output {
            Some(path) => {
                write_page(path, &out)?;
                eprintln!("herd report: wrote {} (the differential flame graph)", path.display());
                Ok(())
            }
            None => print(&out),
        };
    }
    let mut experiments = Vec::with_capacity(ids.len());
    for id in ids {
        experiments.push(store.load_experiment(id)?);
    }
    let options = Options { baseline: args.baseline, measure: args.measure };
    if let Some(path) = &args.html {
        let source = args
            .store
            .file_name()
            .map_or_else(|| args.store.display().to_string(), |n| n.to_string_lossy().into_owned());
        herd_report::write_html(&experiments, &options, &source, &mut out)?;
        write_page(path, &out)?;
        eprintln!(
            "herd report: wrote {} ({} experiment{}); open it in a browser",
            path.display(),
            experiments.len(),
            if experiments.len() == 1 { "" } else { "s" }
        );
        return Ok(());
    }
    let format = if args.md {
        Format::Markdown
    } else if args.csv {
        if experiments.len() > 1 {
            anyhow::bail!(
                "--csv shows one experiment at a time (its axes are its columns): give one --experiment"
            );
        }
        Format::Csv
    } else {
        Format::Text
    };
    for (i, e) in experiments.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        herd_report::write(e, &options, format, &mut out)?;
    }
    print(&out)
}

/// The experiments asked for: those named, every one, or the latest.
fn chosen(store: &Store, args: &ReportArgs) -> anyhow::Result<Vec<ExperimentId>> {
    if args.all {
        let ids: Vec<ExperimentId> = store.experiments()?.into_iter().map(|e| e.id).collect();
        if ids.is_empty() {
            anyhow::bail!(
                "{} holds no experiment yet: run `herd lab run` first",
                args.store.display()
            );
        }
        return Ok(ids);
    }
    if !args.experiment.is_empty() {
        // Each once, in the order given.
        let mut ids: Vec<ExperimentId> = Vec::new();
        for &id in &args.experiment {
            if !ids.contains(&ExperimentId(id)) {
                ids.push(ExperimentId(id));
            }
        }
        return Ok(ids);
    }
    let latest = store.latest_experiment()?.with_context(|| {
        format!("{} holds no experiment yet: run `herd lab run` first", args.store.display())
    })?;
    Ok(vec![latest])
}

/// Writes the page whole or not at all: into a file beside it, then renamed over it, so an
/// error (a full disk) never leaves half a page where a reader expects one.
pub(crate) fn write_page(path: &Path, page: &[u8]) -> anyhow::Result<()> {
    check_page_path(path)?;
    let (_, partial) = partial_of(path)?;
    let written = std::fs::write(&partial, page).and_then(|()| std::fs::rename(&partial, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(e).with_context(|| format!("cannot write the page to {}", path.display()));
    }
    Ok(())
}

/// Whether a page could be written to `path`: a file name in a directory that exists and
/// takes the page's temporary twin (`.NAME.partial`, created and removed here), so a
/// read-only directory or a name too long is found now. Run commands check it before
/// sending load, so a typo never costs a run.
pub(crate) fn check_page_path(path: &Path) -> anyhow::Result<()> {
    if path.is_dir() {
        anyhow::bail!(
            "--html {}: that is a directory; give a file name, e.g. {}",
            path.display(),
            path.join("report.html").display()
        );
    }
    let (dir, partial) = partial_of(path)?;
    if !dir.is_dir() {
        anyhow::bail!(
            "--html {}: there is no directory {} to write it in",
            path.display(),
            dir.display()
        );
    }
    std::fs::write(&partial, b"")
        .with_context(|| format!("--html {}: cannot write there", path.display()))?;
    let _ = std::fs::remove_file(&partial);
    Ok(())
}

/// The page's directory and the temporary file it is written to first.
fn partial_of(path: &Path) -> anyhow::Result<(&Path, PathBuf)> {
    let name = path.file_name().with_context(|| {
        format!("--html {:?}: give a file name, e.g. report.html", path.display().to_string())
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let partial = dir.join(format!(".{}.partial", name.to_string_lossy()));
    Ok((dir, partial))
}

fn print(out: &[u8]) -> anyhow::Result<()> {
    match std::io::stdout().lock().write_all(out) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
