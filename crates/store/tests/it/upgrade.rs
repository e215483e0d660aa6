//! A store written at schema version 1 (migration 0001 only, data from
//! tests/data/store_v1.sql) opens with today's code, is migrated in place, reads back every
//! value it held, and takes new records.

use std::path::Path;

use herd_store::{
    ExperimentId, ExperimentStatus, Migration, Outcome, RunFailureKind, Store, StoreError,
    SCHEMA_VERSION,
};

use crate::util::*;

const V1_DATA: &str = include_str!("../data/store_v1.sql");

/// Builds the version-1 store at `path`, as herd 0.1.0 left it.
fn build_v1(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch(&format!("BEGIN; {MIGRATION_0001} {V1_DATA} COMMIT;")).unwrap();
}

fn user_version(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

#[test]
fn a_version_1_store_is_migrated_and_reads_back() {
    let dir = TempDir::new("v1");
    let path = dir.join("results.db");
    build_v1(&path);
    assert_eq!(user_version(&path), 1);

    let store = Store::open_existing(&path).unwrap();
    let list = store.experiments().unwrap();
    assert_eq!(list.len(), 1);
    let s = &list[0];
    assert_eq!(
        (s.id, s.name.as_str(), s.status),
        (ExperimentId(7), "lighttpd-2009", ExperimentStatus::Done)
    );
    assert_eq!((s.n_cells, s.n_repetitions_ok, s.n_repetitions_failed), (2, 2, 1));

    let exp = store.load_experiment(ExperimentId(7)).unwrap();
    assert_eq!(exp.experiment.title, "lighttpd against nginx, as in 2009");
    assert_eq!(exp.experiment.source, "experiments/lighttpd.toml");
    assert_eq!(exp.experiment.definition, "[experiment]\nname = \"lighttpd-2009\"\n");
    assert_eq!(exp.experiment.axes, ["server", "load"]);
    assert_eq!(
        exp.experiment.environment,
        [("kernel".to_owned(), "6.1.0-18-amd64".to_owned()), ("n_cpus".to_owned(), "2".to_owned())]
    );
    assert_eq!(exp.experiment.reference, None);
    assert_eq!(exp.experiment.published(), Ok(None), "before version 5: no published figures");
    assert_eq!(exp.finished_at.as_deref(), Some("2025-12-24T08:04:30Z"));
    assert_eq!(exp.note, None, "version 1 had no notes");

    // lighttpd before nginx: cells come in axis order, not insertion order.
    let keys: Vec<&str> = exp.cells.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, ["server=lighttpd load=c10", "server=nginx load=c10"]);

    let wrk = &exp.cells[0].repetitions[0].record;
    assert_eq!(wrk.client.tool, "wrk");
    assert_eq!(wrk.client.argv, ["wrk", "-c", "10", "-d", "10s"]);
    assert_eq!(wrk.client.judgement.as_ref().map(|j| j.verdict), Some(ClientVerdict::ClientBound));
    assert_eq!(wrk.servers[0].configs, []);
    assert_eq!(wrk.measurements[0].requests_per_second(), Some(25_000.0));
    assert_eq!(wrk.measurements[0].reported("latency_p99_us"), Some(2900.0));
    assert_eq!(wrk.measurements[0].judgement, None, "before version 3: no verdict per step");
    assert_eq!(wrk.client.io, None, "before version 10: no I/O backend");

    let nginx = &exp.cells[1];
    assert_eq!(nginx.repetitions.len(), 2);
    let ab = &nginx.repetitions[0].record;
    assert_eq!((ab.repetition, ab.position), (0, 1));
    assert_eq!(ab.time_wait_before, Some(12));
    assert_eq!(ab.drain_seconds, 1.5);
    assert_eq!(ab.servers[0].argv, ["nginx", "-g", "daemon off;"]);
    assert_eq!(
        ab.servers[0].configs,
        [("/tmp/herd/nginx.conf".to_owned(), "worker_processes 1;\n".to_owned())]
    );
    let m = &ab.measurements[0];
    assert_eq!((m.completed, m.failed, m.non_2xx), (100, 2, 1));
    assert_eq!(m.failures, [(Failure::Length, 2)]);
    assert_eq!(m.statuses, [(200, 99), (404, 1)]);
    assert_eq!(
        m.histogram(LatencySeries::Total).unwrap(),
        &histogram(&[(95, 40), (130, 55), (2_000, 5)])
    );
    assert_eq!(
        nginx.repetitions[1].record.outcome,
        Outcome::Failed {
            kind: RunFailureKind::ServerNotReady,
            reason: "nginx did not become ready on 198.18.0.2:80 within 5s".to_owned()
        },
        "the kind of a failure stored before version 7 is read from its reason"
    );
    drop(store);
    assert_eq!(user_version(&path), i64::from(SCHEMA_VERSION), "migrated in place");
}

