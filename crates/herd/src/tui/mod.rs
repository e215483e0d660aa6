//! `--tui`: a live view of the run in the terminal (ratatui), in place of the one-line
//! live line: requests per second and latency percentiles over time, the failures by kind,
//! the totals. It reads only the seconds herd already merges on its writer thread
//! ([`Tui::observer`] adds each to the view under a lock); a thread of its own draws four
//! times a second and reads the keys, so the measuring threads never wait for the terminal.
//! `q`, Esc or Ctrl-C stop the run as Ctrl-C does without the view (in raw mode Ctrl-C is a
//! key, not a signal): what was measured is kept and summed up once the view has closed.

mod draw;
pub(crate) mod lab;
mod lab_draw;
mod lab_state;
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
use ratatui::{Frame, Terminal};

use state::View;

/// How often the keys are looked at (and the view drawn if it changed).
const FRAME: Duration = Duration::from_millis(250);

/// What a view draws: a pure function of its state, and a version bumped at each change.
pub(crate) trait Screen: Send + 'static {
    /// Bumped at every change: the view is drawn again only when it changed.
    fn version(&self) -> u64;
    fn draw(&self, f: &mut Frame);
    /// The run is stopping (a key, or its end): said until the view closes.
    fn stop(&mut self);
    /// Called on the view's own thread before each look at the version: a view that follows
    /// a file (the lab's current run) reads it here, never on a measuring thread.
    fn refresh(&mut self) {}
}

impl Screen for View {
    fn version(&self) -> u64 {
        self.version
    }

    fn draw(&self, f: &mut Frame) {
        draw::draw(f, self);
    }

    fn stop(&mut self) {
        View::stop(self);
    }
}

