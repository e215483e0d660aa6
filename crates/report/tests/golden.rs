//! Golden tests of the experiment table: fixed experiments, recorded through an in-memory
//! store and loaded back as a report would, rendered and compared byte for byte with the
//! files in tests/golden/.
//!
//! `UPDATE_GOLDEN=1 cargo test -p herd-report --test golden` rewrites the files; check the
//! figures by hand before keeping the diff (the fixture comments give the expected ones).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hdrhistogram::Histogram;
use herd_report::{experiment_table, CompareFormat, Format, Options};
use herd_stats::{
    ClientJudgement, ClientVerdict, Failure, LatencySeries, Measurement,
    REPORTED_TIMER_RESOLUTION_S,
};
use herd_store::{
    ClientRecord, ExperimentStatus, Measure, NetworkFacts, NewExperiment, Outcome, Published,
    PublishedFigure, RepetitionRecord, ReportDefaults, RunFailureKind, ServerRecord, Store,
    StoredExperiment,
};
use herd_testutil::golden::Goldens;

fn check_golden(name: &str, got: &[u8]) {
    Goldens::of(env!("CARGO_MANIFEST_DIR")).check(name, got);
}

fn render(exp: &StoredExperiment) -> Vec<u8> {
    let mut out = Vec::new();
    experiment_table(exp, &mut out).unwrap();
    out
}

fn histogram(values: &[(u64, u64)]) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for &(v, n) in values {
        h.record_n(v, n).unwrap();
    }
    h
}

fn experiment(name: &str, axes: &[&str]) -> NewExperiment {
    NewExperiment {
        name: name.into(),
        title: "nginx, lighttpd and herd serve on a 6 KB page".into(),
        source: "bundled:quickstart".into(),
        definition: String::new(),
        plan: String::new(),
        started_at: "2026-03-01T10:00:00Z".into(),
        herd_version: "0.1.0".into(),
        methodology_version: 1,
        axes: axes.iter().map(|a| a.to_string()).collect(),
        environment: vec![],
        reference: None,
        published_json: None,
        axis_values: Vec::new(),
        report: herd_store::ReportDefaults::default(),
    }
}

/// One measurement of `completed` requests over 10 s: `rps = completed / 10`.
fn measurement(
    step: u32,
    label: &str,
    completed: u64,
    failed: &[(&str, u64)],
    non_2xx: u64,
    total: Option<Histogram<u64>>,
) -> Measurement {
    Measurement {
        step,
        label: label.into(),
        concurrency: Some(100),
        rate: None,
        duration_s: 10.0,
        completed,
        failed: failed.iter().map(|(_, n)| n).sum(),
        failures: failed.iter().map(|(k, n)| (k.parse::<Failure>().unwrap(), *n)).collect(),
        statuses: vec![(200, completed - non_2xx), (503, non_2xx)],
        non_2xx,
        bytes_total: completed * 6_600,
        bytes_body: completed * 6_397,
        warmup_requests: 1_000,
        histograms: total.into_iter().map(|h| (LatencySeries::Total, h)).collect(),
        reported: vec![],
        judgement: None,
    }
}

fn repetition(
    axes: &[(&str, &str)],
    rep: u32,
    tool: &str,
    verdict: Option<(&str, &str)>,
    server_cpu: Option<f64>,
    measurements: Vec<Measurement>,
) -> RepetitionRecord {
    RepetitionRecord {
        cell_key: axes.iter().map(|(a, v)| format!("{a}={v}")).collect::<Vec<_>>().join(" "),
        axes: axes.iter().map(|(a, v)| (a.to_string(), v.to_string())).collect(),
        control_of: None,
        repetition: rep,
        position: rep,
        started_at: "2026-03-01T10:01:00Z".into(),
        finished_at: "2026-03-01T10:01:12Z".into(),
        outcome: Outcome::Ok,
        client: ClientRecord {
            tool: tool.into(),
            version: "1".into(),
            argv: vec![tool.into()],
            cpus: None,
            judgement: verdict.map(|(v, r)| ClientJudgement {
                verdict: v.parse::<ClientVerdict>().unwrap(),
                reason: Some(r.to_owned()),
            }),
            health: None,
            io: None,
            trace_id: None,
        },
        servers: vec![ServerRecord {
            name: axes[0].1.into(),
            program: axes[0].1.into(),
            version: "1".into(),
            argv: vec![],
            cpus: None,
            cpu_seconds: server_cpu,
            configs: vec![],
        }],
        server_cpu_seconds: server_cpu,
        time_wait_before: None,
        drain_seconds: 0.0,
        network: None,
        measurements,
    }
}

fn ok(v: &str) -> Option<(&str, &str)> {
    Some((v, "all within limits"))
}

/// Four cells, shuffled on purpose when recorded:
/// - nginx c100: 100 000, 102 000, 98 000 req/s (median 100000, mean 100000, s = 2000,
///   ±95% = 4.3027·2000/√3 = 4968.4 = ±5.0%, spread 2.0%); p50/p99 from the merged
///   histograms (p50 82 µs, p99 150 µs); one suspect repetition; 2 + 3 connect/receive
///   failures, 5 non-2xx; server CPU 1.0, 1.02, 0.98 s → 1.0 µs per request each;
/// - nginx c1000: one repetition failed (no measurement), two ok: 90 000 and 94 000
///   (median 92000, ±95% = 12.7062·2828.4/√2 = ±27.6%); p50 and p99 9.007 and 8.807 ms
///   (the tops of their HdrHistogram buckets at 3 significant digits): median 8.907 ms each;
/// - herd-serve c100: three ok, one of them client-bound; no CPU figure;
/// - lighttpd c100 measured by wrk: no histograms, its own percentiles.
fn matrix() -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("quickstart", &["server", "load"])).unwrap();
    let nginx = [("server", "nginx"), ("load", "c100")];
    let nginx_1k = [("server", "nginx"), ("load", "c1000")];
    let herd = [("server", "herd-serve"), ("load", "c100")];
    let lighttpd = [("server", "lighttpd"), ("load", "c100")];
    let fast = |shift: u64| Some(histogram(&[(80 + shift, 9_000), (150, 900), (2_400, 100)]));

    let mut records = vec![
        repetition(
            &nginx_1k,
            0,
            "herd",
            ok("ok"),
            Some(9.0),
            vec![measurement(
                0,
                "c1000",
                900_000,
                &[("timeout", 7)],
                0,
                Some(histogram(&[(9_000, 990), (45_000, 10)])),
            )],
        ),
        repetition(
            &nginx,
            1,
            "herd",
            Some(("suspect", "worker threads waited 12 % of the time")),
            Some(1.02),
            vec![measurement(0, "c100", 1_020_000, &[("receive", 3)], 5, fast(5))],
        ),
        repetition(
            &herd,
            0,
            "herd",
            ok("ok"),
            None,
            vec![measurement(0, "c100", 1_210_000, &[], 0, fast(0))],
        ),
        repetition(
            &nginx,
            0,
            "herd",
            ok("ok"),
            Some(1.0),
            vec![measurement(0, "c100", 1_000_000, &[("connect", 2)], 0, fast(0))],
        ),
        repetition(
            &lighttpd,
            0,
            "wrk",
            None,
            Some(2.0),
            vec![Measurement {
                histograms: vec![],
                reported: vec![
                    ("latency_p50_us".into(), 310.0),
                    ("latency_p99_us".into(), 2_900.0),
                ],
                ..measurement(0, "c100", 800_000, &[], 0, None)
            }],
        ),
        repetition(
            &herd,
            2,
            "herd",
            Some(("client-bound", "client CPU at 98 % of its quota")),
            None,
            vec![measurement(0, "c100", 1_190_000, &[], 0, fast(1))],
        ),
        repetition(
            &nginx_1k,
            2,
            "herd",
            ok("ok"),
            Some(9.4),
            vec![measurement(0, "c1000", 940_000, &[], 0, Some(histogram(&[(8_800, 1_000)])))],
        ),
        repetition(
            &nginx,
            2,
            "herd",
            ok("ok"),
            Some(0.98),
            vec![measurement(0, "c100", 980_000, &[], 0, fast(2))],
        ),
        repetition(
            &herd,
            1,
            "herd",
            ok("ok"),
            None,
            vec![measurement(0, "c100", 1_200_000, &[], 0, fast(0))],
        ),
        repetition(
            &lighttpd,
            1,
            "wrk",
            None,
            Some(2.2),
            vec![Measurement {
                histograms: vec![],
                reported: vec![
                    ("latency_p50_us".into(), 330.0),
                    ("latency_p99_us".into(), 3_100.0),
                ],
                ..measurement(0, "c100", 820_000, &[], 0, None)
            }],
        ),
    ];
    let mut failed = repetition(&nginx_1k, 1, "herd", None, None, vec![]);
    failed.outcome = Outcome::Failed {
        kind: RunFailureKind::ServerNotReady,
        reason: "nginx did not become ready on 198.18.0.2:80 within 5s".into(),
    };
    records.insert(4, failed);
    for r in &records {
        store.record_repetition(id, r).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn matrix_table() {
    check_golden("table.txt", &render(&matrix()));
}

/// A stepped load (WebBench-style: 10, 50, 100 clients) on two servers; the run was
/// interrupted during the second server's second repetition, which measured one step.
/// herd judged each step: nginx's 100-client step was client-bound, the others ok.
fn stepped() -> StoredExperiment {
    stepped_from(experiment("steps", &["server", "load"]))
}

fn stepped_from(new: NewExperiment) -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new).unwrap();
    const BOUND: &str = "step 3 (c100): herd's worker thread was busy 97 % of the run";
    let steps = |server: &str, base: u64, n: usize| -> Vec<Measurement> {
        [("c10", 1u64), ("c50", 4), ("c100", 6)]
            .iter()
            .take(n)
            .enumerate()
            .map(|(i, (label, factor))| {
                let bound = server == "nginx" && *label == "c100";
                Measurement {
                    concurrency: label[1..].parse().ok(),
                    judgement: Some(ClientJudgement {
                        verdict: if bound { ClientVerdict::ClientBound } else { ClientVerdict::Ok },
                        reason: bound.then(|| BOUND.to_owned()),
                    }),
                    ..measurement(
                        i as u32,
                        label,
                        base * factor,
                        &[],
                        0,
                        Some(histogram(&[(100 * factor, 1_000)])),
                    )
                }
            })
            .collect()
    };
    for (server, rep, base, n) in [
        ("nginx", 0, 100_000, 3),
        ("apache", 0, 60_000, 3),
        ("nginx", 1, 104_000, 3),
        ("apache", 1, 62_000, 1),
    ] {
        let axes = [("server", server), ("load", "steps")];
        // The repetition's verdict is its worst step's.
        let verdict = if server == "nginx" { Some(("client-bound", BOUND)) } else { ok("ok") };
        store
            .record_repetition(
                id,
                &repetition(&axes, rep, "herd", verdict, Some(3.3), steps(server, base, n)),
            )
            .unwrap();
    }
    store
        .finish_experiment(
            id,
            ExperimentStatus::Interrupted,
            "2026-03-01T10:05:00Z",
            Some("interrupted after 4 of 6 repetitions"),
        )
        .unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn stepped_table() {
    check_golden("table_stepped.txt", &render(&stepped()));
}

/// ab -n 100 -c 5 as in seed 000: runs of 3 and 4 ms, timed by ab to the millisecond, so
/// the rates are flagged; herd's 400 ms runs of the same cell are not.
fn coarse_clock() -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("coarse", &["server", "client"])).unwrap();
    for (client, rep, duration_s) in
        [("ab", 0, 0.003), ("ab", 1, 0.003), ("ab", 2, 0.004), ("herd", 0, 0.4), ("herd", 1, 0.41)]
    {
        let mut m = Measurement {
            duration_s,
            ..measurement(0, "", 100, &[], 0, Some(histogram(&[(150, 100)])))
        };
        if client == "ab" {
            m.reported.push((REPORTED_TIMER_RESOLUTION_S.to_owned(), 0.001));
        }
        let axes = [("server", "nginx"), ("client", client)];
        store
            .record_repetition(id, &repetition(&axes, rep, client, ok("ok"), None, vec![m]))
            .unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:05:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn coarse_clock_table() {
    check_golden("table_coarse_clock.txt", &render(&coarse_clock()));
}

#[test]
fn an_experiment_without_repetitions_renders() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("empty", &["server"])).unwrap();
    let text = String::from_utf8(render(&store.load_experiment(id).unwrap())).unwrap();
    assert!(text.contains("status      running\n"), "{text}");
    assert!(text.contains("finished    -\n"), "{text}");
    assert!(text.contains("server  reps  req/s ±95%  spread"), "{text}");
    assert!(text.contains("(no repetitions recorded)\n"), "{text}");
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(render(&matrix()), render(&matrix()));
}

