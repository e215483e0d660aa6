//! `tbench::parse` against output captured from the real tbench (dbench 4.0, Debian 12) and
//! tbench_srv, one directory per run under crates/lab/tests/data/clients/ (`tbench-*`; its
//! README.md gives each run's command line). Then every fixture cut at every byte, and
//! mutated: an error, never a panic.

use std::path::Path;
use std::time::Duration;

use herd_testutil::corpus::Rng;

use super::nbench_output::{NbenchExit, Phase};
use super::smbtorture::{to_measurement, REPORTED_LINES_PER_CLIENT, REPORTED_THROUGHPUT_MBIT_S};
use super::tbench::{parse, TbenchError, TbenchJob};

const FIXTURES: [&str; 6] = [
    "tbench-success",
    "tbench-one-second",
    "tbench-warmup",
    "tbench-no-loadfile",
    "tbench-killed",
    "tbench-refused",
];

use super::trace_captures::{capture, Capture};

/// The job each fixture was captured with (README.md).
fn job_for(name: &str) -> TbenchJob<'static> {
    let (clients, seconds) = match name {
        "tbench-one-second" => (2, 1),
        "tbench-warmup" => (1, 20),
        "tbench-killed" => (2, 10),
        _ => (2, 3),
    };
    TbenchJob {
        program: Path::new("/usr/bin/tbench"),
        server: [127, 0, 0, 1].into(),
        clients,
        duration: Duration::from_secs(seconds),
        loadfile: Path::new(if name == "tbench-no-loadfile" {
            "/tmp/tbcap/missing-client.txt"
        } else {
            "/usr/share/dbench/client.txt"
        }),
    }
}

fn parse_fixture(name: &str) -> Result<super::nbench_output::NbenchOutcome, TbenchError> {
    let c = capture(name);
    parse(&job_for(name), &c.stdout, &c.stderr, c.exit)
}

#[test]
fn success_two_clients_three_seconds() {
    let o = parse_fixture("tbench-success").unwrap();
    assert_eq!((o.clients, o.duration, o.warmup), (2, Duration::from_secs(3), Duration::ZERO));
    assert_eq!(o.throughput_mb_s, 655.5);
    assert_eq!(o.lines_per_client, 118_352);
    let execute: Vec<(u64, u32)> = o
        .seconds
        .iter()
        .filter(|s| s.phase == Phase::Execute)
        .map(|s| (s.lines_per_client, s.second))
        .collect();
    assert_eq!(execute, [(58_996, 1), (118_352, 2)]);
    let m = to_measurement(&o, 1);
    assert_eq!((m.concurrency, m.duration_s), (Some(2), 3.0));
    assert_eq!(m.reported(REPORTED_THROUGHPUT_MBIT_S), Some(655.5 * 8.0));
    assert_eq!(m.reported(REPORTED_LINES_PER_CLIENT), Some(118_352.0));
}

/// limit / 5 of warm-up, then the clock restarts: the last execute line is second 19.
#[test]
fn warmup_of_a_twenty_second_run() {
    let o = parse_fixture("tbench-warmup").unwrap();
    assert_eq!((o.duration, o.warmup), (Duration::from_secs(20), Duration::from_secs(4)));
    assert_eq!(o.throughput_mb_s, 91.3087);
    let last = o.seconds.iter().rev().find(|s| s.phase == Phase::Execute).unwrap();
    assert_eq!(last.second, 19);
    assert_eq!(o.seconds.iter().filter(|s| s.phase == Phase::Warmup).count(), 3);
}

#[test]
fn failures_are_named_for_their_cause() {
    let e = parse_fixture("tbench-one-second").unwrap_err();
    assert!(e.to_string().contains("a run of 1s measured nothing"), "{e}");
    let e = parse_fixture("tbench-no-loadfile").unwrap_err();
    assert_eq!(e, TbenchError::LoadfileMissing { path: "/tmp/tbcap/missing-client.txt".into() });
    assert_eq!(parse_fixture("tbench-killed").unwrap_err(), TbenchError::Killed { signal: 15 });
    // Killed too, but after a failed connect: that is the cause.
    let e = parse_fixture("tbench-refused").unwrap_err();
    assert_eq!(
        e.to_string(),
        "tbench could not connect to tbench_srv at 127.0.0.1:7003 (Connection refused): start \
         tbench_srv there, or check the path"
    );
    let c = capture("tbench-refused");
    let after = Duration::from_secs(132);
    let timed_out =
        parse(&job_for("tbench-refused"), &c.stdout, &c.stderr, NbenchExit::TimedOut { after });
    assert!(matches!(timed_out, Err(TbenchError::NoServer { .. })), "{timed_out:?}");
    let c = capture("tbench-success");
    let e = parse(&job_for("tbench-success"), &c.stdout, "", NbenchExit::TimedOut { after });
    assert_eq!(e.unwrap_err(), TbenchError::TimedOut { after });
}

/// A job that does not match what ran is an error, not someone else's figures.
#[test]
fn output_of_another_job_is_refused() {
    let c = capture("tbench-success");
    let other = TbenchJob { clients: 3, ..job_for("tbench-success") };
    let e = parse(&other, &c.stdout, &c.stderr, c.exit).unwrap_err();
    assert!(e.to_string().contains("ran 2 clients where the job asked for 3"), "{e}");
}

#[test]
fn every_prefix_and_mutation_is_an_answer_not_a_panic() {
    for name in FIXTURES {
        let c = capture(name);
        let job = job_for(name);
        for cut in 0..=c.stdout.len() {
            let Some(head) = c.stdout.get(..cut) else { continue };
            if let Ok(o) = parse(&job, head, &c.stderr, c.exit) {
                assert!(head.contains("Throughput "), "{name} at {cut}");
                assert!(o.throughput_mb_s >= 0.0);
            }
        }
        for cut in 0..=c.stderr.len() {
            let Some(head) = c.stderr.get(..cut) else { continue };
            let _ = parse(&job, &c.stdout, head, c.exit);
        }
    }
    let mut rng = Rng::from_env();
    let originals: Vec<Capture> = FIXTURES.iter().map(|n| capture(n)).collect();
    let pieces: &[&str] =
        &["MB/sec", "execute", "cleanup", "warmup", " sec", "99999999999999999999", "-", "\n"];
    for _ in 0..3000 {
        let i = rng.below(originals.len());
        let c = &originals[i];
        let mut s = c.stdout.clone().into_bytes();
        for _ in 0..=rng.below(3) {
            let at = rng.below(s.len() + 1);
            match rng.below(3) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 => s.splice(at..at, pieces[rng.below(pieces.len())].bytes()).for_each(drop),
                _ if at < s.len() => s[at] = rng.below(128) as u8,
                _ => {}
            }
        }
        let text = String::from_utf8_lossy(&s);
        if let Ok(o) = parse(&job_for(FIXTURES[i]), &text, &c.stderr, NbenchExit::Code(0)) {
            assert!(o.throughput_mb_s.is_finite() && o.throughput_mb_s >= 0.0);
        }
    }
}
