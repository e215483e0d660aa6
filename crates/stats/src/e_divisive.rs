//! The E-Divisive candidate (Matteson and James, "A Nonparametric Approach for Multiple
//! Change Point Analysis of Multivariate Data", 2014): within a stretch of a series, the
//! split that maximises the scaled energy distance Q̂ between the values before it and the
//! values after it, over every end of the "after" side. `change_points.rs` judges the
//! candidate with a t-test; here it is only found.
//!
//! Q̂(X, Y) = 2/(n+m) Σᵢⱼ|Xᵢ−Yⱼ| − 2m/((n+m)(n−1)) Σ_{i<k}|Xᵢ−Xₖ| − 2n/((n+m)(m−1)) Σ_{j<k}|Yⱼ−Yₖ|
//! (a within-sum term is 0 where its side has one value), the distance's exponent 1. Sums of
//! pairwise distances come from one table of every stretch's within-sum, so a stretch of L
//! values costs O(L²). Ties go to the earliest split, and the search keeps Apache Otava's
//! quirk of also weighing the value 0 for each (split, end) pair that is not one (an end
//! before the split), so that where every Q̂ is negative it answers as Otava does: the
//! second split with 0.

/// Sums of pairwise distances of one window of a series: `within(a, b)` is
/// Σ_{a ≤ i < k < b} |xᵢ − xₖ|.
pub(crate) struct Distances {
    len: usize,
    /// (len + 1)², row a, column b.
    within: Vec<f64>,
}

/// A split proposed by [`Distances::candidate`]: the index of the first value after it
/// (within the window) and its Q̂.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) index: usize,
    pub(crate) q_hat: f64,
}

impl Distances {
    pub(crate) fn new(values: &[f64]) -> Distances {
        let len = values.len();
        let side = len + 1;
        let mut within = vec![0.0; side * side];
        for b in 2..=len {
            // within(a, b) = within(a, b − 1) + Σ_{a ≤ i < b−1} |xᵢ − x_{b−1}|, a from b−2 down.
            let last = values[b - 1];
            let mut to_last = 0.0;
            for a in (0..b - 1).rev() {
                to_last += (values[a] - last).abs();
                within[a * side + b] = within[a * side + b - 1] + to_last;
            }
        }
        Distances { len, within }
    }

    fn within(&self, a: usize, b: usize) -> f64 {
        self.within[a * (self.len + 1) + b]
    }

    /// Q̂ of X = values[start..split] against Y = values[split..end].
    fn q_hat(&self, start: usize, split: usize, end: usize) -> f64 {
        let (n, m) = ((split - start) as f64, (end - split) as f64);
        let total = n + m;
        let (wx, wy) = (self.within(start, split), self.within(split, end));
        let between = self.within(start, end) - wx - wy;
        let mut q = 2.0 / total * between;
        if n > 1.0 {
            q -= 2.0 * m / (total * (n - 1.0)) * wx;
        }
        if m > 1.0 {
            q -= 2.0 * n / (total * (m - 1.0)) * wy;
        }
        q
    }

    /// The best split of values[start..stop] (at least two values), over every end of its
    /// "after" side: the split is strictly inside, start < index < stop.
    pub(crate) fn candidate(&self, start: usize, stop: usize) -> Option<Candidate> {
        if stop > self.len || stop < start + 2 {
            return None;
        }
        // Otava's matrix: row i is the split start + 1 + i, column j the end start + 2 + j,
        // both over 0..stop − 1 − start; cells with j < i are not pairs and weigh 0.
        let size = stop - 1 - start;
        let mut best: Option<Candidate> = None;
        for i in 0..size {
            for j in 0..size {
                let q = if j >= i { self.q_hat(start, start + 1 + i, start + 2 + j) } else { 0.0 };
                if best.is_none_or(|b| q > b.q_hat) {
                    best = Some(Candidate { index: start + 1 + i, q_hat: q });
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ over pairs, the slow way.
    fn within_naive(v: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..v.len() {
            for k in i + 1..v.len() {
                s += (v[i] - v[k]).abs();
            }
        }
        s
    }

    #[test]
    fn the_table_holds_every_stretchs_pairwise_sum() {
        let v = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        let d = Distances::new(&v);
        for a in 0..=v.len() {
            for b in a..=v.len() {
                assert!((d.within(a, b) - within_naive(&v[a..b])).abs() < 1e-9, "{a}..{b}");
            }
        }
    }

    #[test]
    fn a_step_is_the_candidate() {
        let mut v = vec![10.0, 10.2, 9.9, 10.1, 9.8, 10.0];
        v.extend([20.0, 20.1, 19.9, 20.2, 19.8]);
        let d = Distances::new(&v);
        let c = d.candidate(0, v.len()).unwrap();
        assert_eq!(c.index, 6);
        assert!(c.q_hat > 0.0);
        // Within a stretch, only inside it.
        let c = d.candidate(6, v.len()).unwrap();
        assert!(c.index > 6 && c.index < v.len());
        assert_eq!(d.candidate(3, 4), None);
        assert_eq!(d.candidate(3, 99), None);
    }
}
