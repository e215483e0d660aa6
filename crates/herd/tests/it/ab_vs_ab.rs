//! The differential test: the real ab and herd ab, same flags, same nginx. The reports must
//! have the same lines in the same order, the same counts and byte totals, and timing lines
//! of the same shape. One case per flag that changes what is sent or printed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::process::Output;

use herd_testutil::ports::closed_port;
use util::{assert_same_report, file, herd, real_ab, run, tempdir, text, Nginx};

/// Runs ab and herd ab with `args` (the URL last) and compares their reports.
fn compare(nginx: &Nginx, case: &str, args: &[&str], path: &str) -> (String, String) {
    let (ab, h) = compare_at(case, args, &nginx.url(path));
    (text(&ab.stdout), text(&h.stdout))
}

/// Runs ab and herd ab with `args` and then `url`: same exit code, ab's a success, same report.
fn compare_at(case: &str, args: &[&str], url: &str) -> (Output, Output) {
    let mut all: Vec<&str> = args.to_vec();
    all.push(url);
    let ab = run(real_ab().args(&all));
    let h = run(herd().arg("ab").args(&all));
    let (ab_out, h_out) = (text(&ab.stdout), text(&h.stdout));
    assert_eq!(
        ab.status.code(),
        h.status.code(),
        "{case}: exit codes differ\nab stderr: {}\nherd stderr: {}",
        text(&ab.stderr),
        text(&h.stderr)
    );
    assert!(ab.status.success(), "{case}: ab failed: {}", text(&ab.stderr));
    assert_same_report(&ab_out, &h_out, case);
    (ab, h)
}

#[test]
fn static_file() {
    let nginx = Nginx::start();
    compare(&nginx, "static", &["-n", "200", "-c", "5"], "/f6397.html");
}

#[test]
fn not_found_counts_non_2xx() {
    let nginx = Nginx::start();
    let (_, h) = compare(&nginx, "404", &["-n", "40", "-c", "4"], "/missing.html");
    assert!(h.contains("Non-2xx responses:      40"), "{h}");
}

#[test]
fn keep_alive() {
    let nginx = Nginx::start();
    let (_, h) = compare(&nginx, "keep-alive", &["-k", "-n", "500", "-c", "10"], "/f6397.html");
    assert!(h.contains("Keep-Alive requests:    500"), "{h}");
}

