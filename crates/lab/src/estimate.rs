//! How long an experiment will take, said before it starts (`herd lab run`) and in its dry
//! run: its runs at the fewest repetitions and at the most, each the time its load asks (its
//! warm-up included) plus what a run costs besides (servers started and verified, stopped;
//! namespaces built for a path), and NetBench's runs as smbtorture takes them. A load given as
//! a request count takes what the server makes of it: those are named, not guessed. An A/A
//! control's twin adds its own runs, as many at the fewest repetitions as at the most, and a
//! profiled experiment one more run of each cell, under perf.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::client::{self, Tool};
use crate::experiment::Experiment;
use crate::load::{Shape, Warmup};
use crate::matrix::{cells, control_twin, Cell};

/// What a run costs besides its load, seconds: servers started, ready, verified and stopped,
/// the client started (30 runs of 1.2 s of load against nginx, lighttpd and herd serve took
/// 49 s here).
const RUN_OVERHEAD_S: f64 = 0.5;
/// The same for herd serve alone, which starts in milliseconds (the quick start: 40-42 runs
/// of 1.1 s of load took 53-57 s, warm-ups' client starts included).
const HERD_RUN_OVERHEAD_S: f64 = 0.16;
/// More for a run on a network path: its namespaces, links and rules built and removed (seed
/// 001's re-run: 84 runs in 1 min 41 s).
const PATH_OVERHEAD_S: f64 = 0.7;
/// What a profiled run costs besides the run: perf started and stopped, its stacks folded
/// (a 1 s cell of herd serve took 1.14 s to run, 3.6 s to run and profile).
const PROFILE_OVERHEAD_S: f64 = 1.3;
/// Seconds smbtorture's cleanup after a step's time limit takes, roughly (3-20 s in the
/// probe behind docs/netbench.md): for the estimate only; the runner allows 60.
pub(crate) const NBENCH_CLEANUP_S: u64 = 15;

/// The estimate of an experiment's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// At the fewest repetitions, and at the most (an A/A control's twin's runs in both).
    pub least: Duration,
    pub most: Duration,
    pub min_repetitions: u32,
    pub max_repetitions: u32,
    /// `[repetitions] time_budget`: no extra round starts that would end past it.
    pub time_budget: Option<Duration>,
    /// Loads given as a request count (and warm-ups given so), whose time is the server's.
    pub by_count: Vec<String>,
}

/// The estimate for `e`'s cells that run.
pub fn estimate(e: &Experiment) -> Estimate {
    let all = cells(e);
    let mut per_repetition = 0.0;
    let mut by_count = BTreeSet::new();
    for c in all.iter().filter(|c| c.refused.is_none()) {
        per_repetition += run_seconds(c, &mut by_count);
    }
    let twin = match (control_twin(e, &all), &e.runner.controls) {
        (Some(twin), Some(c)) => run_seconds(&twin, &mut by_count) * f64::from(c.runs),
        _ => 0.0,
    };
    // `[runner] profile`: one more run of every HTTP cell, under perf (runner::profile_cells).
    let profiled: f64 = match e.runner.profile {
        Some(_) => all
            .iter()
            .filter(|c| c.refused.is_none() && !c.workload.is_netbench())
            .map(|c| run_seconds(c, &mut by_count) + PROFILE_OVERHEAD_S)
            .sum(),
        None => 0.0,
    };
    let reps = &e.repetitions;
    let at = |n: u32| Duration::from_secs_f64(per_repetition * f64::from(n) + twin + profiled);
    Estimate {
        least: at(reps.min),
        most: at(reps.max),
        min_repetitions: reps.min,
        max_repetitions: reps.max,
        time_budget: reps.time_budget,
        by_count: by_count.into_iter().collect(),
    }
}

/// One run of cell `c`, seconds; a load (or warm-up) given as a count adds its name to
/// `by_count` and nothing to the time.
fn run_seconds(c: &Cell, by_count: &mut BTreeSet<String>) -> f64 {
    let base = if c.server.kind == herd_drivers::ServerKind::Herd {
        HERD_RUN_OVERHEAD_S
    } else {
        RUN_OVERHEAD_S
    };
    let overhead = base + if c.path.is_some() { PATH_OVERHEAD_S } else { 0.0 };
    if c.workload.is_netbench() {
        return netbench_run_seconds(c) as f64 + overhead;
    }
    let load = match &c.load.shape {
        Shape::Requests { .. } => {
            by_count.insert(c.load_name.clone());
            0.0
        }
        Shape::Duration { duration, .. } | Shape::Rate { duration, .. } => duration.as_secs_f64(),
        Shape::Steps { clients, step } => step.as_secs_f64() * clients.len() as f64,
        Shape::RateSteps { rates, step, .. } => step.as_secs_f64() * rates.len() as f64,
    };
    let warmup = match c.load.warmup {
        Warmup::None => 0.0,
        Warmup::Duration(d) => d.as_secs_f64() + base / 2.0,
        Warmup::Requests(_) => {
            by_count.insert(c.load_name.clone());
            0.0
        }
    };
    load + warmup + overhead
}

/// One NetBench run of cell `c` (all its steps and its warm-up), seconds.
pub(crate) fn netbench_run_seconds(c: &Cell) -> u64 {
    let Ok((clients, step)) = client::smbtorture::steps(&c.load) else { return 0 };
    // smbtorture warms up for limit / 20, tbench (a calibration cell's) for limit / 5.
    let warm = if c.client == Tool::Tbench { 5 } else { 20 };
    let run = |d: Duration| d.as_secs() + d.as_secs() / warm + NBENCH_CLEANUP_S;
    let mut total = run(step) * clients.len() as u64;
    if let Warmup::Duration(d) = c.load.warmup {
        total += run(d);
    }
    total
}

