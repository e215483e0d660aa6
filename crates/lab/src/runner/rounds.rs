//! Which runs a lab run makes, round by round: round r is repetition r of the cells due in
//! it, in the order `order::shuffled` gives that round (its position is a run's place in
//! it). Every cell is due in the first `min` rounds; after them only the cells whose ok runs'
//! figures still exceed a bound (`[repetitions]`: their spread, the width of their 95 %
//! interval), and those with fewer than `min` runs that held their load (an open loop whose
//! rate, or whose client's own schedule, fell short stands for no figure and gets a
//! replacement), up to `max`. A round's cells depend only on the figures of the rounds before it, so a resumed
//! run that is given the stored figures walks the very rounds, in the very order, that one
//! run from start to end would have.
//!
//! An A/A control's twin (`[runner] controls = N`) is due in rounds 0 to N − 1 whatever the
//! spread, shuffled among the others like any cell (it is there to meet what they meet);
//! where N is more than the rounds the others make, the last rounds hold it alone. Its
//! runs are all known before the first, so they are planned from the start, and its
//! figures never extend another cell.

use std::collections::BTreeMap;

use crate::experiment::Repetitions;

/// The rounds of one experiment, and the figures they are judged by.
pub(super) struct Rounds<'a> {
    repetitions: &'a Repetitions,
    seed: u64,
    /// By cell: the figure of every ok run (`cell::figure`: the tables' measure), by
    /// repetition; None for a run at a pinned rate that did not hold its load.
    figures: Vec<BTreeMap<u32, Option<f64>>>,
    /// The A/A twin: its index among the cells, and how many runs it makes.
    twin: Option<(usize, u32)>,
    /// From this round on, no cell is extended (`[repetitions] time_budget` spent).
    extended_until: Option<u32>,
}

impl<'a> Rounds<'a> {
    pub(super) fn new(cells: usize, repetitions: &'a Repetitions, seed: u64) -> Rounds<'a> {
        let figures = vec![BTreeMap::new(); cells];
        Rounds { repetitions, seed, figures, twin: None, extended_until: None }
    }

    /// Cell `twin` is an A/A control's twin that runs `runs` times (rounds 0 to runs − 1).
    pub(super) fn with_twin(mut self, twin: usize, runs: u32) -> Rounds<'a> {
        if twin < self.figures.len() {
            self.twin = Some((twin, runs));
        }
        self
    }

    /// How many runs cell `cell` may make at most.
    pub(super) fn most(&self, cell: usize) -> u32 {
        match self.twin {
            Some((twin, runs)) if twin == cell => runs,
            _ => self.repetitions.max,
        }
    }

    /// An ok run's figure (None: it did not hold its load, and a run stands in for it).
    /// Failed runs have none: they neither widen nor narrow a spread, nor are replaced.
    pub(super) fn record(&mut self, cell: usize, rep: u32, figure: Option<f64>) {
        if let Some(figures) = self.figures.get_mut(cell) {
            figures.insert(rep, figure);
        }
    }

    /// No more repetitions past the minimum from round `rep` on (the time budget would not
    /// hold another round); the twin's planned runs still come.
    pub(super) fn stop_extending(&mut self, rep: u32) {
        self.extended_until = Some(rep.max(self.repetitions.min));
    }

    /// The cells of round `rep` in the order they run (a run's position is its index here);
    /// empty when the run is over.
    pub(super) fn round(&self, rep: u32) -> Vec<usize> {
        let due = self.due(rep);
        crate::order::shuffled(due.len(), self.seed, rep).into_iter().map(|k| due[k]).collect()
    }

    fn due(&self, rep: u32) -> Vec<usize> {
        let mut due = self.spread_due(rep);
        if let Some((twin, runs)) = self.twin {
            if rep < runs {
                due.push(twin);
                due.sort_unstable();
            }
        }
        due
    }

