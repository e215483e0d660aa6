//! herd's own engine as a cell's client: `herd run … --json out_dir/run.json`
//! (docs/run.md), and `run.json` (`herd.run.v1`, docs/run-json.md, either shape) back into
//! measurements, histograms decoded from each one's `hdr`.
//!
//! herd can run every load shape. Its warm-up is `--warmup D` inside the measured run,
//! except with a request count: `herd run -n N` counts the warm-up's requests in its N, so
//! `--warmup` would shorten the measured part by however many the warm-up took; there, and
//! for a warm-up given as a request count, the warm-up is a separate run.

use std::ffi::OsString;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::Value;

use super::error::excerpt;
use super::{
    argv, empty_histogram, post_body, ClientCommand, ClientError, ClientJob, ClientOutcome,
    Measurement, Tool, Verdict,
};
use crate::load::{Shape, Warmup};

/// Where herd writes its result, in the job's `out_dir`.
pub(super) const JSON_FILE: &str = "run.json";

/// herd run's histograms, in the order of `latency_us`.
const HISTOGRAMS: [&str; 5] = ["total", "total_from_send", "connect", "first_byte", "queued"];

/// The client verdicts from best to worst.
const VERDICTS: [&str; 3] = ["ok", "suspect", "client-bound"];

pub(super) fn command(job: &ClientJob) -> Result<ClientCommand, ClientError> {
    let load = job.load;
    let url = job.url();
    // The first step's clients (or the connections) for a separate warm-up run.
    let (shape_args, warmup_concurrency, rate): (Vec<String>, u32, Option<f64>) = match &load.shape
    {
        Shape::Requests { n_requests, concurrency } => (
            vec!["-c".into(), concurrency.to_string(), "-n".into(), n_requests.to_string()],
            *concurrency,
            None,
        ),
        Shape::Duration { duration, concurrency } => (
            vec!["-c".into(), concurrency.to_string(), "-d".into(), herd_duration(*duration)],
            *concurrency,
            None,
        ),
        Shape::Rate { per_second, duration, connections } => (
            vec![
                "-c".into(),
                connections.to_string(),
                "--rate".into(),
                per_second.to_string(),
                "-d".into(),
                herd_duration(*duration),
            ],
            *connections,
            Some(*per_second),
        ),
        Shape::Steps { clients, step } => {
            let list: Vec<String> = clients.iter().map(u32::to_string).collect();
            (
                vec!["--steps".into(), list.join(","), "--step-time".into(), herd_duration(*step)],
                clients.first().copied().unwrap_or(1),
                None,
            )
        }
    };
    let separate_warmup = match (load.warmup, &load.shape) {
        (Warmup::None | Warmup::Requests(0), _) => None,
        (Warmup::Requests(k), _) => Some(vec!["-n".to_owned(), k.to_string()]),
        (Warmup::Duration(d), Shape::Requests { .. }) => {
            Some(vec!["-d".to_owned(), herd_duration(d)])
        }
        (Warmup::Duration(_), _) => None,
    };
    let common = common_args(job);
    let mut main = argv([job.program.as_os_str().to_owned(), "run".into(), url.clone().into()]);
    main.extend(shape_args.into_iter().map(OsString::from));
    if let (Warmup::Duration(d), None) = (load.warmup, &separate_warmup) {
        main.extend(argv(["--warmup".to_owned(), herd_duration(d)]));
    }
    main.extend(common.iter().cloned());
    main.extend(argv([OsString::from("--json"), job.out_file(JSON_FILE).into()]));
    let warmup = separate_warmup.map(|bound| {
        let mut w = argv([job.program.as_os_str().to_owned(), "run".into(), url.into()]);
        w.extend(argv(["-c".to_owned(), warmup_concurrency.to_string()]));
        w.extend(bound.into_iter().map(OsString::from));
        if let Some(r) = rate {
            w.extend(argv(["--rate".to_owned(), r.to_string()]));
        }
        w.extend(common);
        w
    });
    Ok(ClientCommand { warmup, main, files: Vec::new() })
}

pub(super) fn parse(
    job: &ClientJob,
    stdout: &str,
    stderr: &str,
) -> Result<ClientOutcome, ClientError> {
    let path = job.out_file(JSON_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        ClientError::output(
            Tool::Herd,
            format!("wrote no readable {} ({e}); {}", path.display(), excerpt(stdout, stderr)),
        )
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        ClientError::output(Tool::Herd, format!("wrote {} that is not JSON: {e}", path.display()))
    })?;
    let mut outcome = outcome(&doc).map_err(|e| match e {
        Malformed::Format(format) => ClientError::output(
            Tool::Herd,
            format!("wrote {} of format {format:?}, expected \"herd.run.v1\"", path.display()),
        ),
        Malformed::Field(e) => e,
    })?;
    // The separate warm-up run ([`command`]) of a request count: herd stops after it.
    if let (Some(first), Warmup::Requests(k)) = (outcome.steps.first_mut(), job.load.warmup) {
        first.warmup_requests += k;
    }
    Ok(outcome)
}