/// A path experiment: direct served everything; nft-dnat's repetitions met a full conntrack
/// table (1 and 3), a link limit (2 and 3), one stored record is unreadable, and an ok
/// repetition of sslh-select failed requests (its rate is marked ≠).
fn paths() -> StoredExperiment {
    paths_from(experiment("paths", &["server", "path"]))
}

fn paths_from(new: NewExperiment) -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new).unwrap();
    let h = || Some(histogram(&[(200, 1_000)]));
    let facts = |findings: &[&str]| {
        Some(NetworkFacts {
            path: "x".into(),
            findings: findings.iter().map(|f| f.to_string()).collect(),
            ..NetworkFacts::default()
        })
    };
    let mut records = Vec::new();
    for rep in 0..3u32 {
        let direct = [("server", "nginx"), ("path", "direct")];
        let mut r = repetition(
            &direct,
            rep,
            "ab",
            ok("ok"),
            Some(1.0),
            vec![measurement(0, "n", 300_000, &[], 0, h())],
        );
        r.network = facts(&[]);
        records.push(r);
        let nat = [("server", "nginx"), ("path", "nft-dnat")];
        let mut r = repetition(
            &nat,
            rep,
            "ab",
            ok("ok"),
            Some(1.0),
            // 12.5 s a run: 20000 req/s.
            vec![Measurement { duration_s: 12.5, ..measurement(0, "n", 250_000, &[], 0, h()) }],
        );
        r.network = match rep {
            0 => facts(&["conntrack table full on the router: 10 of 10 entries, 5 packets dropped, 0 inserts failed"]),
            1 => facts(&["link-bound: 95.0 Mbit/s carried on a 100 Mbit/s link (95 %): the link, not the server, set this rate"]),
            _ => facts(&[
                "conntrack table full on the router: 10 of 10 entries, 9 packets dropped, 0 inserts failed",
                "link-bound: 96.0 Mbit/s carried on a 100 Mbit/s link (96 %): the link, not the server, set this rate",
            ]),
        };
        records.push(r);
        let sslh = [("server", "nginx"), ("path", "sslh-select")];
        let failed: &[(&str, u64)] = if rep == 1 { &[("length", 40)] } else { &[] };
        let mut r = repetition(
            &sslh,
            rep,
            "ab",
            ok("ok"),
            Some(1.0),
            // 8 s a run: 25000 req/s.
            vec![Measurement { duration_s: 8.0, ..measurement(0, "n", 200_000, failed, 0, h()) }],
        );
        r.network = facts(&[]);
        records.push(r);
    }
    for r in &records {
        store.record_repetition(id, r).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn paths_table() {
    check_golden("table_paths.txt", &render(&paths()));
}

fn figure(
    at: &[(&str, &str)],
    ran: Option<&str>,
    note: Option<&str>,
    values: &[(Measure, f64)],
) -> PublishedFigure {
    PublishedFigure {
        at: at.iter().map(|(a, v)| (a.to_string(), v.to_string())).collect(),
        ran: ran.map(str::to_owned),
        note: note.map(str::to_owned),
        values: values.to_vec(),
    }
}

/// The path experiment re-running a seed-001-like article: seconds and percent of direct.
/// Today: direct 30000 req/s (10 s per run, 6600 bytes a response: 193359 KiB/s),
/// nft-dnat 20000 (12.5 s, 66.7 %, 128906 KiB/s), sslh-select 25000 (8 s, 83.3 %, ≠: one ok
/// repetition failed requests).
///
/// Like seed 001's file, it asks for seconds with percentages of direct, and declares its
/// paths in an order of its own, which the tables keep.
fn published_paths() -> StoredExperiment {
    let mut new = experiment("paths", &["server", "path"]);
    new.reference = Some("seed001".into());
    new.axis_values =
        vec![vec!["nginx".into()], vec!["direct".into(), "sslh-select".into(), "nft-dnat".into()]];
    new.report = ReportDefaults {
        baseline: Some(("path".into(), "direct".into())),
        measure: Some(Measure::Seconds),
    };
    new.published_json = Some(
        Published {
            source: "seed 001, 2014 (shared/seeds/001_08cfdb22ab3922c7.txt)".into(),
            setup: Some("Xen 4.4.0 host, router VM Fedora 20".into()),
            percent_of: Some(("path".into(), "direct".into())),
            figures: vec![
                figure(
                    &[("path", "direct")],
                    Some("NGINX 1.6.0"),
                    None,
                    &[
                        (Measure::Seconds, 2.13),
                        (Measure::Percent, 100.0),
                        (Measure::RequestsPerSecond, 4694.8),
                        (Measure::KbPerSecond, 30662.5),
                    ],
                ),
                figure(
                    &[("path", "nft-dnat")],
                    Some("NGINX 1.6.0"),
                    None,
                    &[(Measure::Seconds, 2.909), (Measure::Percent, 73.2)],
                ),
                figure(
                    &[("path", "sslh-select")],
                    Some("NGINX 1.6.0"),
                    Some("2500 requests, time multiplied by 4"),
                    &[(Measure::Seconds, 151.464), (Measure::Percent, 1.4)],
                ),
            ],
        }
        .to_json()
        .unwrap(),
    );
    paths_from(new)
}

#[test]
fn published_figures_table() {
    check_golden("table_published.txt", &render(&published_paths()));
}

fn render_as(exp: &StoredExperiment, options: &Options, format: Format) -> Vec<u8> {
    let mut out = Vec::new();
    herd_report::write(exp, options, format, &mut out).unwrap();
    out
}

#[test]
fn markdown_report() {
    check_golden(
        "report_published.md",
        &render_as(&published_paths(), &Options::default(), Format::Markdown),
    );
}

#[test]
fn csv_report() {
    check_golden("report.csv", &render_as(&matrix(), &Options::default(), Format::Csv));
    check_golden(
        "report_published_steps.csv",
        &render_as(&published_steps(), &Options::default(), Format::Csv),
    );
}

#[test]
fn markdown_and_csv_show_the_text_reports_figures() {
    let exp = published_paths();
    let text = String::from_utf8(render(&exp)).unwrap();
    let md = String::from_utf8(render_as(&exp, &Options::default(), Format::Markdown)).unwrap();
    // The matrix's entries, word for word, in both, with the article's figure beside each
    // (its percentage where it is not the baseline itself).
    for entry in [
        "10.000 ±0.0% | then 2.130",
        "12.500^ ±0.0% (66.7 %) | then 2.909 (73.2 %)",
        "≠8.000 ±0.0% (83.3 %) 40 failed | then 151.464 (1.4 %)",
    ] {
        assert!(text.contains(entry), "{entry} in\n{text}");
        let escaped = entry.replace('|', r"\|");
        assert!(md.contains(&format!("| {escaped} |")), "{entry} in\n{md}");
    }
    let csv = String::from_utf8(render_as(&exp, &Options::default(), Format::Csv)).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[0].starts_with(
        "experiment,server,path,step,clients,offered_rate,reps_ok,reps,reps_not_held,measure,\
             median,"
    ));
    // Declared order: direct, sslh-select, nft-dnat.
    assert!(
        lines[1].starts_with("1,nginx,direct,,100,,3,3,0,seconds,10,10,10,0,path=direct,,30000,"),
        "{csv}"
    );
    assert!(
        lines[2].starts_with(
            "1,nginx,sslh-select,,100,,3,3,0,seconds,8,8,8,0,path=direct,83.33333333333334,25000,"
        ),
        "{csv}"
    );
    assert!(lines[3].starts_with("1,nginx,nft-dnat,,100,,3,3,0,seconds,12.5,12.5,12.5,0,path=direct,66.66666666666666,20000,"), "{csv}");
}

#[test]
fn options_choose_the_baseline_and_the_measure() {
    let exp = matrix();
    let text =
        |options: &Options| String::from_utf8(render_as(&exp, options, Format::Text)).unwrap();
    let by_load = text(&Options { baseline: Some("load=c1000".into()), measure: None });
    assert!(
        by_load.contains("requests/s by load and server: median ±95 % confidence interval; in parentheses: percentage of load=c1000's\n"),
        "{by_load}"
    );
    assert!(by_load.contains("≠100000! ±5.0% (108.7 %) 10 failed"), "{by_load}");
    let kb = text(&Options { baseline: None, measure: Some(Measure::KbPerSecond) });
    assert!(kb.contains("KiB/s by server and load:"), "{kb}");

    let refused = |baseline: &str, want: &str| {
        let options = Options { baseline: Some(baseline.into()), measure: None };
        let err = herd_report::write(&exp, &options, Format::Text, &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), want);
    };
    refused("path=direct", "--baseline path=direct: `path` is not an axis of experiment 1 (quickstart): use `server`, `load`");
    refused("server=apache", "--baseline server=apache: `apache` is not a value of server in experiment 1 (quickstart): use `herd-serve`, `lighttpd`, `nginx`");
    refused(
        "server",
        "--baseline server: give an axis and one of its values, e.g. --baseline path=direct",
    );
    let options = Options { baseline: None, measure: Some(Measure::Percent) };
    let err = herd_report::write(&exp, &options, Format::Csv, &mut Vec::new()).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "--measure: `percent` is not a figure the tables show: use `requests_per_second`"
        ),
        "{err}"
    );
    // A measure stored with the experiment is named as such.
    let mut stored = exp.clone();
    stored.experiment.report.measure = Some(Measure::ClientsAtPeak);
    let err = herd_report::write(&stored, &Options::default(), Format::Text, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("experiment 1's [report] measure: `clients_at_peak` is not"), "{err}");
    assert_eq!(
        herd_report::parse_measure("fast").unwrap_err(),
        "`fast` is not a figure the tables show: use `requests_per_second`, `seconds`, `kb_per_second`, `mbit_per_second`, `connections_per_second`, `p50`, `p99`, `p99.9`, `cpu_per_request`"
    );
    assert_eq!(herd_report::parse_measure("cpu-per-request"), Ok(Measure::CpuPerRequest));
    assert_eq!(herd_report::parse_measure("p99.9"), Ok(Measure::LatencyP999));
}

/// The servers' CPU method as a lab run with cgroups stores it (`CpuAccounting`'s words).
const CGROUP_V1: &str = "cgroup v1: cpuacct.usage of a cgroup made for each server process \
                         (every process it forks, ended ones included)";

