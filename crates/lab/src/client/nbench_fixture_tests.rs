//! `smbtorture::parse` against output captured from the real smbtorture 4.17.12 (Debian 12)
//! and a private smbd, one directory per run under crates/lab/tests/data/clients/
//! (`smbtorture-*`; its README.md gives each run's command line and server). Each directory
//! holds the run's `stdout`, `stderr` and `exit_status` (`0`, `1` or `signal 15`).
//!
//! Then the parser's robustness: every fixture cut at every byte, with CRLF endings, random
//! bytes and mutations, and numbers out of range: an error, never a panic.

use std::path::Path;
use std::time::Duration;

use herd_testutil::corpus::Rng;

use super::smbtorture::{
    parse, to_measurement, NbenchError, NbenchExit, NbenchJob, NbenchOutcome, Phase,
    REPORTED_LINES_PER_CLIENT, REPORTED_THROUGHPUT_MBIT_S, REPORTED_THROUGHPUT_MB_S,
    REPORTED_WARMUP_S, REPORTED_WRITE_ONLY_OPENING,
};

/// Every smbtorture fixture, with the job that made it.
const FIXTURES: [&str; 11] = [
    "smbtorture-success",
    "smbtorture-one-second",
    "smbtorture-warmup",
    "smbtorture-refused",
    "smbtorture-bad-share",
    "smbtorture-smb1-refused",
    "smbtorture-logon-failure",
    "smbtorture-no-loadfile",
    "smbtorture-access-denied",
    "smbtorture-killed",
    "smbtorture-share-unreachable",
];

use super::trace_captures::{capture, Capture};

/// The job each fixture was captured with (README.md): 2 clients, the server on
/// 127.0.0.1:4453 (:4459 for the refused run, where nothing listened; :4454 for the server
/// without SMB1), share `bench` (`nosuch` for bad-share), client.txt (a path that did not
/// exist for no-loadfile).
fn job_for(name: &str) -> NbenchJob<'static> {
    let port = match name {
        "smbtorture-refused" => 4459,
        "smbtorture-smb1-refused" => 4454,
        "smbtorture-access-denied" => 4451,
        "smbtorture-share-unreachable" => 4470,
        _ => 4453,
    };
    let seconds = match name {
        "smbtorture-success" | "smbtorture-access-denied" => 4,
        "smbtorture-one-second" => 1,
        "smbtorture-warmup" => 20,
        "smbtorture-killed" => 10,
        _ => 3,
    };
    NbenchJob {
        program: Path::new("/usr/bin/smbtorture"),
        server: ([127, 0, 0, 1], port).into(),
        share: if name == "smbtorture-bad-share" { "nosuch" } else { "bench" },
        clients: 2,
        duration: Duration::from_secs(seconds),
        loadfile: Path::new(if name == "smbtorture-no-loadfile" {
            "/tmp/nbcap/missing-client.txt"
        } else {
            "/usr/share/dbench/client.txt"
        }),
    }
}

fn parse_fixture(name: &str) -> Result<NbenchOutcome, NbenchError> {
    let c = capture(name);
    parse(&job_for(name), &c.stdout, &c.stderr, c.exit)
}

fn lines_of(o: &NbenchOutcome) -> Vec<(u64, Phase, u32)> {
    o.seconds.iter().map(|s| (s.lines_per_client, s.phase, s.second)).collect()
}

#[test]
fn success_two_clients_four_seconds() {
    let o = parse_fixture("smbtorture-success").unwrap();
    assert_eq!((o.clients, o.duration, o.warmup), (2, Duration::from_secs(4), Duration::ZERO));
    assert_eq!(o.loadfile, Path::new("/usr/share/dbench/client.txt"));
    assert_eq!(o.throughput_mb_s, 55.0129);
    assert_eq!(o.throughput_mbit_s(), 55.0129 * 8.0);
    assert_eq!(
        lines_of(&o),
        [
            (4531, Phase::Execute, 1),
            (8644, Phase::Execute, 2),
            (12825, Phase::Execute, 3),
            (17240, Phase::Cleanup, 4)
        ]
    );
    assert_eq!(o.seconds[0].mb_per_s, 82.59);
    assert!(o.seconds.iter().all(|s| s.clients == 2));
    // The last execute line, not the cleanup line after it.
    assert_eq!(o.lines_per_client, 12825);
    assert!(!o.write_only_opening());
    let m = to_measurement(&o, 1);
    assert_eq!((m.label.as_str(), m.concurrency, m.duration_s), ("c=2", Some(2), 4.0));
    assert_eq!(m.bytes_total, 220_051_600);
    assert_eq!(m.reported(REPORTED_THROUGHPUT_MB_S), Some(55.0129));
    assert_eq!(m.reported(REPORTED_THROUGHPUT_MBIT_S), Some(440.1032));
    assert_eq!(m.reported(REPORTED_LINES_PER_CLIENT), Some(12825.0));
    assert_eq!(m.reported(REPORTED_WRITE_ONLY_OPENING), Some(0.0));
}

