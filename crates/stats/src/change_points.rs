//! Change points in a history: where a series of figures (one per run, in time order)
//! shifted, by Hunter's deterministic variant of E-Divisive means (Fleming et al., "Hunter:
//! Using Change Point Detection to Hunt for Performance Regressions", ICPE 2023), as Apache
//! Otava (Hunter's successor) implements it in `otava/analysis.py`.
//!
//! Why this one and not E-Divisive with its permutation test (Daly et al., ICPE 2020): the
//! permutation test shuffles, so the same history can give a change point one day and none
//! the next, and a CI gate (`herd report --history --fail-on-change`) must give the same
//! answer for the same store. Hunter replaces it with Student's t-test between the two
//! sides of a candidate, which is deterministic, works with the handful of runs a benchmark
//! history has (≥ 3 values), and gives each change a p-value a reader can weigh. Its
//! assumption, values roughly normal about each segment's mean, fits a run's median
//! throughput, the figure it is meant for.
//!
//! The two steps, as Otava's `compute_change_points`:
//! 1. *Split*: sliding windows of `window` runs, half a window apart; in each, E-Divisive
//!    (`e_divisive.rs`) proposes the best split of each segment, and a split is kept while
//!    its t-test p-value is at most a relaxed threshold (10 × `max_p_value` below 0.05),
//!    splitting again. The union over windows is the *weak* change points.
//! 2. *Merge*: each weak point is tested between its neighbouring points; while one fails
//!    (p ≥ `max_p_value`, or a relative change no larger than `min_magnitude`), the weakest
//!    (largest p; else the smallest change) is dropped and its neighbours tested again.
//!
//! Where this differs from Otava, deliberately: after a point is dropped every remaining
//! point is tested again (Otava re-tests the point after it and the one after that, not the
//! one before, whose right side also grew); and a test with no spread on either side counts
//! as certain (p = 0) or void (p = 1), where scipy gives NaN. Like Otava, each side's
//! standard deviation is the population one (numpy's default), so p-values agree with its.
//! The module does no I/O; values must be finite.

use crate::e_divisive::{Candidate, Distances};
use crate::student_t;

/// How sure a change must be to count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The largest p-value a change point may have (Otava's `max_pvalue`).
    pub max_p_value: f64,
    /// The smallest relative change a change point must exceed, as a fraction: the larger
    /// of |after/before − 1| and |before/after − 1| (Otava's `min_magnitude`).
    pub min_magnitude: f64,
    /// Runs per window of the split step (Otava's `window_len`), at least 2.
    pub window: usize,
}

impl Default for Settings {
    /// Otava's defaults: p ≤ 0.001, any magnitude, windows of 50.
    fn default() -> Settings {
        Settings { max_p_value: 0.001, min_magnitude: 0.0, window: 50 }
    }
}

/// A change point: the series shifted between `index − 1` and `index`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first value after the change.
    pub index: usize,
    /// Mean and population standard deviation of the values since the previous change
    /// point (or the start) up to this one.
    pub mean_before: f64,
    pub std_before: f64,
    /// The same, from this change point up to the next (or the end).
    pub mean_after: f64,
    pub std_after: f64,
    /// Of Student's two-sided t-test (equal variances) between the two sides.
    pub p_value: f64,
}

impl ChangePoint {
    /// after / before − 1 (0 where the mean before is 0).
    pub fn relative_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    /// The larger of |after/before − 1| and |before/after − 1|.
    pub fn magnitude(&self) -> f64 {
        let back =
            if self.mean_after == 0.0 { 0.0 } else { self.mean_before / self.mean_after - 1.0 };
        self.relative_change().abs().max(back.abs())
    }
}

/// The change points of `series`, by index; None when a value is not finite or `settings`
/// are out of range (a p-value outside (0, 1], a window below 2, a negative magnitude).
pub fn change_points(series: &[f64], settings: &Settings) -> Option<Vec<ChangePoint>> {
    let valid = settings.max_p_value > 0.0
        && settings.max_p_value <= 1.0
        && settings.min_magnitude >= 0.0
        && settings.window >= 2;
    if !valid || series.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let p = settings.max_p_value;
    let first_pass = if p < 0.05 {
        p * 10.0
    } else if p < 0.5 {
        p * 2.0
    } else {
        p
    };
    let weak = split(series, settings.window, first_pass);
    Some(merge(weak, series, p, settings.min_magnitude))
}

