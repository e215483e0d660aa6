//! The contract of `herd run --json` (herd.run.v1): real output of every shape (closed loop,
//! open loop at `--rate`, `--steps`, a URL mix with every client option, pipelining, HTTP/2, and a run
//! where every request fails, whose histograms are empty; a spread run's, `agents` and all,
//! single and stepped) validates against docs/run-json.schema.json, and documents broken on purpose
//! do not, so that this test fails when the output and the schema drift apart. Every non-empty
//! histogram's `hdr` decodes (base64, then HdrHistogram's deserializer) to a histogram of the
//! same count, min and max.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use serde_json::{json, Value};
use util::json_schema::RunJsonSchema;
use util::Serve;
use util::{run_json, tempdir};

fn validator() -> RunJsonSchema {
    // The schema itself must be a valid draft 2020-12 schema: start() checks it.
    RunJsonSchema::start()
}

fn assert_valid(v: &mut RunJsonSchema, doc: &Value, what: &str) {
    let errors = v.errors(doc);
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{doc:#}");
}

/// Every histogram in `doc` (one run or each step) whose count is not 0 carries an `hdr` that
/// decodes to the same histogram; returns how many were checked.
fn assert_hdr_decodes(doc: &Value, what: &str) -> usize {
    use base64::Engine as _;
    let runs: Vec<&Value> = match doc["steps"].as_array() {
        Some(steps) => steps.iter().collect(),
        None => vec![doc],
    };
    let mut checked = 0;
    for run in runs {
        for (name, h) in run["latency_us"].as_object().unwrap() {
            let count = h["count"].as_u64().unwrap();
            if count == 0 {
                assert!(h.get("hdr").is_none(), "{what}: {name}: an empty histogram has no hdr");
                continue;
            }
            let text = h["hdr"].as_str().unwrap_or_else(|| panic!("{what}: {name}: no hdr"));
            let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
            let back: hdrhistogram::Histogram<u64> =
                hdrhistogram::serialization::Deserializer::new()
                    .deserialize(&mut &bytes[..])
                    .unwrap_or_else(|e| panic!("{what}: {name}: {e:?}"));
            assert_eq!(back.len(), count, "{what}: {name}");
            assert_eq!(back.max(), h["max"].as_u64().unwrap(), "{what}: {name}");
            assert_eq!(back.min(), h["min"].as_u64().unwrap(), "{what}: {name}");
            checked += 1;
        }
    }
    checked
}

fn assert_invalid(v: &mut RunJsonSchema, doc: &Value, what: &str) {
    assert!(!v.is_valid(doc), "{what}: the schema accepts a broken document\n{doc:#}");
}

#[test]
fn every_shape_of_real_output_validates() {
    let mut v = validator();
    let serve = Serve::start(&["--threads", "1"]);
    let closed = run_json(&["-c", "2", "-n", "300", &serve.url("/bytes/100")]);
    assert_eq!(closed["schedule"], json!({"kind": "closed"}));
    // `--io auto` says what measured and, when it was not io_uring, why (the engine's answer).
    let auto = herd_engine::io_choice::resolve_kind(
        herd_engine::IoChoice::Auto,
        herd_engine::io_choice::WireKind::Http1,
    )
    .unwrap();
    let auto_io = json!({"asked": "auto", "backend": auto.backend.as_str(), "fallback": auto.why});
    assert_eq!(closed["io"], auto_io);
    assert_valid(&mut v, &closed, "closed loop");

    let rate = run_json(&["-c", "2", "-d", "1s", "--rate", "200", &serve.url("/bytes/100")]);
    assert_eq!(rate["schedule"]["kind"], "rate");
    assert_valid(&mut v, &rate, "open loop");

    let steps =
        run_json(&["--steps", "1,2", "--step-time", "500ms", "-t", "1", &serve.url("/bytes/10")]);
    assert_eq!(steps["steps"].as_array().map(Vec::len), Some(2));
    assert_valid(&mut v, &steps, "steps");

    // Every workload and client option at once: groups, conforming, clients.
    let dir = tempdir("run-json-schema-urls");
    let list = dir.join("urls.txt");
    std::fs::write(&list, "3 /bytes/1000\n1 /9x9\n").unwrap();
    let mix = run_json(&[
        "-c",
        "2",
        "-n",
        "40",
        "--urls",
        list.to_str().unwrap(),
        "--requests-per-conn",
        "3-5",
        "--think",
        "exp:1ms",
        "--bandwidth",
        "10mbit",
        &serve.url("/"),
    ]);
    assert_eq!(mix["groups"]["rows"].as_array().map(Vec::len), Some(2));
    assert_eq!(mix["conforming"]["threshold_bps"], 320_000);
    assert!(mix["conforming"]["median_bps"].as_f64().is_some(), "{mix}");
    assert_valid(&mut v, &mix, "workload and clients");
    let piped = run_json(&[
        "-c",
        "2",
        "-n",
        "40",
        "--pipeline",
        "4",
        "--trace-context",
        &serve.url("/bytes/10"),
    ]);
    assert_eq!(piped["clients"]["pipeline"], 4);
    assert_eq!(piped["trace"]["sampled"], true, "{piped}");
    assert_valid(&mut v, &piped, "pipelined");

    // HTTP/2 (h2c against nginx): the protocol and the streams per connection.
    let nginx = util::Nginx::start();
    let h2 = run_json(&[
        "--h2c",
        "-c",
        "2",
        "-m",
        "5",
        "-n",
        "100",
        &format!("http://127.0.0.1:{}/small.html", nginx.h2c_port),
    ]);
    assert_eq!((&h2["protocol"], &h2["streams"]), (&json!("h2c"), &json!(5)));
    assert_eq!(closed["protocol"], "h1");
    assert_eq!(closed["streams"], Value::Null);
    assert_valid(&mut v, &h2, "h2c");

    // Nothing listens: every request fails, every latency histogram is empty, no verdict
    // (exit code 4). The run stops once each connection was refused (issue 31); one worker,
    // so that the count is exact.
    let port = util::free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let failed = util::run_json_exiting(&["-c", "2", "-t", "1", "-n", "10", &url], 4).0;
    assert_eq!(failed["latency_us"]["total"], json!({"count": 0}));
    assert_eq!(failed["failures"], json!({"connect": 2}));
    assert_eq!(failed["client"]["verdict"], Value::Null);
    assert_valid(&mut v, &failed, "all failed");

    // Closed: total, total_from_send, connect, first_byte and queued (0 µs each); the open
    // loop too. Each step of a stepped run has its own.
    assert_eq!(assert_hdr_decodes(&closed, "closed loop"), 5);
    assert_eq!(assert_hdr_decodes(&rate, "open loop"), 5);
    assert_eq!(assert_hdr_decodes(&steps, "steps"), 10);
    assert!(assert_hdr_decodes(&mix, "workload and clients") >= 4);
    assert_eq!(assert_hdr_decodes(&failed, "all failed"), 0);

    // The same documents, each broken in one place, must fail.
    let mut broken = Vec::new();
    let mut doc = closed.clone();
    doc["requests"].as_object_mut().unwrap().remove("completed");
    broken.push((doc, "a required key missing"));
    let mut doc = h2.clone();
    doc["protocol"] = json!("h4");
    broken.push((doc, "a protocol herd does not speak"));
    let mut doc = h2.clone();
    doc["streams"] = json!(0);
    broken.push((doc, "no stream per connection"));
    let mut doc = closed.clone();
    doc["elapsed_s"] = json!("1.5");
    broken.push((doc, "a string where a number belongs"));
    let mut doc = closed.clone();
    doc["latency_us"]["total"]["p99"] = json!(12.5);
    broken.push((doc, "a fraction where an integer belongs"));
    let mut doc = closed.clone();
    doc["latency_us"]["total"].as_object_mut().unwrap().remove("max");
    broken.push((doc, "a histogram with counts but no max"));
    let mut doc = closed.clone();
    doc["latency_us"]["total"].as_object_mut().unwrap().remove("hdr");
    broken.push((doc, "a histogram with counts but no hdr"));
    let mut doc = closed.clone();
    doc["latency_us"]["total"]["hdr"] = json!("not base64!");
    broken.push((doc, "an hdr that is not a V2-compressed histogram in base64"));
    let mut doc = closed.clone();
    doc["surprise"] = json!(1);
    broken.push((doc, "an undocumented field"));
    let mut doc = closed.clone();
    doc["format"] = json!("herd.run.v2");
    broken.push((doc, "another format"));
    let mut doc = rate.clone();
    doc["schedule"] = json!({"kind": "rate"});
    broken.push((doc, "a rate schedule without its rate"));
    let mut doc = failed.clone();
    doc["failures"] = json!({"conect": 10});
    broken.push((doc, "an unknown failure kind"));
    let mut doc = closed.clone();
    doc["client"]["verdict"] = json!("fine");
    broken.push((doc, "a verdict that is not one"));
    let mut doc = mix.clone();
    doc["conforming"].as_object_mut().unwrap().remove("median_bps");
    broken.push((doc, "conforming connections without their median"));
    let mut doc = steps.clone();
    doc["steps"][1].as_object_mut().unwrap().remove("url");
    broken.push((doc, "a step without its url"));
    let mut doc = steps.clone();
    doc["steps"] = json!([]);
    broken.push((doc, "no steps"));
    let mut doc = closed.clone();
    doc["io"]["backend"] = json!("kqueue");
    broken.push((doc, "a backend herd does not have"));
    let mut doc = closed.clone();
    doc["io"].as_object_mut().unwrap().remove("fallback");
    broken.push((doc, "a backend without its fallback"));
    for (doc, what) in &broken {
        assert_invalid(&mut v, doc, what);
    }
}

/// `herd cluster run --local 2 -- ARGS --json FILE`: the document `herd cluster run` writes
/// (and agent 0 of a Kubernetes run prints), exit 0.
fn cluster_json(args: &[&str]) -> Value {
    let dir = tempdir("run-json-cluster");
    let path = dir.join("out.json");
    let out = util::run(
        util::herd()
            .args(["cluster", "run", "--local", "2", "--"])
            .args(args)
            .arg("--json")
            .arg(&path),
    );
    let (stdout, stderr) = (util::text(&out.stdout), util::text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}\n{stderr}");
    let doc = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    doc
}

/// A spread run's result is herd.run.v1 with `agents` beside it (docs/run-json.md): a single
/// run and a stepped one, real output of two agents against herd serve, validate; the same
/// documents broken in one place (in `agents`, or `agents` where only the top level has it) do
/// not.
#[test]
fn a_spread_runs_output_validates() {
    let mut v = validator();
    let serve = Serve::start(&["--threads", "1"]);
    let single =
        cluster_json(&["-c", "4", "-n", "400", "--trace-context", &serve.url("/bytes/100")]);
    let agents = single["agents"].as_array().expect("agents");
    assert_eq!(agents.len(), 2, "{single}");
    assert_eq!(agents[1]["steps"][0]["requests"]["completed"], 200, "{single}");
    // The agents agree on their backend, and the merged document says theirs.
    let auto = herd_engine::io_choice::resolve_kind(
        herd_engine::IoChoice::Auto,
        herd_engine::io_choice::WireKind::Http1,
    )
    .unwrap();
    assert_eq!(single["io"]["backend"], auto.backend.as_str(), "{single}");
    assert_eq!(single["io"], agents[1]["steps"][0]["io"], "{single}");
    // One trace for the whole spread run: every agent sent the coordinator's trace id.
    let trace = single["trace"]["trace_id"].as_str().expect("a trace id");
    for a in agents {
        assert_eq!(a["steps"][0]["trace"]["trace_id"], trace, "{single}");
    }
    assert_valid(&mut v, &single, "spread run");

    let stepped = cluster_json(&[
        "--steps",
        "2,4",
        "--step-time",
        "300ms",
        "-t",
        "1",
        &serve.url("/bytes/10"),
    ]);
    assert_eq!(stepped["steps"].as_array().map(Vec::len), Some(2), "{stepped}");
    assert_eq!(stepped["agents"][0]["steps"].as_array().map(Vec::len), Some(2), "{stepped}");
    assert_valid(&mut v, &stepped, "stepped spread run");

    let mut broken = Vec::new();
    let mut doc = single.clone();
    doc["agents"][0]["surprise"] = json!(1);
    broken.push((doc, "an undocumented field in an agent"));
    let mut doc = single.clone();
    doc["agents"][1].as_object_mut().unwrap().remove("index");
    broken.push((doc, "an agent without its index"));
    let mut doc = single.clone();
    doc["agents"][0]["opened_ahead"] = json!(-1);
    broken.push((doc, "a negative count of connections"));
    let mut doc = single.clone();
    doc["agents"][0]["start_late_us"] = json!("3");
    broken.push((doc, "a string where a number belongs"));
    let mut doc = single.clone();
    doc["agents"][0]["steps"][0].as_object_mut().unwrap().remove("requests");
    broken.push((doc, "an agent's step without its requests"));
    let mut doc = single.clone();
    doc["agents"][0]["steps"] = json!([]);
    broken.push((doc, "an agent without steps"));
    let mut doc = single.clone();
    doc["agents"] = json!([]);
    broken.push((doc, "no agents"));
    let mut doc = stepped.clone();
    doc["steps"][0]["agents"] = single["agents"].clone();
    broken.push((doc, "agents inside a step"));
    let mut doc = single.clone();
    doc["agents"][0]["steps"][0]["agents"] = single["agents"].clone();
    broken.push((doc, "agents inside an agent's step"));
    for (doc, what) in &broken {
        assert_invalid(&mut v, doc, what);
    }
}
