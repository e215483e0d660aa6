//! `herd report --html` from the outside: two small experiments on herd serve (a size sweep
//! at two concurrencies, with a made-up published figure, and a client ramp) become one
//! page that opens in Chromium from disk with no console message and no request; every
//! chart has its axes, labels and one line per series; every figure on the page is the
//! store's; the same store gives the same bytes. A screenshot is kept under
//! target/tmp/artifacts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::collections::BTreeMap;

use herd_store::{ExperimentId, Store, StoredCell, StoredExperiment};
use scraper::{ElementRef, Html, Selector};
use util::{browser, herd, lab_run, tempdir};

const SWEEP: &str = r#"
name = "page-sweep"
title = "herd serve, 1 B to 4 KiB, one and four clients"
[matrix]
server = ["herd"]
workload = ["sizes"]
load = ["n200-c1", "n200-c4"]
[workloads.sizes]
kind = "sweep"
from = 1
to = "4Ki"
factor = 16
[loads.n200-c1]
requests = 200
concurrency = 1
warmup_requests = 20
[loads.n200-c4]
requests = 200
concurrency = 4
warmup_requests = 20
[repetitions]
min = 2
max = 2
[runner]
time_wait_below = 1000000
[report]
baseline = { load = "n200-c1" }
[published]
source = "made up for this test"
[[published.figures]]
at = { load = "n200-c4", workload = "sizes:4096" }
ran = "herd, imagined"
requests_per_second = 5000
"#;