/// Why a herd.run.v1 document could not be read.
pub(crate) enum Malformed {
    /// Not herd.run.v1 at all: the format it says it is.
    Format(Option<String>),
    Field(ClientError),
}

/// A herd.run.v1 document (`herd run --json`) as measurements, one per step, with the
/// client's health verdict and facts.
pub(crate) fn outcome(doc: &Value) -> Result<ClientOutcome, Malformed> {
    let format = doc.get("format").and_then(Value::as_str);
    if format != Some("herd.run.v1") {
        return Err(Malformed::Format(format.map(str::to_owned)));
    }
    let stepped = doc.get("steps").is_some();
    let runs: Vec<&Value> = match doc.get("steps") {
        Some(steps) => steps
            .as_array()
            .ok_or_else(|| Malformed::Field(bad("steps", "is not an array")))?
            .iter()
            .collect(),
        None => vec![doc],
    };
    let mut steps = Vec::with_capacity(runs.len());
    let mut worst: Option<(usize, Verdict)> = None;
    let mut health = Vec::with_capacity(runs.len());
    for (i, run) in runs.iter().enumerate() {
        let step = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let mut m = measurement(run, step, stepped).map_err(Malformed::Field)?;
        let client =
            run.get("client").ok_or_else(|| Malformed::Field(bad("client", "is missing")))?;
        let verdict = verdict(client, stepped.then_some(&m)).map_err(Malformed::Field)?;
        let rank = rank(&verdict.verdict).map_err(Malformed::Field)?;
        if stepped {
            m.verdict = Some(verdict.clone());
        }
        if worst.as_ref().is_none_or(|(r, _)| rank > *r) {
            worst = Some((rank, verdict));
        }
        health.push(client.clone());
        steps.push(m);
    }
    let health_json = if stepped { Value::Array(health) } else { health.swap_remove(0) };
    Ok(ClientOutcome {
        steps,
        verdict: worst.map(|(_, v)| v),
        health_json: Some(health_json.to_string()),
    })
}

/// Flags for what is sent and how, the same in the warm-up and the measured run.
fn common_args(job: &ClientJob) -> Vec<OsString> {
    let mut a = Vec::new();
    if !job.load.keep_alive {
        a.push("--no-keep-alive".into());
    }
    a.extend(argv(["--timeout".to_owned(), herd_duration(job.load.timeout)]));
    if let Some((file, content_type)) = post_body(job.request) {
        a.extend(argv(["-m", "POST", "--body-file"]));
        a.push(file.as_os_str().to_owned());
        a.extend(argv(["-H".to_owned(), format!("Content-Type: {content_type}")]));
    }
    if let Some(dir) = &job.request.specweb_dir {
        a.push("--specweb".into());
        a.push(dir.as_os_str().to_owned());
    }
    if let Some(t) = job.threads {
        a.extend(argv(["-t".to_owned(), t.to_string()]));
    }
    a
}

/// A duration as herd run reads it: whole seconds, else milliseconds, else microseconds
/// (herd's finest unit; anything finer is rounded up to a microsecond).
fn herd_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d.subsec_nanos() % 1_000_000 == 0 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}us", d.as_nanos().div_ceil(1000))
    }
}