/// The view, while it has the terminal.
pub(crate) struct Tui<S: Screen = View> {
    view: Arc<Mutex<S>>,
    stop: Arc<AtomicBool>,
    /// A key stopped the run.
    quit: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Tui {
    /// The view `--tui` asks for (None: it does not), for `plan`'s run by `tool` (`herd
    /// run`, `herd cluster run`): its state, fed from the start; the terminal is taken by
    /// [`Tui::show`]. Refused here, before any load, when stderr is not a terminal.
    pub(crate) fn for_run(
        asked: bool,
        tool: &str,
        plan: &herd_run::RunPlan,
    ) -> anyhow::Result<Option<Tui>> {
        let steps = plan.is_stepped().then(|| plan.steps().len());
        let open_loop = plan.steps().iter().any(|(_, rate)| rate.is_some());
        Tui::new(asked, format!("{tool} {}", plan.url.text), steps, open_loop, "--series FILE")
    }

    /// The view of a run titled `title`, of `steps` steps if it has steps, an open loop or
    /// not; `instead`, what gives the run's figures without a terminal (said when stderr is
    /// not one).
    pub(crate) fn new(
        asked: bool,
        title: String,
        steps: Option<usize>,
        open_loop: bool,
        instead: &str,
    ) -> anyhow::Result<Option<Tui>> {
        if !asked {
            return Ok(None);
        }
        terminal_or(instead)?;
        Ok(Some(Tui::of(View::new(title, steps, open_loop))))
    }

    /// Takes the terminal; a key that stops the run stops it through `control`.
    pub(crate) fn show(&mut self, control: Arc<Control>) -> anyhow::Result<()> {
        self.show_with(move || control.stop())
    }

    /// The writer thread's observer that feeds the view.
    pub(crate) fn observer(&self) -> Box<dyn SecondObserver> {
        Box::new(Feed { view: self.view.clone(), last: None })
    }
}

/// Refuses `--tui` when stderr is not a terminal, saying what to use `instead`.
pub(crate) fn terminal_or(instead: &str) -> anyhow::Result<()> {
    if !io::stderr().is_terminal() {
        bail!(
            "--tui draws on the terminal, and stderr is not one (a file or a pipe): leave --tui \
             out, or use {instead} for the run's figures"
        );
    }
    Ok(())
}

impl<S: Screen> Tui<S> {
    /// A view of `screen`, not drawn until [`Tui::show_with`].
    pub(crate) fn of(screen: S) -> Tui<S> {
        Tui {
            view: Arc::new(Mutex::new(screen)),
            stop: Arc::new(AtomicBool::new(false)),
            quit: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }

    /// The view's state, to change it (the lab's progress): drawn at the next frame.
    pub(crate) fn with<T>(&self, change: impl FnOnce(&mut S) -> T) -> T {
        change(&mut self.view.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether the run was stopped from the view (q, Esc, Ctrl-C): interrupted, as by a
    /// Ctrl-C without it.
    pub(crate) fn quit_pressed(&self) -> bool {
        self.quit.load(Ordering::SeqCst)
    }

    /// Takes the terminal (stderr: raw mode, the alternate screen) and draws the view from a
    /// thread of its own; a key that stops the run calls `on_quit`. Once the run is about to
    /// start: what comes before (agents started over SSH) may still speak.
    pub(crate) fn show_with(&mut self, on_quit: impl Fn() + Send + 'static) -> anyhow::Result<()> {
        enable_raw_mode().context(
            "--tui: cannot put the terminal in raw mode (no controlling terminal?): run herd in a \
             terminal of its own, or leave --tui out",
        )?;
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
        // Buffered: a frame goes out in one write at its flush, not a write per cell changed
        // (stderr is unbuffered), so the terminal never shows half a frame.
        let backend = CrosstermBackend::new(io::BufWriter::with_capacity(1 << 16, io::stderr()));
        let terminal = match Terminal::new(backend) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e).context("--tui: cannot draw on the terminal");
            }
        };
        let (view, stop, quit) = (self.view.clone(), self.stop.clone(), self.quit.clone());
        let thread = std::thread::Builder::new()
            .name("herd-tui".into())
            .spawn(move || run(terminal, &view, &stop, &quit, &on_quit));
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

impl<S: Screen> Drop for Tui<S> {
    fn drop(&mut self) {
        self.close();
    }
}

/// The drawing thread: a frame every [`FRAME`], the keys between them, until told to stop;
/// then the terminal restored.
fn run<S: Screen>(
    mut terminal: Terminal<CrosstermBackend<io::BufWriter<io::Stderr>>>,
    view: &Mutex<S>,
    stop: &AtomicBool,
    quit: &AtomicBool,
    on_quit: &dyn Fn(),
) {
    // Drawn when the view changed (once a second as the run goes) or the terminal was
    // resized: drawing is the view's whole cost, and most looks at the keys find nothing new.
    let mut drawn = None;
    let keys = KeySource::open();
    while !stop.load(Ordering::SeqCst) {
        {
            let mut v = view.lock().unwrap_or_else(PoisonError::into_inner);
            v.refresh();
            if drawn != Some(v.version()) {
                drawn = Some(v.version());
                // A terminal that cannot be drawn on (closed) ends the drawing, not the run.
                if terminal.draw(|f| v.draw(f)).is_err() {
                    break;
                }
            }
        }
        // herd waits for the keys itself, and lets crossterm only take what is there: once
        // the terminal hangs up (its window closed, tmux killed), crossterm's poll spins on
        // it and never returns, whatever its timeout (crossterm-rs/crossterm#793). Then
        // there is nothing to draw on and no key to come: the view waits for the end (the
        // hangup's signal stops the run as Ctrl-C does).
        let keys_now = keys.wait(FRAME);
        if keys_now == Keys::Gone {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(FRAME);
            }
            return;
        }
        if keys_now == Keys::Look && event::poll(Duration::ZERO).unwrap_or(false) {
            let read = event::read();
            if let Ok(Event::Resize(..)) = read {
                drawn = None;
            }
            if let Ok(Event::Key(k)) = read {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                let pressed = matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) || ctrl_c;
                if k.kind == KeyEventKind::Press && pressed {
                    quit.store(true, Ordering::SeqCst);
                    view.lock().unwrap_or_else(PoisonError::into_inner).stop();
                    on_quit();
                }
            }
        }
    }
    restore();
}

/// Where crossterm reads the keys (stdin when it is a terminal, else /dev/tty), looked at
/// for a hangup before each wait for a key.
enum KeySource {
    Stdin,
    Tty(std::fs::File),
    /// Neither can be read (no controlling terminal): no key will come; polling stdin (a
    /// file, /dev/null: always readable) would turn the wait into a spin.
    None,
}

impl KeySource {
    fn open() -> KeySource {
        if io::stdin().is_terminal() {
            return KeySource::Stdin;
        }
        std::fs::File::open("/dev/tty").map_or(KeySource::None, KeySource::Tty)
    }

    /// Waits at most `timeout` for a key, or for the terminal to hang up.
    fn wait(&self, timeout: Duration) -> Keys {
        use std::os::fd::AsRawFd as _;
        let fd = match self {
            KeySource::Stdin => 0,
            KeySource::Tty(f) => f.as_raw_fd(),
            KeySource::None => {
                std::thread::sleep(timeout);
                return Keys::Wait;
            }
        };
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one pollfd, valid for the call.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            Keys::Gone
        } else {
            // A key, the timeout, or a signal (a resize): crossterm looks.
            Keys::Look
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Keys {
    /// Something may be there: crossterm reads it.
    Look,
    /// No terminal to read: nothing to look at.
    Wait,
    Gone,
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

    fn agent_behind(&mut self, agent: usize, behind: Duration) {
        self.view.lock().unwrap_or_else(PoisonError::into_inner).agent_behind(agent, behind);
    }
}

/// A screen drawn on ratatui's test backend, `width` by `height`, as text: the views' tests.
#[cfg(test)]
pub(crate) fn drawn(width: u16, height: u16, screen: &impl Screen) -> String {
    let mut t = Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .unwrap_or_else(|e| panic!("{e}"));
    t.draw(|f| screen.draw(f)).unwrap_or_else(|e| panic!("{e}"));
    let buf = t.backend().buffer().clone();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_owned()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}
