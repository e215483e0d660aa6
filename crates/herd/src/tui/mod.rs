//! `--tui`: a live view of the run in the terminal (ratatui), in place of the one-line
//! live line: requests per second and latency percentiles over time, the failures by kind,
//! the totals. It reads only the seconds herd already merges on its writer thread
//! ([`Tui::observer`] adds each to the view under a lock); a thread of its own draws four
//! times a second and reads the keys, so the measuring threads never wait for the terminal.
//! `q`, Esc or Ctrl-C stop the run as Ctrl-C does without the view (in raw mode Ctrl-C is a
//! key, not a signal): what was measured is kept and summed up once the view has closed.

mod draw;
mod state;

use std::io::{self, IsTerminal as _, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context as _};
use herd_engine::Control;
use herd_run::{RunSecond, SecondObserver};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::crossterm::{cursor, execute};
use ratatui::Terminal;

use state::View;

/// How often the keys are looked at (and the view drawn if it changed).
const FRAME: Duration = Duration::from_millis(250);

/// The view, while it has the terminal.
pub(crate) struct Tui {
    view: Arc<Mutex<View>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Tui {
    /// The view `--tui` asks for (None: it does not), for `plan`'s run: its state, fed from
    /// the start; the terminal is taken by [`Tui::show`]. Refused here, before any load, when
    /// stderr is not a terminal.
    pub(crate) fn for_run(asked: bool, plan: &herd_run::RunPlan) -> anyhow::Result<Option<Tui>> {
        if !asked {
            return Ok(None);
        }
        if !io::stderr().is_terminal() {
            bail!(
                "--tui draws on the terminal, and stderr is not one (a file or a pipe): leave \
                 --tui out, or use --series FILE for the run second by second"
            );
        }
        let steps = plan.is_stepped().then(|| plan.steps().len());
        let view = Arc::new(Mutex::new(View::new(plan.url.text.clone(), steps)));
        Ok(Some(Tui { view, stop: Arc::new(AtomicBool::new(false)), thread: None }))
    }

    /// Takes the terminal (stderr: raw mode, the alternate screen) and draws the view from a
    /// thread of its own; a key that stops the run stops it through `control`. Once the run is
    /// about to start: what comes before (agents started over SSH) may still speak.
    pub(crate) fn show(&mut self, control: Arc<Control>) -> anyhow::Result<()> {
        enable_raw_mode().context("--tui: cannot put the terminal in raw mode")?;
        if let Err(e) = execute!(io::stderr(), EnterAlternateScreen, cursor::Hide) {
            restore();
            return Err(e).context("--tui: cannot take the terminal's alternate screen");
        }
        // A panic must not leave the user's terminal in raw mode.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        let terminal = match Terminal::new(CrosstermBackend::new(io::stderr())) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e).context("--tui: cannot draw on the terminal");
            }
        };
        let (view, stop) = (self.view.clone(), self.stop.clone());
        let thread = std::thread::Builder::new()
            .name("herd-tui".into())
            .spawn(move || run(terminal, &view, &stop, &control));
        match thread {
            Ok(t) => {
                self.thread = Some(t);
                Ok(())
            }
            Err(e) => {
                restore();
                Err(e).context("--tui: cannot start its thread")
            }
        }
    }

    /// The writer thread's observer that feeds the view.
    pub(crate) fn observer(&self) -> Box<dyn SecondObserver> {
        Box::new(Feed { view: self.view.clone(), last: None })
    }

    /// Closes the view and gives the terminal back as it was.
    pub(crate) fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        self.view.lock().unwrap_or_else(PoisonError::into_inner).stop();
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.close();
    }
}

/// The drawing thread: a frame every [`FRAME`], the keys between them, until told to stop;
/// then the terminal restored.
fn run(
    mut terminal: Terminal<CrosstermBackend<io::Stderr>>,
    view: &Mutex<View>,
    stop: &AtomicBool,
    control: &Control,
) {
    // Drawn when the view changed (once a second as the run goes) or the terminal was
    // resized: drawing is the view's whole cost, and most looks at the keys find nothing new.
    let mut drawn = None;
    while !stop.load(Ordering::SeqCst) {
        {
            let v = view.lock().unwrap_or_else(PoisonError::into_inner);
            if drawn != Some(v.version) {
                drawn = Some(v.version);
                // A terminal that cannot be drawn on (closed) ends the drawing, not the run.
                if terminal.draw(|f| draw::draw(f, &v)).is_err() {
                    break;
                }
            }
        }
        if event::poll(FRAME).unwrap_or(false) {
            let read = event::read();
            if let Ok(Event::Resize(..)) = read {
                drawn = None;
            }
            if let Ok(Event::Key(k)) = read {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                let quit = matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) || ctrl_c;
                if k.kind == KeyEventKind::Press && quit {
                    view.lock().unwrap_or_else(PoisonError::into_inner).stop();
                    control.stop();
                }
            }
        }
    }
    restore();
}

/// The terminal as it was: the main screen, the cursor shown, cooked mode.
fn restore() {
    let _ = execute!(io::stderr(), LeaveAlternateScreen, cursor::Show);
    let _ = disable_raw_mode();
    let _ = io::stderr().flush();
}

/// Adds each merged second to the view, and herd's CPU since the last one.
struct Feed {
    view: Arc<Mutex<View>>,
    /// herd's CPU seconds and the instant at the last second.
    last: Option<(f64, std::time::Instant)>,
}

impl SecondObserver for Feed {
    fn second(&mut self, step: Option<usize>, s: &RunSecond) {
        let now = (herd_run::metrics::process_cpu_seconds(), std::time::Instant::now());
        let mut v = self.view.lock().unwrap_or_else(PoisonError::into_inner);
        if let (Some((cpu0, t0)), (Some(cpu1), t1)) = (self.last, now) {
            v.cpu(cpu1 - cpu0, (t1 - t0).as_secs_f64());
        }
        self.last = now.0.map(|cpu| (cpu, now.1));
        v.add(step, s);
    }

    fn end_step(&mut self) {}
}
