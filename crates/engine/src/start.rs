//! When a run starts: at once, at an instant, or when a gate opens.
//!
//! The agents of a spread run start together (docs/cluster.md). Each opens its connections
//! first, says it is armed, and is then given one start instant, so that no agent's first
//! second is spent connecting while the others already send. The engine's side of that
//! conversation is a [`StartGate`]: the workers open their connections, report what they
//! opened, and wait; the caller reads the report, talks to its coordinator and opens the
//! gate at the instant it was given (or closes it, and the run ends without a request).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::Control;

/// When a run starts.
#[derive(Debug, Clone, Default)]
pub enum Start {
    /// As soon as its workers are made.
    #[default]
    Now,
    /// At this moment: the workers open their kept-alive connections until then (as many
    /// as they can), sleep, and start together. A moment already past starts at once, still
    /// counting from it (late arrivals are lag).
    At(Instant),
    /// When the gate opens: the workers open every kept-alive connection first, report it
    /// on the gate, and wait for the instant the caller gives it.
    Gate(Arc<StartGate>),
}

/// What the workers opened before the start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Warmed {
    /// Connections open (TCP, and TLS when the target has it) and waiting for the start.
    pub connections: u64,
    /// Connections that could not be opened before the start; each is opened again with
    /// its first request, where a failure counts.
    pub failed: u64,
    /// From the first connect to the last connection's end, over the slowest worker.
    pub took: Duration,
}

impl Warmed {
    fn add(&mut self, other: &Warmed) {
        self.connections += other.connections;
        self.failed += other.failed;
        self.took = self.took.max(other.took);
    }
}

/// Where the engine and the caller meet before a gated start. One run's: a gate opens once.
#[derive(Debug, Default)]
pub struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    /// The run's workers, once the engine has made them.
    workers: Option<u32>,
    /// Workers that have opened their connections, and what they opened together.
    reported: u32,
    warmed: Warmed,
    at: Option<Instant>,
    closed: bool,
}

/// How often a wait looks at the run's stop flag (Ctrl-C does not signal the gate).
const LOOK_EVERY: Duration = Duration::from_millis(50);

impl StartGate {
    pub fn new() -> Arc<StartGate> {
        Arc::new(StartGate::default())
    }

    fn state(&self) -> MutexGuard<'_, GateState> {
        // A panic while holding the lock leaves plain data behind: still readable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until `done` holds of the gate's state, the run is stopped, or the gate closes;
    /// what `done` gives, if it came.
    fn wait_for<T>(&self, control: &Control, done: impl Fn(&GateState) -> Option<T>) -> Option<T> {
        let mut state = self.state();
        loop {
            if let Some(t) = done(&state) {
                return Some(t);
            }
            if state.closed || control.is_stopped() {
                return None;
            }
            state = match self.changed.wait_timeout(state, LOOK_EVERY) {
                Ok((s, _)) => s,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// The engine has made `workers` workers; each reports once.
    pub(crate) fn expect(&self, workers: u32) {
        self.state().workers = Some(workers);
        self.changed.notify_all();
    }

    /// One worker's connections are open (or could not be).
    pub(crate) fn report(&self, warmed: &Warmed) {
        let mut state = self.state();
        state.reported += 1;
        state.warmed.add(warmed);
        drop(state);
        self.changed.notify_all();
    }

    /// Blocks until every worker has opened its connections, and says what they opened;
    /// None when the run stopped or the gate was closed first (the run could not begin).
    pub fn wait_warm(&self, control: &Control) -> Option<Warmed> {
        self.wait_for(control, |s| match s.workers {
            Some(n) if s.reported >= n => Some(s.warmed),
            _ => None,
        })
    }

    /// Starts the run at `at`. A gate opens once; later calls change nothing.
    pub fn open(&self, at: Instant) {
        let mut state = self.state();
        if state.at.is_none() && !state.closed {
            state.at = Some(at);
        }
        drop(state);
        self.changed.notify_all();
    }

    /// The run will not start: its workers close their connections and it ends with no
    /// request sent. Also how the engine tells a waiting caller that the run ended (or never
    /// began); closing an open gate changes nothing.
    pub fn close(&self) {
        let mut state = self.state();
        if state.at.is_none() {
            state.closed = true;
        }
        drop(state);
        self.changed.notify_all();
    }

    /// The start instant, once the gate is open.
    pub fn opened(&self) -> Option<Instant> {
        self.state().at
    }

    /// The engine's wait for the start; None when the gate closed or the run was stopped.
    pub(crate) fn wait_open(&self, control: &Control) -> Option<Instant> {
        self.wait_for(control, |s| s.at)
    }
}

/// Sleeps until `at`, to within half a millisecond, and spins the rest: a sleep overshoots
/// by tens of microseconds or more, and the agents' first sends are judged against this
/// instant. A moment past returns at once.
pub(crate) fn wait_until(at: Instant) {
    const SPIN: Duration = Duration::from_micros(500);
    let ahead = at.saturating_duration_since(Instant::now());
    if ahead > SPIN {
        std::thread::sleep(ahead - SPIN);
    }
    while Instant::now() < at {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_sees_every_workers_report_then_opens() {
        let gate = StartGate::new();
        let control = Control::new();
        let at = Instant::now() + Duration::from_millis(5);
        std::thread::scope(|s| {
            let engine = s.spawn(|| {
                gate.expect(2);
                gate.report(&Warmed { connections: 3, failed: 1, took: Duration::from_millis(2) });
                gate.report(&Warmed { connections: 4, failed: 0, took: Duration::from_millis(7) });
                gate.wait_open(&control)
            });
            let warmed = gate.wait_warm(&control);
            assert_eq!(
                warmed,
                Some(Warmed { connections: 7, failed: 1, took: Duration::from_millis(7) })
            );
            gate.open(at);
            assert_eq!(engine.join().unwrap(), Some(at));
        });
        // Once open, it stays at its instant.
        gate.open(at + Duration::from_secs(1));
        gate.close();
        assert_eq!(gate.opened(), Some(at));
    }

    #[test]
    fn a_closed_gate_or_a_stop_ends_both_waits() {
        let gate = StartGate::new();
        let control = Control::new();
        gate.close();
        assert_eq!(gate.wait_warm(&control), None);
        assert_eq!(gate.wait_open(&control), None);
        gate.open(Instant::now());
        assert_eq!(gate.opened(), None, "a closed gate does not open");

        let gate = StartGate::new();
        let control = Control::new();
        control.stop();
        assert_eq!(gate.wait_warm(&control), None);
        assert_eq!(gate.wait_open(&control), None);
    }
}
