//! `herd lab run --resume`: finishing an experiment that was stopped before its end.
//!
//! An experiment can be resumed when it is unfinished: `interrupted` (Ctrl-C), `failed`, or
//! `running` in the store while the herd process that ran it is gone (killed, crashed, the
//! machine restarted). That process is the environment's [`LAB_PROCESS`] entry, the
//! registry's owner text (PID and start time), so a PID the kernel has since handed to
//! another process does not count as the run going on.
//!
//! The experiment is read again from the definition stored with it, never from the file,
//! so its cells, keys, repetitions and order seed are those it ran with; the runner then
//! makes only the runs not stored yet (`rounds.rs`). Figures are only comparable when made
//! by the same software on the same machine: a resume is refused when herd's or a client's
//! version, the client's CPUs, the machine, its kernel or its settings differ from what the
//! experiment recorded when it began, and stopped when a server program answers with
//! another version than it did then.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use herd_store::{
    ExperimentId, ExperimentStatus, RepetitionRecord, RunFailureKind, Store, StoreError,
    StoredExperiment,
};
use herd_topo::registry::owner_alive;

use crate::error::LabError;
use crate::experiment::{self, Experiment, ExperimentError};
use crate::matrix::Cell;

/// The environment entry naming the herd process that runs an experiment
/// (`herd_topo::registry::owner`): `PID START_TIME`.
pub const LAB_PROCESS: &str = "lab_process";

/// Environment entries that describe a moment, not the machine: they differ between the run
/// that began an experiment and the one that resumes it, and say nothing about its figures.
const MOMENT: [&str; 2] = ["loadavg_at_start", LAB_PROCESS];

/// Whether entry `key` describes a moment ([`MOMENT`]): also a host's own load average
/// (`host.server.loadavg_at_start`, `host.client1.…`) and the path to the server host as
/// measured when the lab run began (its connect time and one connection's throughput,
/// never twice the same); the path's MTU is its configuration, and is compared.
fn is_moment(key: &str) -> bool {
    const PATH_MEASURED: [&str; 2] = ["path.server.connect_rtt_us", "path.server.tcp_mbit_per_s"];
    MOMENT.contains(&key)
        || PATH_MEASURED.contains(&key)
        || key.strip_prefix("host.").is_some_and(|k| k.ends_with(".loadavg_at_start"))
}

/// An unfinished experiment, read back from its store to be run to its end.
#[derive(Debug)]
pub struct Resume {
    stored: StoredExperiment,
}

/// Why an experiment is not resumed. Each names the experiment and what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "no experiment to resume in results store {}: {why} (`herd report {} --list` lists its experiments)",
        .store.display(), .store.display()
    )]
    NothingToResume { store: PathBuf, why: String },

    #[error(
        "no experiment {id} in results store {}; {}",
        .store.display(),
        if .unfinished.is_empty() {
            format!("none of its experiments is unfinished (`herd report {} --list` lists them)", .store.display())
        } else {
            format!("its unfinished ones are {}: give one of those to --resume", .unfinished.join(", "))
        }
    )]
    Unknown { id: ExperimentId, store: PathBuf, unfinished: Vec<String> },

    #[error(
        "experiment {id} ({name}) is done: every run it planned is stored, so there is nothing to resume; `herd report {} --experiment {id}` shows it, `herd lab run {rerun}` runs it anew",
        .store.display()
    )]
    Done { id: ExperimentId, name: String, store: PathBuf, rerun: String },

    #[error(
        "experiment {id} ({name}) is running now, in herd process {pid}: let it end, or stop it with Ctrl-C and resume it then"
    )]
    Live { id: ExperimentId, name: String, pid: String },

    #[error(
        "experiment {id} ({name}) is recorded as running by a herd that did not record its process, so whether it still runs cannot be told and it is not resumed; run it anew: `herd lab run {rerun}`"
    )]
    Unknowable { id: ExperimentId, name: String, rerun: String },

    #[error(
        "experiment {id} ({name}) cannot be resumed: this herd cannot read the definition stored with it (run it anew: `herd lab run {rerun}`)"
    )]
    Definition {
        id: ExperimentId,
        name: String,
        rerun: String,
        #[source]
        source: ExperimentError,
    },

    #[error(
        "experiment {id} ({name}) cannot be resumed: its order seed (`order_seed`) is {found}, not a number, so the runs left cannot keep their places; run it anew: `herd lab run {rerun}`"
    )]
    NoSeed { id: ExperimentId, name: String, found: String, rerun: String },

    #[error(
        "experiment {id} ({name}) cannot be resumed: it ran cell `{key}`, which its stored definition no longer gives (herd builds its matrix otherwise now); run it anew: `herd lab run {rerun}`"
    )]
    Matrix { id: ExperimentId, name: String, key: String, rerun: String },

    #[error(
        "experiment {id} ({name}) cannot be resumed here: what it ran on changed since it began:\n  {}\nfigures measured now would not be comparable with the ones stored; run it anew: `herd lab run {rerun}`",
        .changes.join("\n  ")
    )]
    Changed { id: ExperimentId, name: String, changes: Vec<String>, rerun: String },

    #[error(
        "experiment {id} ({name}) stopped: a server program changed since it began:\n  {}\nfigures measured now would not be comparable with the ones stored, so the run that found it was not stored and the experiment is interrupted again; run it anew: `herd lab run {rerun}`",
        .changes.join("\n  ")
    )]
    ServerChanged { id: ExperimentId, name: String, changes: Vec<String>, rerun: String },
}

