//! Fixtures shared by the store's integration tests: records with every field set,
//! histograms with known values, temporary directories, and raw looks at a store file
//! through SQLite itself.

use std::fs;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
pub(crate) use herd_stats::{
    ClientHealth, ClientJudgement, ClientVerdict, Failure, HealthFacts, LatencySeries, Measurement,
};
use herd_store::{
    ClientRecord, NetworkFacts, NewExperiment, Outcome, RepetitionRecord, RunFailureKind,
    ServerRecord,
};

/// A histogram in µs holding each `(value, count)`.
pub(crate) fn histogram(values: &[(u64, u64)]) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for &(v, n) in values {
        h.record_n(v, n).unwrap();
    }
    h
}

pub(crate) fn new_experiment(name: &str) -> NewExperiment {
    NewExperiment {
        name: name.to_owned(),
        title: format!("{name}: nginx against herd serve"),
        source: "bundled:quickstart".to_owned(),
        definition: "[experiment]\nname = \"quickstart\"\n\n[[server]]\nname = \"nginx\"\n"
            .to_owned(),
        plan: "3 cells × 3 repetitions\n  server=nginx load=c100\n".to_owned(),
        started_at: "2026-03-01T10:00:00Z".to_owned(),
        herd_version: "0.1.0".to_owned(),
        methodology_version: 1,
        axes: vec!["server".into(), "workload".into(), "load".into()],
        environment: vec![
            ("kernel".into(), "6.1.0-18-amd64".into()),
            ("cpu".into(), "AMD EPYC 7B13".into()),
            ("n_cpus".into(), "2".into()),
            ("net.core.somaxconn".into(), "4096".into()),
            ("root".into(), "yes".into()),
        ],
        reference: Some("seed000".to_owned()),
        published_json: Some(
            herd_store::Published {
                source: "seed 000".into(),
                setup: Some("P4 2.4 GHz, 100 Mbit switch".into()),
                percent_of: None,
                figures: vec![herd_store::PublishedFigure {
                    at: vec![("server".into(), "lighttpd".into())],
                    ran: Some("lighttpd 1.4.25".into()),
                    note: None,
                    values: vec![(herd_store::Measure::RequestsPerSecond, 1018.85)],
                }],
            }
            .to_json()
            .unwrap(),
        ),
        axis_values: Vec::new(),
        report: herd_store::ReportDefaults::default(),
    }
}

pub(crate) fn cell_key(server: &str, load: &str) -> String {
    format!("server={server} workload=page-6397 load={load}")
}

