//! Golden tests of ab's report renderers: fixed `AbResults` fixtures rendered as ab's text
//! report (plain, `-S`, `-d`), `-w` HTML, `-e` CSV and `-g` TSV, compared byte for byte with
//! the files in tests/golden/.
//!
//! `UPDATE_GOLDEN=1 cargo test -p herd-ab --test report_golden` rewrites the files; review
//! the diff against ab.c's printf formats before keeping it. `HERD_AB_DUMP_FIXTURES=<dir>`
//! also writes each fixture as `key=value` lines plus `S start ctime time wait` sample lines,
//! so the same numbers can be fed to a harness built from ab.c's own `output_results()`
//! (that is how the goldens were cross-checked; see docs/ab-compat.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::PathBuf;

use chrono::{FixedOffset, Utc};
use herd_ab::report::{
    heartbeat_interval, write_banner, write_benchmarking, write_completed, write_csv, write_done,
    write_finished, write_gnuplot, write_gnuplot_in, write_report, writes_side_files,
};
use herd_ab::results::HtmlAttributes;
use herd_ab::{AbResults, Sample, TlsSummary};

/// 2026-11-21 09:02:35.25 UTC, in µs: the start of every fixture run.
const T0: i64 = 1_795_251_755_250_000;

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name)
}

fn check_golden(name: &str, got: &[u8]) {
    let path = golden_path(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", path.display()));
    if want != got {
        let (w, g) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
        let first = w.lines().zip(g.lines()).position(|(a, b)| a != b);
        panic!(
            "{name} differs from the golden (first differing line: {first:?})\n--- want\n{w}\n--- got\n{g}"
        );
    }
}

/// A small deterministic generator, so fixtures are reproducible without a rand dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> i64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % below) as i64
    }
}

/// `n` samples in completion order, with connect, wait and total times spread like a loaded
/// server's: mostly a few ms, with a slow tail.
fn spread_samples(n: usize, seed: u64) -> Vec<Sample> {
    let mut g = Lcg(seed);
    let mut start = T0;
    (0..n)
        .map(|i| {
            start += 97 + g.next(3000);
            let ctime = if i % 5 == 0 { 0 } else { 80 + g.next(1500) };
            let wait = 300 + g.next(4000) + if i % 17 == 0 { g.next(60_000) } else { 0 };
            let time = ctime + wait + 40 + g.next(700);
            Sample::new(start, ctime, time, wait)
        })
        .collect()
}

fn samples_from(times: &[(i64, i64, i64)]) -> Vec<Sample> {
    times
        .iter()
        .enumerate()
        .map(|(i, &(ctime, time, wait))| Sample::new(T0 + i as i64 * 1_000_137, ctime, time, wait))
        .collect()
}

fn base(samples: Vec<Sample>) -> AbResults {
    let done = samples.len() as u64;
    AbResults {
        server_software: "nginx/1.22.1".into(),
        hostname: "127.0.0.1".into(),
        port: 8080,
        tls: None,
        proxy: None,
        path: "/index.html".into(),
        variable_length: false,
        doclen: 612,
        concurrency: 10,
        time_taken_s: 1.234567,
        done,
        bad: 0,
        err_conn: 0,
        err_recv: 0,
        err_length: 0,
        err_except: 0,
        epipe: 0,
        err_response: 0,
        keepalive: false,
        doneka: 0,
        total_read: 853 * done,
        send_body: false,
        total_posted: 0,
        total_body_read: 612 * done,
        samples,
        show_percentiles: true,
        show_confidence: true,
        html: None,
    }
}

/// A thousand requests at -c 10 over http: every always-printed line and the percentiles.
fn fixture_basic() -> AbResults {
    let mut r = base(spread_samples(1000, 7));
    r.time_taken_s = 0.731_204;
    r
}