/// An experiment of the store, and where it stands for resuming it.
struct Listed {
    id: ExperimentId,
    name: String,
    status: ExperimentStatus,
    state: State,
}

enum State {
    Done,
    /// Interrupted, failed, or running without its herd process.
    Unfinished,
    /// Running, its herd process (this PID) alive.
    Live(String),
    /// Running, and no record of which process runs it.
    Unknowable,
}

/// The experiment `id`, or without one the most recent unfinished experiment of `store`,
/// read back to be resumed. An experiment that is done, runs now or is not in the store is
/// refused, the error naming the ones that could be resumed.
pub fn find(store: &Store, id: Option<ExperimentId>) -> Result<Resume, LabError> {
    let path = store.path().to_path_buf();
    let mut listed = Vec::new();
    for s in store.experiments()? {
        let state = state(store, s.id, s.status)?;
        listed.push(Listed { id: s.id, name: s.name, status: s.status, state });
    }
    let unfinished = |e: &&Listed| matches!(e.state, State::Unfinished);
    let chosen = match id {
        None => listed.iter().rev().find(unfinished).ok_or_else(|| {
            ResumeError::NothingToResume { store: path.clone(), why: nothing_to_resume(&listed) }
        })?,
        Some(id) => listed.iter().find(|e| e.id == id).ok_or_else(|| {
            let unfinished = listed.iter().filter(unfinished).map(Listed::described).collect();
            ResumeError::Unknown { id, store: path.clone(), unfinished }
        })?,
    };
    let stored = store.load_experiment(chosen.id)?;
    let (id, name, rerun) = (chosen.id, chosen.name.clone(), rerun(&stored.experiment.source));
    match &chosen.state {
        State::Unfinished => Ok(Resume { stored }),
        State::Done => Err(ResumeError::Done { id, name, store: path, rerun }.into()),
        State::Live(pid) => Err(ResumeError::Live { id, name, pid: pid.clone() }.into()),
        State::Unknowable => Err(ResumeError::Unknowable { id, name, rerun }.into()),
    }
}

fn state(store: &Store, id: ExperimentId, status: ExperimentStatus) -> Result<State, StoreError> {
    Ok(match status {
        ExperimentStatus::Done => State::Done,
        ExperimentStatus::Interrupted | ExperimentStatus::Failed => State::Unfinished,
        ExperimentStatus::Running => {
            let stored = store.load_experiment(id)?;
            let owner = entry(&stored.experiment.environment, LAB_PROCESS);
            match owner.map(|o| (o, owner_alive(o))) {
                Some((_, Some(false))) => State::Unfinished,
                Some((o, Some(true))) => {
                    State::Live(o.split_whitespace().next().unwrap_or(o).to_owned())
                }
                None | Some((_, None)) => State::Unknowable,
            }
        }
    })
}

impl Listed {
    /// As a list of unfinished experiments names it: `3 (slow, interrupted)`.
    fn described(&self) -> String {
        let status = match self.status {
            ExperimentStatus::Running => "running, but its herd process is gone",
            other => other.as_str(),
        };
        format!("{} ({}, {status})", self.id, self.name)
    }
}