const RAMP: &str = r#"
name = "page-ramp"
title = "herd serve, one then four clients"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["ramp"]
[workloads.page]
kind = "static"
size = 6397
[loads.ramp]
steps = [1, 4]
step = "400ms"
keep_alive = true
[repetitions]
min = 2
max = 2
[runner]
time_wait_below = 1000000
"#;

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// An independent median (not herd_stats'): the middle value, or the mean of the two.
fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty());
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The measure's values of a cell's ok repetitions at a step (label), from the store.
fn stored(cell: &StoredCell, measure: &str, step: Option<&str>) -> Vec<f64> {
    cell.repetitions
        .iter()
        .filter(|r| r.record.outcome.is_ok())
        .filter_map(|r| {
            let m = match step {
                Some(label) => r.record.measurements.iter().find(|m| m.label == label)?,
                None => r.record.measurements.first()?,
            };
            match measure {
                "requests_per_second" | "connections_per_second" => m.requests_per_second(),
                "seconds" => Some(m.duration_s),
                "kb_per_second" => m.kib_per_second(),
                other => panic!("a figure of unknown measure {other}"),
            }
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The first number in an entry's text (`≠1234.5 ±2.0% (50.0 %)` → 1234.5).
fn leading_number(text: &str) -> f64 {
    let start = text.find(|c: char| c.is_ascii_digit()).unwrap_or_else(|| panic!("{text}"));
    let digits: String =
        text[start..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    digits.parse().unwrap_or_else(|_| panic!("{text}"))
}

#[test]
fn the_html_page_opens_in_chromium_and_shows_the_stored_figures() {
    let dir = tempdir("report-html");
    for (name, text) in [("sweep.toml", SWEEP), ("ramp.toml", RAMP)] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let out = lab_run(&dir, &file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let store_path = dir.join("r.db");
    let page = dir.join("report.html");
    let out = herd()
        .arg("report")
        .arg(&store_path)
        .args(["--all", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("(2 experiments)"), "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();

    // The same store, the same bytes.
    let again = dir.join("again.html");
    let out = herd()
        .arg("report")
        .arg(&store_path)
        .args(["--all", "--html"])
        .arg(&again)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html, "two renderings differ");

    // Nothing in the page could fetch: no script, no external reference, and a policy
    // that forbids fetching anyway.
    browser::assert_self_contained(&html);

    // In the browser: no console message, no request.
    browser::assert_checks_catch_a_bad_page(&dir);
    let loaded = browser::load(&page, &dir);
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(loaded.requests.is_empty(), "the page requested {:?}", loaded.requests);
    let shot = browser::artifact("report-html.png");
    browser::screenshot(&page, &shot, 2400, &dir);
    eprintln!("screenshot kept at {}", shot.display());
    // Issue 31: printed, long entries (the servers' command lines, the rows' many columns)
    // were cut off: their tables scroll on screen, and paper cannot. Laid out by its print
    // rules as Chromium prints on A4, nothing ends past the page or is clipped.
    let past = browser::past_the_edge_in_print(&page, browser::A4_PRINT_LAYOUT, &dir);
    assert!(past.is_empty(), "cut off in print: {past:#?}");

    refusals(&dir);
    comparisons(&dir);

    let dom = Html::parse_document(&loaded.dom);
    let store = Store::open_existing(&store_path).unwrap();
    let exps: Vec<StoredExperiment> =
        (1..=2).map(|id| store.load_experiment(ExperimentId(id)).unwrap()).collect();
    check_charts(&dom, &exps);
    check_figures(&dom, &exps);
    check_cells(&dom, &exps);
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What cannot be done is said, and nothing is left behind: a page nowhere to write, a
/// directory for a file, CSV of two experiments, an experiment the store lacks.
fn refusals(dir: &std::path::Path) {
    let store = dir.join("r.db");
    let refused = |args: &[&str], want: &str| {
        let out = herd().arg("report").arg(&store).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    };
    let nowhere = dir.join("no-such-dir/page.html");
    refused(&["--html", nowhere.to_str().unwrap()], "there is no directory");
    refused(&["--html", dir.to_str().unwrap()], "that is a directory; give a file name");
    refused(&["--all", "--csv"], "--csv shows one experiment at a time");
    let x = dir.join("x.html");
    refused(
        &["--experiment", "9", "--html", x.to_str().unwrap()],
        "no experiment 9 in results store",
    );
    assert!(!x.exists());
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--compare`: cells of one experiment against each other, an experiment against itself
/// (nothing significant), and the comparison as a page Chromium opens cleanly.
fn comparisons(dir: &std::path::Path) {
    let store = dir.join("r.db");
    let compare = |args: &[&str]| {
        let out = herd().arg("report").arg(&store).arg("--compare").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
    };
    let (code, text, err) = compare(&["1:load=n200-c1", "1:load=n200-c4"]);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("sizes:")).collect();
    assert_eq!(rows.len(), 4, "a row per size: {text}");
    let (code, text, err) = compare(&["1", &format!("{}:1", store.display())]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("(0 of 8 rows)"), "an experiment against itself: {text}");
    assert_eq!(text.matches(" 1.000 ").count(), 8, "{text}");
    let (code, _, err) = compare(&["1:nginx", "2"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("`nginx` is neither an experiment number nor AXIS=VALUE"), "{err}");
    let (code, _, err) = compare(&["1", "2"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("its axis `workload` is not") || err.contains("no row of A"), "{err}");

    let page = dir.join("compare.html");
    let out = herd()
        .arg("report")
        .arg(&store)
        .args(["--compare", "1:load=n200-c1", "1:load=n200-c4", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    browser::assert_self_contained(&std::fs::read_to_string(&page).unwrap());
    let loaded = browser::load(&page, dir);
    assert!(
        loaded.console.is_empty() && loaded.requests.is_empty(),
        "{:?} {:?}",
        loaded.console,
        loaded.requests
    );
    let dom = Html::parse_document(&loaded.dom);
    assert_eq!(dom.select(&sel("table.compare tbody tr")).count(), 4);
}

/// Every chart: a title, both axes with a label and labelled ticks, a legend entry per
/// series, one line per measured series; the rate chart's points are the store's medians.
fn check_charts(dom: &Html, exps: &[StoredExperiment]) {
    let charts: Vec<ElementRef<'_>> = dom.select(&sel("figure.chart svg.chart")).collect();
    let titles: Vec<String> = charts
        .iter()
        .map(|c| c.select(&sel("text.title")).next().unwrap().text().collect())
        .collect();
    for want in [
        "requests/s against file size",
        "KiB/s against file size",
        "requests/s against clients",
        "latency by percentile: server=herd workload=sizes:1 load=n200-c1",
        "latency by percentile: server=herd workload=page load=ramp",
    ] {
        assert!(titles.iter().any(|t| t == want), "no chart {want:?} in {titles:?}");
    }
    for (chart, title) in charts.iter().zip(&titles) {
        for axis in ["g.axis.x", "g.axis.y"] {
            let a = chart.select(&sel(axis)).next().unwrap_or_else(|| panic!("{title}: no {axis}"));
            let label: String = a.select(&sel("text.axis-label")).next().unwrap().text().collect();
            assert!(!label.trim().is_empty(), "{title}: {axis} has no label");
            let ticks: Vec<String> = a
                .select(&sel("text"))
                .filter(|t| t.value().attr("class").is_none())
                .map(|t| t.text().collect())
                .collect();
            assert!(ticks.len() >= 2 && ticks.iter().all(|t| !t.is_empty()), "{title}: {ticks:?}");
        }
        let series: Vec<ElementRef<'_>> = chart.select(&sel("g.series")).collect();
        let legend = chart.select(&sel("g.legend text")).count();
        assert_eq!(series.len(), legend, "{title}: a legend entry per series");
        for s in &series {
            let published = s.value().attr("class").unwrap().contains("published");
            let lines = s.select(&sel("polyline")).count();
            assert_eq!(
                lines,
                usize::from(!published),
                "{title}: {:?}",
                s.value().attr("data-series")
            );
        }
    }

    // The sweep: one line per load, one point per size, each the median of the cell's
    // stored rates; the published figure beside them.
    let sweep = &exps[0];
    let rate_chart = charts.iter().zip(&titles).find(|(_, t)| *t == "requests/s against file size");
    let (chart, _) = rate_chart.unwrap();
    let names: Vec<&str> =
        chart.select(&sel("g.series")).map(|s| s.value().attr("data-series").unwrap()).collect();
    assert_eq!(
        names,
        ["load=n200-c1", "load=n200-c4", "published: load=n200-c4 (herd, imagined)"],
        "one line per load, then the published figure"
    );
    for s in chart.select(&sel("g.series:not(.published)")) {
        let load = s.value().attr("data-series").unwrap().trim_start_matches("load=");
        let points: Vec<(f64, f64)> = s
            .select(&sel("circle.point"))
            .map(|p| {
                let v = |a| p.value().attr(a).unwrap().parse::<f64>().unwrap();
                (v("data-x"), v("data-y"))
            })
            .collect();
        assert_eq!(points.iter().map(|p| p.0).collect::<Vec<_>>(), [1.0, 16.0, 256.0, 4096.0]);
        for (size, y) in points {
            let cell = sweep
                .cells
                .iter()
                .find(|c| {
                    c.axis("load") == Some(load)
                        && c.axis("workload") == Some(&format!("sizes:{size}"))
                })
                .unwrap();
            let want = median(stored(cell, "requests_per_second", None));
            assert!(close(y, want), "{load} at {size} B: chart {y}, store {want}");
        }
    }
    let diamond = chart.select(&sel("g.series.published g.point")).next().unwrap();
    assert_eq!(diamond.value().attr("data-x"), Some("4096"));
    assert_eq!(diamond.value().attr("data-y"), Some("5000"));
}

/// Every figure in the tables that names its cell is the median of that cell's stored
/// values, its text says that number, and a share of the baseline is the store's ratio.
fn check_figures(dom: &Html, exps: &[StoredExperiment]) {
    let mut checked: BTreeMap<(i64, &str), usize> = BTreeMap::new();
    for (section, exp) in dom.select(&sel("section.experiment")).zip(exps) {
        assert_eq!(section.value().attr("data-experiment"), Some(exp.id.0.to_string().as_str()));
        for td in section.select(&sel("table.matrix td[data-cell], table.rows td[data-cell]")) {
            let a = |name| td.value().attr(name);
            let cell = exp.cell(a("data-cell").unwrap()).unwrap();
            let measure = a("data-measure").unwrap();
            let value: f64 = a("data-value").unwrap().parse().unwrap();
            let want = median(stored(cell, measure, a("data-step")));
            assert!(close(value, want), "{}: page {value}, store {want}", cell.key);
            let text: String = td.text().collect();
            let shown = leading_number(&text);
            assert!((shown - value).abs() <= 0.5 + 1e-9 * value, "{text} shows {value}?");
            if let Some(percent) = a("data-percent") {
                let base_key = cell
                    .key
                    .replace(&format!("load={}", cell.axis("load").unwrap()), "load=n200-c1");
                let base = exp.cell(&base_key).unwrap();
                let want = 100.0 * want / median(stored(base, measure, a("data-step")));
                let percent: f64 = percent.parse().unwrap();
                assert!(close(percent, want), "{}: {percent} % against {want} %", cell.key);
                assert!(text.contains(&format!("({percent:.1} %)")), "{text}");
            }
            let table = if td
                .ancestors()
                .any(|n| n.value().as_element().is_some_and(|e| e.attr("class") == Some("matrix")))
            {
                "matrix"
            } else {
                "rows"
            };
            *checked.entry((exp.id.0, table)).or_default() += 1;
        }
    }
    // The sweep: 8 cells in the matrix and in the rows; the ramp: two steps in the rows
    // and no matrix (nothing but the steps varies).
    assert_eq!(
        checked.into_iter().collect::<Vec<_>>(),
        [((1, "matrix"), 8), ((1, "rows"), 8), ((2, "rows"), 2)]
    );
}

/// Every cell has its details: a row per repetition (and step), and its latency spectrum
/// with a line per ok repetition (per step, for the ramp).
fn check_cells(dom: &Html, exps: &[StoredExperiment]) {
    for (section, exp) in dom.select(&sel("section.experiment")).zip(exps) {
        let details: Vec<ElementRef<'_>> = section.select(&sel("details.cell")).collect();
        assert_eq!(details.len(), exp.cells.len());
        for (d, cell) in details.iter().zip(&exp.cells) {
            assert_eq!(d.value().attr("data-cell"), Some(cell.key.as_str()));
            let rows = d.select(&sel("table.repetitions tbody tr")).count();
            let measured: usize =
                cell.repetitions.iter().map(|r| r.record.measurements.len()).sum();
            assert_eq!(rows, measured, "{}", cell.key);
            let lines = d.select(&sel("svg.chart g.series polyline")).count();
            let want = if exp.name() == "page-ramp" { 2 } else { cell.ok_repetitions().count() };
            assert_eq!(lines, want, "{}: spectrum lines", cell.key);
            assert!(d
                .select(&sel("table.counts th"))
                .any(|th| th.text().collect::<String>() == "200"));
        }
        // The disclosure names the machine and every program.
        let text: String = section.text().collect();
        for want in ["kernel", "sysctl.net.core.somaxconn", "the experiment file", "herd serve"] {
            assert!(text.contains(want), "the disclosure lacks {want}");
        }
        // Issue 31: one row per distinct server command line, not one per repetition (each
        // listened on a port of its own): herd serve's, run by every repetition, once.
        let servers: Vec<Vec<String>> = section
            .select(&sel("table.programs tbody tr"))
            .map(|tr| tr.select(&sel("td")).map(|td| td.text().collect()).collect())
            .filter(|row: &Vec<String>| row[0].starts_with("server"))
            .collect();
        let reps: usize = exp.cells.iter().map(|c| c.repetitions.len()).sum();
        assert_eq!(servers.len(), 1, "{servers:?}");
        assert_eq!(servers[0][4], reps.to_string(), "{servers:?}");
        assert!(servers[0][5].ends_with(" --listen 127.0.0.1:<port>"), "{servers:?}");
    }
}
