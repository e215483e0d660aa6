//! `herd report`: the tables of a stored experiment (the latest by default) as terminal
//! text, Markdown or CSV, read from the store only: nothing is measured again.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use herd_report::{Format, Options};
use herd_store::{ExperimentId, Store};

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The results store written by `herd lab run`.
    #[arg(value_name = "STORE", default_value = "herd-results.db")]
    store: PathBuf,
    /// The experiment to show (its number, from `--list`); default: the latest.
    #[arg(long, value_name = "ID")]
    experiment: Option<i64>,
    /// List the stored experiments instead.
    #[arg(long, conflicts_with_all = ["experiment", "baseline", "measure", "md", "csv"])]
    list: bool,
    /// What the percentages are of, as AXIS=VALUE (e.g. path=direct); default: the
    /// experiment's own ([report] baseline), else the first value of the first axis that varies.
    #[arg(long, value_name = "AXIS=VALUE")]
    baseline: Option<String>,
    /// The figure the matrix shows: requests_per_second, seconds, kb_per_second or
    /// connections_per_second (requests/s, named so for loads that open a connection per
    /// request); default: the experiment's own ([report] measure), else requests_per_second.
    #[arg(long, value_name = "MEASURE", value_parser = herd_report::parse_measure)]
    measure: Option<herd_store::Measure>,
    /// The same tables as Markdown.
    #[arg(long, conflicts_with = "csv")]
    md: bool,
    /// Every row's figures as CSV, one line per cell (and step).
    #[arg(long)]
    csv: bool,
}

pub(crate) fn run(args: ReportArgs) -> anyhow::Result<()> {
    let store = Store::open_existing(&args.store)
        .with_context(|| format!("cannot read the results store {}", args.store.display()))?;
    let mut out = Vec::new();
    if args.list {
        for e in store.experiments()? {
            writeln!(
                out,
                "{:>4}  {:<20} {:<12} {}  {}",
                e.id.0, e.name, e.status, e.started_at, e.title
            )?;
        }
    } else {
        let id = match args.experiment {
            Some(id) => ExperimentId(id),
            None => store.latest_experiment()?.with_context(|| {
                format!(
                    "{} holds no experiment yet: run `herd lab run` first",
                    args.store.display()
                )
            })?,
        };
        let e = store.load_experiment(id)?;
        let format = if args.md {
            Format::Markdown
        } else if args.csv {
            Format::Csv
        } else {
            Format::Text
        };
        let options = Options { baseline: args.baseline, measure: args.measure };
        herd_report::write(&e, &options, format, &mut out)?;
    }
    match std::io::stdout().lock().write_all(&out) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
