//! herd.run.v1 read back as written, and every way a document can be wrong named by its path.

use std::time::Duration;

use herd_stats::{ClientVerdict, Failure, FailureKind, LatencySeries};

use super::*;
use crate::step_result::tests::report_of;
use herd_record::RunRecorder;

fn recorded() -> StepReport {
    let mut r = RunRecorder::new(None, Default::default());
    for us in [90, 120, 4_000] {
        r.core.count_response(200, 300, 80, 200, false);
        r.core.total.record_micros(us);
        r.core.connect.record_micros(20);
    }
    r.core.count_response(503, 100, 80, 0, true);
    r.core.total.record_micros(70);
    r.core.count_failure(FailureKind::Timeout, 0, 80);
    report_of(&r, Duration::from_secs(2))
}

#[test]
fn a_single_run_reads_back_as_itself() {
    let report = RunReport::Single(Box::new(recorded()));
    let text = report.to_json_pretty();
    assert!(text.ends_with("}\n"));
    let back = RunReport::from_json(&text).unwrap();
    assert_eq!(back, report);
    let step = &back.steps()[0];
    assert_eq!(step.statuses.get(&503), Some(&1));
    assert_eq!(step.failures.get(&Failure::Timeout), Some(&1));
    assert_eq!(step.latency_us.total.count(), 4);
    assert_eq!(step.latency_us.get(LatencySeries::Connect).count(), 3);
    assert!(step.latency_us.queued.is_empty());
}

#[test]
fn the_wire_shape_is_herd_run_v1() {
    let report = RunReport::Single(Box::new(recorded()));
    let v: serde_json::Value = serde_json::from_str(&report.to_json_pretty()).unwrap();
    assert_eq!(v["format"], "herd.run.v1");
    assert_eq!(v["schedule"], serde_json::json!({"kind": "closed"}));
    assert_eq!(v["statuses"], serde_json::json!({"200": 3, "503": 1}));
    assert_eq!(v["failures"], serde_json::json!({"timeout": 1}));
    assert_eq!(v["latency_us"]["queued"], serde_json::json!({"count": 0}));
    let total = &v["latency_us"]["total"];
    assert_eq!(total["count"], 4);
    assert!(total["hdr"].as_str().unwrap().starts_with("HISTF"));
    for key in ["min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"] {
        assert!(total.get(key).is_some(), "{key}");
    }
    assert_eq!(v["client"]["verdict"], "ok");
    assert_eq!(v["conforming"], serde_json::Value::Null);
}

#[test]
fn a_stepped_run_reads_back_with_each_steps_verdict() {
    let mut worse = recorded();
    worse.connections = 4;
    worse.client.verdict = Some(ClientVerdict::Suspect);
    worse.client.reason = Some("busy".into());
    let report =
        RunReport::Stepped { url: "http://127.0.0.1:1/".into(), steps: vec![recorded(), worse] };
    let back = RunReport::from_json(&report.to_json_pretty()).unwrap();
    assert_eq!(back, report);
    let judged = back.judgement().unwrap();
    assert_eq!(judged.verdict, ClientVerdict::Suspect);
    assert_eq!(judged.reason.as_deref(), Some("step 2 (c=4): busy"));
    let m = back.measurements();
    assert_eq!((m[0].step, m[1].step, m[1].label.as_str()), (1, 2, "c=4"));
    assert_eq!(m[1].judgement.as_ref().map(|j| j.verdict), Some(ClientVerdict::Suspect));
    assert_eq!(m[0].histograms.len(), LatencySeries::ALL.len());
}

#[test]
fn steps_of_offered_rates_are_named_by_their_rate() {
    // --rate-steps' steps share one count of connections: only the rate tells them apart.
    let at = |rate: f64| StepReport {
        schedule: Schedule::Rate { requests_per_second: rate },
        ..recorded()
    };
    let mut slow = at(2_000.0);
    slow.client.verdict = Some(ClientVerdict::Suspect);
    slow.client.reason = Some("busy".into());
    let report =
        RunReport::Stepped { url: "http://127.0.0.1:1/".into(), steps: vec![at(1_000.0), slow] };
    let m = report.measurements();
    let labels: Vec<(&str, Option<f64>)> = m.iter().map(|m| (m.label.as_str(), m.rate)).collect();
    assert_eq!(labels, [("r=1000", Some(1_000.0)), ("r=2000", Some(2_000.0))]);
    let judged = report.judgement().unwrap();
    assert_eq!(judged.reason.as_deref(), Some("step 2 (r=2000): busy"));
}