/// A 1 s run prints no execute line: its first cleanup line gives the progress.
#[test]
fn one_second_has_only_a_cleanup_line() {
    let o = parse_fixture("smbtorture-one-second").unwrap();
    assert_eq!(lines_of(&o), [(1434, Phase::Cleanup, 1)]);
    assert_eq!((o.lines_per_client, o.throughput_mb_s), (1434, 48.103));
    assert!(!o.write_only_opening());
}

/// 20 s and more: smbtorture warms up for limit / 20 s, then restarts its clock.
#[test]
fn warmup_of_a_twenty_second_run() {
    let o = parse_fixture("smbtorture-warmup").unwrap();
    assert_eq!((o.duration, o.warmup), (Duration::from_secs(20), Duration::from_secs(1)));
    assert_eq!(o.seconds.len(), 20);
    assert_eq!(o.seconds.last().map(|s| (s.phase, s.second)), Some((Phase::Cleanup, 20)));
    assert_eq!((o.lines_per_client, o.throughput_mb_s), (42454, 23.0518));
    assert_eq!(to_measurement(&o, 2).reported(REPORTED_WARMUP_S), Some(1.0));
}

/// Each failure names its real cause and what to do (exact messages: they are the UI).
#[test]
fn failures_name_the_real_cause() {
    let e = |name: &str| parse_fixture(name).unwrap_err();
    assert_eq!(
        e("smbtorture-refused").to_string(),
        "no SMB server answered at 127.0.0.1:4459 (smbtorture reports a refused connection as \
         NT_STATUS_NO_MEMORY): start the server, or check the address and port"
    );
    assert_eq!(
        e("smbtorture-bad-share").to_string(),
        "the SMB server at 127.0.0.1:4453 has no share `nosuch` (NT_STATUS_BAD_NETWORK_NAME): \
         give the name of a share in its smb.conf"
    );
    assert_eq!(
        e("smbtorture-smb1-refused").to_string(),
        "the SMB server at 127.0.0.1:4454 refuses SMB1 (NT1), the only dialect smbtorture's \
         NBENCH speaks: set `server min protocol = NT1` in its smb.conf"
    );
    assert_eq!(
        e("smbtorture-logon-failure"),
        NbenchError::LogonFailure { server: ([127, 0, 0, 1], 4453).into() }
    );
    assert_eq!(
        e("smbtorture-no-loadfile"),
        NbenchError::LoadfileMissing { path: "/tmp/nbcap/missing-client.txt".into() }
    );
    assert_eq!(
        e("smbtorture-access-denied"),
        NbenchError::ClientStopped {
            line: 3,
            what: "NTCreateX should have succeeded - NT_STATUS_ACCESS_DENIED".into()
        }
    );
    assert_eq!(e("smbtorture-killed"), NbenchError::Killed { signal: 15 });
    // smbtorture's own report says only "Unknown error/failure".
    assert_eq!(
        e("smbtorture-share-unreachable").to_string(),
        "the SMB server at 127.0.0.1:4470 would not let the guest make \\clients in share \
         `bench` (ERRSRV:ERRbaduid): the share's directory must be reachable and writable by \
         the user guests map to (every directory above it searchable by others: keep TMPDIR \
         under /tmp), and the server's log says more"
    );
    for name in FIXTURES {
        if let Err(err) = parse_fixture(name) {
            herd_testutil::causes::assert_no_repeated_cause(&err.to_string());
        }
    }
}

/// Success needs both exit 0 and `success: nbench`; a cut-short run is not read.
#[test]
fn success_needs_status_zero_and_the_success_line() {
    let c = capture("smbtorture-success");
    let job = job_for("smbtorture-success");
    let e = parse(&job, &c.stdout, &c.stderr, NbenchExit::Code(1)).unwrap_err();
    assert!(matches!(e, NbenchError::Failed { status: 1, .. }), "{e:?}");
    let no_line = c.stdout.replace("success: nbench", "");
    let e = parse(&job, &no_line, &c.stderr, NbenchExit::Code(0)).unwrap_err();
    assert!(e.to_string().starts_with("smbtorture exited 0 without 'success: nbench'"), "{e}");
    let after = Duration::from_secs(64);
    let e = parse(&job, &c.stdout, &c.stderr, NbenchExit::TimedOut { after }).unwrap_err();
    assert_eq!(e, NbenchError::TimedOut { after });
    // The job's clients and time limit must be what ran.
    let e = parse(&NbenchJob { clients: 3, ..job }, &c.stdout, &c.stderr, c.exit).unwrap_err();
    assert!(e.to_string().contains("started 2 clients where the job asked for 3"), "{e}");
    let other = NbenchJob { duration: Duration::from_secs(5), ..job };
    assert!(parse(&other, &c.stdout, &c.stderr, c.exit).is_err());
    // A missing file that is not the load file is not reported as the load file.
    let n = capture("smbtorture-no-loadfile");
    let e = parse(&job_for("smbtorture-success"), &n.stdout, &n.stderr, n.exit).unwrap_err();
    assert!(matches!(e, NbenchError::Failed { status: 1, .. }), "{e:?}");
    // A connection status not named otherwise is quoted.
    let r = capture("smbtorture-refused");
    let other = r.stdout.replace("NT_STATUS_NO_MEMORY", "NT_STATUS_IO_TIMEOUT");
    let e = parse(&job_for("smbtorture-refused"), &other, "", r.exit).unwrap_err();
    assert_eq!(
        e.to_string(),
        "smbtorture failed (exit status 1): Failed to open connection - NT_STATUS_IO_TIMEOUT"
    );
    // Without its error lines, a failure is smbtorture's own report, verbatim.
    let bare = r.stdout.replace("Failed to open connection - NT_STATUS_NO_MEMORY\n", "");
    let e = parse(&job_for("smbtorture-refused"), &bare, "", r.exit).unwrap_err();
    assert_eq!(
        e.to_string(),
        "smbtorture failed (exit status 1): error: nbench [ Unknown error/failure. Missing \
         torture_fail() or torture_assert_*() call? ]"
    );
}

