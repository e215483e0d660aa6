//! Differential check of the report layout against the real ApacheBench binary.
//!
//! Runs `/usr/bin/ab` (or `$HERD_AB_REAL_AB`) against a tiny HTTP server on 127.0.0.1 with
//! several flag sets, rebuilds an `AbResults` from ab's own printed counters and its `-g` file
//! (whole milliseconds), renders it with herd's renderers and compares line by line:
//!
//! - counters, labels, blank lines, conditional lines, percentiles: byte for byte;
//! - lines computed from ab's microsecond clock (rates, the Connection Times rows): same text
//!   with the numbers masked, and for the table rows the same right-aligned number columns;
//! - SANE warnings are left out (they depend on microseconds herd cannot recover from `-g`;
//!   tests/report_golden.rs covers them);
//! - the `-g` file: every column exact except dtime (ab rounds `time - ctime` in µs), within 1;
//! - stderr's "Completed"/"Finished" lines: exact.
//!
//! Fails, saying how to install it, when the ab binary is missing: CI never skips it.
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use herd_ab::report::{
    heartbeat_interval, write_benchmarking, write_completed, write_done, write_finished,
    write_gnuplot, write_report,
};
use herd_ab::results::HtmlAttributes;
use herd_ab::{AbResults, Sample};

fn ab_binary() -> Option<PathBuf> {
    let path =
        std::env::var_os("HERD_AB_REAL_AB").map_or_else(|| "/usr/bin/ab".into(), PathBuf::from);
    path.exists().then_some(path)
}

static VAR_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A minimal HTTP/1.x server: `/redir` answers 302, `/var` a body whose length cycles, anything
/// else "hello world\n". Keeps the connection open when asked to (ab's `-k`), else closes it.
fn start_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || serve(conn));
        }
    });
    port
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn serve(mut c: TcpStream) {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    loop {
        let head_end = loop {
            if let Some(p) = find(&buf, b"\r\n\r\n") {
                break p + 4;
            }
            match c.read(&mut tmp) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&tmp[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let lower = head.to_ascii_lowercase();
        let body_len = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        while buf.len() < head_end + body_len {
            match c.read(&mut tmp) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&tmp[..n]),
            }
        }
        buf.drain(..head_end + body_len);
        let keep = lower.contains("connection: keep-alive");
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let (status, body) = if target.ends_with("/redir") {
            ("302 Found", "moved\n".to_string())
        } else if target.ends_with("/var") {
            let n = VAR_COUNTER.fetch_add(1, Ordering::Relaxed);
            ("200 OK", format!("{}\n", "x".repeat(n % 3 + 1)))
        } else {
            ("200 OK", "hello world\n".to_string())
        };
        let resp = format!(
            "HTTP/1.1 {status}\r\nServer: herd-test/1.0 (Unix)\r\nContent-Type: text/plain\r\n\
             Content-Length: {}\r\nConnection: {}\r\n\r\n{body}",
            body.len(),
            if keep { "keep-alive" } else { "close" }
        );
        if c.write_all(resp.as_bytes()).is_err() {
            return;
        }
        if !keep {
            let _ = c.shutdown(Shutdown::Write);
            return;
        }
    }
}

struct Run {
    stdout: String,
    stderr: String,
    gnuplot: Option<String>,
    csv: Option<String>,
}

fn run_ab(ab: &Path, args: &[&str], url: &str, tag: &str) -> Run {
    let dir = std::env::temp_dir().join(format!("herd-ab-real-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (g, e) = (dir.join("g.tsv"), dir.join("e.csv"));
    let out =
        Command::new(ab).args(args).arg("-g").arg(&g).arg("-e").arg(&e).arg(url).output().unwrap();
    assert!(out.status.success(), "ab {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    let run = Run {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        gnuplot: std::fs::read_to_string(&g).ok(),
        csv: std::fs::read_to_string(&e).ok(),
    };
    let _ = std::fs::remove_dir_all(&dir);
    run
}

/// The value after a text-report label (labels are padded to 24 columns).
fn text_value<'a>(report: &'a str, label: &str) -> Option<&'a str> {
    report.lines().find(|l| l.starts_with(label)).map(|l| l[24.min(l.len())..].trim_end())
}

