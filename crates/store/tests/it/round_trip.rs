//! Everything written comes back as written, from a store in memory: every field of an
//! experiment, its repetitions, servers, measurements and histograms; the order of cells,
//! repetitions and steps; the summaries; and what the store refuses to record.

use herd_store::{ExperimentId, ExperimentStatus, Outcome, RunFailureKind, Store, StoreError};

use crate::util::*;

#[test]
fn every_field_round_trips() {
    let mut store = Store::in_memory().unwrap();
    let new = new_experiment("quickstart");
    let id = store.begin_experiment(&new).unwrap();
    let records = vec![
        repetition("nginx", "c100", 0),
        repetition("nginx", "c100", 1),
        failed_repetition("nginx", "c100", 2),
    ];
    let mut ids = Vec::new();
    for r in &records {
        ids.push(store.record_repetition(id, r).unwrap());
    }
    store
        .finish_experiment(
            id,
            ExperimentStatus::Done,
            "2026-03-01T10:30:00Z",
            Some("all cells ran"),
        )
        .unwrap();

    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.id, id);
    assert_eq!(got.experiment, new);
    assert_eq!(got.status, ExperimentStatus::Done);
    assert_eq!(got.finished_at.as_deref(), Some("2026-03-01T10:30:00Z"));
    assert_eq!(got.note.as_deref(), Some("all cells ran"));
    assert_eq!(got.cells.len(), 1);
    let cell = &got.cells[0];
    assert_eq!(cell.key, records[0].cell_key);
    assert_eq!(cell.axes, records[0].axes);
    assert_eq!(cell.axis("load"), Some("c100"));
    assert_eq!(cell.repetitions.len(), 3);
    for ((stored, written), id) in cell.repetitions.iter().zip(&records).zip(&ids) {
        assert_eq!(stored.id, *id);
        assert_eq!(&stored.record, written);
    }
    assert_eq!(cell.ok_repetitions().count(), 2);
}

#[test]
fn histograms_keep_every_percentile() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("h")).unwrap();
    let mut r = repetition("nginx", "c100", 0);
    let h = histogram(&[(1, 1), (57, 1000), (58, 3), (10_000, 7), (3_000_000_000, 1)]);
    r.measurements[0].histograms = vec![(LatencySeries::Total, h.clone())];
    store.record_repetition(id, &r).unwrap();
    let got = store.load_experiment(id).unwrap();
    let back =
        got.cells[0].repetitions[0].record.measurements[0].histogram(LatencySeries::Total).unwrap();
    for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
        assert_eq!(back.value_at_quantile(q), h.value_at_quantile(q), "q={q}");
    }
    assert_eq!(back.len(), h.len());
    assert_eq!(back.max(), h.max());
}

#[test]
fn options_left_empty_come_back_empty() {
    let mut store = Store::in_memory().unwrap();
    let mut new = new_experiment("bare");
    new.reference = None;
    new.published_json = None;
    new.environment.clear();
    let id = store.begin_experiment(&new).unwrap();
    let mut r = repetition("nginx", "c1", 0);
    r.client.cpus = None;
    r.client.judgement = None;
    r.client.health = None;
    r.client.io = None;
    r.server_cpu_seconds = None;
    r.time_wait_before = None;
    r.servers.clear();
    r.measurements.truncate(1);
    r.measurements[0].concurrency = None;
    r.measurements[0].failures.clear();
    r.measurements[0].statuses.clear();
    r.measurements[0].histograms.clear();
    store.record_repetition(id, &r).unwrap();
    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.experiment, new);
    assert_eq!(got.status, ExperimentStatus::Running);
    assert_eq!(got.finished_at, None);
    assert_eq!(got.note, None);
    assert_eq!(got.cells[0].repetitions[0].record, r);
}

#[test]
fn cells_come_back_in_natural_axis_order_whatever_the_run_order() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("order")).unwrap();
    // Shuffled, as the lab runs them; repetition 1 of a cell before its repetition 0.
    let order = [
        ("nginx", "c1000", 0),
        ("apache", "c50", 0),
        ("nginx", "c50", 1),
        ("nginx", "c100", 0),
        ("nginx", "c50", 0),
        ("apache", "c1000", 0),
    ];
    for (server, load, rep) in order {
        store.record_repetition(id, &repetition(server, load, rep)).unwrap();
    }
    let got = store.load_experiment(id).unwrap();
    let keys: Vec<(String, String)> = got
        .cells
        .iter()
        .map(|c| (c.axis("server").unwrap().to_owned(), c.axis("load").unwrap().to_owned()))
        .collect();
    let want = [
        ("apache", "c50"),
        ("apache", "c1000"),
        ("nginx", "c50"),
        ("nginx", "c100"),
        ("nginx", "c1000"),
    ];
    assert_eq!(keys, want.map(|(s, l)| (s.to_owned(), l.to_owned())));
    let reps: Vec<u32> = got
        .cell(&cell_key("nginx", "c50"))
        .unwrap()
        .repetitions
        .iter()
        .map(|r| r.record.repetition)
        .collect();
    assert_eq!(reps, [0, 1]);
}

