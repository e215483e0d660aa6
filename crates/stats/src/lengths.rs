//! A tally of response body lengths, so that "did every response have the same length?"
//! (ab's Length failures) can be answered after the run without sharing state between
//! workers during it.

use std::collections::HashMap;
use std::ops::AddAssign;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LengthTally {
    counts: HashMap<u64, u64>,
}

impl LengthTally {
    /// Counts one body of `len` bytes. Allocates only the first time a length is seen.
    pub fn add(&mut self, len: u64) {
        *self.counts.entry(len).or_insert(0) += 1;
    }

    pub fn count(&self, len: u64) -> u64 {
        self.counts.get(&len).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// How many bodies had a length other than `len`.
    pub fn other_than(&self, len: u64) -> u64 {
        self.total() - self.count(len)
    }

    pub fn distinct(&self) -> usize {
        self.counts.len()
    }
}

impl AddAssign<&LengthTally> for LengthTally {
    fn add_assign(&mut self, other: &LengthTally) {
        for (&len, &n) in &other.counts {
            *self.counts.entry(len).or_insert(0) += n;
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
        b.add(10);
        a += &b;
        assert_eq!(a.count(10), 3);
        assert_eq!(a.other_than(10), 1);
        assert_eq!(a.distinct(), 2);
    }
}
