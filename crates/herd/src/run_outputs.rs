//! What a run writes, for `herd run` and `herd cluster run` alike: `--series`, `--hlog` and the
//! live line behind herd_run's writer thread, the `--json` file, and the line a stepped run
//! prints as each step ends. Both commands open all of it before any load is sent, so that a
//! path that cannot be written costs no run and no agent is started for nothing.

use std::fs;
use std::io::{self, IsTerminal as _, Write};
use std::path::PathBuf;

use anyhow::Context as _;
use herd_run::hlog::Hlog;
use herd_run::metrics::MetricsFeed;
use herd_run::series::Series;
use herd_run::{summary, Outputs, RunPlan, RunSetup, SecondObserver, StepReport};

use crate::live::Live;
use crate::run_metrics::RunMetrics;
use crate::tui::Tui;

/// The run's outputs, opened: the writer thread (none when nothing is written while the run
/// goes) and the `--json` file. The fields are apart because each command finishes them at
/// its own moment.
pub(crate) struct RunOutputs {
    pub(crate) writer: Option<Outputs>,
    pub(crate) json: JsonFile,
    /// `--metrics-listen`'s endpoint, fed by the writer thread.
    pub(crate) metrics: Option<RunMetrics>,
    /// `--tui`'s view, fed by the writer thread, in place of the live line.
    pub(crate) tui: Option<Tui>,
}

impl RunOutputs {
    /// Creates every file `plan` names but `--html` (written from the result alone), and starts
    /// the writer thread. The live line only on a terminal, so that logs and pipes never see
    /// it.
    pub(crate) fn open(
        plan: &RunPlan,
        metrics: Option<RunMetrics>,
        tui: Option<Tui>,
    ) -> anyhow::Result<RunOutputs> {
        let stepped = plan.is_stepped();
        let outputs = &plan.outputs;
        let series = outputs.series.as_deref().map(|p| Series::create(p, stepped)).transpose()?;
        let hlog = outputs.hlog.as_deref().map(|p| Hlog::create(p, &plan.url.text)).transpose()?;
        let json = JsonFile::create(&outputs.json)?;
        // The view, when there is one, in place of the live line.
        let live = match &tui {
            Some(t) => Some(t.observer()),
            None => io::stderr().is_terminal().then(|| {
                Box::new(Live::new(stepped.then(|| plan.steps().len()))) as Box<dyn SecondObserver>
            }),
        };
        let observer = match &metrics {
            Some(m) => Some(Box::new(MetricsFeed::new(m.figures.clone(), live)) as _),
            None => live,
        };
        let writer = Outputs::start(series, hlog, observer)?;
        Ok(RunOutputs { writer, json, metrics, tui })
    }
}

/// The `--json` file, created before the run so that a bad path never costs a whole run;
/// written once, with the result.
#[derive(Debug)]
pub(crate) struct JsonFile(Option<(PathBuf, fs::File)>);

impl JsonFile {
    /// Creates `path`'s file (truncated); nothing when `--json` was not given.
    pub(crate) fn create(path: &Option<PathBuf>) -> anyhow::Result<JsonFile> {
        let Some(path) = path else { return Ok(JsonFile(None)) };
        let file = fs::File::create(path)
            .with_context(|| format!("cannot write --json {}", path.display()))?;
        Ok(JsonFile(Some((path.clone(), file))))
    }

    /// Writes the result into the file, when there is one.
    pub(crate) fn write(self, json: &str) -> anyhow::Result<()> {
        let Some((path, mut file)) = self.0 else { return Ok(()) };
        file.write_all(json.as_bytes())
            .with_context(|| format!("cannot write --json {}", path.display()))
    }
}

/// A stepped run's summary line per step, printed as each step ends. A write that fails ends
/// the printing but not the run: the error is said once the run is over ([`StepLines::finish`]).
#[derive(Debug)]
pub(crate) struct StepLines {
    stepped: bool,
    printed: io::Result<()>,
}

