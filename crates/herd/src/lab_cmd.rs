//! `herd lab`: run an experiment (or show its plan), list the bundled ones, clean up after a
//! crash, migrate an older results store. The lab itself lives in herd-lab; this module parses flags, draws progress, prints
//! the result table and turns outcomes into exit codes.

use std::io::{self, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use herd_lab::experiment::{self, Experiment, Placed};
use herd_lab::runner::progress::{Progress, RunSummary};
use herd_lab::runner::{self, LabRun};
use herd_lab::{bundled, matrix, plan};
use herd_store::{ExperimentId, Migration, Store, SCHEMA_VERSION};
use herd_topo::cgroup::Wanted;
use indicatif::{ProgressBar, ProgressStyle};

use crate::tui::lab::LabProgress;

#[derive(Debug, Subcommand)]
pub(crate) enum LabCommand {
    /// Run an experiment: a file, or a bundled one by name (default: quickstart); or, with
    /// --resume, the rest of an unfinished one.
    Run(RunArgs),
    /// List the bundled experiments.
    List,
    /// Start one server of an experiment as the lab would (its rendered config, certificate,
    /// CPU set and document root) and keep it up for runs by hand, until Ctrl-C.
    Up {
        /// An experiment file, or a bundled one by name.
        #[arg(value_name = "EXPERIMENT")]
        experiment: String,
        /// Which of its servers.
        #[arg(long)]
        server: String,
        /// Over which protocol (h1, h1-tls, h2, h2c, h3); default: that of its first cell.
        #[arg(long, value_parser = |s: &str| s.parse::<herd_stats::Protocol>().map_err(|e| e.to_string()))]
        protocol: Option<herd_stats::Protocol>,
    },
    /// Stop what a crashed lab run left running and remove its run directory; with --hosts,
    /// on the experiment's hosts too.
    Clean {
        /// An experiment file with [hosts]: each host's helper stops what helpers killed
        /// there left (their programs, cgroups, run directories)
        #[arg(long, value_name = "EXPERIMENT")]
        hosts: Option<String>,
    },
    /// The user's own machines of an experiment's `[hosts]`, over SSH: what each has, and
    /// this herd copied there (docs/hosts.md).
    Hosts {
        #[command(subcommand)]
        command: crate::lab_hosts::HostsCommand,
    },
    /// Bring a results store written by an older herd to this herd's schema, after keeping
    /// a copy of it as it is (`STORE.schema-N.bak`); `herd report` reads only current stores.
    Migrate {
        /// The results store to migrate.
        #[arg(value_name = "STORE")]
        store: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// An experiment file (.toml) or the name of a bundled experiment (`herd lab list`).
    #[arg(value_name = "EXPERIMENT", default_value = "quickstart")]
    experiment: String,
    /// Print every cell, command line and rendered config; run and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The results store (SQLite), created if missing.
    #[arg(long, value_name = "FILE", default_value = "herd-results.db")]
    store: PathBuf,
    /// Run the rest of an unfinished experiment of the store: experiment ID, or the most
    /// recent one stopped by Ctrl-C or left running by a herd that died. Its definition,
    /// order seed and stored runs come from the store (so no EXPERIMENT); only the runs not
    /// stored yet run. Refused where herd, a client, the client's CPUs or the machine
    /// changed since it began.
    #[arg(
        long,
        value_name = "ID",
        num_args = 0..=1,
        value_parser = resume_id,
        conflicts_with_all = ["experiment", "dry_run"]
    )]
    resume: Option<Option<ExperimentId>>,
    /// One line per run instead of a progress bar.
    #[arg(long)]
    no_progress: bool,
    /// A live view instead of the progress bar: the matrix filling in with each run's
    /// figure, the run in flight second by second (herd's client), the lab's notes
    #[arg(long, conflicts_with_all = ["no_progress", "dry_run"])]
    tui: bool,
    /// Each measured run of herd's client serves its live figures at http://ADDR/metrics for
    /// Prometheus, labelled with its cell and repetition (docs/metrics.md); the other clients
    /// serve none. ADDR is IP:PORT, e.g. 127.0.0.1:9464
    #[arg(long, value_name = "ADDR", value_parser = crate::run_args::parse_listen)]
    metrics_listen: Option<std::net::SocketAddr>,
    /// With --metrics-listen: after each run, keep its final figures up until a scrape read
    /// them, at most this long (no wait when nothing scraped during the run)
    #[arg(long, value_name = "DURATION", default_value = "5s", requires = "metrics_listen")]
    metrics_linger: herd_stats::units::TimeSpan,
    /// Profile the servers with `perf record -g`, as `[runner] profile = "perf"` does: one
    /// extra run of each cell, kept apart from its repetitions, whose flame graph the HTML
    /// report shows.
    #[arg(long)]
    profile: bool,
}

