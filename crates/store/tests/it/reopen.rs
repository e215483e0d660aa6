//! Reopening an unfinished experiment (`herd lab run --resume`): it runs again with its
//! repetitions kept, its environment entries replaced or added, and a `done` or unknown
//! experiment is refused without a change.

use herd_store::{ExperimentId, ExperimentStatus, Store, StoreError};

use crate::util::*;

fn interrupted(store: &mut Store) -> ExperimentId {
    let id = store.begin_experiment(&new_experiment("resumable")).unwrap();
    store.record_repetition(id, &repetition("nginx", "c100", 0)).unwrap();
    store.record_repetition(id, &failed_repetition("nginx", "c100", 1)).unwrap();
    store
        .finish_experiment(
            id,
            ExperimentStatus::Interrupted,
            "2026-03-01T10:05:00Z",
            Some("interrupted after 2 of 6 runs"),
        )
        .unwrap();
    id
}

#[test]
fn an_interrupted_experiment_runs_again_with_what_it_kept() {
    let mut store = Store::in_memory().unwrap();
    let id = interrupted(&mut store);
    let before = store.load_experiment(id).unwrap();
    let note = "interrupted after 2 of 6 runs; resumed 2026-03-02T09:00:00Z after 2 of 6 runs";
    let set =
        [("root".to_owned(), "no".to_owned()), ("lab_process".to_owned(), "4242 99".to_owned())];
    store.reopen_experiment(id, note, &set).unwrap();

    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.status, ExperimentStatus::Running);
    assert_eq!(got.finished_at, None);
    assert_eq!(got.note.as_deref(), Some(note));
    assert_eq!(got.cells, before.cells, "the stored repetitions are kept as they were");
    // A known key keeps its place with its new value; a new one comes last.
    let mut want = before.experiment.environment.clone();
    want.iter_mut().find(|(k, _)| k == "root").unwrap().1 = "no".to_owned();
    want.push(("lab_process".to_owned(), "4242 99".to_owned()));
    assert_eq!(got.experiment.environment, want);

    // The next repetition goes in; the one stored before cannot go in twice.
    store.record_repetition(id, &repetition("nginx", "c100", 2)).unwrap();
    let err = store.record_repetition(id, &repetition("nginx", "c100", 0)).unwrap_err();
    assert!(matches!(err, StoreError::DuplicateRepetition { repetition: 0, .. }), "{err:?}");
    store
        .finish_experiment(id, ExperimentStatus::Done, "2026-03-02T09:10:00Z", Some(note))
        .unwrap();
    let summary = &store.experiments().unwrap()[0];
    assert_eq!(
        (summary.status, summary.n_repetitions_ok, summary.n_repetitions_failed),
        (ExperimentStatus::Done, 2, 1)
    );
}

#[test]
fn a_running_experiment_can_be_reopened_and_an_empty_environment_grows() {
    let mut store = Store::in_memory().unwrap();
    let mut new = new_experiment("crashed");
    new.environment.clear();
    let id = store.begin_experiment(&new).unwrap();
    let set = [("a".to_owned(), "1".to_owned()), ("b".to_owned(), "2".to_owned())];
    store.reopen_experiment(id, "resumed", &set).unwrap();
    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.status, ExperimentStatus::Running);
    assert_eq!(got.experiment.environment, set);
}

#[test]
fn a_done_or_unknown_experiment_is_refused_untouched() {
    let dir = TempDir::new("reopen-done");
    let path = dir.join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = interrupted(&mut store);
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T11:00:00Z", None).unwrap();
    let before = row_counts(&path);
    let set = [("lab_process".to_owned(), "1 2".to_owned())];

    let err = store.reopen_experiment(id, "resumed", &set).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyDone { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "experiment 1 in results store {p} is done: every run it planned is stored, so there is nothing to resume (`herd report {p} --experiment 1` shows it)",
            p = path.display()
        )
    );
    let err = store.reopen_experiment(ExperimentId(7), "resumed", &set).unwrap_err();
    assert!(matches!(err, StoreError::UnknownExperiment { id: ExperimentId(7), .. }), "{err:?}");
    assert_eq!(row_counts(&path), before);
    let got = store.load_experiment(id).unwrap();
    assert_eq!((got.status, got.note), (ExperimentStatus::Done, None));
}