impl StepLines {
    pub(crate) fn new(plan: &RunPlan) -> StepLines {
        StepLines { stepped: plan.is_stepped(), printed: Ok(()) }
    }

    /// Step `k` has ended with `step`; nothing for a single run, whose summary comes whole.
    pub(crate) fn print(
        &mut self,
        out: &mut impl Write,
        k: usize,
        setup: &RunSetup,
        step: &StepReport,
    ) {
        if self.stepped && self.printed.is_ok() {
            self.printed = summary::write_step(out, k, setup, step).and_then(|()| out.flush());
        }
    }

    /// The first write that failed, if any.
    pub(crate) fn finish(self) -> anyhow::Result<()> {
        self.printed.context("cannot write the summary")
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    /// A writer that refuses every write.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("disk full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A closed-loop run of `http://127.0.0.1:1/`: one result, or a step per count of
    /// connections in `steps`.
    fn plan(steps: &[u32]) -> RunPlan {
        use herd_run::plan::{Load, Pace, Stop, DEFAULT_DURATION};
        let pace = Pace::Closed { think: None };
        let load = match steps {
            [] => Load::Single {
                connections: NonZeroU32::MIN,
                stop: Stop::After(DEFAULT_DURATION),
                pace,
            },
            _ => Load::Steps {
                clients: steps.iter().filter_map(|&c| NonZeroU32::new(c)).collect(),
                step: DEFAULT_DURATION,
                pace,
            },
        };
        RunPlan::new("http://127.0.0.1:1/".parse().expect("a URL"), load)
    }

    #[test]
    fn no_json_flag_writes_nothing() {
        let json = JsonFile::create(&None).expect("nothing to create");
        json.write("{}").expect("nothing to write");
    }

    #[test]
    fn the_json_file_is_created_first_and_written_last() {
        let dir = std::env::temp_dir().join(format!("herd-json-file-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("a directory");
        let path = dir.join("run.json");
        let json = JsonFile::create(&Some(path.clone())).expect("created");
        assert_eq!(fs::read_to_string(&path).expect("exists"), "");
        json.write("{\"a\":1}").expect("written");
        assert_eq!(fs::read_to_string(&path).expect("exists"), "{\"a\":1}");
        fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn a_json_path_that_cannot_be_written_is_refused_before_the_run() {
        let e = JsonFile::create(&Some(PathBuf::from("/nonexistent-dir/out.json")))
            .expect_err("no such directory");
        assert!(e.to_string().starts_with("cannot write --json /nonexistent-dir/out.json"), "{e}");
    }

    /// A stepped run's first step, as `herd run --steps` wrote it (the lab's test data).
    fn a_step() -> StepReport {
        let text = include_str!("../../lab/tests/data/clients/herd-steps/run.json");
        let report = herd_run::RunReport::from_json(text).expect("herd.run.v1");
        report.steps()[0].clone()
    }

    #[test]
    fn a_single_run_prints_no_step_lines() {
        let mut lines = StepLines::new(&plan(&[]));
        lines.print(&mut Full, 1, &RunSetup::default(), &a_step());
        lines.finish().expect("nothing was printed, so nothing failed");
    }

    #[test]
    fn a_stepped_run_prints_a_line_per_step() {
        let mut lines = StepLines::new(&plan(&[1, 2]));
        let mut out = Vec::new();
        lines.print(&mut out, 1, &RunSetup::default(), &a_step());
        lines.finish().expect("written");
        assert!(!out.is_empty());
    }

    #[test]
    fn a_failed_step_line_is_said_after_the_run_and_ends_the_printing() {
        let mut lines = StepLines::new(&plan(&[1, 2]));
        lines.print(&mut Full, 1, &RunSetup::default(), &a_step());
        let mut out = Vec::new();
        lines.print(&mut out, 2, &RunSetup::default(), &a_step());
        assert!(out.is_empty(), "nothing more after a failed write");
        let e = lines.finish().expect_err("the write failed");
        assert_eq!(format!("{e:#}"), "cannot write the summary: disk full");
    }
}