#[test]
fn crlf_endings_read_the_same() {
    for name in FIXTURES {
        let c = capture(name);
        let crlf = |s: &str| s.replace('\n', "\r\n");
        let job = job_for(name);
        let plain = parse(&job, &c.stdout, &c.stderr, c.exit);
        let dos = parse(&job, &crlf(&c.stdout), &crlf(&c.stderr), c.exit);
        assert_eq!(plain, dos, "{name}");
    }
}

/// Every fixture cut at every byte parses to a result (an error, mostly) without a panic,
/// and a cut success never passes for a success it was not: it still ends in `success:`.
#[test]
fn every_prefix_of_every_fixture() {
    for name in FIXTURES {
        let c = capture(name);
        let job = job_for(name);
        for cut in 0..=c.stdout.len() {
            let Some(head) = c.stdout.get(..cut) else { continue };
            if let Ok(o) = parse(&job, head, &c.stderr, c.exit) {
                assert!(head.trim_end().ends_with("success: nbench"), "{name} at {cut}");
                assert!(o.throughput_mb_s >= 0.0);
            }
        }
        for cut in 0..=c.stderr.len() {
            let Some(head) = c.stderr.get(..cut) else { continue };
            let _ = parse(&job, &c.stdout, head, c.exit);
        }
    }
}

/// Random bytes, and fixtures with bytes flipped, inserted and removed: never a panic.
#[test]
fn random_and_mutated_input() {
    let mut rng = Rng::from_env();
    let job = job_for("smbtorture-success");
    let exits = [NbenchExit::Code(0), NbenchExit::Code(1), NbenchExit::Signal(9)];
    for _ in 0..2000 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        let exit = exits[rng.below(exits.len())];
        let _ = parse(&job, &text, &text, exit);
    }
    let originals: Vec<Capture> = FIXTURES.iter().map(|n| capture(n)).collect();
    let pieces: &[&str] =
        &["MB/sec", "execute", "cleanup", "warmup", " sec", "99999999999999999999", "-", ".", "\n"];
    for _ in 0..3000 {
        let c = &originals[rng.below(originals.len())];
        let mut s = c.stdout.clone().into_bytes();
        for _ in 0..=rng.below(3) {
            let at = rng.below(s.len() + 1);
            match rng.below(3) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 => {
                    let p = pieces[rng.below(pieces.len())];
                    s.splice(at..at, p.bytes());
                }
                _ if at < s.len() => s[at] = rng.below(128) as u8,
                _ => {}
            }
        }
        let text = String::from_utf8_lossy(&s);
        if let Ok(o) = parse(&job, &text, &c.stderr, NbenchExit::Code(0)) {
            assert!(o.throughput_mb_s.is_finite() && o.throughput_mb_s >= 0.0);
        }
    }
}

/// Numbers that do not fit are an error that quotes the line, not a wrap or a panic.
#[test]
fn numbers_out_of_range() {
    let c = capture("smbtorture-success");
    let job = job_for("smbtorture-success");
    let cases = [
        ("   2     12825  56.06", "   2     99999999999999999999999  56.06"),
        ("   2     12825  56.06", "   99999999999     12825  56.06"),
        ("Throughput 55.0129", "Throughput 1e999"),
        ("Throughput 55.0129", "Throughput -3"),
        ("Throughput 55.0129", "Throughput NaN"),
        ("2 clients started", "99999999999 clients started"),
        ("Running for 4 seconds", "Running for 99999999999999999999999 seconds"),
    ];
    for (from, to) in cases {
        assert!(c.stdout.contains(from), "{from}");
        let text = c.stdout.replace(from, to);
        let e = parse(&job, &text, &c.stderr, c.exit).unwrap_err();
        assert!(matches!(e, NbenchError::Output { .. }), "{to}: {e:?}");
        assert!(e.to_string().contains("herd cannot read"), "{to}: {e}");
    }
}