/// Everything conditional at once: TLS lines, -l, failures with a breakdown that sums to less
/// than the total (the header-too-large case), write errors, non-2xx, keep-alive, a body sent.
/// Seven requests: an odd count, so ab's averaging median, and percentiles over few samples.
fn fixture_conditional() -> AbResults {
    let mut r = base(samples_from(&[
        (1_830, 9_710, 6_020),
        (0, 2_480, 2_110),
        (0, 3_499, 3_001),
        (2_101, 12_500, 8_800),
        (0, 1_500, 1_222),
        (0, 2_501, 2_000),
        (1_950, 7_620, 4_700),
    ]));
    r.server_software = "Apache/2.4.62".into();
    r.hostname = "bench.example.test".into();
    r.port = 8443;
    r.tls = Some(TlsSummary {
        protocol: "TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256".into(),
        temp_key: Some("ECDH X25519 253 bits".into()),
        sni: Some("bench.example.test".into()),
    });
    r.path = "/api/v1/items?page=2".into();
    r.variable_length = true;
    r.concurrency = 3;
    r.time_taken_s = 0.016_002;
    r.bad = 9;
    r.err_conn = 2;
    r.err_recv = 1;
    r.err_length = 4;
    r.err_except = 1;
    r.epipe = 3;
    r.err_response = 5;
    r.keepalive = true;
    r.doneka = 4;
    r.total_read = 5_123;
    r.send_body = true;
    r.total_posted = 2_261;
    r.total_body_read = 1_904;
    r
}

/// One request: no percentile table (ab wants done > 1), sd 0.0, median of the only sample.
fn fixture_single() -> AbResults {
    let mut r = base(samples_from(&[(240, 490, 180)]));
    r.concurrency = 1;
    r.time_taken_s = 0.000_504;
    r.doclen = 12;
    r.total_read = 242;
    r.total_body_read = 12;
    r
}

/// Nothing completed, the run took time, connects failed: no rates, no table.
fn fixture_zero_done() -> AbResults {
    let mut r = base(Vec::new());
    r.server_software = String::new();
    r.doclen = 0;
    r.concurrency = 4;
    r.time_taken_s = 2.5;
    r.bad = 11;
    r.err_conn = 11;
    r.total_read = 0;
    r.total_body_read = 0;
    r
}

/// Requests done in a time that rounds to zero seconds exactly: the table but no rates.
fn fixture_zero_time() -> AbResults {
    let mut r = base(samples_from(&[(0, 0, 0), (0, 0, 0), (0, 1, 0), (0, 0, 0)]));
    r.concurrency = 2;
    r.time_taken_s = 0.0;
    r
}

/// SANE checks on an even count (median = element n/2): a WARNING for Connect and Total, an
/// ERROR for Processing, nothing for Waiting (constant: sd 0.0, mean == median).
fn fixture_sane() -> AbResults {
    // ctime [0, 0, 0, 0, 1.5, 1.5] ms: mean 0.5 -> 1, median 0, sd 0.77: WARNING.
    // time - ctime [1.4, 1.4, 1.4, 1.499, 1.7, 1.7] ms: mean 1.516 -> 2, median 1.499 -> 1,
    // sd 0.15: ERROR.
    // time [1.4, 1.4, 1.4, 1.499, 3.2, 3.2] ms: mean 2.016 -> 2, median 1.499 -> 1, sd 0.92:
    // WARNING.
    let mut r = base(samples_from(&[
        (0, 1_400, 1_000),
        (1_500, 3_200, 1_000),
        (0, 1_400, 1_000),
        (0, 1_499, 1_000),
        (1_500, 3_200, 1_000),
        (0, 1_400, 1_000),
    ]));
    r.concurrency = 2;
    r.time_taken_s = 0.05;
    r
}

/// The odd-count median quirk with a tiny sd: mean 1.499 -> 1 ms but ab's median averages
/// elements 2 and 3, (1.499 + 1.501) / 2 = 1.5 -> 2 ms: an ERROR on Total and Processing.
fn fixture_sane_odd() -> AbResults {
    let mut r = base(samples_from(&[
        (0, 1_499, 700),
        (0, 1_501, 700),
        (0, 1_499, 700),
        (0, 1_501, 700),
        (0, 1_499, 700),
    ]));
    r.concurrency = 1;
    r.time_taken_s = 0.0075;
    r
}

/// `-S`: min/avg/max table with ab's missing space before max, no warnings, percentiles kept.
fn fixture_no_confidence() -> AbResults {
    let mut r = fixture_basic();
    r.show_confidence = false;
    r
}

/// `-d`: the full table and no percentiles.
fn fixture_no_percentiles() -> AbResults {
    let mut r = fixture_sane();
    r.show_percentiles = false;
    r
}

