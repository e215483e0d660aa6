//! The writer thread behind `--series`, `--hlog` and the live line: one thread for the whole
//! of `herd run` (every step), fed through one channel by the workers' seconds (interval.rs).
//! It merges them (merge.rs) and writes each of the run's seconds as soon as it is complete,
//! so nothing of the run's history stays in memory. The files are opened by [`Outputs::start`],
//! before any load is sent, so a path that cannot be written stops `herd run` before it runs.
//!
//! The main thread only marks the steps: [`Outputs::begin_step`] before the engine starts,
//! [`Outputs::end_step`] after it returns and the workers' last seconds are sent. `end_step`
//! waits until the step is written and the live line erased, so that what the main thread
//! prints next never lands on top of the live line.

use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime};

use anyhow::Context as _;

use super::hlog::Hlog;
use super::interval::Report;
use super::live::Live;
use super::merge::{Merge, RunSecond};
use super::series::Series;

/// The writer thread and the way to it.
#[derive(Debug)]
pub(crate) struct Outputs {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
}

/// Where a step's seconds start.
#[derive(Debug)]
pub(crate) struct StepStart {
    /// The step's number (from 1) in a stepped run.
    pub(crate) step: Option<usize>,
    /// Workers that will report (`RunSpec::worker_count`).
    pub(crate) workers: usize,
    /// The measurement start: second 0 begins here.
    pub(crate) origin: Instant,
    /// The same moment on the wall clock, for `--hlog`'s StartTime.
    pub(crate) origin_wall: SystemTime,
}

/// What the writer thread receives.
#[derive(Debug)]
pub(crate) enum Msg {
    Begin(StepStart),
    Report(Report),
    /// Every worker of the step has ended; answer on the sender once the step is written.
    End(Sender<()>),
}

/// A worker's way to the writer thread.
#[derive(Debug, Clone)]
pub(crate) struct Feed(Sender<Msg>);

impl Feed {
    pub(crate) fn send(&self, r: Report) {
        // The writer only goes away after the run, or after a panic that `finish` reports;
        // either way the worker has nothing better to do than go on.
        let _ = self.0.send(Msg::Report(r));
    }
}

impl Outputs {
    /// Opens the outputs and starts the writer; `None` when no output needs the run's
    /// seconds, so that the recorders keep none. `steps`: how many steps a stepped run has.
    pub(crate) fn start(
        series: Option<&Path>,
        hlog: Option<&Path>,
        live: bool,
        steps: Option<usize>,
        url: &str,
    ) -> anyhow::Result<Option<Outputs>> {
        if series.is_none() && hlog.is_none() && !live {
            return Ok(None);
        }
        let sinks = Sinks {
            series: series.map(|p| Series::create(p, steps.is_some())).transpose()?,
            hlog: hlog.map(|p| Hlog::create(p, url)).transpose()?,
            live: live.then(|| Live::new(steps)),
            error: None,
        };
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("herd-outputs".into())
            .spawn(move || write(rx, sinks))
            .context("cannot start the thread that writes --series, --hlog and the live line")?;
        Ok(Some(Outputs { tx, thread: Some(thread) }))
    }

    /// A step begins; its workers report through the returned feed.
    pub(crate) fn begin_step(&self, start: StepStart) -> Feed {
        let _ = self.tx.send(Msg::Begin(start));
        Feed(self.tx.clone())
    }

    /// The step is over and every worker has sent its end: returns once the step's seconds
    /// are written and the live line is erased.
    pub(crate) fn end_step(&self) {
        let (ack, done) = mpsc::channel();
        if self.tx.send(Msg::End(ack)).is_ok() {
            // An error here means the writer is gone (a panic); `finish` reports it.
            let _ = done.recv();
        }
    }

    /// Stops the writer and reports the first write error, if any.
    pub(crate) fn finish(mut self) -> anyhow::Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        // The writer ends when every sender is gone: the workers' went with their recorders,
        // this one goes here (replaced by one whose channel is already closed).
        drop(std::mem::replace(&mut self.tx, mpsc::channel().0));
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => {
                anyhow::bail!("the thread writing --series, --hlog or the live line failed")
            }
        }
    }
}

impl Drop for Outputs {
    /// On an early return (an error starting a step), still erase the live line and close
    /// the files before herd run prints its error.
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The writer thread's outputs, and the first error any of them met.
struct Sinks {
    series: Option<Series>,
    hlog: Option<Hlog>,
    live: Option<Live>,
    error: Option<anyhow::Error>,
}

impl Sinks {
    fn begin(&mut self, start: &StepStart) {
        if let Some(h) = &mut self.hlog {
            if let Err(e) = h.begin_step(start) {
                self.error.get_or_insert(e);
                self.hlog = None;
            }
        }
    }

    fn second(&mut self, step: Option<usize>, s: &RunSecond) {
        if let Some(series) = &mut self.series {
            if let Err(e) = series.write(step, s) {
                // A full disk does not stop the run: the error is reported at its end.
                self.error.get_or_insert(e);
                self.series = None;
            }
        }
        if let Some(h) = &mut self.hlog {
            if let Err(e) = h.write(step, s) {
                self.error.get_or_insert(e);
                self.hlog = None;
            }
        }
        if let Some(live) = &mut self.live {
            live.show(step, s);
        }
    }

    fn end_step(&mut self) {
        if let Some(live) = &mut self.live {
            live.clear();
        }
    }

    fn close(mut self) -> anyhow::Result<()> {
        self.end_step();
        if let Some(h) = self.hlog.take() {
            if let Err(e) = h.close() {
                self.error.get_or_insert(e);
            }
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The writer thread: merge the workers' seconds, write the run's.
fn write(rx: Receiver<Msg>, mut sinks: Sinks) -> anyhow::Result<()> {
    let mut merge: Option<Merge> = None;
    let mut step = None;
    let mut out = Vec::new();
    for msg in rx {
        match msg {
            Msg::Begin(start) => {
                sinks.begin(&start);
                merge = Some(Merge::new(start.workers));
                step = start.step;
            }
            Msg::Report(r) => {
                if let Some(m) = &mut merge {
                    m.add(r, &mut out);
                }
                for s in out.drain(..) {
                    sinks.second(step, &s);
                }
            }
            Msg::End(ack) => {
                // The main thread sends End after every recorder's last report.
                debug_assert!(merge.as_ref().is_none_or(Merge::is_done), "{merge:?}");
                sinks.end_step();
                merge = None;
                let _ = ack.send(());
            }
        }
    }
    sinks.close()
}

/// A feed whose reports the test reads itself.
#[cfg(test)]
pub(crate) fn test_feed() -> (Feed, Receiver<Msg>) {
    let (tx, rx) = mpsc::channel();
    (Feed(tx), rx)
}