/// Why no experiment of a store can be resumed.
fn nothing_to_resume(listed: &[Listed]) -> String {
    let reasons: Vec<String> = listed
        .iter()
        .filter_map(|e| match &e.state {
            State::Live(pid) => {
                Some(format!("experiment {} ({}) runs now, in herd process {pid}", e.id, e.name))
            }
            State::Unknowable => Some(format!(
                "experiment {} ({}) is recorded as running by a herd that did not record its process",
                e.id, e.name
            )),
            State::Done | State::Unfinished => None,
        })
        .collect();
    if listed.is_empty() {
        "it holds no experiment".to_owned()
    } else if reasons.is_empty() {
        "every experiment in it is done".to_owned()
    } else {
        reasons.join("; ")
    }
}

/// The command that runs an experiment of this `source` anew (a bundled one by its name).
fn rerun(source: &str) -> String {
    source.strip_prefix("bundled:").unwrap_or(source).to_owned()
}

fn entry<'a>(environment: &'a [(String, String)], key: &str) -> Option<&'a str> {
    environment.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// What the run before left in the store, the cells by their place in the runner's list.
pub(super) struct StoredRuns {
    /// Every (cell, repetition) stored, ok or failed: none of them runs again.
    pub done: HashSet<(usize, u32)>,
    /// The figure of every ok run, for the repetition rule (None: it did not hold its load).
    pub figures: Vec<(usize, u32, Option<f64>)>,
    /// The kind of every failed run.
    pub failures: Vec<RunFailureKind>,
}

impl Resume {
    pub fn id(&self) -> ExperimentId {
        self.stored.id
    }

    pub fn name(&self) -> &str {
        self.stored.name()
    }

    /// Where it stands: interrupted, failed, or running (its process gone).
    pub fn status(&self) -> ExperimentStatus {
        self.stored.status
    }

    /// The experiment as it was run: from the definition stored with it, under the name of
    /// the file it came from.
    pub fn experiment(&self) -> Result<Experiment, ResumeError> {
        let e = &self.stored.experiment;
        experiment::parse(&e.definition, &e.source).map_err(|source| ResumeError::Definition {
            id: self.id(),
            name: self.name().to_owned(),
            rerun: self.rerun(),
            source,
        })
    }

    fn rerun(&self) -> String {
        rerun(&self.stored.experiment.source)
    }

    /// The order seed it ran with.
    pub(super) fn seed(&self) -> Result<u64, ResumeError> {
        let found = entry(&self.stored.experiment.environment, "order_seed");
        found.and_then(|s| s.parse().ok()).ok_or_else(|| ResumeError::NoSeed {
            id: self.id(),
            name: self.name().to_owned(),
            found: found.map_or_else(|| "not recorded".to_owned(), |s| format!("{s:?}")),
            rerun: self.rerun(),
        })
    }

    /// Refuses to go on where the environment recorded now (`now`, with the stored order
    /// seed) or the method differs from what the experiment began with.
    pub(super) fn check_environment(
        &self,
        now: &[(String, String)],
        methodology_version: u32,
    ) -> Result<(), ResumeError> {
        let e = &self.stored.experiment;
        let mut changes = differences(&e.environment, now);
        if e.methodology_version != methodology_version {
            changes.push(format!(
                "the lab's method (methodology_version): {} → {methodology_version}",
                e.methodology_version
            ));
        }
        if changes.is_empty() {
            return Ok(());
        }
        Err(ResumeError::Changed {
            id: self.id(),
            name: self.name().to_owned(),
            changes,
            rerun: self.rerun(),
        })
    }

    /// The runs stored, each cell found by its key among `cells` (those that run now), each
    /// ok run's figure the spread rule judges by `measure`; a stored cell the matrix no longer
    /// has refuses the resume.
    pub(super) fn runs(
        &self,
        cells: &[Cell],
        measure: Option<herd_store::Measure>,
    ) -> Result<StoredRuns, ResumeError> {
        let index: HashMap<&str, usize> =
            cells.iter().enumerate().map(|(i, c)| (c.key.as_str(), i)).collect();
        let mut runs =
            StoredRuns { done: HashSet::new(), figures: Vec::new(), failures: Vec::new() };
        for stored in &self.stored.cells {
            let Some(&i) = index.get(stored.key.as_str()) else {
                return Err(ResumeError::Matrix {
                    id: self.id(),
                    name: self.name().to_owned(),
                    key: stored.key.clone(),
                    rerun: self.rerun(),
                });
            };
            for r in &stored.repetitions {
                let rec = &r.record;
                runs.done.insert((i, rec.repetition));
                match rec.outcome.failure_kind() {
                    None => runs.figures.push((
                        i,
                        rec.repetition,
                        super::cell::figure(&cells[i], rec, measure),
                    )),
                    Some(kind) => runs.failures.push(kind),
                }
            }
        }
        Ok(runs)
    }

