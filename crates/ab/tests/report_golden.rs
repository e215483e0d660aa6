//! Golden tests of ab's report renderers: fixed `AbResults` fixtures rendered as ab's text
//! report (plain, `-S`, `-d`), `-w` HTML, `-e` CSV and `-g` TSV, compared byte for byte with
//! the files in tests/golden/.
//!
//! `UPDATE_GOLDEN=1 cargo test -p herd-ab --test report_golden` rewrites the files; review
//! the diff against ab.c's printf formats before keeping it. The fixtures are in
//! `tests/fixtures/`; `cargo run -p herd-ab --example dump_fixtures -- DIR` writes them out
//! for a harness built from ab.c's own `output_results()` (that is how the goldens were
//! cross-checked; see docs/ab-compat.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fixtures;

use chrono::{FixedOffset, Utc};
use herd_ab::report::{
    heartbeat_interval, write_banner, write_benchmarking, write_completed, write_csv, write_done,
    write_finished, write_gnuplot, write_gnuplot_in, write_report, writes_side_files,
};
use herd_ab::AbResults;
use herd_testutil::golden::Goldens;

use fixtures::{
    all_fixtures, base, fixture_basic, fixture_conditional, fixture_single, fixture_zero_done,
    samples_from,
};

fn check_golden(name: &str, got: &[u8]) {
    Goldens::of(env!("CARGO_MANIFEST_DIR")).check(name, got);
}

fn report(r: &AbResults) -> Vec<u8> {
    let mut v = Vec::new();
    write_report(r, &mut v).unwrap();
    v
}

#[test]
fn text_reports_match_goldens() {
    for (name, r) in all_fixtures() {
        let ext = if r.html.is_some() { "html" } else { "txt" };
        check_golden(&format!("{name}.{ext}"), &report(&r));
    }
}

#[test]
fn csv_matches_goldens() {
    let mut v = Vec::new();
    write_csv(&fixture_basic(), &mut v).unwrap();
    check_golden("basic.csv", &v);
    // Seven requests: ab's index runs past the array for the last rows; herd clamps.
    let mut v = Vec::new();
    write_csv(&fixture_conditional(), &mut v).unwrap();
    check_golden("conditional.csv", &v);
    let mut v = Vec::new();
    write_csv(&fixture_single(), &mut v).unwrap();
    check_golden("single.csv", &v);
}

#[test]
fn gnuplot_matches_goldens() {
    let mut r = fixture_basic();
    r.samples.truncate(40);
    r.done = 40;
    let mut v = Vec::new();
    write_gnuplot_in(&r, &mut v, &Utc).unwrap();
    check_golden("basic40_utc.tsv", &v);
    let ist = FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    let mut v = Vec::new();
    write_gnuplot_in(&fixture_conditional(), &mut v, &ist).unwrap();
    check_golden("conditional_ist.tsv", &v);
}

#[test]
fn gnuplot_rows_are_in_total_time_order_ties_in_completion_order() {
    let mut r = base(samples_from(&[(0, 3000, 0), (0, 1000, 0), (0, 3000, 1000), (0, 2000, 0)]));
    r.done = 4;
    let mut v = Vec::new();
    write_gnuplot_in(&r, &mut v, &Utc).unwrap();
    let text = String::from_utf8(v).unwrap();
    let rows: Vec<(&str, &str)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[4], f[5])
        })
        .collect();
    assert_eq!(rows, [("1", "0"), ("2", "0"), ("3", "0"), ("3", "1")]);
}

#[test]
fn gnuplot_local_is_gnuplot_in_local() {
    let r = fixture_conditional();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    write_gnuplot(&r, &mut a).unwrap();
    write_gnuplot_in(&r, &mut b, &chrono::Local).unwrap();
    assert_eq!(a, b);
}

#[test]
fn side_files_are_not_written_without_completed_requests() {
    let r = fixture_zero_done();
    assert!(!writes_side_files(&r));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    write_csv(&r, &mut a).unwrap();
    write_gnuplot(&r, &mut b).unwrap();
    assert!(a.is_empty() && b.is_empty());
    assert!(writes_side_files(&fixture_single()));
}

