//! How late this machine wakes a sleeping thread, watched while a test runs: a thread that
//! sleeps 1 ms at a time and keeps every overshoot. A test that bounds a time (an agent's
//! start, a request's send lag) judges it against what the machine showed in the same run:
//! on a quiet machine the bound stays tight, and on one where other work holds threads off
//! the CPUs for 30 ms the test does not blame herd for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running watch; [`Hiccups::stop`] says what it saw.
pub struct Hiccups {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Duration>>>,
}

/// What the watch saw: how long past 1 ms a sleep woke, at worst and at the median, and how
/// many times it woke [`LONG`] or more late (each a stretch when a thread that wanted a CPU
/// got none: another test's thread, herd's or a server's, may have lost one then too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    pub worst: Duration,
    pub median: Duration,
    pub long: usize,
}

const NAP: Duration = Duration::from_millis(1);

/// A wake this late counts in [`Seen::long`].
pub const LONG: Duration = Duration::from_millis(10);

impl Hiccups {
    /// Starts watching.
    pub fn watch() -> Hiccups {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut late = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let t = Instant::now();
                std::thread::sleep(NAP);
                late.push(t.elapsed().saturating_sub(NAP));
            }
            late
        });
        Hiccups { stop, thread: Some(thread) }
    }

    /// Stops watching: what it saw meanwhile.
    pub fn stop(mut self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        let mut late = self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default();
        late.sort();
        Seen {
            worst: late.last().copied().unwrap_or_default(),
            median: late.get(late.len() / 2).copied().unwrap_or_default(),
            long: late.iter().filter(|&&l| l >= LONG).count(),
        }
    }
}

impl Drop for Hiccups {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