    /// The note it keeps while and after it runs again: what it said before, then when it
    /// was resumed and after how many runs.
    pub(super) fn note(&self, now: &str, done: usize, planned: usize) -> String {
        let resumed = format!("resumed {now} after {done} of {planned} runs");
        match &self.stored.note {
            Some(before) => format!("{before}; {resumed}"),
            None => resumed,
        }
    }

    /// The versions every server program answered with before, by server and program.
    pub(super) fn server_versions(&self) -> ServerVersions {
        let mut known: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
        for r in self.stored.cells.iter().flat_map(|c| &c.repetitions) {
            for s in &r.record.servers {
                known
                    .entry((s.name.clone(), s.program.clone()))
                    .or_default()
                    .insert(s.version.clone());
            }
        }
        ServerVersions(known)
    }

    /// The error for server programs found changed before anything ran: the experiment is
    /// left as it was, as one whose machine changed.
    pub(super) fn servers_changed(&self, changes: Vec<String>) -> ResumeError {
        ResumeError::Changed {
            id: self.id(),
            name: self.name().to_owned(),
            changes,
            rerun: self.rerun(),
        }
    }

    /// The error for server programs that changed (`ServerVersions::changes`).
    pub(super) fn server_changed(&self, changes: Vec<String>) -> ResumeError {
        ResumeError::ServerChanged {
            id: self.id(),
            name: self.name().to_owned(),
            changes,
            rerun: self.rerun(),
        }
    }
}

/// The servers' versions the stored runs recorded: (server, program) → the versions its
/// records carry. Usually one; a record of a program whose version could not be paired with
/// its process says `n/a` beside the probe's own record (tbench_srv's before 2026-11-27), and
/// either is what that program was. The servers of the runs left are asked before the first
/// of them runs (`runner::server_changes`), and each run's record is compared again.
pub(super) struct ServerVersions(BTreeMap<(String, String), BTreeSet<String>>);

impl ServerVersions {
    /// The servers of `rec` whose version is none the stored runs recorded, one line each.
    pub(super) fn changes(&self, rec: &RepetitionRecord) -> Vec<String> {
        self.changes_of(rec.servers.iter().map(|s| (&s.name, &s.program, &s.version)))
    }

    /// Of `found` (server, program, version), those whose version is none the stored runs
    /// recorded for that server's program, one line each.
    pub(super) fn changes_of<'a>(
        &self,
        found: impl IntoIterator<Item = (&'a String, &'a String, &'a String)>,
    ) -> Vec<String> {
        found
            .into_iter()
            .filter_map(|(name, program, version)| {
                let before = self.0.get(&(name.clone(), program.clone()))?;
                (!before.contains(version)).then(|| {
                    let was: Vec<&str> = before.iter().map(String::as_str).collect();
                    format!("server {name} ({program}): {} → {version}", was.join(" or "))
                })
            })
            .collect()
    }
}

