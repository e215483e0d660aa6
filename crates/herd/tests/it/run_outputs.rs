//! `herd run`'s outputs over time, against the real `herd serve`: `--series` (CSV, NDJSON,
//! stepped) adds up to the summary and is written while the run goes on, a stalled server
//! shows as empty seconds, `--hlog` reads back with HdrHistogram's own reader, the live line
//! appears on a terminal and nowhere else, and bad output paths stop `herd run` before it
//! sends anything.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use util::Serve;
use util::{herd, run, run_json, tempdir, text};

const COLUMNS: &str = "second,requests,failed,bytes_read,rps,p50_us,p90_us,p99_us,p99_9_us,max_us";

/// One row of a series, whichever the format.
#[derive(Debug, PartialEq)]
struct Row {
    step: Option<u64>,
    second: u64,
    requests: u64,
    failed: u64,
    bytes_read: u64,
    rps: f64,
    /// p50, p90, p99, p99.9, max; None when no request completed.
    latency: Option<[u64; 5]>,
}

/// The header and rows of a CSV series.
fn read_csv(path: &Path) -> (String, Vec<Row>) {
    let all = std::fs::read_to_string(path).unwrap();
    let mut lines = all.lines();
    let header = lines.next().expect("a header line").to_owned();
    let stepped = header.starts_with("step,");
    let rows = lines
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), if stepped { 11 } else { 10 }, "{l}");
            let step = stepped.then(|| f.remove(0).parse().unwrap());
            let n = |s: &str| s.parse::<u64>().unwrap();
            let latency = if f[5..].iter().all(|v| v.is_empty()) {
                None
            } else {
                Some([n(f[5]), n(f[6]), n(f[7]), n(f[8]), n(f[9])])
            };
            Row {
                step,
                second: n(f[0]),
                requests: n(f[1]),
                failed: n(f[2]),
                bytes_read: n(f[3]),
                rps: f[4].parse().unwrap(),
                latency,
            }
        })
        .collect();
    (header, rows)
}

fn read_ndjson(path: &Path) -> Vec<Row> {
    let all = std::fs::read_to_string(path).unwrap();
    all.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {l}"));
            let keys = ["p50_us", "p90_us", "p99_us", "p99_9_us", "max_us"];
            let latency =
                if keys.iter().all(|k| v[*k].is_null()) { None } else { Some(keys.map(n)) };
            Row {
                step: v.get("step").map(|s| s.as_u64().unwrap()),
                second: n("second"),
                requests: n("requests"),
                failed: n("failed"),
                bytes_read: n("bytes_read"),
                rps: v["rps"].as_f64().unwrap(),
                latency,
            }
        })
        .collect()
}

/// One interval of an hlog: tag, start, length, and its histogram.
struct LogInterval {
    tag: Option<String>,
    start: Duration,
    length: Duration,
    hist: Histogram<u64>,
}