/// Exit code when some runs failed (their reasons are stored and printed).
const SOME_RUNS_FAILED: u8 = 3;

pub(crate) fn main(cmd: LabCommand) -> ExitCode {
    let result = match cmd {
        LabCommand::Run(args) => run(args),
        LabCommand::List => list().map(|()| ExitCode::SUCCESS),
        LabCommand::Up { experiment, server, protocol } => {
            up(&experiment, &server, protocol).map(|()| ExitCode::SUCCESS)
        }
        LabCommand::Clean { hosts } => clean().and_then(|()| match hosts {
            Some(file) => crate::lab_hosts::clean(&file),
            None => Ok(ExitCode::SUCCESS),
        }),
        LabCommand::Migrate { store } => migrate(&store).map(|()| ExitCode::SUCCESS),
        LabCommand::Hosts { command } => return crate::lab_hosts::main(command),
    };
    result.unwrap_or_else(|e| {
        eprintln!("herd lab: {e:#}");
        ExitCode::FAILURE
    })
}

/// Reads the experiment named on the command line: a file when one exists at that path,
/// otherwise a bundled experiment of that name.
pub(crate) fn load(name: &str) -> anyhow::Result<Experiment> {
    let path = Path::new(name);
    if path.exists() || name.ends_with(".toml") {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read experiment file {name}"))?;
        // Not "try --dry-run": a file that does not parse fails the dry run the same way.
        return experiment::parse(&text, name)
            .map_err(|e| anyhow::anyhow!("{e}\nhint: every key is in docs/experiment.md"));
    }
    match bundled::find(name) {
        Some(b) => Ok(experiment::parse(b.text, &format!("bundled:{}", b.name))?),
        None => {
            let names: Vec<&str> = bundled::BUNDLED.iter().map(|b| b.name).collect();
            anyhow::bail!(
                "no experiment file {name} and no bundled experiment of that name: give a .toml file or one of {}",
                names.join(", ")
            )
        }
    }
}