/// The value of an HTML report row `<th ...>label</th><td ...>value</td>`.
fn html_value<'a>(report: &'a str, label: &str) -> Option<&'a str> {
    let key = format!(">{label}</th>");
    report.lines().find_map(|l| {
        let at = l.find(&key)? + key.len();
        let rest = &l[at..];
        let start = rest.find('>')? + 1;
        let end = rest.find("</td>")?;
        Some(&rest[start..end])
    })
}

fn num<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    s.split_whitespace().next().unwrap().parse().unwrap()
}

fn samples_from_gnuplot(g: &str) -> Vec<Sample> {
    g.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let ms = |i: usize| f[i].parse::<i64>().unwrap() * 1000;
            Sample::new(f[1].parse::<i64>().unwrap() * 1_000_000, ms(2), ms(4), ms(5))
        })
        .collect()
}

/// The breakdown `(Connect: a, Receive: b, Length: c, Exceptions: d)` (HTML has no Receive).
fn breakdown(report: &str, name: &str) -> u64 {
    report
        .lines()
        .find(|l| l.contains("(Connect: "))
        .and_then(|l| l.split(&format!("{name}: ")).nth(1))
        .map_or(0, |rest| num(rest.split([',', ')']).next().unwrap()))
}

/// Rebuilds ab's results from its report and `-g` file.
fn results_from_ab(report: &str, gnuplot: &str, args: &[&str], html: bool) -> AbResults {
    let v = |label: &str| {
        if html {
            html_value(report, label)
        } else {
            text_value(report, &format!("{label} "))
        }
    };
    let samples = samples_from_gnuplot(gnuplot);
    let flag = |f: &str| args.contains(&f);
    let doc_len = v("Document Length:").unwrap();
    // ab prints rates whenever its (microsecond) time is non-zero; keep it non-zero here even
    // when it printed as 0.000.
    let time_taken_s: f64 = num(v("Time taken for tests:").unwrap());
    let proxy = args.iter().position(|a| *a == "-X").map(|i| {
        let (h, p) = args[i + 1].split_once(':').unwrap();
        (h.to_string(), p.parse().unwrap())
    });
    AbResults {
        server_software: v("Server Software:").unwrap().to_string(),
        hostname: v("Server Hostname:").unwrap().to_string(),
        port: num(v("Server Port:").unwrap()),
        tls: None,
        proxy,
        path: v("Document Path:").unwrap().to_string(),
        variable_length: doc_len == "Variable",
        doclen: if doc_len == "Variable" { 0 } else { num(doc_len) },
        concurrency: num(v("Concurrency Level:").unwrap()),
        time_taken_s: if time_taken_s == 0.0 { 0.0004 } else { time_taken_s },
        done: num(v("Complete requests:").unwrap()),
        bad: num(v("Failed requests:").unwrap()),
        err_conn: breakdown(report, "Connect"),
        err_recv: breakdown(report, "Receive"),
        err_length: breakdown(report, "Length"),
        err_except: breakdown(report, "Exceptions"),
        epipe: v("Write errors:").map_or(0, num),
        err_response: v("Non-2xx responses:").map_or(0, num),
        keepalive: flag("-k"),
        doneka: v("Keep-Alive requests:").map_or(0, num),
        total_read: num(v("Total transferred:").unwrap()),
        send_body: flag("-p"),
        total_posted: v("Total body sent:").map_or(0, num),
        total_body_read: num(v("HTML transferred:").unwrap()),
        samples,
        show_percentiles: !flag("-d"),
        show_confidence: !flag("-S"),
        html: flag("-w").then(HtmlAttributes::default),
    }
}

