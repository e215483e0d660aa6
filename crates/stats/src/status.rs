//! Exact counts of HTTP status codes (100..=999), in a fixed array.

use std::ops::AddAssign;

const FIRST: u16 = 100;
const LAST: u16 = 999;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCounts {
    counts: Box<[u64]>,
}

impl Default for StatusCounts {
    fn default() -> Self {
        StatusCounts { counts: vec![0; usize::from(LAST - FIRST + 1)].into_boxed_slice() }
    }
}

impl StatusCounts {
    /// Counts one response. Codes outside 100..=999 cannot come from the parser; they are
    /// clamped rather than dropped so that totals stay exact.
    #[inline]
    pub fn add(&mut self, status: u16) {
        let s = status.clamp(FIRST, LAST);
        self.counts[usize::from(s - FIRST)] += 1;
    }

    /// `n` responses of `status` at once (counts received from another process), clamped
    /// as [`StatusCounts::add`] does.
    pub fn add_n(&mut self, status: u16, n: u64) {
        let s = status.clamp(FIRST, LAST);
        let c = &mut self.counts[usize::from(s - FIRST)];
        *c = c.saturating_add(n);
    }

    pub fn get(&self, status: u16) -> u64 {
        if (FIRST..=LAST).contains(&status) {
            self.counts[usize::from(status - FIRST)]
        } else {
            0
        }
    }

    /// Responses whose status is not 2xx (ab's "Non-2xx responses").
    pub fn non_2xx(&self) -> u64 {
        self.iter().filter(|&(s, _)| !(200..300).contains(&s)).map(|(_, n)| n).sum()
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Non-zero statuses in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (FIRST + i as u16, n))
    }
}

impl AddAssign<&StatusCounts> for StatusCounts {
    fn add_assign(&mut self, other: &StatusCounts) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_non_2xx() {
        let mut s = StatusCounts::default();
        s.add(200);
        s.add(204);
        s.add(304);
        s.add(404);
        let mut t = StatusCounts::default();
        t.add(500);
        s += &t;
        assert_eq!(s.non_2xx(), 3);
        assert_eq!(s.total(), 5);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![(200, 1), (204, 1), (304, 1), (404, 1), (500, 1)]
        );
    }
}