#[test]
fn a_migrated_store_takes_new_records() {
    let dir = TempDir::new("v1-write");
    let path = dir.join("results.db");
    build_v1(&path);
    let mut store = Store::open(&path).unwrap();
    let id = store.begin_experiment(&new_experiment("after")).unwrap();
    assert_eq!(id, ExperimentId(8), "ids continue after the old ones");
    store.record_repetition(id, &repetition("nginx", "c100", 0)).unwrap();
    store
        .finish_experiment(
            id,
            ExperimentStatus::Failed,
            "2026-03-02T00:00:00Z",
            Some("nginx crashed"),
        )
        .unwrap();
    store
        .finish_experiment(
            ExperimentId(7),
            ExperimentStatus::Done,
            "2025-12-24T08:04:30Z",
            Some("noted later"),
        )
        .unwrap();
    let after = store.load_experiment(id).unwrap();
    assert_eq!(after.note.as_deref(), Some("nginx crashed"));
    let steps = &after.cells[0].repetitions[0].record.measurements;
    let judged = steps[1].judgement.as_ref();
    assert_eq!(judged.map(|j| j.verdict), Some(ClientVerdict::Suspect), "a step's own verdict");
    assert!(judged.and_then(|j| j.reason.as_deref()).is_some_and(|r| r.starts_with("step 2")));
    assert_eq!(
        store.load_experiment(ExperimentId(7)).unwrap().note.as_deref(),
        Some("noted later")
    );
}

