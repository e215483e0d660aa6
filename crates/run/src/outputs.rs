//! The writer thread behind `--series`, `--hlog` and the live line: one thread for the whole
//! of `herd run` (every step), fed through one channel by the workers' seconds (herd-record's
//! seconds.rs).
//! It merges them (merge.rs) and hands each of the run's seconds, as soon as it is complete,
//! to the series and hlog writers and to an observer (the binary's live line), so nothing of
//! the run's history stays in memory. The caller creates the writers before any load is sent,
//! so a path that cannot be written stops `herd run` before it runs.
//!
//! The main thread only marks the steps: [`Outputs::begin_step`] before the engine starts,
//! [`Outputs::end_step`] after it returns and the workers' last seconds are sent. `end_step`
//! waits until the step is written and the live line erased, so that what the main thread
//! prints next never lands on top of the live line.

use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime};

use crate::error::RunError;
use crate::hlog::Hlog;
use crate::merge::{Merge, RunSecond};
use crate::series::Series;
use herd_record::{Report, Seconds, SecondsOut};

/// Something that watches the run second by second (the binary's live line). Called on the
/// writer thread, never on a worker's.
pub trait SecondObserver: Send {
    /// Second `s` of the run (of step `step` in a stepped run) is complete.
    fn second(&mut self, step: Option<usize>, s: &RunSecond);
    /// A step (or the run) is over; called before the main thread prints anything more.
    fn end_step(&mut self);
    /// A spread run's agent `agent` sent a second `behind` after that second ended on the
    /// shared clock (its lateness, network included).
    fn agent_behind(&mut self, _agent: usize, _behind: std::time::Duration) {}
}

/// The writer thread and the way to it.
pub struct Outputs {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<Result<(), RunError>>>,
}

impl std::fmt::Debug for Outputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outputs").finish_non_exhaustive()
    }
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
    /// A spread run's agent's second came this late (`SecondObserver::agent_behind`).
    AgentBehind(usize, std::time::Duration),
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

    pub(crate) fn agent_behind(&self, agent: usize, behind: std::time::Duration) {
        let _ = self.0.send(Msg::AgentBehind(agent, behind));
    }

    /// As a recorder's [`Seconds`](herd_record::Seconds) sends them.
    pub(crate) fn into_out(self) -> SecondsOut {
        Box::new(move |r| self.send(r))
    }
}

/// Each worker's clock for a run begun with [`Outputs::begin_run`].
#[derive(Debug, Clone)]
pub struct WorkerSeconds {
    feed: Feed,
    origin: Instant,
}

impl WorkerSeconds {
    /// Worker `worker`'s clock; `quota`, its share of the requests when the run counts them
    /// (so that its end is known as soon as it has sent them all).
    pub fn for_worker(&self, worker: usize, quota: Option<u64>) -> Seconds {
        Seconds::new(worker, self.origin, None, quota, self.feed.clone().into_out())
    }
}

impl Outputs {
    /// Starts the writer with the run's series and hlog writers and observer; `None` when
    /// there is none of them, so that the recorders keep no seconds.
    pub fn start(
        series: Option<Series>,
        hlog: Option<Hlog>,
        observer: Option<Box<dyn SecondObserver>>,
    ) -> Result<Option<Outputs>, RunError> {
        if series.is_none() && hlog.is_none() && observer.is_none() {
            return Ok(None);
        }
        let sinks = Sinks { series, hlog, observer, error: None };
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("herd-outputs".into())
            .spawn(move || write(rx, sinks))
            .map_err(|_| RunError::OutputThread)?;
        Ok(Some(Outputs { tx, thread: Some(thread) }))
    }

    /// A step begins; its workers report through the returned feed.
    pub(crate) fn begin_step(&self, start: StepStart) -> Feed {
        let _ = self.tx.send(Msg::Begin(start));
        Feed(self.tx.clone())
    }

    /// A run the engine makes for another command than herd run (herd ab), whose recorders
    /// cut their outcomes into seconds themselves: `workers` of them will report, second 0
    /// starting at `origin` (ab has no warm-up: the engine's start). Call
    /// [`Outputs::end_step`] once the engine has returned and each worker's
    /// [`Seconds::finish`] has been called.
    pub fn begin_run(&self, workers: usize, origin: Instant) -> WorkerSeconds {
        let wall = herd_engine::wall_clock_at(origin);
        let feed = self.begin_step(StepStart { step: None, workers, origin, origin_wall: wall });
        WorkerSeconds { feed, origin }
    }

    /// The step is over and every worker has sent its end: returns once the step's seconds
    /// are written and the live line is erased.
    pub fn end_step(&self) {
        let (ack, done) = mpsc::channel();
        if self.tx.send(Msg::End(ack)).is_ok() {
            // An error here means the writer is gone (a panic); `finish` reports it.
            let _ = done.recv();
        }
    }

    /// Stops the writer and reports the first write error, if any.
    pub fn finish(mut self) -> Result<(), RunError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), RunError> {
        // The writer ends when every sender is gone: the workers' went with their recorders,
        // this one goes here (replaced by one whose channel is already closed).
        drop(std::mem::replace(&mut self.tx, mpsc::channel().0));
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(RunError::OutputThread),
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
    observer: Option<Box<dyn SecondObserver>>,
    error: Option<RunError>,
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
        if let Some(o) = &mut self.observer {
            o.second(step, s);
        }
    }

    fn end_step(&mut self) {
        if let Some(o) = &mut self.observer {
            o.end_step();
        }
    }

    fn close(mut self) -> Result<(), RunError> {
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
fn write(rx: Receiver<Msg>, mut sinks: Sinks) -> Result<(), RunError> {
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
            Msg::AgentBehind(agent, behind) => {
                if let Some(o) = &mut sinks.observer {
                    o.agent_behind(agent, behind);
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