#[test]
fn cells_come_back_in_the_declared_order_with_the_report_defaults() {
    let mut store = Store::in_memory().unwrap();
    let mut e = new_experiment("declared");
    e.axis_values = vec![
        vec!["nginx".into(), "apache".into()],
        vec!["page-6397".into()],
        vec!["c1000".into(), "c50".into()],
    ];
    e.report = herd_store::ReportDefaults {
        baseline: Some(("server".into(), "nginx".into())),
        measure: Some(herd_store::Measure::Seconds),
    };
    let id = store.begin_experiment(&e).unwrap();
    // c100 was not declared: it comes after the declared loads.
    for (server, load) in [
        ("apache", "c50"),
        ("nginx", "c100"),
        ("apache", "c1000"),
        ("nginx", "c50"),
        ("nginx", "c1000"),
    ] {
        store.record_repetition(id, &repetition(server, load, 0)).unwrap();
    }
    let got = store.load_experiment(id).unwrap();
    assert_eq!(got.experiment, e);
    let keys: Vec<String> = got
        .cells
        .iter()
        .map(|c| format!("{} {}", c.axis("server").unwrap(), c.axis("load").unwrap()))
        .collect();
    assert_eq!(keys, ["nginx c1000", "nginx c50", "nginx c100", "apache c1000", "apache c50"]);
}

#[test]
fn an_axis_without_declared_values_still_sorts_first() {
    let mut store = Store::in_memory().unwrap();
    let mut e = new_experiment("partly declared");
    e.axis_values = vec![vec![], vec![], vec!["c50".into(), "c1000".into()]];
    let id = store.begin_experiment(&e).unwrap();
    for (server, load) in
        [("nginx", "c50"), ("apache", "c1000"), ("nginx", "c1000"), ("apache", "c50")]
    {
        store.record_repetition(id, &repetition(server, load, 0)).unwrap();
    }
    let got = store.load_experiment(id).unwrap();
    let keys: Vec<String> = got
        .cells
        .iter()
        .map(|c| format!("{} {}", c.axis("server").unwrap(), c.axis("load").unwrap()))
        .collect();
    assert_eq!(keys, ["apache c50", "apache c1000", "nginx c50", "nginx c1000"]);
}

#[test]
fn axis_values_must_match_the_axes() {
    let mut store = Store::in_memory().unwrap();
    let mut e = new_experiment("mismatch");
    e.axis_values = vec![vec!["nginx".into()]];
    let err = store.begin_experiment(&e).unwrap_err().to_string();
    assert!(err.contains("1 lists of axis values for 3 axes"), "{err}");
    e.axis_values = vec![vec!["nginx".into(), "nginx".into()], vec![], vec![]];
    let err = store.begin_experiment(&e).unwrap_err().to_string();
    assert!(err.contains("axis \"server\" lists \"nginx\" twice"), "{err}");
    assert!(store.experiments().unwrap().is_empty(), "a refused experiment leaves nothing");
}

#[test]
fn derived_figures_are_computed_on_read() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("derived")).unwrap();
    store.record_repetition(id, &repetition("nginx", "c100", 0)).unwrap();
    let got = store.load_experiment(id).unwrap();
    let r = &got.cells[0].repetitions[0].record;
    assert_eq!(r.measurements[0].requests_per_second(), Some(10_000.0));
    assert_eq!(r.measurements[1].requests_per_second(), Some(5_000.0));
    assert_eq!(r.completed(), 112_500);
    let us = r.server_cpu_us_per_request().unwrap();
    assert!((us - 1.5e6 / 112_500.0).abs() < 1e-9, "{us}");
}

