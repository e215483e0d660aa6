//! The shutdown signal: a cloneable handle whose `stop()` wakes every worker's event loop through
//! its mio `Waker`, so workers return at once instead of noticing on a timer. It only asks
//! workers to return; it does not wait for them (`Server::run` joins them) and does not drain
//! connections.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use mio::Waker;

/// Tells a running [`Server`](crate::Server) to return. Clone it freely (one clone for a signal
/// handler, one for the server). It is one-shot: once stopped, it stays stopped, and a server run
/// with a stopped handle returns immediately.
#[derive(Clone, Default)]
pub struct StopHandle {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Read on every event-loop turn without taking the lock.
    stopped: AtomicBool,
    /// Wakers of the workers running now. `stop` sets the flag and wakes them under this lock,
    /// and `register` adds a waker and reads the flag under it, so a worker that starts while
    /// `stop` runs either sees the flag or is woken: it cannot miss both.
    wakers: Mutex<Vec<Arc<Waker>>>,
}

impl StopHandle {
    /// A handle that has not been stopped.
    pub fn new() -> StopHandle {
        StopHandle::default()
    }

    /// Asks every worker to return. Idempotent; safe to call from any thread, including a
    /// Ctrl-C handler thread.
    pub fn stop(&self) {
        let wakers = self.inner.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        self.inner.stopped.store(true, Ordering::SeqCst);
        for waker in wakers.iter() {
            // A failed wake means the worker's poll is gone, i.e. the worker already returned.
            let _ = waker.wake();
        }
    }

    /// Whether [`stop`](Self::stop) has been called.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Adds a worker's waker. Returns true if the handle is already stopped, in which case the
    /// worker should return without serving.
    pub(crate) fn register(&self, waker: Arc<Waker>) -> bool {
        let mut wakers = self.inner.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        wakers.push(waker);
        self.inner.stopped.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for StopHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopHandle").field("stopped", &self.is_stopped()).finish()
    }
}