#[test]
fn a_wrong_length_is_a_failure_of_the_measurement() {
    let mut step = recorded();
    step.wrong_length = 2;
    let m = RunReport::Single(Box::new(step)).measurements().remove(0);
    assert_eq!((m.completed, m.failed, m.wrong_length()), (4, 3, 2));
    assert_eq!(m.failures, vec![(Failure::Timeout, 1), (Failure::Length, 2)]);
    assert_eq!(m.non_2xx, 1);
}

fn read(v: &serde_json::Value) -> String {
    RunReport::from_json(&v.to_string()).unwrap_err().to_string()
}

#[test]
fn what_is_wrong_is_named_by_its_path() {
    let good: serde_json::Value =
        serde_json::from_str(&RunReport::Single(Box::new(recorded())).to_json_pretty()).unwrap();
    assert_eq!(
        RunReport::from_json("nope").unwrap_err().to_string().split(':').next(),
        Some("is not JSON")
    );
    let mut v = good.clone();
    v["format"] = "herd.run.v2".into();
    assert_eq!(read(&v), "is of format \"herd.run.v2\", not herd.run.v1");
    let mut v = good.clone();
    v.as_object_mut().unwrap().remove("format");
    assert_eq!(read(&v), "is of format (none), not herd.run.v1");
    let mut v = good.clone();
    v["requests"].as_object_mut().unwrap().remove("completed");
    assert!(
        read(&v).starts_with("has a bad `requests`: missing field `completed`"),
        "{}",
        read(&v)
    );
    let mut v = good.clone();
    v["latency_us"]["total"]["hdr"] = "***".into();
    let e = read(&v);
    assert!(e.starts_with("has a bad `latency_us.total"), "{e}");
    assert!(e.contains("not base64"), "{e}");
    let mut v = good.clone();
    v["latency_us"]["total"]["count"] = 5.into();
    assert!(read(&v).contains("`hdr` holds 4 values where `count` says 5"), "{}", read(&v));
    let mut v = good.clone();
    v["failures"] = serde_json::json!({"conect": 1});
    assert!(read(&v).contains("`conect` is not a failure kind"), "{}", read(&v));
    let mut v = good.clone();
    v["client"]["verdict"] = "fine".into();
    assert!(read(&v).starts_with("has a bad `client.verdict`"), "{}", read(&v));
    let stepped = serde_json::json!({"format": "herd.run.v1", "url": "u", "steps": []});
    assert_eq!(read(&stepped), "has a bad `steps`: is empty");
}

#[test]
fn unknown_fields_are_ignored_as_v1_promises() {
    let mut v: serde_json::Value =
        serde_json::from_str(&RunReport::Single(Box::new(recorded())).to_json_pretty()).unwrap();
    v["added_later"] = 1.into();
    v["client"]["also_new"] = "x".into();
    assert!(RunReport::from_json(&v.to_string()).is_ok());
}

/// `io` reads back as written, and a document from before `--io` (without it) reads as one
/// that does not say.
#[test]
fn io_reads_back_and_a_document_without_it_says_nothing() {
    let mut step = recorded();
    step.io = Some(IoReport {
        asked: IoAsked::Auto,
        backend: IoBackend::Epoll,
        fallback: Some("io_uring not yet for HTTP/1".into()),
    });
    let report = RunReport::Single(Box::new(step));
    let text = report.to_json_pretty();
    assert_eq!(RunReport::from_json(&text).unwrap(), report);
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["io"]["fallback"], "io_uring not yet for HTTP/1");
    v.as_object_mut().unwrap().remove("io");
    let old = RunReport::from_json(&v.to_string()).unwrap();
    assert_eq!(old.steps()[0].io, None);
}