/// `-w` with ab's default attributes and the conditional rows.
fn fixture_html() -> AbResults {
    let mut r = fixture_conditional();
    r.variable_length = false;
    r.doclen = 272;
    r.html = Some(HtmlAttributes::default());
    r
}

/// `-x -y -z` attributes, nothing completed: rate rows still printed (ab only checks the time).
fn fixture_html_zero_done() -> AbResults {
    let mut r = fixture_zero_done();
    r.html = Some(HtmlAttributes {
        table: "border=1".into(),
        tr: "class=\"r\"".into(),
        td: "align=right".into(),
    });
    r
}

/// `-w` over the thousand-request run: the Processing row is Total minus Connect.
fn fixture_html_basic() -> AbResults {
    let mut r = fixture_basic();
    r.html = Some(HtmlAttributes::default());
    r
}

fn all_fixtures() -> Vec<(&'static str, AbResults)> {
    vec![
        ("basic", fixture_basic()),
        ("conditional", fixture_conditional()),
        ("single", fixture_single()),
        ("zero_done", fixture_zero_done()),
        ("zero_time", fixture_zero_time()),
        ("sane", fixture_sane()),
        ("sane_odd", fixture_sane_odd()),
        ("no_confidence", fixture_no_confidence()),
        ("no_percentiles", fixture_no_percentiles()),
        ("html", fixture_html()),
        ("html_zero_done", fixture_html_zero_done()),
        ("html_basic", fixture_html_basic()),
    ]
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

/// `HERD_AB_DUMP_FIXTURES=<dir>`: write the fixtures for an external cross-check (see the
/// module comment); a no-op otherwise.
#[test]
fn dump_fixtures_when_asked() {
    let Some(dir) = std::env::var_os("HERD_AB_DUMP_FIXTURES") else { return };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, r) in all_fixtures() {
        let mut s = String::new();
        let b = |x: bool| u8::from(x);
        let kv: Vec<(&str, String)> = vec![
            ("servername", r.server_software.clone()),
            ("hostname", r.hostname.clone()),
            ("port", r.port.to_string()),
            ("is_ssl", b(r.tls.is_some()).to_string()),
            ("ssl_info", r.tls.as_ref().map(|t| t.protocol.clone()).unwrap_or_default()),
            ("ssl_tmp_key", r.tls.as_ref().and_then(|t| t.temp_key.clone()).unwrap_or_default()),
            ("tls_sni", r.tls.as_ref().and_then(|t| t.sni.clone()).unwrap_or_default()),
            ("path", r.path.clone()),
            ("nolength", b(r.variable_length).to_string()),
            ("doclen", r.doclen.to_string()),
            ("concurrency", r.concurrency.to_string()),
            ("timetaken", format!("{:e}", r.time_taken_s)),
            ("bad", r.bad.to_string()),
            ("err_conn", r.err_conn.to_string()),
            ("err_recv", r.err_recv.to_string()),
            ("err_length", r.err_length.to_string()),
            ("err_except", r.err_except.to_string()),
            ("epipe", r.epipe.to_string()),
            ("err_response", r.err_response.to_string()),
            ("keepalive", b(r.keepalive).to_string()),
            ("doneka", r.doneka.to_string()),
            ("totalread", r.total_read.to_string()),
            ("send_body", b(r.send_body).to_string()),
            ("totalposted", r.total_posted.to_string()),
            ("totalbread", r.total_body_read.to_string()),
            ("percentile", b(r.show_percentiles).to_string()),
            ("confidence", b(r.show_confidence).to_string()),
            ("use_html", b(r.html.is_some()).to_string()),
            ("tablestring", r.html.as_ref().map(|h| h.table.clone()).unwrap_or_default()),
            ("trstring", r.html.as_ref().map(|h| h.tr.clone()).unwrap_or_default()),
            ("tdstring", r.html.as_ref().map(|h| h.td.clone()).unwrap_or_default()),
        ];
        for (k, v) in kv {
            writeln!(s, "{k}={v}").unwrap();
        }
        for x in &r.samples {
            writeln!(
                s,
                "S {} {} {} {}",
                x.start_epoch_us(),
                x.ctime_us(),
                x.time_us(),
                x.wait_us()
            )
            .unwrap();
        }
        std::fs::write(dir.join(format!("{name}.fixture")), s).unwrap();
    }
}
