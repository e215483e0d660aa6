//! Stopping a run from another thread and reading its progress.
//!
//! The stop flag and the progress counters are the only state shared with workers. A
//! worker reads the flag once per event-loop turn, and publishes its count of finished
//! requests every few requests on its own cache line: nothing is written per request by
//! more than one thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use mio::Token;

/// The token of a worker's waker ([`Control::stop`] wakes it) in the worker's event loop:
/// the highest, above every connection's `Token(i)` (the pacer's timer is next below it,
/// pacer.rs's `TIMER`).
pub(crate) const WAKER: Token = Token(usize::MAX);

/// One worker's published progress, padded so that workers never share a cache line.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct Slot {
    pub(crate) finished: AtomicU64,
}

#[derive(Debug, Default)]
pub struct Control {
    stop: AtomicBool,
    wakers: Mutex<Vec<mio::Waker>>,
    slots: Mutex<Vec<std::sync::Arc<Slot>>>,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every worker to stop now; requests in flight are abandoned, not counted.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Ok(wakers) = self.wakers.lock() {
            for w in wakers.iter() {
                let _ = w.wake();
            }
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Requests finished so far (completed or failed), published by workers every few
    /// requests, so it may lag by a handful per worker.
    pub fn finished(&self) -> u64 {
        self.slots
            .lock()
            .map(|s| s.iter().map(|s| s.finished.load(Ordering::Relaxed)).sum())
            .unwrap_or(0)
    }

    pub(crate) fn register(&self, waker: mio::Waker) -> std::sync::Arc<Slot> {
        let slot = std::sync::Arc::new(Slot::default());
        if let Ok(mut w) = self.wakers.lock() {
            w.push(waker);
        }
        if let Ok(mut s) = self.slots.lock() {
            s.push(slot.clone());
        }
        // A stop that raced with registration must still reach this worker.
        if self.is_stopped() {
            self.stop();
        }
        slot
    }

    pub(crate) fn reset_workers(&self) {
        if let Ok(mut w) = self.wakers.lock() {
            w.clear();
        }
        if let Ok(mut s) = self.slots.lock() {
            s.clear();
        }
    }
}