    /// The cells of the matrix due in round `rep` (the twin apart), by the spread rule.
    fn spread_due(&self, rep: u32) -> Vec<usize> {
        let r = self.repetitions;
        let twin = self.twin.map(|(twin, _)| twin);
        let cells = (0..self.figures.len()).filter(|&cell| Some(cell) != twin);
        if rep >= r.max || self.extended_until.is_some_and(|until| rep >= until) {
            return Vec::new();
        }
        if rep < r.min {
            return cells.collect();
        }
        cells
            .filter(|&cell| {
                // Only the rounds before this one: a resumed run knows later ones too. A cell
                // runs in every round from the first until it is no longer due, so `rep` runs
                // came before.
                let before = self.figures[cell].range(..rep).map(|(_, f)| *f);
                let left_out = before.clone().filter(Option::is_none).count();
                let figures: Vec<f64> = before.flatten().collect();
                rep as usize - left_out < r.min as usize || r.bounds.exceeded(&figures)
            })
            .collect()
    }

    /// The runs planned before the first run of this lab run, and how many rounds that
    /// counts: the first `min` rounds, then each later round whose every earlier round is
    /// wholly `done` (stored by the run that was interrupted), since only those are known
    /// before anything runs. A later round is added to the plan when it comes. The twin's
    /// runs are all planned from the start.
    pub(super) fn planned(&self, done: impl Fn(usize, u32) -> bool) -> (usize, u32) {
        let r = self.repetitions;
        let (cells, twin_runs) = match self.twin {
            Some((_, runs)) => (self.figures.len() - 1, runs as usize),
            None => (self.figures.len(), 0),
        };
        let mut planned = cells * r.min as usize + twin_runs;
        let mut counted = r.min;
        let whole = |rep: u32| self.due(rep).into_iter().all(|cell| done(cell, rep));
        while counted < r.max && (0..counted).all(whole) {
            let due = self.spread_due(counted).len();
            if due == 0 {
                break;
            }
            planned += due;
            counted += 1;
        }
        (planned, counted)
    }

    /// How many runs of round `rep` the spread rule adds (the twin's were planned from the
    /// start): what [`count_round`] counts when the round comes.
    pub(super) fn extended(&self, rep: u32) -> usize {
        self.spread_due(rep).len()
    }
}