/// One run object (the whole result, or one step).
fn measurement(run: &Value, step: u32, stepped: bool) -> Result<Measurement, ClientError> {
    let connections = u32::try_from(uint(run, &["connections"])?)
        .map_err(|_| bad("connections", "is beyond 32 bits"))?;
    let rate = match run.pointer("/schedule/requests_per_second") {
        Some(r) => Some(r.as_f64().ok_or_else(|| bad("schedule.requests_per_second", "NaN"))?),
        None => None,
    };
    let wrong_length = uint(run, &["wrong_length"])?;
    let mut failures: Vec<(String, u64)> = object(run, "failures")?
        .iter()
        .map(|(k, v)| {
            Ok((k.clone(), v.as_u64().ok_or_else(|| bad("failures", "has a non-count"))?))
        })
        .collect::<Result<_, ClientError>>()?;
    // herd counts a wrong length as a completed response only; ab counts it as a failure
    // too, and so does a Measurement.
    if wrong_length > 0 {
        failures.push(("length".to_owned(), wrong_length));
    }
    let statuses: Vec<(u16, u64)> = object(run, "statuses")?
        .iter()
        .map(|(k, v)| {
            let status = k.parse::<u16>().map_err(|_| bad("statuses", "has a non-status key"))?;
            Ok((status, v.as_u64().ok_or_else(|| bad("statuses", "has a non-count"))?))
        })
        .collect::<Result<_, ClientError>>()?;
    let non_2xx = statuses.iter().filter(|(s, _)| !(200..300).contains(s)).map(|(_, n)| n).sum();
    let mut histograms = Vec::with_capacity(HISTOGRAMS.len());
    for name in HISTOGRAMS {
        let h = run.pointer(&format!("/latency_us/{name}")).ok_or_else(|| {
            bad(&format!("latency_us.{name}"), "is missing (not herd.run.v1 from this herd?)")
        })?;
        histograms.push((name.to_owned(), histogram(name, h)?));
    }
    let mut reported = vec![
        ("requests_per_second".to_owned(), number(run, &["requests", "per_second"])?),
        ("attempted_per_second".to_owned(), number(run, &["requests", "attempted_per_second"])?),
    ];
    if run.get("interrupted").and_then(Value::as_bool) == Some(true) {
        // A partial result: herd was stopped (Ctrl-C) before the end.
        reported.push(("interrupted".to_owned(), 1.0));
    }
    Ok(Measurement {
        step,
        label: if stepped { format!("c={connections}") } else { String::new() },
        concurrency: Some(connections),
        rate,
        duration_s: number(run, &["elapsed_s"])?,
        completed: uint(run, &["requests", "completed"])?,
        failed: uint(run, &["requests", "failed"])? + wrong_length,
        failures,
        statuses,
        non_2xx,
        bytes_total: uint(run, &["bytes", "read"])?,
        bytes_body: uint(run, &["bytes", "body"])?,
        warmup_requests: uint(run, &["warmup_requests"])?,
        wrong_length,
        histograms,
        reported,
        verdict: None,
    })
}

/// A `herd.run.v1` histogram object back into the histogram: decoded from `hdr`, or empty.
fn histogram(name: &str, h: &Value) -> Result<Histogram<u64>, ClientError> {
    use base64::Engine as _;
    let count = h
        .get("count")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad(&format!("latency_us.{name}.count"), "is missing"))?;
    if count == 0 {
        return empty_histogram(Tool::Herd);
    }
    let what = format!("latency_us.{name}.hdr");
    let text = h
        .get("hdr")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(&what, "is missing (a herd from before the hdr field? rebuild herd)"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| bad(&what, &format!("is not base64: {e}")))?;
    let back: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| bad(&what, &format!("is not an HdrHistogram: {e:?}")))?;
    if back.len() != count {
        return Err(bad(&what, &format!("holds {} values where count says {count}", back.len())));
    }
    Ok(back)
}

/// The verdict of one `client` object; a step's reason says which step it is.
fn verdict(client: &Value, step: Option<&Measurement>) -> Result<Verdict, ClientError> {
    let verdict = client
        .get("verdict")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("client.verdict", "is missing"))?
        .to_owned();
    let reason = client.get("reason").and_then(Value::as_str).map(|r| match step {
        Some(m) => format!("step {} ({}): {r}", m.step, m.label),
        None => r.to_owned(),
    });
    Ok(Verdict { verdict, reason })
}

fn rank(verdict: &str) -> Result<usize, ClientError> {
    VERDICTS.iter().position(|&v| v == verdict).ok_or_else(|| {
        bad("client.verdict", &format!("is {verdict:?}, not one of ok, suspect, client-bound"))
    })
}

fn uint(v: &Value, path: &[&str]) -> Result<u64, ClientError> {
    at(v, path)?.as_u64().ok_or_else(|| bad(&path.join("."), "is not a count"))
}

fn number(v: &Value, path: &[&str]) -> Result<f64, ClientError> {
    at(v, path)?.as_f64().ok_or_else(|| bad(&path.join("."), "is not a number"))
}

fn object<'a>(v: &'a Value, key: &str) -> Result<&'a serde_json::Map<String, Value>, ClientError> {
    at(v, &[key])?.as_object().ok_or_else(|| bad(key, "is not an object"))
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Result<&'a Value, ClientError> {
    path.iter().try_fold(v, |v, key| v.get(key)).ok_or_else(|| bad(&path.join("."), "is missing"))
}

fn bad(field: &str, problem: &str) -> ClientError {
    ClientError::output(Tool::Herd, format!("wrote {JSON_FILE} whose {field} {problem}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_herds_units() {
        assert_eq!(herd_duration(Duration::from_secs(10)), "10s");
        assert_eq!(herd_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(herd_duration(Duration::from_micros(250)), "250us");
        assert_eq!(herd_duration(Duration::from_nanos(1_500)), "2us");
    }
}