#[test]
fn post_body() {
    let nginx = Nginx::start();
    let dir = tempdir("post");
    let body = file(&dir, "body.txt", &vec![b'p'; 3000]);
    let body = body.to_str().unwrap();
    let (_, h) = compare(
        &nginx,
        "post",
        &["-n", "30", "-c", "3", "-p", body, "-T", "application/x-test"],
        "/echo",
    );
    assert!(h.contains("Total body sent:"), "{h}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn put_body() {
    let nginx = Nginx::start();
    let dir = tempdir("put");
    let body = file(&dir, "body.txt", b"put me\n");
    compare(&nginx, "put", &["-n", "10", "-u", body.to_str().unwrap()], "/echo");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn head_method() {
    let nginx = Nginx::start();
    let (_, h) = compare(&nginx, "head", &["-i", "-n", "20", "-c", "2"], "/f6397.html");
    assert!(h.contains("Document Length:        0 bytes"), "{h}");
}

#[test]
fn custom_method() {
    let nginx = Nginx::start();
    compare(&nginx, "method", &["-m", "OPTIONS", "-n", "10"], "/small.html");
}

#[test]
fn headers_cookies_and_auth_change_bytes_sent_and_received() {
    let nginx = Nginx::start();
    compare(
        &nginx,
        "headers",
        &["-n", "20", "-c", "2", "-H", "X-Test: 1", "-C", "a=b", "-A", "u:p", "-P", "x:y"],
        "/small.html",
    );
}

#[test]
fn host_and_user_agent_overrides() {
    let nginx = Nginx::start();
    compare(
        &nginx,
        "overrides",
        &["-n", "10", "-H", "Host: example.test", "-H", "User-Agent: x"],
        "/small.html",
    );
}

#[test]
fn quiet_no_percentiles_no_confidence() {
    let nginx = Nginx::start();
    compare(&nginx, "-q -d -S", &["-q", "-d", "-S", "-n", "300", "-c", "3"], "/small.html");
}

#[test]
fn progress_lines_on_stderr() {
    let nginx = Nginx::start();
    let url = nginx.url("/small.html");
    let ab = run(real_ab().args(["-n", "1000", "-c", "4", &url]));
    let h = run(herd().args(["ab", "-n", "1000", "-c", "4", &url]));
    assert_eq!(text(&ab.stderr), text(&h.stderr));
    assert!(text(&h.stderr).contains("Completed 100 requests\n"));
    assert!(text(&h.stderr).ends_with("Finished 1000 requests\n"));
}

#[test]
fn variable_length_flag() {
    let nginx = Nginx::start();
    let (_, h) = compare(&nginx, "-l", &["-l", "-n", "20"], "/small.html");
    assert!(h.contains("Document Length:        Variable"), "{h}");
}

#[test]
fn html_output() {
    let nginx = Nginx::start();
    let url = nginx.url("/small.html");
    let args = ["-w", "-x", "border=1", "-y", "class=r", "-z", "class=d", "-n", "20", &url];
    let ab = run(real_ab().args(args));
    let h = run(herd().arg("ab").args(args));
    let strip = |s: &str| -> Vec<String> {
        s.lines()
            .skip(5)
            .filter(|l| {
                !l.contains("Time taken")
                    && !l.contains("per second")
                    && !l.contains("Transfer rate")
                    && !l.contains("Connect:")
                    && !l.contains("Processing:")
                    && !l.contains("Total:</th>")
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(strip(&text(&ab.stdout)), strip(&text(&h.stdout)));
}

#[test]
fn through_a_proxy() {
    // nginx serves absolute-form request targets itself, so it can stand in for a proxy.
    let nginx = Nginx::start();
    let proxy = format!("127.0.0.1:{}", nginx.port);
    let (ab, _) = compare(&nginx, "-X", &["-X", &proxy, "-n", "10"], "/small.html");
    assert!(ab.contains("[through 127.0.0.1:"), "{ab}");
}

#[test]
fn bind_address_and_window_size() {
    let nginx = Nginx::start();
    compare(&nginx, "-B -b", &["-B", "127.0.0.1", "-b", "65536", "-n", "10"], "/small.html");
}

#[test]
fn time_limit_stops_the_run() {
    let nginx = Nginx::start();
    let url = nginx.url("/small.html");
    let t = std::time::Instant::now();
    // As in ab, -t alone implies -n 50000 (which a fast machine finishes in under a
    // second); an -n given after -t lifts that cap.
    let h = run(herd().args(["ab", "-t", "1", "-n", "100000000", "-k", "-c", "4", &url]));
    assert!(h.status.success(), "{}", text(&h.stderr));
    let took = t.elapsed().as_secs_f64();
    assert!((0.9..3.0).contains(&took), "took {took}");
    let out = text(&h.stdout);
    let secs: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Time taken for tests:   "))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!((0.95..1.5).contains(&secs), "{out}");
}

#[test]
fn csv_and_gnuplot_files() {
    let nginx = Nginx::start();
    let dir = tempdir("files");
    let url = nginx.url("/small.html");
    let (e1, g1) = (dir.join("ab.csv"), dir.join("ab.tsv"));
    let (e2, g2) = (dir.join("herd.csv"), dir.join("herd.tsv"));
    let ab = run(real_ab().args([
        "-n",
        "50",
        "-e",
        e1.to_str().unwrap(),
        "-g",
        g1.to_str().unwrap(),
        &url,
    ]));
    let h = run(herd().args([
        "ab",
        "-n",
        "50",
        "-e",
        e2.to_str().unwrap(),
        "-g",
        g2.to_str().unwrap(),
        &url,
    ]));
    assert!(ab.status.success() && h.status.success());
    let (ca, ch) = (std::fs::read_to_string(e1).unwrap(), std::fs::read_to_string(e2).unwrap());
    assert_eq!(ca.lines().count(), ch.lines().count());
    assert_eq!(ca.lines().next(), ch.lines().next());
    let (ga, gh) = (std::fs::read_to_string(g1).unwrap(), std::fs::read_to_string(g2).unwrap());
    assert_eq!(ga.lines().count(), gh.lines().count());
    assert_eq!(ga.lines().next(), gh.lines().next());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn verbosity_prints_the_request_as_ab_does() {
    let nginx = Nginx::start();
    let url = nginx.url("/small.html");
    let ab = run(real_ab().args(["-v", "2", "-n", "1", &url]));
    let h = run(herd().args(["ab", "-v", "2", "-n", "1", &url]));
    let info = |s: &str| -> String {
        let start = s.find("INFO: GET header == ").expect("no INFO block");
        let end = start + s[start..].find("\n---\n").unwrap() + 5;
        let end = end + s[end..].find("\n---\n").unwrap() + 5;
        s[start..end].to_string()
    };
    assert_eq!(info(&text(&ab.stdout)), info(&text(&h.stdout)));
}

#[test]
fn version_and_help() {
    let h = run(herd().args(["ab", "-V"]));
    assert!(h.status.success());
    assert!(text(&h.stdout).contains("ApacheBench 2.3 compatible"));
    let ab = run(real_ab().arg("-h"));
    let h = run(herd().args(["ab", "-h"]));
    assert_eq!(ab.status.code(), h.status.code());
    let flags = |s: &str| -> Vec<String> {
        s.lines()
            .filter_map(|l| l.trim_start().strip_prefix('-'))
            .map(|l| l.chars().take(1).collect())
            .collect()
    };
    for f in flags(&text(&ab.stderr)) {
        assert!(flags(&text(&h.stderr)).contains(&f), "herd ab -h lacks -{f}");
    }
}

/// `-r` against a port where nothing listens. ab finds each refusal through recv() and, with
/// `-r`, counts it as a Receive failure *and* a complete request, then checks the connection
/// it has just reopened (refused as well) under Exceptions: "Complete requests: 20, Failed
/// requests: 30 (Connect: 0, Receive: 20, ..., Exceptions: 10)", exit 0, the whole report.
/// herd ab must say the same, whatever -n, -c and -k (ab only ever opens one connection until
/// a response arrives), progress lines included.
#[test]
fn r_against_a_refused_port_reports_as_ab() {
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let cases: &[&[&str]] = &[
        &["-r", "-n", "20"],
        &["-r", "-n", "1"],
        &["-r", "-n", "5", "-c", "2"],
        &["-r", "-k", "-n", "30", "-c", "5"],
        &["-r", "-n", "300", "-c", "3"],
    ];
    for args in cases {
        let case = args.join(" ");
        let (ab, h) = compare_at(&case, args, &url);
        assert_eq!(text(&ab.stderr), text(&h.stderr), "{case}: stderr differs");
        let n: u64 = args[args.iter().position(|a| *a == "-n").unwrap() + 1].parse().unwrap();
        let pairs = n.div_ceil(2);
        let out = text(&h.stdout);
        assert!(out.contains(&format!("Complete requests:      {n}\n")), "{case}: {out}");
        let breakdown =
            format!("(Connect: 0, Receive: {}, Length: 0, Exceptions: {pairs})", 2 * pairs);
        assert!(out.contains(&breakdown), "{case}: {out}");
    }
}

/// An https:// port where nothing listens. ab's TLS read path never looks at `-r`: each
/// refusal is "SSL read failed (5) - closing connection" on stderr and a complete request,
/// the reopened connection's check an Exception; exit 0 with the report, with or without -r.
#[test]
fn https_against_a_refused_port_reports_as_ab() {
    let url = format!("https://127.0.0.1:{}/", closed_port());
    let cases: &[&[&str]] = &[&["-n", "3"], &["-r", "-n", "20", "-c", "4"]];
    for args in cases {
        let case = args.join(" ");
        let (ab, h) = compare_at(&case, args, &url);
        assert_eq!(text(&ab.stderr), text(&h.stderr), "{case}: stderr differs");
        assert!(text(&h.stderr).starts_with("SSL read failed (5) - closing connection\n"));
    }
}

/// `-n` that atoi reads as 0 or less: ab's err() prints "Invalid number of requests" and a
/// blank line on stderr, nothing on stdout, no usage text, and exits 1. herd ab too.
#[test]
fn invalid_number_of_requests_as_ab() {
    for n in ["0", "-5", "abc", "99999999999999999999"] {
        let args = ["-n", n, "http://127.0.0.1:1/"];
        let ab = run(real_ab().args(args));
        let h = run(herd().arg("ab").args(args));
        assert_eq!(text(&ab.stderr), "Invalid number of requests\n\n", "-n {n}");
        assert_eq!(text(&h.stderr), text(&ab.stderr), "-n {n}");
        assert_eq!(text(&h.stdout), text(&ab.stdout), "-n {n}");
        assert_eq!(h.status.code(), ab.status.code(), "-n {n}");
        assert_eq!(h.status.code(), Some(1), "-n {n}");
    }
}