/// Each number replaced by `N`.
fn mask(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(|c| c.is_ascii_digit() || *c == '.') {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out
}

/// Each number replaced by spaces ending in `N` at its last column: equal for two lines whose
/// numbers are right-aligned in the same fields, whatever their digits.
fn mask_right_aligned(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push_str(&" ".repeat(i - start - 1));
            out.push('N');
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn is_rate_line(l: &str) -> bool {
    [
        "Requests per second:",
        "Time per request:",
        "Transfer rate:",
        "                        ",
        ">Requests per second:<",
        ">Transfer rate:<",
        ">&nbsp;</td>",
    ]
    .iter()
    .any(|p| l.starts_with(p) || (p.starts_with('>') && l.contains(p)))
}

fn is_table_row(l: &str) -> bool {
    ["Connect:", "Processing:", "Waiting:", "Total:"].iter().any(|p| l.starts_with(p))
        || [">Connect:<", ">Processing:<", ">Total:<"].iter().any(|p| l.contains(p))
}

/// The report without SANE messages (two lines each).
fn without_sane(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for l in s.split_inclusive('\n') {
        if skip_next {
            skip_next = false;
        } else if l.starts_with("ERROR: The median") || l.starts_with("WARNING: The median") {
            skip_next = true;
        } else {
            out.push(l);
        }
    }
    out
}

fn compare(case: &str, ab: &str, herd: &str) {
    let (a, h) = (without_sane(ab), without_sane(herd));
    assert_eq!(a.len(), h.len(), "{case}: line counts differ\n--- ab\n{ab}\n--- herd\n{herd}");
    for (i, (la, lh)) in a.iter().zip(&h).enumerate() {
        let ok = if is_table_row(la) {
            mask_right_aligned(la) == mask_right_aligned(lh)
        } else if is_rate_line(la) {
            mask(la) == mask(lh)
        } else {
            la == lh
        };
        assert!(ok, "{case}: line {i} differs:\n ab:   {la:?}\n herd: {lh:?}\n--- ab\n{ab}\n--- herd\n{herd}");
    }
}

fn check_case(ab: &Path, port: u16, case: &str, args: &[&str], path: &str) {
    let url = format!("http://127.0.0.1:{port}{path}");
    let run = run_ab(ab, args, &url, case);
    let html = args.contains(&"-w");
    // ab's banner: 4 lines of text, or 6 of HTML; herd's differs on purpose.
    let skip = if html { 6 } else { 4 };
    let ab_out: String = run.stdout.split_inclusive('\n').skip(skip).collect();
    // ab writes -g and -e from output_results() only: never with -w. Then the samples are
    // made up; the HTML table only shows right-aligned min/avg/max, compared masked.
    let gnuplot = if html {
        assert!(run.gnuplot.is_none() && run.csv.is_none(), "{case}: ab wrote -g/-e with -w");
        None
    } else {
        Some(run.gnuplot.clone().expect("ab writes -g when done > 0"))
    };
    let mut r = results_from_ab(&ab_out, gnuplot.as_deref().unwrap_or(""), args, html);
    if html {
        r.samples = vec![Sample::default(); r.done as usize];
    }

    let n: u64 = args.iter().position(|a| *a == "-n").map_or(1, |i| args[i + 1].parse().unwrap());
    let hb = heartbeat_interval(n, args.contains(&"-q"));
    let mut ours = Vec::new();
    if !html {
        let proxy = r.proxy.as_ref().map(|(h, p)| (h.as_str(), *p));
        write_benchmarking(&mut ours, &r.hostname, proxy, hb != 0).unwrap();
    }
    if hb == 0 {
        write_done(&mut ours).unwrap();
    }
    write_report(&r, &mut ours).unwrap();
    compare(case, &ab_out, &String::from_utf8(ours).unwrap());

    let mut err = Vec::new();
    if hb != 0 {
        for k in (hb..=r.done).step_by(hb as usize) {
            write_completed(&mut err, k).unwrap();
        }
        write_finished(&mut err, r.done).unwrap();
    }
    assert_eq!(run.stderr, String::from_utf8(err).unwrap(), "{case}: stderr");

    // -g: exact but for dtime, which ab rounds from microseconds.
    let mut g = Vec::new();
    write_gnuplot(&r, &mut g).unwrap();
    let g = String::from_utf8(g).unwrap();
    let Some(ab_g) = gnuplot else {
        assert!(g.is_empty(), "{case}: herd wrote -g with -w");
        return;
    };
    assert_eq!(ab_g.lines().count(), g.lines().count(), "{case}: -g rows");
    for (la, lh) in ab_g.lines().zip(g.lines()) {
        let (fa, fh): (Vec<&str>, Vec<&str>) = (la.split('\t').collect(), lh.split('\t').collect());
        assert_eq!(fa.len(), 6, "{case}: -g row {la:?}");
        for col in [0, 1, 2, 4, 5] {
            assert_eq!(fa[col], fh[col], "{case}: -g column {col}:\n ab:   {la:?}\n herd: {lh:?}");
        }
        if fa[0] != "starttime" {
            let (da, dh): (i64, i64) = (fa[3].parse().unwrap(), fh[3].parse().unwrap());
            assert!((da - dh).abs() <= 1, "{case}: -g dtime:\n ab:   {la:?}\n herd: {lh:?}");
        }
    }

    // -e: shape only (its values are microsecond-exact in ab).
    let csv = run.csv.expect("ab writes -e when done > 0");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 102, "{case}: -e rows");
    assert_eq!(lines[0], "Percentage served,Time in ms");
    for (i, l) in lines[1..].iter().enumerate() {
        let (p, t) = l.split_once(',').unwrap();
        assert_eq!(p, i.to_string());
        let (whole, frac) = t.split_once('.').unwrap();
        assert!(whole.parse::<u64>().is_ok() && frac.len() == 3, "{case}: -e row {l:?}");
    }
}

#[test]
fn report_layout_matches_real_ab() {
    // Never skip: a missing ab must fail the suite (.ci/run installs apache2-utils).
    let ab = ab_binary().expect("no ApacheBench binary at /usr/bin/ab: apt-get install apache2-utils (or set HERD_AB_REAL_AB)");
    let port = start_server();
    let post = std::env::temp_dir().join(format!("herd-ab-real-{}-post.txt", std::process::id()));
    std::fs::write(&post, "a=1&b=2\n").unwrap();
    let post = post.to_str().unwrap().to_string();
    let proxy = format!("127.0.0.1:{port}");

    check_case(&ab, port, "plain", &["-n", "20", "-c", "2"], "/index.html");
    check_case(&ab, port, "single", &["-n", "1"], "/index.html");
    check_case(&ab, port, "progress-keepalive", &["-n", "200", "-c", "4", "-k"], "/index.html");
    check_case(&ab, port, "quiet", &["-n", "200", "-c", "4", "-q"], "/index.html");
    check_case(&ab, port, "post", &["-n", "10", "-c", "2", "-p", &post, "-T", "text/plain"], "/p");
    check_case(&ab, port, "non2xx-S-d", &["-n", "10", "-S", "-d"], "/redir");
    check_case(&ab, port, "length-failures", &["-n", "12"], "/var");
    check_case(&ab, port, "variable-length", &["-n", "12", "-l"], "/var");
    check_case(&ab, port, "proxy", &["-n", "5", "-X", &proxy], "/index.html");
    check_case(&ab, port, "html", &["-n", "20", "-c", "2", "-w", "-k", "-p", &post], "/p");
    check_case(&ab, port, "html-failures", &["-n", "12", "-w"], "/var");
    let _ = std::fs::remove_file(&post);
}
