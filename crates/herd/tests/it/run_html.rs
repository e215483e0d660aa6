//! `herd run --html` and `herd ab --html` against herd serve: a single run's page opens in
//! Chromium with no console message and no request, shows the run's own figures (those of
//! its --json), its latency spectrum and, for a stepped run, throughput against clients; a
//! page that could not be written is refused before any load is sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use scraper::{Html, Selector};
use util::{browser, herd, tempdir, Serve};

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// Loads the page in Chromium and checks it is clean; returns its DOM.
fn open_clean(page: &std::path::Path, dir: &std::path::Path) -> Html {
    browser::assert_self_contained(&std::fs::read_to_string(page).unwrap());
    let loaded = browser::load(page, dir);
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(loaded.requests.is_empty(), "the page requested {:?}", loaded.requests);
    Html::parse_document(&loaded.dom)
}

/// The req/s figure the page's table of rows carries, per step label (or "").
fn rates_of(dom: &Html) -> Vec<(String, f64)> {
    dom.select(&sel("table.rows td[data-measure=\"requests_per_second\"]"))
        .map(|td| {
            let step = td.value().attr("data-step").unwrap_or("").to_owned();
            (step, td.value().attr("data-value").unwrap().parse().unwrap())
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

#[test]
fn herd_run_writes_its_page_with_the_figures_of_its_json() {
    let dir = tempdir("run-html");
    let serve = Serve::start(&[]);
    let (page, json) = (dir.join("run.html"), dir.join("run.json"));
    let out = herd()
        .args(["run", &serve.url("/9x9"), "-n", "600", "-c", "2", "--html"])
        .arg(&page)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let completed = doc["requests"]["completed"].as_f64().unwrap();
    let seconds = doc["elapsed_s"].as_f64().unwrap();
    let dom = open_clean(&page, &dir);
    let rates = rates_of(&dom);
    assert_eq!(rates.len(), 1, "{rates:?}");
    assert!(close(rates[0].1, completed / seconds), "page {rates:?}, json {completed}/{seconds}");
    // Its one cell is open, with a spectrum of one line and the 200s counted.
    let cell = dom.select(&sel("details.cell[open]")).next().expect("the run's details, open");
    assert_eq!(cell.select(&sel("svg.chart g.series polyline")).count(), 1);
    let codes: Vec<String> =
        cell.select(&sel("table.counts th")).map(|t| t.text().collect()).collect();
    assert!(codes.contains(&"200".to_owned()), "{codes:?}");
    let text: String = dom.root_element().text().collect();
    assert!(text.contains("One run of herd run, as measured; nothing was stored."), "{text}");
    assert!(text.contains("kernel"), "the disclosure names the machine");

    // Stepped: one row per step, and throughput against clients with a point per step.
    let steps = dir.join("steps.html");
    let out = herd()
        .args(["run", &serve.url("/9x9"), "--steps", "1,4", "--step-time", "300ms", "--html"])
        .arg(&steps)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = open_clean(&steps, &dir);
    let labels: Vec<String> = rates_of(&dom).into_iter().map(|(s, _)| s).collect();
    assert_eq!(labels, ["c=1", "c=4"]);
    let chart = dom
        .select(&sel("svg.chart"))
        .find(|c| {
            c.select(&sel("text.title"))
                .any(|t| t.text().collect::<String>() == "requests/s against clients")
        })
        .expect("requests/s against clients");
    let xs: Vec<&str> =
        chart.select(&sel("circle.point")).map(|p| p.value().attr("data-x").unwrap()).collect();
    assert_eq!(xs, ["1", "4"]);
}

#[test]
fn herd_ab_writes_its_page_and_a_bad_path_costs_no_run() {
    let dir = tempdir("ab-html");
    let serve = Serve::start(&[]);
    let page = dir.join("ab.html");
    let out = herd()
        .args(["ab", "-n", "500", "-c", "5", "--html"])
        .arg(&page)
        .arg(serve.url("/9x9"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    // ab's own report is unchanged on stdout; the page has the same rate, unrounded.
    let line = stdout.lines().find(|l| l.starts_with("Requests per second:")).unwrap();
    let printed: f64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    let dom = open_clean(&page, &dir);
    let rates = rates_of(&dom);
    assert_eq!(rates.len(), 1, "{rates:?}");
    assert!((rates[0].1 - printed).abs() <= 0.005 + 1e-9 * printed, "page {rates:?}, ab {printed}");
    let cell = dom.select(&sel("details.cell[open]")).next().expect("the run's details");
    assert_eq!(cell.select(&sel("svg.chart g.series polyline")).count(), 1, "ab's samples drawn");

    // A page nowhere to write: refused before the banner, no request sent.
    let served = |s: &Serve| s.stats()["routes"]["/9x9"].as_u64().unwrap();
    let before = served(&serve);
    let nowhere = dir.join("missing/ab.html");
    let out = herd()
        .args(["ab", "-n", "50", "--html"])
        .arg(&nowhere)
        .arg(serve.url("/9x9"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("there is no directory"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    let out =
        herd().args(["run", &serve.url("/9x9"), "-n", "50", "--html"]).arg(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("that is a directory; give a file name"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    // A directory that cannot take the file (its name too long for the file system).
    let long = dir.join(format!("{}.html", "x".repeat(300)));
    let out = herd()
        .args(["ab", "-n", "50", "--html"])
        .arg(&long)
        .arg(serve.url("/9x9"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write there"), "{stderr}");
    assert_eq!(served(&serve), before, "a refused page sent no request");
    // Rate steps are not drawn yet: refused as usage, before the run.
    let out = herd()
        .args(["run", &serve.url("/9x9"), "--rate-steps", "100,200", "--html"])
        .arg(dir.join("r.html"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(served(&serve), before);
}