/// Step 1: the weak change points (indices, ascending) with their tests between neighbours.
fn split(series: &[f64], window: usize, max_p: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let new = in_window(&series[start..end], max_p);
        let last = new.last().map_or(0, |i| start + i);
        for i in new {
            if !found.contains(&(start + i)) {
                found.push(start + i);
            }
        }
        start = last.max(start + step);
    }
    found.sort_unstable();
    tested(&found, series)
}

/// E-Divisive in one window, each split judged by the t-test: indices within the window.
fn in_window(window: &[f64], max_p: f64) -> Vec<usize> {
    let distances = Distances::new(window);
    let mut points: Vec<usize> = Vec::new();
    loop {
        let bounds = segments(&points, window.len());
        // The best candidate over every segment; the first of equals.
        let mut best: Option<(Candidate, usize, usize)> = None;
        for &(s, e) in &bounds {
            let Some(c) = distances.candidate(s, e) else { continue };
            match best {
                Some((b, _, _)) if c.q_hat <= b.q_hat => {}
                _ => best = Some((c, s, e)),
            }
        }
        let Some((c, s, e)) = best else { break };
        let significant =
            test(&window[s..c.index], &window[c.index..e]).is_some_and(|t| t.p_value <= max_p);
        if !significant {
            break;
        }
        points.push(c.index);
        points.sort_unstable();
    }
    points
}

/// Step 2: drop the weakest point while any fails, testing the others again.
fn merge(
    mut points: Vec<ChangePoint>,
    series: &[f64],
    max_p: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !points.is_empty() {
        let first_max_by = |key: &dyn Fn(&ChangePoint) -> f64| {
            let mut at = 0;
            for (i, cp) in points.iter().enumerate() {
                if key(cp) > key(&points[at]) {
                    at = i;
                }
            }
            at
        };
        let mut weakest = first_max_by(&|c| c.p_value);
        if points[weakest].p_value < max_p {
            weakest = first_max_by(&|c| -c.magnitude());
            if points[weakest].magnitude() > min_magnitude {
                return points;
            }
        }
        points.remove(weakest);
        let indices: Vec<usize> = points.iter().map(|c| c.index).collect();
        points = tested(&indices, series);
    }
    points
}

/// Each of `indices` (ascending) tested between its neighbours.
fn tested(indices: &[usize], series: &[f64]) -> Vec<ChangePoint> {
    let mut out = Vec::with_capacity(indices.len());
    for (k, &index) in indices.iter().enumerate() {
        let from = if k == 0 { 0 } else { indices[k - 1] };
        let to = indices.get(k + 1).copied().unwrap_or(series.len());
        let t = test(&series[from..index], &series[index..to]);
        out.push(ChangePoint {
            index,
            p_value: t.map_or(1.0, |t| t.p_value),
            ..t.unwrap_or_else(|| sides(&series[from..index], &series[index..to]))
        });
    }
    out
}

/// Means and population standard deviations of both sides, p = 1 (untested).
fn sides(before: &[f64], after: &[f64]) -> ChangePoint {
    let (mean_before, std_before) = mean_std(before);
    let (mean_after, std_after) = mean_std(after);
    ChangePoint { index: 0, mean_before, std_before, mean_after, std_after, p_value: 1.0 }
}

/// Student's t-test between the two sides, with Otava's (population) standard deviations;
/// None where a side is empty or there are no degrees of freedom.
fn test(before: &[f64], after: &[f64]) -> Option<ChangePoint> {
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let s = sides(before, after);
    let p = student_t::p_value_from_stats(
        s.mean_before,
        s.std_before,
        before.len(),
        s.mean_after,
        s.std_after,
        after.len(),
    )?;
    Some(ChangePoint { p_value: p, ..s })
}

fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The segments between `points` (ascending) over 0..len, empty ones left out.
fn segments(points: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut bounds = Vec::with_capacity(points.len() + 1);
    let mut from = 0;
    for &p in points.iter().chain(std::iter::once(&len)) {
        if p != from {
            bounds.push((from, p));
        }
        from = p;
    }
    bounds
}

#[cfg(test)]
mod tests;
