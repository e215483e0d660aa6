//! A tally of response body lengths, so that "did every response have the same length?"
//! (ab's Length failures) can be answered after the run without sharing state between
//! workers during it.
//!
//! Nearly every run sees one length (a static file), so the first length seen is counted
//! in a plain field; only other lengths go to a map. That keeps a hash lookup off the
//! per-response path.

use std::collections::HashMap;
use std::ops::AddAssign;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LengthTally {
    /// The first length seen and its count.
    first: Option<(u64, u64)>,
    others: HashMap<u64, u64>,
}

impl LengthTally {
    /// Counts one body of `len` bytes. Allocates only the first time a second length is seen.
    pub fn add(&mut self, len: u64) {
        self.add_n(len, 1);
    }

    fn add_n(&mut self, len: u64, n: u64) {
        match &mut self.first {
            Some((l, c)) if *l == len => *c += n,
            None => self.first = Some((len, n)),
            Some(_) => *self.others.entry(len).or_insert(0) += n,
        }
    }

    pub fn count(&self, len: u64) -> u64 {
        match self.first {
            Some((l, c)) if l == len => c,
            _ => self.others.get(&len).copied().unwrap_or(0),
        }
    }

    pub fn total(&self) -> u64 {
        self.first.map_or(0, |(_, c)| c) + self.others.values().sum::<u64>()
    }

    /// How many bodies had a length other than `len`.
    pub fn other_than(&self, len: u64) -> u64 {
        self.total() - self.count(len)
    }

    pub fn distinct(&self) -> usize {
        usize::from(self.first.is_some()) + self.others.len()
    }
}

impl AddAssign<&LengthTally> for LengthTally {
    fn add_assign(&mut self, other: &LengthTally) {
        if let Some((len, n)) = other.first {
            self.add_n(len, n);
        }
        for (&len, &n) in &other.others {
            self.add_n(len, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_and_merges() {
        let mut a = LengthTally::default();
        a.add(10);
        a.add(10);
        a.add(12);
        let mut b = LengthTally::default();
        b.add(12);
        b.add(10);
        a += &b;
        assert_eq!(a.count(10), 3);
        assert_eq!(a.count(12), 2);
        assert_eq!(a.other_than(10), 2);
        assert_eq!(a.other_than(12), 3);
        assert_eq!(a.distinct(), 2);
        assert_eq!(a.total(), 5);
    }

    #[test]
    fn empty_tally() {
        let t = LengthTally::default();
        assert_eq!(t.total(), 0);
        assert_eq!(t.other_than(5), 0);
        assert_eq!(t.distinct(), 0);
    }
}