#[test]
fn summaries_count_cells_and_repetitions() {
    let mut store = Store::in_memory().unwrap();
    assert!(store.experiments().unwrap().is_empty());
    assert_eq!(store.latest_experiment().unwrap(), None);

    let a = store.begin_experiment(&new_experiment("a")).unwrap();
    for r in [
        repetition("nginx", "c1", 0),
        repetition("nginx", "c2", 0),
        failed_repetition("nginx", "c2", 1),
    ] {
        store.record_repetition(a, &r).unwrap();
    }
    store
        .finish_experiment(a, ExperimentStatus::Interrupted, "2026-03-01T11:00:00Z", Some("Ctrl-C"))
        .unwrap();
    let b = store.begin_experiment(&new_experiment("b")).unwrap();
    assert!(b > a);
    assert_eq!(store.latest_experiment().unwrap(), Some(b));

    let list = store.experiments().unwrap();
    assert_eq!(list.len(), 2);
    let s = &list[0];
    assert_eq!((s.id, s.name.as_str(), s.status), (a, "a", ExperimentStatus::Interrupted));
    assert_eq!(s.title, "a: nginx against herd serve");
    assert_eq!(s.started_at, "2026-03-01T10:00:00Z");
    assert_eq!(s.finished_at.as_deref(), Some("2026-03-01T11:00:00Z"));
    assert_eq!((s.n_cells, s.n_repetitions_ok, s.n_repetitions_failed), (2, 2, 1));
    let s = &list[1];
    assert_eq!((s.id, s.status, s.finished_at.as_deref()), (b, ExperimentStatus::Running, None));
    assert_eq!((s.n_cells, s.n_repetitions_ok, s.n_repetitions_failed), (0, 0, 0));
}

#[test]
fn an_unknown_experiment_is_named() {
    let mut store = Store::in_memory().unwrap();
    let missing = ExperimentId(42);
    let err = store.load_experiment(missing).unwrap_err();
    assert!(matches!(err, StoreError::UnknownExperiment { id, .. } if id == missing), "{err:?}");
    assert_eq!(
        err.to_string(),
        "no experiment 42 in results store :memory:; `herd report :memory: --list` shows the ones it holds"
    );
    let err = store.record_repetition(missing, &repetition("nginx", "c1", 0)).unwrap_err();
    assert!(matches!(err, StoreError::UnknownExperiment { .. }), "{err:?}");
    let err = store.finish_experiment(missing, ExperimentStatus::Done, "now", None).unwrap_err();
    assert!(matches!(err, StoreError::UnknownExperiment { .. }), "{err:?}");
}

/// `check(edit, detail)`: a repetition edited so, recorded into a fresh experiment, is
/// refused as an invalid record whose message contains `detail`, and nothing is kept.
fn check_refused(edit: impl FnOnce(&mut herd_store::RepetitionRecord), detail: &str) {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("refuse")).unwrap();
    let mut r = repetition("nginx", "c100", 0);
    edit(&mut r);
    let err = store.record_repetition(id, &r).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("cannot record experiment 1, cell \"server=nginx workload=page-6397 load=c100\", repetition 0: "),
        "{msg}"
    );
    assert!(msg.contains(detail), "{msg}");
    assert!(store.load_experiment(id).unwrap().cells.is_empty());
}

#[test]
fn records_the_store_cannot_keep_are_refused() {
    check_refused(|r| r.axes.swap(0, 1), "its axes are [\"workload\", \"server\", \"load\"], the experiment's are [\"server\", \"workload\", \"load\"]");
    check_refused(
        |r| {
            r.axes.pop();
        },
        "its axes are [\"server\", \"workload\"]",
    );
    check_refused(
        |r| r.measurements[0].completed = u64::MAX,
        "completed 18446744073709551615 is above 9223372036854775807",
    );
    check_refused(
        |r| r.measurements[1].failures.push((Failure::Timeout, u64::MAX)),
        "failure count",
    );
    check_refused(
        |r| r.measurements[0].duration_s = f64::NAN,
        "duration_s is NaN, not a finite number",
    );
    check_refused(|r| r.server_cpu_seconds = Some(f64::INFINITY), "server_cpu_seconds is inf");
    check_refused(
        |r| r.measurements[1].reported.push(("latency_p50_us".into(), 1.0)),
        "step 1: reported figure \"latency_p50_us\" appears twice",
    );
    check_refused(
        |r| r.measurements[0].statuses.push((200, 1)),
        "step 0: status 200 appears twice",
    );
    check_refused(
        |r| r.measurements[0].failures.push((Failure::Connect, 1)),
        "step 0: failure kind connect appears twice",
    );
    check_refused(
        |r| {
            let h = r.measurements[0].histograms[0].clone();
            r.measurements[0].histograms.push(h);
        },
        "step 0: histogram total appears twice",
    );
    check_refused(|r| r.measurements[1].step = 0, "step 0 appears twice");
}

#[test]
fn a_cell_key_keeps_its_axis_values() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("values")).unwrap();
    store.record_repetition(id, &repetition("nginx", "c100", 0)).unwrap();
    let mut r = repetition("nginx", "c100", 1);
    r.axes[2].1 = "c200".into();
    let err = store.record_repetition(id, &r).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");
    assert!(err.to_string().contains("the cell was recorded with axis values [\"nginx\", \"page-6397\", \"c100\"], this record has [\"nginx\", \"page-6397\", \"c200\"]"), "{err}");
}