#[test]
fn the_migration_records_which_herd_upgraded_the_store() {
    let dir = TempDir::new("v1-meta");
    let path = dir.join("results.db");
    build_v1(&path);
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: String = conn
        .query_row("SELECT value FROM store_meta WHERE key = 'herd_version'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, env!("CARGO_PKG_VERSION"));
    // The view added by 0002 computes requests per second for sqlite3 users.
    let rps: f64 = conn
        .query_row(
            "SELECT requests_per_second FROM measurement_row WHERE cell = 'server=nginx load=c10'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rps, 400.0);
    // 0010 remade it with the client's I/O backend: none in a store from before.
    let io: Option<String> = conn
        .query_row(
            "SELECT client_io FROM measurement_row WHERE cell = 'server=nginx load=c10'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(io, None);
}

/// Builds the version-6 store at `path`: migrations 0001 to 0006, then
/// tests/data/store_v6_failures.sql.
fn build_v6_with_failures(path: &Path) {
    const MIGRATIONS_1_TO_6: [&str; 6] = [
        MIGRATION_0001,
        include_str!("../../migrations/0002_experiment_note.sql"),
        include_str!("../../migrations/0003_step_verdict.sql"),
        include_str!("../../migrations/0004_path_facts.sql"),
        include_str!("../../migrations/0005_published.sql"),
        include_str!("../../migrations/0006_report_shape.sql"),
    ];
    let conn = rusqlite::Connection::open(path).unwrap();
    let data = include_str!("../data/store_v6_failures.sql");
    conn.execute_batch(&format!("BEGIN; {} {data} COMMIT;", MIGRATIONS_1_TO_6.join("\n"))).unwrap();
}

#[test]
fn migrating_a_version_6_store_gives_old_failures_the_kind_their_reason_shows() {
    use RunFailureKind::*;
    let dir = TempDir::new("v6-kinds");
    let path = dir.join("results.db");
    build_v6_with_failures(&path);
    assert_eq!(user_version(&path), 6);
    let store = Store::open_existing(&path).unwrap();
    let exp = store.load_experiment(ExperimentId(3)).unwrap();
    let kinds: Vec<Option<RunFailureKind>> =
        exp.cells[0].repetitions.iter().map(|r| r.record.outcome.failure_kind()).collect();
    assert_eq!(
        kinds,
        [
            None,
            Some(ServerNotReady),
            Some(ServerExited),
            Some(ServerExited),
            Some(PathUnreachable),
            // The router program died: the process is the cause, not the path.
            Some(ServerExited),
            Some(Verify),
            Some(ClientTimedOut),
            Some(ClientTimedOut),
            Some(ClientFailed),
            Some(ClientFailed),
            Some(Setup),
            Some(Setup),
            Some(Unknown),
        ]
    );
    // The reasons are kept word for word.
    assert_eq!(
        exp.cells[0].repetitions[13].record.outcome.failure_reason(),
        Some("Resource temporarily unavailable (os error 11)")
    );
    drop(store);
    assert_eq!(user_version(&path), i64::from(SCHEMA_VERSION));
}

#[test]
fn a_stored_kind_this_herd_does_not_know_is_an_error_that_names_it() {
    let dir = TempDir::new("v7-unknown-kind");
    let path = dir.join("results.db");
    build_v6_with_failures(&path);
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE repetition SET failure_kind = 'gremlins' WHERE id = 2", []).unwrap();
    drop(conn);
    let store = Store::open_existing(&path).unwrap();
    let err = store.load_experiment(ExperimentId(3)).unwrap_err().to_string();
    assert!(
        err.contains("repetition 2: unknown run failure kind `gremlins` (known: setup, "),
        "{err}"
    );
}

/// A reader never migrates (before: `herd report` opened the store read-write and migrated
/// it): an older store is refused with what it is and how to migrate it, and the file stays
/// byte for byte what it was, with nothing created beside it.
#[test]
fn a_reader_refuses_an_older_store_and_leaves_it_as_it_was() {
    let dir = TempDir::new("v1-read");
    let path = dir.join("results.db");
    build_v1(&path);
    let before = std::fs::read(&path).unwrap();
    let listing = dir.listing();

    let err = Store::open_read_only(&path).unwrap_err();
    assert!(matches!(err, StoreError::Outdated { found: 1, .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("schema version 1;"), "{msg}");
    assert!(msg.contains(&format!("reads version {SCHEMA_VERSION}")), "{msg}");
    assert!(msg.contains(&format!("`herd lab migrate {}`", path.display())), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the store was changed");
    assert_eq!(dir.listing(), listing, "files were created beside the store");
}

#[test]
fn migrating_keeps_a_copy_of_the_old_store_then_migrates_it() {
    let dir = TempDir::new("v1-migrate");
    let path = dir.join("results.db");
    build_v1(&path);
    let before = row_counts(&path);

    let Migration::Migrated { from, kept } = Store::migrate_file(&path).unwrap() else {
        panic!("a version-1 store was not migrated")
    };
    assert_eq!((from, kept.clone()), (1, dir.join("results.db.schema-1.bak")));
    assert_eq!(user_version(&kept), 1, "the copy is the old store");
    assert_eq!(row_counts(&kept), before, "the copy holds every row");
    assert_eq!(user_version(&path), i64::from(SCHEMA_VERSION));
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.experiments().unwrap()[0].id, ExperimentId(7));
    drop(store);

    // Once migrated, again is nothing to do; a copy in the way is refused, file untouched.
    assert_eq!(Store::migrate_file(&path).unwrap(), Migration::Current);
    let other = dir.join("other.db");
    build_v1(&other);
    std::fs::write(dir.join("other.db.schema-1.bak"), "in the way").unwrap();
    let untouched = std::fs::read(&other).unwrap();
    let err = Store::migrate_file(&other).unwrap_err();
    assert!(matches!(err, StoreError::CopyExists { .. }), "{err:?}");
    assert_eq!(std::fs::read(&other).unwrap(), untouched);
}
