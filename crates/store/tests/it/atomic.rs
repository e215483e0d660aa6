//! A repetition is recorded whole or not at all: a record that fails part-way through its
//! transaction leaves no row behind in any table, and what was recorded before stays.

use herd_store::{Store, StoreError};

use crate::util::*;

#[test]
fn a_duplicate_repetition_is_refused_and_the_first_is_kept() {
    let dir = TempDir::new("dup");
    let path = dir.join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.begin_experiment(&new_experiment("dup")).unwrap();
    let first = repetition("nginx", "c100", 0);
    store.record_repetition(id, &first).unwrap();
    let before = row_counts(&path);

    let mut again = repetition("nginx", "c100", 0);
    again.measurements[0].completed = 1;
    let err = store.record_repetition(id, &again).unwrap_err();
    assert!(matches!(err, StoreError::DuplicateRepetition { repetition: 0, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "experiment 1: cell \"server=nginx workload=page-6397 load=c100\": repetition 0 is already recorded"
    );
    assert_eq!(row_counts(&path), before);
    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.cells[0].repetitions.len(), 1);
    assert_eq!(got.cells[0].repetitions[0].record, first);
}

#[test]
fn a_record_failing_midway_leaves_nothing_half_written() {
    let dir = TempDir::new("midway");
    let path = dir.join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.begin_experiment(&new_experiment("midway")).unwrap();
    store.record_repetition(id, &repetition("nginx", "c100", 0)).unwrap();
    let before = row_counts(&path);

    // A new cell: its cell, axes, repetition, servers, configs and first measurement with
    // all its histograms are inserted before the second measurement's duplicate status
    // fails the transaction.
    let mut r = repetition("apache", "c100", 0);
    r.measurements[1].statuses.push((200, 1));
    let err = store.record_repetition(id, &r).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");
    assert_eq!(row_counts(&path), before, "every table as before");

    // The same, failing on its very last value.
    let mut r = repetition("apache", "c100", 0);
    r.measurements[1].reported.push(("latency_p999_us".into(), f64::NAN));
    store.record_repetition(id, &r).unwrap_err();
    assert_eq!(row_counts(&path), before);

    // And the store goes on: the corrected record goes in.
    store.record_repetition(id, &repetition("apache", "c100", 0)).unwrap();
    assert_eq!(store.load_experiment(id).unwrap().cells.len(), 2);
}

#[test]
fn an_interrupted_write_leaves_whole_repetitions_only() {
    // Recorded repetitions are committed one by one: whatever happens after the third,
    // the file holds exactly three, each complete.
    let dir = TempDir::new("interrupted");
    let path = dir.join("results.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.begin_experiment(&new_experiment("interrupted")).unwrap();
    for rep in 0..3 {
        store.record_repetition(id, &repetition("nginx", "c100", rep)).unwrap();
    }
    std::mem::forget(store);
    let reader = Store::open_existing(&path).unwrap();
    let got = reader.load_experiment(id).unwrap();
    assert_eq!(got.cells[0].repetitions.len(), 3);
    for (rep, stored) in got.cells[0].repetitions.iter().enumerate() {
        assert_eq!(stored.record, repetition("nginx", "c100", rep as u32));
    }
}
