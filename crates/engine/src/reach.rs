//! Whether a run has reached its target: the one thing its workers decide together. A
//! worker that records a failed connect while no connection of the run has connected counts
//! it here; the one that counts the last of the run's first attempts
//! ([`crate::Unreachable::GiveUp`]) gives up, and the others see it at their next periodic
//! check (at most 100 ms later, worker/base.rs) or failure. Touched on connects and failed
//! connects only, never per request.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether a finished run reached its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// At least one connection connected (TCP's handshake, or QUIC's).
    Connected,
    /// None did, and the run went on to its end: its bound came first, or it was told to keep
    /// trying ([`crate::Unreachable::KeepTrying`]).
    Never,
    /// None did, and the run stopped after its first attempts had all failed
    /// ([`crate::Unreachable::GiveUp`]).
    GaveUp,
}

/// The run's shared view, one per engine run.
#[derive(Debug)]
pub(crate) struct ReachWatch {
    /// Failed connects, none having connected, after which the run gives up (None: never).
    first_attempts: Option<u64>,
    connected: AtomicBool,
    failed: AtomicU64,
    gave_up: AtomicBool,
}

impl ReachWatch {
    pub(crate) fn new(first_attempts: Option<u64>) -> ReachWatch {
        ReachWatch {
            first_attempts,
            connected: AtomicBool::new(false),
            failed: AtomicU64::new(0),
            gave_up: AtomicBool::new(false),
        }
    }

    /// A connection of the run has connected: from now on the run never gives up.
    pub(crate) fn connected(&self) {
        self.connected.store(true, Ordering::SeqCst);
    }

    /// A failed connect was counted; true when the run gives up with it.
    pub(crate) fn connect_failed(&self) -> bool {
        let Some(first) = self.first_attempts else { return false };
        if self.connected.load(Ordering::SeqCst) {
            return false;
        }
        let failed = self.failed.fetch_add(1, Ordering::SeqCst) + 1;
        // A connection that connected while this one failed wins: it was reached.
        if failed >= first && !self.connected.load(Ordering::SeqCst) {
            self.gave_up.store(true, Ordering::SeqCst);
        }
        self.gave_up()
    }

    /// Whether a worker has given the run up.
    pub(crate) fn gave_up(&self) -> bool {
        self.gave_up.load(Ordering::Relaxed)
    }

    /// How the run ended, read once its workers have stopped. A connection that connected
    /// just as the run gave up (a server coming up at that moment) did not keep it going:
    /// the run says why it stopped.
    pub(crate) fn reach(&self) -> Reach {
        if self.gave_up.load(Ordering::SeqCst) {
            Reach::GaveUp
        } else if self.connected.load(Ordering::SeqCst) {
            Reach::Connected
        } else {
            Reach::Never
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_up_at_the_last_first_attempt_only() {
        let w = ReachWatch::new(Some(3));
        assert!(!w.connect_failed());
        assert!(!w.connect_failed());
        assert!(w.connect_failed());
        assert!(w.gave_up());
        assert_eq!(w.reach(), Reach::GaveUp);
    }

    #[test]
    fn one_connection_that_connected_keeps_the_run_going() {
        let w = ReachWatch::new(Some(2));
        assert!(!w.connect_failed());
        w.connected();
        for _ in 0..10 {
            assert!(!w.connect_failed());
        }
        assert_eq!(w.reach(), Reach::Connected);
    }

    #[test]
    fn keep_trying_never_gives_up() {
        let w = ReachWatch::new(None);
        for _ in 0..10 {
            assert!(!w.connect_failed());
        }
        assert_eq!(w.reach(), Reach::Never);
    }
}
