//! How late this machine wakes a sleeping thread, watched while a test runs: a thread that
//! sleeps 1 ms at a time and keeps the worst overshoot. A test that bounds a time (an agent's
//! start, a request's send lag) judges it against what the machine showed in the same run:
//! on a quiet machine the bound stays tight, and on one where other work holds threads off
//! the CPUs for 30 ms the test does not blame herd for it. Never longer than the watch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running watch; [`Hiccups::stop`] gives the worst wake-up delay seen.
pub struct Hiccups {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Duration>>,
}

const NAP: Duration = Duration::from_millis(1);

impl Hiccups {
    /// Starts watching.
    pub fn watch() -> Hiccups {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut worst = Duration::ZERO;
            while !flag.load(Ordering::Relaxed) {
                let t = Instant::now();
                std::thread::sleep(NAP);
                worst = worst.max(t.elapsed().saturating_sub(NAP));
            }
            worst
        });
        Hiccups { stop, thread: Some(thread) }
    }

    /// Stops watching: the longest a 1 ms sleep overslept meanwhile.
    pub fn stop(mut self) -> Duration {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
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