/// StartTime, BaseTime and the intervals of an hlog, read with the hdrhistogram crate.
fn read_hlog(path: &Path) -> (Option<Duration>, Option<Duration>, Vec<LogInterval>) {
    let bytes = std::fs::read(path).unwrap();
    let (mut start_time, mut base_time, mut intervals) = (None, None, Vec::new());
    for entry in IntervalLogIterator::new(&bytes) {
        match entry.unwrap() {
            LogEntry::StartTime(t) => start_time = Some(t),
            LogEntry::BaseTime(t) => base_time = Some(t),
            LogEntry::Interval(i) => {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .unwrap();
                let hist: Histogram<u64> = Deserializer::new().deserialize(&mut &raw[..]).unwrap();
                assert_eq!(i.max(), hist.max() as f64, "the line's max is the histogram's");
                intervals.push(LogInterval {
                    tag: i.tag().map(|t| t.as_str().to_owned()),
                    start: i.start_timestamp(),
                    length: i.duration(),
                    hist,
                });
            }
        }
    }
    (start_time, base_time, intervals)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn series_and_hlog_add_up_to_the_summary() {
    let serve = Serve::start(&["--threads", "1"]);
    let dir = tempdir("run-outputs");
    let (series, hlog) = (dir.join("run.csv"), dir.join("run.hlog"));
    let before = SystemTime::now();
    let j = run_json(&[
        "-c",
        "4",
        "-d",
        "3s",
        "--series",
        s(&series),
        "--hlog",
        s(&hlog),
        &serve.url("/bytes/100"),
    ]);
    let completed = u(&j["requests"]["completed"]);
    let max = u(&j["latency_us"]["total"]["max"]);
    assert!(completed > 0, "{j}");

    let (header, rows) = read_csv(&series);
    assert_eq!(header, COLUMNS);
    let seconds: Vec<u64> = rows.iter().map(|r| r.second).collect();
    assert_eq!(seconds, [0, 1, 2], "one row per second of -d 3s: {rows:?}");
    assert_eq!(rows.iter().map(|r| r.requests).sum::<u64>(), completed);
    assert_eq!(rows.iter().map(|r| r.failed).sum::<u64>(), u(&j["requests"]["failed"]));
    assert_eq!(rows.iter().map(|r| r.bytes_read).sum::<u64>(), u(&j["bytes"]["read"]));
    for r in &rows {
        assert!(r.requests > 0, "{r:?}");
        assert_eq!(r.rps, r.requests as f64, "a whole second: {r:?}");
        let l = r.latency.unwrap();
        assert!(l.windows(2).all(|w| w[0] <= w[1]), "percentiles in order: {r:?}");
    }
    assert_eq!(rows.iter().map(|r| r.latency.unwrap()[4]).max(), Some(max));

    let (start_time, base_time, intervals) = read_hlog(&hlog);
    let (start_time, base_time) = (start_time.unwrap(), base_time.unwrap());
    assert_eq!(start_time, base_time);
    let since = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
    assert!(since(before) <= start_time + Duration::from_millis(1), "StartTime is the run's start");
    assert!(start_time <= since(before) + Duration::from_secs(2), "StartTime is the run's start");
    let starts: Vec<Duration> = intervals.iter().map(|i| i.start).collect();
    assert_eq!(starts, [0, 1, 2].map(Duration::from_secs));
    assert!(intervals.iter().all(|i| i.length == Duration::from_secs(1) && i.tag.is_none()));
    let counts: Vec<u64> = intervals.iter().map(|i| i.hist.len()).collect();
    assert_eq!(counts, rows.iter().map(|r| r.requests).collect::<Vec<_>>(), "hlog vs series");
    assert_eq!(counts.iter().sum::<u64>(), completed);
    assert_eq!(intervals.iter().map(|i| i.hist.max()).max(), Some(max), "the summary's max");
}

#[test]
fn the_series_is_written_while_the_run_goes_and_a_stall_shows_as_zeros() {
    let serve = Serve::start(&["--threads", "1"]);
    let dir = tempdir("run-outputs");
    let (series, json) = (dir.join("run.ndjson"), dir.join("run.json"));
    // One connection; its 20th request waits 3.5 s, then its 40th: seconds 1, 2 and 4 have
    // no outcome at all, and only the worker's ticks can tell that they are over.
    let mut child = herd()
        .args(["run", "-c", "1", "-d", "5s", "--series", s(&series), "--json", s(&json)])
        .arg(serve.url("/stall?every=20&ms=3500"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // Second 1 is over at about 2.1 s; the stalled request ends at 3.5 s, so a row for second 1
    // before 3.2 s can only come from a tick, and proves the file is written as the run goes.
    let mut seen_while_running = false;
    while started.elapsed() < Duration::from_millis(3_200) {
        let rows = std::fs::read_to_string(&series).unwrap_or_default().lines().count();
        if rows >= 2 {
            seen_while_running = child.try_wait().unwrap().is_none();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(seen_while_running, "seconds 0 and 1 were not in the file during the stall");

    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = read_ndjson(&series);
    assert_eq!(rows.iter().map(|r| r.second).collect::<Vec<_>>(), [0, 1, 2, 3, 4], "{rows:?}");
    assert_eq!(rows.iter().map(|r| r.requests).sum::<u64>(), u(&j["requests"]["completed"]));
    assert!(rows[0].requests > 0 && rows[3].requests > 0, "{rows:?}");
    for r in [&rows[1], &rows[2], &rows[4]] {
        let zero = Row {
            step: None,
            second: r.second,
            requests: 0,
            failed: 0,
            bytes_read: 0,
            rps: 0.0,
            latency: None,
        };
        assert_eq!(*r, zero, "a stalled second is all zeros, and no latency");
    }
    // The stalled request's wait shows in the second it ended in.
    assert!(rows[3].latency.unwrap()[4] >= 3_500_000, "{rows:?}");
}

#[test]
fn steps_have_their_own_rows_and_tags() {
    let serve = Serve::start(&["--threads", "1"]);
    let dir = tempdir("run-outputs");
    let (series, hlog) = (dir.join("steps.csv"), dir.join("steps.hlog"));
    let j = run_json(&[
        "--steps",
        "1,2",
        "--step-time",
        "1500ms",
        "-t",
        "1",
        "--series",
        s(&series),
        "--hlog",
        s(&hlog),
        &serve.url("/bytes/10"),
    ]);
    let steps = j["steps"].as_array().unwrap();
    let (header, rows) = read_csv(&series);
    assert_eq!(header, format!("step,{COLUMNS}"));
    let keys: Vec<(u64, u64)> = rows.iter().map(|r| (r.step.unwrap(), r.second)).collect();
    assert_eq!(keys, [(1, 0), (1, 1), (2, 0), (2, 1)], "seconds count from each step's start");
    for (k, step) in steps.iter().enumerate() {
        let mine = rows.iter().filter(|r| r.step == Some(k as u64 + 1));
        assert_eq!(mine.map(|r| r.requests).sum::<u64>(), u(&step["requests"]["completed"]));
    }
    // A step's last second is half a second long: its rate is over that half.
    for r in rows.iter().filter(|r| r.second == 1) {
        assert!((r.rps - 2.0 * r.requests as f64).abs() <= 0.05, "{r:?}");
    }

    let (_, _, intervals) = read_hlog(&hlog);
    let tags: Vec<&str> = intervals.iter().map(|i| i.tag.as_deref().unwrap()).collect();
    assert_eq!(tags, ["step-1", "step-1", "step-2", "step-2"]);
    let lengths: Vec<u128> = intervals.iter().map(|i| i.length.as_millis()).collect();
    assert_eq!(lengths, [1000, 500, 1000, 500]);
    // Timestamps run on from the log's BaseTime: step 2 starts after step 1's 1.5 s.
    assert_eq!(intervals[1].start, Duration::from_secs(1));
    let step2 = intervals[2].start;
    assert!(
        step2 >= Duration::from_millis(1500) && step2 < Duration::from_millis(2500),
        "{step2:?}"
    );
    assert_eq!(intervals[3].start - step2, Duration::from_secs(1));
    for (k, step) in steps.iter().enumerate() {
        let tag = format!("step-{}", k + 1);
        let n: u64 =
            intervals.iter().filter(|i| i.tag.as_deref() == Some(&tag)).map(|i| i.hist.len()).sum();
        assert_eq!(n, u(&step["requests"]["completed"]), "{tag}");
    }
}

/// `script` (util-linux) runs a command under a pseudo-terminal and copies what it writes.
fn script() -> PathBuf {
    let path = PathBuf::from("/usr/bin/script");
    assert!(
        path.exists(),
        "`script` is missing: this test runs herd under a pseudo-terminal with it \
         (Debian: apt-get install bsdutils)"
    );
    path
}

#[test]
fn the_live_line_shows_on_a_terminal_and_is_erased_before_the_summary() {
    let serve = Serve::start(&["--threads", "1"]);
    let command =
        format!("'{}' run -c 2 -d 2500ms '{}'", env!("CARGO_BIN_EXE_herd"), serve.url("/bytes/10"));
    let out = run(Command::new(script()).args(["-qec", &command, "/dev/null"]));
    let tty = text(&out.stdout);
    assert!(out.status.success(), "{tty}\n{}", text(&out.stderr));
    let at = tty.find("herd run http://").unwrap_or_else(|| panic!("no summary: {tty:?}"));
    let (live, summary) = tty.split_at(at);
    let lines: Vec<&str> = live.split("\r\x1b[2K").filter(|l| !l.is_empty()).collect();
    assert!(lines.len() >= 2, "a line for each whole second: {live:?}");
    for (k, l) in lines.iter().enumerate() {
        let (elapsed, rest) = l.split_once("s  ").unwrap_or_else(|| panic!("{l:?}"));
        let elapsed: u64 = elapsed.parse().unwrap_or_else(|_| panic!("{l:?}"));
        assert!(k >= 2 || elapsed == k as u64 + 1, "{l:?}");
        let rps: u64 = rest.split_once(" req/s  0 errors  p99 ").unwrap().0.parse().unwrap();
        assert!(rps > 0 || k == 2, "{l:?}");
    }
    assert!(live.ends_with("\r\x1b[2K"), "the live line is erased before the summary: {live:?}");
    assert!(!summary.contains('\x1b'), "nothing of it in the summary: {summary:?}");
}

#[test]
fn no_live_line_when_stderr_is_not_a_terminal() {
    let serve = Serve::start(&["--threads", "1"]);
    let out = run(herd().args(["run", "-c", "2", "-d", "1500ms"]).arg(serve.url("/bytes/10")));
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "", "stderr is a pipe: no live line");
    assert!(text(&out.stdout).contains("requests in 1.5"), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains('\x1b'));
}

#[test]
fn bad_output_paths_stop_the_run_before_it_starts() {
    let serve = Serve::start(&["--threads", "1"]);
    let url = serve.url("/9x9");
    for (args, expect, code) in [
        (["--series", "out.txt"], "the extension chooses the format: .csv", 2),
        (["--series", "out.json"], ".ndjson or .jsonl", 2),
        (
            ["--series", "/nonexistent-herd-dir/s.csv"],
            "cannot create --series /nonexistent-herd-dir/s.csv",
            1,
        ),
        (
            ["--hlog", "/nonexistent-herd-dir/s.hlog"],
            "cannot create --hlog /nonexistent-herd-dir/s.hlog",
            1,
        ),
    ] {
        let out = run(herd().args(["run", "-n", "5"]).args(args).arg(&url));
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(expect), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?}: no run, no summary");
    }
    assert_eq!(serve.stats()["routes"]["/9x9"].as_u64().unwrap_or(0), 0, "no load was sent");
    // The same counter does count a run.
    let out = run(herd().args(["run", "-n", "5"]).arg(&url));
    assert!(out.status.success());
    assert_eq!(serve.stats()["routes"]["/9x9"], 5);
}