/// Round `rep` with `due` runs the spread rule added has come: when [`Rounds::planned`] had
/// not counted it, they join the plan (`planned`, `counted` rounds); true when they did.
/// A round with none (the twin's alone) adds nothing.
pub(super) fn count_round(rep: u32, due: usize, planned: &mut usize, counted: &mut u32) -> bool {
    if rep < *counted || due == 0 {
        return false;
    }
    *planned += due;
    *counted = rep + 1;
    true
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::experiment::Bounds;

    const SPREAD: Bounds = Bounds { max_spread_percent: Some(5.0), max_interval_percent: None };
    const REPS: Repetitions = Repetitions { min: 3, max: 6, bounds: SPREAD, time_budget: None };

    /// A made-up outcome of each run (None: it failed; Some(None): it did not hold its
    /// load): cells 1 and 4 spread widely and run to the maximum, cell 2 once more than the
    /// minimum; cell 3 fails its second run (no replacement); cell 5's second run did not
    /// hold its rate (a replacement: four runs).
    fn outcome(cell: usize, rep: u32) -> Option<Option<f64>> {
        match (cell, rep) {
            (3, 1) => None,
            (5, 1) => Some(None),
            (1 | 4, _) => Some(Some(if rep % 2 == 0 { 100.0 } else { 150.0 })),
            // 5.6 % after three runs, 4.6 % after a fourth at their mean.
            (2, 0..=2) => Some(Some([100.0, 110.0, 100.0][rep as usize])),
            (2, _) => Some(Some(310.0 / 3.0)),
            _ => Some(Some(1000.0 + f64::from(rep))),
        }
    }

    /// Runs the rounds from `stored` (pairs run before, with their outcomes) to the end:
    /// the (cell, repetition, position) of every run made, and the plan's size at the start
    /// and at the end.
    fn run(cells: usize, stored: &[(usize, u32)]) -> (Vec<(usize, u32, usize)>, usize, usize) {
        run_with(cells, None, stored)
    }

    /// [`run`], with cell `twin.0` an A/A twin that runs `twin.1` times.
    fn run_with(
        cells: usize,
        twin: Option<(usize, u32)>,
        stored: &[(usize, u32)],
    ) -> (Vec<(usize, u32, usize)>, usize, usize) {
        let mut rounds = Rounds::new(cells, &REPS, 42);
        if let Some((cell, runs)) = twin {
            rounds = rounds.with_twin(cell, runs);
        }
        for &(cell, rep) in stored {
            if let Some(f) = outcome(cell, rep) {
                rounds.record(cell, rep, f);
            }
        }
        let done: BTreeSet<(usize, u32)> = stored.iter().copied().collect();
        let (mut planned, mut counted) = rounds.planned(|c, r| done.contains(&(c, r)));
        let at_start = planned;
        let mut ran = Vec::new();
        let mut rep = 0;
        loop {
            let order = rounds.round(rep);
            if order.is_empty() {
                break;
            }
            count_round(rep, rounds.extended(rep), &mut planned, &mut counted);
            for (position, &cell) in order.iter().enumerate() {
                if done.contains(&(cell, rep)) {
                    continue;
                }
                ran.push((cell, rep, position));
                if let Some(f) = outcome(cell, rep) {
                    rounds.record(cell, rep, f);
                }
            }
            rep += 1;
        }
        (ran, at_start, planned)
    }

    #[test]
    fn the_spread_rule_extends_the_cells_over_the_bound() {
        let (full, at_start, planned) = run(6, &[]);
        assert_eq!(at_start, 18);
        let reps = |cell: usize| full.iter().filter(|r| r.0 == cell).count();
        assert_eq!((0..6).map(reps).collect::<Vec<_>>(), [3, 6, 4, 3, 6, 4]);
        assert_eq!(planned, full.len());
        // Each round in its own shuffled order, positions counted over the cells due in it.
        let round3: Vec<(usize, usize)> =
            full.iter().filter(|r| r.1 == 3).map(|r| (r.0, r.2)).collect();
        let mut cells: Vec<usize> = round3.iter().map(|r| r.0).collect();
        cells.sort_unstable();
        assert_eq!(cells, [1, 2, 4, 5]);
        assert_eq!(round3.iter().map(|r| r.1).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    /// Interrupted after any number of runs and resumed with what was stored, the runs are
    /// those a run from start to end makes, in its order and places, none twice; the plan
    /// at the resumed start counts every stored run.
    #[test]
    fn a_resumed_run_makes_the_runs_the_full_run_had_left() {
        let (full, _, planned_full) = run(6, &[]);
        for cut in 0..=full.len() {
            let stored: Vec<(usize, u32)> = full[..cut].iter().map(|r| (r.0, r.1)).collect();
            let (rest, at_start, planned) = run(6, &stored);
            assert_eq!(rest, full[cut..], "resumed after {cut} runs");
            assert!(at_start >= cut, "after {cut}: {at_start} planned");
            assert_eq!(planned, planned_full, "after {cut}");
        }
    }

    #[test]
    fn a_round_is_known_ahead_only_once_the_rounds_before_it_are_whole() {
        let rounds = Rounds::new(2, &REPS, 1);
        assert_eq!(rounds.planned(|_, _| false), (6, 3));
        // Every run of the minimum done, none over the bound: nothing more to plan.
        assert_eq!(rounds.planned(|_, rep| rep < 3), (6, 3));
        let mut rounds = Rounds::new(2, &REPS, 1);
        for rep in 0..3 {
            rounds.record(0, rep, outcome(1, rep).flatten());
            rounds.record(1, rep, Some(10.0));
        }
        // Cell 0 is over the bound after three: its fourth run is known, a fifth is not yet.
        assert_eq!(rounds.planned(|_, rep| rep < 3), (7, 4));
        assert_eq!(rounds.planned(|_, rep| rep < 2), (6, 3));
    }

    /// The interval bound stops a cell once its 95 % interval is narrow enough: a cell whose
    /// runs alternate 100 and 110 (a spread over 5 % up to 10 runs) is within ±5 % of its
    /// mean after 7 runs (5: t(4) · 5.27 / √5 = 6.5 %; 6: t(5) · 5.22 / √6 = 5.5 %; 7:
    /// t(6) · 5.13 / √7 = 4.7 %), where a spread bound of 5 % takes it to its maximum, 10.
    #[test]
    fn the_interval_bound_stops_a_cell_once_it_is_narrow_enough() {
        let interval = Bounds { max_spread_percent: None, max_interval_percent: Some(5.0) };
        let alternating = |rep: u32| Some(if rep % 2 == 0 { 100.0 } else { 110.0 });
        let reps = Repetitions { min: 3, max: 10, bounds: interval, time_budget: None };
        assert_eq!(runs_made(&reps, alternating), 7);
        let spread = Repetitions { min: 3, max: 10, bounds: SPREAD, time_budget: None };
        assert_eq!(runs_made(&spread, alternating), 10);
    }

    /// The runs one cell makes to the end, each with `figure(rep)` (None: not held).
    fn runs_made(reps: &Repetitions, figure: impl Fn(u32) -> Option<f64>) -> u32 {
        let mut rounds = Rounds::new(1, reps, 7);
        let mut made = 0;
        for rep in 0.. {
            if rounds.round(rep).is_empty() {
                break;
            }
            rounds.record(0, rep, figure(rep));
            made += 1;
        }
        made
    }

    /// Once the budget stops extending, the cells over the bound get no more rounds, and the
    /// twin still makes its planned runs; the minimum is never cut.
    #[test]
    fn a_spent_budget_stops_the_extra_rounds_only() {
        let mut rounds = Rounds::new(3, &REPS, 5).with_twin(2, 5);
        for rep in 0..3 {
            for cell in 0..2 {
                rounds.record(cell, rep, Some(if rep % 2 == 0 { 100.0 } else { 150.0 }));
            }
        }
        assert_eq!(rounds.extended(3), 2);
        rounds.stop_extending(3);
        assert_eq!(rounds.round(3), [2]);
        assert_eq!(rounds.round(4), [2]);
        assert!(rounds.round(5).is_empty());
        let mut early = Rounds::new(1, &REPS, 5);
        early.stop_extending(1);
        assert_eq!(early.round(2), [0], "the minimum's rounds run whole");
    }

    /// A cell whose runs all fall short of their load is given replacements up to its
    /// maximum, never more.
    #[test]
    fn replacements_stop_at_the_maximum() {
        assert_eq!(runs_made(&REPS, |_| None), REPS.max);
    }

    /// The twin (cell 6, here with the outcome of a wide-spread cell, which must not extend
    /// it) runs exactly its own number of times, shuffled among the others in each round,
    /// alone in the rounds past theirs; the plan knows all its runs from the start; the
    /// other cells run as they do without it; and a resumed run makes what was left.
    #[test]
    fn the_twin_runs_its_own_times_interleaved_and_resumes() {
        let (plain, _, _) = run(6, &[]);
        for runs in [2, 4, 8] {
            let (full, at_start, planned) = run_with(7, Some((6, runs)), &[]);
            let reps = |cell: usize| full.iter().filter(|r| r.0 == cell).count();
            assert_eq!((0..7).map(reps).collect::<Vec<_>>(), [3, 6, 4, 3, 6, 4, runs as usize]);
            assert_eq!(at_start, 18 + runs as usize, "{runs}");
            assert_eq!(planned, full.len(), "{runs}");
            let twin: Vec<(u32, usize)> =
                full.iter().filter(|r| r.0 == 6).map(|r| (r.1, r.2)).collect();
            assert_eq!(twin.iter().map(|t| t.0).collect::<Vec<_>>(), (0..runs).collect::<Vec<_>>());
            // Interleaved: shuffled among all seven in the three full rounds, not at one place
            // (with 2 runs, its 2 places may meet by chance: 1 in 7).
            let places: BTreeSet<usize> = twin.iter().take(3).map(|t| t.1).collect();
            assert!(runs == 2 || places.len() > 1, "{runs}: always at {places:?}");
            // The rounds past the others' hold the twin alone.
            for r in full.iter().filter(|r| r.1 >= 6) {
                assert_eq!((r.0, r.2), (6, 0), "{runs}: {r:?}");
            }
            // The others make the same runs as without a twin, round by round.
            let others = |runs: &[(usize, u32, usize)]| -> BTreeSet<(usize, u32)> {
                runs.iter().filter(|r| r.0 != 6).map(|r| (r.0, r.1)).collect()
            };
            assert_eq!(others(&full), others(&plain));
            for cut in 0..=full.len() {
                let stored: Vec<(usize, u32)> = full[..cut].iter().map(|r| (r.0, r.1)).collect();
                let (rest, at_start, planned_now) = run_with(7, Some((6, runs)), &stored);
                assert_eq!(rest, full[cut..], "{runs}: resumed after {cut} runs");
                assert!(at_start >= cut, "{runs}: after {cut}: {at_start} planned");
                assert_eq!(planned_now, planned, "{runs}: after {cut}");
            }
        }
    }
}