#[test]
fn median_quirk_shows_in_the_report() {
    // Totals 1, 2, 3 ms: textbook median 2; ab averages elements 1 and 2: 2.5 ms -> 3 (after
    // ap_round_ms of 2500 µs). Four samples 1..4 ms: ab takes element 2: 3 ms.
    let r = base(samples_from(&[(0, 1000, 0), (0, 2000, 0), (0, 3000, 0)]));
    let text = String::from_utf8(report(&r)).unwrap();
    assert!(text.contains("\nTotal:          1    2   1.0      3       3\n"), "{text}");
    let r = base(samples_from(&[(0, 1000, 0), (0, 2000, 0), (0, 3000, 0), (0, 4000, 0)]));
    let text = String::from_utf8(report(&r)).unwrap();
    assert!(text.contains("\nTotal:          1    3   1.3      3       4\n"), "{text}");
}

#[test]
fn banner_names_herd_in_abs_shape() {
    let mut v = Vec::new();
    write_banner(&mut v, false).unwrap();
    let text = String::from_utf8(v).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines.len(), 5, "{text:?}"); // three lines, a blank line, the final newline
    assert_eq!(
        lines[0],
        format!(
            "This is herd ab, Version {} (ApacheBench 2.3 compatible)",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert!(lines[3].is_empty() && lines[4].is_empty());
    assert!(!text.contains("Licensed to The Apache Software Foundation"));

    let mut v = Vec::new();
    write_banner(&mut v, true).unwrap();
    let html = String::from_utf8(v).unwrap();
    assert!(html.starts_with("<p>\n This is herd ab, Version "), "{html}");
    assert!(html.contains(" <i>&lt;ApacheBench 2.3 compatible&gt;</i><br>\n "), "{html}");
    assert!(html.ends_with("<br>\n</p>\n<p>\n"), "{html}");
    assert_eq!(html.matches("<br>\n").count(), 3);
}

#[test]
fn benchmarking_line_as_ab() {
    let line = |host: &str, proxy: Option<(&str, u16)>, progress: bool| {
        let mut v = Vec::new();
        write_benchmarking(&mut v, host, proxy, progress).unwrap();
        String::from_utf8(v).unwrap()
    };
    assert_eq!(line("127.0.0.1", None, true), "Benchmarking 127.0.0.1 (be patient)\n");
    assert_eq!(line("127.0.0.1", None, false), "Benchmarking 127.0.0.1 (be patient)...");
    assert_eq!(
        line("127.0.0.1", Some(("127.0.0.1", 42327)), false),
        "Benchmarking 127.0.0.1 [through 127.0.0.1:42327] (be patient)..."
    );
    // -X host without a port: ab's proxyport stays 0.
    assert_eq!(
        line("example.test", Some(("proxy", 0)), true),
        "Benchmarking example.test [through proxy:0] (be patient)\n"
    );
}

#[test]
fn progress_lines_as_ab() {
    let mut v = Vec::new();
    write_benchmarking(&mut v, "127.0.0.1", None, false).unwrap();
    write_done(&mut v).unwrap();
    assert_eq!(String::from_utf8(v).unwrap(), "Benchmarking 127.0.0.1 (be patient).....done\n");
    let mut v = Vec::new();
    write_completed(&mut v, 100).unwrap();
    write_completed(&mut v, 200).unwrap();
    write_finished(&mut v, 200).unwrap();
    assert_eq!(
        String::from_utf8(v).unwrap(),
        "Completed 100 requests\nCompleted 200 requests\nFinished 200 requests\n"
    );
    assert_eq!(heartbeat_interval(150, false), 0);
    assert_eq!(heartbeat_interval(151, false), 100);
    assert_eq!(heartbeat_interval(200, false), 100);
    assert_eq!(heartbeat_interval(5000, false), 500);
    assert_eq!(heartbeat_interval(50_000, false), 5000);
    assert_eq!(heartbeat_interval(5000, true), 0);
}