#[test]
fn an_axis_named_twice_is_refused() {
    let mut store = Store::in_memory().unwrap();
    let mut new = new_experiment("twice");
    new.axes.push("server".into());
    let err = store.begin_experiment(&new).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "cannot record experiment \"twice\": axis \"server\" appears twice"
    );
    assert!(store.experiments().unwrap().is_empty(), "nothing of it is kept");
}

#[test]
fn a_failed_repetition_keeps_its_reason() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("fail")).unwrap();
    store.record_repetition(id, &failed_repetition("nginx", "c1", 0)).unwrap();
    let got = store.load_experiment(id).unwrap();
    let outcome = &got.cells[0].repetitions[0].record.outcome;
    assert_eq!(
        outcome,
        &Outcome::Failed {
            kind: RunFailureKind::ServerNotReady,
            reason: "nginx did not become ready on 198.18.0.2:80 within 5s".into()
        }
    );
    assert_eq!(outcome.failure_kind(), Some(RunFailureKind::ServerNotReady));
    assert_eq!(
        outcome.failure_reason(),
        Some("nginx did not become ready on 198.18.0.2:80 within 5s")
    );
}

#[test]
fn every_failure_kind_round_trips() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("kinds")).unwrap();
    for (rep, kind) in (0..).zip(RunFailureKind::ALL) {
        let mut r = failed_repetition("nginx", "c1", rep);
        r.outcome = Outcome::Failed { kind, reason: format!("reason {rep}") };
        store.record_repetition(id, &r).unwrap();
    }
    let got = store.load_experiment(id).unwrap();
    let outcomes: Vec<Outcome> =
        got.cells[0].repetitions.iter().map(|r| r.record.outcome.clone()).collect();
    let want: Vec<Outcome> = (0..)
        .zip(RunFailureKind::ALL)
        .map(|(rep, kind)| Outcome::Failed { kind, reason: format!("reason {rep}") })
        .collect();
    assert_eq!(outcomes, want);
}

/// A cell's profile comes back with the cell, apart from its repetitions; a second one for
/// the same cell is refused; a cell without one has none.
#[test]
fn a_profile_round_trips_apart_from_the_repetitions() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("p")).unwrap();
    let r = repetition("nginx", "c100", 0);
    store.record_repetition(id, &r).unwrap();
    store.record_repetition(id, &repetition("nginx", "c10", 0)).unwrap();
    assert!(!store.has_profile(id, &r.cell_key).unwrap());
    let profile = herd_store::ProfileRecord {
        cell_key: r.cell_key.clone(),
        tool: "perf".into(),
        recorded_at: "2026-03-01T10:31:00Z".into(),
        weight: 12,
        requests_per_second: Some(4321.5),
        folded: "herd;herd_serve::worker::run;write 9\nherd;main 3\n".into(),
    };
    store.record_profile(id, &profile).unwrap();
    assert!(store.has_profile(id, &r.cell_key).unwrap());
    assert!(store.record_profile(id, &profile).is_err());

    let got = store.load_experiment(id).unwrap();
    let cell = got.cell(&r.cell_key).unwrap();
    assert_eq!(cell.profile.as_ref(), Some(&profile));
    assert_eq!(cell.repetitions.len(), 1, "the profiled run is no repetition");
    let other = got.cells.iter().find(|c| c.key != r.cell_key).unwrap();
    assert_eq!(other.profile, None);
}

/// An A/A twin (`[runner] controls`) comes back as the control of its cell, right after it,
/// and is told apart from the matrix's cells; a record that says otherwise of a known cell
/// is refused.
#[test]
fn a_control_twin_round_trips_beside_its_cell() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new_experiment("aa")).unwrap();
    let original = repetition("nginx", "c100", 0);
    let mut twin = repetition("nginx", "c100", 0);
    twin.cell_key = format!("{} control=twin", original.cell_key);
    twin.control_of = Some(original.cell_key.clone());
    store.record_repetition(id, &twin).unwrap();
    store.record_repetition(id, &original).unwrap();
    let got = store.load_experiment(id).unwrap();
    let keys: Vec<&str> = got.cells.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, [original.cell_key.as_str(), twin.cell_key.as_str()]);
    assert_eq!(got.cells[1].control_of.as_deref(), Some(original.cell_key.as_str()));
    assert_eq!(got.cells[1].repetitions[0].record, twin);
    assert_eq!(got.cells[0].control_of, None);
    let matrix: Vec<&str> = got.matrix_cells().map(|c| c.key.as_str()).collect();
    assert_eq!(matrix, [original.cell_key.as_str()]);

    let mut turned = repetition("nginx", "c100", 1);
    turned.cell_key = twin.cell_key.clone();
    let err = store.record_repetition(id, &turned).unwrap_err().to_string();
    assert!(err.contains("control of"), "{err}");
}
