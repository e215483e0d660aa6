//! `herd lab run --tui`: the lab's progress drawn as a view (lab_state.rs, lab_draw.rs) in
//! place of the progress bar. The runner's calls change the view's state; its own thread
//! draws it and follows the run in flight's `--series` file, so the lab never waits for the
//! terminal. `q`, Esc or Ctrl-C stop the experiment as Ctrl-C does without the view. The
//! notes and failures it showed are printed once it closes, so nothing said is lost.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use herd_lab::matrix::Cell;
use herd_lab::runner::progress::{Progress, RunSummary};
use ratatui::Frame;

use super::lab_state::LabView;
use super::{Screen, Tui};

impl Screen for LabView {
    fn version(&self) -> u64 {
        self.version
    }

    fn draw(&self, f: &mut Frame) {
        super::lab_draw::draw(f, self);
    }

    fn stop(&mut self) {
        LabView::stop(self);
    }

    fn refresh(&mut self) {
        self.follow();
    }
}

/// The lab's progress as a live view.
pub(crate) struct LabProgress {
    tui: Option<Tui<LabView>>,
    /// A directory of its own for the series file, removed at the end.
    dir: PathBuf,
}

impl LabProgress {
    /// The view of experiment `name`, on the terminal from now on; `q` sets `cancel`. Refused
    /// when stderr is not a terminal.
    pub(crate) fn start(name: &str, cancel: &Arc<AtomicBool>) -> anyhow::Result<LabProgress> {
        super::terminal_or("--no-progress (a line per run)")?;
        let dir = std::env::temp_dir().join(format!("herd-lab-view-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow::anyhow!("--tui: cannot create {}: {e}", dir.display()))?;
        let mut tui = Tui::of(LabView::new(name.to_owned(), Some(dir.join("series.csv"))));
        let cancel = cancel.clone();
        tui.show_with(move || cancel.store(true, Ordering::Relaxed))?;
        Ok(LabProgress { tui: Some(tui), dir })
    }

    /// Where herd's measured runs write their seconds for the view.
    pub(crate) fn series(&self) -> PathBuf {
        self.dir.join("series.csv")
    }

    fn with(&self, change: impl FnOnce(&mut LabView)) {
        if let Some(t) = &self.tui {
            t.with(change);
        }
    }

    /// Closes the view, then says what it showed: the notes and failures, in order.
    fn close(&mut self) {
        if let Some(t) = self.tui.take() {
            let notes = t.with(|v| std::mem::take(&mut v.notes));
            t.finish();
            for n in notes {
                eprintln!("herd lab: {n}");
            }
        }
        remove_dir(&self.dir);
    }
}

fn remove_dir(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

impl Progress for LabProgress {
    fn cells(&mut self, keys: &[&str]) {
        self.with(|v| v.cells(keys));
    }

    fn begin(&mut self, done: usize, planned: usize, _cells: usize) {
        self.with(|v| v.begin(done, planned));
    }

    fn run_started(&mut self, n: usize, planned: usize, cell: &Cell, repetition: u32) {
        self.with(|v| v.run_started(n, planned, &cell.key, repetition));
    }

    fn run_finished(&mut self, summary: &RunSummary) {
        self.with(|v| v.run_finished(summary));
    }

    fn replanned(&mut self, planned: usize, why: &str) {
        self.with(|v| v.replanned(planned, why));
    }

    fn note(&mut self, text: &str) {
        self.with(|v| v.note(text));
    }

    fn end(&mut self) {
        self.close();
    }
}

impl Drop for LabProgress {
    fn drop(&mut self) {
        self.close();
    }
}