/// Two servers at a pinned rate, three repetitions each, whose p99s differ widely:
/// - a: p99s of 82, 15.6 and 2.6 ms (each 9,800 requests at 1 ms, 200 at the p99: the p99 is
///   the 9,900th of 10,000; HdrHistogram's buckets at 3 digits make them 82.05, 15.61 and
///   2.601 ms); pooled, their requests would give one p99 and no interval; each
///   repetition's own: median 15.61 ms, and ±95 % = 4.3027·s/√3 over their mean: ±316.8 %. p50 1 ms each. Server CPU 0.2, 0.21, 0.19 s over
///   10,000 requests: 20, 21, 19 µs (median 20, ±95 % = 4.3027·1/√3 = ±12.4 %).
/// - b: p99s of 3.0, 3.1, 2.9 ms (median 3.0 ms, ±95 % = 4.3027·0.1/√3 = ±8.3 %; 19.2 % of
///   a's), p50 0.5 ms; CPU 0.1 s each: 10 µs (50 % of a's).
///
/// Its servers' CPU was read from cgroups: the header says so.
fn pinned_rate() -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let mut new = experiment("pinned", &["server", "load"]);
    new.environment = vec![("server_cpu_accounting".into(), CGROUP_V1.into())];
    let id = store.begin_experiment(&new).unwrap();
    let p99s: [(&str, [u64; 3], u64, [f64; 3]); 2] = [
        ("a", [82_000, 15_600, 2_600], 1_000, [0.2, 0.21, 0.19]),
        ("b", [3_000, 3_100, 2_900], 500, [0.1, 0.1, 0.1]),
    ];
    for rep in 0..3 {
        for (server, p99, p50, cpu) in &p99s {
            let axes = [("server", *server), ("load", "r1000")];
            let h = histogram(&[(*p50, 9_800), (p99[rep as usize], 200)]);
            let m = measurement(0, "r1000", 10_000, &[], 0, Some(h));
            let r = repetition(&axes, rep, "herd", ok("ok"), Some(cpu[rep as usize]), vec![m]);
            store.record_repetition(id, &r).unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn latency_is_each_repetitions_own_and_can_lead_the_table() {
    let exp = pinned_rate();
    let text = |measure| {
        let options = Options { baseline: Some("server=a".into()), measure: Some(measure) };
        String::from_utf8(render_as(&exp, &options, Format::Text)).unwrap()
    };
    let p99 = text(Measure::LatencyP99);
    check_golden("table_p99.txt", p99.as_bytes());
    assert!(p99.contains("p99 latency (ms) by server:"), "{p99}");
    assert!(p99.contains("percentage (lower is better) of server=a's"), "{p99}");
    // a's median of its repetitions' own p99s, with the interval their spread gives.
    assert!(p99.contains("15.61 ±316.8%"), "{p99}");
    assert!(p99.contains("3.001 ±8.3% (19.2 %)"), "{p99}");
    // How the servers' CPU was read, in the header of every format.
    assert!(p99.contains(&format!("\nserver cpu  {CGROUP_V1}\n")), "{p99}");
    let md = String::from_utf8(render_as(&exp, &Options::default(), Format::Markdown)).unwrap();
    assert!(md.contains(CGROUP_V1), "{md}");
    let cpu = text(Measure::CpuPerRequest);
    assert!(cpu.contains("server CPU per request (µs) by server:"), "{cpu}");
    assert!(cpu.contains("20.00 ±12.4%"), "{cpu}");
    assert!(cpu.contains("10.00 ±0.0% (50.0 %)"), "{cpu}");
    // The page colours a lower latency as the better one: b's share is a's over b's.
    let mut page = Vec::new();
    let options = Options { baseline: Some("server=a".into()), measure: Some(Measure::LatencyP99) };
    herd_report::write_html(std::slice::from_ref(&exp), &options, "fixed.db", &mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(
        page.contains(&format!("<td>server_cpu_accounting</td><td>{CGROUP_V1}</td>")),
        "{page}"
    );
    let b = page.find("data-cell=\"server=b load=r1000\"").expect("b's entry on the page");
    let tag = &page[page[..b].rfind('<').unwrap()..b];
    let share: f64 =
        tag.split("data-percent=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(share > 400.0, "b's p99 is about a fifth of a's: {tag}");
}

/// An article's figures as the store keeps them (no setup, no percentages).
fn published_json(source: &str, figures: Vec<PublishedFigure>) -> Option<String> {
    Some(
        Published { source: source.into(), setup: None, percent_of: None, figures }
            .to_json()
            .unwrap(),
    )
}

/// A stepped experiment against a published peak: nginx peaks at step c100 (61200 req/s,
/// the median of its two repetitions), apache at c100 too (36000, from the one repetition
/// that reached it).
fn published_steps() -> StoredExperiment {
    let mut new = experiment("steps", &["server", "load"]);
    new.published_json = published_json(
        "seed 004, Mindcraft, April 1999",
        vec![figure(
            &[("server", "apache")],
            Some("Apache 1.3.4, Linux 2.2.2"),
            None,
            &[(Measure::PeakRequestsPerSecond, 1000.0), (Measure::ClientsAtPeak, 160.0)],
        )],
    );
    stepped_from(new)
}

/// A NetBench-like ramp against a published Mbit/s peak: samba's throughput peaks at c4
/// (60 and 61 MB over 10 s: 48.0 and 48.8 Mbit/s) while its completed operations keep rising
/// to c16, so the peak is read by Mbit/s and the clients at it are 4, not 16.
fn published_mbit_steps() -> StoredExperiment {
    let mut new = experiment("steps", &["server", "load"]);
    new.published_json = published_json(
        "seed 004, Mindcraft, April 1999 (NetBench 5.01)",
        vec![figure(
            &[("server", "samba")],
            Some("Samba 2.0.1, Linux 2.2.2"),
            None,
            &[(Measure::PeakMbitPerSecond, 114.6), (Measure::ClientsAtPeak, 32.0)],
        )],
    );
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new).unwrap();
    for rep in 0..2u64 {
        let steps = [
            ("c1", 1, 1_000, 12_000_000),
            ("c4", 4, 3_000, 60_000_000),
            ("c16", 16, 5_000, 40_000_000),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(label, clients, ops, bytes))| Measurement {
            concurrency: Some(clients),
            bytes_total: bytes + rep * 1_000_000,
            ..measurement(i as u32, label, ops, &[], 0, None)
        })
        .collect();
        let axes = [("server", "samba"), ("load", "steps")];
        let rec = repetition(&axes, rep as u32, "smbtorture", None, None, steps);
        store.record_repetition(id, &rec).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:05:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn published_mbit_peak_is_read_by_mbit() {
    let text = String::from_utf8(render(&published_mbit_steps())).unwrap();
    let row = text.lines().find(|l| l.contains("Samba 2.0.1")).expect(&text);
    // then 114.6 Mbit/s at 32 clients; now the c4 step: median of 48.0 and 48.8, at 4.
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(row.contains("114.6") && row.contains("48.4"), "{row}");
    assert_eq!(cells.last(), Some(&"4"), "{row}");
    check_golden("table_published_mbit_steps.txt", text.as_bytes());
}

/// An article's two systems beside one cell of today's (seed 004: NT 4.0's own SMB server and
/// Samba, both against today's Samba): a row each in then-and-now, today's figure in both.
#[test]
fn two_systems_that_ran_then_get_a_row_each() {
    let mut exp = published_mbit_steps();
    exp.experiment.published_json = published_json(
        "seed 004, Mindcraft, April 1999 (NetBench 5.01)",
        vec![
            figure(
                &[("server", "samba")],
                Some("Samba 2.0.1, Linux 2.2.2"),
                None,
                &[(Measure::PeakMbitPerSecond, 114.6), (Measure::ClientsAtPeak, 32.0)],
            ),
            figure(
                &[("server", "samba")],
                Some("Windows NT 4.0, its own SMB server"),
                None,
                &[(Measure::PeakMbitPerSecond, 286.7), (Measure::ClientsAtPeak, 112.0)],
            ),
        ],
    );
    let text = String::from_utf8(render(&exp)).unwrap();
    let rows: Vec<&str> =
        text.lines().filter(|l| l.contains("Samba 2.0.1") || l.contains("Windows NT")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].contains("114.6") && rows[1].contains("286.7"), "{text}");
    assert!(rows.iter().all(|r| r.contains("48.4")), "today's peak beside each: {text}");
    // On the chart, each system is a series of its own.
    let charts = herd_report::charts(&exp, Some(Measure::MbitPerSecond)).unwrap();
    let svg = &charts[0].1;
    assert!(svg.contains(r#"<g class="point" data-x="112" data-y="286.7">"#), "{svg}");
    assert!(svg.contains("published: server=samba (Windows NT 4.0, its own SMB server)"), "{svg}");
}

/// NetBench's chart is throughput in Mbit/s against clients: a ramp measured in Mbit/s draws
/// its medians and the article's peak in Mbit/s, not requests/s.
#[test]
fn a_ramp_measured_in_mbit_is_charted_in_mbit() {
    let charts =
        herd_report::charts(&published_mbit_steps(), Some(Measure::MbitPerSecond)).unwrap();
    let (title, svg) = &charts[0];
    assert_eq!(title, "Mbit/s against clients");
    let y_at = |x: &str| -> f64 {
        let key = format!(r#"data-x="{x}" data-y=""#);
        let at = svg.find(&key).unwrap_or_else(|| panic!("no point at {x}: {svg}")) + key.len();
        svg[at..at + svg[at..].find('"').unwrap()].parse().unwrap()
    };
    // c4: the median of 48.0 and 48.8 Mbit/s; c16: 32.0 and 32.8.
    assert!((y_at("4") - 48.4).abs() < 1e-9, "{svg}");
    assert!((y_at("16") - 32.4).abs() < 1e-9, "{svg}");
    assert!(svg.contains(r#"<g class="point" data-x="32" data-y="114.6">"#), "the peak: {svg}");
    assert!(svg.contains(">Mbit/s</text>"), "the axis says its unit: {svg}");
}

#[test]
fn published_peak_table() {
    check_golden("table_published_steps.txt", &render(&published_steps()));
}

#[test]
fn unreadable_published_figures_are_said_and_the_rest_renders() {
    let mut new = experiment("paths", &["server", "path"]);
    new.published_json = Some("{not json".into());
    let text = String::from_utf8(render(&paths_from(new))).unwrap();
    assert!(
        text.contains("\nthen and now: the stored published figures cannot be read: "),
        "{text}"
    );
    assert!(text.contains("nginx   sslh-select"), "{text}");
}

/// Path calibration: herd serve reaches 50000 req/s direct (the client's ceiling), 40000
/// routed (80 % of direct), 20000 through HAProxy (40 %); nginx reaches 30000, 28000 and
/// 19000: through HAProxy that is 95 % of the path's own ceiling, so it is listed.
fn calibrated() -> StoredExperiment {
    let cells: [(&[(&str, &str)], u64); 6] = [
        (&[("server", "calibration"), ("path", "direct")], 500_000),
        (&[("server", "calibration"), ("path", "routed")], 400_000),
        (&[("server", "calibration"), ("path", "haproxy-http")], 200_000),
        (&[("server", "nginx"), ("path", "direct")], 300_000),
        (&[("server", "nginx"), ("path", "routed")], 280_000),
        (&[("server", "nginx"), ("path", "haproxy-http")], 190_000),
    ];
    three_repetitions_each("calibrated", &cells, 100)
}

/// Three ok repetitions of each cell (axis values, requests completed in 10 s), the count
/// growing by `step` per repetition.
fn three_repetitions_each(
    name: &str,
    cells: &[(&[(&str, &str)], u64)],
    step: u64,
) -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let axes: Vec<&str> = cells[0].0.iter().map(|(a, _)| *a).collect();
    let id = store.begin_experiment(&experiment(name, &axes)).unwrap();
    let h = || Some(histogram(&[(200, 1_000)]));
    for rep in 0..3u32 {
        for (axes, completed) in cells {
            let m = measurement(0, "n", completed + u64::from(rep) * step, &[], 0, h());
            store
                .record_repetition(id, &repetition(axes, rep, "ab", ok("ok"), Some(1.0), vec![m]))
                .unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn calibration_table() {
    check_golden("table_calibration.txt", &render(&calibrated()));
}

/// One path over a shaped link: herd serve's rate there is the link's and the client's
/// ceiling, not the client's alone, and every line still names its path and link.
fn calibrated_link() -> StoredExperiment {
    let at = |server| [("server", server), ("path", "direct"), ("link", "100mbit")];
    let (c, n, a) = (at("calibration"), at("nginx"), at("apache"));
    three_repetitions_each("shaped", &[(&c, 17_000), (&n, 16_900), (&a, 9_000)], 10)
}

#[test]
fn calibration_over_a_shaped_link_names_the_link() {
    let text = String::from_utf8(render(&calibrated_link())).unwrap();
    assert!(
        text.contains(
            "  path=direct link=100mbit: 1701 req/s, the client's ceiling over this link\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  server=nginx path=direct link=100mbit: 1691 req/s, 99.4 % of herd serve's 1701 through the same path\n"),
        "{text}"
    );
    assert!(!text.contains("server=apache path=direct link=100mbit: "), "{text}");
}

/// Seed 002's shape: two servers × two paths × three sizes, one repetition each. Rates fall
/// with size (apache 9000, 8000, 100 conn/s direct; mini_httpd 15000, 12000, 90; routed 90 %
/// of direct); KB/s from the bytes each answer carries (size + 300 bytes of headers). The
/// article's 9,500 conn/s for Apache at 1 KiB over the balancer is drawn as published.
fn sweep() -> StoredExperiment {
    let mut new = experiment("sweep", &["server", "workload", "path"]);
    new.axis_values = vec![
        vec!["apache-worker".into(), "mini_httpd".into()],
        vec!["sizes:1".into(), "sizes:1024".into(), "sizes:1048576".into()],
        vec!["direct".into(), "routed".into()],
    ];
    new.report.measure = Some(Measure::ConnectionsPerSecond);
    new.published_json = published_json(
        "seed 002",
        vec![figure(
            &[("server", "apache-worker"), ("workload", "sizes:1024"), ("path", "routed")],
            Some("Apache 2.0"),
            None,
            &[(Measure::ConnectionsPerSecond, 9500.0)],
        )],
    );
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new).unwrap();
    for (server, rates) in
        [("apache-worker", [9000, 8000, 100]), ("mini_httpd", [15000, 12000, 90])]
    {
        for ((size, bytes), rate) in
            [("sizes:1", 1u64), ("sizes:1024", 1024), ("sizes:1048576", 1_048_576)]
                .into_iter()
                .zip(rates)
        {
            for (path, share) in [("direct", 10u64), ("routed", 9)] {
                let completed = rate * share; // 10 s a run: rate × share / 10 per second
                let m = Measurement {
                    bytes_total: completed * (bytes + 300),
                    ..measurement(0, "n", completed, &[], 0, Some(histogram(&[(500, 100)])))
                };
                let axes = [("server", server), ("workload", size), ("path", path)];
                store
                    .record_repetition(
                        id,
                        &repetition(&axes, 0, "ab", ok("ok"), Some(1.0), vec![m]),
                    )
                    .unwrap();
            }
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn charts_against_size_and_clients() {
    let svgs = |exp: &StoredExperiment| herd_report::charts(exp, None).unwrap();
    let sweep = svgs(&sweep());
    let titles: Vec<&str> = sweep.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["connections/s against file size", "KiB/s against file size"]);
    check_golden("chart_sweep_rate.svg", sweep[0].1.as_bytes());
    check_golden("chart_sweep_kbps.svg", sweep[1].1.as_bytes());
    // Issue 31: the axis said KB/s of figures in KiB/s (bytes / 1024 a second, as ab's
    // "Kbytes/sec" and the cells' tables' KiB/s).
    let kib = &sweep[1].1;
    assert!(kib.contains(r#"class="axis-label""#) && kib.contains(">KiB/s</text>"), "{kib}");
    assert!(!kib.contains("KB/s"), "{kib}");
    let (_, rate) = &sweep[0];
    // One line per server and path, three points each, on a log axis of sizes.
    for name in ["server=apache-worker path=direct", "server=mini_httpd path=routed"] {
        let at = rate.find(&format!("data-series=\"{name}\"")).unwrap_or_else(|| panic!("{rate}"));
        let group = &rate[at..at + rate[at..].find("</g>").unwrap()];
        assert_eq!(group.matches("<circle class=\"point\"").count(), 3, "{group}");
    }
    assert!(rate.contains(r#"data-x="1024" data-y="8000""#), "apache direct at 1 KiB: {rate}");
    assert!(rate.contains(r#"data-x="1048576" data-y="81""#), "mini_httpd routed at 1 MiB: {rate}");
    assert!(rate.contains(">4 KiB</text>") && rate.contains(">1 MiB</text>"), "{rate}");
    assert!(
        rate.contains("<title>published: server=apache-worker path=routed (Apache 2.0)</title>"),
        "{rate}"
    );
    assert!(rate.contains(r#"<g class="point" data-x="1024" data-y="9500">"#), "{rate}");

    let steps = svgs(&published_steps());
    assert_eq!(steps.len(), 2);
    check_golden("chart_steps.svg", steps[0].1.as_bytes());
    let (title, svg) = &steps[0];
    assert_eq!(title, "requests/s against clients");
    assert!(
        svg.contains(r#"data-series="server=nginx""#)
            && svg.contains(r#"data-series="server=apache""#),
        "{svg}"
    );
    assert!(svg.contains(r#"data-x="100" data-y="61200""#), "nginx's c100 median: {svg}");
    assert!(
        svg.contains(r#"<g class="point" data-x="160" data-y="1000">"#),
        "the published peak: {svg}"
    );
    assert_eq!(steps[1].0, "failed requests and non-2xx answers against clients (all repetitions)");
    // No failures: an axis of 0 to 1, every point on 0.
    check_golden("chart_steps_failed.svg", steps[1].1.as_bytes());
    assert!(steps[1].1.contains(">0</text>") && steps[1].1.contains(">1</text>"), "{}", steps[1].1);
    // No sweep and no steps: no line chart, the matrix's dots alone (issue 33: every matrix
    // is charted; a_plain_matrix_is_charted_with_its_intervals).
    let plain = svgs(&matrix());
    assert_eq!(plain.len(), 1);
    assert!(plain[0].1.starts_with("<svg class=\"chart dots\""), "{}", plain[0].1);
}

#[test]
fn html_page() {
    // Each fixture is a store of its own: number them as one store would.
    let mut exps = [paths(), sweep(), published_steps()];
    for (i, e) in exps.iter_mut().enumerate() {
        e.id = herd_store::ExperimentId(i as i64 + 1);
    }
    let page = |exps: &[StoredExperiment]| {
        let mut out = Vec::new();
        herd_report::write_html(exps, &Options::default(), "fixed.db", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let html = page(&exps);
    check_golden("report.html", html.as_bytes());
    assert_eq!(page(&exps), html, "the same store, the same bytes");
    // One section per experiment, in the order given, with a link to each.
    for exp in &exps {
        let id = format!("id=\"experiment-{}\"", exp.id.0);
        assert_eq!(html.matches(&id).count(), 1, "{id}");
    }
    assert!(html.contains("<nav>"), "several experiments get a table of contents");
    // The matrix colours each share by its band and carries the stored figure.
    assert!(
        html.contains(r#"<td class="num share s60" data-percent="66.66666666666666" data-cell="server=nginx path=nft-dnat" data-measure="requests_per_second" data-value="20000">20000^ ±0.0% (66.7 %)</td>"#),
        "{html}"
    );
    // The charts come before the table of every row; the sweep's two, the steps' two and
    // the paths' matrix as dots.
    assert_eq!(html.matches("<figure class=\"chart\"><svg").count(), 5 + spectra(&exps));
    assert_eq!(html.matches("<figure class=\"chart\"><svg class=\"chart dots\"").count(), 1);
    let sweep = &html[html.find("id=\"experiment-2\"").unwrap()..];
    let charts_at = sweep.find("<h3>charts</h3>").unwrap();
    assert!(charts_at < sweep.find("<h3>every row").unwrap(), "charts after the rows");
    // Nothing that could fetch.
    for banned in ["<script", " src=", "href=\"http", "url(", "@import", "<link"] {
        assert!(!html.contains(banned), "{banned}");
    }
    // Issue 31: every chart's caption spoke of hollow diamonds. Only a chart that draws a
    // published figure says so: the sweep's rate chart and the steps' throughput, not the
    // KiB/s, failures or latency charts.
    let figures: Vec<&str> = html.split("<figure class=\"chart\">").skip(1).collect();
    let mut with_diamonds = 0;
    for f in &figures {
        let figure = &f[..f.find("</figure>").unwrap()];
        let draws = figure.contains("<g class=\"series published\"")
            && figure.contains("<g class=\"point\"");
        assert_eq!(figure.contains("Hollow diamonds"), draws, "{figure}");
        with_diamonds += usize::from(draws);
    }
    assert_eq!(with_diamonds, 2);
}

/// Two cells of nginx, three repetitions each, as the lab stores them: each repetition in a
/// directory of its own (its command line, its pid file, its client's output) on a port of
/// its own; cell 2's third repetition ran with a setting of its own.
fn disclosed() -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("disclosed", &["server", "load"])).unwrap();
    for (c, load) in ["c1", "c4"].into_iter().enumerate() {
        for rep in 0..3u32 {
            let dir = format!("/tmp/herd-lab-1/cells/{c:03}-r{rep}");
            let port = 20_000 + 10 * c as u32 + rep;
            let connections = if (c, rep) == (1, 2) { 8192 } else { 4096 };
            let axes = [("server", "nginx"), ("load", load)];
            let m = measurement(0, "", 1000, &[], 0, None);
            let mut r = repetition(&axes, rep, "herd", ok("ok"), None, vec![m]);
            r.client.argv = ["herd", "run", &format!("http://127.0.0.1:{port}/x")]
                .into_iter()
                .map(str::to_owned)
                .chain([format!("--json={dir}/client/run.json")])
                .collect();
            r.servers[0].argv =
                vec!["/usr/sbin/nginx".into(), "-c".into(), format!("{dir}/nginx/conf/nginx.conf")];
            r.servers[0].configs = vec![(
                "nginx/conf/nginx.conf".into(),
                format!(
                    "pid {dir}/nginx/run/nginx.pid;\nevents {{ worker_connections {connections}; }}\n\
                     http {{ server {{ listen 127.0.0.1:{port}; root /tmp/herd-lab-1/www; }} }}\n"
                ),
            )];
            store.record_repetition(id, &r).unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

/// Issue 31: the disclosure listed the same nginx.conf once per repetition, and each server
/// command line too, where they differed only in the repetition's directory and port. Each
/// distinct configuration and command line is shown once, those two as placeholders, with
/// the cells and repetitions that used it; one that differs in a setting is shown apart.
/// Each repetition's values stay in its cell's command lines.
#[test]
fn the_disclosure_shows_each_configuration_once() {
    let exp = disclosed();
    let mut out = Vec::new();
    herd_report::write_html(std::slice::from_ref(&exp), &Options::default(), "fixed.db", &mut out)
        .unwrap();
    let html = String::from_utf8(out).unwrap();
    let disclosure = &html[html.find("<h3>disclosure").unwrap()..];
    let configs: Vec<&str> = disclosure.split("<details class=\"config\">").skip(1).collect();
    assert_eq!(configs.len(), 2, "{disclosure}");
    let shared =
        "<summary><code>nginx/conf/nginx.conf</code>: nginx (nginx 1), 5 repetitions</summary>\
        <p class=\"used\">Used by <a href=\"#experiment-1-cell-0\">server=nginx load=c1</a> \
        (repetitions 1, 2, 3); <a href=\"#experiment-1-cell-1\">server=nginx load=c4</a> \
        (repetitions 1, 2).</p><pre>pid &lt;run-dir&gt;/nginx/run/nginx.pid;\n\
        events { worker_connections 4096; }\n\
        http { server { listen 127.0.0.1:&lt;port&gt;; root /tmp/herd-lab-1/www; } }\n</pre>";
    assert!(configs[0].starts_with(shared), "{}", configs[0]);
    assert!(configs[1].contains(", 1 repetition</summary>"), "{}", configs[1]);
    assert!(configs[1].contains("server=nginx load=c4</a> (repetition 3).</p>"), "{}", configs[1]);
    assert!(configs[1].contains("worker_connections 8192;"), "{}", configs[1]);
    // One server command line, run by all six repetitions.
    let programs = &disclosure[disclosure.find("<table class=\"programs\">").unwrap()..];
    let programs = &programs[..programs.find("</table>").unwrap()];
    assert_eq!(programs.matches("<td>server nginx</td>").count(), 1, "{programs}");
    assert!(
        programs.contains(
            "<td class=\"num\">6</td><td>/usr/sbin/nginx -c &lt;run-dir&gt;/nginx/conf/nginx.conf</td>"
        ),
        "{programs}"
    );
    assert!(disclosure.contains("<p class=\"placeholders\">"), "{disclosure}");
    assert!(!disclosure.contains("/tmp/herd-lab-1/cells/"), "{disclosure}");
    // Each repetition's own values, and its command lines as they ran, in its cell.
    let details = &html[..html.find("<h3>disclosure").unwrap()];
    assert!(
        details.contains(
            "# repetition 3 (&lt;run-dir&gt; = /tmp/herd-lab-1/cells/001-r2, &lt;port&gt; = 20012)\n\
             client (herd): herd run http://127.0.0.1:20012/x --json=/tmp/herd-lab-1/cells/001-r2/client/run.json\n\
             nginx (nginx): /usr/sbin/nginx -c /tmp/herd-lab-1/cells/001-r2/nginx/conf/nginx.conf"
        ),
        "{details}"
    );
}

/// How many cells have a latency histogram, so a spectrum.
fn spectra(exps: &[StoredExperiment]) -> usize {
    exps.iter()
        .flat_map(|e| &e.cells)
        .filter(|c| {
            c.ok_repetitions().any(|r| {
                r.record.measurements.iter().any(|m| m.histogram(LatencySeries::Total).is_some())
            })
        })
        .count()
}

fn compare(a: &herd_report::Side<'_>, b: &herd_report::Side<'_>, format: CompareFormat) -> String {
    let mut out = Vec::new();
    herd_report::write_compare(a, b, None, format, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn side<'a>(
    label: &str,
    exp: &'a StoredExperiment,
    only: &[(&str, &str)],
) -> herd_report::Side<'a> {
    herd_report::Side {
        label: label.into(),
        exp,
        only: only.iter().map(|(a, v)| ((*a).to_owned(), (*v).to_owned())).collect(),
    }
}

/// Cells of one experiment against each other: herd serve (120 000 req/s ±2 %) against
/// nginx (100 000 ±5 %) at c100, a significant change; nginx's c1000 has no partner.
#[test]
fn comparing_cells_of_one_experiment() {
    let exp = matrix();
    let a = side("1:server=herd-serve", &exp, &[("server", "herd-serve")]);
    let b = side("1:server=nginx", &exp, &[("server", "nginx")]);
    let text = compare(&a, &b, CompareFormat::Text);
    check_golden("compare_cells.txt", text.as_bytes());
    // Means 120 000 and 100 000: B/A = 0.833, well outside the interval's reach of 1.
    let row = text.lines().find(|l| l.starts_with("c100 ")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(" 0.833 ") && row.ends_with("-16.7 % *"), "{row}");
    // Marked as the matrix marks them: herd serve's client verdict, nginx's failures.
    assert!(row.contains("120000! ±2.1%") && row.contains("≠100000! ±5.0% 10 failed"), "{row}");
    assert!(text.contains("\nonly in B:\n"), "{text}");
    assert!(text.contains("server=nginx load=c1000"), "{text}");
    check_golden("compare_cells.md", compare(&a, &b, CompareFormat::Markdown).as_bytes());
}

/// The same cells in two runs: no change where nothing changed, and what differs between
/// the two setups is said.
#[test]
fn comparing_two_runs_says_what_differs_in_their_setups() {
    let a = matrix();
    let mut b = matrix();
    b.id = herd_store::ExperimentId(2);
    b.experiment.herd_version = "0.2.0".into();
    b.experiment.environment = vec![("kernel".into(), "6.18".into())];
    let text = compare(&side("a.db", &a, &[]), &side("b.db:2", &b, &[]), CompareFormat::Text);
    assert!(text.contains("(0 of 4 rows)"), "{text}");
    assert!(text.contains("herd: 0.1.0 (methodology 1) → 0.2.0 (methodology 1)"), "{text}");
    assert!(text.contains("kernel: (not recorded) → 6.18"), "{text}");
    // A ratio needs two ok repetitions on each side: nginx c1000 has two, so it is there.
    assert!(!text.contains("fewer than 2 ok repetitions"), "{text}");
    let html = compare(&side("a.db", &a, &[]), &side("b.db:2", &b, &[]), CompareFormat::Html);
    assert!(html.contains("<table class=\"compare\">"), "{html}");
    assert!(html.contains("<section class=\"comparison\" id=\"comparison\">"), "{html}");
}

/// Sides that cannot be compared are refused with what to give instead.
#[test]
fn comparisons_that_cannot_be_made_say_why() {
    let exp = matrix();
    let err = |a: herd_report::Side<'_>, b: herd_report::Side<'_>| {
        let mut out = Vec::new();
        herd_report::write_compare(&a, &b, None, CompareFormat::Text, &mut out)
            .unwrap_err()
            .to_string()
    };
    let e = err(side("A", &exp, &[("path", "direct")]), side("B", &exp, &[]));
    assert!(e.contains("`path` is not an axis of experiment 1"), "{e}");
    let e = err(side("A", &exp, &[("server", "apache")]), side("B", &exp, &[]));
    assert!(
        e.contains("no cell has server=apache: its values are herd-serve, lighttpd, nginx"),
        "{e}"
    );
    // Another experiment with an axis of its own that varies: its rows cannot be told apart.
    let other = paths();
    let e = err(side("A", &exp, &[]), side("B", &other, &[]));
    assert!(e.contains("A (A): its cells take 2 values on `load` (c100, c1000), which the other side does not tell apart: choose one, e.g. A:load=c100"), "{e}");
    // One side chooses its cells, the other does not: the other's rows cannot be told apart
    // on the axis chosen, so nothing is paired by guess (herd serve against itself).
    let e = err(side("A", &exp, &[("server", "herd-serve")]), side("B", &exp, &[]));
    assert!(e.contains("B (B): its cells take 3 values on `server`"), "{e}");
    // Nothing pairs: the other experiment ran no server this one ran.
    let mut apache = paths();
    for c in &mut apache.cells {
        c.axes.iter_mut().filter(|(a, _)| a == "server").for_each(|(_, v)| *v = "apache".into());
    }
    let e = err(side("A", &exp, &[("load", "c100")]), side("B", &apache, &[("path", "direct")]));
    assert!(e.contains("no row of A (A) has a row of B (B) with the same server"), "{e}");
}

/// The quick start's mix: a size sweep measured in one go beside a ramp of steps. The size
/// charts name no step, and only the ramp is drawn against clients.
#[test]
fn a_sweep_beside_a_ramp_charts_each_where_it_belongs() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("mix", &["server", "workload", "load"])).unwrap();
    for size in ["sizes:1", "sizes:1024"] {
        let axes = [("server", "herd"), ("workload", size), ("load", "c8")];
        let m = measurement(1, "", 100_000, &[], 0, Some(histogram(&[(100, 10)])));
        store
            .record_repetition(id, &repetition(&axes, 0, "herd", ok("ok"), None, vec![m]))
            .unwrap();
    }
    let axes = [("server", "herd"), ("workload", "page"), ("load", "ramp")];
    let steps = vec![
        Measurement { concurrency: Some(1), ..measurement(1, "c=1", 50_000, &[], 0, None) },
        Measurement { concurrency: Some(4), ..measurement(2, "c=4", 90_000, &[], 0, None) },
    ];
    store.record_repetition(id, &repetition(&axes, 0, "herd", ok("ok"), None, steps)).unwrap();
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let exp = store.load_experiment(id).unwrap();
    let charts = herd_report::charts(&exp, None).unwrap();
    let titles: Vec<&str> = charts.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        titles[..3],
        ["requests/s against file size", "KiB/s against file size", "requests/s against clients"]
    );
    assert!(charts[0].1.contains(r#"data-series="load=c8""#), "{}", charts[0].1);
    let clients = &charts[2].1;
    assert_eq!(clients.matches(r#"<g class="series""#).count(), 1, "{clients}");
    assert!(clients.contains(r#"data-series="workload=page load=ramp""#), "{clients}");
}

/// The quick start's mix at pinned rates: a size sweep beside two pages, by the server's CPU
/// per request. The sweep is drawn as that cost against size (requests/s would be a flat line
/// at the rate), and the pages get a dot chart of their own.
#[test]
fn a_pinned_sweep_is_charted_by_its_cost_and_the_pages_beside_it_as_dots() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("mix", &["server", "workload", "load"])).unwrap();
    let pinned = |completed: u64| Measurement {
        rate: Some(10_000.0),
        duration_s: 1.0,
        ..measurement(1, "", completed, &[], 0, Some(histogram(&[(100, 10)])))
    };
    // 10,000 requests each; 0.3, 0.35 and 0.6 s of server CPU: 30, 35 and 60 µs a request.
    for (workload, cpu) in [("sizes:16", 0.3), ("sizes:16384", 0.6), ("page", 0.35), ("9x9", 0.5)] {
        let axes = [("server", "herd"), ("workload", workload), ("load", "r10k")];
        for rep in 0..3 {
            let rec = repetition(&axes, rep, "herd", ok("ok"), Some(cpu), vec![pinned(10_000)]);
            store.record_repetition(id, &rec).unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let exp = store.load_experiment(id).unwrap();
    let charts = herd_report::charts(&exp, Some(Measure::CpuPerRequest)).unwrap();
    let titles: Vec<&str> = charts.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        titles,
        [
            "server CPU per request (µs) against file size",
            "server CPU per request (µs) by workload"
        ]
    );
    let (sweep, dots) = (&charts[0].1, &charts[1].1);
    // 30 µs at 16 B, 60 µs at 16 KiB: the cost, not the pinned 10,000 req/s.
    assert!(sweep.contains(r#"data-x="16" data-y="30""#), "{sweep}");
    assert!(sweep.contains(r#"data-x="16384" data-y="60""#), "{sweep}");
    // The pages, not the sizes, are the dots.
    assert!(dots.contains("9x9") && dots.contains("page"), "{dots}");
    assert!(!dots.contains("sizes:16"), "{dots}");
    // Without a measure the sweep is still drawn as requests/s and KiB/s.
    let default = herd_report::charts(&exp, None).unwrap();
    assert_eq!(default[0].0, "requests/s against file size");
}

/// The failed run of `matrix()` in every format that lists runs: the count by kind, then the
/// run with its kind and reason; on the page, the cell's repetitions too.
#[test]
fn every_report_says_which_runs_failed_and_how() {
    const SUMMARY: &str = "1 of 11 runs failed: 1 server not ready";
    const RUN: &str = "server=nginx load=c1000, repetition 2 (server not ready): nginx did not \
                       become ready on 198.18.0.2:80 within 5s";
    let text = String::from_utf8(render(&matrix())).unwrap();
    assert!(text.contains(&format!("\n{SUMMARY}\n  {RUN}\n")), "{text}");
    let md =
        String::from_utf8(render_as(&matrix(), &Options::default(), Format::Markdown)).unwrap();
    assert!(md.contains(&format!("\n### {SUMMARY}\n")), "{md}");
    assert!(md.contains(&format!("- {RUN}\n")), "{md}");
    let mut out = Vec::new();
    herd_report::write_html(&[matrix()], &Options::default(), "fixed.db", &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(html.contains(&format!("<h3>{SUMMARY}</h3>")), "{html}");
    assert!(html.contains(&format!("<li>{RUN}</li>")), "{html}");
    assert!(html.contains("<td>failed: server not ready</td>"), "{html}");
    assert!(
        html.contains(
            "<li>repetition 2 (server not ready): nginx did not become ready on 198.18.0.2:80 \
             within 5s</li>"
        ),
        "{html}"
    );
}

/// The protocols experiment's shape: two servers over h1-tls and h2, a page and 1 MiB, a
/// ramp of 1 and 4 clients, the baseline h1-tls. The matrix gives each protocol's rate as a
/// share of h1-tls's, and the ramps are drawn once per workload, a line per server and
/// protocol. nginx's h2 page runs at 120 % of its h1-tls at 4 clients, caddy's at 80 %.
fn protocols() -> StoredExperiment {
    let mut new = experiment("protocols", &["server", "protocol", "workload", "load"]);
    new.title = "nginx and caddy over HTTP/1.1 with TLS and HTTP/2".into();
    new.source = "bundled:protocols".into();
    new.report.baseline = Some(("protocol".into(), "h1-tls".into()));
    new.axis_values = vec![
        vec!["nginx".into(), "caddy".into()],
        vec!["h1-tls".into(), "h2".into()],
        vec!["page".into(), "mib".into()],
        vec!["ramp".into()],
    ];
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&new).unwrap();
    for (server, protocol, page4, mib4) in [
        ("nginx", "h1-tls", 50_000, 4_000),
        ("nginx", "h2", 60_000, 3_600),
        ("caddy", "h1-tls", 30_000, 3_000),
        ("caddy", "h2", 24_000, 3_000),
    ] {
        for (workload, at4) in [("page", page4), ("mib", mib4)] {
            let axes = [
                ("server", server),
                ("protocol", protocol),
                ("workload", workload),
                ("load", "ramp"),
            ];
            for rep in 0..3 {
                let steps = vec![
                    Measurement {
                        concurrency: Some(1),
                        ..measurement(1, "c=1", at4 / 2, &[], 0, Some(histogram(&[(80, 100)])))
                    },
                    Measurement {
                        concurrency: Some(4),
                        ..measurement(2, "c=4", at4, &[], 0, Some(histogram(&[(160, 100)])))
                    },
                ];
                store
                    .record_repetition(id, &repetition(&axes, rep, "herd", ok("ok"), None, steps))
                    .unwrap();
            }
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:30:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn protocols_table() {
    check_golden("table_protocols.txt", &render(&protocols()));
}

#[test]
fn protocols_ramps_are_charted_per_workload_a_line_per_server_and_protocol() {
    let charts = herd_report::charts(&protocols(), None).unwrap();
    let titles: Vec<&str> = charts.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        titles,
        [
            "requests/s against clients, workload=page",
            "failed requests and non-2xx answers against clients, workload=page (all repetitions)",
            "requests/s against clients, workload=mib",
            "failed requests and non-2xx answers against clients, workload=mib (all repetitions)",
        ]
    );
    for (_, svg) in charts.iter().step_by(2) {
        assert_eq!(svg.matches(r#"<g class="series""#).count(), 4, "{svg}");
        for series in [
            "server=nginx protocol=h1-tls",
            "server=nginx protocol=h2",
            "server=caddy protocol=h1-tls",
            "server=caddy protocol=h2",
        ] {
            assert!(svg.contains(&format!(r#"data-series="{series}""#)), "{series}: {svg}");
        }
    }
}

/// A NetBench experiment's calibration is tbench against tbench_srv: its figure is Mbit/s
/// (the measure of the rows beside it), and a server close to it is named against tbench's.
#[test]
fn netbench_calibration_is_in_mbit_per_second() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("nb", &["server", "path"])).unwrap();
    // Bytes in 10 s: 490 MB is 392 Mbit/s, 387.5 MB is 310.
    let cells: [(&[(&str, &str)], u64); 3] = [
        (&[("server", "calibration"), ("path", "four-links")], 490_000_000),
        (&[("server", "samba"), ("path", "four-links")], 387_500_000),
        (&[("server", "samba"), ("path", "direct")], 120_000_000),
    ];
    for rep in 0..3u32 {
        for (axes, bytes) in &cells {
            let mut m = measurement(0, "c=6", 0, &[], 0, None);
            m.statuses.clear();
            m.bytes_total = *bytes;
            m.reported.push((herd_stats::REPORTED_LINES_PER_CLIENT.to_owned(), 5_000.0));
            let tool = if axes[0].1 == "calibration" { "tbench" } else { "smbtorture" };
            store
                .record_repetition(id, &repetition(axes, rep, tool, ok("ok"), Some(1.0), vec![m]))
                .unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let text = String::from_utf8(render(&store.load_experiment(id).unwrap())).unwrap();
    assert!(
        text.contains("what each path carries with tbench against tbench_srv, the NetBench trace over plain TCP (calibration;"),
        "{text}"
    );
    assert!(text.contains("  path=four-links: 392.0 Mbit/s\n"), "{text}");
}

/// herd and ab on the same cells: where they disagree beyond both intervals the report says
/// so and names the lower one (herd 358 req/s where ab measured 2,078 on a TLS cell without
/// keep-alive); where they agree it says nothing.
#[test]
fn clients_that_disagree_on_a_cell_are_named() {
    let cells: [(&[(&str, &str)], u64); 4] = [
        (&[("server", "nginx"), ("load", "close"), ("client", "herd")], 3_580),
        (&[("server", "nginx"), ("load", "close"), ("client", "ab")], 20_780),
        (&[("server", "nginx"), ("load", "keep"), ("client", "herd")], 90_000),
        (&[("server", "nginx"), ("load", "keep"), ("client", "ab")], 90_000),
    ];
    let exp = three_repetitions_each("clients", &cells, 10);
    let text = String::from_utf8(render(&exp)).unwrap();
    let heading = "clients that disagree on the same cell (beyond both 95 % intervals: the lower \
                   one measured something besides the server — its own limit or a stall; see \
                   its verdict):";
    let at = text.find(heading).unwrap_or_else(|| panic!("{text}"));
    let lines: Vec<&str> = text[at + heading.len()..].lines().skip(1).take(2).collect();
    assert_eq!(
        lines[0].trim(),
        "server=nginx load=close: ab 2,079 req/s ±0.1%, herd 359 req/s ±0.7%: herd measured 83 % \
         less than ab",
        "{text}"
    );
    assert!(!lines[1].contains("load=keep"), "{text}");
}

/// The header says which loads opened a new connection per request, read from what each run's
/// client was told: herd's `--no-keep-alive`, ab without `-k`.
#[test]
fn the_header_says_which_loads_open_a_connection_per_request() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("conns", &["server", "load", "client"])).unwrap();
    let runs: [(&str, &str, &[&str]); 4] = [
        ("n100", "herd", &["herd", "run", "--no-keep-alive", "http://127.0.0.1:1/"]),
        ("n100", "ab", &["ab", "-n", "100", "http://127.0.0.1:1/"]),
        ("c8", "herd", &["herd", "run", "http://127.0.0.1:1/"]),
        ("c8", "ab", &["ab", "-k", "-n", "100", "http://127.0.0.1:1/"]),
    ];
    for (load, tool, argv) in runs {
        let axes = [("server", "nginx"), ("load", load), ("client", tool)];
        let m = measurement(0, "n", 1000, &[], 0, Some(histogram(&[(200, 1_000)])));
        let mut r = repetition(&axes, 0, tool, ok("ok"), Some(1.0), vec![m]);
        r.client.argv = argv.iter().map(|a| a.to_string()).collect();
        store.record_repetition(id, &r).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let exp = store.load_experiment(id).unwrap();
    let text = String::from_utf8(render(&exp)).unwrap();
    let line = text.lines().find(|l| l.starts_with("connections")).unwrap_or("");
    assert_eq!(
        line, "connections a new connection per request in n100; kept alive in c8",
        "{text}"
    );
}

/// Two runs whose cells were defined otherwise (B's nginx c100 opened a connection per
/// request): what differs is listed pair by pair, and the pair's change, however large, gets
/// no significance mark (‡ instead); a pair defined alike keeps its *.
#[test]
fn a_pair_defined_otherwise_is_listed_and_not_marked_significant() {
    let a = matrix();
    let mut b = matrix();
    b.id = herd_store::ExperimentId(2);
    for cell in &mut b.cells {
        let nginx_c100 = cell.key == "server=nginx load=c100";
        for rep in &mut cell.repetitions {
            for m in &mut rep.record.measurements {
                m.completed /= 2;
            }
            if nginx_c100 {
                rep.record.client.argv.push("--no-keep-alive".into());
            }
        }
    }
    let text = compare(&side("a.db", &a, &[]), &side("b.db:2", &b, &[]), CompareFormat::Text);
    let row = |key: &str| text.lines().find(|l| l.starts_with(key)).unwrap_or("").to_owned();
    assert!(row("nginx       c100 ").ends_with("-50.0 % ‡"), "{text}");
    assert!(row("herd-serve  c100 ").ends_with("-50.0 % *"), "{text}");
    assert!(
        text.contains(
            "‡ pairs whose cells are defined otherwise (no significance mark: the change may be \
             the definition's, not the run's):\n  server=nginx load=c100: client command line: A \
             has nothing of its own, B has `--no-keep-alive`\n"
        ),
        "{text}"
    );
}

/// In an experiment where some cell ramps, a cell whose every repetition failed (no
/// measurement) sits in the matrix's row of its load, as `-`, not in a row of its own.
#[test]
fn a_cell_that_never_measured_sits_with_its_siblings() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("mixed", &["server", "load"])).unwrap();
    let ramp =
        |label: &str, i: u32, n| measurement(i, label, n, &[], 0, Some(histogram(&[(100, 1_000)])));
    for rep in 0..2u32 {
        let r = |server, load, ms| {
            repetition(&[("server", server), ("load", load)], rep, "herd", ok("ok"), None, ms)
        };
        store
            .record_repetition(
                id,
                &r(
                    "nginx",
                    "ramp",
                    vec![ramp("c=1", 1, 1000 + u64::from(rep)), ramp("c=4", 2, 3000)],
                ),
            )
            .unwrap();
        store
            .record_repetition(
                id,
                &r("nginx", "close", vec![measurement(1, "", 500 + u64::from(rep), &[], 0, None)]),
            )
            .unwrap();
        store
            .record_repetition(
                id,
                &r(
                    "h2o",
                    "ramp",
                    vec![ramp("c=1", 1, 1100 + u64::from(rep)), ramp("c=4", 2, 3300)],
                ),
            )
            .unwrap();
        let mut failed = r("h2o", "close", Vec::new());
        failed.outcome =
            Outcome::Failed { kind: RunFailureKind::ClientTimedOut, reason: "ran past 80s".into() };
        store.record_repetition(id, &failed).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let text = String::from_utf8(render(&store.load_experiment(id).unwrap())).unwrap();
    let matrix = &text[..text.find("every row's figures").unwrap()];
    let header = matrix.lines().find(|l| l.starts_with("server ")).unwrap_or("");
    let columns: Vec<&str> = header.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(columns, ["server", "close", "ramp c=1", "ramp c=4"], "{matrix}");
    let h2o = matrix.lines().find(|l| l.starts_with("h2o ")).unwrap_or("");
    assert!(h2o.split_whitespace().nth(1) == Some("-"), "h2o's failed cell as -: {matrix}");
}

/// An open loop at 5,000 req/s over 10 s, five repetitions: two held it (5,000 and 4,990
/// req/s, no request more than 2 ms behind its schedule; server CPU 0.2 and 0.21 s over
/// 50,000 and 49,900 requests: 4.0 and 4.21 µs each), one did not (4,500 req/s: 90 %), one
/// held the share but sent 2 % of its requests 45 ms late (45.02: the top of its HdrHistogram
/// bucket): it fell behind; and one stalled once, its worst request 30 ms late and 99 % on
/// time (CPU 0.2 s: 4.0 µs): held; and one held its rate but its client judged itself
/// suspect (requests sent late while connections were free): out too. Three make the
/// figures, median 4.0.
#[test]
fn a_rate_not_held_is_said_and_left_out() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("rate", &["server", "load"])).unwrap();
    let axes = [("server", "a"), ("load", "r5000")];
    for (rep, completed, (late, lag_us), cpu) in [
        (0, 50_000, (1, 2_000), 0.2),
        (1, 45_000, (1, 3_000), 0.9),
        (2, 49_900, (1, 1_500), 0.21),
        (3, 50_000, (1_000, 45_000), 0.9),
        (4, 50_000, (1, 30_000), 0.2),
        (5, 50_000, (1, 1_900), 0.3),
    ] {
        let mut m =
            measurement(0, "r5000", completed, &[], 0, Some(histogram(&[(500, completed)])));
        m.rate = Some(5_000.0);
        let queued = histogram(&[(10, completed - late), (lag_us, late)]);
        m.histograms.push((LatencySeries::Queued, queued));
        // The run that fell behind judged its client suspect: it is out of the figures, and
        // so is its verdict.
        let verdict = match rep {
            3 => Some(("suspect", "sent late")),
            5 => Some(("suspect", "1 % of requests were sent 1.9ms or more late")),
            _ => ok("ok"),
        };
        let r = repetition(&axes, rep, "herd", verdict, Some(cpu), vec![m]);
        store.record_repetition(id, &r).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let exp = store.load_experiment(id).unwrap();
    let options = Options { baseline: None, measure: Some(Measure::CpuPerRequest) };
    let text = String::from_utf8(render_as(&exp, &options, Format::Text)).unwrap();
    let matrix = &text[..text.find("every row's figures").unwrap()];
    assert!(!matrix.contains('!'), "the suspect run is not among the figures: {matrix}");
    assert!(text.contains("rates not held (⊘; below 99 % of the offered rate, 1 % of requests 10 ms or more behind their schedule, or a client verdict other than ok): left out of every figure of the row:"), "{text}");
    assert!(
        text.contains("server=a load=r5000, repetition 2: achieved 90.0 % of 5000 req/s\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "server=a load=r5000, repetition 4: 1 % of requests sent 45.02 ms or more behind \
             their schedule (the worst 45.02 ms); the client did not keep its own schedule \
             (suspect: sent late)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "server=a load=r5000, repetition 6: the client did not keep its own schedule \
             (suspect: 1 % of requests were sent 1.9ms or more late)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("repetition 5:"), "a lone stall is not a rate not held: {text}");
    // The rows' figures: three repetitions of six, CPU 4.0, 4.2 and 4.0 µs (median 4.0).
    let row = text.lines().find(|l| l.starts_with("a ") && l.contains("r5000")).unwrap();
    assert!(row.contains(" 3/6 "), "{row}");
    assert!(row.contains(" 4.0 "), "{row}");
    assert!(row.trim_end().ends_with(" ok"), "{row}");
    // The CSV says the rate offered and how many repetitions did not hold it.
    let csv = String::from_utf8(render_as(&exp, &options, Format::Csv)).unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with("1,a,r5000,,100,5000,3,6,3,"), "{csv}");
}

/// A row whose repetitions all met a late client (a low rate on a virtual machine) keeps
/// them, marked `!`, rather than showing nothing; with two clean ones beside it, a late one is
/// left out.
#[test]
fn late_clients_are_left_out_only_beside_two_clean_repetitions() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("late", &["server", "load"])).unwrap();
    for (server, late) in [("a", [true, true, true]), ("b", [false, true, false])] {
        for (rep, late) in late.into_iter().enumerate() {
            let mut m = measurement(0, "r200", 2_000, &[], 0, Some(histogram(&[(500, 2_000)])));
            m.rate = Some(200.0);
            m.histograms.push((LatencySeries::Queued, histogram(&[(10, 2_000)])));
            let verdict = if late { Some(("suspect", "sent late")) } else { ok("ok") };
            let axes = [("server", server), ("load", "r200")];
            let r = repetition(&axes, rep as u32, "herd", verdict, Some(0.01), vec![m]);
            store.record_repetition(id, &r).unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let text = String::from_utf8(render(&store.load_experiment(id).unwrap())).unwrap();
    let row = |server: &str| {
        text.lines().find(|l| l.starts_with(&format!("{server} ")) && l.contains("r200")).unwrap()
    };
    let (a, b) = (row("a"), row("b"));
    assert!(a.contains(" 3/3 ") && a.trim_end().ends_with("suspect!"), "{a}");
    assert!(b.contains(" 2/3 ") && b.trim_end().ends_with(" ok"), "{b}");
    assert!(text.contains("server=b load=r200, repetition 2: the client did not keep"), "{text}");
    assert!(!text.contains("server=a load=r200, repetition"), "{text}");
}

/// The `?` judges what the lab judged: at a pinned rate requests/s never spreads, the cost
/// does. Two cells at 5,000 req/s, four repetitions each, the file asking for a 95 % interval
/// within ±4 % of the server's CPU per request: cell a's costs 4.0, 4.1, 3.9 and 4.0 µs
/// (±3.3 %) meet it, cell b's 4.0, 5.0, 4.0 and 5.0 µs (±18 %) do not, and only b's cost is
/// marked, though both rates are steady.
#[test]
fn an_unsettled_cost_is_marked_where_the_rate_is_steady() {
    let mut store = Store::in_memory().unwrap();
    let mut new = experiment("cost", &["server", "load"]);
    new.definition =
        "[repetitions]\nmax_interval_percent = 4\n\n[report]\nmeasure = \"cpu_per_request\"\n"
            .into();
    let id = store.begin_experiment(&new).unwrap();
    for (server, costs) in [("a", [0.20, 0.205, 0.195, 0.20]), ("b", [0.20, 0.25, 0.20, 0.25])] {
        for (rep, cpu) in costs.into_iter().enumerate() {
            let mut m = measurement(0, "r5000", 50_000, &[], 0, Some(histogram(&[(500, 50_000)])));
            m.rate = Some(5_000.0);
            m.histograms.push((LatencySeries::Queued, histogram(&[(10, 50_000)])));
            let axes = [("server", server), ("load", "r5000")];
            let r = repetition(&axes, rep as u32, "herd", ok("ok"), Some(cpu), vec![m]);
            store.record_repetition(id, &r).unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let exp = store.load_experiment(id).unwrap();
    let text = String::from_utf8(render(&exp)).unwrap();
    let matrix = &text[..text.find("every row's figures").unwrap()];
    let entry = |server: &str| matrix.lines().find(|l| l.starts_with(server)).unwrap_or("");
    assert!(!entry("a ").contains('?'), "{matrix}");
    assert!(entry("b ").contains('?'), "{matrix}");
    // In the rows' table, after b's server CPU, not after its steady requests/s' spread.
    let rows = &text[text.find("every row's figures").unwrap()..];
    let b = rows.lines().find(|l| l.starts_with("b ")).unwrap();
    assert!(b.contains(" 4.5?") && !b.contains("%?"), "{b}");
}

/// One cell at a pinned rate beside a closed loop is no comparison of costs: no efficiency
/// matrix of one row.
#[test]
fn one_pinned_cell_gets_no_efficiency_matrix() {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("one", &["server", "load"])).unwrap();
    for (load, rate) in [("r5000", Some(5_000.0)), ("c8", None)] {
        let mut m = measurement(0, "", 50_000, &[], 0, Some(histogram(&[(500, 50_000)])));
        m.rate = rate;
        let r =
            repetition(&[("server", "a"), ("load", load)], 0, "herd", ok("ok"), Some(0.2), vec![m]);
        store.record_repetition(id, &r).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    let exp = store.load_experiment(id).unwrap();
    let text = String::from_utf8(render_as(&exp, &Options::default(), Format::Text)).unwrap();
    assert!(text.contains("requests/s by load"), "{text}");
    assert!(!text.contains("efficiency at pinned rates"), "{text}");
}

/// A measurement of an open loop at `offered` req/s over 10 s: `completed` requests, p50 and
/// p99 of `p50_us` and `p99_us` (98 and 2 in each 100 requests), a worst schedule lag of
/// `lag_us`.
fn open_loop(
    step: u32,
    label: &str,
    offered: f64,
    completed: u64,
    (p50_us, p99_us): (u64, u64),
    lag_us: u64,
) -> Measurement {
    let h = histogram(&[(p50_us, completed / 100 * 98), (p99_us, completed / 100 * 2)]);
    let mut m = measurement(step, label, completed, &[], 0, Some(h));
    m.rate = Some(offered);
    m.concurrency = Some(64);
    m.histograms.push((LatencySeries::Queued, histogram(&[(10, completed - 1), (lag_us, 1)])));
    m
}

/// Two servers, each at a pinned 2,000 req/s (`r2000`) and at offered rates in steps of
/// 1,000, 2,000 and 4,000 req/s (`ramp`), three repetitions each:
/// - a at r2000: server CPU 0.40, 0.42, 0.38 s over 20,000 requests: 20, 21, 19 µs (median
///   20, ±95 % = 4.3027·1/√3 = ±12.4 %); p99 1 ms.
/// - b at r2000: CPU 0.2 s each: 10 µs (50.0 % of a's); p99 0.5 ms.
/// - a's ramp holds every step; p50 0.2, 0.3, 0.6 ms and p99 1, 2, 8 ms by step; CPU 0.7 s
///   over 70,000 requests: 10 µs each repetition.
/// - b's ramp: repetitions 1 and 2 hold (CPU 0.35 s: 5 µs); repetition 3 achieves 3,000 of
///   4,000 req/s at its third step (75 %): that step is ⊘ and left out, and the repetition
///   out of b's efficiency (its CPU, 0.9 s over 60,000: 15 µs, counts nowhere).
fn rate_steps() -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("offered", &["server", "load"])).unwrap();
    let steps = [(1, "r=1000", 1_000.0), (2, "r=2000", 2_000.0), (3, "r=4000", 4_000.0)];
    for rep in 0..3u32 {
        for (server, cpu, p99) in [("a", [0.40, 0.42, 0.38], 1_000), ("b", [0.2, 0.2, 0.2], 500)] {
            let m = open_loop(0, "", 2_000.0, 20_000, (100, p99), 500);
            let axes = [("server", server), ("load", "r2000")];
            let r = repetition(&axes, rep, "herd", ok("ok"), Some(cpu[rep as usize]), vec![m]);
            store.record_repetition(id, &r).unwrap();
        }
        let a: Vec<Measurement> = steps
            .iter()
            .zip([(200, 1_000), (300, 2_000), (600, 8_000)])
            .map(|(&(k, label, rate), lat)| open_loop(k, label, rate, rate as u64 * 10, lat, 900))
            .collect();
        let r =
            repetition(&[("server", "a"), ("load", "ramp")], rep, "herd", ok("ok"), Some(0.7), a);
        store.record_repetition(id, &r).unwrap();
        let short = rep == 2;
        let b: Vec<Measurement> = steps
            .iter()
            .zip([(100, 500), (150, 700), (400, 20_000)])
            .map(|(&(k, label, rate), lat)| {
                let completed = if short && k == 3 { 30_000 } else { rate as u64 * 10 };
                open_loop(k, label, rate, completed, lat, 900)
            })
            .collect();
        let cpu = if short { 0.9 } else { 0.35 };
        let r =
            repetition(&[("server", "b"), ("load", "ramp")], rep, "herd", ok("ok"), Some(cpu), b);
        store.record_repetition(id, &r).unwrap();
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

#[test]
fn pinned_rates_get_an_efficiency_matrix() {
    let exp = rate_steps();
    let text = String::from_utf8(render(&exp)).unwrap();
    check_golden("table_efficiency.txt", text.as_bytes());
    assert!(
        text.contains(
            "efficiency at pinned rates, lower is better: server CPU per request (µs) by server \
             and load"
        ),
        "{text}"
    );
    let line = |start: &str| -> &str {
        let eff = &text[text.find("efficiency at pinned rates").unwrap()..];
        eff.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("{start}: {text}"))
    };
    // a: 20 µs at r2000 (±12.4 %), 10 µs over its ramp; b: 10 µs (50 %), 5 µs ⊘ (50 %).
    let a = line("a ");
    assert!(a.contains("20.00 ±12.4%") && a.contains("10.00 ±0.0%"), "{a}");
    let b = line("b ");
    assert!(b.contains("10.00 ±0.0% (50.0 %)"), "{b}");
    assert!(b.contains("5.00⊘ ±0.0% (50.0 %)"), "{b}");
    // The not-held step of b's ramp is said, and out of its step's figures.
    assert!(
        text.contains(
            "server=b load=ramp step r=4000, repetition 3: achieved 75.0 % of 4000 req/s"
        ),
        "{text}"
    );
    // Markdown carries the same matrix; asked for CPU per request, the main matrix is it.
    let md = String::from_utf8(render_as(&exp, &Options::default(), Format::Markdown)).unwrap();
    assert!(md.contains("efficiency at pinned rates"), "{md}");
    let cpu = Options { baseline: None, measure: Some(Measure::CpuPerRequest) };
    let cpu = String::from_utf8(render_as(&exp, &cpu, Format::Text)).unwrap();
    assert!(!cpu.contains("efficiency at pinned rates"), "{cpu}");
    // a's first repetition at r2000 achieving 1,500 req/s: said without a step (the cell is
    // not stepped, though others are), and out of a's efficiency (21 and 19 µs: median 20).
    let mut short = rate_steps();
    for cell in short.cells.iter_mut().filter(|c| c.key == "server=a load=r2000") {
        for rep in cell.repetitions.iter_mut().filter(|r| r.record.repetition == 0) {
            rep.record.measurements[0].completed = 15_000;
        }
    }
    let text = String::from_utf8(render(&short)).unwrap();
    assert!(
        text.contains("  server=a load=r2000, repetition 1: achieved 75.0 % of 2000 req/s\n"),
        "{text}"
    );
    let eff = &text[text.find("efficiency at pinned rates").unwrap()..];
    let a = eff.lines().find(|l| l.starts_with("a ")).unwrap();
    assert!(a.contains("20.00⊘ ±"), "{a}");
    // Without pinned rates (closed loops), no efficiency matrix.
    let closed = String::from_utf8(render(&matrix())).unwrap();
    assert!(!closed.contains("efficiency"), "{closed}");
}

#[test]
fn rate_steps_are_drawn_against_the_offered_load() {
    let exp = rate_steps();
    let charts = herd_report::charts(&exp, None).unwrap();
    let titles: Vec<&str> = charts.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        titles,
        [
            "latency against offered load (p50, p99)",
            "achieved against offered load",
            "requests/s by server, load",
            "efficiency at pinned rates: server CPU µs per request",
        ]
    );
    let (_, latency) = &charts[0];
    check_golden("chart_rate_steps.svg", latency.as_bytes());
    // One line per server and percentile, a point per offered rate, from the figures: a's
    // p99 at 4,000 req/s is 8 ms (8.003, the top of its HdrHistogram bucket).
    for name in ["p50 server=a", "p99 server=a", "p50 server=b", "p99 server=b"] {
        let at =
            latency.find(&format!("data-series=\"{name}\"")).unwrap_or_else(|| panic!("{name}"));
        let group = &latency[at..at + latency[at..].find("</g>").unwrap()];
        let points = group.matches("<circle class=\"point\"").count();
        // b's p99 and p50 at 4,000: from the two repetitions that held it.
        assert_eq!(points, 3, "{name}: {group}");
    }
    assert!(latency.contains(r#"data-x="4000" data-y="8.003""#), "{latency}");
    assert!(latency.contains(r#"<g class="mark" data-x="4000">"#), "the ⊘ at 4000: {latency}");
    assert!(latency.contains("achieved 75.0 % of 4000 req/s"), "{latency}");
    assert!(!latency.contains(r#"<g class="mark" data-x="2000">"#), "{latency}");
    let (_, achieved) = &charts[1];
    // b at 4,000: 4,000, 4,000 and 3,000 achieved: median 4,000; a reference line.
    assert!(achieved.contains(r#"data-x="4000" data-y="4000""#), "{achieved}");
    assert!(achieved.contains(r#"class="series reference""#), "{achieved}");
    let (_, efficiency) = &charts[3];
    check_golden("chart_efficiency.svg", efficiency.as_bytes());
    assert!(efficiency.contains("(lower is better)"), "{efficiency}");
    assert!(
        efficiency.contains(r#"data-row="server=a load=r2000" data-value="20""#),
        "{efficiency}"
    );
    assert!(efficiency.contains(r#"data-row="server=b load=ramp" data-value="5""#), "{efficiency}");
    assert!(efficiency.contains("server=b load=ramp ⊘"), "{efficiency}");

    // The charts come from the data: a slower a at 4,000 req/s moves its point.
    let mut slower = rate_steps();
    for cell in slower.cells.iter_mut().filter(|c| c.key == "server=a load=ramp") {
        for rep in &mut cell.repetitions {
            let m = &mut rep.record.measurements[2];
            m.histograms[0].1 = histogram(&[(600, 39_200), (50_000, 800)]);
        }
    }
    let again = herd_report::charts(&slower, None).unwrap();
    assert!(again[0].1.contains(r#"data-x="4000" data-y="50.015""#), "{}", again[0].1);
    assert!(!again[0].1.contains(r#"data-x="4000" data-y="8.003""#), "{}", again[0].1);

    // The page shows them all.
    let mut page = Vec::new();
    herd_report::write_html(std::slice::from_ref(&exp), &Options::default(), "fixed.db", &mut page)
        .unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("latency against offered load (p50, p99)"), "{page}");
    assert!(page.contains("<svg class=\"chart dots\""), "{page}");
    assert!(page.contains("efficiency at pinned rates, lower is better"), "{page}");
}

#[test]
fn a_plain_matrix_is_charted_with_its_intervals() {
    let exp = matrix();
    let charts = herd_report::charts(&exp, None).unwrap();
    let titles: Vec<&str> = charts.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["requests/s by server, load"]);
    let svg = &charts[0].1;
    check_golden("chart_matrix.svg", svg.as_bytes());
    assert!(svg.contains("requests/s (higher is better)"), "{svg}");
    // nginx c100: median 100,000 req/s, ±4,968.4 about the mean of 100,000.
    assert!(
        svg.contains(r#"data-row="server=nginx load=c100" data-value="100000" data-low="95031"#),
        "{svg}"
    );
    // The failed repetition's cell still has its row; the measure is the table's.
    let p99 = herd_report::charts(&exp, Some(Measure::LatencyP99)).unwrap();
    assert!(p99[0].1.contains("p99 latency (ms) (lower is better)"), "{}", p99[0].1);
    assert!(
        p99[0].1.contains(r#"data-row="server=nginx load=c1000" data-value="8.907""#),
        "{}",
        p99[0].1
    );
    // A change in the store is a change in the chart.
    let mut faster = matrix();
    for cell in faster.cells.iter_mut().filter(|c| c.key == "server=nginx load=c100") {
        for rep in &mut cell.repetitions {
            for m in &mut rep.record.measurements {
                m.completed *= 2;
            }
        }
    }
    let again = herd_report::charts(&faster, None).unwrap();
    assert!(again[0].1.contains(r#"data-row="server=nginx load=c100" data-value="200000""#));
}

/// An experiment with an A/A control (`[runner] controls = 3`), requests/s by repetition:
/// - herd 100 000, 100 500, 99 500, and its twin (`server=herd control=twin`) 94 000,
///   106 000, 100 000: the twin comes out −0.1 % (geometric means), runs vary by 4.3 %
///   (pooled sd of ln figures), so between cells of 3 runs the smallest difference that
///   tells is (2.776 + 0.941)·0.0427·√(2/3) = 0.1295 on logs: ±13.8 %;
/// - nginx 108 000, 108 500, 107 500: +8 %, significant by its interval, within noise;
/// - apache 80 000, 80 400, 79 600: −20 %, beyond it.
fn controlled() -> StoredExperiment {
    let mut store = Store::in_memory().unwrap();
    let id = store.begin_experiment(&experiment("controlled", &["server"])).unwrap();
    let h = || Some(histogram(&[(200, 1_000)]));
    let cells: [(&str, bool, [u64; 3]); 4] = [
        ("herd", false, [100_000, 100_500, 99_500]),
        ("herd", true, [94_000, 106_000, 100_000]),
        ("nginx", false, [108_000, 108_500, 107_500]),
        ("apache", false, [80_000, 80_400, 79_600]),
    ];
    for rep in 0..3u32 {
        for (server, twin, rates) in &cells {
            let m = measurement(0, "n", rates[rep as usize] * 10, &[], 0, h());
            let axes = [("server", *server)];
            let mut r = repetition(&axes, rep, "herd", ok("ok"), Some(1.0), vec![m]);
            if *twin {
                r.control_of = Some(r.cell_key.clone());
                r.cell_key = format!("{} control=twin", r.cell_key);
            }
            store.record_repetition(id, &r).unwrap();
        }
    }
    store.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T10:20:00Z", None).unwrap();
    store.load_experiment(id).unwrap()
}

/// A measure the runs have no figure in (server CPU not read) says so, not "too few runs".
#[test]
fn a_noise_floor_in_a_measure_without_figures_says_which_to_use() {
    let mut exp = controlled();
    for cell in &mut exp.cells {
        for r in &mut cell.repetitions {
            r.record.server_cpu_seconds = None;
        }
    }
    let options = Options { baseline: None, measure: Some(Measure::CpuPerRequest) };
    let text = String::from_utf8(render_as(&exp, &options, Format::Text)).unwrap();
    assert!(
        text.contains(
            "server CPU per request (µs) has no figure for these runs, so the noise floor \
             cannot be measured in it: `herd report --measure requests_per_second` shows it."
        ),
        "{text}"
    );
    assert!(!text.contains("Too few ok runs"), "{text}");
}

/// Every report of it states the noise floor; the twin is no row, no baseline, no cell of
/// the page.
#[test]
fn an_aa_control_gives_every_report_its_noise_floor() {
    let exp = controlled();
    assert_eq!(exp.cells.len(), 4);
    let text = String::from_utf8(render(&exp)).unwrap();
    check_golden("table_control.txt", text.as_bytes());
    assert!(!text.contains("control=twin"), "{text}");
    assert!(text.contains("\nnoise floor (A/A control):\n"), "{text}");
    assert!(text.contains("server=herd was measured 3 more times as its own twin"), "{text}");
    assert!(text.contains("The twin came out -0.1 % in requests/s"), "{text}");
    assert!(text.contains("runs vary by 4.3 % from run to run"), "{text}");
    assert!(text.contains("between two cells of 3 runs: ±13.8 %"), "{text}");
    // One row of herd in the matrix and one in the figures, not two.
    let herd = text.lines().filter(|l| l.starts_with("herd ") && l.contains(" 100000 ")).count();
    assert_eq!(herd, 2, "{text}");
    let md = String::from_utf8(render_as(&exp, &Options::default(), Format::Markdown)).unwrap();
    assert!(md.contains("noise floor (A/A control)") && md.contains("±13.8 %"), "{md}");
    let csv = String::from_utf8(render_as(&exp, &Options::default(), Format::Csv)).unwrap();
    assert!(!csv.contains("control=twin") && csv.lines().count() == 4, "{csv}");
    let mut html = Vec::new();
    herd_report::write_html(std::slice::from_ref(&exp), &Options::default(), "x.db", &mut html)
        .unwrap();
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("noise floor (A/A control)") && html.contains("±13.8 %"));
    assert!(!html.contains("control=twin"));
    // Without the twin, no such section.
    let mut plain = exp.clone();
    plain.cells.retain(|c| c.control_of.is_none());
    assert!(!String::from_utf8(render(&plain)).unwrap().contains("noise floor"));
}

/// `--compare` calls a change under the control's smallest detectable difference within
/// noise, even where its interval leaves out 1, and keeps its mark for a larger one.
#[test]
fn a_comparison_tells_noise_from_a_difference() {
    let exp = controlled();
    let herd = side("1:server=herd", &exp, &[("server", "herd")]);
    let nginx = side("1:server=nginx", &exp, &[("server", "nginx")]);
    let text = compare(&herd, &nginx, CompareFormat::Text);
    check_golden("compare_control.txt", text.as_bytes());
    let row = text.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.ends_with("+8.0 % within noise"), "{row}");
    assert!(text.contains("(0 of 1 rows); within noise where"), "{text}");
    assert!(
        text.contains("runs vary by 4.3 % (A/A control of experiment 1 (controlled): server=herd)")
    );
    // Without the control, the same pair is significant: the interval alone leaves out 1.
    let mut plain = exp.clone();
    plain.cells.retain(|c| c.control_of.is_none());
    let herd_p = side("a", &plain, &[("server", "herd")]);
    let nginx_p = side("b", &plain, &[("server", "nginx")]);
    let text = compare(&herd_p, &nginx_p, CompareFormat::Text);
    let row = text.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.ends_with("+8.0 % *"), "{row}");
    // A difference beyond the noise floor keeps its mark.
    let apache = side("1:server=apache", &exp, &[("server", "apache")]);
    let text = compare(&herd, &apache, CompareFormat::Text);
    let row = text.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.ends_with("-20.0 % *"), "{row}");
    assert!(text.contains("(1 of 1 rows); within noise where"), "{text}");
}

/// The disclosure says which event-loop backend herd's client measured with, and why `auto`
/// fell back, beside the client program and in each repetition's command line; a client
/// that does not say (a store from before, ab) shows nothing more.
#[test]
fn the_disclosure_says_which_io_backend_the_client_measured_with() {
    let mut exp = matrix();
    let io = herd_store::ClientIo {
        backend: "epoll".into(),
        fallback: Some("io_uring not yet for HTTP/1".into()),
    };
    for cell in &mut exp.cells {
        for r in &mut cell.repetitions {
            r.record.client.io = Some(io.clone());
        }
    }
    let page = |exp: &StoredExperiment| {
        let mut out = Vec::new();
        herd_report::write_html(std::slice::from_ref(exp), &Options::default(), "x.db", &mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    };
    let html = page(&exp);
    let disclosure = &html[html.find("<h3>disclosure").unwrap()..];
    let said = "herd, I/O: epoll (io_uring not yet for HTTP/1)";
    assert!(disclosure.contains(&format!("<td>{said}</td>")), "{disclosure}");
    let commands = "client (herd, I/O: epoll (io_uring not yet for HTTP/1)): herd";
    assert!(html.contains(commands), "{html}");
    assert!(!page(&matrix()).contains("I/O:"), "said only where the store says it");
}
