//! A worker's per-connection timers (think time, a paced read, a connect back-off): at most
//! one per connection, earliest first.
//!
//! A binary heap cannot remove an entry cheaply, so a timer that is cancelled or replaced
//! stays in the heap and is recognised as stale when it comes up: its time no longer matches
//! the one its connection has armed. Knows nothing about what a timer means; the worker
//! decides that from the connection's state when it fires.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(Instant, usize)>>,
    /// The time each connection's timer is armed for.
    armed: Vec<Option<Instant>>,
}

impl Timers {
    /// Timers for connections `0..n`.
    pub(crate) fn new(n: usize) -> Timers {
        Timers { heap: BinaryHeap::new(), armed: vec![None; n] }
    }

    /// Arms connection `i`'s timer for `at`, replacing any other.
    pub(crate) fn set(&mut self, i: usize, at: Instant) {
        if let Some(slot) = self.armed.get_mut(i) {
            // Armed for that instant already (a link asked again, unchanged): one heap entry
            // is enough, and a settle per request must not grow the heap.
            if *slot == Some(at) {
                return;
            }
            *slot = Some(at);
            self.heap.push(Reverse((at, i)));
        }
    }

    pub(crate) fn cancel(&mut self, i: usize) {
        if let Some(slot) = self.armed.get_mut(i) {
            *slot = None;
        }
    }

    #[cfg(test)]
    pub(crate) fn is_set(&self, i: usize) -> bool {
        self.armed.get(i).is_some_and(Option::is_some)
    }

    /// The earliest entry's time, maybe a stale one: at worst an early wake-up.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// The next connection whose timer is due at `now`, disarmed; stale entries are dropped
    /// on the way.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<usize> {
        while let Some(&Reverse((at, i))) = self.heap.peek() {
            if at > now {
                return None;
            }
            self.heap.pop();
            if let Some(slot) = self.armed.get_mut(i) {
                if *slot == Some(at) {
                    *slot = None;
                    return Some(i);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn due_timers_come_earliest_first_and_stale_ones_never() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut t = Timers::new(4);
        t.set(0, t0 + ms(30));
        t.set(1, t0 + ms(10));
        t.set(2, t0 + ms(20));
        t.set(2, t0 + ms(40)); // replaced: the 20 ms entry is stale
        t.set(3, t0 + ms(5));
        t.cancel(3); // cancelled: the 5 ms entry is stale
        assert!(!t.is_set(3) && t.is_set(2));
        assert_eq!(t.next(), Some(t0 + ms(5)), "a stale entry may still wake the loop");
        assert_eq!(t.pop_due(t0 + ms(25)), Some(1));
        assert_eq!(t.pop_due(t0 + ms(25)), None);
        assert_eq!(t.pop_due(t0 + ms(50)), Some(0));
        assert_eq!(t.pop_due(t0 + ms(50)), Some(2));
        assert_eq!(t.pop_due(t0 + ms(50)), None);
        assert!(!t.is_set(0) && !t.is_set(2));
        assert_eq!(t.next(), None);
    }

    /// A link that asks for the same instant at every settle adds one heap entry, not one a
    /// request; a timer cancelled and asked for again still fires once.
    #[test]
    fn the_same_instant_asked_again_is_one_entry() {
        let t0 = Instant::now();
        let mut t = Timers::new(1);
        for _ in 0..1000 {
            t.set(0, t0);
        }
        assert_eq!(t.heap.len(), 1);
        t.cancel(0);
        t.set(0, t0);
        assert_eq!(t.pop_due(t0), Some(0));
        assert_eq!(t.pop_due(t0), None, "the entry left by the cancel is stale");
    }
}