/// A repetition with every field set, varied by `rep` so that repetitions differ.
pub(crate) fn repetition(server: &str, load: &str, rep: u32) -> RepetitionRecord {
    let r = u64::from(rep);
    RepetitionRecord {
        cell_key: cell_key(server, load),
        axes: vec![
            ("server".into(), server.into()),
            ("workload".into(), "page-6397".into()),
            ("load".into(), load.into()),
        ],
        control_of: None,
        repetition: rep,
        position: 2 - rep.min(2),
        started_at: format!("2026-03-01T10:0{rep}:00Z"),
        finished_at: format!("2026-03-01T10:0{rep}:12Z"),
        outcome: Outcome::Ok,
        client: ClientRecord {
            tool: "herd".into(),
            version: "0.1.0".into(),
            argv: vec![
                "herd".into(),
                "run".into(),
                "-c".into(),
                "100".into(),
                "-d".into(),
                "10s".into(),
            ],
            cpus: Some("1".into()),
            judgement: Some(ClientJudgement {
                verdict: if rep == 1 { ClientVerdict::Suspect } else { ClientVerdict::Ok },
                reason: (rep == 1).then(|| "worker threads waited 12 % of the time".into()),
            }),
            health: Some(HealthFacts::Run(ClientHealth {
                verdict: Some(if rep == 1 { ClientVerdict::Suspect } else { ClientVerdict::Ok }),
                worker_threads: 2,
                cpu_busy_share: 0.1 * f64::from(rep),
                ..ClientHealth::default()
            })),
            io: Some(herd_store::ClientIo {
                backend: if rep == 1 { "io_uring" } else { "epoll" }.into(),
                fallback: (rep == 0).then(|| "io_uring not yet for HTTP/1".into()),
            }),
            trace_id: (rep == 1).then(|| "4bf92f3577b34da6a3ce929d0e0e4736".into()),
        },
        servers: vec![
            ServerRecord {
                name: server.into(),
                program: format!("/usr/sbin/{server}"),
                version: "1.22.1".into(),
                argv: vec![server.into(), "-c".into(), "/tmp/herd/nginx.conf".into()],
                cpus: Some("0".into()),
                cpu_seconds: Some(1.25 + 0.5 * rep as f64),
                configs: vec![
                    ("/tmp/herd/nginx.conf".into(), "worker_processes 1;\n".into()),
                    ("/tmp/herd/mime.types".into(), "types { text/html html; }\n".into()),
                ],
            },
            ServerRecord {
                name: "router".into(),
                program: "/usr/sbin/haproxy".into(),
                version: "2.6.12".into(),
                argv: vec![],
                cpus: None,
                cpu_seconds: None,
                configs: vec![],
            },
        ],
        server_cpu_seconds: Some(1.5 + 0.5 * rep as f64),
        time_wait_before: if rep == 0 { None } else { Some(100 * r) },
        drain_seconds: 0.25 * rep as f64,
        // A path's facts on one repetition, so the column is written and read back.
        network: (rep == 1).then(|| NetworkFacts {
            path: "routed".into(),
            findings: vec!["link-bound: x".into()],
            ..NetworkFacts::default()
        }),
        measurements: vec![
            Measurement {
                step: 0,
                label: load.into(),
                concurrency: Some(100),
                rate: None,
                duration_s: 10.0,
                completed: 100_000 + 1000 * r,
                failed: 3 + r,
                failures: vec![(Failure::Connect, 1), (Failure::Receive, 2 + r)],
                statuses: vec![(200, 99_990 + 1000 * r), (503, 10)],
                non_2xx: 10,
                bytes_total: 660_000_000 + r,
                bytes_body: 639_700_000 + r,
                warmup_requests: 5_000,
                histograms: vec![
                    (
                        LatencySeries::Total,
                        histogram(&[(80 + r, 50_000), (120, 49_000), (900, 1_000 + r)]),
                    ),
                    (LatencySeries::TotalFromSend, histogram(&[(75, 99_000), (850, 1_000)])),
                    (LatencySeries::Connect, histogram(&[(20, 100)])),
                    (LatencySeries::FirstByte, histogram(&[(60, 100_000)])),
                    (LatencySeries::Queued, histogram(&[])),
                ],
                reported: vec![],
                judgement: None,
            },
            Measurement {
                step: 1,
                label: format!("{load}-rate-5k"),
                concurrency: None,
                rate: Some(5000.0),
                duration_s: 2.5,
                completed: 12_500,
                failed: 0,
                failures: vec![],
                statuses: vec![(200, 12_500)],
                non_2xx: 0,
                bytes_total: 82_500_000,
                bytes_body: 79_962_500,
                warmup_requests: 0,
                histograms: vec![],
                reported: vec![("latency_p50_us".into(), 85.5), ("latency_p99_us".into(), 1200.0)],
                judgement: Some(ClientJudgement {
                    verdict: ClientVerdict::Suspect,
                    reason: Some(format!("step 2 ({load}-rate-5k): send lag p99 1.2ms")),
                }),
            },
        ],
    }
}

/// The same repetition, failed: a server that did not start, nothing measured.
pub(crate) fn failed_repetition(server: &str, load: &str, rep: u32) -> RepetitionRecord {
    let mut r = repetition(server, load, rep);
    r.outcome = Outcome::Failed {
        kind: RunFailureKind::ServerNotReady,
        reason: format!("{server} did not become ready on 198.18.0.2:80 within 5s"),
    };
    r.client.judgement = None;
    r.client.health = None;
    r.server_cpu_seconds = None;
    r.measurements.clear();
    r
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("herd-store-it-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    pub(crate) fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The names of the files in the directory, sorted.
    pub(crate) fn listing(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Rows in each of the store's tables, read through a separate SQLite connection.
pub(crate) fn row_counts(path: &Path) -> Vec<(String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    tables
        .into_iter()
        .map(|t| {
            let n =
                conn.query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0)).unwrap();
            (t, n)
        })
        .collect()
}

/// The 0001 migration, as a store of schema version 1 was built.
pub(crate) const MIGRATION_0001: &str = include_str!("../../migrations/0001_init.sql");