/// `--resume`'s value: an experiment's number.
fn resume_id(text: &str) -> Result<ExperimentId, String> {
    text.parse::<i64>().ok().filter(|&n| n > 0).map(ExperimentId).ok_or_else(|| {
        format!(
            "`{text}` is not an experiment's number: --resume reads the experiment from the store, \
             so give the number `herd report STORE --list` shows, or nothing for the most recent \
             unfinished one"
        )
    })
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.tui {
        // Before anything is read or run.
        crate::tui::terminal_or("--no-progress (a line per run)")?;
    }
    // A resumed experiment is read from the store, as it ran, never from its file.
    let (mut e, resume, store) = match args.resume {
        Some(id) => {
            let store =
                Store::open_existing(&args.store).context("cannot open the results store")?;
            let resume = runner::resume::find(&store, id)?;
            // What the interrupted run left after a kill -9 (its smbd, namespaces, run
            // directory) goes first, as `herd lab clean` would: only runs whose herd is gone.
            let c = herd_topo::registry::clean(&std::env::temp_dir());
            if !(c.stopped.is_empty() && c.dirs.is_empty() && c.namespaces.is_empty()) {
                eprintln!("herd lab: before resuming, {}", cleaned(&c));
            }
            for (dir, err) in &c.errors {
                eprintln!("herd lab: cannot remove {} left by a crashed run: {err}", dir.display());
            }
            (resume.experiment()?, Some(resume), Some(store))
        }
        None => (load(&args.experiment)?, None, None),
    };
    if args.profile {
        e.profile_with(experiment::Profiler::Perf).map_err(anyhow::Error::msg)?;
    }
    match e.place(&herd_topo::cpuset::usable()) {
        Placed::AsWritten => {}
        Placed::Apart { servers, client } => {
            let cpus = |set: &herd_topo::cpuset::CpuSet| {
                let one = set.cpus().is_some_and(|c| c.len() == 1);
                format!("{} {set}", if one { "CPU" } else { "CPUs" })
            };
            eprintln!(
                "herd lab: placement apart: the servers on {}, the client on {}",
                cpus(&servers),
                cpus(&client)
            )
        }
        Placed::Shared => eprintln!(
            "herd lab: placement apart, but herd may use one CPU here: the client and the servers \
             share it, so client verdicts will warn (suspect, client-bound) that they competed \
             for it"
        ),
    }
    let herd_exe = std::env::current_exe().context("cannot find herd's own executable")?;
    let plan_text = plan::plan(&e, &herd_exe);
    if args.dry_run {
        write_stdout(plan_text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    // Before the store is opened: a machine that cannot run the experiment leaves no file.
    let mut checked = runner::preflight(&e, &herd_exe)?;
    if let Some(said) = runner::reach_hosts(&mut checked, &e, env!("HERD_VERSION"))? {
        eprintln!("herd lab: {said}");
    }
    let mut store = match store {
        Some(store) => store,
        None => Store::open(&args.store).context("cannot open the results store")?,
    };
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = Arc::clone(&cancel);
        ctrlc::set_handler(move || {
            if cancel.swap(true, Ordering::Relaxed) {
                eprintln!("herd lab: already stopping: the servers and client of the run in flight are being stopped");
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    let cells = checked.runnable();
    eprintln!(
        "herd lab: {} ({} cells x {}-{} repetitions), results to {}",
        e.name,
        cells,
        e.repetitions.min,
        e.repetitions.max,
        args.store.display()
    );
    if let (Some(twin), Some(c)) = (checked.control_twin(), &e.runner.controls) {
        eprintln!(
            "herd lab: A/A control: {} runs {} more times as its own twin ({}), interleaved with \
             the others: the report states the noise floor it measures",
            c.of, c.runs, twin.key
        );
    }
    // How long, before anything runs; a resumed experiment's runs left take less.
    if resume.is_none() {
        eprintln!("herd lab: this takes {}", herd_lab::estimate::estimate(&e).sentence());
    }
    if let Some(smoke) = e.repetitions.smoke() {
        eprintln!("herd lab: {smoke}");
    }
    let accounting = checked.cpu_accounting();
    let asked = Wanted::from_env().ok();
    let why = match accounting {
        _ if accounting.is_cgroup() => "",
        _ if asked == Some(Wanted::Only(accounting)) => " (as HERD_SERVER_CPU asks)",
        _ => " (herd cannot make a cgroup here; as root it reads each server's own)",
    };
    // On a server host, the line on that host said how it reads them.
    if e.hosts.as_ref().is_none_or(|h| h.server.is_none()) {
        eprintln!("herd lab: the servers' CPU time: {accounting}{why}");
    }
    if !checked.refused().is_empty() {
        eprintln!(
            "herd lab: {} of {} cells refused, before anything ran (`--dry-run` lists them):\n  {}",
            checked.refused().len(),
            cells + checked.refused().len(),
            runner::refused_reasons(checked.refused()).join("\n  ")
        );
    }
    // The view takes the terminal last: what comes before is said on it as lines.
    let tty = io::stderr().is_terminal() && !args.no_progress;
    let (mut progress, live_series): (Box<dyn Progress>, _) = if args.tui {
        let view = LabProgress::start(&e.name, &cancel)?;
        let series = view.series();
        (Box::new(view), Some(series))
    } else if tty {
        (Box::new(Bar::default()), None)
    } else {
        (Box::new(Lines), None)
    };
    let finished = runner::run(
        checked,
        LabRun {
            experiment: &e,
            store: &mut store,
            herd_exe,
            herd_version: env!("HERD_VERSION").to_string(),
            tmp: std::env::temp_dir(),
            plan: plan_text,
            cancel: &cancel,
            progress: progress.as_mut(),
            resume: resume.as_ref(),
            metrics: args.metrics_listen.map(|a| (a, args.metrics_linger)),
            live_series,
        },
    )?;
    drop(progress);
    let stored = store.load_experiment(finished.experiment)?;
    let mut table = Vec::new();
    herd_report::experiment_table(&stored, &mut table)?;
    write_stdout(&table)?;
    let removed = if finished.run_dir_removed { "removed" } else { "could not remove" };
    if finished.interrupted {
        eprintln!(
            "herd: interrupted after {} of {} runs; results kept in {} (experiment {}); stopped {} processes; {removed} {}; `herd lab run --store {} --resume {}` runs the rest",
            finished.runs_done,
            finished.runs_planned,
            args.store.display(),
            finished.experiment.0,
            finished.stopped,
            finished.run_dir.display(),
            args.store.display(),
            finished.experiment.0,
        );
        return Ok(ExitCode::from(crate::INTERRUPTED));
    }
    let resumed = finished.resumed.map(|n| format!(", resumed after {n}")).unwrap_or_default();
    eprintln!(
        "herd lab: {} run{} in {} (experiment {}{resumed}, order seed {}); `herd report {}` shows them again, `herd report {} --html report.html` as a page with charts",
        finished.runs_done,
        if finished.runs_done == 1 { "" } else { "s" },
        args.store.display(),
        finished.experiment.0,
        finished.seed,
        args.store.display(),
        args.store.display()
    );
    if let Some(failed) = herd_report::failed_runs_summary(finished.runs_done, &finished.failures) {
        eprintln!("herd lab: {failed}; their reasons are under the table and in the store");
        return Ok(ExitCode::from(SOME_RUNS_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

fn list() -> anyhow::Result<()> {
    let mut out = String::new();
    for b in bundled::BUNDLED {
        let e = experiment::parse(b.text, &format!("bundled:{}", b.name))?;
        // The cells that run: a refused one never does (`--dry-run` says why).
        let cells = matrix::runnable(&e).len();
        out.push_str(&format!(
            "{:<20} {:>3} cells x {}-{} reps  {}\n",
            b.name, cells, e.repetitions.min, e.repetitions.max, e.title
        ));
    }
    out.push_str(
        "\nrun one with `herd lab run NAME`; see its plan with `herd lab run --dry-run NAME`\n",
    );
    write_stdout(out.as_bytes())
}

/// `herd lab up`: the server up, what to point a client at, until Ctrl-C.
fn up(name: &str, server: &str, protocol: Option<herd_stats::Protocol>) -> anyhow::Result<()> {
    let mut e = load(name)?;
    if let Placed::Apart { servers, .. } = e.place(&herd_topo::cpuset::usable()) {
        eprintln!("herd lab up: on CPU(s) {servers}, as the lab places servers");
    }
    let herd_exe = std::env::current_exe().context("cannot find herd's own executable")?;
    let mut checked = runner::preflight(&e, &herd_exe)?;
    // With a `[hosts]` server, the server starts there (client hosts play no part).
    if let Some(said) = runner::reach_server_host(&mut checked, &e, env!("HERD_VERSION"))? {
        eprintln!("herd lab up: {said}");
    }
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = Arc::clone(&cancel);
        ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed))
            .context("cannot install the Ctrl-C handler")?;
    }
    let want = runner::up::UpRequest { server, protocol, cancel: &cancel };
    let mut said = |u: &runner::up::Up| {
        let flag = match u.protocol {
            herd_stats::Protocol::H2 => " --h2",
            herd_stats::Protocol::H2c => " --h2c",
            herd_stats::Protocol::H3 => " --h3",
            herd_stats::Protocol::H1 | herd_stats::Protocol::H1Tls => "",
        };
        let trust = u.ca_file.as_ref().map(|ca| format!(" --ca-file {}", ca.display()));
        let mut text = format!(
            "herd lab up: {server} over {} at {} (Ctrl-C stops it)\n  started: {}\n  files:   {}\n",
            u.protocol,
            u.url,
            u.processes.join(", "),
            u.dir.display()
        );
        if let Some(ca) = &u.ca_file {
            text.push_str(&format!("  trust:   {} (curl --cacert FILE)\n", ca.display()));
        }
        text.push_str(&format!(
            "  try:     herd run{flag}{} -d 5s {}\n",
            trust.unwrap_or_default(),
            u.url
        ));
        let _ = write_stdout(text.as_bytes());
    };
    runner::up::up(&e, checked, &want, &std::env::temp_dir(), &mut said)?;
    eprintln!("herd lab up: stopped, its files removed");
    Ok(())
}

fn clean() -> anyhow::Result<()> {
    let c = herd_topo::registry::clean(&std::env::temp_dir());
    for (dir, owner) in &c.in_use {
        eprintln!(
            "herd lab clean: left {} alone: its lab run (pid {owner}) is still going",
            dir.display()
        );
    }
    for (dir, err) in &c.errors {
        eprintln!("herd lab clean: cannot remove {}: {err}", dir.display());
    }
    println!("herd lab clean: {}", cleaned(&c));
    if !c.errors.is_empty() {
        anyhow::bail!("some run directories, namespaces or cgroups could not be removed");
    }
    Ok(())
}

/// What a clean did: `stopped 1 processes: smbd (pid 7); removed 1 run directories, …`.
fn cleaned(c: &herd_topo::registry::Cleaned) -> String {
    let stopped: Vec<String> =
        c.stopped.iter().map(|(pid, name)| format!("{name} (pid {pid})")).collect();
    let cgroups: Vec<String> = c.cgroups.iter().map(|d| d.display().to_string()).collect();
    format!(
        "stopped {} processes{}; removed {} run directories, {} network namespaces{} and {} \
         cgroups{}",
        c.stopped.len(),
        if stopped.is_empty() { String::new() } else { format!(": {}", stopped.join(", ")) },
        c.dirs.len(),
        c.namespaces.len(),
        if c.namespaces.is_empty() {
            String::new()
        } else {
            format!(" ({})", c.namespaces.join(", "))
        },
        cgroups.len(),
        if cgroups.is_empty() { String::new() } else { format!(" ({})", cgroups.join(", ")) }
    )
}

fn migrate(store: &Path) -> anyhow::Result<()> {
    match Store::migrate_file(store)? {
        Migration::Current => println!(
            "herd lab migrate: {} is at schema version {SCHEMA_VERSION} already: nothing to do",
            store.display()
        ),
        Migration::Migrated { from, kept } => println!(
            "herd lab migrate: migrated {} from schema version {from} to {SCHEMA_VERSION}; the \
             store as it was is kept as {}",
            store.display(),
            kept.display()
        ),
    }
    Ok(())
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    match io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

/// A progress bar with the ETA over the whole matrix (terminals).
#[derive(Default)]
struct Bar {
    bar: Option<ProgressBar>,
}

impl Progress for Bar {
    fn begin(&mut self, done: usize, planned: usize, _cells: usize) {
        let bar = ProgressBar::new(planned as u64);
        // A resumed experiment starts where it stopped; the ETA counts this run's runs only.
        bar.set_position(done as u64);
        bar.reset_eta();
        let style = ProgressStyle::with_template(
            "{bar:30.cyan/blue} {pos}/{len} runs  {elapsed} elapsed, ETA {eta}  {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }
    fn run_started(&mut self, _n: usize, _planned: usize, cell: &matrix::Cell, rep: u32) {
        if let Some(b) = &self.bar {
            b.set_message(format!("rep {}: {}", rep + 1, cell.key));
        }
    }
    fn run_finished(&mut self, s: &RunSummary) {
        if let Some(b) = &self.bar {
            if let Some(reason) = s.outcome.failure_reason() {
                b.println(format!("failed: {} rep {}: {reason}", s.cell_key, s.repetition + 1));
            }
            b.inc(1);
        }
    }
    fn replanned(&mut self, planned: usize, why: &str) {
        if let Some(b) = &self.bar {
            b.set_length(planned as u64);
            b.println(why);
        }
    }
    fn note(&mut self, text: &str) {
        if let Some(b) = &self.bar {
            b.println(text);
        }
    }
    fn end(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// A line per run (logs, CI, pipes).
struct Lines;

impl Progress for Lines {
    fn begin(&mut self, _done: usize, planned: usize, cells: usize) {
        eprintln!("herd lab: {planned} runs planned over {cells} cells");
    }
    fn run_started(&mut self, _: usize, _: usize, _: &matrix::Cell, _: u32) {}
    fn run_finished(&mut self, s: &RunSummary) {
        match s.outcome.failure_reason() {
            Some(reason) => {
                eprintln!("  {} rep {}: FAILED: {reason}", s.cell_key, s.repetition + 1)
            }
            None => eprintln!(
                "  {} rep {}: {}, {} failed{} ({:.1} s)",
                s.cell_key,
                s.repetition + 1,
                match s.mbit_per_second {
                    Some(mbit) => format!("{mbit:.1} Mbit/s"),
                    None => format!("{:.0} req/s", s.requests_per_second),
                },
                s.failed,
                s.client_flag.as_ref().map(|f| format!(", client {f}")).unwrap_or_default(),
                s.seconds
            ),
        }
    }
    fn replanned(&mut self, planned: usize, why: &str) {
        eprintln!("herd lab: {why} (now {planned} runs)");
    }
    fn note(&mut self, text: &str) {
        eprintln!("herd lab: {text}");
    }
    fn end(&mut self) {}
}
