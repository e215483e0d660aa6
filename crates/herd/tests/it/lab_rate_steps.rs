//! Offered rates in steps from the outside (issue 33): `rate_steps = [200, 400]` on herd
//! serve becomes one repetition with a measurement per step, each with its offered rate, and
//! the page draws latency and the achieved rate against the offered load, from the store. ab
//! cannot send a rate: a file with its cell is refused with the reason, before anything runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use herd_store::{ExperimentId, Store};
use scraper::{Html, Selector};
use util::{herd, lab_run, tempdir};

const OFFERED: &str = r#"
name = "offered"
title = "herd serve at 200 then 400 requests/s"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["offered"]
client = ["herd"]
[workloads.page]
kind = "static"
size = 6397
[loads.offered]
rate_steps = [200, 400]
step = "300ms"
connections = 4
[repetitions]
min = 1
max = 1
[runner]
time_wait_below = 1000000
"#;

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

#[test]
fn rate_steps_are_stored_per_step_and_drawn_against_the_offered_load() {
    let dir = tempdir("lab-rate-steps");
    let file = dir.join("offered.toml");
    std::fs::write(&file, OFFERED).unwrap();

    // ab's cell is refused, naming it and why, before anything runs.
    let with_ab = dir.join("with-ab.toml");
    std::fs::write(&with_ab, OFFERED.replace("client = [\"herd\"]", "client = [\"herd\", \"ab\"]"))
        .unwrap();
    let out = lab_run(&dir, &with_ab).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "cell server=herd workload=page load=offered client=ab: ab cannot send \
             offered rates in steps: it has no open loop"
        ),
        "{stderr}"
    );
    assert!(!dir.join("r.db").exists(), "a refused file made a store");

    // The dry run counts both steps' time and says the load in words.
    let out = herd().args(["lab", "run", "--dry-run"]).arg(&file).output().unwrap();
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        plan.contains(
            "offered: steps of 200, 400 requests/s, 300ms each, over at most 4 connections"
        ),
        "{plan}"
    );

    let out = lab_run(&dir, &file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let store = Store::open_existing(&dir.join("r.db")).unwrap();
    let exp = store.load_experiment(ExperimentId(1)).unwrap();
    let cell = exp.cells.iter().find(|c| c.key.contains("client=herd")).expect("herd's cell");
    assert_eq!(cell.repetitions.len(), 1);
    let steps = &cell.repetitions[0].record.measurements;
    let seen: Vec<(u32, &str, Option<f64>)> =
        steps.iter().map(|m| (m.step, m.label.as_str(), m.rate)).collect();
    assert_eq!(seen, [(1, "r=200", Some(200.0)), (2, "r=400", Some(400.0))]);
    assert!(steps.iter().all(|m| m.completed > 0), "{steps:?}");
    let argv = cell.repetitions[0].record.client.argv.join(" ");
    assert!(argv.contains("--rate-steps=200,400") && argv.contains("--step-time=300ms"), "{argv}");
    drop(store);

    let page = dir.join("report.html");
    let out = herd().arg("report").arg(dir.join("r.db")).arg("--html").arg(&page).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    util::browser::assert_self_contained(&html);
    let dom = Html::parse_document(&html);
    let chart = |title: &str| {
        dom.select(&sel("figure.chart svg.chart"))
            .find(|c| c.select(&sel("text.title")).any(|t| t.text().collect::<String>() == title))
            .unwrap_or_else(|| panic!("no chart {title:?}"))
    };
    // Latency: p50 and p99 at each offered rate the run held; a rate a busy machine did not
    // hold is marked ⊘ there instead (its latency is another load's).
    let latency = chart("latency against offered load (p50, p99)");
    let marked: Vec<&str> =
        latency.select(&sel("g.mark")).map(|m| m.value().attr("data-x").unwrap()).collect();
    for series in ["p50", "p99"] {
        // No line at all when a busy machine held neither rate: both are then marked.
        let xs: Vec<&str> = latency
            .select(&sel(&format!("g.series[data-series=\"{series}\"]")))
            .next()
            .map(|s| {
                s.select(&sel("circle.point")).map(|p| p.value().attr("data-x").unwrap()).collect()
            })
            .unwrap_or_default();
        for x in ["200", "400"] {
            assert!(xs.contains(&x) != marked.contains(&x), "{series} at {x}: {xs:?} {marked:?}");
        }
    }
    // Achieved against offered: both steps, each the stored rate.
    let achieved = chart("achieved against offered load");
    let points: Vec<(String, f64)> = achieved
        .select(&sel("g.series:not(.reference) circle.point"))
        .map(|p| {
            let v = p.value();
            (v.attr("data-x").unwrap().to_owned(), v.attr("data-y").unwrap().parse().unwrap())
        })
        .collect();
    let stored: Vec<(String, f64)> = steps
        .iter()
        .map(|m| (format!("{}", m.rate.unwrap()), m.requests_per_second().unwrap()))
        .collect();
    assert_eq!(points, stored);
    std::fs::remove_dir_all(&dir).unwrap();
}