/// The entries of two environments that differ, one line each (`kernel: 6.1.0 → 6.12.0`),
/// in the order `before` recorded them; those of a moment ([`is_moment`]) left out.
fn differences(before: &[(String, String)], now: &[(String, String)]) -> Vec<String> {
    let mut keys: Vec<&str> = Vec::new();
    for (k, _) in before.iter().chain(now) {
        if !keys.contains(&k.as_str()) && !is_moment(k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|k| {
            let (b, n) = (entry(before, k), entry(now, k));
            let show = |v: Option<&str>| v.unwrap_or("(not recorded)").to_owned();
            (b != n).then(|| format!("{k}: {} → {}", show(b), show(n)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_store::{NewExperiment, ReportDefaults};
    use herd_testutil::causes::assert_cause_once;
    use std::error::Error as _;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// A store with one experiment per `(status, lab_process)`, named `e1`, `e2` …
    fn store(experiments: &[(ExperimentStatus, Option<&str>)]) -> Store {
        let mut store = Store::in_memory().unwrap();
        for (i, (status, owner)) in experiments.iter().enumerate() {
            let mut environment = env(&[("order_seed", "7")]);
            environment.extend(owner.map(|o| (LAB_PROCESS.to_owned(), o.to_owned())));
            let id = store
                .begin_experiment(&NewExperiment {
                    name: format!("e{}", i + 1),
                    title: String::new(),
                    source: "bundled:quickstart".into(),
                    definition: "name = \"x\"\n".into(),
                    plan: String::new(),
                    started_at: "2026-01-01T00:00:00Z".into(),
                    herd_version: "0.1.0".into(),
                    methodology_version: 1,
                    axes: vec!["server".into()],
                    environment,
                    reference: None,
                    published_json: None,
                    axis_values: Vec::new(),
                    report: ReportDefaults::default(),
                })
                .unwrap();
            if *status != ExperimentStatus::Running {
                store.finish_experiment(id, *status, "2026-01-01T01:00:00Z", None).unwrap();
            }
        }
        store
    }

    fn refused(store: &Store, id: Option<i64>) -> String {
        match find(store, id.map(ExperimentId)) {
            Ok(r) => panic!("experiment {} resumed", r.id()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_most_recent_unfinished_experiment_is_resumed() {
        use ExperimentStatus::*;
        // A PID far past any pid_max: that herd is gone.
        let gone = "4999999 12";
        let s = store(&[(Interrupted, None), (Running, Some(gone)), (Done, None)]);
        assert_eq!(find(&s, None).unwrap().id(), ExperimentId(2));
        assert_eq!(find(&s, Some(ExperimentId(1))).unwrap().id(), ExperimentId(1));
        let s = store(&[(Failed, None), (Done, None)]);
        let r = find(&s, None).unwrap();
        assert_eq!((r.id(), r.name(), r.status()), (ExperimentId(1), "e1", Failed));
        assert_eq!(r.seed().unwrap(), 7);
        assert_eq!(
            r.note("2026-01-02T00:00:00Z", 4, 9),
            "resumed 2026-01-02T00:00:00Z after 4 of 9 runs"
        );
    }

    #[test]
    fn done_running_and_unknown_experiments_are_refused_with_what_can_be() {
        use ExperimentStatus::*;
        let me = herd_topo::registry::owner();
        let pid = std::process::id();
        let s = store(&[(Done, None), (Running, Some(&me)), (Running, None), (Interrupted, None)]);
        assert_eq!(
            refused(&s, Some(1)),
            "experiment 1 (e1) is done: every run it planned is stored, so there is nothing to resume; `herd report :memory: --experiment 1` shows it, `herd lab run quickstart` runs it anew"
        );
        assert_eq!(
            refused(&s, Some(2)),
            format!("experiment 2 (e2) is running now, in herd process {pid}: let it end, or stop it with Ctrl-C and resume it then")
        );
        assert_eq!(
            refused(&s, Some(3)),
            "experiment 3 (e3) is recorded as running by a herd that did not record its process, so whether it still runs cannot be told and it is not resumed; run it anew: `herd lab run quickstart`"
        );
        assert_eq!(
            refused(&s, Some(9)),
            "no experiment 9 in results store :memory:; its unfinished ones are 4 (e4, interrupted): give one of those to --resume"
        );
        let s = store(&[(Done, None), (Running, Some(&me)), (Running, None)]);
        assert_eq!(
            refused(&s, None),
            format!("no experiment to resume in results store :memory:: experiment 2 (e2) runs now, in herd process {pid}; experiment 3 (e3) is recorded as running by a herd that did not record its process (`herd report :memory: --list` lists its experiments)")
        );
        assert_eq!(
            refused(&s, Some(5)),
            "no experiment 5 in results store :memory:; none of its experiments is unfinished (`herd report :memory: --list` lists them)"
        );
        let s = store(&[(Done, None)]);
        assert!(refused(&s, None).ends_with(": every experiment in it is done (`herd report :memory: --list` lists its experiments)"));
        let s = store(&[]);
        assert!(refused(&s, None).contains(":memory:: it holds no experiment ("));
    }

    #[test]
    fn a_definition_this_herd_cannot_read_is_named_with_its_cause_once() {
        let s = store(&[(ExperimentStatus::Interrupted, None)]);
        let err = find(&s, None).unwrap().experiment().unwrap_err();
        let cause = err.source().map(ToString::to_string).unwrap();
        assert!(cause.starts_with("bundled:quickstart: "), "{cause}");
        let printed = assert_cause_once(&err, &cause);
        assert!(printed.starts_with("experiment 1 (e1) cannot be resumed: this herd cannot read the definition stored with it (run it anew: `herd lab run quickstart`): "), "{printed}");
    }

    #[test]
    fn differences_name_each_changed_entry_but_not_the_moment() {
        let before = env(&[
            ("herd_version", "0.1.0"),
            ("kernel", "6.1.0"),
            ("loadavg_at_start", "0.1 0.2 0.3 1/100 42"),
            (LAB_PROCESS, "100 5"),
            ("version.client:ab", "2.3"),
            ("client_cpus", "1"),
        ]);
        let mut now = before.clone();
        assert!(differences(&before, &now).is_empty());
        now[2].1 = "3.0 2.0 1.0 2/200 43".into();
        now[3].1 = "200 9".into();
        assert!(differences(&before, &now).is_empty(), "a moment is no change");
        // A server host's: its load, the path's connect time and throughput as measured.
        let host = |rtt: &str, mbit: &str, load: &str, mtu: &str| {
            env(&[
                ("host.server.loadavg_at_start", load),
                ("host.client1.loadavg_at_start", load),
                ("path.server.connect_rtt_us", rtt),
                ("path.server.tcp_mbit_per_s", mbit),
                ("path.server.mtu", mtu),
            ])
        };
        let (was, is) = (host("180", "941", "0.1", "1500"), host("95", "903", "2.0", "1500"));
        assert!(differences(&was, &is).is_empty(), "a host's moment is no change");
        assert_eq!(
            differences(&was, &host("180", "941", "0.1", "9000")),
            ["path.server.mtu: 1500 → 9000"]
        );
        now[0].1 = "0.2.0".into();
        now[5].1 = "0-1".into();
        now.remove(4);
        now.push(("version.client:wrk".into(), "4.2.0".into()));
        assert_eq!(
            differences(&before, &now),
            [
                "herd_version: 0.1.0 → 0.2.0",
                "version.client:ab: 2.3 → (not recorded)",
                "client_cpus: 1 → 0-1",
                "version.client:wrk: (not recorded) → 4.2.0",
            ]
        );
    }

    #[test]
    fn a_server_that_answers_with_another_version_is_named() {
        let server = |name: &str, program: &str, version: &str| herd_store::ServerRecord {
            name: name.into(),
            program: program.into(),
            version: version.into(),
            argv: Vec::new(),
            cpus: None,
            cpu_seconds: None,
            configs: Vec::new(),
        };
        let known = ServerVersions(BTreeMap::from([
            (("nginx-fpm".into(), "nginx".into()), BTreeSet::from(["nginx/1.22.1".into()])),
            (
                ("nginx-fpm".into(), "php-fpm8.2".into()),
                BTreeSet::from(["PHP 8.2.36 (fpm-fcgi)".into()]),
            ),
            // Two records of one program (a process and its probe, unpaired): either counts.
            (
                ("calibration".into(), "tbench_srv".into()),
                BTreeSet::from(["n/a".into(), "dbench 4.00".into()]),
            ),
        ]));
        let mut rec = RepetitionRecord {
            cell_key: "server=nginx-fpm".into(),
            axes: vec![("server".into(), "nginx-fpm".into())],
            control_of: None,
            repetition: 1,
            position: 0,
            started_at: String::new(),
            finished_at: String::new(),
            outcome: herd_store::Outcome::Ok,
            client: herd_store::ClientRecord {
                tool: "herd".into(),
                version: "0.1.0".into(),
                argv: Vec::new(),
                cpus: None,
                judgement: None,
                health: None,
                io: None,
                trace_id: None,
            },
            servers: vec![
                server("nginx-fpm", "php-fpm8.2", "PHP 8.2.36 (fpm-fcgi)"),
                server("nginx-fpm", "nginx", "nginx/1.22.1"),
                // Not run before the resume: nothing to compare with.
                server("apache", "apache2", "Apache/2.4.66"),
                server("calibration", "tbench_srv", "dbench 4.00"),
                server("calibration", "tbench_srv", "n/a"),
            ],
            server_cpu_seconds: None,
            time_wait_before: None,
            drain_seconds: 0.0,
            network: None,
            measurements: Vec::new(),
        };
        assert!(known.changes(&rec).is_empty());
        rec.servers[1].version = "nginx/1.26.0".into();
        assert_eq!(known.changes(&rec), ["server nginx-fpm (nginx): nginx/1.22.1 → nginx/1.26.0"]);
    }

    #[test]
    fn a_bundled_experiment_runs_anew_by_its_name() {
        assert_eq!(rerun("bundled:quickstart"), "quickstart");
        assert_eq!(rerun("exp/slow.toml"), "exp/slow.toml");
    }
}