impl Estimate {
    /// One sentence: "about 1 min 40 s at 3 repetitions each (3 min 20 s at most, at 6), plus
    /// the loads given as a request count (n100-c5), whose time is the server's".
    pub fn sentence(&self) -> String {
        let mut s =
            format!("about {} at {} repetitions each", human(self.least), self.min_repetitions);
        match self.time_budget.filter(|b| *b < self.most) {
            _ if self.max_repetitions == self.min_repetitions => {}
            Some(budget) => s.push_str(&format!(
                " ({} at most: no extra repetition starts that would end past [repetitions] \
                 time_budget; {} at {} for every cell)",
                human(budget.max(self.least)),
                human(self.most),
                self.max_repetitions
            )),
            None => s.push_str(&format!(
                " ({} at most, at {} for every cell)",
                human(self.most),
                self.max_repetitions
            )),
        }
        if !self.by_count.is_empty() {
            s.push_str(&format!(
                ", plus what the loads given as a request count take ({}): the server's speed \
                 decides",
                self.by_count.join(", ")
            ));
        }
        s
    }
}

/// `45 s`, `3 min 20 s`, `4 h 52 min`: a length as a person plans with it.
pub fn human(d: Duration) -> String {
    let secs = d.as_secs_f64().ceil() as u64;
    match (secs / 3600, (secs % 3600) / 60, secs % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_read_as_a_person_plans() {
        assert_eq!(human(Duration::from_millis(44_200)), "45 s");
        assert_eq!(human(Duration::from_secs(120)), "2 min");
        assert_eq!(human(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(human(Duration::from_secs(17_520)), "4 h 52 min");
    }

    fn bundled(name: &str) -> Experiment {
        crate::experiment::parse(crate::bundled::find(name).unwrap().text, name).unwrap()
    }

    #[test]
    fn the_quickstart_is_timed_by_its_loads() {
        let e = bundled("quickstart");
        let est = estimate(&e);
        // 5 cells of herd serve, 1 s (+ 0.1 s warm-up): 5 × (1 + 0.1 + 0.08 + 0.16) = 6.7 s
        // a repetition, 5 to 10 of them (measured: 44 runs in 55 s, 36 in 43 s).
        assert!((est.least.as_secs_f64() - 6.7 * 5.0).abs() < 1e-6, "{:?}", est.least);
        assert!((est.most.as_secs_f64() - 6.7 * 10.0).abs() < 1e-6, "{:?}", est.most);
        assert!(est.by_count.is_empty());
        assert!(
            est.sentence().starts_with(
                "about 34 s at 5 repetitions each (56 s at most: no extra repetition starts \
                 that would end past [repetitions] time_budget; 1 min 7 s at 10 for every cell)"
            ),
            "{}",
            est.sentence()
        );
    }

    #[test]
    fn a_profiled_experiment_counts_one_more_run_of_each_cell() {
        let mut e = bundled("quickstart");
        let plain = estimate(&e);
        e.runner.profile = Some(crate::experiment::Profiler::Perf);
        let profiled = estimate(&e);
        // Five cells of 1.34 s each, and perf's 1.3 s on each.
        let more = profiled.least.as_secs_f64() - plain.least.as_secs_f64();
        assert!((more - 5.0 * (1.34 + 1.3)).abs() < 1e-6, "{more}");
        assert_eq!(profiled.most - plain.most, profiled.least - plain.least);
    }

    #[test]
    fn offered_rates_in_steps_take_each_step_in_turn() {
        let file = |load: &str| {
            format!(
                "name = \"x\"\ntitle = \"x\"\n[matrix]\nserver = [\"herd\"]\nworkload = \
                 [\"page\"]\nload = [\"l\"]\n[workloads.page]\nkind = \"static\"\nsize = 100\n\
                 [loads.l]\n{load}\n"
            )
        };
        let parse = |load: &str| crate::experiment::parse(&file(load), "x.toml").unwrap();
        let steps = estimate(&parse("rate_steps = [200, 400, 800]\nstep = \"2s\""));
        // Three steps of 2 s take what one closed loop of 6 s does.
        assert_eq!(steps.least, estimate(&parse("duration = \"6s\"")).least);
        assert_ne!(steps.least, estimate(&parse("duration = \"2s\"")).least);
        assert!(steps.by_count.is_empty());
    }

    #[test]
    fn request_counts_are_named_not_guessed() {
        let e = bundled("seed000-lighttpd");
        let est = estimate(&e);
        assert_eq!(est.by_count, vec!["n100-c5".to_owned(), "n10000-c100".to_owned()]);
        assert!(
            est.sentence().ends_with(
                ", plus what the loads given as a request count take (n100-c5, n10000-c100): \
                 the server's speed decides"
            ),
            "{}",
            est.sentence()
        );
    }

    #[test]
    fn the_twin_adds_its_runs() {
        let plain = bundled("quickstart");
        assert!(plain.text.contains("[runner]\n"));
        let text = plain.text.replacen("[runner]\n", "[runner]\ncontrols = 4\n", 1);
        let e = crate::experiment::parse(&text, "x.toml").unwrap();
        let twin = control_twin(&e, &cells(&e)).unwrap();
        let one = run_seconds(&twin, &mut BTreeSet::new());
        let (a, b) = (estimate(&plain), estimate(&e));
        assert!(one > 0.5, "{one}");
        assert!((b.least.as_secs_f64() - a.least.as_secs_f64() - 4.0 * one).abs() < 1e-6);
        assert!((b.most.as_secs_f64() - a.most.as_secs_f64() - 4.0 * one).abs() < 1e-6);
    }
}
